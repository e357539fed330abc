/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The GStreamer code the file reader and the live source share (gst-common.h). */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include "v4l2cuse/format.h"
#include "gst-common.h"

int
v4l2cuse_gst_init(char **ret_error)
{
	GError *err = NULL;

	if (gst_init_check(NULL, NULL, &err))
		return 0;
	*ret_error = g_strdup_printf("GStreamer: %s", err ? err->message : "cannot initialise");
	g_clear_error(&err);
	return -EIO;
}

char *
v4l2cuse_gst_bus_poll(GstBus *bus, bool *ret_eos)
{
	char *error = NULL;
	GstMessage *msg;

	while ((msg = gst_bus_pop(bus))) {
		if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR && !error) {
			GError *err = NULL;

			gst_message_parse_error(msg, &err, NULL);
			error = g_strdup_printf("GStreamer: %s", err ? err->message : "unknown error");
			g_clear_error(&err);
		} else if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS && ret_eos) {
			*ret_eos = true;
		}
		gst_message_unref(msg);
	}
	return error;
}

/* The formats whose planes GStreamer and V4L2 order alike (YV12: Y, Cr, Cb in both). */
static const struct {
	uint32_t fourcc;
	GstVideoFormat gst;
} gc_formats[] = {
	{ V4L2_PIX_FMT_YUYV, GST_VIDEO_FORMAT_YUY2 },
	{ V4L2_PIX_FMT_UYVY, GST_VIDEO_FORMAT_UYVY },
	{ V4L2_PIX_FMT_YVYU, GST_VIDEO_FORMAT_YVYU },
	{ V4L2_PIX_FMT_NV12, GST_VIDEO_FORMAT_NV12 },
	{ V4L2_PIX_FMT_NV21, GST_VIDEO_FORMAT_NV21 },
	{ V4L2_PIX_FMT_YUV420, GST_VIDEO_FORMAT_I420 },
	{ V4L2_PIX_FMT_YVU420, GST_VIDEO_FORMAT_YV12 },
	{ V4L2_PIX_FMT_GREY, GST_VIDEO_FORMAT_GRAY8 },
};

GstVideoFormat
v4l2cuse_gst_format_of(uint32_t fourcc)
{
	for (size_t i = 0; i < G_N_ELEMENTS(gc_formats); i++) {
		if (gc_formats[i].fourcc == fourcc)
			return gc_formats[i].gst;
	}
	return GST_VIDEO_FORMAT_UNKNOWN;
}

static uint32_t
gc_fourcc_of(GstVideoFormat f)
{
	for (size_t i = 0; i < G_N_ELEMENTS(gc_formats); i++) {
		if (gc_formats[i].gst == f)
			return gc_formats[i].fourcc;
	}
	return 0;
}

void
v4l2cuse_gst_frame_release(struct v4l2cuse_gst_frame *f)
{
	if (f->vmapped) {
		gst_video_frame_unmap(&f->vframe);
		f->vmapped = false;
	}
	if (f->jpeg_buf) {
		gst_buffer_unmap(f->jpeg_buf, &f->jpeg_map);
		f->jpeg_buf = NULL;
	}
	g_clear_pointer(&f->sample, gst_sample_unref);
}

void
v4l2cuse_gst_frame_clear(struct v4l2cuse_gst_frame *f)
{
	v4l2cuse_gst_frame_release(f);
	g_clear_pointer(&f->tight, g_free);
	f->tight_size = 0;
}

/* The caps' Y'CbCr matrix and range as V4L2's (0: format.c's default). */
static void
gc_colorimetry(const GstVideoInfo *info, struct v4l2cuse_image *img)
{
	const GstVideoColorimetry *c = &GST_VIDEO_INFO_COLORIMETRY(info);

	img->ycbcr_enc = c->matrix == GST_VIDEO_COLOR_MATRIX_BT709 ? V4L2_YCBCR_ENC_709 :
			 c->matrix == GST_VIDEO_COLOR_MATRIX_BT601 ? V4L2_YCBCR_ENC_601 : 0;
	img->quantization = c->range == GST_VIDEO_COLOR_RANGE_0_255 ? V4L2_QUANTIZATION_FULL_RANGE :
			    c->range == GST_VIDEO_COLOR_RANGE_16_235 ? V4L2_QUANTIZATION_LIM_RANGE :
			    0;
}

static int
gc_take_jpeg(struct v4l2cuse_gst_frame *f, const GstStructure *s, struct v4l2cuse_image *ret)
{
	GstBuffer *buf = gst_sample_get_buffer(f->sample);
	int w = 0, h = 0;

	if (!buf || !gst_buffer_map(buf, &f->jpeg_map, GST_MAP_READ))
		return -EBADMSG;
	f->jpeg_buf = buf;
	gst_structure_get_int(s, "width", &w);
	gst_structure_get_int(s, "height", &h);
	*ret = (struct v4l2cuse_image){
		.fourcc = V4L2_PIX_FMT_JPEG,
		.width = w > 0 ? (uint32_t)w : 0, .height = h > 0 ? (uint32_t)h : 0,
		.data = f->jpeg_map.data, .size = f->jpeg_map.size,
	};
	return 0;
}

int
v4l2cuse_gst_frame_take(struct v4l2cuse_gst_frame *f, GstSample *sample,
			struct v4l2cuse_image *ret)
{
	const struct v4l2cuse_format_info *fi;
	GstCaps *caps;
	GstBuffer *buf;
	GstVideoInfo info;
	size_t off[3], stride[3], size;
	uint32_t fourcc, w, h;
	bool tight = true;

	v4l2cuse_gst_frame_release(f);
	f->sample = sample;
	caps = gst_sample_get_caps(sample);
	buf = gst_sample_get_buffer(sample);
	if (!caps || !buf || gst_caps_get_size(caps) == 0)
		return -EBADMSG;
	if (gst_structure_has_name(gst_caps_get_structure(caps, 0), "image/jpeg"))
		return gc_take_jpeg(f, gst_caps_get_structure(caps, 0), ret);
	if (!gst_video_info_from_caps(&info, caps))
		return -EBADMSG;
	fourcc = gc_fourcc_of(GST_VIDEO_INFO_FORMAT(&info));
	fi = v4l2cuse_format_lookup(fourcc);
	if (!fi)
		return -EBADMSG;
	w = (uint32_t)GST_VIDEO_INFO_WIDTH(&info) / fi->hdiv * fi->hdiv;
	h = (uint32_t)GST_VIDEO_INFO_HEIGHT(&info);
	if (fi->n_planes > 1)
		h = h / fi->vdiv * fi->vdiv;
	size = v4l2cuse_format_frame_size(fi, w, h, 0, off, stride);
	if (w < 2 || h < 2 || size == 0 || GST_VIDEO_INFO_N_PLANES(&info) != fi->n_planes ||
	    !gst_video_frame_map(&f->vframe, &info, buf, GST_MAP_READ))
		return -EBADMSG;
	f->vmapped = true;
	for (unsigned int i = 0; i < fi->n_planes; i++) {
		const uint8_t *p = GST_VIDEO_FRAME_PLANE_DATA(&f->vframe, i);

		if ((size_t)GST_VIDEO_FRAME_PLANE_STRIDE(&f->vframe, i) != stride[i] ||
		    p != (const uint8_t *)GST_VIDEO_FRAME_PLANE_DATA(&f->vframe, 0) + off[i])
			tight = false;
	}
	*ret = (struct v4l2cuse_image){ .fourcc = fourcc, .width = w, .height = h, .size = size };
	gc_colorimetry(&info, ret);
	if (tight) {
		ret->data = GST_VIDEO_FRAME_PLANE_DATA(&f->vframe, 0);
		return 0;
	}
	/* GStreamer pads lines (to 4 bytes) and may place planes apart: V4L2's layout. */
	if (f->tight_size < size) {
		g_free(f->tight);
		f->tight = g_malloc(size);
		f->tight_size = size;
	}
	for (unsigned int i = 0; i < fi->n_planes; i++) {
		const uint8_t *p = GST_VIDEO_FRAME_PLANE_DATA(&f->vframe, i);
		size_t s = (size_t)GST_VIDEO_FRAME_PLANE_STRIDE(&f->vframe, i);
		uint32_t rows = i ? h / fi->vdiv : h;

		for (uint32_t y = 0; y < rows; y++)
			memcpy(f->tight + off[i] + stride[i] * y, p + s * y, stride[i]);
	}
	ret->data = f->tight;
	return 0;
}
