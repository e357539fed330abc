/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "pattern" source: vivid-style test patterns (tpg.c), with picture
 * controls, motion, a text overlay, MJPEG and error injection.
 *
 * Spec: pattern[:NAME][,option=value...], e.g. "pattern:smpte,hscroll=2".
 *
 * NAME (default bars75), also the "Test Pattern" menu control (index):
 *   0 bars75 "75% Colorbar"        12 checkers1   "1x1 Checkers"
 *   1 bars100 "100% Colorbar"      13 rgcheckers2 "2x2 Red/Green Checkers"
 *   2 csc "CSC Colorbar"           14 rgcheckers1 "1x1 Red/Green Checkers"
 *   3 hbars "Horizontal 100% ..."  15 hlines "Alternating Hor Lines"
 *   4 squares "100% Color Squares" 16 vlines "Alternating Vert Lines"
 *   5 black  6 white  7 red        17 cross1  18 cross2  19 cross10
 *   8 green  9 blue                20 ramp "Gray Ramp"   21 noise
 *  10 checkers16  11 checkers2     22 smpte "SMPTE RP 219 Colorbar"
 *  (geometry of each: sources/tpg.c)
 *
 * Options:
 *   sizes=WxH+WxH...  discrete sizes, even, up to 16 (default
 *                     320x240+640x480+1280x720+1920x1080; ';' works too)
 *   fps=N[/D]+...     frame rates, up to 16, at most 240 fps each (default
 *                     30+25+15)
 *   formats=F+F...    fourccs to offer, in order (default YUYV UYVY YVYU
 *                     NV12 NV21 YU12 YV12 RGB3 BGR3 BX24 XR24 RGBP GREY MJPG)
 *   hscroll=N vscroll=N  motion in pixels per frame (default 0: static;
 *                     4:2:x formats move in steps of 2 pixels)
 *   box=1             a bouncing square (min(W,H)/8, 4 px/frame across,
 *                     2 px/frame down) in the contrast colour (green)
 *   border=1          a 2 pixel border in the contrast colour
 *   overlay=1|0|ITEM+ITEM  text overlay (default 1 = counter+time+format
 *                     +label): "#0000000042", time since the first frame
 *                     "00:00:01.400", "640x480 YUYV 30 fps", the label.
 *                     Top-left, 12x16 cells; see
 *                     v4l2cuse_testpattern_overlay_rect(). Not affected by
 *                     flips or picture controls.
 *   label=TEXT        label line (default "v4l2cuse"; up to 24 chars shown)
 *   quality=1..100    MJPEG quality (default 80)
 *   brightness= contrast= saturation= hue= hflip= vflip=  initial values of
 *                     the controls (also their defaults)
 * Error injection (off by default; counted in produce() calls since start):
 *   fail_start=N      the next N start() calls fail with -EIO
 *   fail_produce_every=N  every Nth produce() returns -EIO
 *   drop_every=N      every Nth produce() returns -ENODATA (dropped frame)
 *   error_flag_every=N  every Nth frame is delivered with frame->error set
 *   vanish_after=N    after N produce() calls, -ENODEV for good (start too)
 *
 * Pixel values (tpg.c): colours are R'G'B' converted with BT.601 (height <
 * 720) or BT.709 (height >= 720) to limited-range Y'CbCr; RGB formats are
 * full-range R'G'B'; GREY is full-range BT.601 luma; MJPEG is full-range
 * BT.601 4:2:2 (JFIF). 75% colour bars at 640x480 YUYV, bar i spanning
 * columns [80 i, 80 i + 80), all rows (outside the overlay):
 *   bar  colour   Y    Cb   Cr
 *    0   white   180  128  128
 *    1   yellow  161   44  142
 *    2   cyan    131  156   44
 *    3   green   112   72   58
 *    4   magenta  84  184  198
 *    5   red      65  100  212
 *    6   blue     35  212  114
 *    7   black    16  128  128
 * At 1280x720 (BT.709): white 180/128/128, yellow 168/44/136, cyan 145/147/44,
 * green 133/63/52, magenta 63/193/204, red 51/109/212, blue 28/212/120,
 * black 16/128/128. The unit tests pin these.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "mjpeg.h"
#include "modes.h"
#include "tpg.h"

#define TP_LABEL_MAX	V4L2CUSE_TPG_TEXT_COLS

enum {
	TP_CTRL_BRIGHTNESS,
	TP_CTRL_CONTRAST,
	TP_CTRL_SATURATION,
	TP_CTRL_HUE,
	TP_CTRL_HFLIP,
	TP_CTRL_VFLIP,
	TP_CTRL_PATTERN,
	TP_N_CTRLS
};

enum {
	TP_OVL_COUNTER = 1 << 0,
	TP_OVL_TIME = 1 << 1,
	TP_OVL_FORMAT = 1 << 2,
	TP_OVL_LABEL = 1 << 3,
	TP_OVL_ALL = 0xf,
};

static const struct v4l2cuse_control tp_controls[TP_N_CTRLS] = {
	[TP_CTRL_BRIGHTNESS] = {
		.id = V4L2_CID_BRIGHTNESS, .type = V4L2_CTRL_TYPE_INTEGER,
		.name = "Brightness", .minimum = 0, .maximum = 255, .step = 1,
		.default_value = 128, .flags = V4L2_CTRL_FLAG_SLIDER,
	},
	[TP_CTRL_CONTRAST] = {
		.id = V4L2_CID_CONTRAST, .type = V4L2_CTRL_TYPE_INTEGER,
		.name = "Contrast", .minimum = 0, .maximum = 255, .step = 1,
		.default_value = 128, .flags = V4L2_CTRL_FLAG_SLIDER,
	},
	[TP_CTRL_SATURATION] = {
		.id = V4L2_CID_SATURATION, .type = V4L2_CTRL_TYPE_INTEGER,
		.name = "Saturation", .minimum = 0, .maximum = 255, .step = 1,
		.default_value = 128, .flags = V4L2_CTRL_FLAG_SLIDER,
	},
	[TP_CTRL_HUE] = {
		.id = V4L2_CID_HUE, .type = V4L2_CTRL_TYPE_INTEGER,
		.name = "Hue", .minimum = -128, .maximum = 127, .step = 1,
		.default_value = 0, .flags = V4L2_CTRL_FLAG_SLIDER,
	},
	[TP_CTRL_HFLIP] = {
		.id = V4L2_CID_HFLIP, .type = V4L2_CTRL_TYPE_BOOLEAN,
		.name = "Horizontal Flip", .minimum = 0, .maximum = 1, .step = 1,
	},
	[TP_CTRL_VFLIP] = {
		.id = V4L2_CID_VFLIP, .type = V4L2_CTRL_TYPE_BOOLEAN,
		.name = "Vertical Flip", .minimum = 0, .maximum = 1, .step = 1,
	},
	[TP_CTRL_PATTERN] = {
		.id = V4L2CUSE_CID_TEST_PATTERN, .type = V4L2_CTRL_TYPE_MENU,
		.name = "Test Pattern", .minimum = 0, .maximum = V4L2CUSE_TPG_PAT_COUNT - 1,
		.step = 1, .default_value = V4L2CUSE_TPG_PAT_75_COLORBAR,
		.menu = v4l2cuse_tpg_pattern_menu,
	},
};

static const char *const tp_keys[] = {
	"sizes", "fps", "formats", "hscroll", "vscroll", "box", "border",
	"overlay", "label", "quality", "brightness", "contrast", "saturation",
	"hue", "hflip", "vflip", "fail_start", "fail_produce_every",
	"drop_every", "error_flag_every", "vanish_after", NULL,
};

struct tp_source {
	struct v4l2cuse_modes_source ms;	/* first: the offer, enum_* ops */

	struct v4l2cuse_control ctrls[TP_N_CTRLS];
	int64_t values[TP_N_CTRLS];
	struct v4l2cuse_tpg_params params;
	unsigned int overlay;		/* TP_OVL_* */
	char *label;
	int quality;

	uint32_t fail_start;
	uint32_t fail_produce_every;
	uint32_t drop_every;
	uint32_t error_flag_every;
	uint32_t vanish_after;
	bool vanished;

	bool started;
	struct v4l2_pix_format pix;
	struct v4l2_fract interval;
	struct v4l2cuse_tpg *tpg;
	uint8_t *scratch;		/* MJPEG: the 4:2:2 planar rendering */
	struct v4l2cuse_mjpeg_enc *jpeg;
	uint64_t produced;		/* produce() calls since start */
	uint64_t first_ts;
	bool have_first_ts;
	char format_line[V4L2CUSE_TPG_TEXT_COLS + 8];	/* the overlay's, set at start */
};

static struct tp_source *
tp_from(struct v4l2cuse_source *src)
{
	return (struct tp_source *)src;
}

static void
tp_fourcc_str(uint32_t f, char out[5])
{
	for (unsigned int i = 0; i < 4; i++) {
		char c = (char)((f >> (8 * i)) & 0x7f);

		out[i] = g_ascii_isprint(c) ? c : '?';
	}
	out[4] = '\0';
}

/* --- option parsing ----------------------------------------------------- */

static int
tp_parse_overlay(struct tp_source *tp, const struct v4l2cuse_opts *o, char **ret_error)
{
	static const char *const names[] = { "counter", "time", "format", "label" };
	const char *v = v4l2cuse_opts_get_str(o, "overlay", NULL);
	g_auto(GStrv) items = NULL;
	char *msg = NULL;
	bool on;

	tp->overlay = TP_OVL_ALL;
	if (!v)
		return 0;
	if (v4l2cuse_opts_get_bool(o, "overlay", true, &on, NULL) == 0) {
		tp->overlay = on ? TP_OVL_ALL : 0;
		return 0;
	}
	tp->overlay = 0;
	if (v4l2cuse_split_list(v, V4L2CUSE_MAX_LIST, &items, &msg) < 0)
		return v4l2cuse_modes_option_error(o, "overlay", msg, ret_error);
	for (guint i = 0; items[i]; i++) {
		size_t j;

		for (j = 0; j < G_N_ELEMENTS(names); j++) {
			if (g_ascii_strcasecmp(items[i], names[j]) == 0)
				break;
		}
		if (j == G_N_ELEMENTS(names)) {
			*ret_error = v4l2cuse_opts_error(o, "option 'overlay': expected 0, 1 or "
							 "items of counter+time+format+label, "
							 "got '%s'", items[i]);
			return -EINVAL;
		}
		tp->overlay |= 1u << j;
	}
	return 0;
}

static int
tp_parse(struct tp_source *tp, const char *args, char **ret_error)
{
	struct v4l2cuse_opts *o = NULL;
	const char *arg, *v;
	int64_t n;
	bool b;
	int r;

	r = v4l2cuse_opts_parse("pattern", args, tp_keys, &o, ret_error);
	if (r < 0)
		return r;

	tp->params = (struct v4l2cuse_tpg_params)V4L2CUSE_TPG_PARAMS_DEFAULT;
	arg = v4l2cuse_opts_arg(o);
	if (arg) {
		r = v4l2cuse_tpg_pattern_from_name(arg);
		if (r < 0) {
			g_autofree char *known =
				g_strjoinv(" ", (char **)v4l2cuse_tpg_pattern_names);

			*ret_error = v4l2cuse_opts_error(o, "unknown pattern '%s' (known: %s)",
							 arg, known);
			r = -EINVAL;
			goto out;
		}
		tp->params.pattern = r;
	}

	if ((r = v4l2cuse_modes_from_options(&tp->ms.modes, o, ret_error)) < 0 ||
	    (r = tp_parse_overlay(tp, o, ret_error)) < 0)
		goto out;

	if ((r = v4l2cuse_opts_get_int(o, "hscroll", 0, -V4L2CUSE_MAX_WIDTH,
				       V4L2CUSE_MAX_WIDTH, &n, ret_error)) < 0)
		goto out;
	tp->params.hscroll = (int)n;
	if ((r = v4l2cuse_opts_get_int(o, "vscroll", 0, -V4L2CUSE_MAX_HEIGHT,
				       V4L2CUSE_MAX_HEIGHT, &n, ret_error)) < 0)
		goto out;
	tp->params.vscroll = (int)n;
	if ((r = v4l2cuse_opts_get_bool(o, "box", false, &b, ret_error)) < 0)
		goto out;
	tp->params.box = b;
	if ((r = v4l2cuse_opts_get_bool(o, "border", false, &b, ret_error)) < 0)
		goto out;
	tp->params.border = b;

	v = v4l2cuse_opts_get_str(o, "label", "v4l2cuse");
	tp->label = g_strndup(v, TP_LABEL_MAX);
	if ((r = v4l2cuse_opts_get_int(o, "quality", 80, 1, 100, &n, ret_error)) < 0)
		goto out;
	tp->quality = (int)n;

	memcpy(tp->ctrls, tp_controls, sizeof(tp_controls));
	tp->ctrls[TP_CTRL_PATTERN].default_value = tp->params.pattern;
	for (unsigned int i = 0; i < TP_N_CTRLS; i++) {
		static const char *const keys[TP_N_CTRLS] = {
			"brightness", "contrast", "saturation", "hue", "hflip", "vflip", NULL,
		};
		struct v4l2cuse_control *c = &tp->ctrls[i];

		if (keys[i]) {
			if (c->type == V4L2_CTRL_TYPE_BOOLEAN) {
				r = v4l2cuse_opts_get_bool(o, keys[i], c->default_value, &b,
							   ret_error);
				n = b;
			} else {
				r = v4l2cuse_opts_get_int(o, keys[i], c->default_value, c->minimum,
							  c->maximum, &n, ret_error);
			}
			if (r < 0)
				goto out;
			c->default_value = n;
		}
		tp->values[i] = c->default_value;
	}

	if ((r = v4l2cuse_opts_get_uint(o, "fail_start", 0, 0, UINT32_MAX,
					&tp->fail_start, ret_error)) < 0 ||
	    (r = v4l2cuse_opts_get_uint(o, "fail_produce_every", 0, 0, UINT32_MAX,
					&tp->fail_produce_every, ret_error)) < 0 ||
	    (r = v4l2cuse_opts_get_uint(o, "drop_every", 0, 0, UINT32_MAX,
					&tp->drop_every, ret_error)) < 0 ||
	    (r = v4l2cuse_opts_get_uint(o, "error_flag_every", 0, 0, UINT32_MAX,
					&tp->error_flag_every, ret_error)) < 0 ||
	    (r = v4l2cuse_opts_get_uint(o, "vanish_after", 0, 0, UINT32_MAX,
					&tp->vanish_after, ret_error)) < 0)
		goto out;
	r = 0;
out:
	v4l2cuse_opts_free(o);
	return r;
}

/* Apply the control values to the tpg parameters. */
static void
tp_update_params(struct tp_source *tp)
{
	tp->params.brightness = (int)tp->values[TP_CTRL_BRIGHTNESS];
	tp->params.contrast = (int)tp->values[TP_CTRL_CONTRAST];
	tp->params.saturation = (int)tp->values[TP_CTRL_SATURATION];
	tp->params.hue = (int)tp->values[TP_CTRL_HUE];
	tp->params.hflip = tp->values[TP_CTRL_HFLIP] != 0;
	tp->params.vflip = tp->values[TP_CTRL_VFLIP] != 0;
	tp->params.pattern = (enum v4l2cuse_tpg_pattern)tp->values[TP_CTRL_PATTERN];
	if (tp->tpg)
		v4l2cuse_tpg_set_params(tp->tpg, &tp->params);
	if (tp->jpeg)
		v4l2cuse_mjpeg_enc_invalidate(tp->jpeg);
}

/* --- ops ---------------------------------------------------------------- */

static void tp_stop(struct v4l2cuse_source *src);

static void
tp_destroy(struct v4l2cuse_source *src)
{
	struct tp_source *tp = tp_from(src);

	if (!tp)
		return;
	tp_stop(src);
	g_free(tp->label);
	g_free(tp);
}

static int
tp_create(const char *args, struct v4l2cuse_source **ret_src, char **ret_error)
{
	struct tp_source *tp = g_new0(struct tp_source, 1);
	int r;

	tp->ms.base.ops = &v4l2cuse_testpattern_ops;
	r = tp_parse(tp, args, ret_error);
	if (r < 0) {
		tp_destroy(&tp->ms.base);
		return r;
	}
	tp_update_params(tp);
	*ret_src = &tp->ms.base;
	return 0;
}

static void
tp_stop(struct v4l2cuse_source *src)
{
	struct tp_source *tp = tp_from(src);

	g_clear_pointer(&tp->tpg, v4l2cuse_tpg_free);
	g_clear_pointer(&tp->jpeg, v4l2cuse_mjpeg_enc_free);
	g_clear_pointer(&tp->scratch, g_free);
	tp->started = false;
}

/* The overlay's format line, "640x480 YUYV 30 fps", for the format just started. */
static void
tp_format_line(struct tp_source *tp)
{
	uint32_t num = tp->interval.denominator, den = tp->interval.numerator;
	char fcc[5];

	tp_fourcc_str(tp->pix.pixelformat, fcc);
	if (num % den == 0)
		g_snprintf(tp->format_line, sizeof(tp->format_line), "%ux%u %s %u fps",
			   tp->pix.width, tp->pix.height, fcc, num / den);
	else
		g_snprintf(tp->format_line, sizeof(tp->format_line), "%ux%u %s %.2f fps",
			   tp->pix.width, tp->pix.height, fcc, (double)num / den);
}

static int
tp_start(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix,
	 const struct v4l2_fract *interval)
{
	struct tp_source *tp = tp_from(src);
	struct v4l2_pix_format f;
	struct v4l2_fract iv;
	int r;

	if (tp->vanished)
		return -ENODEV;
	if (tp->started)
		return -EBUSY;
	if (tp->fail_start > 0) {
		tp->fail_start--;
		return -EIO;
	}
	if (!v4l2cuse_modes_has(&tp->ms.modes, pix->pixelformat, pix->width, pix->height))
		return -EINVAL;
	r = v4l2cuse_modes_stream(pix, interval, tp->ms.modes.intervals[0], &f, &iv);
	if (r < 0)
		return r;

	tp->tpg = v4l2cuse_tpg_new();
	if (f.pixelformat == V4L2_PIX_FMT_MJPEG) {
		r = v4l2cuse_tpg_set_format(tp->tpg, V4L2_PIX_FMT_YUV422P, f.width, f.height,
					    V4L2_YCBCR_ENC_601, V4L2_QUANTIZATION_FULL_RANGE);
		if (r == 0) {
			tp->scratch = g_malloc(v4l2cuse_tpg_frame_size(tp->tpg));
			tp->jpeg = v4l2cuse_mjpeg_enc_new(f.width, f.height, tp->quality);
		}
	} else {
		r = v4l2cuse_tpg_set_format(tp->tpg, f.pixelformat, f.width, f.height, f.ycbcr_enc,
					    f.quantization);
	}
	if (r < 0) {
		tp_stop(src);
		return r;
	}
	v4l2cuse_tpg_set_params(tp->tpg, &tp->params);
	tp->pix = f;
	tp->interval = iv;
	tp_format_line(tp);
	tp->produced = 0;
	tp->have_first_ts = false;
	tp->started = true;
	return 0;
}

/*
 * @v as @n decimal digits, zero-padded: printf's "%0Nu" for the overlay's
 * counter and clock, which change every frame (vfprintf() was 3% of the
 * daemon's time serving 640x480 under TCG).
 */
static char *
tp_digits(char *p, unsigned int v, unsigned int n)
{
	for (unsigned int i = n; i-- > 0; v /= 10)
		p[i] = (char)('0' + v % 10);
	return p + n;
}

static unsigned int
tp_overlay_text(struct tp_source *tp, const struct v4l2cuse_frame *frame,
		char buf[4][V4L2CUSE_TPG_TEXT_COLS + 8], const char *lines[4])
{
	unsigned int n = 0;

	if (tp->overlay & TP_OVL_COUNTER) {
		char *p = buf[n];

		*p++ = '#';
		*tp_digits(p, frame->sequence, 10) = 0;
		lines[n] = buf[n];
		n++;
	}
	if (tp->overlay & TP_OVL_TIME) {
		uint64_t ms;
		char *p = buf[n];

		if (!tp->have_first_ts) {
			tp->first_ts = frame->timestamp_ns;
			tp->have_first_ts = true;
		}
		if (frame->timestamp_ns)
			ms = frame->timestamp_ns > tp->first_ts ?
			     (frame->timestamp_ns - tp->first_ts) / 1000000 : 0;
		else
			ms = (uint64_t)frame->sequence * 1000 * tp->interval.numerator /
			     tp->interval.denominator;
		/* hh:mm:ss.mmm */
		p = tp_digits(p, (unsigned int)(ms / 3600000 % 100), 2);
		*p++ = ':';
		p = tp_digits(p, (unsigned int)(ms / 60000 % 60), 2);
		*p++ = ':';
		p = tp_digits(p, (unsigned int)(ms / 1000 % 60), 2);
		*p++ = '.';
		*tp_digits(p, (unsigned int)(ms % 1000), 3) = 0;
		lines[n] = buf[n];
		n++;
	}
	if (tp->overlay & TP_OVL_FORMAT) {
		lines[n] = tp->format_line;
		n++;
	}
	if ((tp->overlay & TP_OVL_LABEL) && tp->label && *tp->label) {
		lines[n] = tp->label;
		n++;
	}
	return n;
}

static unsigned int
tp_overlay_lines(const struct tp_source *tp)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < 4; i++) {
		if (tp->overlay & (1u << i))
			n++;
	}
	if ((tp->overlay & TP_OVL_LABEL) && !(tp->label && *tp->label))
		n--;
	return n;
}

static int
tp_produce(struct v4l2cuse_source *src, struct v4l2cuse_frame *frame)
{
	struct tp_source *tp = tp_from(src);
	char buf[4][V4L2CUSE_TPG_TEXT_COLS + 8];
	const char *lines[4];
	unsigned int n_lines;
	uint64_t n;

	if (tp->vanished)
		return -ENODEV;
	if (!tp->started)
		return -EINVAL;
	n = ++tp->produced;
	if (tp->vanish_after && n > tp->vanish_after) {
		tp->vanished = true;
		return -ENODEV;
	}
	if (tp->fail_produce_every && n % tp->fail_produce_every == 0)
		return -EIO;
	if (tp->drop_every && n % tp->drop_every == 0)
		return -ENODATA;
	if (!frame->data || frame->length < tp->pix.sizeimage)
		return -EINVAL;

	n_lines = tp_overlay_text(tp, frame, buf, lines);
	if (tp->jpeg) {
		struct v4l2cuse_mjpeg_rows dirty[2];
		unsigned int n_dirty = 0;
		struct v4l2_rect rect;
		size_t len;
		int r;

		v4l2cuse_tpg_fill(tp->tpg, tp->scratch, frame->sequence, lines, n_lines);
		/* what may differ from the static picture: overlay, box */
		v4l2cuse_tpg_overlay_rect(tp->tpg, n_lines, &rect);
		if (rect.height)
			dirty[n_dirty++] = (struct v4l2cuse_mjpeg_rows){ 0, rect.height };
		if (v4l2cuse_tpg_box_rect(tp->tpg, frame->sequence, &rect))
			dirty[n_dirty++] =
				(struct v4l2cuse_mjpeg_rows){ (uint32_t)rect.top,
							      (uint32_t)rect.top + rect.height };
		if (v4l2cuse_tpg_is_scrolling(tp->tpg)) {
			dirty[0] = (struct v4l2cuse_mjpeg_rows){ 0, UINT32_MAX };
			n_dirty = 1;
		}
		r = v4l2cuse_mjpeg_enc_encode_ranges(tp->jpeg, tp->scratch, dirty, n_dirty,
						     frame->data, tp->pix.sizeimage, &len);
		if (r < 0)
			return r == -ENOSPC ? -EIO : r;
		frame->bytesused = (uint32_t)len;
	} else {
		v4l2cuse_tpg_fill(tp->tpg, frame->data, frame->sequence, lines, n_lines);
		frame->bytesused = tp->pix.sizeimage;
	}
	frame->error = tp->error_flag_every && n % tp->error_flag_every == 0;
	return 0;
}

static const struct v4l2cuse_control *
tp_control(struct v4l2cuse_source *src, unsigned int index)
{
	struct tp_source *tp = tp_from(src);

	return index < TP_N_CTRLS ? &tp->ctrls[index] : NULL;
}

static int
tp_ctrl_index(uint32_t id)
{
	for (unsigned int i = 0; i < TP_N_CTRLS; i++) {
		if (tp_controls[i].id == id)
			return (int)i;
	}
	return -EINVAL;
}

static int
tp_get_control(struct v4l2cuse_source *src, uint32_t id, int64_t *ret_value)
{
	struct tp_source *tp = tp_from(src);
	int i = tp_ctrl_index(id);

	if (i < 0)
		return i;
	*ret_value = tp->values[i];
	return 0;
}

static int
tp_set_control(struct v4l2cuse_source *src, uint32_t id, int64_t value)
{
	struct tp_source *tp = tp_from(src);
	int i = tp_ctrl_index(id);

	if (i < 0)
		return i;
	if (value < tp->ctrls[i].minimum || value > tp->ctrls[i].maximum)
		return -ERANGE;
	tp->values[i] = value;
	tp_update_params(tp);
	return 0;
}

const struct v4l2cuse_source_ops v4l2cuse_testpattern_ops = {
	.abi = V4L2CUSE_SOURCE_ABI,
	.name = "pattern",
	.create = tp_create,
	.destroy = tp_destroy,
	.enum_format = v4l2cuse_modes_source_enum_format,
	.enum_framesize = v4l2cuse_modes_source_enum_framesize,
	.enum_frameinterval = v4l2cuse_modes_source_enum_frameinterval,
	.start = tp_start,
	.stop = tp_stop,
	.produce = tp_produce,
	.control = tp_control,
	.get_control = tp_get_control,
	.set_control = tp_set_control,
};

int
v4l2cuse_testpattern_overlay_rect(struct v4l2cuse_source *src, uint32_t width,
				  uint32_t height, struct v4l2_rect *ret)
{
	if (!src || src->ops != &v4l2cuse_testpattern_ops)
		return -EINVAL;
	v4l2cuse_tpg_overlay_rect_for(width, height, tp_overlay_lines(tp_from(src)), ret);
	return 0;
}
