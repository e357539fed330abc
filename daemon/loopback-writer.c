/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A loopback's writer end (loopback.h): the source of a writer node, an
 * output device. It takes every format of format.c at any even size
 * within the loopback's limits,
 * keeps the writer's colorimetry, and consume() makes each whole written
 * frame the loopback's newest, waking the capture ends.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <glib.h>

#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "util/cleanup.h"
#include "util/macros.h"
#include "convert.h"
#include "loopback-private.h"

/* ---------------------------------------------------------------------- */
/* The writer end */

void
v4l2cuse_loopback_set_writer(struct v4l2cuse_source *src, pid_t pid)
{
	struct loopback *lb;
	g_autofree char *path = NULL, *comm = NULL;

	if (!lb_is(src))
		return;
	lb = lb_of(src)->lb;
	lb->connected = pid != 0;
	if (!pid) {
		g_message("loopback %s: the writer (pid %d, %s) left", lb->name, (int)lb->pid,
			  lb->comm);
		return;
	}
	lb->pid = pid;
	path = g_strdup_printf("/proc/%d/comm", (int)pid);
	if (g_file_get_contents(path, &comm, NULL, NULL))
		g_strchomp(comm);
	g_strlcpy(lb->comm, comm ? comm : "?", sizeof(lb->comm));
	g_message("loopback %s: writer pid %d (%s), %ux%u %.4s", lb->name, (int)pid, lb->comm,
		  lb->writer_fmt.width, lb->writer_fmt.height,
		  (const char *)&lb->writer_fmt.pixelformat);
}

void
v4l2cuse_loopback_refused(struct v4l2cuse_source *src)
{
	if (lb_is(src))
		lb_of(src)->lb->refused++;
}

/* A format writers may write: one the converter reads and format.c knows. */
static bool
lb_known_format(uint32_t fourcc)
{
	return v4l2cuse_format_info(fourcc) != NULL;
}

static int
lb_writer_enum_format(struct v4l2cuse_source *src, unsigned int index, uint32_t *ret_fourcc)
{
	struct loopback *lb = lb_of(src)->lb;

	if (lb->knobs.keep_format && lb->has_kept) {
		if (index)
			return -EINVAL;
		*ret_fourcc = lb->writer_fmt.pixelformat;
		return 0;
	}
	if (!v4l2cuse_format_by_index(index))
		return -EINVAL;
	*ret_fourcc = v4l2cuse_format_by_index(index)->fourcc;
	return 0;
}

static int
lb_writer_enum_framesize(struct v4l2cuse_source *src, uint32_t fourcc, unsigned int index,
			 uint32_t *ret_width, uint32_t *ret_height)
{
	return -EINVAL;		/* a range: size_range() */
}

static int
lb_writer_enum_frameinterval(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t width,
			     uint32_t height, unsigned int index, struct v4l2_fract *ret)
{
	return -EINVAL;		/* a range: size_range() */
}

static int
lb_writer_size_range(struct v4l2cuse_source *src, uint32_t fourcc,
		     struct v4l2_frmsize_stepwise *ret, struct v4l2_fract *ret_fastest,
		     struct v4l2_fract *ret_slowest)
{
	struct loopback *lb = lb_of(src)->lb;

	if (lb->knobs.keep_format && lb->has_kept) {
		if (fourcc != lb->writer_fmt.pixelformat)
			return -EINVAL;
		*ret = (struct v4l2_frmsize_stepwise){
			lb->writer_fmt.width, lb->writer_fmt.width, 1,
			lb->writer_fmt.height, lb->writer_fmt.height, 1,
		};
	} else {
		if (!lb_known_format(fourcc))
			return -EINVAL;
		/* Even sizes: every subsampled format takes them. */
		*ret = (struct v4l2_frmsize_stepwise){
			lb->knobs.min_width, lb->knobs.max_width, 2,
			lb->knobs.min_height, lb->knobs.max_height, 2,
		};
	}
	*ret_fastest = (struct v4l2_fract){ 1, V4L2CUSE_MAX_FPS };
	*ret_slowest = (struct v4l2_fract){ 1, 1 };
	return 0;
}

static int
lb_writer_negotiate(struct v4l2cuse_source *src, struct v4l2_pix_format *pix)
{
	struct loopback *lb = lb_of(src)->lb;
	struct v4l2_pix_format f = { 0 };

	if (lb->knobs.keep_format && lb->has_kept) {
		f.pixelformat = lb->writer_fmt.pixelformat;
		f.width = lb->writer_fmt.width;
		f.height = lb->writer_fmt.height;
	} else {
		f.pixelformat = lb_known_format(pix->pixelformat) ?
				pix->pixelformat : v4l2cuse_format_by_index(0)->fourcc;
		/* The limits are even: so is what they clamp to. */
		f.width = CLAMP(pix->width, lb->knobs.min_width, lb->knobs.max_width) & ~1u;
		f.height = CLAMP(pix->height, lb->knobs.min_height, lb->knobs.max_height) & ~1u;
	}
	if (v4l2cuse_format_fill(&f) < 0)
		return -EINVAL;
	/*
	 * The writer's colorimetry stands, as an output driver takes it
	 * (GStreamer's v4l2sink fails when it is changed); 0 or out of range
	 * means ours.
	 */
	if (pix->colorspace && pix->colorspace <= V4L2_COLORSPACE_DCI_P3) {
		f.colorspace = pix->colorspace;
		f.ycbcr_enc = pix->ycbcr_enc <= V4L2_YCBCR_ENC_SMPTE240M ? pix->ycbcr_enc : 0;
		f.quantization = pix->quantization <= V4L2_QUANTIZATION_LIM_RANGE ?
				 pix->quantization : 0;
		f.xfer_func = pix->xfer_func <= V4L2_XFER_FUNC_SMPTE2084 ? pix->xfer_func : 0;
	}
	*pix = f;
	return 0;
}

static int
lb_writer_start(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix,
		const struct v4l2_fract *interval)
{
	struct loopback *lb = lb_of(src)->lb;

	lb->writer_fmt = *pix;
	if (lb->knobs.keep_format)
		lb->has_kept = true;
	return 0;
}

static void
lb_writer_stop(struct v4l2cuse_source *src)
{
}

static int
lb_writer_produce(struct v4l2cuse_source *src, struct v4l2cuse_frame *frame)
{
	return -EINVAL;		/* an output device's endpoint produces nothing */
}

static int
lb_writer_consume(struct v4l2cuse_source *src, const struct v4l2cuse_frame *frame)
{
	struct loopback *lb = lb_of(src)->lb;
	const struct v4l2_pix_format *f = frame->fmt;

	if (!frame->bytesused || frame->bytesused > f->sizeimage)
		return -EINVAL;
	if (lb->alloc < f->sizeimage) {
		g_free(lb->data);
		lb->data = g_malloc(f->sizeimage);
		lb->alloc = f->sizeimage;
	}
	memcpy(lb->data, frame->data, frame->bytesused);
	lb->bytesused = frame->bytesused;
	lb->fmt = *f;
	lb->writer_fmt = *f;
	lb->gen++;
	lb->at_ns = v4l2cuse_now_ns();
	/* Readers take it at once (at their own pace at most). */
	for (GList *l = lb->captures.head; l; l = l->next) {
		struct lb_source *c = l->data;
		uint64_t one = 1;

		if (write(c->evfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			g_debug("loopback %s: eventfd: %s", lb->name, g_strerror(errno));
	}
	return 0;
}

const struct v4l2cuse_source_ops lb_writer_ops = {
	.abi = V4L2CUSE_SOURCE_ABI,
	.name = "loopback-writer",
	.create = lb_create,
	.destroy = lb_destroy,
	.enum_format = lb_writer_enum_format,
	.enum_framesize = lb_writer_enum_framesize,
	.enum_frameinterval = lb_writer_enum_frameinterval,
	.negotiate = lb_writer_negotiate,
	.start = lb_writer_start,
	.stop = lb_writer_stop,
	.produce = lb_writer_produce,
	.size_range = lb_writer_size_range,
	.consume = lb_writer_consume,
	.control = lb_control,
	.get_control = lb_get_control,
	.set_control = lb_set_control,
};
