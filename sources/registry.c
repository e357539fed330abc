/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The source registry: "--source NAME[:ARG][,opt=v...]" to a source, and the
 * default format negotiation.
 */

#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"

static const struct v4l2cuse_source_ops *const registry[] = {
	&v4l2cuse_testpattern_ops,
	&v4l2cuse_file_ops,
	&v4l2cuse_uvc_ops,
#if HAVE_GSTREAMER_READER
	&v4l2cuse_gst_ops,
	&v4l2cuse_uri_ops,
#endif
};

const struct v4l2cuse_source_ops *
v4l2cuse_source_by_index(unsigned int index)
{
	return index < ARRAY_SIZE(registry) ? registry[index] : NULL;
}

const struct v4l2cuse_source_ops *
v4l2cuse_source_lookup(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(registry); i++) {
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	}
	return NULL;
}

static char *
registry_known_names(void)
{
	GString *s = g_string_new(NULL);

	for (size_t i = 0; i < ARRAY_SIZE(registry); i++)
		g_string_append_printf(s, "%s%s", i ? ", " : "", registry[i]->name);
	return g_string_free(s, FALSE);
}

/* Specs (and so names, values, paths in messages) may hold control characters. */
static char *
registry_one_line(char *msg)
{
	return g_strdelimit(msg, "\n\r\t\v\f\x1b", '?');
}

int
v4l2cuse_source_create(const char *spec, struct v4l2cuse_source **ret_src,
		       char **ret_error)
{
	const struct v4l2cuse_source_ops *ops;
	g_autofree char *name = NULL;
	g_autofree char *error = NULL;
	struct v4l2cuse_source *src = NULL;
	const char *args;
	size_t len;
	int r;

	if (!spec || !*spec)
		spec = "pattern";
	len = strcspn(spec, ":,");
	name = g_strndup(spec, len);
	args = spec + len;
	if (*args == ':')
		args++;

	ops = v4l2cuse_source_lookup(name);
	if (!ops) {
		g_autofree char *known = registry_known_names();

		if (ret_error)
			*ret_error = registry_one_line(
				g_strdup_printf("unknown source '%s' (known: %s)", name, known));
		return -ENOENT;
	}
	if (ops->abi != V4L2CUSE_SOURCE_ABI) {
		if (ret_error)
			*ret_error = g_strdup_printf("bug: source '%s' has ABI %u, expected %u",
						     name, ops->abi, V4L2CUSE_SOURCE_ABI);
		return -EINVAL;
	}

	r = ops->create(args, &src, &error);
	if (r < 0) {
		if (ret_error)
			*ret_error = registry_one_line(error ? g_steal_pointer(&error)
							     : g_strdup_printf("%s: %s", name,
									       g_strerror(-r)));
		return r;
	}
	if (!src || src->ops != ops) {
		if (ret_error)
			*ret_error = g_strdup_printf("bug: source '%s' returned no source", name);
		v4l2cuse_source_destroy(src);
		return -EINVAL;
	}
	*ret_src = src;
	return 0;
}

char *
v4l2cuse_source_input_key(const char *spec)
{
	const struct v4l2cuse_source_ops *ops;
	g_autofree char *name = NULL, *arg = NULL;
	const char *args, *rest;
	struct stat st;
	size_t len;

	if (!spec || !*spec)
		return NULL;
	len = strcspn(spec, ":,");
	name = g_strndup(spec, len);
	ops = v4l2cuse_source_lookup(name);
	if (!ops || !(ops->flags & V4L2CUSE_SOURCE_INPUT) || spec[len] != ':')
		return NULL;
	args = spec + len + 1;
	rest = args + strcspn(args, ",");
	arg = g_strndup(args, (size_t)(rest - args));
	if (!*arg || stat(arg, &st) < 0)
		return NULL;
	if (S_ISCHR(st.st_mode))
		return g_strdup_printf("%s:c%u:%u%s", name, major(st.st_rdev), minor(st.st_rdev),
				       rest);
	if (S_ISREG(st.st_mode))
		return g_strdup_printf("%s:f%ju:%ju%s", name, (uintmax_t)st.st_dev,
				       (uintmax_t)st.st_ino, rest);
	return NULL;
}

static uint64_t
registry_distance(uint32_t a, uint32_t b)
{
	return a > b ? (uint64_t)a - b : (uint64_t)b - a;
}

bool
v4l2cuse_source_offers_format(struct v4l2cuse_source *src, uint32_t fourcc)
{
	uint32_t f;

	for (unsigned int i = 0; src->ops->enum_format(src, i, &f) == 0; i++)
		if (f == fourcc)
			return true;
	return false;
}

bool
v4l2cuse_source_offers_size(struct v4l2cuse_source *src, uint32_t fourcc, uint32_t width,
			    uint32_t height)
{
	uint32_t w, h;

	for (unsigned int i = 0; src->ops->enum_framesize(src, fourcc, i, &w, &h) == 0; i++)
		if (w == width && h == height)
			return true;
	return false;
}

int
v4l2cuse_source_negotiate_default(struct v4l2cuse_source *src,
				  struct v4l2_pix_format *pix)
{
	struct v4l2_pix_format out = *pix;
	uint32_t fourcc, first = 0, w, h;
	uint64_t best = UINT64_MAX;
	bool found = false;
	int r;

	for (unsigned int i = 0; src->ops->enum_format(src, i, &fourcc) == 0; i++) {
		if (i == 0)
			first = fourcc;
		if (fourcc == pix->pixelformat) {
			found = true;
			break;
		}
	}
	if (!found && !first)
		return -EINVAL;
	out.pixelformat = found ? pix->pixelformat : first;

	found = false;
	for (unsigned int i = 0;
	     src->ops->enum_framesize(src, out.pixelformat, i, &w, &h) == 0; i++) {
		uint64_t d = registry_distance(w, pix->width) + registry_distance(h, pix->height);

		if (d < best) {
			best = d;
			out.width = w;
			out.height = h;
			found = true;
		}
	}
	if (!found) {
		out.width = CLAMP_VAL(pix->width, 1, V4L2CUSE_MAX_WIDTH);
		out.height = CLAMP_VAL(pix->height, 1, V4L2CUSE_MAX_HEIGHT);
	}

	r = v4l2cuse_format_fill(&out);
	if (r < 0)
		return r;
	*pix = out;
	return 0;
}
