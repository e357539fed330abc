/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>

#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "modes.h"

bool
modes_has_format(const struct modes *m, uint32_t fourcc)
{
	for (unsigned int i = 0; i < m->n_formats; i++) {
		if (m->formats[i] == fourcc)
			return true;
	}
	return false;
}

/* The index of a size or interval in its list, the list's length if absent. */
static unsigned int
modes_find_size(const struct modes *m, uint32_t width, uint32_t height)
{
	unsigned int i = 0;

	while (i < m->n_sizes && (m->sizes[i].width != width || m->sizes[i].height != height))
		i++;
	return i;
}

static unsigned int
modes_find_interval(const struct modes *m, struct v4l2_fract iv)
{
	unsigned int i = 0;

	while (i < m->n_intervals &&
	       (uint64_t)m->intervals[i].numerator * iv.denominator !=
	       (uint64_t)iv.numerator * m->intervals[i].denominator)
		i++;
	return i;
}

static bool
modes_has_size(const struct modes *m, uint32_t width, uint32_t height)
{
	return modes_find_size(m, width, height) < m->n_sizes;
}

static bool
modes_has_interval(const struct modes *m, struct v4l2_fract iv)
{
	return modes_find_interval(m, iv) < m->n_intervals;
}

bool
modes_has(const struct modes *m, uint32_t fourcc, uint32_t width, uint32_t height)
{
	return modes_has_format(m, fourcc) && modes_has_size(m, width, height);
}

bool
modes_add_format(struct modes *m, uint32_t fourcc)
{
	if (modes_has_format(m, fourcc) || m->n_formats == MODES_MAX_FORMATS)
		return false;
	m->formats[m->n_formats++] = fourcc;
	return true;
}

void
modes_add_output_formats(struct modes *m)
{
	const struct v4l2cuse_format_info *fi;

	for (unsigned int i = 0; (fi = v4l2cuse_format_by_index(i)); i++)
		modes_add_format(m, fi->fourcc);
}

bool
modes_add_size(struct modes *m, uint32_t width, uint32_t height)
{
	if (modes_has_size(m, width, height) || m->n_sizes == MODES_MAX_SIZES)
		return false;
	m->sizes[m->n_sizes++] = (struct modes_size){ width, height };
	return true;
}

bool
modes_add_interval(struct modes *m, struct v4l2_fract interval)
{
	if (modes_has_interval(m, interval) || m->n_intervals == MODES_MAX_RATES)
		return false;
	m->intervals[m->n_intervals++] = interval;
	return true;
}

/* Move entry @i (== *n: a new one, @item) of @list to the front. */
static bool
modes_prepend(void *list, size_t item_size, unsigned int *n, unsigned int max, unsigned int i,
	      const void *item)
{
	uint8_t *l = list;

	if (i == *n) {
		if (*n == max)
			return false;
		(*n)++;
	}
	memmove(l + item_size, l, item_size * i);
	memcpy(l, item, item_size);
	return true;
}

bool
modes_prepend_size(struct modes *m, uint32_t width, uint32_t height)
{
	const struct modes_size sz = { width, height };

	return modes_prepend(m->sizes, sizeof(sz), &m->n_sizes, MODES_MAX_SIZES,
			     modes_find_size(m, width, height), &sz);
}

bool
modes_prepend_interval(struct modes *m, struct v4l2_fract iv)
{
	return modes_prepend(m->intervals, sizeof(iv), &m->n_intervals, MODES_MAX_RATES,
			     modes_find_interval(m, iv), &iv);
}

int
modes_enum_format(const struct modes *m, unsigned int index, uint32_t *ret_fourcc)
{
	if (index >= m->n_formats)
		return -EINVAL;
	*ret_fourcc = m->formats[index];
	return 0;
}

int
modes_enum_framesize(const struct modes *m, uint32_t fourcc, unsigned int index,
		     uint32_t *ret_width, uint32_t *ret_height)
{
	if (!modes_has_format(m, fourcc) || index >= m->n_sizes)
		return -EINVAL;
	*ret_width = m->sizes[index].width;
	*ret_height = m->sizes[index].height;
	return 0;
}

int
modes_enum_frameinterval(const struct modes *m, uint32_t fourcc, uint32_t width,
			 uint32_t height, unsigned int index, struct v4l2_fract *ret)
{
	if (!modes_has(m, fourcc, width, height) || index >= m->n_intervals)
		return -EINVAL;
	*ret = m->intervals[index];
	return 0;
}

/* --- option syntax ------------------------------------------------------ */

char **
modes_split_list(const char *value)
{
	g_autofree char *copy = g_strdup(value);

	g_strdelimit(copy, ";", '+');
	return g_strsplit(copy, "+", -1);
}

bool
modes_parse_size(const char *s, uint32_t *ret_width, uint32_t *ret_height)
{
	unsigned int w, h;
	char tail;

	if (sscanf(s, "%ux%u%c", &w, &h, &tail) != 2 || w < 1 || h < 1 ||
	    w > V4L2CUSE_MAX_WIDTH || h > V4L2CUSE_MAX_HEIGHT)
		return false;
	*ret_width = w;
	*ret_height = h;
	return true;
}

bool
modes_parse_rate(const char *s, struct v4l2_fract *ret_interval)
{
	unsigned int num, den = 1;
	char tail;
	int n = sscanf(s, "%u/%u%c", &num, &den, &tail);

	if (n == 1 && strchr(s, '/'))
		return false;
	if ((n != 1 && n != 2) || num == 0 || den == 0 || num > 1000000 || den > 1000000 ||
	    num > 1000ull * den)
		return false;
	*ret_interval = (struct v4l2_fract){ den, num };
	return true;
}

uint32_t
modes_fourcc_from(const char *s, enum v4l2cuse_format_set set)
{
	const struct v4l2cuse_format_info *fi;

	if (strlen(s) != 4)
		return 0;
	for (unsigned int i = 0; (fi = v4l2cuse_format_lookup_by_index(i)); i++) {
		if (v4l2cuse_format_in_set(fi, set) &&
		    g_ascii_strncasecmp(s, (const char *)&fi->fourcc, 4) == 0)
			return fi->fourcc;
	}
	return 0;
}

char *
modes_fourcc_list(enum v4l2cuse_format_set set)
{
	const struct v4l2cuse_format_info *fi;
	GString *s = g_string_new(NULL);

	for (unsigned int i = 0; (fi = v4l2cuse_format_lookup_by_index(i)); i++) {
		if (v4l2cuse_format_in_set(fi, set))
			g_string_append_printf(s, "%s%.4s", s->len ? " " : "",
					       (const char *)&fi->fourcc);
	}
	return g_string_free(s, FALSE);
}

/*
 * The list parsers: each item goes through @parse_item, which appends it
 * or says why not in one line. An empty list is an error too.
 */
typedef int (*modes_item_fn)(struct modes *m, const struct v4l2cuse_opts *o, const char *item,
			     const void *data, char **ret_error);

static int
modes_parse_list(struct modes *m, const struct v4l2cuse_opts *o, const char *key,
		 const char *value, unsigned int *count, modes_item_fn parse_item,
		 const void *data, char **ret_error)
{
	g_auto(GStrv) items = modes_split_list(value);
	int r;

	*count = 0;
	for (guint i = 0; items[i]; i++) {
		if (!*items[i])
			continue;
		r = parse_item(m, o, items[i], data, ret_error);
		if (r < 0)
			return r;
	}
	if (!*count) {
		*ret_error = v4l2cuse_opts_error(o, "option '%s': nothing given", key);
		return -EINVAL;
	}
	return 0;
}

/* Appended, or why not: "given twice" or "more than N". */
static int
modes_added(bool added, bool present, const struct v4l2cuse_opts *o, const char *key,
	    const char *item, unsigned int max, char **ret_error)
{
	if (added)
		return 0;
	if (present)
		*ret_error = v4l2cuse_opts_error(o, "option '%s': '%s' given twice", key, item);
	else
		*ret_error = v4l2cuse_opts_error(o, "option '%s': more than %u items", key, max);
	return -EINVAL;
}

static int
modes_format_item(struct modes *m, const struct v4l2cuse_opts *o, const char *item,
		  const void *data, char **ret_error)
{
	uint32_t f = modes_fourcc_from(item, V4L2CUSE_FORMATS_OUTPUT);

	if (!f) {
		g_autofree char *names = modes_fourcc_list(V4L2CUSE_FORMATS_OUTPUT);

		*ret_error = v4l2cuse_opts_error(o, "option 'formats': unknown format '%s' "
						 "(known: %s)", item, names);
		return -EINVAL;
	}
	return modes_added(modes_add_format(m, f), modes_has_format(m, f), o, "formats", item,
			   MODES_MAX_FORMATS, ret_error);
}

static int
modes_size_item(struct modes *m, const struct v4l2cuse_opts *o, const char *item,
		const void *data, char **ret_error)
{
	uint32_t w, h;

	if (!modes_parse_size(item, &w, &h) || w < 2 || h < 2 || (w & 1) || (h & 1)) {
		*ret_error = v4l2cuse_opts_error(o, "option 'sizes': '%s' is not WxH with even W "
						 "and H in 2..%u", item, V4L2CUSE_MAX_WIDTH);
		return -EINVAL;
	}
	return modes_added(modes_add_size(m, w, h), modes_has_size(m, w, h), o, "sizes", item,
			   MODES_MAX_SIZES, ret_error);
}

static int
modes_rate_item(struct modes *m, const struct v4l2cuse_opts *o, const char *item,
		const void *data, char **ret_error)
{
	struct v4l2_fract iv;

	if (!modes_parse_rate(item, &iv)) {
		*ret_error = v4l2cuse_opts_error(o, "option 'fps': '%s' is not a frame rate N or "
						 "N/D (at most 1000 fps)", item);
		return -EINVAL;
	}
	return modes_added(modes_add_interval(m, iv), modes_has_interval(m, iv), o, "fps", item,
			   MODES_MAX_RATES, ret_error);
}

int
modes_parse_formats(struct modes *m, const struct v4l2cuse_opts *o, const char *value,
		    char **ret_error)
{
	return modes_parse_list(m, o, "formats", value, &m->n_formats, modes_format_item, NULL,
				ret_error);
}

int
modes_parse_sizes(struct modes *m, const struct v4l2cuse_opts *o, const char *value,
		  char **ret_error)
{
	return modes_parse_list(m, o, "sizes", value, &m->n_sizes, modes_size_item, NULL,
				ret_error);
}

int
modes_parse_rates(struct modes *m, const struct v4l2cuse_opts *o, const char *value,
		  char **ret_error)
{
	return modes_parse_list(m, o, "fps", value, &m->n_intervals, modes_rate_item, NULL,
				ret_error);
}
