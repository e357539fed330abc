/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Buffer memory budgets (videobuf.h): a limit and a byte count behind a
 * mutex, optionally chained to a parent. A charge must fit every budget of
 * the chain and is taken from all of them or none, so a device budget
 * chained to the daemon's global one bounds both the device and the sum of
 * all devices. A queue charges a buffer's page-aligned memfd size before
 * it creates the memfd and credits it when it frees it.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>

#include <glib.h>

#include "videobuf.h"

struct vb_budget {
	gint refs;
	pthread_mutex_t lock;
	char *name;
	struct vb_budget *parent;	/* owned reference, may be NULL */
	uint64_t limit;			/* 0: unlimited */
	uint64_t used;
	uint64_t peak;
	uint64_t refused;
};

struct vb_budget *
vb_budget_new(const char *name, uint64_t limit, struct vb_budget *parent)
{
	struct vb_budget *bg = g_new0(struct vb_budget, 1);

	g_atomic_int_set(&bg->refs, 1);
	pthread_mutex_init(&bg->lock, NULL);
	bg->name = g_strdup(name ? name : "budget");
	bg->limit = limit;
	bg->parent = vb_budget_ref(parent);
	return bg;
}

struct vb_budget *
vb_budget_ref(struct vb_budget *bg)
{
	if (bg)
		g_atomic_int_inc(&bg->refs);
	return bg;
}

void
vb_budget_unref(struct vb_budget *bg)
{
	if (!bg || !g_atomic_int_dec_and_test(&bg->refs))
		return;
	if (bg->used)
		g_debug("bug: %s: freed with %" G_GUINT64_FORMAT " bytes charged", bg->name,
			bg->used);
	vb_budget_unref(bg->parent);
	pthread_mutex_destroy(&bg->lock);
	g_free(bg->name);
	g_free(bg);
}

static void
budget_credit_one(struct vb_budget *bg, uint64_t bytes)
{
	pthread_mutex_lock(&bg->lock);
	if (bytes > bg->used) {
		g_debug("bug: %s: credit of %" G_GUINT64_FORMAT " bytes, %" G_GUINT64_FORMAT
			" charged", bg->name, bytes, bg->used);
		bytes = bg->used;
	}
	bg->used -= bytes;
	pthread_mutex_unlock(&bg->lock);
}

/* Charge one budget; -ENOMEM (logged with @what) if it would exceed the limit. */
static int
budget_charge_one(struct vb_budget *bg, uint64_t bytes, const char *what)
{
	int r = 0;

	pthread_mutex_lock(&bg->lock);
	if (bg->limit && (bytes > bg->limit || bg->used > bg->limit - bytes)) {
		bg->refused++;
		g_debug("%s: %" G_GUINT64_FORMAT " bytes more would exceed the %s of %"
			G_GUINT64_FORMAT " bytes (%" G_GUINT64_FORMAT " in use)",
			what ? what : bg->name, bytes, bg->name, bg->limit, bg->used);
		r = -ENOMEM;
	} else {
		bg->used += bytes;
		bg->peak = MAX(bg->peak, bg->used);
	}
	pthread_mutex_unlock(&bg->lock);
	return r;
}

int
vb_budget_charge(struct vb_budget *bg, uint64_t bytes, const char *what)
{
	struct vb_budget *b, *undo;

	for (b = bg; b; b = b->parent) {
		if (budget_charge_one(b, bytes, what) == 0)
			continue;
		for (undo = bg; undo != b; undo = undo->parent)
			budget_credit_one(undo, bytes);
		return -ENOMEM;
	}
	return 0;
}

void
vb_budget_credit(struct vb_budget *bg, uint64_t bytes)
{
	for (; bg; bg = bg->parent)
		budget_credit_one(bg, bytes);
}

void
vb_budget_set_limit(struct vb_budget *bg, uint64_t limit)
{
	pthread_mutex_lock(&bg->lock);
	bg->limit = limit;	/* memory already charged stays until freed */
	pthread_mutex_unlock(&bg->lock);
}

void
vb_budget_get_stats(struct vb_budget *bg, struct vb_budget_stats *ret)
{
	pthread_mutex_lock(&bg->lock);
	*ret = (struct vb_budget_stats){
		.limit = bg->limit,
		.used = bg->used,
		.peak = bg->peak,
		.refused = bg->refused,
	};
	pthread_mutex_unlock(&bg->lock);
}
