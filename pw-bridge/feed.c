/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A pipewire:TARGET device fed from PipeWire (docs/pipewire.md, "Cameras
 * from PipeWire"). The daemon serves such a device as a loopback whose
 * writer node carries V4L2CUSE_INFO_FEED; this file is its writer: a
 * pw_stream in the input direction linked to TARGET (a libcamera camera,
 * another app's camera node, a screencast), each frame written into the
 * writer node with write().
 *
 * On demand: the writer node's client-usage event (the one v4l2-relayd
 * waits for, v4l2cuse/loopback-abi.h) says how many readers stream. The
 * stream exists only while that count is above 0, so the camera behind
 * TARGET is opened (and its LED lit) only while somebody watches.
 *
 * The format: VIDIOC_V4L2CUSE_FEED says what the readers streamed; our
 * EnumFormat objects (formats.c) make that the preferred choice and let
 * PipeWire settle on what the target offers. The daemon converts and
 * scales whatever we write to each reader's format.
 *
 * Losing the target (the camera's app quit, the camera was unplugged) puts
 * the stream in error or pauses it: the writer handle is closed at once
 * (the readers get the placeholder and `v4l2cuse-ctl list` says SIGNAL
 * lost, without reopening anything) and the stream is made again after
 * 1, 2, 4 ... 30 s while readers are still there.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <glib-unix.h>
#include <spa/param/param.h>
#include <spa/utils/result.h>

#include "v4l2cuse/loopback-abi.h"
#include "util/macros.h"
#include "bridge.h"

#define FEED_BACKOFF_MAX_S 30
#define FEED_MAX_PARAMS 4

struct bridge_feed {
	struct bridge_device *dev;	/* the writer node */
	char *node_name;		/* our input stream's, "v4l2cuse-feed.video43" */
	struct pw_core *core;
	int efd;			/* subscribed to the client-usage event */
	guint event_watch;
	unsigned int readers;
	struct pw_stream *stream;
	struct spa_hook stream_listener;
	bool streamed;			/* the stream reached STREAMING once */
	int wfd;			/* the writer handle, while the format is set */
	struct bridge_format fmt;	/* the stream's format */
	struct v4l2_pix_format pix;	/* the writer node's answer to it */
	uint8_t *staging;		/* rows repacked to bytesperline */
	guint retry_id;
	unsigned int backoff_s;
	bool layout_logged;
	uint64_t frames;
};

static void feed_update(struct bridge_feed *feed);

/* --- the writer handle ------------------------------------------------------- */

static void
writer_close(struct bridge_feed *feed)
{
	if (feed->wfd < 0)
		return;
	/* The readers see the placeholder now: the writer left. */
	close(feed->wfd);
	feed->wfd = -1;
	g_clear_pointer(&feed->staging, g_free);
	g_debug("%s: writer closed after %" G_GUINT64_FORMAT " frames", feed->dev->path,
		feed->frames);
}

/* The writer handle in the stream's format: 0 or -errno (logged). */
static int
writer_open(struct bridge_feed *feed)
{
	struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_OUTPUT };
	int r;

	writer_close(feed);
	feed->wfd = open(feed->dev->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (feed->wfd < 0) {
		r = -errno;
		g_warning("%s: cannot open the writer node: %s", feed->dev->path, g_strerror(-r));
		return r;
	}
	f.fmt.pix = (struct v4l2_pix_format){
		.width = feed->fmt.width,
		.height = feed->fmt.height,
		.pixelformat = feed->fmt.fourcc,
		.field = V4L2_FIELD_NONE,
	};
	r = client_xioctl(feed->wfd, VIDIOC_S_FMT, &f);
	if (r == 0 && (f.fmt.pix.width != feed->fmt.width || f.fmt.pix.height != feed->fmt.height ||
		       f.fmt.pix.pixelformat != feed->fmt.fourcc))
		r = -ERANGE;
	if (r < 0) {
		/* EBUSY: another writer (a second user's bridge) feeds it. */
		g_warning("%s: cannot write %ux%u %.4s frames: %s", feed->dev->path,
			  feed->fmt.width, feed->fmt.height, (const char *)&feed->fmt.fourcc,
			  r == -ERANGE ? "the node answered another format" : g_strerror(-r));
		close(feed->wfd);
		feed->wfd = -1;
		return r;
	}
	feed->pix = f.fmt.pix;
	feed->frames = 0;
	return 0;
}

/* --- the stream --------------------------------------------------------------- */

static gboolean
on_retry(gpointer data)
{
	struct bridge_feed *feed = data;

	feed->retry_id = 0;
	feed_update(feed);
	return G_SOURCE_REMOVE;
}

static void
stream_destroy(struct bridge_feed *feed)
{
	writer_close(feed);
	if (!feed->stream)
		return;
	spa_hook_remove(&feed->stream_listener);
	pw_stream_destroy(feed->stream);
	feed->stream = NULL;
}

/* The target went or failed: drop the stream, make it again later. */
static void
stream_lost(struct bridge_feed *feed, const char *why)
{
	stream_destroy(feed);
	if (feed->retry_id)
		return;
	feed->backoff_s = feed->backoff_s ? MIN(feed->backoff_s * 2, FEED_BACKOFF_MAX_S) : 1;
	g_message("%s: the PipeWire stream %s; trying again in %u s", feed->dev->path, why,
		  feed->backoff_s);
	feed->retry_id = g_timeout_add_seconds(feed->backoff_s, on_retry, feed);
}

static gboolean
on_lost_idle(gpointer data)
{
	struct bridge_feed *feed = data;

	feed->retry_id = 0;
	stream_lost(feed, feed->streamed ? "stopped" : "found no target");
	return G_SOURCE_REMOVE;
}

static void
on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state,
		 const char *error)
{
	struct bridge_feed *feed = data;

	bridge_log_stream_state(feed->node_name, old, state, error);
	if (state == PW_STREAM_STATE_STREAMING) {
		if (!feed->streamed)
			g_message("%s: capturing PipeWire node %s", feed->dev->path,
				  pw_properties_get(pw_stream_get_properties(feed->stream),
						    PW_KEY_TARGET_OBJECT) ?: "(the default camera)");
		feed->streamed = true;
		feed->backoff_s = 0;
		return;
	}
	/* Failed, disconnected, or unlinked (the target left) after it streamed. */
	if (state == PW_STREAM_STATE_ERROR || state == PW_STREAM_STATE_UNCONNECTED ||
	    (state == PW_STREAM_STATE_PAUSED && old == PW_STREAM_STATE_STREAMING)) {
		writer_close(feed);
		/* Not from inside the stream's own callback: destroy it later. */
		if (!feed->retry_id)
			feed->retry_id = g_idle_add(on_lost_idle, feed);
	}
}

static void
on_param_changed(void *data, uint32_t id, const struct spa_pod *param)
{
	struct bridge_feed *feed = data;
	struct bridge_format f;
	int r;

	if (id != SPA_PARAM_Format)
		return;
	if (!param) {
		writer_close(feed);
		return;
	}
	r = bridge_format_parse(param, &f);
	if (r < 0) {
		g_warning("%s: PipeWire settled on a format we cannot write (%s)", feed->dev->path,
			  spa_strerror(r));
		pw_stream_set_error(feed->stream, r, "format not supported");
		return;
	}
	feed->fmt = f;
	g_message("%s: PipeWire format %ux%u %.4s at %u/%u fps", feed->dev->path, f.width,
		  f.height, (const char *)&f.fourcc, f.rate.num, f.rate.denom);
	feed->layout_logged = false;
	if (writer_open(feed) < 0)
		pw_stream_set_error(feed->stream, -EIO, "cannot write to the v4l2cuse node");
}

/*
 * The frame of @b as the writer node's layout wants it: the data itself
 * when its lines are bytesperline long, else the rows repacked (one plane
 * only: the plane layout of planar formats with padded lines is not ours
 * to guess). NULL and a line in the log when it cannot be written.
 */
static const uint8_t *
frame_of(struct bridge_feed *feed, struct spa_buffer *b, uint32_t *ret_size)
{
	const struct spa_data *d = &b->datas[0];
	const uint8_t *p;
	uint32_t off, size, stride, line;

	if (b->n_datas < 1 || !d->data || !d->chunk)
		return NULL;
	off = MIN(d->chunk->offset, d->maxsize);
	size = MIN(d->chunk->size, d->maxsize - off);
	p = (const uint8_t *)d->data + off;
	if (d->chunk->flags & SPA_CHUNK_FLAG_CORRUPTED)
		return NULL;
	if (feed->pix.pixelformat == V4L2_PIX_FMT_MJPEG || feed->pix.pixelformat == V4L2_PIX_FMT_JPEG) {
		*ret_size = size;
		return size ? p : NULL;
	}
	stride = d->chunk->stride > 0 ? (uint32_t)d->chunk->stride : feed->pix.bytesperline;
	if (b->n_datas == 1 && stride == feed->pix.bytesperline && size >= feed->pix.sizeimage) {
		*ret_size = feed->pix.sizeimage;
		return p;
	}
	line = feed->pix.bytesperline;
	if (b->n_datas == 1 && bridge_fourcc_is_packed(feed->pix.pixelformat) && stride >= line &&
	    (uint64_t)stride * (feed->pix.height - 1) + line <= size) {
		if (!feed->staging)
			feed->staging = g_malloc(feed->pix.sizeimage);
		for (uint32_t y = 0; y < feed->pix.height; y++)
			memcpy(feed->staging + (size_t)y * line, p + (size_t)y * stride, line);
		*ret_size = feed->pix.sizeimage;
		return feed->staging;
	}
	if (!feed->layout_logged)
		g_warning("%s: cannot write %.4s buffers of %u planes, %u-byte lines, %u bytes "
			  "(the node wants %u-byte lines, %u bytes): frames skipped", feed->dev->path,
			  (const char *)&feed->pix.pixelformat, b->n_datas, stride, size,
			  feed->pix.bytesperline, feed->pix.sizeimage);
	feed->layout_logged = true;
	return NULL;
}

static void
on_process(void *data)
{
	struct bridge_feed *feed = data;
	struct pw_buffer *pb = NULL, *next;
	const uint8_t *frame;
	uint32_t size = 0;
	int e;

	/* The newest buffer only: older ones go back at once. */
	while ((next = pw_stream_dequeue_buffer(feed->stream))) {
		if (pb)
			pw_stream_queue_buffer(feed->stream, pb);
		pb = next;
	}
	if (!pb)
		return;
	if (feed->wfd >= 0 && (frame = frame_of(feed, pb->buffer, &size))) {
		/* One write() is one frame; the daemon never blocks it. */
		if (write(feed->wfd, frame, size) >= 0) {
			feed->frames++;
		} else if (errno != EINTR) {
			e = errno;
			g_warning("%s: write: %s", feed->dev->path, g_strerror(e));
			pw_stream_queue_buffer(feed->stream, pb);
			pw_stream_set_error(feed->stream, -e, "write failed");
			return;
		}
	}
	pw_stream_queue_buffer(feed->stream, pb);
}

static const struct pw_stream_events stream_events = {
	PW_VERSION_STREAM_EVENTS,
	.state_changed = on_state_changed,
	.param_changed = on_param_changed,
	.process = on_process,
};

static void
stream_create(struct bridge_feed *feed)
{
	struct v4l2cuse_feed info = { 0 };
	uint8_t buf[4096];
	struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buf, sizeof(buf));
	const struct spa_pod *params[FEED_MAX_PARAMS];
	struct bridge_format want = { 0 };
	g_autofree char *description = NULL;
	struct pw_properties *props;
	unsigned int n;
	int r;

	r = client_xioctl(feed->efd, VIDIOC_V4L2CUSE_FEED, &info);
	if (r < 0) {
		g_warning("%s: VIDIOC_V4L2CUSE_FEED: %s", feed->dev->path, g_strerror(-r));
		return;
	}
	info.target[sizeof(info.target) - 1] = '\0';
	want = (struct bridge_format){
		.fourcc = info.pixelformat,
		.width = info.width,
		.height = info.height,
		.rate = info.fps_den ? SPA_FRACTION(info.fps_num, info.fps_den) : SPA_FRACTION(0, 1),
	};
	n = bridge_feed_formats_build(&b, &want, params, FEED_MAX_PARAMS);

	description = g_strdup_printf("v4l2cuse %s", feed->dev->card[0] ? feed->dev->card :
						     feed->dev->name);
	props = pw_properties_new(
		PW_KEY_MEDIA_TYPE, "Video",
		PW_KEY_MEDIA_CATEGORY, "Capture",
		PW_KEY_MEDIA_ROLE, "Camera",
		PW_KEY_NODE_NAME, feed->node_name,
		PW_KEY_NODE_DESCRIPTION, description,
		PW_KEY_APP_NAME, "v4l2cuse-pipewire",
		"api.v4l2cuse.path", feed->dev->path,
		NULL);
	if (info.target[0]) {
		pw_properties_set(props, PW_KEY_TARGET_OBJECT, info.target);
		/* That camera or none: never another one in its place. */
		pw_properties_set(props, PW_KEY_NODE_DONT_RECONNECT, "true");
	}
	feed->stream = pw_stream_new(feed->core, feed->node_name, props);
	if (!feed->stream) {
		g_warning("%s: cannot create a PipeWire stream: %s", feed->dev->path,
			  g_strerror(errno));
		return;
	}
	feed->streamed = false;
	pw_stream_add_listener(feed->stream, &feed->stream_listener, &stream_events, feed);
	r = pw_stream_connect(feed->stream, PW_DIRECTION_INPUT, PW_ID_ANY,
			      PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS, params, n);
	if (r < 0) {
		g_warning("%s: cannot connect a PipeWire stream: %s", feed->dev->path,
			  spa_strerror(r));
		stream_destroy(feed);
		return;
	}
	g_message("%s: %u reader(s): capturing PipeWire %s%s%s", feed->dev->path, feed->readers,
		  info.target[0] ? "node \"" : "default camera", info.target,
		  info.target[0] ? "\"" : "");
}

/* A stream exactly while PipeWire is there and readers stream. */
static void
feed_update(struct bridge_feed *feed)
{
	bool want = feed->core && feed->readers > 0;

	if (!want) {
		if (feed->stream)
			g_message("%s: no reader: PipeWire stream closed", feed->dev->path);
		stream_destroy(feed);
		if (feed->retry_id) {
			g_source_remove(feed->retry_id);
			feed->retry_id = 0;
		}
		feed->backoff_s = 0;
		return;
	}
	if (!feed->stream && !feed->retry_id)
		stream_create(feed);
}

/* --- the client-usage event --------------------------------------------------- */

static gboolean
on_event(gint fd, GIOCondition cond, gpointer data)
{
	struct bridge_feed *feed = data;
	struct v4l2cuse_event_client_usage u;
	struct v4l2_event ev;
	bool changed = false;

	if (cond & (G_IO_ERR | G_IO_HUP | G_IO_NVAL)) {
		/* The node is going away; the monitor removes the feed. */
		feed->event_watch = 0;
		return G_SOURCE_REMOVE;
	}
	while (client_xioctl(fd, VIDIOC_DQEVENT, &ev) == 0) {
		if (ev.type != V4L2CUSE_EVENT_CLIENT_USAGE)
			continue;
		memcpy(&u, ev.u.data, sizeof(u));
		changed |= u.count != feed->readers;
		feed->readers = u.count;
	}
	if (changed) {
		g_debug("%s: %u reader(s)", feed->dev->path, feed->readers);
		feed_update(feed);
	}
	return G_SOURCE_CONTINUE;
}

struct bridge_feed *
bridge_feed_new(struct bridge_device *dev)
{
	struct bridge_feed *feed = g_new0(struct bridge_feed, 1);
	struct v4l2_event_subscription sub = {
		.type = V4L2CUSE_EVENT_CLIENT_USAGE,
		.flags = V4L2_EVENT_SUB_FL_SEND_INITIAL,
	};
	int r;

	feed->dev = dev;
	feed->node_name = g_strdup_printf("v4l2cuse-feed.%s", dev->name);
	feed->wfd = -1;
	feed->efd = open(dev->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (feed->efd < 0) {
		g_warning("%s: cannot open the writer node: %s", dev->path, g_strerror(errno));
		return feed;
	}
	r = client_xioctl(feed->efd, VIDIOC_SUBSCRIBE_EVENT, &sub);
	if (r < 0) {
		g_warning("%s: cannot subscribe to its readers (VIDIOC_SUBSCRIBE_EVENT): %s",
			  dev->path, g_strerror(-r));
		return feed;
	}
	feed->event_watch = g_unix_fd_add(feed->efd, G_IO_PRI | G_IO_ERR | G_IO_HUP, on_event,
					  feed);
	g_message("%s: feeds \"%s\" from PipeWire while it has readers", dev->path, dev->card);
	return feed;
}

void
bridge_feed_set_core(struct bridge_feed *feed, struct pw_core *core)
{
	if (feed->core != core)
		stream_destroy(feed);
	feed->core = core;
	feed_update(feed);
}

void
bridge_feed_free(struct bridge_feed *feed)
{
	if (!feed)
		return;
	stream_destroy(feed);
	if (feed->retry_id)
		g_source_remove(feed->retry_id);
	if (feed->event_watch)
		g_source_remove(feed->event_watch);
	if (feed->efd >= 0)
		close(feed->efd);
	bridge_device_free(feed->dev);
	g_free(feed->node_name);
	g_free(feed);
}
