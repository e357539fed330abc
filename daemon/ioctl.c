/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The V4L2 ioctl layer: decodes the CUSE retry protocol (round one asks for
 * the argument, the last round carries it), dispatches on the full 32-bit
 * command and answers with the kernel's errno for every case
 * (v4l2-ioctl.c, v4l2-ctrls, vb2 and vivid are the reference).
 *
 * Near 900 lines on purpose: every command's handler sits next to the one
 * table (ioc_table) that gives its flags and argument size, as in the
 * kernel's v4l2-ioctl.c, so that a command's errno rules read in one place.
 * What the handlers call lives elsewhere: controls in ctrls.c, queues in
 * videobuf, formats in offer.c and the source.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>

#include "v4l2cuse/ctl-protocol.h"
#include "v4l2cuse/format.h"
#include "v4l2cuse/loopback-abi.h"
#include "v4l2cuse/source.h"
#include "util/macros.h"
#include "videobuf.h"
#include "device-private.h"
#include "ctrls.h"
#include "loopback.h"
#include "shim.h"

/* The handler answered (or parked) the request itself. */
#define IOC_REPLIED 1

enum {
	IOC_PRIO = 1 << 0,	/* the kernel's INFO_FL_PRIO: refused when outranked */
	IOC_STREAM = 1 << 1,	/* streaming I/O: only shim-attached handles */
	IOC_SHIM = 1 << 2,	/* needs the shim's socket server (else ENOTTY) */
	IOC_CAPTURE = 1 << 3,	/* capture nodes only (else ENOTTY) */
	IOC_OUTPUT = 1 << 4,	/* output (writer) nodes only (else ENOTTY) */
};

typedef int (*ioc_fn)(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg);

struct ioc_info {
	unsigned int cmd;
	unsigned int flags;
	ioc_fn fn;
	const char *name;
};

/* Largest flat argument we handle (struct v4l2_format is 208 bytes). */
union ioc_arg {
	struct v4l2_capability cap;
	struct v4l2_format fmt;
	struct v4l2_fmtdesc fmtdesc;
	struct v4l2_frmsizeenum fsize;
	struct v4l2_frmivalenum fival;
	struct v4l2_streamparm parm;
	struct v4l2_input input;
	struct v4l2_requestbuffers reqbufs;
	struct v4l2_create_buffers create;
	struct v4l2_buffer buf;
	struct v4l2_queryctrl qctrl;
	struct v4l2_query_ext_ctrl qextctrl;
	struct v4l2_querymenu qmenu;
	struct v4l2_control ctrl;
	struct v4l2_event event;
	struct v4l2_event_subscription sub;
	struct v4l2cuse_info info;
	struct v4l2cuse_feed feed;
	uint32_t u32;
	int i;
	uint8_t bytes[256];
};

/* The one buffer type of the node: capture, or output for a loopback's writer node. */
static int
check_type(struct v4l2cuse_fh *fh, uint32_t type)
{
	return type == (fh->dev->output ? V4L2_BUF_TYPE_VIDEO_OUTPUT
					: V4L2_BUF_TYPE_VIDEO_CAPTURE) ? 0 : -EINVAL;
}

/* ---------------------------------------------------------------------- */

static int
ioc_querycap(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2cuse_device *dev = fh->dev;
	struct v4l2_capability *cap = arg;
	/*
	 * Apps made for v4l2loopback find its writer node by what its QUERYCAP
	 * says: droidcam by the bus_info, pyvirtualcam (and scripts that grep
	 * `v4l2-ctl --info`) by the driver name, exactly v4l2loopback's.
	 */
	bool lb = dev_loopback_compat(dev);

	memset(cap, 0, sizeof(*cap));
	g_strlcpy((char *)cap->driver, lb ? "v4l2 loopback" : "v4l2cuse", sizeof(cap->driver));
	g_strlcpy((char *)cap->card, dev->label, sizeof(cap->card));
	/* Fixed width: Firefox prefix-matches bus_info as the device id. */
	snprintf((char *)cap->bus_info, sizeof(cap->bus_info), "platform:%s-%03u",
		 lb ? "v4l2loopback" : "v4l2cuse", dev->number);
	cap->version = dev->kernel_version;
	cap->device_caps = (dev->output ? V4L2_CAP_VIDEO_OUTPUT : V4L2_CAP_VIDEO_CAPTURE) |
			   V4L2_CAP_READWRITE | V4L2_CAP_EXT_PIX_FORMAT;
	if (fh->streaming_capable)
		cap->device_caps |= V4L2_CAP_STREAMING;
	cap->capabilities = cap->device_caps | V4L2_CAP_DEVICE_CAPS;
	return 0;
}

static int
ioc_g_priority(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2cuse_device *dev = fh->dev;
	uint32_t *p = arg;

	/* The highest priority of all open handles (v4l2_prio_max). */
	*p = V4L2_PRIORITY_UNSET;
	for (int i = V4L2_PRIORITY_RECORD; i > V4L2_PRIORITY_UNSET; i--) {
		if (dev->prio_count[i]) {
			*p = i;
			break;
		}
	}
	return 0;
}

static int
ioc_s_priority(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2cuse_device *dev = fh->dev;
	uint32_t p = *(uint32_t *)arg;

	if (p == V4L2_PRIORITY_UNSET)
		p = V4L2_PRIORITY_DEFAULT;
	if (p < V4L2_PRIORITY_BACKGROUND || p > V4L2_PRIORITY_RECORD)
		return -EINVAL;
	if (p == fh->prio)
		return 0;
	dev->prio_count[p]++;
	dev->prio_count[fh->prio]--;
	fh->prio = p;
	return 0;
}

static int
ioc_enum_fmt(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2cuse_source *src = fh->dev->src;
	struct v4l2_fmtdesc *f = arg;
	const struct v4l2cuse_format_info *info;
	uint32_t index = f->index, type = f->type, fourcc;
	int r;

	if (check_type(fh, type) < 0)
		return -EINVAL;
	r = src->ops->enum_format(src, index, &fourcc);
	if (r < 0)
		return -EINVAL;
	info = v4l2cuse_format_info(fourcc);
	memset(f, 0, sizeof(*f));
	f->index = index;
	f->type = type;
	f->pixelformat = fourcc;
	if (info) {
		g_strlcpy((char *)f->description, info->description, sizeof(f->description));
		if (info->compressed)
			f->flags |= V4L2_FMT_FLAG_COMPRESSED;
	}
	return 0;
}

/* The answer of G/TRY/S_FMT: @pix, the rest of the format union zeroed. */
static int
fmt_answer(struct v4l2_format *f, const struct v4l2_pix_format *pix)
{
	memset(&f->fmt, 0, sizeof(f->fmt));
	f->fmt.pix = *pix;
	return 0;
}

static int
ioc_g_fmt(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2_format *f = arg;

	if (check_type(fh, f->type) < 0)
		return -EINVAL;
	return fmt_answer(f, &fh->dev->fmt);
}

static int
ioc_try_fmt(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2_format *f = arg;
	struct v4l2_pix_format pix;
	int r;

	if (check_type(fh, f->type) < 0)
		return -EINVAL;
	pix = f->fmt.pix;
	r = dev_set_format(fh->dev, &pix, true);
	if (r < 0)
		return r;
	return fmt_answer(f, &pix);
}

static int
ioc_s_fmt(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2_format *f = arg;
	struct v4l2_pix_format pix;
	int r;

	if (check_type(fh, f->type) < 0)
		return -EINVAL;
	/* vivid: no format change while buffers exist (vb2_is_busy). */
	if (vb_queue_is_busy(fh->dq->q))
		return -EBUSY;
	/* A writer node: one writer at a time, and only it changes the format. */
	if (fh->dev->output && fh->dev->writer && fh->dev->writer != fh)
		return -EBUSY;
	pix = f->fmt.pix;
	/*
	 * A shared device whose other consumers stream keeps its format: S_FMT
	 * may adjust, so the answer is the format in force.
	 */
	if (dev_others_busy(fh->dev, fh))
		pix = fh->dev->fmt;
	r = dev_set_format(fh->dev, &pix, false);
	if (r < 0)
		return r;
	if (fh->dev->writer == fh)
		dev_writer_restart(fh->dev);	/* its next frames have the new format */
	return fmt_answer(f, &pix);
}

static int
ioc_enum_framesizes(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2cuse_source *src = fh->dev->src;
	struct v4l2_frmsizeenum *fs = arg;
	uint32_t index = fs->index, fourcc = fs->pixel_format, w, h;
	struct v4l2_frmsize_stepwise range;
	struct v4l2_fract fast, slow;

	if (!v4l2cuse_source_offers_format(src, fourcc))
		return -EINVAL;
	if (v4l2cuse_source_size_range(src, fourcc, &range, &fast, &slow) == 0) {
		if (index != 0)
			return -EINVAL;
		memset(fs, 0, sizeof(*fs));
		fs->pixel_format = fourcc;
		fs->type = V4L2_FRMSIZE_TYPE_STEPWISE;
		fs->stepwise = range;
		return 0;
	}
	if (src->ops->enum_framesize(src, fourcc, index, &w, &h) < 0)
		return -EINVAL;
	memset(fs, 0, sizeof(*fs));
	fs->index = index;
	fs->pixel_format = fourcc;
	fs->type = V4L2_FRMSIZE_TYPE_DISCRETE;
	fs->discrete.width = w;
	fs->discrete.height = h;
	return 0;
}

static bool
in_range(uint32_t v, uint32_t lo, uint32_t hi, uint32_t step)
{
	return v >= lo && v <= hi && (v - lo) % MAX(step, 1u) == 0;
}

static int
ioc_enum_frameintervals(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2cuse_source *src = fh->dev->src;
	struct v4l2_frmivalenum *fi = arg;
	uint32_t index = fi->index, fourcc = fi->pixel_format, w = fi->width, h = fi->height;
	struct v4l2_frmsize_stepwise range;
	struct v4l2_fract iv, fast, slow;

	if (!v4l2cuse_source_offers_format(src, fourcc))
		return -EINVAL;
	if (v4l2cuse_source_size_range(src, fourcc, &range, &fast, &slow) == 0) {
		if (index != 0 || !in_range(w, range.min_width, range.max_width, range.step_width) ||
		    !in_range(h, range.min_height, range.max_height, range.step_height))
			return -EINVAL;
		memset(fi, 0, sizeof(*fi));
		fi->pixel_format = fourcc;
		fi->width = w;
		fi->height = h;
		fi->type = V4L2_FRMIVAL_TYPE_CONTINUOUS;
		fi->stepwise.min = fast;
		fi->stepwise.max = slow;
		fi->stepwise.step = (struct v4l2_fract){ 1, 1 };
		return 0;
	}
	if (!v4l2cuse_source_offers_size(src, fourcc, w, h))
		return -EINVAL;
	if (src->ops->enum_frameinterval(src, fourcc, w, h, index, &iv) < 0)
		return -EINVAL;
	memset(fi, 0, sizeof(*fi));
	fi->index = index;
	fi->pixel_format = fourcc;
	fi->width = w;
	fi->height = h;
	fi->type = V4L2_FRMIVAL_TYPE_DISCRETE;
	fi->discrete = iv;
	return 0;
}

static void
parm_fill(struct v4l2cuse_device *dev, struct v4l2_streamparm *p)
{
	memset(&p->parm, 0, sizeof(p->parm));
	if (dev->output) {
		/* The writer's rate; one frame per write() (non-zero with READWRITE). */
		p->parm.output.capability = V4L2_CAP_TIMEPERFRAME;
		p->parm.output.timeperframe = dev->interval;
		p->parm.output.writebuffers = 1;
		return;
	}
	p->parm.capture.capability = V4L2_CAP_TIMEPERFRAME;
	p->parm.capture.timeperframe = dev->interval;
	/* Non-zero with READWRITE (v4l2-compliance). */
	p->parm.capture.readbuffers = 3;
}

static int
ioc_g_parm(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2_streamparm *p = arg;

	if (check_type(fh, p->type) < 0)
		return -EINVAL;
	parm_fill(fh->dev, p);
	return 0;
}

/* Nearest offered interval for the current format (by frame rate). */
static struct v4l2_fract
dev_nearest_interval(struct v4l2cuse_device *dev, struct v4l2_fract want)
{
	struct v4l2cuse_source *src = dev->src;
	struct v4l2_fract best = dev->interval, iv;
	double want_fps, best_d = G_MAXDOUBLE;

	struct v4l2_frmsize_stepwise range;
	struct v4l2_fract fast, slow;

	if (v4l2cuse_source_size_range(src, dev->fmt.pixelformat, &range, &fast, &slow) == 0) {
		/* Any rate in the range; 0/x and x/0 keep the current one. */
		if (!want.numerator || !want.denominator)
			return dev->interval;
		if ((uint64_t)want.numerator * fast.denominator <
		    (uint64_t)fast.numerator * want.denominator)
			return fast;
		if ((uint64_t)want.numerator * slow.denominator >
		    (uint64_t)slow.numerator * want.denominator)
			return slow;
		return want;
	}
	/* 0/x and x/0 ask for the default: the fastest rate offered. */
	want_fps = (want.numerator && want.denominator)
			   ? (double)want.denominator / want.numerator : G_MAXDOUBLE;
	for (unsigned int i = 0; src->ops->enum_frameinterval(src, dev->fmt.pixelformat,
							       dev->fmt.width, dev->fmt.height,
							       i, &iv) == 0; i++) {
		double fps = (double)iv.denominator / MAX(iv.numerator, 1u);
		double d = want_fps == G_MAXDOUBLE ? -fps : ABS(fps - want_fps);

		if (d < best_d) {
			best_d = d;
			best = iv;
		}
	}
	return best;
}

static int
ioc_s_parm(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2cuse_device *dev = fh->dev;
	struct v4l2_streamparm *p = arg;

	if (check_type(fh, p->type) < 0)
		return -EINVAL;
	/* Others stream on a shared device: the rate stays (as S_FMT). */
	if (!dev_others_busy(dev, fh))
		dev_set_interval(dev, dev_nearest_interval(dev, dev->output
						? p->parm.output.timeperframe
						: p->parm.capture.timeperframe));
	parm_fill(dev, p);
	return 0;
}

static int
ioc_enuminput(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2_input *in = arg;
	uint32_t index = in->index;

	if (index != 0)
		return -EINVAL;
	memset(in, 0, sizeof(*in));
	in->index = 0;
	g_strlcpy((char *)in->name, "Camera", sizeof(in->name));
	in->type = V4L2_INPUT_TYPE_CAMERA;
	return 0;
}

static int
ioc_g_input(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	*(int *)arg = 0;
	return 0;
}

static int
ioc_s_input(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	return *(uint32_t *)arg == 0 ? 0 : -EINVAL;
}

/* A writer node's one output. */
static int
ioc_enumoutput(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2_output *out = arg;
	uint32_t index = out->index;

	if (index != 0)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	g_strlcpy((char *)out->name, "Loopback", sizeof(out->name));
	out->type = V4L2_OUTPUT_TYPE_ANALOG;
	return 0;
}

static int
ioc_log_status(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2cuse_device *dev = fh->dev;
	struct v4l2cuse_device_stats st;

	v4l2cuse_device_get_stats(dev, &st);
	g_message("%s: %ux%u %.4s at %u/%u s, %u open handles, %s, %u consumers, "
		  "%u parked requests, %u frames produced, signal %s", dev->name,
		  dev->fmt.width, dev->fmt.height, (const char *)&dev->fmt.pixelformat,
		  dev->interval.numerator, dev->interval.denominator, st.opens,
		  st.streaming ? "streaming" : "idle", st.consumers, st.parked, dev->frames,
		  st.signal_lost ? "lost" : "ok");
	if (dev->shim) {
		struct v4l2cuse_shim_stats sh;

		v4l2cuse_shim_get_stats(dev->shim, &sh);
		g_message("%s: shim: %u connections (%u attached), %u tokens, %u mappings, "
			  "%u refused", dev->name, sh.connections, sh.authenticated, sh.tokens,
			  sh.mappings, sh.refused);
	}
	return 0;
}

/* --- controls --- */

static int
ioc_queryctrl(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	return dev_queryctrl(fh->dev, arg);
}

static int
ioc_query_ext_ctrl(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	return dev_query_ext_ctrl(fh->dev, arg);
}

static int
ioc_querymenu(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	return dev_querymenu(fh->dev, arg);
}

static int
ioc_g_ctrl(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	return dev_g_ctrl(fh, arg);
}

static int
ioc_s_ctrl(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	return dev_s_ctrl(fh, arg);
}

/* --- events --- */

static int
ioc_subscribe_event(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2_event_subscription *sub = arg;
	int r;

	switch (sub->type) {
	case V4L2_EVENT_CTRL:
		if (!fh->dev->n_ctrls)
			return -EINVAL;
		break;
	case V4L2_EVENT_EOS:
	case V4L2_EVENT_SOURCE_CHANGE:
		/* A source changes under a capture node; a writer node has none. */
		if (sub->id != 0 || fh->dev->output)
			return -EINVAL;
		break;
	case V4L2CUSE_EVENT_CLIENT_USAGE:
	case V4L2CUSE_EVENT_CLIENT_USAGE_OLD:
		/* v4l2loopback's readers count, for writers (v4l2-relayd): a writer node's. */
		if (sub->id != 0 || !fh->dev->output)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	for (unsigned int i = 0; i < fh->subs->len; i++) {
		struct v4l2_event_subscription *s =
			&g_array_index(fh->subs, struct v4l2_event_subscription, i);

		if (s->type == sub->type && s->id == sub->id) {
			s->flags = sub->flags;	/* already subscribed */
			return 0;
		}
	}
	if (fh->subs->len >= 256)
		return -ENOMEM;
	if (sub->type == V4L2_EVENT_CTRL) {
		r = dev_ctrl_subscribe(fh, sub);
		if (r < 0)
			return r;
	}
	g_array_append_val(fh->subs, *sub);
	if (v4l2cuse_event_is_client_usage(sub->type) &&
	    (sub->flags & V4L2_EVENT_SUB_FL_SEND_INITIAL))
		dev_client_usage_event(fh, sub->type);	/* the count now */
	return 0;
}

static int
ioc_unsubscribe_event(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2_event_subscription *sub = arg;

	for (unsigned int i = fh->subs->len; i-- > 0;) {
		struct v4l2_event_subscription *s =
			&g_array_index(fh->subs, struct v4l2_event_subscription, i);

		if (sub->type == V4L2_EVENT_ALL ||
		    (s->type == sub->type && s->id == sub->id))
			g_array_remove_index(fh->subs, i);
	}
	/* Drop pending events no longer subscribed to. */
	for (GList *l = fh->events.head, *next; l; l = next) {
		struct v4l2_event *e = l->data;
		bool keep = false;

		next = l->next;
		for (unsigned int i = 0; i < fh->subs->len; i++) {
			struct v4l2_event_subscription *s =
				&g_array_index(fh->subs, struct v4l2_event_subscription, i);

			keep |= s->type == e->type && s->id == e->id;
		}
		if (!keep) {
			g_free(e);
			g_queue_delete_link(&fh->events, l);
		}
	}
	return 0;
}

static int
ioc_dqevent(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2_event *e = g_queue_pop_head(&fh->events);

	/*
	 * A blocking DQEVENT in the kernel sleeps; nobody we serve does that
	 * (clients poll for POLLPRI first), so an empty queue is -ENOENT as
	 * for O_NONBLOCK.
	 */
	if (!e)
		return -ENOENT;
	*(struct v4l2_event *)arg = *e;
	((struct v4l2_event *)arg)->pending = g_queue_get_length(&fh->events);
	g_free(e);
	return 0;
}

/* --- streaming I/O (shim-attached handles) --- */

static int
ioc_reqbufs(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	return vb_queue_reqbufs(fh->dq->q, fh, arg);
}

static int
ioc_create_bufs(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2_create_buffers *cb = arg;

	if (check_type(fh, cb->format.type) < 0)
		return -EINVAL;
	return vb_queue_create_bufs(fh->dq->q, fh, cb);
}

static int
ioc_querybuf(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	return vb_queue_querybuf(fh->dq->q, arg);
}

static int
ioc_prepare_buf(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	return vb_queue_prepare_buf(fh->dq->q, fh, arg);
}

static int
ioc_qbuf(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	return vb_queue_qbuf(fh->dq->q, fh, arg);
}

static int
ioc_dqbuf(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	dev_dqbuf(fh, req, arg);
	return IOC_REPLIED;
}

/*
 * v4l2loopback before 0.13 took STREAMON(OUTPUT) with no buffers as the
 * start of write() I/O, and OBS 29 (Debian 12's) issues one before its
 * first write() and gives up its virtual camera when it fails. On a writer
 * node with compat=1, STREAMON and STREAMOFF of the output type while the
 * queue has no buffers are that: STREAMON makes the handle the writer, as
 * its first write() would (EBUSY while another writes), STREAMOFF does
 * nothing. With buffers they are vb2's. Other nodes answer as vb2 does
 * (EINVAL: no buffers), as v4l2-compliance wants.
 */
static bool
ioc_lb_write_io(struct v4l2cuse_fh *fh, unsigned int cmd, const uint32_t *type)
{
	return (cmd == VIDIOC_STREAMON || cmd == VIDIOC_STREAMOFF) && dev_loopback_compat(fh->dev) &&
	       (!type || *type == V4L2_BUF_TYPE_VIDEO_OUTPUT) && !vb_queue_is_busy(fh->dq->q);
}

static int
ioc_streamon(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	if (ioc_lb_write_io(fh, VIDIOC_STREAMON, arg))
		return dev_writer_join(fh);
	return vb_queue_streamon(fh->dq->q, fh, *(uint32_t *)arg);
}

static int
ioc_streamoff(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	if (ioc_lb_write_io(fh, VIDIOC_STREAMOFF, arg))
		return 0;
	return vb_queue_streamoff(fh->dq->q, fh, *(uint32_t *)arg);
}

/* --- the preload shim's attach handshake (daemon/shim.c, docs/shim.md) --- */

static int
ioc_shim_attach(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	return v4l2cuse_shim_attach(fh->dev->shim, fh, arg);
}

/* --- which daemon serves this node (include/v4l2cuse/ctl-protocol.h) --- */

static int
ioc_v4l2cuse_info(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2cuse_info *info = arg;

	memset(info, 0, sizeof(*info));
	info->magic = V4L2CUSE_INFO_MAGIC;
	info->version = V4L2CUSE_INFO_VERSION;
	info->nonce = v4l2cuse_instance_nonce();
	info->pid = (uint32_t)getpid();
	struct v4l2cuse_loopback_stats st;

	info->flags = fh->dev->usb_face ? V4L2CUSE_INFO_USB_FACE : 0;
	if (v4l2cuse_device_loopback_stats(fh->dev, &st) == 0 && st.feed)
		info->flags |= V4L2CUSE_INFO_FEED;
	g_strlcpy(info->name, fh->dev->name, sizeof(info->name));
	g_strlcpy(info->id, fh->dev->id ? fh->dev->id : fh->dev->name, sizeof(info->id));
	return 0;
}

/* A feed's writer node: what v4l2cuse-pipewire captures for it. */
static int
ioc_v4l2cuse_feed(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req, void *arg)
{
	struct v4l2cuse_feed *feed = arg;
	struct v4l2cuse_loopback_stats st;

	if (v4l2cuse_device_loopback_stats(fh->dev, &st) < 0 || !st.feed)
		return -ENOTTY;
	memset(feed, 0, sizeof(*feed));
	memcpy(feed->target, st.feed_target, sizeof(feed->target));
	feed->target[sizeof(feed->target) - 1] = '\0';
	feed->width = st.want.width;
	feed->height = st.want.height;
	feed->pixelformat = st.want.pixelformat;
	/* Frames per second: the interval upside down. */
	feed->fps_num = st.want_interval.denominator;
	feed->fps_den = st.want_interval.numerator;
	return 0;
}

static const struct ioc_info ioc_table[] = {
#define IOC(c, f, fn) { c, f, fn, #c }
	IOC(VIDIOC_QUERYCAP, 0, ioc_querycap),
	IOC(VIDIOC_G_PRIORITY, 0, ioc_g_priority),
	IOC(VIDIOC_S_PRIORITY, IOC_PRIO, ioc_s_priority),
	IOC(VIDIOC_ENUM_FMT, 0, ioc_enum_fmt),
	IOC(VIDIOC_G_FMT, 0, ioc_g_fmt),
	IOC(VIDIOC_S_FMT, IOC_PRIO, ioc_s_fmt),
	IOC(VIDIOC_TRY_FMT, 0, ioc_try_fmt),
	IOC(VIDIOC_ENUM_FRAMESIZES, 0, ioc_enum_framesizes),
	IOC(VIDIOC_ENUM_FRAMEINTERVALS, 0, ioc_enum_frameintervals),
	IOC(VIDIOC_G_PARM, 0, ioc_g_parm),
	IOC(VIDIOC_S_PARM, IOC_PRIO, ioc_s_parm),
	IOC(VIDIOC_ENUMINPUT, IOC_CAPTURE, ioc_enuminput),
	IOC(VIDIOC_G_INPUT, IOC_CAPTURE, ioc_g_input),
	IOC(VIDIOC_S_INPUT, IOC_PRIO | IOC_CAPTURE, ioc_s_input),
	IOC(VIDIOC_ENUMOUTPUT, IOC_OUTPUT, ioc_enumoutput),
	IOC(VIDIOC_G_OUTPUT, IOC_OUTPUT, ioc_g_input),
	IOC(VIDIOC_S_OUTPUT, IOC_PRIO | IOC_OUTPUT, ioc_s_input),
	IOC(VIDIOC_LOG_STATUS, 0, ioc_log_status),
	IOC(VIDIOC_QUERYCTRL, 0, ioc_queryctrl),
	IOC(VIDIOC_QUERY_EXT_CTRL, 0, ioc_query_ext_ctrl),
	IOC(VIDIOC_QUERYMENU, 0, ioc_querymenu),
	IOC(VIDIOC_G_CTRL, 0, ioc_g_ctrl),
	IOC(VIDIOC_S_CTRL, IOC_PRIO, ioc_s_ctrl),
	IOC(VIDIOC_SUBSCRIBE_EVENT, 0, ioc_subscribe_event),
	IOC(VIDIOC_UNSUBSCRIBE_EVENT, 0, ioc_unsubscribe_event),
	IOC(VIDIOC_DQEVENT, 0, ioc_dqevent),
	IOC(VIDIOC_REQBUFS, IOC_PRIO | IOC_STREAM, ioc_reqbufs),
	IOC(VIDIOC_CREATE_BUFS, IOC_PRIO | IOC_STREAM, ioc_create_bufs),
	IOC(VIDIOC_QUERYBUF, IOC_STREAM, ioc_querybuf),
	IOC(VIDIOC_PREPARE_BUF, IOC_STREAM, ioc_prepare_buf),
	IOC(VIDIOC_QBUF, IOC_STREAM, ioc_qbuf),
	IOC(VIDIOC_DQBUF, IOC_STREAM, ioc_dqbuf),
	IOC(VIDIOC_STREAMON, IOC_PRIO | IOC_STREAM, ioc_streamon),
	IOC(VIDIOC_STREAMOFF, IOC_PRIO | IOC_STREAM, ioc_streamoff),
	IOC(VIDIOC_V4L2CUSE_ATTACH, IOC_SHIM, ioc_shim_attach),
	IOC(VIDIOC_V4L2CUSE_INFO, 0, ioc_v4l2cuse_info),
	IOC(VIDIOC_V4L2CUSE_FEED, IOC_OUTPUT, ioc_v4l2cuse_feed),
#undef IOC
};

static const struct ioc_info *
ioc_lookup(unsigned int cmd)
{
	for (size_t i = 0; i < ARRAY_SIZE(ioc_table); i++)
		if (ioc_table[i].cmd == cmd)
			return &ioc_table[i];
	return NULL;
}

/* Once per process: a plain client tried streaming I/O. */
static void
ioc_hint_shim(struct v4l2cuse_fh *fh, const char *what)
{
	static GHashTable *seen;
	g_autofree char *path = NULL, *comm = NULL;

	if (!seen)
		seen = g_hash_table_new(NULL, NULL);
	if (g_hash_table_contains(seen, GINT_TO_POINTER(fh->pid)))
		return;
	if (g_hash_table_size(seen) > 4096)
		g_hash_table_remove_all(seen);
	g_hash_table_add(seen, GINT_TO_POINTER(fh->pid));
	path = g_strdup_printf("/proc/%d/comm", (int)fh->pid);
	if (g_file_get_contents(path, &comm, NULL, NULL))
		g_strchomp(comm);
	g_message("%s: pid %d (%s) asked for %s, which needs the preload shim; "
		  "run it as: v4l2cuse-run %s ...", fh->dev->name, (int)fh->pid,
		  comm ? comm : "?", what, comm ? comm : "<app>");
}

/* ---------------------------------------------------------------------- */
/* G/S/TRY_EXT_CTRLS: three rounds (struct, then struct + array). */

static void
ioc_ext_ctrls(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req,
	      const struct v4l2cuse_ioctl_args *a)
{
	struct v4l2_ext_controls cs;
	size_t array_size;
	g_autofree struct v4l2_ext_control *ctrls = NULL;
	int r;

	if (a->in_size < sizeof(cs) || a->out_size < sizeof(cs)) {
		struct iovec iov = { (void *)a->arg, sizeof(cs) };

		v4l2cuse_req_retry(req, &iov, 1, &iov, 1);
		return;
	}
	memcpy(&cs, a->in, sizeof(cs));
	if (cs.count > V4L2_CID_MAX_CTRLS) {
		v4l2cuse_req_reply_err(req, -EINVAL);
		return;
	}
	array_size = (size_t)cs.count * sizeof(struct v4l2_ext_control);
	if (cs.count && (a->in_size < sizeof(cs) + array_size ||
			 a->out_size < sizeof(cs) + array_size)) {
		struct iovec iov[2] = {
			{ (void *)a->arg, sizeof(cs) },
			{ cs.controls, array_size },
		};

		if (a->in_size > sizeof(cs)) {
			/* The caller changed count between rounds. */
			v4l2cuse_req_reply_err(req, -EINVAL);
			return;
		}
		if (!cs.controls) {
			v4l2cuse_req_reply_err(req, -EFAULT);
			return;
		}
		v4l2cuse_req_retry(req, iov, 2, iov, 2);
		return;
	}
	if (a->cmd != VIDIOC_G_EXT_CTRLS && (r = dev_prio_check(fh)) < 0) {
		v4l2cuse_req_reply_err(req, r);
		return;
	}
	ctrls = g_malloc0(MAX(array_size, 1));
	memcpy(ctrls, (const uint8_t *)a->in + sizeof(cs), array_size);
	r = dev_ext_ctrls(fh, a->cmd, &cs, ctrls);
	/* Data goes out even on error: error_idx must reach the caller. */
	{
		g_autofree uint8_t *out = g_malloc(sizeof(cs) + array_size);

		memcpy(out, &cs, sizeof(cs));
		memcpy(out + sizeof(cs), ctrls, array_size);
		v4l2cuse_req_reply_ioctl(req, r, out, sizeof(cs) + array_size);
	}
}

/* ---------------------------------------------------------------------- */

static void
ioc_dispatch(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req,
	     const struct v4l2cuse_ioctl_args *a)
{
	const struct ioc_info *info;
	size_t size = _IOC_SIZE(a->cmd);
	size_t need_in = (_IOC_DIR(a->cmd) & _IOC_WRITE) ? size : 0;
	size_t need_out = (_IOC_DIR(a->cmd) & _IOC_READ) ? size : 0;
	union ioc_arg u;
	int r;

	if (a->flags & V4L2CUSE_IOCTL_COMPAT) {
		static bool warned;

		if (!warned)
			g_message("%s: 32-bit client (pid %d): 32-bit apps are not supported yet",
				  fh->dev->name, (int)fh->pid);
		warned = true;
		v4l2cuse_req_reply_err(req, -ENOTTY);
		return;
	}

	/* Decide in round one, before asking for any memory. */
	if (a->cmd == VIDIOC_G_EXT_CTRLS || a->cmd == VIDIOC_S_EXT_CTRLS ||
	    a->cmd == VIDIOC_TRY_EXT_CTRLS) {
		if (!fh->dev->n_ctrls) {
			v4l2cuse_req_reply_err(req, -ENOTTY);
			return;
		}
		if (!a->arg) {
			v4l2cuse_req_reply_err(req, -EFAULT);
			return;
		}
		ioc_ext_ctrls(fh, req, a);
		return;
	}
	info = ioc_lookup(a->cmd);
	if (!info || size > sizeof(u)) {
		v4l2cuse_req_reply_err(req, -ENOTTY);
		return;
	}
	if (((info->flags & IOC_CAPTURE) && fh->dev->output) ||
	    ((info->flags & IOC_OUTPUT) && !fh->dev->output)) {
		v4l2cuse_req_reply_err(req, -ENOTTY);
		return;
	}
	if ((info->flags & IOC_SHIM) && !fh->dev->shim) {
		v4l2cuse_req_reply_err(req, -ENOTTY);	/* no socket: stay plain */
		return;
	}
	if ((info->flags & IOC_STREAM) && !fh->streaming_capable &&
	    !ioc_lb_write_io(fh, a->cmd, NULL)) {
		if (a->cmd == VIDIOC_REQBUFS || a->cmd == VIDIOC_STREAMON)
			ioc_hint_shim(fh, info->name);
		v4l2cuse_req_reply_err(req, -ENOTTY);
		return;
	}
	if (size && (a->in_size < need_in || a->out_size < need_out)) {
		struct iovec iov = { (void *)a->arg, size };

		if (!a->arg) {
			v4l2cuse_req_reply_err(req, -EFAULT);
			return;
		}
		v4l2cuse_req_retry(req, &iov, need_in ? 1 : 0, &iov, need_out ? 1 : 0);
		return;
	}

	if ((info->flags & IOC_PRIO) && (r = dev_prio_check(fh)) < 0) {
		v4l2cuse_req_reply_err(req, r);
		return;
	}
	memset(&u, 0, sizeof(u));
	if (need_in)
		memcpy(&u, a->in, need_in);
	r = info->fn(fh, req, &u);
	if (r == IOC_REPLIED)
		return;
	if (r < 0)
		v4l2cuse_req_reply_err(req, r);
	else
		v4l2cuse_req_reply_ioctl(req, 0, &u, need_out);
}

void
v4l2cuse_fh_ioctl(struct v4l2cuse_fh *fh, struct v4l2cuse_req *req,
		  const struct v4l2cuse_ioctl_args *a)
{
	dev_request_begin(fh, req);
	ioc_dispatch(fh, req, a);
	dev_request_end(fh);
}
