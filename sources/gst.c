/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GStreamer reader (-Dgstreamer): any container and codec the installed
 * plugins decode, through
 *
 *   uridecodebin uri=file://... ! videoconvert ! video/x-raw,format=I420
 *     ! appsink sync=false max-buffers=2
 *
 * (other streams, e.g. audio, go to a fakesink).
 *
 * Nothing here waits: open() only typefinds the file (synchronous reads of
 * its first GR_TYPEFIND_BYTES, like the other readers' header reads;
 * nothing GStreamer recognises, or text, is "unsupported file type"), then
 * sets the pipeline PLAYING and returns. Demuxing and decoding run on
 * GStreamer's threads. Until the first decoded frame has reached the
 * appsink the reader's info has no size (width 0) and probe() says -EAGAIN;
 * then the info is the frame's caps (size, rate, pixel aspect; a rate of 0,
 * an image, makes a still). An error on the bus, a file without video or no
 * first frame within GR_FIRST_FRAME_US is a failure of probe() (and of
 * next()) with one line. The decoder stays at most two frames ahead and
 * next() only takes what is there (try_pull_sample with a zero timeout).
 * I420 with GStreamer's padded strides or odd sizes is repacked to tight
 * YU12 (odd sizes lose a column/row).
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/base/gsttypefindhelper.h>
#include <gst/video/video.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "file-reader.h"
#include "gst-common.h"

#define GR_FIRST_FRAME_US	(10 * G_USEC_PER_SEC)
#define GR_TYPEFIND_BYTES	(256u << 10)

struct gst_reader {
	struct v4l2cuse_file_reader base;
	GstElement *pipeline;
	GstElement *convert;
	GstElement *sink;
	GstBus *bus;
	int have_video;			/* atomic: set on a streaming thread */
	int no_more_pads;		/* atomic: set on a streaming thread */
	bool ready;			/* base.info is the first frame's */
	int64_t deadline_us;		/* for the first frame */
	struct v4l2cuse_gst_frame frame;	/* handed out by the last next() */
	char *error;			/* the first error from the bus */
};

static struct gst_reader *
gr_from(struct v4l2cuse_file_reader *r)
{
	return (struct gst_reader *)r;
}

/* On a streaming thread: link the first video pad, park the rest. */
static void
gr_pad_added(GstElement *dec, GstPad *pad, gpointer data)
{
	struct gst_reader *g = data;
	GstCaps *caps = gst_pad_get_current_caps(pad);
	const char *name;
	GstPad *sinkpad;

	if (!caps)
		caps = gst_pad_query_caps(pad, NULL);
	name = gst_structure_get_name(gst_caps_get_structure(caps, 0));
	sinkpad = gst_element_get_static_pad(g->convert, "sink");
	if (g_str_has_prefix(name, "video/") && !gst_pad_is_linked(sinkpad) &&
	    gst_pad_link(pad, sinkpad) == GST_PAD_LINK_OK) {
		g_atomic_int_set(&g->have_video, 1);
	} else {
		GstElement *fake = gst_element_factory_make("fakesink", NULL);
		GstPad *fpad;

		g_object_set(fake, "sync", FALSE, "async", FALSE, NULL);
		gst_bin_add(GST_BIN(g->pipeline), fake);
		gst_element_sync_state_with_parent(fake);
		fpad = gst_element_get_static_pad(fake, "sink");
		gst_pad_link(pad, fpad);
		gst_object_unref(fpad);
	}
	gst_object_unref(sinkpad);
	gst_caps_unref(caps);
}

static void
gr_no_more_pads(GstElement *dec, gpointer data)
{
	struct gst_reader *g = data;

	g_atomic_int_set(&g->no_more_pads, 1);
}

/* Drain the bus (it would grow forever); keep the first error. */
static void
gr_poll_bus(struct gst_reader *g)
{
	char *error = v4l2cuse_gst_bus_poll(g->bus, NULL);

	if (error && !g->error)
		g->error = error;
	else
		g_free(error);
}

/* The info from the first frame's caps, once it has reached the appsink. */
static int
gr_probe(struct v4l2cuse_file_reader *r, char **ret_error)
{
	struct gst_reader *g = gr_from(r);
	GstSample *sample;
	GstVideoInfo info;
	bool ok;

	if (g->ready)
		return 0;
	gr_poll_bus(g);
	if (g->error) {
		*ret_error = g_strdup(g->error);
		return -EIO;
	}
	/* The preroll sample is also the first one next() pulls: nothing is lost. */
	sample = gst_app_sink_try_pull_preroll(GST_APP_SINK(g->sink), 0);
	if (!sample) {
		if (g_atomic_int_get(&g->no_more_pads) && !g_atomic_int_get(&g->have_video)) {
			*ret_error = g_strdup("no video stream");
			return -EINVAL;
		}
		if (gst_app_sink_is_eos(GST_APP_SINK(g->sink))) {
			*ret_error = g_strdup("GStreamer: no video frame");
			return -EINVAL;
		}
		if (g_get_monotonic_time() > g->deadline_us) {
			*ret_error = g_strdup_printf("GStreamer: no frame within %u s",
						     (unsigned int)(GR_FIRST_FRAME_US /
								    G_USEC_PER_SEC));
			return -ETIMEDOUT;
		}
		return -EAGAIN;
	}
	ok = gst_video_info_from_caps(&info, gst_sample_get_caps(sample));
	gst_sample_unref(sample);
	if (!ok) {
		*ret_error = g_strdup("GStreamer: no video frame");
		return -EINVAL;
	}
	r->info.width = (uint32_t)GST_VIDEO_INFO_WIDTH(&info) & ~1u;
	r->info.height = (uint32_t)GST_VIDEO_INFO_HEIGHT(&info) & ~1u;
	r->info.aspect = (struct v4l2_fract){ (uint32_t)GST_VIDEO_INFO_PAR_N(&info),
					      (uint32_t)GST_VIDEO_INFO_PAR_D(&info) };
	r->info.still = GST_VIDEO_INFO_FPS_N(&info) <= 0;
	if (GST_VIDEO_INFO_FPS_N(&info) > 0 && GST_VIDEO_INFO_FPS_D(&info) > 0)
		r->info.interval = (struct v4l2_fract){ (uint32_t)GST_VIDEO_INFO_FPS_D(&info),
							(uint32_t)GST_VIDEO_INFO_FPS_N(&info) };
	if (r->info.width == 0 || r->info.height == 0 ||
	    r->info.width > V4L2CUSE_MAX_WIDTH || r->info.height > V4L2CUSE_MAX_HEIGHT) {
		*ret_error = g_strdup_printf("GStreamer: frames of %dx%d are outside 2x2..%ux%u",
					     GST_VIDEO_INFO_WIDTH(&info),
					     GST_VIDEO_INFO_HEIGHT(&info), V4L2CUSE_MAX_WIDTH,
					     V4L2CUSE_MAX_HEIGHT);
		return -EINVAL;
	}
	g->ready = true;
	return 0;
}

static int
gr_next(struct v4l2cuse_file_reader *r, struct v4l2cuse_image *ret)
{
	struct gst_reader *g = gr_from(r);
	g_autofree char *error = NULL;
	GstSample *sample;
	int rr;

	v4l2cuse_gst_frame_release(&g->frame);
	rr = gr_probe(r, &error);
	if (rr < 0)
		return rr == -EAGAIN ? rr : -EIO;
	gr_poll_bus(g);
	if (g->error)
		return -EIO;
	sample = gst_app_sink_try_pull_sample(GST_APP_SINK(g->sink), 0);
	if (!sample)
		return gst_app_sink_is_eos(GST_APP_SINK(g->sink)) ? -ENODATA : -EAGAIN;
	rr = v4l2cuse_gst_frame_take(&g->frame, sample, ret);
	if (rr < 0 || ret->fourcc != V4L2_PIX_FMT_YUV420)
		return -EBADMSG;
	/* Read in format.c's colorimetry, as this reader always has (not the caps'). */
	ret->ycbcr_enc = ret->quantization = 0;
	return 0;
}

static int
gr_rewind(struct v4l2cuse_file_reader *r)
{
	struct gst_reader *g = gr_from(r);

	v4l2cuse_gst_frame_release(&g->frame);
	if (!g->ready)
		return 0;	/* nothing taken yet: the first frame is still coming */
	if (!gst_element_seek_simple(g->pipeline, GST_FORMAT_TIME,
				     GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_KEY_UNIT, 0))
		return -EIO;
	return 0;
}

static void
gr_destroy(struct v4l2cuse_file_reader *r)
{
	struct gst_reader *g = gr_from(r);

	v4l2cuse_gst_frame_clear(&g->frame);
	if (g->pipeline) {
		gst_element_set_state(g->pipeline, GST_STATE_NULL);
		gst_object_unref(g->pipeline);
	}
	if (g->bus)
		gst_object_unref(g->bus);
	g_free(g->error);
	g_free(g);
}

static const struct v4l2cuse_file_reader_ops gst_ops = {
	.name = "gstreamer",
	.next = gr_next,
	.rewind = gr_rewind,
	.destroy = gr_destroy,
	.probe = gr_probe,
};

/*
 * What GStreamer makes of the start of @f (its typefinders, as
 * uridecodebin runs them): -EINVAL and a one-line reason when it finds
 * nothing it could decode.
 */
static int
gr_typefind(FILE *f, const char *path, char **ret_error)
{
	g_autofree uint8_t *data = g_malloc(GR_TYPEFIND_BYTES);
	const char *dot = strrchr(path, '.');
	GstTypeFindProbability prob;
	const char *name;
	GstCaps *caps;
	size_t n;

	rewind(f);
	n = fread(data, 1, GR_TYPEFIND_BYTES, f);
	if (ferror(f)) {
		*ret_error = g_strdup(g_strerror(EIO));
		return -EIO;
	}
	caps = gst_type_find_helper_for_data_with_extension(NULL, data, n,
							    dot && !strchr(dot, '/') ? dot + 1
										  : NULL,
							    &prob);
	if (!caps) {
		*ret_error = g_strdup("unsupported file type (not Y4M, MJPEG, JPEG or PNG, "
				      "and GStreamer does not recognise it; raw frames need "
				      "format= and size=)");
		return -EINVAL;
	}
	name = gst_structure_get_name(gst_caps_get_structure(caps, 0));
	if (g_str_has_prefix(name, "text/")) {
		*ret_error = g_strdup_printf("unsupported file type (GStreamer: %s)", name);
		gst_caps_unref(caps);
		return -EINVAL;
	}
	g_debug("gstreamer: '%s' is %s", path, name);
	gst_caps_unref(caps);
	return 0;
}

static int
gr_build(struct gst_reader *g, const char *uri, char **ret_error)
{
	GstElement *dec = gst_element_factory_make("uridecodebin", NULL);
	GstElement *filter = gst_element_factory_make("capsfilter", NULL);
	GstCaps *caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "I420", NULL);

	g->pipeline = gst_pipeline_new("v4l2cuse-file");
	g->convert = gst_element_factory_make("videoconvert", NULL);
	g->sink = gst_element_factory_make("appsink", NULL);
	if (!dec || !filter || !g->convert || !g->sink) {
		*ret_error = g_strdup("GStreamer lacks uridecodebin, videoconvert or appsink "
				      "(gstreamer1.0-plugins-base)");
		GstElement *made[] = { dec, filter, g->convert, g->sink };

		for (size_t i = 0; i < G_N_ELEMENTS(made); i++) {
			if (made[i])
				gst_object_unref(gst_object_ref_sink(made[i]));
		}
		g->convert = g->sink = NULL;
		gst_caps_unref(caps);
		return -ENOENT;
	}
	gst_object_ref_sink(g->pipeline);
	g_object_set(dec, "uri", uri, NULL);
	g_object_set(filter, "caps", caps, NULL);
	g_object_set(g->sink, "caps", caps, "sync", FALSE, "max-buffers", 2, "drop", FALSE,
		     "emit-signals", FALSE, NULL);
	gst_caps_unref(caps);
	gst_bin_add_many(GST_BIN(g->pipeline), dec, g->convert, filter, g->sink, NULL);
	if (!gst_element_link_many(g->convert, filter, g->sink, NULL)) {
		*ret_error = g_strdup("cannot link the GStreamer pipeline");
		return -EIO;
	}
	g_signal_connect(dec, "pad-added", G_CALLBACK(gr_pad_added), g);
	g_signal_connect(dec, "no-more-pads", G_CALLBACK(gr_no_more_pads), g);
	g->bus = gst_element_get_bus(g->pipeline);
	return 0;
}

int
v4l2cuse_gst_reader_open(FILE *f, const char *path, struct v4l2cuse_file_reader **ret,
			 char **ret_error)
{
	struct gst_reader *g = g_new0(struct gst_reader, 1);
	GError *err = NULL;
	char *uri = NULL;
	int r;

	g->base.ops = &gst_ops;
	g->base.info = (struct v4l2cuse_file_reader_info){ .fourcc = V4L2_PIX_FMT_YUV420 };
	g_strlcpy(g->base.info.kind, "GStreamer", sizeof(g->base.info.kind));
	r = v4l2cuse_gst_init(ret_error);
	if (r < 0)
		goto err;
	r = gr_typefind(f, path, ret_error);
	if (r < 0)
		goto err;
	uri = gst_filename_to_uri(path, &err);
	if (!uri) {
		*ret_error = g_strdup_printf("GStreamer: %s", err->message);
		r = -EINVAL;
		goto err;
	}
	r = gr_build(g, uri, ret_error);
	if (r < 0)
		goto err;
	g->deadline_us = g_get_monotonic_time() + GR_FIRST_FRAME_US;
	if (gst_element_set_state(g->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
		gr_poll_bus(g);
		*ret_error = g_strdup_printf("unsupported file type (%s)",
					     g->error ? g->error : "GStreamer cannot open it");
		r = -EINVAL;
		goto err;
	}
	fclose(f);
	g_free(uri);
	*ret = &g->base;
	return 0;

err:
	fclose(f);
	g_clear_error(&err);
	g_free(uri);
	gr_destroy(&g->base);
	return r;
}
