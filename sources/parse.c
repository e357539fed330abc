/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Sizes, frame rates, fourccs, lists and booleans (include/v4l2cuse/parse.h).
 */

#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include <glib.h>

#include "v4l2cuse/parse.h"

/* -EINVAL, and the message in *ret_error unless that is NULL. */
static int
parse_fail(char **ret_error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
parse_fail(char **ret_error, const char *fmt, ...)
{
	va_list ap;

	if (ret_error) {
		va_start(ap, fmt);
		*ret_error = g_strdup_vprintf(fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Decimal digits only (no sign, no space), at least one, 0..UINT32_MAX. */
static bool
parse_u32(const char *s, size_t len, uint32_t *ret)
{
	uint64_t v = 0;

	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!g_ascii_isdigit(s[i]))
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > UINT32_MAX)
			return false;
	}
	*ret = (uint32_t)v;
	return true;
}

/* "AxB" or "A/B" (@sep), or just "A" when @b_def is not NULL. */
static bool
parse_pair(const char *s, char sep, uint32_t *ret_a, uint32_t *ret_b, const uint32_t *b_def)
{
	const char *p = strchr(s, sep);

	if (!p) {
		if (!b_def)
			return false;
		*ret_b = *b_def;
		return parse_u32(s, strlen(s), ret_a);
	}
	return parse_u32(s, (size_t)(p - s), ret_a) && parse_u32(p + 1, strlen(p + 1), ret_b);
}

int
v4l2cuse_parse_size(const char *s, uint32_t *ret_width, uint32_t *ret_height, char **ret_error)
{
	uint32_t w, h;

	if (!parse_pair(s, 'x', &w, &h, NULL) || w == 0 || h == 0 || w > V4L2CUSE_MAX_WIDTH ||
	    h > V4L2CUSE_MAX_HEIGHT)
		return parse_fail(ret_error, "'%s' is not a valid size (WIDTHxHEIGHT, 1..%u each)",
				  s, V4L2CUSE_MAX_WIDTH);
	*ret_width = w;
	*ret_height = h;
	return 0;
}

bool
v4l2cuse_interval_valid(struct v4l2_fract iv)
{
	return iv.numerator && iv.denominator &&
	       iv.denominator <= (uint64_t)V4L2CUSE_MAX_FPS * iv.numerator;
}

int
v4l2cuse_parse_rate(const char *s, struct v4l2_fract *ret_interval, char **ret_error)
{
	static const uint32_t one = 1;
	uint32_t num, den;

	/* N/D frames per second is a frame interval of D/N seconds. */
	if (!parse_pair(s, '/', &num, &den, &one) ||
	    !v4l2cuse_interval_valid((struct v4l2_fract){ den, num }))
		return parse_fail(ret_error, "'%s' is not a frame rate (N or N/D frames per "
				  "second, up to %u)", s, V4L2CUSE_MAX_FPS);
	*ret_interval = (struct v4l2_fract){ .numerator = den, .denominator = num };
	return 0;
}

/* "YUYV UYVY ...": the formats of @set (g_free). */
static char *
parse_fourcc_names(enum v4l2cuse_format_set set)
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

int
v4l2cuse_parse_fourcc_of(const char *s, enum v4l2cuse_format_set set, uint32_t *ret,
			 char **ret_error)
{
	const struct v4l2cuse_format_info *fi;
	char f[4] = { ' ', ' ', ' ', ' ' };
	g_autofree char *known = NULL;
	size_t n = strlen(s);

	if (n >= 1 && n <= 4) {
		memcpy(f, s, n);
		for (unsigned int i = 0; (fi = v4l2cuse_format_lookup_by_index(i)); i++) {
			if (v4l2cuse_format_in_set(fi, set) &&
			    g_ascii_strncasecmp(f, (const char *)&fi->fourcc, 4) == 0) {
				*ret = fi->fourcc;
				return 0;
			}
		}
	}
	known = parse_fourcc_names(set);
	return parse_fail(ret_error, "unknown pixel format '%s' (known: %s)", s, known);
}

int
v4l2cuse_parse_fourcc(const char *s, uint32_t *ret, char **ret_error)
{
	return v4l2cuse_parse_fourcc_of(s, V4L2CUSE_FORMATS_OUTPUT, ret, ret_error);
}

int
v4l2cuse_parse_bool(const char *s, bool *ret, char **ret_error)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < G_N_ELEMENTS(yes); i++) {
		if (g_ascii_strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (g_ascii_strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return parse_fail(ret_error, "'%s' is not a boolean (true or false)", s);
}

int
v4l2cuse_split_list(const char *s, unsigned int max, char ***ret_items, char **ret_error)
{
	g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func(g_free);
	const char *p = s;

	while (*p) {
		size_t n = strcspn(p, ",;+ \t");

		if (n) {
			if (a->len >= max)
				return parse_fail(ret_error, "more than %u entries", max);
			g_ptr_array_add(a, g_strndup(p, n));
		}
		p += n;
		if (*p)
			p++;
	}
	if (!a->len)
		return parse_fail(ret_error, "empty list");
	g_ptr_array_add(a, NULL);
	*ret_items = (char **)g_ptr_array_free(g_steal_pointer(&a), FALSE);
	return 0;
}

/*
 * The list parsers: each item through @parse into @out[i] (items of
 * @item_size bytes), refused if @same finds it among the earlier ones.
 */
typedef int (*parse_item_fn)(const char *item, void *ret, char **ret_error);
typedef bool (*parse_same_fn)(const void *a, const void *b);

static int
parse_list(const char *s, void *out, size_t item_size, parse_item_fn parse, parse_same_fn same,
	   unsigned int *ret_n, char **ret_error)
{
	uint8_t o[V4L2CUSE_MAX_LIST * sizeof(struct v4l2_fract)];	/* the largest item */
	g_auto(GStrv) items = NULL;
	unsigned int n;
	int r;

	g_assert(item_size <= sizeof(struct v4l2_fract));
	r = v4l2cuse_split_list(s, V4L2CUSE_MAX_LIST, &items, ret_error);
	if (r < 0)
		return r;
	for (n = 0; items[n]; n++) {
		r = parse(items[n], o + item_size * n, ret_error);
		if (r < 0)
			return r;
		for (unsigned int j = 0; j < n; j++) {
			if (same(o + item_size * j, o + item_size * n))
				return parse_fail(ret_error, "'%s' is listed twice", items[n]);
		}
	}
	/* Nothing changes on failure. */
	memcpy(out, o, item_size * n);
	*ret_n = n;
	return 0;
}

static int
parse_fourcc_item(const char *item, void *ret, char **ret_error)
{
	return v4l2cuse_parse_fourcc(item, ret, ret_error);
}

static bool
same_fourcc(const void *a, const void *b)
{
	return *(const uint32_t *)a == *(const uint32_t *)b;
}

int
v4l2cuse_parse_fourccs(const char *s, uint32_t *out, unsigned int *ret_n, char **ret_error)
{
	return parse_list(s, out, sizeof(*out), parse_fourcc_item, same_fourcc, ret_n, ret_error);
}

static int
parse_size_item(const char *item, void *ret, char **ret_error)
{
	struct v4l2cuse_size *sz = ret;

	return v4l2cuse_parse_size(item, &sz->width, &sz->height, ret_error);
}

static bool
same_size(const void *a, const void *b)
{
	const struct v4l2cuse_size *x = a, *y = b;

	return x->width == y->width && x->height == y->height;
}

int
v4l2cuse_parse_sizes(const char *s, struct v4l2cuse_size *out, unsigned int *ret_n,
		     char **ret_error)
{
	return parse_list(s, out, sizeof(*out), parse_size_item, same_size, ret_n, ret_error);
}

static int
parse_rate_item(const char *item, void *ret, char **ret_error)
{
	return v4l2cuse_parse_rate(item, ret, ret_error);
}

static bool
same_rate(const void *a, const void *b)
{
	const struct v4l2_fract *x = a, *y = b;

	return (uint64_t)x->numerator * y->denominator == (uint64_t)y->numerator * x->denominator;
}

int
v4l2cuse_parse_rates(const char *s, struct v4l2_fract *out, unsigned int *ret_n,
		     char **ret_error)
{
	return parse_list(s, out, sizeof(*out), parse_rate_item, same_rate, ret_n, ret_error);
}
