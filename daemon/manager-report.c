/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the manager says of its devices: the table of `v4l2cuse-ctl list`,
 * the key file of `v4l2cuse-ctl stats` and the one line of STATUS=.
 */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <unistd.h>
#include <glib.h>

#include "videobuf.h"
#include "device.h"
#include "loopback.h"
#include "shim.h"
#include "manager-private.h"
#include "usbface.h"


static void
format_fmt(const struct v4l2cuse_device_stats *st, char *buf, size_t size)
{
	const struct v4l2_fract *iv = &st->interval;

	if (iv->numerator == 1 || iv->numerator == 0)
		snprintf(buf, size, "%ux%u/%.4s@%u", st->fmt.width, st->fmt.height,
			 (const char *)&st->fmt.pixelformat, iv->denominator);
	else
		snprintf(buf, size, "%ux%u/%.4s@%u/%u", st->fmt.width, st->fmt.height,
			 (const char *)&st->fmt.pixelformat, iv->denominator, iv->numerator);
}

/* @md's figures; a device not running has the limit it will get. */
static void
mdev_get_stats(const struct mdev *md, struct v4l2cuse_device_stats *st)
{
	*st = (struct v4l2cuse_device_stats){
		.buffer_memory_limit = md->conf->buffer_memory_limit,
	};
	if (md->dev)
		v4l2cuse_device_get_stats(md->dev, st);
}

/* The SIGNAL of list and stats: "lost" while the placeholder is shown. */
static const char *
mdev_signal(const struct mdev *md, const struct v4l2cuse_device_stats *st)
{
	if (!md->dev)
		return "-";
	return st->signal_lost ? "lost" : "ok";
}

/* "used/limit" with K/M/G units, the limit in the largest exact unit ("-": none). */
static void
format_mem(uint64_t used, uint64_t limit, char *buf, size_t size)
{
	static const char units[] = "KMGT";
	unsigned int u = 0;

	if (!limit) {
		snprintf(buf, size, "%" G_GUINT64_FORMAT "K/-", (used + 1023) >> 10);
		return;
	}
	while (u + 1 < sizeof(units) - 1 && limit % ((uint64_t)1 << (10 * (u + 2))) == 0)
		u++;
	if (limit % 1024)
		snprintf(buf, size, "%" G_GUINT64_FORMAT "K/%" G_GUINT64_FORMAT,
			 (used + 1023) >> 10, limit);
	else
		snprintf(buf, size, "%" G_GUINT64_FORMAT "K/%" G_GUINT64_FORMAT "%c",
			 (used + 1023) >> 10, limit >> (10 * (u + 1)), units[u]);
}

/* "    input shared with: ID ID" under a device whose camera or file others use too. */
static void
mgr_list_sharing(struct v4l2cuse_manager *m, struct mdev *md, const char *input, GString *out)
{
	g_string_append(out, "    input shared with:");
	for (unsigned int i = 0; i < m->devs->len; i++) {
		struct mdev *other = m->devs->pdata[i];
		struct v4l2cuse_device_stats st = { 0 };

		if (other == md || !other->dev)
			continue;
		v4l2cuse_device_get_stats(other->dev, &st);
		if (g_strcmp0(st.input, input) == 0)
			g_string_append_printf(out, " %s", other->conf->id);
	}
	g_string_append_c(out, '\n');
}

/* "    writer /dev/videoN: ..." under a loopback device. */
static void
mgr_list_writer(struct mdev *md, GString *out)
{
	struct v4l2cuse_loopback_stats lb;

	g_string_append_printf(out, "    writer /dev/%s: ", md->writer_node);
	if (!md->dev || v4l2cuse_device_loopback_stats(md->dev, &lb) < 0) {
		g_string_append(out, "-\n");
		return;
	}
	if (lb.pid)
		g_string_append_printf(out, "%s, pid %d (%s), %ux%u/%.4s, ",
				       lb.connected ? "connected" : "gone", (int)lb.pid, lb.comm,
				       lb.fmt.width, lb.fmt.height, (const char *)&lb.fmt.pixelformat);
	else
		g_string_append(out, "no writer yet, ");
	g_string_append_printf(out, "%" G_GUINT64_FORMAT " written, %" G_GUINT64_FORMAT
			       " refused, %" G_GUINT64_FORMAT " dropped\n", lb.written, lb.refused,
			       lb.dropped);
}

void
v4l2cuse_manager_list(struct v4l2cuse_manager *m, GString *out)
{
	gint64 now = g_get_monotonic_time();

	g_string_append_printf(out, "%-12s %-8s %-11s %-6s %5s %-9s %9s %10s %8s %7s %-22s "
			       "%-13s %s\n", "ID", "NODE", "STATE", "SIGNAL", "OPENS", "STREAMING",
			       "CONSUMERS", "DELIVERED", "DROPPED", "ERRORS", "FORMAT", "BUFMEM",
			       "SOURCE");
	for (unsigned int i = 0; i < m->devs->len; i++) {
		struct mdev *md = m->devs->pdata[i];
		struct v4l2cuse_device_stats st;
		char fmt[40] = "-", mem[48], consumers[16] = "-";

		mdev_get_stats(md, &st);
		if (md->dev) {
			format_fmt(&st, fmt, sizeof(fmt));
			/* "N" on a shared device, "N/1" on an exclusive one. */
			snprintf(consumers, sizeof(consumers), st.shared ? "%u" : "%u/1",
				 st.consumers);
		}
		format_mem(st.buffer_memory, st.buffer_memory_limit, mem, sizeof(mem));
		g_string_append_printf(out, "%-12s %-8s %-11s %-6s %5u %-9s %9s %10" G_GUINT64_FORMAT
				       " %8" G_GUINT64_FORMAT " %7" G_GUINT64_FORMAT " %-22s %-13s %s\n",
				       md->conf->id, md->node, mdev_state_names[md->state],
				       mdev_signal(md, &st), st.opens,
				       st.streaming ? "yes" : "no", consumers, st.delivered,
				       st.dropped, st.errors, fmt, mem,
				       md->dev ? v4l2cuse_device_source_spec(md->dev)
					       : md->conf->source);
		if (st.input && st.input_users > 1)
			mgr_list_sharing(m, md, st.input, out);
		if (md->writer_node)
			mgr_list_writer(md, out);
		/* "    usb: attached" (usb=true: daemon/usbface.h). */
		if (md->usb)
			g_string_append_printf(out, "    usb: %s\n", v4l2cuse_usbface_state(md->usb));
		if (md->error && md->state != MDEV_SERVING) {
			g_string_append_printf(out, "    error: %s", md->error);
			if (md->state == MDEV_FAILED)
				g_string_append_printf(out, " (retry %u in %d s)", md->failures + 1,
						       (int)MAX(0, (md->retry_at - now +
								    G_USEC_PER_SEC - 1) /
								   G_USEC_PER_SEC));
			g_string_append_c(out, '\n');
		}
	}
}

/*
 * "KEY VALUE" lines in groups, like a key file: "[daemon]", then one
 * "[device ID]" per device in list order. Byte counts end in "-bytes".
 * Readers must skip keys and groups they do not know: more will come.
 */
void
v4l2cuse_manager_stats(struct v4l2cuse_manager *m, GString *out)
{
	struct vb_budget_stats mem;

	vb_budget_get_stats(m->budget, &mem);
	g_string_append_printf(out, "[daemon]\npid %d\ndevices %u\n", (int)getpid(), m->devs->len);
#if HAVE_MALLINFO2
	{
		/* glibc's allocator over all arenas: what the daemon's live
		 * allocations hold (chunks in use, plus the large ones malloc
		 * maps on their own), and what malloc keeps free for reuse.
		 * Not meaningful under ASan, whose allocator is not glibc's. */
		struct mallinfo2 mi = mallinfo2();

		g_string_append_printf(out, "heap-in-use-bytes %zu\nheap-free-bytes %zu\n",
				       mi.uordblks + mi.hblkhd, mi.fordblks);
	}
#endif
	g_string_append_printf(out, "buffer-memory-bytes %" G_GUINT64_FORMAT
			       "\nbuffer-memory-limit-bytes %" G_GUINT64_FORMAT "\n",
			       mem.used, mem.limit);
	for (unsigned int i = 0; i < m->devs->len; i++) {
		struct mdev *md = m->devs->pdata[i];
		struct v4l2cuse_device_stats st;
		struct v4l2cuse_shim_stats sh = { 0 };

		mdev_get_stats(md, &st);
		if (md->shim)
			v4l2cuse_shim_get_stats(md->shim, &sh);
		g_string_append_printf(out, "[device %s]\nnode %s\nstate %s\nsignal %s\nopens %u\n"
				       "consumers %u\nstreaming %s\ndelivered %" G_GUINT64_FORMAT
				       "\ndropped %" G_GUINT64_FORMAT "\nerrors %" G_GUINT64_FORMAT
				       "\nparked %u\ninterrupted %" G_GUINT64_FORMAT
				       "\nbuffer-memory-bytes %" G_GUINT64_FORMAT
				       "\nbuffer-memory-limit-bytes %" G_GUINT64_FORMAT
				       "\nbuffer-memory-refused %" G_GUINT64_FORMAT
				       "\nshim-connections %u\nshim-attached %u\nshim-tokens %u"
				       "\nshim-mappings %u\nshim-refused %u\nproduced %" G_GUINT64_FORMAT
				       "\nticks-lost %" G_GUINT64_FORMAT
				       "\nfast-frames %" G_GUINT64_FORMAT "\nfast-wakeups %" G_GUINT64_FORMAT
				       "\nfast-handles %u"
				       "\ncuse-requests %" G_GUINT64_FORMAT "\n",
				       md->conf->id, md->node, mdev_state_names[md->state],
				       mdev_signal(md, &st), st.opens, st.consumers,
				       st.streaming ? "yes" : "no", st.delivered, st.dropped, st.errors,
				       st.parked, st.interrupted, st.buffer_memory, st.buffer_memory_limit,
				       st.buffer_memory_refused, sh.connections, sh.authenticated,
				       sh.tokens, sh.mappings, sh.refused, st.produced, st.ticks_lost,
				       st.fast_frames, st.fast_wakeups, st.fast_handles, st.requests);
		/* A loopback's writer node: what its writers cost. */
		if (md->wdev) {
			struct v4l2cuse_device_stats ws;

			v4l2cuse_device_get_stats(md->wdev, &ws);
			g_string_append_printf(out, "writer-node %s\nwriter-opens %u\n"
					       "writer-fast-frames %" G_GUINT64_FORMAT
					       "\nwriter-cuse-requests %" G_GUINT64_FORMAT "\n",
					       md->writer_node, ws.opens, ws.fast_frames, ws.requests);
		}
	}
}

char *
v4l2cuse_manager_status(struct v4l2cuse_manager *m)
{
	GString *s = g_string_new(NULL);
	unsigned int serving = 0, streaming = 0, opens = 0, failed = 0;
	struct vb_budget_stats mem;

	for (unsigned int i = 0; i < m->devs->len; i++) {
		struct mdev *md = m->devs->pdata[i];
		struct v4l2cuse_device_stats st;

		mdev_get_stats(md, &st);
		serving += md->state == MDEV_SERVING;
		streaming += st.streaming;
		opens += st.opens;
		failed += md->state == MDEV_FAILED || md->state == MDEV_GAVE_UP;
	}
	vb_budget_get_stats(m->budget, &mem);
	g_string_append_printf(s, "%u/%u devices serving, %u streaming, %u open, buffers %"
			       G_GUINT64_FORMAT " KiB", serving, m->devs->len, streaming, opens,
			       (mem.used + 1023) >> 10);
	for (unsigned int i = 0; i < m->devs->len && failed; i++) {
		struct mdev *md = m->devs->pdata[i];

		if (md->state == MDEV_FAILED || md->state == MDEV_GAVE_UP)
			g_string_append_printf(s, "; %s %s: %s", md->node,
					       md->state == MDEV_FAILED ? "retrying" : "failed",
					       md->error ? md->error : "?");
	}
	return g_string_free(s, FALSE);
}
