/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device: its life cycle, its global state (format, the source and the
 * placeholder, statistics) and the switches made while it serves. File
 * handles are fh.c, the frame loop producer.c, controls ctrls.c and the
 * ioctl dispatcher ioctl.c.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <glib.h>

#include "v4l2cuse/source.h"
#include "util/macros.h"
#include "videobuf.h"
#include "placeholder.h"
#include "device-private.h"
#include "hub.h"
#include "loopback.h"
#include "offer.h"
#include "shim.h"
#include "sandbox.h"

#define DEV_READ_BUFFERS 3

/* ---------------------------------------------------------------------- */
/* Format */

int
dev_set_format(struct v4l2cuse_device *dev, struct v4l2_pix_format *pix, bool try_only)
{
	struct v4l2_pix_format f = {
		.width = pix->width,
		.height = pix->height,
		.pixelformat = pix->pixelformat,
	};
	int r;

	/* On an output node the writer says what its frames are (V4L2 output rules). */
	if (dev->output) {
		f.colorspace = pix->colorspace;
		f.ycbcr_enc = pix->ycbcr_enc;
		f.quantization = pix->quantization;
		f.xfer_func = pix->xfer_func;
	}
	/* The field order is the source's answer: interlaced where it passes one through. */
	f.field = pix->field;
	r = v4l2cuse_source_negotiate(dev->src, &f);
	if (r < 0)
		return r;
	if (f.field == V4L2_FIELD_ANY)
		f.field = V4L2_FIELD_NONE;
	f.priv = V4L2_PIX_FMT_PRIV_MAGIC;
	f.flags = 0;
	*pix = f;
	if (!try_only) {
		dev->fmt = f;
		dev->placeholder_unusable = false;	/* it may fit the new format */
	}
	return 0;
}

/*
 * On a shared device: does a handle other than @fh hold buffers or read?
 * Then the format and the frame rate stay as they are (S_FMT and S_PARM
 * answer with the current ones).
 */
bool
dev_others_busy(struct v4l2cuse_device *dev, struct v4l2cuse_fh *fh)
{
	if (!dev->shared)
		return false;
	for (GList *l = dev->fhs.head; l; l = l->next) {
		struct v4l2cuse_fh *other = l->data;

		if (other != fh && vb_queue_is_busy(other->dq->q))
			return true;
	}
	return false;
}

/* ---------------------------------------------------------------------- */
/* Lifecycle */

static uint32_t
dev_kernel_version(void)
{
	struct utsname u;
	unsigned int a = 0, b = 0, c = 0;

	if (uname(&u) == 0)
		sscanf(u.release, "%u.%u.%u", &a, &b, &c);
	return (MIN(a, 255u) << 16) | (MIN(b, 255u) << 8) | MIN(c, 255u);
}

static unsigned int
dev_number(const char *name)
{
	const char *p = name + strlen(name);

	while (p > name && g_ascii_isdigit(p[-1]))
		p--;
	return (unsigned int)g_ascii_strtoull(p, NULL, 10);
}

struct v4l2cuse_device *
v4l2cuse_device_new(const struct v4l2cuse_device_config *cfg, char **ret_error)
{
	struct v4l2cuse_device *dev = g_new0(struct v4l2cuse_device, 1);
	struct v4l2_pix_format pix = {
		.width = cfg->width,
		.height = cfg->height,
		.pixelformat = cfg->pixelformat,
	};
	struct v4l2_fract default_interval = { 1, 30 };
	int r;

	dev->name = g_strdup(cfg->name);
	dev->label = g_strdup(cfg->label ? cfg->label : "v4l2cuse test pattern");
	dev->id = g_strdup(cfg->id ? cfg->id : cfg->name);
	dev->source_spec = g_strdup(cfg->source ? cfg->source : "pattern");
	dev->number = dev_number(cfg->name);
	dev->kernel_version = dev_kernel_version();
	dev->timer_fd = -1;
	dev->wake_fd = -1;
	dev->wake_dead_fd = -1;
	dev->shared = cfg->shared;
	dev->output = cfg->output;
	dev->hub = cfg->hub;
	dev->changed = cfg->changed;
	dev->changed_data = cfg->changed_data;
	g_queue_init(&dev->fhs);
	g_queue_init(&dev->streams);

	r = v4l2cuse_sandbox_check_spec(cfg->source, ret_error);
	if (r == 0)
		r = v4l2cuse_hub_source_create(dev->hub, cfg->source, &dev->src, ret_error);
	if (r < 0) {
		if (!*ret_error)
			*ret_error = g_strdup_printf("source '%s': %s", cfg->source,
						     g_strerror(-r));
		goto err_free;
	}
	if (cfg->offer) {
		dev->offer = g_memdup2(cfg->offer, sizeof(*cfg->offer));
		r = v4l2cuse_offer_wrap(dev->offer, &dev->src, ret_error);
		if (r < 0)
			goto err_free;
	}
	if (cfg->placeholder && v4l2cuse_device_set_placeholder(dev, cfg->placeholder,
								ret_error) < 0)
		goto err_free;
	/* What the configuration leaves open: the source's own (a camera's current format). */
	if (!pix.pixelformat || !pix.width || !pix.height || !cfg->interval.denominator) {
		struct v4l2_pix_format def = { 0 };

		if (v4l2cuse_source_default_format(dev->src, &def, &default_interval) < 0) {
			*ret_error = g_strdup_printf("source '%s' offers no format", cfg->source);
			goto err_free;
		}
		if (!pix.pixelformat)
			pix.pixelformat = def.pixelformat;
		if (!pix.width || !pix.height) {
			pix.width = def.width;
			pix.height = def.height;
		}
	}
	r = dev_set_format(dev, &pix, false);
	if (r < 0) {
		*ret_error = g_strdup_printf("source '%s' offers no usable format", cfg->source);
		goto err_free;
	}
	if (cfg->width && (pix.width != cfg->width || pix.height != cfg->height)) {
		*ret_error = g_strdup_printf("source '%s' does not offer %ux%u", cfg->source,
					     cfg->width, cfg->height);
		goto err_free;
	}
	if (cfg->pixelformat && pix.pixelformat != cfg->pixelformat) {
		*ret_error = g_strdup_printf("source '%s' does not offer format %.4s",
					     cfg->source, (const char *)&cfg->pixelformat);
		goto err_free;
	}
	dev->interval = cfg->interval.denominator ? cfg->interval : default_interval;
	r = dev_ctrls_init(dev);
	if (r < 0) {
		*ret_error = g_strdup_printf("source '%s': bad control table", cfg->source);
		goto err_free;
	}

	char *limit_name = g_strdup_printf("%s buffer memory limit", dev->name);

	dev->budget = vb_budget_new(limit_name, cfg->buffer_memory_limit, cfg->global_budget);
	g_free(limit_name);
	/* The ops and their data are producer.c's (dev_queue_new()). */
	dev->qc = (struct vb_queue_config){
		.type = dev->output ? V4L2_BUF_TYPE_VIDEO_OUTPUT : V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.io_modes = VB_IO_MMAP | VB_IO_USERPTR | (dev->output ? 0 : VB_IO_READ),
		.min_buffers = cfg->min_buffers ? cfg->min_buffers : 2,
		.min_queued_buffers = 1,
		.read_buffers = cfg->read_buffers ? cfg->read_buffers : DEV_READ_BUFFERS,
		.allow_orphans = true,
		.name = dev->name,
		.budget = dev->budget,
	};
	if (!dev->shared) {
		dev->main = dev_queue_new(dev, NULL);
		if (!dev->main) {
			*ret_error = g_strdup("cannot create the buffer queue");
			goto err_free;
		}
	}
	/* A writer node tells its writers how many read (until its source goes). */
	if (dev->output)
		v4l2cuse_loopback_watch_readers(dev->src, dev_client_usage_changed, dev);
	return dev;

err_free:
	v4l2cuse_device_free(dev);
	return NULL;
}

void
v4l2cuse_device_free(struct v4l2cuse_device *dev)
{
	GList *l;

	if (!dev)
		return;
	v4l2cuse_device_cancel_all(dev, -ENODEV);
	while ((l = dev->fhs.head))
		v4l2cuse_fh_release(l->data);
	dev_queue_free(dev->main);
	vb_budget_unref(dev->budget);
	dev_producer_free(dev);
	dev_ctrls_free(dev);
	v4l2cuse_source_destroy(dev->src);
	v4l2cuse_source_destroy(dev->placeholder);
	g_free(dev->placeholder_spec);
	g_free(dev->wbuf);
	g_free(dev->offer);
	g_free(dev->source_spec);
	g_free(dev->id);
	g_free(dev->name);
	g_free(dev->label);
	g_free(dev);
}

int
v4l2cuse_device_loopback_stats(struct v4l2cuse_device *dev, struct v4l2cuse_loopback_stats *ret)
{
	return v4l2cuse_loopback_get_stats(v4l2cuse_offer_inner(dev->src), ret);
}

bool
dev_loopback_compat(struct v4l2cuse_device *dev)
{
	struct v4l2cuse_loopback_stats st;

	return dev->output && v4l2cuse_loopback_get_stats(dev->src, &st) == 0 && st.compat;
}

void
dev_writer_restart(struct v4l2cuse_device *dev)
{
	int r;

	dev->wlen = 0;		/* a frame half written in the old format is gone */
	dev->src->ops->stop(dev->src);
	r = dev->src->ops->start(dev->src, &dev->fmt, &dev->interval);
	if (r < 0)
		g_message("%s: the writer's new format %ux%u %.4s: %s", dev->name,
			  dev->fmt.width, dev->fmt.height, (const char *)&dev->fmt.pixelformat,
			  g_strerror(-r));
}

void
dev_changed(struct v4l2cuse_device *dev)
{
	if (dev->changed)
		dev->changed(dev->changed_data);
}

void
v4l2cuse_device_set_shim(struct v4l2cuse_device *dev, struct v4l2cuse_shim *shim)
{
	dev->shim = shim;
}

void
v4l2cuse_device_set_poll_ops(struct v4l2cuse_device *dev, const struct v4l2cuse_poll_ops *ops)
{
	dev->poll_ops = ops;
}

const char *
v4l2cuse_device_name(struct v4l2cuse_device *dev)
{
	return dev->name;
}

void
v4l2cuse_device_set_usb_face(struct v4l2cuse_device *dev, bool on)
{
	dev->usb_face = on;
}

const char *
v4l2cuse_device_label(struct v4l2cuse_device *dev)
{
	return dev->label;
}

/* ---------------------------------------------------------------------- */
/* Service: sources switched live, the placeholder, statistics */

const char *
v4l2cuse_device_id(struct v4l2cuse_device *dev)
{
	return dev->id;
}

const char *
v4l2cuse_device_source_spec(struct v4l2cuse_device *dev)
{
	return dev->source_spec;
}

const char *
v4l2cuse_device_placeholder_spec(struct v4l2cuse_device *dev)
{
	return dev->placeholder_spec;
}

void
v4l2cuse_device_get_stats(struct v4l2cuse_device *dev, struct v4l2cuse_device_stats *ret)
{
	struct vb_budget_stats mem;

	vb_budget_get_stats(dev->budget, &mem);
	*ret = (struct v4l2cuse_device_stats){
		.buffer_memory = mem.used,
		.buffer_memory_limit = mem.limit,
		.buffer_memory_refused = mem.refused,
		.opens = dev->n_fhs,
		.consumers = g_queue_get_length(&dev->streams),
		.streaming = dev_streaming(dev),
		.shared = dev->shared,
		.signal_lost = dev->signal_lost,
		.delivered = dev->delivered,
		.dropped = dev->dropped,
		.errors = dev->errors,
		.interrupted = dev->interrupted,
		.produced = dev->produced,
		.ticks_lost = dev->ticks_lost,
		.stalls = dev->stalls,
		.fast_frames = dev->fast_frames,
		.fast_wakeups = dev->fast_wakeups,
		.requests = dev->requests,
		.fmt = dev->fmt,
		.interval = dev->interval,
	};
	for (GList *l = dev->fhs.head; l; l = l->next) {
		struct v4l2cuse_fh *fh = l->data;

		ret->parked += (fh->dqbuf.req != NULL) + (fh->read.req != NULL);
		ret->fast_handles += fh->fp != NULL;
	}
	ret->input = v4l2cuse_hub_input(v4l2cuse_offer_inner(dev->src), &ret->input_users);
}

/* The new source's controls, with the old values where the ids match. */
static void
dev_ctrls_rebuild(struct v4l2cuse_device *dev, struct dev_ctrl *old, unsigned int n_old)
{
	dev_ctrls_unwatch(dev);
	dev->ctrls = NULL;
	dev->n_ctrls = 0;
	if (dev_ctrls_init(dev) < 0) {
		g_warning("bug: %s: the new source has a bad control table", dev->name);
		return;
	}
	for (unsigned int i = 0; i < dev->n_ctrls; i++) {
		struct dev_ctrl *c = &dev->ctrls[i];

		for (unsigned int j = 0; c->desc && j < n_old; j++) {
			if (old[j].id != c->id || !old[j].desc ||
			    old[j].desc->type != c->desc->type || old[j].value < c->desc->minimum ||
			    old[j].value > c->desc->maximum)
				continue;
			if (v4l2cuse_source_set_control(dev->src, c->id, old[j].value) == 0)
				c->value = old[j].value;
		}
	}
}

int
v4l2cuse_device_set_source(struct v4l2cuse_device *dev, const char *spec, char **ret_error)
{
	struct v4l2cuse_source *src = NULL, *old;
	struct v4l2_pix_format f = {
		.width = dev->fmt.width,
		.height = dev->fmt.height,
		.pixelformat = dev->fmt.pixelformat,
	};
	struct dev_ctrl *old_ctrls;
	unsigned int n_old_ctrls;
	int r;

	if (v4l2cuse_loopback_is_spec(spec) || v4l2cuse_loopback_is_spec(dev->source_spec)) {
		/* A loopback comes with its writer node: that is a new device. */
		*ret_error = g_strdup_printf("%s: a loopback source is not switched live; "
					     "remove and add the device", dev->name);
		return -EINVAL;
	}
	r = v4l2cuse_sandbox_check_spec(spec, ret_error);
	if (r == 0)
		r = v4l2cuse_hub_source_create(dev->hub, spec, &src, ret_error);
	if (r < 0)
		return r;
	if (dev->offer && (r = v4l2cuse_offer_wrap(dev->offer, &src, ret_error)) < 0) {
		v4l2cuse_source_destroy(src);
		return r;
	}
	/* Consumers keep their format: the new source must produce it as it is. */
	r = v4l2cuse_source_negotiate(src, &f);
	if (r < 0 || f.width != dev->fmt.width || f.height != dev->fmt.height ||
	    f.pixelformat != dev->fmt.pixelformat || f.bytesperline != dev->fmt.bytesperline ||
	    f.sizeimage != dev->fmt.sizeimage) {
		*ret_error = g_strdup_printf("source '%s' cannot produce the current format "
					     "%ux%u %.4s", spec, dev->fmt.width, dev->fmt.height,
					     (const char *)&dev->fmt.pixelformat);
		v4l2cuse_source_destroy(src);
		return -EINVAL;
	}
	if (dev_streaming(dev)) {
		r = src->ops->start(src, &dev->fmt, &dev->interval);
		if (r < 0) {
			*ret_error = g_strdup_printf("source '%s' failed to start: %s", spec,
						     g_strerror(-r));
			v4l2cuse_source_destroy(src);
			return r;
		}
	}

	/* Nothing can fail from here on. */
	old = dev->src;
	dev->src = src;
	if (dev_streaming(dev)) {
		/* Watch the new wake fd (or the timer) before the old fd closes. */
		dev_producer_rearm(dev);
		old->ops->stop(old);
	}
	old_ctrls = dev->ctrls;
	n_old_ctrls = dev->n_ctrls;
	dev_ctrls_rebuild(dev, old_ctrls, n_old_ctrls);
	g_free(old_ctrls);
	v4l2cuse_source_destroy(old);
	g_free(dev->source_spec);
	dev->source_spec = g_strdup(spec);
	g_message("%s: switched the source to '%s'%s", dev->name, spec,
		  dev_streaming(dev) ? " while streaming" : "");
	return 0;
}

int
v4l2cuse_device_set_placeholder(struct v4l2cuse_device *dev, const char *spec,
				char **ret_error)
{
	struct v4l2cuse_source *ph = NULL;
	int r;

	if (spec) {
		r = v4l2cuse_sandbox_check_spec(spec, ret_error);
		if (r == 0)
			r = v4l2cuse_source_create(spec, &ph, ret_error);
		if (r < 0)
			return r;
	}
	dev_placeholder_stop(dev);
	v4l2cuse_source_destroy(dev->placeholder);
	g_free(dev->placeholder_spec);
	dev->placeholder = ph;
	dev->placeholder_spec = g_strdup(spec);
	dev->placeholder_unusable = false;
	return 0;
}

int
v4l2cuse_device_set_shared(struct v4l2cuse_device *dev, bool shared, char **ret_error)
{
	GList *l;

	if (dev->shared == shared)
		return 0;
	for (l = dev->fhs.head; l; l = l->next) {
		struct v4l2cuse_fh *fh = l->data;

		if (vb_queue_is_busy(fh->dq->q)) {
			*ret_error = g_strdup_printf("%s: share=%s cannot apply while consumers "
						     "stream", dev->name, shared ? "true" : "false");
			return -EBUSY;
		}
	}
	if (shared) {
		/* Every handle gets its own queue; the one queue goes. */
		for (l = dev->fhs.head; l; l = l->next) {
			struct v4l2cuse_fh *fh = l->data;
			struct dev_queue *dq = dev_queue_new(dev, fh);

			if (!dq)
				goto err_undo;
			fh->dq = dq;
		}
		/* The shim's connections let go of the old queue while it exists. */
		if (dev->shim)
			v4l2cuse_shim_queues_changed(dev->shim);
		g_clear_pointer(&dev->main, dev_queue_free);
	} else {
		struct dev_queue *main = dev_queue_new(dev, NULL);
		GPtrArray *old;

		if (!main) {
			*ret_error = g_strdup_printf("%s: cannot create the buffer queue", dev->name);
			return -ENOMEM;
		}
		old = g_ptr_array_new_with_free_func((GDestroyNotify)dev_queue_free);
		for (l = dev->fhs.head; l; l = l->next) {
			struct v4l2cuse_fh *fh = l->data;

			g_ptr_array_add(old, fh->dq);
			fh->dq = main;
		}
		dev->main = main;
		if (dev->shim)
			v4l2cuse_shim_queues_changed(dev->shim);
		g_ptr_array_free(old, TRUE);
	}
	dev->shared = shared;
	for (l = dev->fhs.head; l; l = l->next)
		dev_fp_publish(l->data);	/* their fast paths name the new queues */
	g_message("%s: share=%s", dev->name, shared ? "true" : "false");
	return 0;

err_undo:
	for (l = dev->fhs.head; l; l = l->next) {
		struct v4l2cuse_fh *fh = l->data;

		if (fh->dq != dev->main) {
			dev_queue_free(fh->dq);
			fh->dq = dev->main;
		}
	}
	*ret_error = g_strdup_printf("%s: cannot create the buffer queues", dev->name);
	return -ENOMEM;
}

uint64_t
v4l2cuse_instance_nonce(void)
{
	static gsize once;
	static uint64_t nonce;

	if (g_once_init_enter(&once)) {
		uint64_t n = 0;
		ssize_t got = getrandom(&n, sizeof(n), 0);

		if (got != (ssize_t)sizeof(n) || n == 0)
			n = ((uint64_t)g_random_int() << 32 | g_random_int()) | 1;
		nonce = n;
		g_once_init_leave(&once, 1);
	}
	return nonce;
}
