/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One v4l2cuse node as one PipeWire camera: a pw_stream in the output
 * direction that drives its graph, with media.class Video/Source and
 * media.role Camera (what WirePlumber's camera access, the Camera portal,
 * browsers, OBS and GNOME Snapshot look for; docs/pipewire.md).
 *
 * On demand: the node is opened only while the stream is STREAMING, that
 * is while a consumer is linked and running. PAUSED (the last consumer
 * left), a cleared format or a removed stream close it again, so V4L2 apps
 * find the node as if we were not there.
 *
 * Pacing: the device's frames drive the graph. A frame ready on the node
 * (poll) is dequeued and pw_stream_trigger_process() runs a cycle; our
 * process callback copies it into a free PipeWire buffer with the V4L2
 * timestamp and sequence in the header. With no free buffer (a slow
 * consumer) the frame waits and a newer one replaces it.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <glib-unix.h>
#include <spa/buffer/meta.h>
#include <spa/param/buffers.h>
#include <spa/param/param.h>
#include <spa/utils/result.h>

#include "util/macros.h"
#include "bridge.h"

/* V4L2 buffers: one waiting for PipeWire, the others for the daemon. */
#define CAPTURE_BUFFERS 4
/* PipeWire buffers: what consumers may hold; memfds we copy into. */
#define PW_BUFFERS_DEFAULT 8
#define PW_BUFFERS_MIN 2
#define PW_BUFFERS_MAX 32
/* A stream that failed is published again after this long. */
#define RESTART_DELAY_S 2

struct bridge_camera {
	struct bridge_device *dev;
	char *node_name;		/* "v4l2cuse.video42" */
	struct pw_core *core;		/* NULL: not published */
	struct pw_stream *stream;
	struct spa_hook stream_listener;
	const struct client_mode *mode;	/* the consumer's, NULL before */
	struct client_rate rate;
	struct client_capture *cap;	/* while STREAMING */
	guint cap_watch;
	guint restart_id;
	bool short_buffer_logged;
};

static void camera_publish(struct bridge_camera *cam);
static void camera_unpublish(struct bridge_camera *cam);

static gboolean
on_restart(gpointer data)
{
	struct bridge_camera *cam = data;

	cam->restart_id = 0;
	camera_unpublish(cam);
	camera_publish(cam);
	return G_SOURCE_REMOVE;
}

/*
 * A capture failed: the stream goes to error, which fails the consumer's
 * link (a stream in error cannot stream again), and a fresh node with the
 * same name follows for the next consumer.
 */
static void
camera_fail(struct bridge_camera *cam, int res, const char *msg)
{
	if (cam->stream)
		pw_stream_set_error(cam->stream, res, "%s: %s", cam->dev->path, msg);
	if (!cam->restart_id)
		cam->restart_id = g_timeout_add_seconds(RESTART_DELAY_S, on_restart, cam);
}

static void
capture_stop(struct bridge_camera *cam)
{
	uint64_t frames, dropped;

	if (!cam->cap)
		return;
	if (cam->cap_watch) {
		g_source_remove(cam->cap_watch);
		cam->cap_watch = 0;
	}
	client_capture_counts(cam->cap, &frames, &dropped);
	g_info("%s: released after %" G_GUINT64_FORMAT " frames (%" G_GUINT64_FORMAT
	       " skipped: a newer one was ready before PipeWire took it)", cam->dev->name, frames,
	       dropped);
	client_capture_stop(cam->cap);
	cam->cap = NULL;
}

static gboolean on_frame(gint fd, GIOCondition cond, gpointer data);

/* Wake up when the capture may have a frame, for the whole stream. */
static void
capture_watch(struct bridge_camera *cam)
{
	cam->cap_watch = g_unix_fd_add(client_capture_fd(cam->cap),
				       G_IO_IN | G_IO_ERR | G_IO_HUP, on_frame, cam);
}

static gboolean
on_frame(gint fd, GIOCondition cond, gpointer data)
{
	struct bridge_camera *cam = data;
	g_autofree char *msg = NULL;
	bool moved;
	int r;

	r = client_capture_dequeue(cam->cap);
	/* The fast path ended: the node's fd from now on (@cond was the old fd's). */
	moved = client_capture_fd(cam->cap) != fd;
	if (r == 0 || (r == -EAGAIN && (moved || !(cond & (G_IO_ERR | G_IO_HUP | G_IO_NVAL))))) {
		if (r == 0)
			pw_stream_trigger_process(cam->stream);
		if (!moved)
			return G_SOURCE_CONTINUE;
		capture_watch(cam);
		return G_SOURCE_REMOVE;
	}
	if (r == -EAGAIN)
		r = -EIO;
	/* The daemon went away (ECONNABORTED, ENODEV) or the device failed. */
	msg = g_strdup_printf("capture failed: %s", g_strerror(-r));
	g_warning("%s: %s", cam->dev->path, msg);
	cam->cap_watch = 0;
	capture_stop(cam);
	camera_fail(cam, r, msg);
	return G_SOURCE_REMOVE;
}

static void
capture_start(struct bridge_camera *cam)
{
	g_autofree char *msg = NULL;
	int r;

	if (cam->cap)
		return;
	if (!cam->mode) {
		camera_fail(cam, -EINVAL, "streaming without a format");
		return;
	}
	r = client_capture_start(cam->dev->path, cam->mode, cam->rate, CAPTURE_BUFFERS,
				 &cam->cap, &msg);
	if (r < 0) {
		g_warning("%s: %s", cam->dev->path, msg);
		camera_fail(cam, r, msg);
		return;
	}
	g_info("%s: streaming %ux%u %.4s at %u/%u fps to PipeWire", cam->dev->name,
	       cam->mode->width, cam->mode->height, (const char *)&cam->mode->fourcc,
	       cam->rate.num, cam->rate.denom);
	capture_watch(cam);
}

static void
on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state,
		 const char *error)
{
	struct bridge_camera *cam = data;

	bridge_log_stream_state(cam->node_name, old, state, error);
	switch (state) {
	case PW_STREAM_STATE_STREAMING:
		capture_start(cam);
		break;
	case PW_STREAM_STATE_ERROR:
		capture_stop(cam);
		/* Our own errors already scheduled this; PipeWire's did not. */
		if (!cam->restart_id)
			cam->restart_id = g_timeout_add_seconds(RESTART_DELAY_S, on_restart, cam);
		break;
	default:
		capture_stop(cam);
		break;
	}
}

static void
on_param_changed(void *data, uint32_t id, const struct spa_pod *param)
{
	struct bridge_camera *cam = data;
	uint8_t buf[1024];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	const struct spa_pod *params[2];
	struct bridge_format f;
	const struct client_mode *m;

	if (id != SPA_PARAM_Format)
		return;
	capture_stop(cam);
	cam->mode = NULL;
	if (!param)
		return;
	if (bridge_format_parse(param, &f) < 0 ||
	    !(m = bridge_modes_find(cam->dev->modes, cam->dev->n_modes, &f))) {
		pw_stream_set_error(cam->stream, -EINVAL, "format not offered by %s",
				    cam->dev->path);
		return;
	}
	cam->mode = m;
	cam->rate = f.rate.num ? (struct client_rate){ f.rate.num, f.rate.denom } : m->rates[0];

	/* Tightly packed lines, as the daemon's: browsers assume that. */
	params[0] = spa_pod_builder_add_object(&b,
		SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
		SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(PW_BUFFERS_DEFAULT,
								    PW_BUFFERS_MIN,
								    PW_BUFFERS_MAX),
		SPA_PARAM_BUFFERS_blocks, SPA_POD_Int(1),
		SPA_PARAM_BUFFERS_size, SPA_POD_Int(m->size),
		SPA_PARAM_BUFFERS_stride, SPA_POD_Int(m->stride),
		SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int(1 << SPA_DATA_MemFd));
	/* Timestamps and sequence numbers; some consumers read it unchecked. */
	params[1] = spa_pod_builder_add_object(&b,
		SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
		SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
		SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_header)));
	pw_stream_update_params(cam->stream, params, ARRAY_SIZE(params));
	/* A format changed while running (PipeWire normally pauses first). */
	if (pw_stream_get_state(cam->stream, NULL) == PW_STREAM_STATE_STREAMING)
		capture_start(cam);
}

static void
on_process(void *data)
{
	struct bridge_camera *cam = data;
	const struct client_frame *frame;
	struct spa_meta_header *h;
	struct pw_buffer *pb;
	struct spa_data *d;
	uint32_t size;

	if (!cam->cap || !(frame = client_capture_pending(cam->cap)))
		return;
	pb = pw_stream_dequeue_buffer(cam->stream);
	if (!pb)
		return;		/* the frame waits; a newer one replaces it */
	d = &pb->buffer->datas[0];
	size = frame->bytesused;
	if (!d->data || d->maxsize < size) {
		if (!cam->short_buffer_logged)
			g_warning("%s: PipeWire buffer of %u bytes for a %u byte frame: "
				  "sending empty frames", cam->dev->name, d->maxsize, size);
		cam->short_buffer_logged = true;
		size = 0;
	} else {
		memcpy(d->data, frame->data, size);
	}
	d->chunk->offset = 0;
	d->chunk->size = size;
	d->chunk->stride = (int32_t)cam->mode->stride;
	d->chunk->flags = frame->error || !size ? SPA_CHUNK_FLAG_CORRUPTED : 0;
	h = spa_buffer_find_meta_data(pb->buffer, SPA_META_Header, sizeof(*h));
	if (h) {
		h->flags = frame->error ? SPA_META_HEADER_FLAG_CORRUPTED : 0;
		h->offset = 0;
		h->pts = (int64_t)frame->pts_ns;
		h->dts_offset = 0;
		h->seq = frame->sequence;
	}
	pw_stream_queue_buffer(cam->stream, pb);
	client_capture_delivered(cam->cap);
	/* A failure here shows up as an error on the node's fd. */
	client_capture_release(cam->cap);
}

static const struct pw_stream_events stream_events = {
	PW_VERSION_STREAM_EVENTS,
	/* STREAMING: open the node; anything else: close it. */
	.state_changed = on_state_changed,
	/* The consumer's format: check it, ask for buffers of its size. */
	.param_changed = on_param_changed,
	/* One graph cycle: hand the pending frame over. */
	.process = on_process,
};

static void
camera_publish(struct bridge_camera *cam)
{
	const struct bridge_device *dev = cam->dev;
	g_autoptr(GPtrArray) params = g_ptr_array_new_with_free_func(g_free);
	const char *label = dev->card[0] ? dev->card : dev->name;
	g_autofree char *object_path = g_strconcat("v4l2cuse:", dev->path, NULL);
	struct pw_properties *props;
	int r;

	if (!cam->core || cam->stream)
		return;
	for (unsigned int i = 0; i < dev->n_modes; i++) {
		uint8_t buf[1024];
		struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
		struct spa_pod *pod = bridge_mode_build(&b, &dev->modes[i]);

		if (pod)
			g_ptr_array_add(params, g_memdup2(pod, SPA_POD_SIZE(pod)));
	}
	if (params->len == 0) {
		g_message("%s: no format PipeWire can carry: not published", dev->path);
		return;
	}
	props = pw_properties_new(
		PW_KEY_MEDIA_TYPE, "Video",
		PW_KEY_MEDIA_CLASS, "Video/Source",
		PW_KEY_MEDIA_ROLE, "Camera",
		PW_KEY_NODE_NAME, cam->node_name,
		PW_KEY_NODE_DESCRIPTION, label,
		PW_KEY_NODE_NICK, label,
		PW_KEY_OBJECT_PATH, object_path,
		"api.v4l2cuse.path", dev->path,
		"api.v4l2cuse.id", dev->info.id,
		"api.v4l2cuse.bus-info", dev->bus_info,
		NULL);
	cam->stream = pw_stream_new(cam->core, cam->node_name, props);
	if (!cam->stream) {
		g_warning("%s: cannot create a PipeWire stream: %s", dev->name, g_strerror(errno));
		return;
	}
	pw_stream_add_listener(cam->stream, &cam->stream_listener, &stream_events, cam);
	r = pw_stream_connect(cam->stream, PW_DIRECTION_OUTPUT, PW_ID_ANY,
			      PW_STREAM_FLAG_DRIVER | PW_STREAM_FLAG_MAP_BUFFERS,
			      (const struct spa_pod **)params->pdata, params->len);
	if (r < 0) {
		g_warning("%s: cannot publish the PipeWire node: %s", dev->name, spa_strerror(r));
		camera_unpublish(cam);
		return;
	}
	g_message("%s: published as PipeWire node %s (\"%s\", formats offered: %u)", dev->path,
		  cam->node_name, label, params->len);
}

static void
camera_unpublish(struct bridge_camera *cam)
{
	capture_stop(cam);
	cam->mode = NULL;
	if (!cam->stream)
		return;
	spa_hook_remove(&cam->stream_listener);
	pw_stream_destroy(cam->stream);
	cam->stream = NULL;
}

struct bridge_camera *
bridge_camera_new(struct bridge_device *dev)
{
	struct bridge_camera *cam = g_new0(struct bridge_camera, 1);

	cam->dev = dev;
	cam->node_name = g_strconcat(BRIDGE_NODE_PREFIX, dev->name, NULL);
	return cam;
}

void
bridge_camera_free(struct bridge_camera *cam)
{
	if (!cam)
		return;
	if (cam->restart_id)
		g_source_remove(cam->restart_id);
	if (cam->stream)
		g_message("%s: gone: PipeWire node %s removed", cam->dev->path, cam->node_name);
	camera_unpublish(cam);
	bridge_device_free(cam->dev);
	g_free(cam->node_name);
	g_free(cam);
}

void
bridge_camera_set_core(struct bridge_camera *cam, struct pw_core *core)
{
	if (cam->core == core)
		return;
	if (cam->restart_id) {
		g_source_remove(cam->restart_id);
		cam->restart_id = 0;
	}
	camera_unpublish(cam);
	cam->core = core;
	camera_publish(cam);
}
