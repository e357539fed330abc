/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * "ARG,key=value,..." option lists shared by the sources (see source.h).
 */

#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include <glib.h>

#include "v4l2cuse/parse.h"
#include "v4l2cuse/source.h"

struct opts_item {
	char *key;
	char *value;
};

struct v4l2cuse_opts {
	char *source;
	char *arg;		/* NULL: none */
	GArray *items;		/* struct opts_item */
};

void
v4l2cuse_opts_free(struct v4l2cuse_opts *opts)
{
	if (!opts)
		return;
	if (opts->items) {
		for (guint i = 0; i < opts->items->len; i++) {
			struct opts_item *it = &g_array_index(opts->items, struct opts_item, i);

			g_free(it->key);
			g_free(it->value);
		}
		g_array_free(opts->items, TRUE);
	}
	g_free(opts->arg);
	g_free(opts->source);
	g_free(opts);
}

char *
v4l2cuse_opts_error(const struct v4l2cuse_opts *opts, const char *fmt, ...)
{
	g_autofree char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	return g_strdup_printf("%s: %s", opts && opts->source ? opts->source : "source", msg);
}

static void
opts_set_error(char **ret_error, const char *source, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
opts_set_error(char **ret_error, const char *source, const char *fmt, ...)
{
	g_autofree char *msg = NULL;
	va_list ap;

	if (!ret_error)
		return;
	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_free(*ret_error);
	*ret_error = g_strdup_printf("%s: %s", source ? source : "source", msg);
}

static bool
opts_key_known(const char *const *known, const char *key)
{
	for (; known && *known; known++) {
		if (strcmp(*known, key) == 0)
			return true;
	}
	return false;
}

static const struct opts_item *
opts_find(const struct v4l2cuse_opts *opts, const char *key)
{
	for (guint i = 0; opts && i < opts->items->len; i++) {
		const struct opts_item *it = &g_array_index(opts->items, struct opts_item, i);

		if (strcmp(it->key, key) == 0)
			return it;
	}
	return NULL;
}

int
v4l2cuse_opts_parse(const char *source_name, const char *args,
		    const char *const *known_keys,
		    struct v4l2cuse_opts **ret_opts, char **ret_error)
{
	struct v4l2cuse_opts *opts = g_new0(struct v4l2cuse_opts, 1);
	g_auto(GStrv) fields = NULL;

	opts->source = g_strdup(source_name);
	opts->items = g_array_new(FALSE, TRUE, sizeof(struct opts_item));
	if (!args || !*args) {
		*ret_opts = opts;
		return 0;
	}

	fields = g_strsplit(args, ",", -1);
	if (fields[0][0])
		opts->arg = g_strdup(fields[0]);
	for (guint i = 1; fields[i]; i++) {
		const char *f = fields[i];
		const char *eq = strchr(f, '=');
		struct opts_item it;

		if (!*f)
			continue;
		if (eq == f) {
			opts_set_error(ret_error, source_name, "option '%s' has no name", f);
			goto err;
		}
		it.key = eq ? g_strndup(f, eq - f) : g_strdup(f);
		it.value = g_strdup(eq ? eq + 1 : "1");
		if (!opts_key_known(known_keys, it.key)) {
			g_autofree char *known = known_keys ? g_strjoinv(", ", (char **)known_keys)
							    : g_strdup("");

			opts_set_error(ret_error, source_name, "unknown option '%s' (known: %s)",
				       it.key, known_keys && *known_keys ? known : "none");
			g_free(it.key);
			g_free(it.value);
			goto err;
		}
		if (opts_find(opts, it.key)) {
			opts_set_error(ret_error, source_name, "option '%s' given twice", it.key);
			g_free(it.key);
			g_free(it.value);
			goto err;
		}
		g_array_append_val(opts->items, it);
	}
	*ret_opts = opts;
	return 0;

err:
	v4l2cuse_opts_free(opts);
	return -EINVAL;
}

const char *
v4l2cuse_opts_arg(const struct v4l2cuse_opts *opts)
{
	return opts ? opts->arg : NULL;
}

bool
v4l2cuse_opts_has(const struct v4l2cuse_opts *opts, const char *key)
{
	return opts_find(opts, key) != NULL;
}

const char *
v4l2cuse_opts_get_str(const struct v4l2cuse_opts *opts, const char *key, const char *def)
{
	const struct opts_item *it = opts_find(opts, key);

	return it ? it->value : def;
}

int
v4l2cuse_opts_get_bool(const struct v4l2cuse_opts *opts, const char *key,
		       bool def, bool *ret, char **ret_error)
{
	const char *v = v4l2cuse_opts_get_str(opts, key, NULL);

	if (!v) {
		*ret = def;
		return 0;
	}
	if (v4l2cuse_parse_bool(v, ret, NULL) == 0)
		return 0;
	opts_set_error(ret_error, opts ? opts->source : NULL,
		       "option '%s': expected 0 or 1, got '%s'", key, v);
	return -EINVAL;
}

int
v4l2cuse_opts_get_int(const struct v4l2cuse_opts *opts, const char *key,
		      int64_t def, int64_t min, int64_t max, int64_t *ret,
		      char **ret_error)
{
	const char *v = v4l2cuse_opts_get_str(opts, key, NULL);
	char *end = NULL;
	gint64 n;

	if (!v) {
		*ret = def;
		return 0;
	}
	errno = 0;
	n = g_ascii_strtoll(v, &end, 10);
	if (!*v || *end || errno || n < min || n > max) {
		opts_set_error(ret_error, opts ? opts->source : NULL,
			       "option '%s': expected an integer in %" G_GINT64_FORMAT
			       "..%" G_GINT64_FORMAT ", got '%s'", key, (gint64)min,
			       (gint64)max, v);
		return -EINVAL;
	}
	*ret = n;
	return 0;
}

int
v4l2cuse_opts_get_uint(const struct v4l2cuse_opts *opts, const char *key,
		       uint32_t def, uint32_t min, uint32_t max, uint32_t *ret,
		       char **ret_error)
{
	int64_t n;
	int r = v4l2cuse_opts_get_int(opts, key, def, min, max, &n, ret_error);

	if (r < 0)
		return r;
	*ret = (uint32_t)n;
	return 0;
}
