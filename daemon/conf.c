/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The configuration file: GKeyFile text into struct v4l2cuse_conf (see
 * conf.h). A small line scanner runs first: it finds the line of every
 * group and key for the messages, and refuses what GKeyFile would accept
 * silently (a key given twice, a group given twice in one file).
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "v4l2cuse/format.h"
#include "v4l2cuse/parse.h"
#include "v4l2cuse/source.h"
#include "util/macros.h"
#include "util/cleanup.h"
#include "conf.h"
#include "loopback.h"

/* ---------------------------------------------------------------------- */
/* Structure */

struct v4l2cuse_conf *
v4l2cuse_conf_new(void)
{
	struct v4l2cuse_conf *conf = g_new0(struct v4l2cuse_conf, 1);

	conf->control_gid = (gid_t)-1;
	conf->loopback_control = true;
	conf->retry_interval_s = 5;
	conf->retry_limit = 0;
	conf->selftest_timeout_s = 10;
	conf->mode = 0660;
	conf->buffer_memory_limit = v4l2cuse_conf_default_total_memory();
	conf->device_buffer_memory_limit = V4L2CUSE_CONF_DEVICE_MEMORY;
	conf->devices = g_ptr_array_new_with_free_func(
		(GDestroyNotify)v4l2cuse_conf_device_free);
	return conf;
}

void
v4l2cuse_conf_free(struct v4l2cuse_conf *conf)
{
	if (!conf)
		return;
	g_free(conf->control_socket);
	g_free(conf->control_group);
	g_free(conf->group);
	g_strfreev(conf->sandbox_paths);
	g_free(conf->usbip_listen);
	g_strfreev(conf->usbip_allow);
	g_ptr_array_unref(conf->devices);
	g_free(conf);
}

/* The strings a device owns, by offset: freed and copied together. */
static const size_t conf_device_strings[] = {
	offsetof(struct v4l2cuse_conf_device, id),
	offsetof(struct v4l2cuse_conf_device, where),
	offsetof(struct v4l2cuse_conf_device, where_source),
	offsetof(struct v4l2cuse_conf_device, node),
	offsetof(struct v4l2cuse_conf_device, label),
	offsetof(struct v4l2cuse_conf_device, source),
	offsetof(struct v4l2cuse_conf_device, placeholder),
	offsetof(struct v4l2cuse_conf_device, group),
};

static char **
conf_device_string(struct v4l2cuse_conf_device *d, size_t i)
{
	return (char **)((char *)d + conf_device_strings[i]);
}

void
v4l2cuse_conf_device_free(struct v4l2cuse_conf_device *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(conf_device_strings); i++)
		g_free(*conf_device_string(d, i));
	g_free(d);
}

struct v4l2cuse_conf_device *
v4l2cuse_conf_device_dup(const struct v4l2cuse_conf_device *d)
{
	struct v4l2cuse_conf_device *n = g_memdup2(d, sizeof(*d));

	for (size_t i = 0; i < ARRAY_SIZE(conf_device_strings); i++)
		*conf_device_string(n, i) = g_strdup(*conf_device_string(n, i));
	return n;
}

const struct v4l2cuse_conf_device *
v4l2cuse_conf_find(const struct v4l2cuse_conf *conf, const char *id)
{
	for (unsigned int i = 0; i < conf->devices->len; i++) {
		const struct v4l2cuse_conf_device *d = conf->devices->pdata[i];

		if (strcmp(d->id, id) == 0)
			return d;
	}
	return NULL;
}

static bool
offer_equal(const struct v4l2cuse_offer *a, const struct v4l2cuse_offer *b)
{
	return a->n_formats == b->n_formats && a->n_sizes == b->n_sizes &&
	       a->n_intervals == b->n_intervals &&
	       memcmp(a->formats, b->formats, a->n_formats * sizeof(a->formats[0])) == 0 &&
	       memcmp(a->sizes, b->sizes, a->n_sizes * sizeof(a->sizes[0])) == 0 &&
	       memcmp(a->intervals, b->intervals, a->n_intervals * sizeof(a->intervals[0])) == 0;
}

bool
v4l2cuse_conf_device_equal_but_source(const struct v4l2cuse_conf_device *a,
				      const struct v4l2cuse_conf_device *b)
{
	return g_strcmp0(a->id, b->id) == 0 && a->enabled == b->enabled &&
	       g_strcmp0(a->node, b->node) == 0 && g_strcmp0(a->label, b->label) == 0 &&
	       offer_equal(&a->offer, &b->offer) && a->width == b->width &&
	       a->height == b->height && a->pixelformat == b->pixelformat &&
	       a->interval.numerator == b->interval.numerator &&
	       a->interval.denominator == b->interval.denominator &&
	       a->min_buffers == b->min_buffers && a->read_buffers == b->read_buffers &&
	       a->gid == b->gid && a->mode == b->mode &&
	       a->buffer_memory_limit == b->buffer_memory_limit && a->usb == b->usb;
}

bool
v4l2cuse_conf_device_equal(const struct v4l2cuse_conf_device *a,
			   const struct v4l2cuse_conf_device *b)
{
	return v4l2cuse_conf_device_equal_but_source(a, b) && a->share == b->share &&
	       a->has_network == b->has_network && a->network == b->network &&
	       g_strcmp0(a->source, b->source) == 0 &&
	       g_strcmp0(a->placeholder, b->placeholder) == 0;
}

void
v4l2cuse_conf_device_config(const struct v4l2cuse_conf_device *d,
			    struct v4l2cuse_device_config *ret)
{
	*ret = (struct v4l2cuse_device_config){
		.name = d->node,
		.label = d->label,
		.source = d->source,
		.width = d->width,
		.height = d->height,
		.pixelformat = d->pixelformat,
		.interval = d->interval,
		.id = d->id,
		.offer = v4l2cuse_offer_is_empty(&d->offer) ? NULL : &d->offer,
		.placeholder = d->placeholder,
		.shared = d->share,
		.min_buffers = d->min_buffers,
		.read_buffers = d->read_buffers,
		.buffer_memory_limit = d->buffer_memory_limit,
	};
}

/* ---------------------------------------------------------------------- */
/* The line scanner */

struct conf_line {
	char *group;		/* NULL for a group header line */
	char *key;
	unsigned int line;
};

/* Locations of groups (key == NULL) and keys, for messages. */
struct conf_scan {
	const char *name;
	GArray *lines;		/* struct conf_line */
};

static void
conf_line_clear(void *p)
{
	struct conf_line *l = p;

	g_free(l->group);
	g_free(l->key);
}

static unsigned int
scan_line_of(const struct conf_scan *sc, const char *group, const char *key)
{
	for (unsigned int i = 0; i < sc->lines->len; i++) {
		const struct conf_line *l = &g_array_index(sc->lines, struct conf_line, i);

		if (strcmp(l->group, group) == 0 && g_strcmp0(l->key, key) == 0)
			return l->line;
	}
	return 0;
}

static char *
scan_where(const struct conf_scan *sc, const char *group, const char *key)
{
	unsigned int line = scan_line_of(sc, group, key);

	if (!line && key)
		line = scan_line_of(sc, group, NULL);
	if (key)
		return g_strdup_printf("%s:%u: [%s] %s", sc->name, line, group, key);
	return g_strdup_printf("%s:%u: [%s]", sc->name, line, group);
}

static int
scan_text(struct conf_scan *sc, const char *data, size_t len, char **ret_error)
{
	g_autofree char *copy = g_strndup(data, len);
	g_auto(GStrv) lines = NULL;
	const char *group = NULL;

	if (strlen(copy) != len) {
		*ret_error = g_strdup_printf("%s: contains a NUL byte", sc->name);
		return -EINVAL;
	}
	if (!g_utf8_validate(copy, -1, NULL)) {
		*ret_error = g_strdup_printf("%s: is not valid UTF-8", sc->name);
		return -EINVAL;
	}
	lines = g_strsplit(copy, "\n", -1);
	for (unsigned int i = 0; lines[i]; i++) {
		char *s = g_strstrip(lines[i]);
		unsigned int n = i + 1;
		struct conf_line l = { .line = n };
		char *eq;

		if (!*s || *s == '#')
			continue;
		if (*s == '[') {
			size_t sl = strlen(s);

			if (s[sl - 1] != ']' || sl < 3) {
				*ret_error = g_strdup_printf("%s:%u: '%s' is not a [group] header",
							     sc->name, n, s);
				return -EINVAL;
			}
			s[sl - 1] = '\0';
			if (scan_line_of(sc, s + 1, NULL)) {
				*ret_error = g_strdup_printf("%s:%u: [%s] appears twice (first at "
							     "line %u)", sc->name, n, s + 1,
							     scan_line_of(sc, s + 1, NULL));
				return -EINVAL;
			}
			l.group = g_strdup(s + 1);
			g_array_append_val(sc->lines, l);
			group = l.group;	/* now owned by the array */
			continue;
		}
		eq = strchr(s, '=');
		if (!eq || eq == s) {
			*ret_error = g_strdup_printf("%s:%u: '%s' is not a key=value line, "
						     "a [group] header or a # comment",
						     sc->name, n, s);
			return -EINVAL;
		}
		if (!group) {
			*ret_error = g_strdup_printf("%s:%u: '%s' comes before any [group] header",
						     sc->name, n, s);
			return -EINVAL;
		}
		*eq = '\0';
		g_strchomp(s);
		if (scan_line_of(sc, group, s)) {
			*ret_error = g_strdup_printf("%s:%u: [%s] %s: set twice (first at line %u)",
						     sc->name, n, group, s,
						     scan_line_of(sc, group, s));
			return -EINVAL;
		}
		l.group = g_strdup(group);
		l.key = g_strdup(s);
		g_array_append_val(sc->lines, l);
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Groups */

/* Split a list value on ',', ';', '+' and blanks; at most @max items. */
struct conf_ctx {
	struct v4l2cuse_conf *conf;
	struct conf_scan *sc;
	GKeyFile *kf;
	const char *group;
};

/* Fail with "PATH:LINE: [group] key: message" (consumes @msg). */
/*
 * A value as a string, NULL for a bad escape. The raw value is checked
 * first: GLib 2.74's g_key_file_get_string() sets its GError twice for an
 * invalid escape followed by a trailing backslash (a value "a\m\" as
 * written), which GLib reports as a bug with a warning (found by
 * fuzz-config).
 */
static char *
kf_get_string(GKeyFile *kf, const char *group, const char *key)
{
	g_autofree char *raw = g_key_file_get_value(kf, group, key, NULL);

	if (!raw)
		return NULL;
	for (const char *p = raw; *p; p++) {
		if (*p != '\\')
			continue;
		if (p[1] == '\0' || !strchr("sntr\\", p[1]))
			return NULL;
		p++;
	}
	return g_key_file_get_string(kf, group, key, NULL);
}

static int
ctx_fail(struct conf_ctx *c, const char *key, char *msg, char **ret_error)
{
	g_autofree char *where = scan_where(c->sc, c->group, key);

	/* Values may hold escaped control characters (\n): still one line. */
	g_strdelimit(msg, "\n\r\t\v\f\x1b", '?');
	*ret_error = g_strdup_printf("%s: %s", where, msg);
	g_free(msg);
	return -EINVAL;
}

static int
ctx_get_uint(struct conf_ctx *c, const char *key, const char *v, unsigned int min,
	     unsigned int max, unsigned int *ret, char **ret_error)
{
	uint32_t u;

	if (!v4l2cuse_parse_u32(v, &u) || u < min || u > max)
		return ctx_fail(c, key, g_strdup_printf("'%s' is not a number in %u..%u",
							 v, min, max), ret_error);
	*ret = u;
	return 0;
}

static int
ctx_get_bool(struct conf_ctx *c, const char *key, const char *v, bool *ret, char **ret_error)
{
	char *msg = NULL;

	if (v4l2cuse_parse_bool(v, ret, &msg) < 0)
		return ctx_fail(c, key, msg, ret_error);
	return 0;
}

/*
 * group=, in [daemon] (the devices' default) and in [device ...]: a group
 * that exists, kept by name in *@group, its id in *@ret_gid (when not NULL).
 */
static int
ctx_get_group(struct conf_ctx *c, const char *key, const char *v, char **group,
	      gid_t *ret_gid, char **ret_error)
{
	char *msg = NULL;
	gid_t gid;

	if (v4l2cuse_parse_group(v, &gid, &msg) < 0)
		return ctx_fail(c, key, msg, ret_error);
	g_free(*group);
	*group = g_strdup(v);
	if (ret_gid)
		*ret_gid = gid;
	return 0;
}

/* mode=, in both sections: the node's permission bits, and that it was set. */
static int
ctx_get_mode(struct conf_ctx *c, const char *key, const char *v, mode_t *mode, bool *has_mode,
	     char **ret_error)
{
	char *msg = NULL;

	if (v4l2cuse_parse_mode(v, mode, &msg) < 0)
		return ctx_fail(c, key, msg, ret_error);
	*has_mode = true;
	return 0;
}

static int
parse_sandbox_key(struct conf_ctx *c, const char *key, const char *v, char **ret_error)
{
	struct v4l2cuse_conf *conf = c->conf;
	g_auto(GStrv) paths = NULL;
	char *msg = NULL;

	if (strcmp(key, "sandbox") == 0) {
		if (v4l2cuse_sandbox_parse_mode(v, &conf->sandbox, &msg) < 0)
			return ctx_fail(c, key, msg, ret_error);
		return 0;
	}
	if (strcmp(key, "sandbox-paths") != 0)
		return ctx_fail(c, key, g_strdup("unknown key (known: sandbox, sandbox-paths)"),
				ret_error);
	if (v4l2cuse_split_list(v, 64, &paths, &msg) < 0)
		return ctx_fail(c, key, msg, ret_error);
	for (unsigned int i = 0; paths[i]; i++) {
		if (!g_path_is_absolute(paths[i]))
			return ctx_fail(c, key, g_strdup_printf("'%s' is not an absolute path",
								paths[i]), ret_error);
	}
	g_strfreev(conf->sandbox_paths);
	conf->sandbox_paths = g_steal_pointer(&paths);
	return 0;
}

static int
parse_daemon_key(struct conf_ctx *c, const char *key, const char *v, char **ret_error)
{
	struct v4l2cuse_conf *conf = c->conf;
	char *msg = NULL;

	if (g_str_has_prefix(key, "sandbox"))
		return parse_sandbox_key(c, key, v, ret_error);
	if (strcmp(key, "control-socket") == 0) {
		if (!g_path_is_absolute(v) || strlen(v) >= 108)
			return ctx_fail(c, key, g_strdup_printf("'%s' is not an absolute path "
								 "shorter than 108 bytes", v),
					ret_error);
		g_free(conf->control_socket);
		conf->control_socket = g_strdup(v);
	} else if (strcmp(key, "control-group") == 0) {
		if (v4l2cuse_parse_group(v, &conf->control_gid, &msg) < 0)
			return ctx_fail(c, key, msg, ret_error);
		g_free(conf->control_group);
		conf->control_group = g_strdup(v);
	} else if (strcmp(key, "loopback-control") == 0) {
		return ctx_get_bool(c, key, v, &conf->loopback_control, ret_error);
	} else if (strcmp(key, "retry-interval") == 0) {
		return ctx_get_uint(c, key, v, 0, 3600, &conf->retry_interval_s, ret_error);
	} else if (strcmp(key, "retry-limit") == 0) {
		return ctx_get_uint(c, key, v, 0, 1000000, &conf->retry_limit, ret_error);
	} else if (strcmp(key, "selftest-timeout") == 0) {
		return ctx_get_uint(c, key, v, 1, 600, &conf->selftest_timeout_s, ret_error);
	} else if (strcmp(key, "group") == 0) {
		return ctx_get_group(c, key, v, &conf->group, NULL, ret_error);
	} else if (strcmp(key, "mode") == 0) {
		return ctx_get_mode(c, key, v, &conf->mode, &conf->has_mode, ret_error);
	} else if (strcmp(key, "buffer-memory-limit") == 0) {
		if (v4l2cuse_parse_memory(v, &conf->buffer_memory_limit, &msg) < 0)
			return ctx_fail(c, key, msg, ret_error);
	} else if (strcmp(key, "device-buffer-memory-limit") == 0) {
		if (v4l2cuse_parse_memory(v, &conf->device_buffer_memory_limit, &msg) < 0)
			return ctx_fail(c, key, msg, ret_error);
	} else if (strcmp(key, "usbip-listen") == 0) {
		if (v4l2cuse_parse_listen(v, NULL, NULL, &msg) < 0)
			return ctx_fail(c, key, msg, ret_error);
		g_free(conf->usbip_listen);
		conf->usbip_listen = g_strdup(v);
	} else if (strcmp(key, "usbip-allow") == 0) {
		g_auto(GStrv) list = v4l2cuse_parse_allow(v, &msg);

		if (!list)
			return ctx_fail(c, key, msg, ret_error);
		g_strfreev(conf->usbip_allow);
		conf->usbip_allow = g_steal_pointer(&list);
	} else {
		return ctx_fail(c, key, g_strdup("unknown key (known: control-socket, "
						 "control-group, loopback-control, "
						 "retry-interval, retry-limit, "
						 "selftest-timeout, group, mode, "
						 "buffer-memory-limit, "
						 "device-buffer-memory-limit, sandbox, "
						 "sandbox-paths, usbip-listen, usbip-allow)"),
				ret_error);
	}
	return 0;
}

static int
parse_source_spec(struct conf_ctx *c, const char *key, const char *v, char **ret_error)
{
	g_autofree char *name = g_strndup(v, strcspn(v, ":,"));

	if (!*v)
		return ctx_fail(c, key, g_strdup("empty source spec"), ret_error);
	if ((strcmp(name, "loopback") == 0 || v4l2cuse_loopback_is_feed_spec(v)) &&
	    strcmp(key, "source") == 0) {
		char *msg = NULL;

		if (v4l2cuse_loopback_parse(v, NULL, &msg) < 0)
			return ctx_fail(c, key, msg, ret_error);
		return 0;
	}
	if (!v4l2cuse_source_lookup(name)) {
		g_autoptr(GString) known = g_string_new(NULL);
		const struct v4l2cuse_source_ops *ops;

		for (unsigned int i = 0; (ops = v4l2cuse_source_by_index(i)); i++)
			g_string_append_printf(known, "%s%s", i ? ", " : "", ops->name);
		if (strcmp(key, "source") == 0)
			g_string_append(known, ", loopback, pipewire");
		return ctx_fail(c, key, g_strdup_printf("unknown source '%s' (known: %s)", name,
							 known->str), ret_error);
	}
	return 0;
}

static const char *const device_keys[] = {
	"node", "label", "source", "placeholder", "formats", "sizes", "frame-rates",
	"format", "size", "frame-rate", "min-buffers", "read-buffers", "group", "mode",
	"enabled", "buffer-memory-limit", "share", "usb", "network", NULL
};

static int
parse_device_key(struct conf_ctx *c, struct v4l2cuse_conf_device *d, const char *key,
		 const char *v, char **ret_error)
{
	char *msg = NULL;

	if (strcmp(key, "node") == 0) {
		g_clear_pointer(&d->node, g_free);
		if (v4l2cuse_parse_node(v, &d->node, &msg) < 0)
			return ctx_fail(c, key, msg, ret_error);
	} else if (strcmp(key, "label") == 0) {
		if (!*v || strlen(v) > 31)
			return ctx_fail(c, key, g_strdup_printf("'%s' must be 1..31 bytes long",
								 v), ret_error);
		g_free(d->label);
		d->label = g_strdup(v);
	} else if (strcmp(key, "source") == 0) {
		if (parse_source_spec(c, key, v, ret_error) < 0)
			return -EINVAL;
		g_free(d->source);
		d->source = g_strdup(v);
		g_free(d->where_source);
		d->where_source = scan_where(c->sc, c->group, key);
	} else if (strcmp(key, "placeholder") == 0) {
		g_clear_pointer(&d->placeholder, g_free);
		if (g_ascii_strcasecmp(v, "none") == 0)
			return 0;
		if (parse_source_spec(c, key, v, ret_error) < 0)
			return -EINVAL;
		d->placeholder = g_strdup(v);
	} else if (strcmp(key, "formats") == 0) {
		if (v4l2cuse_parse_fourccs(v, d->offer.formats, &d->offer.n_formats, &msg) < 0)
			return ctx_fail(c, key, msg, ret_error);
	} else if (strcmp(key, "sizes") == 0) {
		if (v4l2cuse_parse_sizes(v, d->offer.sizes, &d->offer.n_sizes, &msg) < 0)
			return ctx_fail(c, key, msg, ret_error);
	} else if (strcmp(key, "frame-rates") == 0) {
		if (v4l2cuse_parse_rates(v, d->offer.intervals, &d->offer.n_intervals, &msg) < 0)
			return ctx_fail(c, key, msg, ret_error);
	} else if (strcmp(key, "format") == 0) {
		if (v4l2cuse_parse_fourcc(v, &d->pixelformat, &msg) < 0)
			return ctx_fail(c, key, msg, ret_error);
	} else if (strcmp(key, "size") == 0) {
		if (v4l2cuse_parse_size(v, &d->width, &d->height, &msg) < 0)
			return ctx_fail(c, key, msg, ret_error);
	} else if (strcmp(key, "frame-rate") == 0) {
		if (v4l2cuse_parse_rate(v, &d->interval, &msg) < 0)
			return ctx_fail(c, key, msg, ret_error);
	} else if (strcmp(key, "min-buffers") == 0) {
		return ctx_get_uint(c, key, v, 1, 16, &d->min_buffers, ret_error);
	} else if (strcmp(key, "read-buffers") == 0) {
		return ctx_get_uint(c, key, v, 2, 16, &d->read_buffers, ret_error);
	} else if (strcmp(key, "group") == 0) {
		return ctx_get_group(c, key, v, &d->group, &d->gid, ret_error);
	} else if (strcmp(key, "mode") == 0) {
		return ctx_get_mode(c, key, v, &d->mode, &d->has_mode, ret_error);
	} else if (strcmp(key, "enabled") == 0) {
		return ctx_get_bool(c, key, v, &d->enabled, ret_error);
	} else if (strcmp(key, "share") == 0) {
		return ctx_get_bool(c, key, v, &d->share, ret_error);
	} else if (strcmp(key, "usb") == 0) {
		return ctx_get_bool(c, key, v, &d->usb, ret_error);
	} else if (strcmp(key, "network") == 0) {
		d->has_network = true;
		return ctx_get_bool(c, key, v, &d->network, ret_error);
	} else if (strcmp(key, "buffer-memory-limit") == 0) {
		if (v4l2cuse_parse_memory(v, &d->buffer_memory_limit, &msg) < 0)
			return ctx_fail(c, key, msg, ret_error);
		d->has_buffer_memory_limit = true;
	} else {
		g_autofree char *known = g_strjoinv(", ", (char **)device_keys);

		return ctx_fail(c, key, g_strdup_printf("unknown key (known: %s)", known),
				ret_error);
	}
	return 0;
}

/* Defaults and checks inside one device group. */
static int
check_device(struct conf_ctx *c, struct v4l2cuse_conf_device *d, char **ret_error)
{
	const struct v4l2cuse_offer *o = &d->offer;
	bool in;

	if (!d->source)
		d->source = g_strdup("pattern");
	if (d->pixelformat && o->n_formats) {
		in = false;
		for (unsigned int i = 0; i < o->n_formats; i++)
			in |= o->formats[i] == d->pixelformat;
		if (!in)
			return ctx_fail(c, "format", g_strdup("not one of formats="), ret_error);
	}
	if (d->width && o->n_sizes) {
		in = false;
		for (unsigned int i = 0; i < o->n_sizes; i++)
			in |= o->sizes[i].width == d->width && o->sizes[i].height == d->height;
		if (!in)
			return ctx_fail(c, "size", g_strdup("not one of sizes="), ret_error);
	}
	if (d->interval.denominator && o->n_intervals) {
		in = false;
		for (unsigned int i = 0; i < o->n_intervals; i++)
			in |= (uint64_t)o->intervals[i].numerator * d->interval.denominator ==
			      (uint64_t)d->interval.numerator * o->intervals[i].denominator;
		if (!in)
			return ctx_fail(c, "frame-rate", g_strdup("not one of frame-rates="),
					ret_error);
	}
	if (!d->pixelformat && o->n_formats)
		d->pixelformat = o->formats[0];
	if (!d->width && o->n_sizes) {
		d->width = o->sizes[0].width;
		d->height = o->sizes[0].height;
	}
	/* Otherwise left to the source (the device asks it: a camera's current rate). */
	if (!d->interval.denominator && o->n_intervals)
		d->interval = o->intervals[0];
	return 0;
}

static int
parse_device_group(struct conf_ctx *c, const char *id, char **ret_error)
{
	struct v4l2cuse_conf_device *d;
	g_auto(GStrv) keys = NULL;
	const struct v4l2cuse_conf_device *other;

	if (!v4l2cuse_conf_id_valid(id))
		return ctx_fail(c, NULL, g_strdup_printf("'%s' is not a device id (1..%u of "
							  "A-Z a-z 0-9 - _ .)", id,
							  V4L2CUSE_CONF_ID_MAX), ret_error);
	if ((other = v4l2cuse_conf_find(c->conf, id)))
		return ctx_fail(c, NULL, g_strdup_printf("device '%s' is already defined at %s",
							  id, other->where), ret_error);
	if (c->conf->devices->len >= V4L2CUSE_CONF_MAX_DEVICES)
		return ctx_fail(c, NULL, g_strdup_printf("more than %u devices",
							  V4L2CUSE_CONF_MAX_DEVICES), ret_error);

	d = g_new0(struct v4l2cuse_conf_device, 1);
	d->id = g_strdup(id);
	d->where = scan_where(c->sc, c->group, NULL);
	d->enabled = true;
	d->gid = (gid_t)-1;
	d->mode = 0660;
	keys = g_key_file_get_keys(c->kf, c->group, NULL, NULL);
	for (unsigned int i = 0; keys && keys[i]; i++) {
		g_autofree char *v = kf_get_string(c->kf, c->group, keys[i]);

		if (!v || parse_device_key(c, d, keys[i], g_strstrip(v), ret_error) < 0) {
			if (!v)
				ctx_fail(c, keys[i], g_strdup("bad escape in the value"),
					 ret_error);
			v4l2cuse_conf_device_free(d);
			return -EINVAL;
		}
	}
	if (!d->where_source)
		d->where_source = g_strdup_printf("%s source", d->where);
	if (check_device(c, d, ret_error) < 0) {
		v4l2cuse_conf_device_free(d);
		return -EINVAL;
	}
	g_ptr_array_add(c->conf->devices, d);
	return 0;
}

int
v4l2cuse_conf_parse(struct v4l2cuse_conf *conf, const char *name, const char *data,
		    size_t len, char **ret_error)
{
	g_autoptr(GKeyFile) kf = g_key_file_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(GArray) lines = g_array_new(FALSE, TRUE, sizeof(struct conf_line));
	g_auto(GStrv) groups = NULL;
	struct conf_scan sc = { .name = name, .lines = lines };
	struct conf_ctx c = { .conf = conf, .sc = &sc, .kf = kf };
	int r;

	g_array_set_clear_func(lines, conf_line_clear);
	r = scan_text(&sc, data, len, ret_error);
	if (r < 0)
		return r;
	if (!g_key_file_load_from_data(kf, data, len, G_KEY_FILE_NONE, &error)) {
		*ret_error = g_strdup_printf("%s: %s", name, error->message);
		return -EINVAL;
	}
	groups = g_key_file_get_groups(kf, NULL);
	for (unsigned int i = 0; groups[i] && r == 0; i++) {
		c.group = groups[i];
		if (strcmp(groups[i], "daemon") == 0) {
			g_auto(GStrv) keys = g_key_file_get_keys(kf, groups[i], NULL, NULL);

			for (unsigned int k = 0; keys && keys[k] && r == 0; k++) {
				g_autofree char *v = kf_get_string(kf, groups[i], keys[k]);

				r = v ? parse_daemon_key(&c, keys[k], g_strstrip(v), ret_error)
				      : ctx_fail(&c, keys[k], g_strdup("bad escape in the value"),
						 ret_error);
			}
		} else if (g_str_has_prefix(groups[i], "device ")) {
			r = parse_device_group(&c, groups[i] + 7, ret_error);
		} else {
			r = ctx_fail(&c, NULL, g_strdup("unknown group (known: [daemon], "
							"[device ID])"), ret_error);
		}
	}
	return r;
}

int
v4l2cuse_conf_finish(struct v4l2cuse_conf *conf, char **ret_error)
{
	gid_t video_gid = (gid_t)-1, daemon_gid = (gid_t)-1;
	g_autofree char *msg = NULL;
	struct group *gr;

	if (conf->group && v4l2cuse_parse_group(conf->group, &daemon_gid, &msg) < 0) {
		*ret_error = g_strdup_printf("[daemon] group: %s", msg);
		return -EINVAL;
	}
	if ((gr = getgrnam("video")))
		video_gid = gr->gr_gid;
	for (unsigned int i = 0; i < conf->devices->len; i++) {
		struct v4l2cuse_conf_device *d = conf->devices->pdata[i];

		if (!d->group)
			d->gid = conf->group ? daemon_gid : video_gid;
		if (!d->has_mode)
			d->mode = conf->mode;
		if (!d->has_buffer_memory_limit)
			d->buffer_memory_limit = conf->device_buffer_memory_limit;
		if (!d->node || !d->enabled)
			continue;
		for (unsigned int j = 0; j < i; j++) {
			struct v4l2cuse_conf_device *e = conf->devices->pdata[j];

			if (e->enabled && g_strcmp0(e->node, d->node) == 0) {
				*ret_error = g_strdup_printf("%s node: %s is already the node of "
							     "%s", d->where, d->node, e->where);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static gint
cmp_str(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
load_file(struct v4l2cuse_conf *conf, const char *path, char **ret_error)
{
	g_autofree char *data = NULL;
	g_autoptr(GError) error = NULL;
	gsize len;

	if (!g_file_get_contents(path, &data, &len, &error)) {
		*ret_error = g_strdup_printf("%s: %s", path, error->message);
		return -EIO;
	}
	if (len > V4L2CUSE_CONF_MAX_FILE) {
		*ret_error = g_strdup_printf("%s: larger than %u bytes", path,
					     V4L2CUSE_CONF_MAX_FILE);
		return -EFBIG;
	}
	return v4l2cuse_conf_parse(conf, path, data, len, ret_error);
}

int
v4l2cuse_conf_load(const char *path, bool required, struct v4l2cuse_conf **ret_conf,
		   bool *ret_found, char **ret_error)
{
	_cleanup_(v4l2cuse_conf_freep) struct v4l2cuse_conf *conf = v4l2cuse_conf_new();
	g_autofree char *dir = g_path_get_dirname(path);
	g_autofree char *dropdir = g_build_filename(dir, "conf.d", NULL);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GDir) d = NULL;
	g_autoptr(GError) error = NULL;
	bool found = false;
	const char *n;
	int r;

	if (g_file_test(path, G_FILE_TEST_EXISTS)) {
		r = load_file(conf, path, ret_error);
		if (r < 0)
			return r;
		found = true;
	} else if (required) {
		*ret_error = g_strdup_printf("%s: no such file", path);
		return -ENOENT;
	}
	d = g_dir_open(dropdir, 0, &error);
	if (!d && !g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
		*ret_error = g_strdup_printf("%s: %s", dropdir, error->message);
		return -EIO;
	}
	while (d && (n = g_dir_read_name(d))) {
		if (!g_str_has_suffix(n, ".conf") || n[0] == '.')
			continue;
		if (names->len >= V4L2CUSE_CONF_MAX_DROPINS) {
			*ret_error = g_strdup_printf("%s: more than %u files", dropdir,
						     V4L2CUSE_CONF_MAX_DROPINS);
			return -E2BIG;
		}
		g_ptr_array_add(names, g_strdup(n));
	}
	g_ptr_array_sort(names, cmp_str);
	for (unsigned int i = 0; i < names->len; i++) {
		g_autofree char *p = g_build_filename(dropdir, names->pdata[i], NULL);

		r = load_file(conf, p, ret_error);
		if (r < 0)
			return r;
		found = true;
	}
	r = v4l2cuse_conf_finish(conf, ret_error);
	if (r < 0)
		return r;
	*ret_found = found;
	*ret_conf = steal_ptr(&conf);
	return 0;
}
