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
v4l2cuse_modes_has_format(const struct v4l2cuse_modes *m, uint32_t fourcc)
{
	for (unsigned int i = 0; i < m->n_formats; i++) {
		if (m->formats[i] == fourcc)
			return true;
	}
	return false;
}

/* The index of a size or interval in its list, the list's length if absent. */
static unsigned int
modes_find_size(const struct v4l2cuse_modes *m, uint32_t width, uint32_t height)
{
	unsigned int i = 0;

	while (i < m->n_sizes && (m->sizes[i].width != width || m->sizes[i].height != height))
		i++;
	return i;
}

static unsigned int
modes_find_interval(const struct v4l2cuse_modes *m, struct v4l2_fract iv)
{
	unsigned int i = 0;

	while (i < m->n_intervals &&
	       (uint64_t)m->intervals[i].numerator * iv.denominator !=
	       (uint64_t)iv.numerator * m->intervals[i].denominator)
		i++;
	return i;
}

static bool
modes_has_size(const struct v4l2cuse_modes *m, uint32_t width, uint32_t height)
{
	return modes_find_size(m, width, height) < m->n_sizes;
}

static bool
modes_has_interval(const struct v4l2cuse_modes *m, struct v4l2_fract iv)
{
	return modes_find_interval(m, iv) < m->n_intervals;
}

bool
v4l2cuse_modes_has(const struct v4l2cuse_modes *m, uint32_t fourcc, uint32_t width, uint32_t height)
{
	return v4l2cuse_modes_has_format(m, fourcc) && modes_has_size(m, width, height);
}

bool
v4l2cuse_modes_add_format(struct v4l2cuse_modes *m, uint32_t fourcc)
{
	if (v4l2cuse_modes_has_format(m, fourcc) || m->n_formats == V4L2CUSE_MAX_LIST)
		return false;
	m->formats[m->n_formats++] = fourcc;
	return true;
}

void
v4l2cuse_modes_add_output_formats(struct v4l2cuse_modes *m)
{
	const struct v4l2cuse_format_info *fi;

	for (unsigned int i = 0; (fi = v4l2cuse_format_by_index(i)); i++)
		v4l2cuse_modes_add_format(m, fi->fourcc);
}

bool
v4l2cuse_modes_add_size(struct v4l2cuse_modes *m, uint32_t width, uint32_t height)
{
	if (modes_has_size(m, width, height) || m->n_sizes == V4L2CUSE_MAX_LIST)
		return false;
	m->sizes[m->n_sizes++] = (struct v4l2cuse_size){ width, height };
	return true;
}

bool
v4l2cuse_modes_add_interval(struct v4l2cuse_modes *m, struct v4l2_fract interval)
{
	if (modes_has_interval(m, interval) || m->n_intervals == V4L2CUSE_MAX_LIST)
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
v4l2cuse_modes_prepend_size(struct v4l2cuse_modes *m, uint32_t width, uint32_t height)
{
	const struct v4l2cuse_size sz = { width, height };

	return modes_prepend(m->sizes, sizeof(sz), &m->n_sizes, V4L2CUSE_MAX_LIST,
			     modes_find_size(m, width, height), &sz);
}

bool
v4l2cuse_modes_prepend_interval(struct v4l2cuse_modes *m, struct v4l2_fract iv)
{
	return modes_prepend(m->intervals, sizeof(iv), &m->n_intervals, V4L2CUSE_MAX_LIST,
			     modes_find_interval(m, iv), &iv);
}

int
v4l2cuse_modes_stream(const struct v4l2_pix_format *pix, const struct v4l2_fract *interval,
		      struct v4l2_fract def, struct v4l2_pix_format *ret_pix,
		      struct v4l2_fract *ret_interval)
{
	struct v4l2_pix_format f = {
		.pixelformat = pix->pixelformat, .width = pix->width, .height = pix->height,
	};
	int r = v4l2cuse_format_fill(&f);

	if (r < 0)
		return r;
	*ret_pix = f;
	*ret_interval = interval && interval->numerator && interval->denominator ? *interval : def;
	return 0;
}

int
v4l2cuse_modes_enum_format(const struct v4l2cuse_modes *m, unsigned int index, uint32_t *ret_fourcc)
{
	if (index >= m->n_formats)
		return -EINVAL;
	*ret_fourcc = m->formats[index];
	return 0;
}

int
v4l2cuse_modes_enum_framesize(const struct v4l2cuse_modes *m, uint32_t fourcc, unsigned int index,
			      uint32_t *ret_width, uint32_t *ret_height)
{
	if (!v4l2cuse_modes_has_format(m, fourcc) || index >= m->n_sizes)
		return -EINVAL;
	*ret_width = m->sizes[index].width;
	*ret_height = m->sizes[index].height;
	return 0;
}

int
v4l2cuse_modes_enum_frameinterval(const struct v4l2cuse_modes *m, uint32_t fourcc, uint32_t width,
				  uint32_t height, unsigned int index, struct v4l2_fract *ret)
{
	if (!v4l2cuse_modes_has(m, fourcc, width, height) || index >= m->n_intervals)
		return -EINVAL;
	*ret = m->intervals[index];
	return 0;
}

static const struct v4l2cuse_modes *
modes_of(struct v4l2cuse_source *src)
{
	return &((struct v4l2cuse_modes_source *)src)->modes;
}

int
v4l2cuse_modes_source_enum_format(struct v4l2cuse_source *src, unsigned int index,
				  uint32_t *ret_fourcc)
{
	return v4l2cuse_modes_enum_format(modes_of(src), index, ret_fourcc);
}

int
v4l2cuse_modes_source_enum_framesize(struct v4l2cuse_source *src, uint32_t fourcc,
				     unsigned int index, uint32_t *ret_width, uint32_t *ret_height)
{
	return v4l2cuse_modes_enum_framesize(modes_of(src), fourcc, index, ret_width, ret_height);
}

int
v4l2cuse_modes_source_enum_frameinterval(struct v4l2cuse_source *src, uint32_t fourcc,
					 uint32_t width, uint32_t height, unsigned int index,
					 struct v4l2_fract *ret)
{
	return v4l2cuse_modes_enum_frameinterval(modes_of(src), fourcc, width, height, index, ret);
}

/* --- options ----------------------------------------------------------- */

int
v4l2cuse_modes_option_error(const struct v4l2cuse_opts *o, const char *key, char *msg,
			    char **ret_error)
{
	*ret_error = v4l2cuse_opts_error(o, "option '%s': %s", key, msg);
	g_free(msg);
	return -EINVAL;
}

int
v4l2cuse_modes_parse_formats(struct v4l2cuse_modes *m, const struct v4l2cuse_opts *o,
			     const char *value, char **ret_error)
{
	char *msg = NULL;

	if (v4l2cuse_parse_fourccs(value, m->formats, &m->n_formats, &msg) < 0)
		return v4l2cuse_modes_option_error(o, "formats", msg, ret_error);
	return 0;
}

int
v4l2cuse_modes_parse_sizes(struct v4l2cuse_modes *m, const struct v4l2cuse_opts *o,
			   const char *value, char **ret_error)
{
	struct v4l2cuse_size sizes[V4L2CUSE_MAX_LIST];
	char *msg = NULL;
	unsigned int n;

	if (v4l2cuse_parse_sizes(value, sizes, &n, &msg) < 0)
		return v4l2cuse_modes_option_error(o, "sizes", msg, ret_error);
	for (unsigned int i = 0; i < n; i++) {
		if ((sizes[i].width | sizes[i].height) & 1) {
			msg = g_strdup_printf("'%ux%u' is not an even size (4:2:x formats "
					      "need one)", sizes[i].width, sizes[i].height);
			return v4l2cuse_modes_option_error(o, "sizes", msg, ret_error);
		}
	}
	memcpy(m->sizes, sizes, sizeof(sizes[0]) * n);
	m->n_sizes = n;
	return 0;
}

int
v4l2cuse_modes_parse_rates(struct v4l2cuse_modes *m, const struct v4l2cuse_opts *o,
			   const char *value, char **ret_error)
{
	char *msg = NULL;

	if (v4l2cuse_parse_rates(value, m->intervals, &m->n_intervals, &msg) < 0)
		return v4l2cuse_modes_option_error(o, "fps", msg, ret_error);
	return 0;
}

int
v4l2cuse_modes_from_options(struct v4l2cuse_modes *m, const struct v4l2cuse_opts *o,
			    char **ret_error)
{
	const char *v;

	v4l2cuse_modes_add_output_formats(m);
	v4l2cuse_modes_add_size(m, 320, 240);
	v4l2cuse_modes_add_size(m, 640, 480);
	v4l2cuse_modes_add_size(m, 1280, 720);
	v4l2cuse_modes_add_size(m, 1920, 1080);
	v4l2cuse_modes_add_interval(m, (struct v4l2_fract){ 1, 30 });
	v4l2cuse_modes_add_interval(m, (struct v4l2_fract){ 1, 25 });
	v4l2cuse_modes_add_interval(m, (struct v4l2_fract){ 1, 15 });
	if ((v = v4l2cuse_opts_get_str(o, "sizes", NULL)) &&
	    v4l2cuse_modes_parse_sizes(m, o, v, ret_error) < 0)
		return -EINVAL;
	if ((v = v4l2cuse_opts_get_str(o, "fps", NULL)) &&
	    v4l2cuse_modes_parse_rates(m, o, v, ret_error) < 0)
		return -EINVAL;
	if ((v = v4l2cuse_opts_get_str(o, "formats", NULL)) &&
	    v4l2cuse_modes_parse_formats(m, o, v, ret_error) < 0)
		return -EINVAL;
	return 0;
}
