/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loopback (see loopback.h): a writer node's frames reach capture devices.
 *
 * One struct loopback per writer node name holds the newest whole frame
 * written (its format, bytes, a generation and the time it arrived), who
 * writes, and the v4l2loopback-style knobs. Its two kinds of ends are
 * sources: the writer end (the output device's source: every format at any
 * size, the knobs as controls, consume() takes the frames) and the capture
 * ends (a capture device's source: the configured modes; produce() converts
 * the newest frame, or reports no signal).
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

static const char *const lb_keys[] = {
	"sizes", "formats", "fps", "keep_format", "sustain_framerate", "timeout", "compat",
	"min_width", "max_width", "min_height", "max_height", "writer", NULL,
};

static const struct v4l2cuse_control lb_controls[] = {
	{ .id = LB_CID_KEEP_FORMAT, .type = V4L2_CTRL_TYPE_BOOLEAN, .name = "keep_format",
	  .minimum = 0, .maximum = 1, .step = 1 },
	{ .id = LB_CID_SUSTAIN_FRAMERATE, .type = V4L2_CTRL_TYPE_BOOLEAN,
	  .name = "sustain_framerate", .minimum = 0, .maximum = 1, .step = 1, .default_value = 1 },
	{ .id = LB_CID_TIMEOUT, .type = V4L2_CTRL_TYPE_INTEGER, .name = "timeout",
	  .minimum = 0, .maximum = LB_TIMEOUT_MAX_MS, .step = 1 },
};

/* ---------------------------------------------------------------------- */
/* The registry */

struct v4l2cuse_loopbacks *
v4l2cuse_loopbacks_new(void)
{
	struct v4l2cuse_loopbacks *reg = g_new0(struct v4l2cuse_loopbacks, 1);

	reg->by_name = g_hash_table_new(g_str_hash, g_str_equal);
	return reg;
}

void
v4l2cuse_loopbacks_free(struct v4l2cuse_loopbacks *reg)
{
	if (!reg)
		return;
	if (g_hash_table_size(reg->by_name))
		g_warning("bug: %u loopbacks still in use", g_hash_table_size(reg->by_name));
	g_hash_table_destroy(reg->by_name);
	g_free(reg);
}

static struct loopback *
lb_get(struct v4l2cuse_loopbacks *reg, const char *name)
{
	struct loopback *lb = reg && name ? g_hash_table_lookup(reg->by_name, name) : NULL;

	if (lb) {
		lb->refs++;
		return lb;
	}
	lb = g_new0(struct loopback, 1);
	lb->refs = 1;
	lb->name = g_strdup(name ? name : "");
	lb->knobs.sustain_framerate = true;
	lb->knobs.min_width = 2;
	lb->knobs.max_width = V4L2CUSE_MAX_WIDTH & ~1u;
	lb->knobs.min_height = 2;
	lb->knobs.max_height = V4L2CUSE_MAX_HEIGHT & ~1u;
	if (reg && name) {
		lb->reg = reg;
		g_hash_table_insert(reg->by_name, lb->name, lb);
	}
	return lb;
}

static void
lb_put(struct loopback *lb)
{
	if (--lb->refs)
		return;
	if (lb->reg)
		g_hash_table_remove(lb->reg->by_name, lb->name);
	g_free(lb->data);
	g_free(lb->name);
	g_free(lb);
}

/* ---------------------------------------------------------------------- */
/* Specs */

bool
v4l2cuse_loopback_is_spec(const char *spec)
{
	size_t n = spec ? strcspn(spec, ":,") : 0;

	return (n == 8 && strncmp(spec, "loopback", 8) == 0) ||
	       (n == 15 && strncmp(spec, "loopback-writer", 15) == 0) ||
	       v4l2cuse_loopback_is_feed_spec(spec);
}

bool
v4l2cuse_loopback_is_feed_spec(const char *spec)
{
	return spec && strcspn(spec, ":,") == 8 && strncmp(spec, "pipewire", 8) == 0;
}

static bool
lb_valid_node(const char *s)
{
	if (strncmp(s, "video", 5) != 0 || !s[5] || strlen(s) > 10)
		return false;
	for (const char *p = s + 5; *p; p++) {
		if (!g_ascii_isdigit(*p))
			return false;
	}
	return true;
}

/*
 * Options of a capture end's spec; @o freed by the caller. The first
 * argument is the writer node of "loopback:WRITER"; of "pipewire:TARGET"
 * (a feed) it is the PipeWire node to capture (*ret_target), and the writer
 * node is the writer= option.
 */
int
lb_parse_opts(const char *spec, struct v4l2cuse_opts **ret_o, char **ret_writer,
	      char **ret_target, char **ret_error)
{
	const char *args = spec + strcspn(spec, ":,");
	bool feed = v4l2cuse_loopback_is_feed_spec(spec);
	const char *arg, *writer;
	int r;

	if (*args == ':')
		args++;
	r = v4l2cuse_opts_parse(feed ? "pipewire" : "loopback", args, lb_keys, ret_o, ret_error);
	if (r < 0)
		return r;
	arg = v4l2cuse_opts_arg(*ret_o);
	writer = feed ? v4l2cuse_opts_get_str(*ret_o, "writer", NULL) : arg;
	if (!feed && v4l2cuse_opts_has(*ret_o, "writer")) {
		if (ret_error)
			*ret_error = g_strdup("loopback: name the writer node as loopback:videoN, "
					      "not with writer=");
		return -EINVAL;
	}
	if (writer && *writer && !lb_valid_node(writer)) {
		if (ret_error)
			*ret_error = g_strdup_printf("%s: '%s' is not a node name (videoN)",
						     feed ? "pipewire: writer" : "loopback", writer);
		return -EINVAL;
	}
	if (feed && arg && strlen(arg) >= V4L2CUSE_FEED_TARGET_MAX) {
		if (ret_error)
			*ret_error = g_strdup_printf("pipewire: the target '%.40s...' is longer "
						     "than %d bytes", arg,
						     V4L2CUSE_FEED_TARGET_MAX - 1);
		return -EINVAL;
	}
	if (ret_writer)
		*ret_writer = writer && *writer ? g_strdup(writer) : NULL;
	if (ret_target)
		*ret_target = feed ? g_strdup(arg ? arg : "") : NULL;
	return 0;
}

int
v4l2cuse_loopback_parse(const char *spec, char **ret_writer, char **ret_error)
{
	_cleanup_(v4l2cuse_opts_freep) struct v4l2cuse_opts *o = NULL;
	int r = lb_parse_opts(spec, &o, ret_writer, NULL, ret_error);

	return r < 0 ? r : 0;
}

char *
v4l2cuse_loopback_spec_with_writer(const char *spec, const char *writer)
{
	const char *args = spec + strcspn(spec, ":,");
	const char *rest;
	g_autofree char *named = NULL;

	if (v4l2cuse_loopback_is_feed_spec(spec)) {
		/* The target stays the first argument; the writer is an option. */
		if (v4l2cuse_loopback_parse(spec, &named, NULL) == 0 && named)
			return g_strdup(spec);
		return g_strdup_printf("%s%swriter=%s", spec, *args ? "," : ":,", writer);
	}
	if (*args == ':')
		args++;
	rest = args + strcspn(args, ",");
	return g_strdup_printf("loopback:%s%s", writer, rest);
}

/* ---------------------------------------------------------------------- */
/* Both ends */

void
lb_destroy(struct v4l2cuse_source *src)
{
	struct lb_source *s = lb_of(src);

	if (!s)
		return;
	if (s->end == LB_WRITER && s->lb->connected)
		v4l2cuse_loopback_set_writer(src, 0);
	if (s->end == LB_WRITER)
		v4l2cuse_loopback_watch_readers(src, NULL, NULL);
	if (s->end == LB_CAPTURE) {
		/* Its device stopped its streams first; if not, they end here. */
		v4l2cuse_loopback_set_readers(src, 0);
		lb_capture_stop(src);
		lb_capture_leave(s);
	}
	clear_fd(&s->epfd);
	clear_fd(&s->evfd);
	clear_fd(&s->tfd);
	lb_put(s->lb);
	v4l2cuse_convert_free(s->cv);
	g_free(s->cache);
	g_free(s);
}

int
lb_create(const char *args, struct v4l2cuse_source **ret_src, char **ret_error)
{
	/* Only made by v4l2cuse_loopback_create(), which needs the registry. */
	if (ret_error)
		*ret_error = g_strdup("loopback: made by the daemon only");
	return -EINVAL;
}

const struct v4l2cuse_control *
lb_control(struct v4l2cuse_source *src, unsigned int index)
{
	/* The knobs are the writer node's (v4l2loopback has them there too). */
	if (lb_of(src)->end != LB_WRITER || index >= G_N_ELEMENTS(lb_controls))
		return NULL;
	return &lb_controls[index];
}

int
lb_get_control(struct v4l2cuse_source *src, uint32_t id, int64_t *ret)
{
	struct loopback *lb = lb_of(src)->lb;

	switch (id) {
	case LB_CID_KEEP_FORMAT:
		*ret = lb->knobs.keep_format;
		return 0;
	case LB_CID_SUSTAIN_FRAMERATE:
		*ret = lb->knobs.sustain_framerate;
		return 0;
	case LB_CID_TIMEOUT:
		*ret = lb->knobs.timeout_ms;
		return 0;
	}
	return -EINVAL;
}

void
lb_set_keep_format(struct loopback *lb, bool keep)
{
	lb->knobs.keep_format = keep;
	if (!keep)
		lb->has_kept = false;
	else if (lb->gen)
		lb->has_kept = true;	/* the format written last stays */
}

int
lb_set_control(struct v4l2cuse_source *src, uint32_t id, int64_t value)
{
	struct loopback *lb = lb_of(src)->lb;

	switch (id) {
	case LB_CID_KEEP_FORMAT:
		lb_set_keep_format(lb, value != 0);
		return 0;
	case LB_CID_SUSTAIN_FRAMERATE:
		lb->knobs.sustain_framerate = value != 0;
		return 0;
	case LB_CID_TIMEOUT:
		lb->knobs.timeout_ms = value;
		return 0;
	}
	return -EINVAL;
}

/* ---------------------------------------------------------------------- */
/* Readers (loopback.h) */

unsigned int
v4l2cuse_loopback_readers(struct v4l2cuse_source *src)
{
	unsigned int n = 0;

	if (!lb_is(src))
		return 0;
	/* Summed afresh: a capture end that leaves takes its readers along. */
	for (GList *l = lb_of(src)->lb->ends.head; l; l = l->next)
		n += ((struct lb_source *)l->data)->readers;
	return n;
}

void
v4l2cuse_loopback_set_readers(struct v4l2cuse_source *src, unsigned int n)
{
	struct lb_source *s = lb_of(src);
	struct loopback *lb;
	GList *l, *next;

	if (!lb_is(src) || s->end != LB_CAPTURE || s->readers == n)
		return;
	lb = s->lb;
	s->readers = n;
	if (!g_list_find(lb->ends.head, s))
		return;		/* its setup failed: it counts for nobody */
	g_debug("loopback %s: readers %u", lb->name, v4l2cuse_loopback_readers(src));
	for (l = lb->watchers.head; l; l = next) {
		struct lb_source *w = l->data;

		next = l->next;		/* the one told may stop watching */
		w->readers_changed(w->readers_data);
	}
}

void
v4l2cuse_loopback_watch_readers(struct v4l2cuse_source *src, void (*changed)(void *data),
				void *data)
{
	struct lb_source *s = lb_of(src);

	if (!lb_is(src) || s->end != LB_WRITER)
		return;
	if (s->readers_changed)
		g_queue_unlink(&s->lb->watchers, &s->watch_link);
	s->readers_changed = changed;
	s->readers_data = data;
	if (changed)
		g_queue_push_tail_link(&s->lb->watchers, &s->watch_link);
}

int
v4l2cuse_loopback_get_stats(struct v4l2cuse_source *src, struct v4l2cuse_loopback_stats *ret)
{
	struct loopback *lb;

	if (!lb_is(src))
		return -EINVAL;
	lb = lb_of(src)->lb;
	*ret = (struct v4l2cuse_loopback_stats){
		.writer_end = lb_of(src)->end == LB_WRITER,
		.connected = lb->connected,
		.pid = lb->pid,
		.fmt = lb->writer_fmt,
		.written = lb->gen,
		.refused = lb->refused,
		.dropped = lb->dropped,
		.compat = lb->knobs.compat,
		.feed = lb->knobs.feed,
		.min_width = lb->knobs.min_width,
		.max_width = lb->knobs.max_width,
		.min_height = lb->knobs.min_height,
		.max_height = lb->knobs.max_height,
	};
	memcpy(ret->comm, lb->comm, sizeof(ret->comm));
	memcpy(ret->feed_target, lb->knobs.feed_target, sizeof(ret->feed_target));
	/* What the readers asked for: the oldest started capture end's format. */
	if (lb->captures.head) {
		struct lb_source *c = lb->captures.head->data;

		ret->want = c->pix;
		ret->want_interval = c->interval;
	}
	return 0;
}

int
v4l2cuse_loopback_create(struct v4l2cuse_loopbacks *reg, const char *spec,
			 struct v4l2cuse_source **ret_src, char **ret_error)
{
	size_t n = strcspn(spec, ":,");
	bool writer_end = n == 15;
	g_autofree char *name = NULL;
	struct lb_source *s;
	int r;

	if (writer_end) {
		name = g_strdup(spec[n] == ':' ? spec + n + 1 : "");
		if (!lb_valid_node(name)) {
			if (ret_error)
				*ret_error = g_strdup_printf("loopback-writer: '%s' is not a node "
							     "name (videoN)", name);
			return -EINVAL;
		}
	} else {
		r = v4l2cuse_loopback_parse(spec, &name, ret_error);
		if (r < 0)
			return r;
	}
	s = g_new0(struct lb_source, 1);
	s->epfd = s->evfd = s->tfd = -1;
	s->link.data = s;
	s->end_link.data = s;
	s->watch_link.data = s;
	s->ms.base.ops = writer_end ? &lb_writer_ops : &lb_capture_ops;
	s->end = writer_end ? LB_WRITER : LB_CAPTURE;
	s->lb = lb_get(reg, name);
	if (!writer_end && (r = lb_capture_setup(s, spec, ret_error)) < 0) {
		lb_destroy(&s->ms.base);
		return r;
	}
	*ret_src = &s->ms.base;
	return 0;
}
