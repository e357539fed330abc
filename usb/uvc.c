/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A UVC 1.0 camera function (usb/uvc.h): descriptors made from the node's
 * modes and controls, and the control transfers of enumeration, probe/
 * commit and the units' controls. Layouts: the USB 2.0 specification
 * (chapter 9) and UVC 1.0/1.1 (USB Device Class Definition for Video
 * Devices), as uvcvideo parses them (docs/usb.md, "Descriptors").
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <glib.h>

#include "usbip.h"
#include "uvc.h"

#define UVC_VENDOR		0x1209	/* pid.codes: ids for open-source hardware */
#define UVC_PRODUCT		0x0001	/* its test id (docs/usb.md) */
#define UVC_BCD_DEVICE		0x0100

/* Entity ids of the VideoControl interface. */
#define ID_CAMERA		1	/* input terminal, type camera */
#define ID_PROCESSING		2	/* processing unit */
#define ID_OUTPUT		3	/* output terminal, streaming */

#define INTF_CONTROL		0
#define INTF_STREAMING		1

/* Class-specific descriptor types and subtypes. */
#define CS_INTERFACE		0x24
#define VC_HEADER		0x01
#define VC_INPUT_TERMINAL	0x02
#define VC_OUTPUT_TERMINAL	0x03
#define VC_PROCESSING_UNIT	0x05
#define VS_INPUT_HEADER		0x01
#define VS_FORMAT_UNCOMPRESSED	0x04
#define VS_FRAME_UNCOMPRESSED	0x05
#define VS_FORMAT_MJPEG		0x06
#define VS_FRAME_MJPEG		0x07
#define VS_COLORFORMAT		0x0d

/* Class requests. */
#define SET_CUR			0x01
#define GET_CUR			0x81
#define GET_MIN			0x82
#define GET_MAX			0x83
#define GET_RES			0x84
#define GET_LEN			0x85
#define GET_INFO		0x86
#define GET_DEF			0x87

#define VS_PROBE_CONTROL	0x01
#define VS_COMMIT_CONTROL	0x02
#define VC_REQUEST_ERROR_CODE_CONTROL 0x02
#define VS_STREAM_ERROR_CODE_CONTROL 0x06
#define PROBE_SIZE		26	/* UVC 1.0 */

/* bRequestErrorCode values. */
#define ERR_NONE		0x00
#define ERR_WRONG_STATE		0x02
#define ERR_OUT_OF_RANGE	0x04
#define ERR_INVALID_UNIT	0x05
#define ERR_INVALID_CONTROL	0x06
#define ERR_INVALID_REQUEST	0x07
#define ERR_UNKNOWN		0xff

/*
 * The controls UVC defines that a node may have, and the V4L2 control
 * uvcvideo maps each to (uvc_ctrl.c's mappings: same values, no scaling
 * for these). @bit is the control's bit in the unit's bmControls.
 */
enum ctrl_kind {
	CTRL_PLAIN,		/* one value, little-endian, @size bytes */
	CTRL_PAIR,		/* two signed 32-bit halves: @id, then @id2 */
	CTRL_AE_MODE,		/* one byte, a bit per V4L2 menu item (ae_mode_bits) */
};

struct ctrl_def {
	uint32_t id;
	uint8_t unit;		/* ID_CAMERA or ID_PROCESSING */
	uint8_t selector;
	uint8_t bit;
	uint8_t size;		/* bytes */
	bool is_signed;
	enum ctrl_kind kind;
	uint32_t id2;		/* CTRL_PAIR: the second half's control */
};

/* V4L2_CID_EXPOSURE_AUTO's items (AUTO, MANUAL, SHUTTER_, APERTURE_PRIORITY) in UVC's AE mode. */
static const uint8_t ae_mode_bits[] = { 0x02, 0x01, 0x04, 0x08 };

static const struct ctrl_def ctrl_defs[] = {
	{ V4L2_CID_BRIGHTNESS, ID_PROCESSING, 0x02, 0, 2, true },
	{ V4L2_CID_CONTRAST, ID_PROCESSING, 0x03, 1, 2, false },
	{ V4L2_CID_HUE, ID_PROCESSING, 0x06, 2, 2, true },
	{ V4L2_CID_SATURATION, ID_PROCESSING, 0x07, 3, 2, false },
	{ V4L2_CID_SHARPNESS, ID_PROCESSING, 0x08, 4, 2, false },
	{ V4L2_CID_GAMMA, ID_PROCESSING, 0x09, 5, 2, false },
	{ V4L2_CID_WHITE_BALANCE_TEMPERATURE, ID_PROCESSING, 0x0a, 6, 2, false },
	{ V4L2_CID_BACKLIGHT_COMPENSATION, ID_PROCESSING, 0x01, 8, 2, false },
	{ V4L2_CID_GAIN, ID_PROCESSING, 0x04, 9, 2, false },
	{ V4L2_CID_POWER_LINE_FREQUENCY, ID_PROCESSING, 0x05, 10, 1, false },
	{ V4L2_CID_AUTO_WHITE_BALANCE, ID_PROCESSING, 0x0b, 12, 1, false },
	{ V4L2_CID_EXPOSURE_ABSOLUTE, ID_CAMERA, 0x04, 3, 4, false },
	{ V4L2_CID_FOCUS_ABSOLUTE, ID_CAMERA, 0x06, 5, 2, false },
	{ V4L2_CID_ZOOM_ABSOLUTE, ID_CAMERA, 0x0b, 9, 2, false },
	{ V4L2_CID_FOCUS_AUTO, ID_CAMERA, 0x08, 17, 1, false },
	{ V4L2_CID_EXPOSURE_AUTO, ID_CAMERA, 0x02, 1, 1, false, CTRL_AE_MODE },
	{ V4L2_CID_PAN_ABSOLUTE, ID_CAMERA, 0x0d, 11, 8, true, CTRL_PAIR, V4L2_CID_TILT_ABSOLUTE },
};

/* A control the function offers: one or (CTRL_PAIR) two of the node's. */
struct fn_ctrl {
	const struct ctrl_def *def;
	struct uvc_ctrl_range range, range2;
	bool has, has2;		/* which halves the node has */
};

/* A format: its modes (frames) in the node's order, 1-based in UVC. */
struct fn_format {
	uint32_t fourcc;
	const struct client_mode **frames;
	unsigned int n_frames;
};

struct uvc_fn {
	const struct uvc_fn_ops *ops;
	void *data;
	struct client_mode *modes;
	unsigned int n_modes;
	struct fn_format *formats;
	unsigned int n_formats;
	struct fn_ctrl *ctrls;
	unsigned int n_ctrls;
	GByteArray *device_desc, *config_desc;
	GPtrArray *strings;	/* GByteArray * by index */
	uint8_t probe[PROBE_SIZE], commit[PROBE_SIZE];
	uint8_t error_code;	/* VC_REQUEST_ERROR_CODE_CONTROL */
	uint8_t configuration;
	uint8_t fid;
};

/* --- formats --- */

/* uvcvideo's GUIDs are a FourCC followed by these 12 bytes. */
static const uint8_t guid_suffix[12] = {
	0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71
};

/* The V4L2 formats uvcvideo maps from a FourCC GUID, and their bits per pixel. */
static const struct {
	uint32_t fourcc;
	char guid[5];
	uint8_t bpp;
} guid_formats[] = {
	{ V4L2_PIX_FMT_YUYV, "YUY2", 16 },
	{ V4L2_PIX_FMT_UYVY, "UYVY", 16 },
	{ V4L2_PIX_FMT_NV12, "NV12", 12 },
	{ V4L2_PIX_FMT_YUV420, "I420", 12 },
	{ V4L2_PIX_FMT_GREY, "Y800", 8 },
};

static int
guid_format(uint32_t fourcc)
{
	for (unsigned int i = 0; i < G_N_ELEMENTS(guid_formats); i++)
		if (guid_formats[i].fourcc == fourcc)
			return (int)i;
	return -1;
}

static bool
is_mjpeg(uint32_t fourcc)
{
	return fourcc == V4L2_PIX_FMT_MJPEG || fourcc == V4L2_PIX_FMT_JPEG;
}

bool
uvc_fourcc_supported(uint32_t fourcc)
{
	return is_mjpeg(fourcc) || guid_format(fourcc) >= 0;
}

/* --- descriptor building --- */

static void
put8(GByteArray *a, uint8_t v)
{
	g_byte_array_append(a, &v, 1);
}

static void
put16(GByteArray *a, uint16_t v)
{
	put8(a, v & 0xff);
	put8(a, v >> 8);
}

static void
put32(GByteArray *a, uint32_t v)
{
	put16(a, v & 0xffff);
	put16(a, v >> 16);
}

static void
set16(uint8_t *p, uint16_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static void
set32(uint8_t *p, uint32_t v)
{
	set16(p, v & 0xffff);
	set16(p + 2, v >> 16);
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t
get32(const uint8_t *p)
{
	return get16(p) | (uint32_t)get16(p + 2) << 16;
}

/* A frame interval in 100 ns units of @rate frames per second. */
static uint32_t
rate_interval(struct client_rate rate)
{
	if (!rate.num)
		return 0;
	return (uint32_t)MIN((uint64_t)rate.denom * 10000000u / rate.num, UINT32_MAX);
}

/* bmControls of unit @unit, @bytes long. */
static void
put_controls(struct uvc_fn *fn, GByteArray *a, uint8_t unit, unsigned int bytes)
{
	uint8_t bm[3] = { 0 };

	for (unsigned int i = 0; i < fn->n_ctrls; i++) {
		const struct ctrl_def *d = fn->ctrls[i].def;

		if (d->unit == unit)
			bm[d->bit / 8] |= (uint8_t)(1u << (d->bit % 8));
	}
	g_byte_array_append(a, bm, bytes);
}

static void
build_device(struct uvc_fn *fn)
{
	GByteArray *a = fn->device_desc = g_byte_array_new();

	put8(a, 18);
	put8(a, 1);			/* DEVICE */
	put16(a, 0x0200);		/* USB 2.0 */
	put8(a, 0xef);			/* miscellaneous: an interface association */
	put8(a, 0x02);
	put8(a, 0x01);
	put8(a, 64);			/* bMaxPacketSize0 */
	put16(a, UVC_VENDOR);
	put16(a, UVC_PRODUCT);
	put16(a, UVC_BCD_DEVICE);
	put8(a, 1);			/* iManufacturer */
	put8(a, 2);			/* iProduct */
	put8(a, 3);			/* iSerialNumber */
	put8(a, 1);			/* bNumConfigurations */
}

/* The VideoControl interface's class-specific descriptors. */
static void
build_control(struct uvc_fn *fn, GByteArray *a)
{
	size_t start = a->len;

	put8(a, 13);			/* header, one streaming interface */
	put8(a, CS_INTERFACE);
	put8(a, VC_HEADER);
	put16(a, 0x0100);		/* bcdUVC 1.0: 26-byte probe */
	put16(a, 0);			/* wTotalLength, set below */
	put32(a, 48000000);		/* dwClockFrequency (unused: no PTS/SCR) */
	put8(a, 1);
	put8(a, INTF_STREAMING);

	put8(a, 18);			/* camera terminal, 3 bytes of bmControls */
	put8(a, CS_INTERFACE);
	put8(a, VC_INPUT_TERMINAL);
	put8(a, ID_CAMERA);
	put16(a, 0x0201);		/* ITT_CAMERA */
	put8(a, 0);			/* bAssocTerminal */
	put8(a, 0);			/* iTerminal */
	put16(a, 0);			/* focal lengths */
	put16(a, 0);
	put16(a, 0);
	put8(a, 3);
	put_controls(fn, a, ID_CAMERA, 3);

	put8(a, 11);			/* processing unit (UVC 1.0), 2 bytes of bmControls */
	put8(a, CS_INTERFACE);
	put8(a, VC_PROCESSING_UNIT);
	put8(a, ID_PROCESSING);
	put8(a, ID_CAMERA);		/* bSourceID */
	put16(a, 0);			/* wMaxMultiplier */
	put8(a, 2);
	put_controls(fn, a, ID_PROCESSING, 2);
	put8(a, 0);			/* iProcessing */

	put8(a, 9);			/* output terminal: the streaming interface */
	put8(a, CS_INTERFACE);
	put8(a, VC_OUTPUT_TERMINAL);
	put8(a, ID_OUTPUT);
	put16(a, 0x0101);		/* TT_STREAMING */
	put8(a, 0);
	put8(a, ID_PROCESSING);		/* bSourceID */
	put8(a, 0);
	set16(a->data + start + 5, (uint16_t)(a->len - start));
}

/* The VideoStreaming interface's: input header, per format its frames. */
static void
build_streaming(struct uvc_fn *fn, GByteArray *a)
{
	size_t start = a->len;

	put8(a, (uint8_t)(13 + fn->n_formats));
	put8(a, CS_INTERFACE);
	put8(a, VS_INPUT_HEADER);
	put8(a, (uint8_t)fn->n_formats);
	put16(a, 0);			/* wTotalLength, set below */
	put8(a, UVC_EP_IN);
	put8(a, 0);			/* bmInfo: no dynamic format change */
	put8(a, ID_OUTPUT);		/* bTerminalLink */
	put8(a, 0);			/* bStillCaptureMethod: none */
	put8(a, 0);			/* bTriggerSupport */
	put8(a, 0);			/* bTriggerUsage */
	put8(a, 1);			/* bControlSize */
	for (unsigned int i = 0; i < fn->n_formats; i++)
		put8(a, 0);		/* bmaControls */

	for (unsigned int f = 0; f < fn->n_formats; f++) {
		const struct fn_format *fmt = &fn->formats[f];
		bool mjpeg = is_mjpeg(fmt->fourcc);

		if (mjpeg) {
			put8(a, 11);
			put8(a, CS_INTERFACE);
			put8(a, VS_FORMAT_MJPEG);
			put8(a, (uint8_t)(f + 1));
			put8(a, (uint8_t)fmt->n_frames);
			put8(a, 1);	/* bmFlags: fixed-size samples */
		} else {
			int g = guid_format(fmt->fourcc);

			put8(a, 27);
			put8(a, CS_INTERFACE);
			put8(a, VS_FORMAT_UNCOMPRESSED);
			put8(a, (uint8_t)(f + 1));
			put8(a, (uint8_t)fmt->n_frames);
			g_byte_array_append(a, (const uint8_t *)guid_formats[g].guid, 4);
			g_byte_array_append(a, guid_suffix, sizeof(guid_suffix));
			put8(a, guid_formats[g].bpp);
		}
		put8(a, 1);		/* bDefaultFrameIndex */
		put8(a, 0);		/* aspect ratio */
		put8(a, 0);
		put8(a, 0);		/* bmInterlaceFlags: progressive */
		put8(a, 0);		/* bCopyProtect */

		for (unsigned int i = 0; i < fmt->n_frames; i++) {
			const struct client_mode *m = fmt->frames[i];
			uint32_t max_rate = 0;

			for (unsigned int r = 0; r < m->n_rates; r++) {
				uint32_t fps = m->rates[r].denom ? m->rates[r].num / m->rates[r].denom : 0;

				max_rate = MAX(max_rate, MAX(fps, 1u));
			}
			put8(a, (uint8_t)(26 + 4 * m->n_rates));
			put8(a, CS_INTERFACE);
			put8(a, mjpeg ? VS_FRAME_MJPEG : VS_FRAME_UNCOMPRESSED);
			put8(a, (uint8_t)(i + 1));
			put8(a, 0);	/* bmCapabilities */
			put16(a, (uint16_t)m->width);
			put16(a, (uint16_t)m->height);
			put32(a, (uint32_t)MIN((uint64_t)m->size * 8, UINT32_MAX));	/* bit rates */
			put32(a, (uint32_t)MIN((uint64_t)m->size * 8 * max_rate, UINT32_MAX));
			put32(a, m->size);	/* dwMaxVideoFrameBufferSize */
			put32(a, rate_interval(m->rates[0]));
			put8(a, (uint8_t)m->n_rates);
			for (unsigned int r = 0; r < m->n_rates; r++)
				put32(a, rate_interval(m->rates[r]));
		}
		/* Colour: BT.601 (SMPTE 170M), the daemon's below 720 lines. */
		put8(a, 6);
		put8(a, CS_INTERFACE);
		put8(a, VS_COLORFORMAT);
		put8(a, 1);		/* primaries BT.709 */
		put8(a, 1);		/* transfer BT.709 */
		put8(a, 4);		/* matrix SMPTE 170M (BT.601) */
	}
	set16(a->data + start + 4, (uint16_t)(a->len - start));
}

static void
put_interface(GByteArray *a, uint8_t number, uint8_t n_endpoints, uint8_t subclass)
{
	put8(a, 9);
	put8(a, 4);			/* INTERFACE */
	put8(a, number);
	put8(a, 0);			/* bAlternateSetting */
	put8(a, n_endpoints);
	put8(a, 0x0e);			/* video */
	put8(a, subclass);
	put8(a, 0);
	put8(a, number == INTF_CONTROL ? 2 : 0);	/* iInterface: the product */
}

static void
build_config(struct uvc_fn *fn)
{
	GByteArray *a = fn->config_desc = g_byte_array_new();

	put8(a, 9);
	put8(a, 2);			/* CONFIGURATION */
	put16(a, 0);			/* wTotalLength, set below */
	put8(a, 2);			/* bNumInterfaces */
	put8(a, 1);			/* bConfigurationValue */
	put8(a, 0);
	put8(a, 0x80);			/* bus powered */
	put8(a, 250);			/* 500 mA */

	put8(a, 8);			/* interface association: the two interfaces */
	put8(a, 0x0b);
	put8(a, INTF_CONTROL);
	put8(a, 2);
	put8(a, 0x0e);			/* video, interface collection */
	put8(a, 0x03);
	put8(a, 0);
	put8(a, 2);

	put_interface(a, INTF_CONTROL, 0, 0x01);
	build_control(fn, a);
	put_interface(a, INTF_STREAMING, 1, 0x02);
	build_streaming(fn, a);

	put8(a, 7);			/* the bulk IN endpoint */
	put8(a, 5);			/* ENDPOINT */
	put8(a, UVC_EP_IN);
	put8(a, 0x02);			/* bulk */
	put16(a, UVC_BULK_PACKET);
	put8(a, 0);
	set16(a->data + 2, (uint16_t)a->len);
}

static GByteArray *
string_desc(const char *utf8)
{
	g_autofree gunichar2 *u16 = NULL;
	glong n = 0;
	GByteArray *a = g_byte_array_new();

	u16 = g_utf8_to_utf16(utf8 ? utf8 : "", -1, NULL, &n, NULL);
	if (!u16)
		n = 0;
	/* bLength is one byte; never end in the first half of a surrogate pair. */
	if (n > 126)
		n = u16[125] >= 0xd800 && u16[125] <= 0xdbff ? 125 : 126;
	put8(a, (uint8_t)(2 + 2 * n));
	put8(a, 3);			/* STRING */
	for (glong i = 0; i < n; i++)
		put16(a, u16[i]);
	return a;
}

/* --- probe and commit --- */

static const struct fn_format *
probe_format(const struct uvc_fn *fn, const uint8_t *p)
{
	return &fn->formats[CLAMP(p[2], 1, fn->n_formats) - 1];
}

/*
 * Make @p (a PROBE_SIZE probe) one we can stream: format and frame indices
 * in range, the offered interval closest to the one asked (the default
 * for 0), and our sizes.
 */
static void
probe_fix(const struct uvc_fn *fn, uint8_t *p)
{
	const struct fn_format *fmt = probe_format(fn, p);
	unsigned int frame = CLAMP(p[3], 1, fmt->n_frames);
	const struct client_mode *m = fmt->frames[frame - 1];
	uint32_t want = get32(p + 4), best = rate_interval(m->rates[0]);

	if (want) {
		for (unsigned int r = 0; r < m->n_rates; r++) {
			uint32_t iv = rate_interval(m->rates[r]);

			if ((iv > want ? iv - want : want - iv) < (best > want ? best - want : want - best))
				best = iv;
		}
	}
	p[2] = (uint8_t)(fmt - fn->formats + 1);
	p[3] = (uint8_t)frame;
	set32(p + 4, best);
	set32(p + 18, m->size);			/* dwMaxVideoFrameSize */
	set32(p + 22, UVC_PAYLOAD_SIZE);	/* dwMaxPayloadTransferSize */
}

static const struct client_mode *
probe_mode(const struct uvc_fn *fn, const uint8_t *p, struct client_rate *ret_rate)
{
	const struct fn_format *fmt = probe_format(fn, p);
	const struct client_mode *m = fmt->frames[CLAMP(p[3], 1, fmt->n_frames) - 1];
	uint32_t iv = get32(p + 4);

	*ret_rate = m->rates[0];
	for (unsigned int r = 0; r < m->n_rates; r++)
		if (rate_interval(m->rates[r]) == iv)
			*ret_rate = m->rates[r];
	return m;
}

/* --- controls --- */

/* The node's first control @id of @ctrls, or NULL. */
static const struct uvc_ctrl_range *
find_range(const struct uvc_ctrl_range *ctrls, unsigned int n, uint32_t id)
{
	for (unsigned int i = 0; i < n; i++)
		if (ctrls[i].id == id)
			return &ctrls[i];
	return NULL;
}

/* Does @r fit @d's UVC field (a half of it for a pair; the menu for AE mode)? */
static bool
range_fits(const struct ctrl_def *d, const struct uvc_ctrl_range *r)
{
	unsigned int bits = d->kind == CTRL_PAIR ? 32 : d->size * 8;
	int64_t lo = d->is_signed ? -(1ll << (bits - 1)) : 0;
	int64_t hi = d->is_signed ? (1ll << (bits - 1)) - 1 : (int64_t)((1ull << bits) - 1);

	if (d->kind == CTRL_AE_MODE)
		hi = G_N_ELEMENTS(ae_mode_bits) - 1;
	return r->min <= r->max && r->min >= lo && r->max <= hi;
}

/* --- life cycle --- */

struct uvc_fn *
uvc_fn_new(const struct client_mode *modes, unsigned int n_modes,
	   const struct uvc_ctrl_range *ctrls, unsigned int n_ctrls, const char *product,
	   const char *serial, const struct uvc_fn_ops *ops, void *data)
{
	struct uvc_fn *fn = g_new0(struct uvc_fn, 1);

	fn->ops = ops;
	fn->data = data;
	fn->modes = g_new0(struct client_mode, MAX(n_modes, 1));
	for (unsigned int i = 0; i < n_modes; i++) {
		const struct client_mode *m = &modes[i];

		int g = guid_format(m->fourcc);

		/*
		 * uvcvideo takes an uncompressed frame's size from bBitsPerPixel
		 * and drops frames of any other size: no padded lines.
		 */
		if (!uvc_fourcc_supported(m->fourcc) || m->n_rates == 0 || m->width > UINT16_MAX ||
		    m->height > UINT16_MAX || m->size == 0 ||
		    (g >= 0 && (uint64_t)m->size * 8 !=
				       (uint64_t)guid_formats[g].bpp * m->width * m->height)) {
			g_debug("mode %.4s %ux%u: not offered over USB", (const char *)&m->fourcc,
				m->width, m->height);
			continue;
		}
		fn->modes[fn->n_modes++] = *m;
	}
	/* Formats in the node's order; UVC allows 255 of each. */
	fn->formats = g_new0(struct fn_format, MAX(fn->n_modes, 1));
	for (unsigned int i = 0; i < fn->n_modes; i++) {
		const struct client_mode *m = &fn->modes[i];
		struct fn_format *fmt = NULL;

		for (unsigned int f = 0; f < fn->n_formats && !fmt; f++)
			if (fn->formats[f].fourcc == m->fourcc)
				fmt = &fn->formats[f];
		if (!fmt) {
			if (fn->n_formats == 255)
				continue;
			fmt = &fn->formats[fn->n_formats++];
			fmt->fourcc = m->fourcc;
			fmt->frames = g_new0(const struct client_mode *, fn->n_modes);
		}
		if (fmt->n_frames < 255)
			fmt->frames[fmt->n_frames++] = m;
	}
	if (fn->n_formats == 0) {
		uvc_fn_free(fn);
		return NULL;
	}
	/* One entry per UVC control: a node listing an id twice gets its first. */
	fn->ctrls = g_new0(struct fn_ctrl, G_N_ELEMENTS(ctrl_defs));
	for (unsigned int k = 0; k < G_N_ELEMENTS(ctrl_defs); k++) {
		const struct ctrl_def *d = &ctrl_defs[k];
		const struct uvc_ctrl_range *r1 = find_range(ctrls, n_ctrls, d->id);
		const struct uvc_ctrl_range *r2 = d->id2 ? find_range(ctrls, n_ctrls, d->id2) : NULL;

		if (!r1 && !r2)
			continue;
		if ((r1 && !range_fits(d, r1)) || (r2 && !range_fits(d, r2))) {
			g_debug("control %#x: range %d..%d does not fit UVC's", r1 ? r1->id : r2->id,
				r1 ? r1->min : r2->min, r1 ? r1->max : r2->max);
			continue;
		}
		fn->ctrls[fn->n_ctrls++] = (struct fn_ctrl){
			.def = d,
			.range = r1 ? *r1 : (struct uvc_ctrl_range){ 0 },
			.range2 = r2 ? *r2 : (struct uvc_ctrl_range){ 0 },
			.has = r1 != NULL,
			.has2 = r2 != NULL,
		};
	}
	build_device(fn);
	build_config(fn);
	fn->strings = g_ptr_array_new_with_free_func((GDestroyNotify)g_byte_array_unref);
	{
		static const uint8_t langids[] = { 4, 3, 0x09, 0x04 };	/* en-US */
		GByteArray *l = g_byte_array_new();

		g_byte_array_append(l, langids, sizeof(langids));
		g_ptr_array_add(fn->strings, l);
	}
	g_ptr_array_add(fn->strings, string_desc("v4l2cuse"));
	g_ptr_array_add(fn->strings, string_desc(product));
	g_ptr_array_add(fn->strings, string_desc(serial));
	memset(fn->probe, 0, sizeof(fn->probe));
	fn->probe[2] = 1;
	fn->probe[3] = 1;
	probe_fix(fn, fn->probe);
	memcpy(fn->commit, fn->probe, sizeof(fn->commit));
	return fn;
}

void
uvc_fn_free(struct uvc_fn *fn)
{
	if (!fn)
		return;
	for (unsigned int f = 0; f < fn->n_formats; f++)
		g_free(fn->formats[f].frames);
	g_free(fn->formats);
	g_free(fn->modes);
	g_free(fn->ctrls);
	if (fn->device_desc)
		g_byte_array_unref(fn->device_desc);
	if (fn->config_desc)
		g_byte_array_unref(fn->config_desc);
	if (fn->strings)
		g_ptr_array_unref(fn->strings);
	g_free(fn);
}

void
uvc_fn_ids(const struct uvc_fn *fn, uint16_t *ret_vendor, uint16_t *ret_product,
	   uint16_t *ret_bcd_device)
{
	*ret_vendor = UVC_VENDOR;
	*ret_product = UVC_PRODUCT;
	*ret_bcd_device = UVC_BCD_DEVICE;
}

void
uvc_device_info(const char *busid, uint32_t busnum, uint32_t devnum,
		struct usbip_device_info *ret)
{
	memset(ret, 0, sizeof(*ret));
	g_snprintf(ret->path, sizeof(ret->path), "/sys/devices/v4l2cuse/%s", busid);
	g_strlcpy(ret->busid, busid, sizeof(ret->busid));
	ret->busnum = busnum;
	ret->devnum = devnum;
	ret->speed = 3;			/* USB_SPEED_HIGH */
	ret->id_vendor = UVC_VENDOR;
	ret->id_product = UVC_PRODUCT;
	ret->bcd_device = UVC_BCD_DEVICE;
	ret->device_class = 0xef;	/* as build_device() */
	ret->device_subclass = 0x02;
	ret->device_protocol = 0x01;
	ret->configuration_value = 1;
	ret->n_configurations = 1;
	ret->n_interfaces = 2;
	ret->interfaces[INTF_CONTROL].class = 0x0e;
	ret->interfaces[INTF_CONTROL].subclass = 0x01;
	ret->interfaces[INTF_STREAMING].class = 0x0e;
	ret->interfaces[INTF_STREAMING].subclass = 0x02;
}

unsigned int
uvc_fn_n_modes(const struct uvc_fn *fn)
{
	return fn->n_modes;
}

/* --- control transfers --- */

/* Copy @len bytes of @src to @reply, at most wLength: the IN length. */
static int
reply_with(uint8_t *reply, uint16_t w_length, const void *src, size_t len)
{
	len = MIN(len, (size_t)w_length);
	if (len)
		memcpy(reply, src, len);
	return (int)len;
}

static int
standard_request(struct uvc_fn *fn, uint8_t type, uint8_t request, uint16_t value,
		 uint16_t index, uint16_t w_length, uint8_t *reply)
{
	static const uint8_t zero2[2] = { 0, 0 };
	bool in = type & 0x80;
	uint8_t recipient = type & 0x1f;

	switch (request) {
	case 0x06:		/* GET_DESCRIPTOR */
		if (!in)
			return -EPIPE;
		switch (value >> 8) {
		case 1:
			return reply_with(reply, w_length, fn->device_desc->data,
					  fn->device_desc->len);
		case 2:
			if ((value & 0xff) != 0)
				return -EPIPE;
			return reply_with(reply, w_length, fn->config_desc->data,
					  fn->config_desc->len);
		case 3:
			if ((value & 0xff) >= fn->strings->len)
				return -EPIPE;
			{
				GByteArray *s = fn->strings->pdata[value & 0xff];

				return reply_with(reply, w_length, s->data, s->len);
			}
		default:	/* device qualifier, BOS, ...: a full-featured HS-only device stalls */
			return -EPIPE;
		}
	case 0x00:		/* GET_STATUS */
		return in ? reply_with(reply, w_length, zero2, 2) : -EPIPE;
	case 0x08:		/* GET_CONFIGURATION */
		return in ? reply_with(reply, w_length, &fn->configuration, 1) : -EPIPE;
	case 0x09:		/* SET_CONFIGURATION */
		if (in || value > 1)
			return -EPIPE;
		if (fn->configuration && !value)
			fn->ops->stop(fn->data);
		fn->configuration = (uint8_t)value;
		return 0;
	case 0x0a:		/* GET_INTERFACE: one alternate setting each */
		return in && index <= INTF_STREAMING ? reply_with(reply, w_length, zero2, 1) : -EPIPE;
	case 0x0b:		/* SET_INTERFACE */
		if (in || index > INTF_STREAMING || value != 0)
			return -EPIPE;
		return 0;
	case 0x01:		/* CLEAR_FEATURE */
		if (in)
			return -EPIPE;
		/* ENDPOINT_HALT of the streaming endpoint: uvcvideo's stream off (bulk). */
		if (recipient == 2 && value == 0 && (index & 0xff) == UVC_EP_IN)
			fn->ops->stop(fn->data);
		return 0;
	case 0x03:		/* SET_FEATURE (remote wakeup, halt): accepted, no effect */
		return in ? -EPIPE : 0;
	default:
		return -EPIPE;
	}
}

static int
streaming_request(struct uvc_fn *fn, uint8_t request, uint8_t selector, uint16_t w_length,
		  const uint8_t *out, size_t out_len, uint8_t *reply)
{
	static const uint8_t len[2] = { PROBE_SIZE, 0 };
	uint8_t zero[PROBE_SIZE] = { 0 };

	/* The error code control reports the last request, this one included. */
	fn->error_code = ERR_NONE;
	if (selector == VS_STREAM_ERROR_CODE_CONTROL && request == GET_CUR)
		return reply_with(reply, w_length, zero, 1);
	if (selector != VS_PROBE_CONTROL && selector != VS_COMMIT_CONTROL) {
		fn->error_code = ERR_INVALID_CONTROL;
		return -EPIPE;
	}
	switch (request) {
	case SET_CUR: {
		uint8_t p[PROBE_SIZE] = { 0 };
		struct client_rate rate;
		const struct client_mode *m;
		int r;

		/* A shorter probe (bcdUVC 1.0 hosts send 26) keeps our values for the rest. */
		memcpy(p, selector == VS_PROBE_CONTROL ? fn->probe : fn->commit, sizeof(p));
		if (out_len)		/* @out may be NULL without a data stage */
			memcpy(p, out, MIN(out_len, sizeof(p)));
		probe_fix(fn, p);
		if (selector == VS_PROBE_CONTROL) {
			memcpy(fn->probe, p, sizeof(p));
			return (int)out_len;
		}
		m = probe_mode(fn, p, &rate);
		r = fn->ops->start(fn->data, m, rate);
		if (r < 0) {
			fn->error_code = ERR_WRONG_STATE;
			return -EPIPE;
		}
		memcpy(fn->commit, p, sizeof(p));
		memcpy(fn->probe, p, sizeof(p));
		return (int)out_len;
	}
	case GET_CUR:
	case GET_MIN:
	case GET_MAX:
	case GET_DEF:
		return reply_with(reply, w_length,
				  selector == VS_PROBE_CONTROL ? fn->probe : fn->commit, PROBE_SIZE);
	case GET_RES:
		return reply_with(reply, w_length, zero, PROBE_SIZE);
	case GET_LEN:
		return reply_with(reply, w_length, len, 2);
	case GET_INFO:
		return reply_with(reply, w_length, (const uint8_t[]){ 0x03 }, 1);
	default:
		fn->error_code = ERR_INVALID_REQUEST;
		return -EPIPE;
	}
}

/* The UVC bytes (c->def->size of them) of the values @v1 and (CTRL_PAIR) @v2. */
static void
ctrl_encode(const struct fn_ctrl *c, int32_t v1, int32_t v2, uint8_t *buf)
{
	switch (c->def->kind) {
	case CTRL_AE_MODE:
		buf[0] = v1 >= 0 && (size_t)v1 < G_N_ELEMENTS(ae_mode_bits) ? ae_mode_bits[v1] : 0;
		return;
	case CTRL_PAIR:
		set32(buf, (uint32_t)v1);
		set32(buf + 4, (uint32_t)v2);
		return;
	case CTRL_PLAIN:
		for (unsigned int i = 0; i < c->def->size; i++)
			buf[i] = (uint8_t)((uint32_t)v1 >> (8 * i));
		return;
	}
}

/* The values of UVC bytes: false if they name none (an AE mode that is not one item's bit). */
static bool
ctrl_decode(const struct fn_ctrl *c, const uint8_t *buf, int32_t *ret_v1, int32_t *ret_v2)
{
	uint32_t v = 0;

	*ret_v2 = 0;
	switch (c->def->kind) {
	case CTRL_AE_MODE:
		for (unsigned int i = 0; i < G_N_ELEMENTS(ae_mode_bits); i++) {
			if (buf[0] == ae_mode_bits[i]) {
				*ret_v1 = (int32_t)i;
				return true;
			}
		}
		return false;
	case CTRL_PAIR:
		*ret_v1 = (int32_t)get32(buf);
		*ret_v2 = (int32_t)get32(buf + 4);
		return true;
	case CTRL_PLAIN:
		for (unsigned int i = 0; i < c->def->size; i++)
			v |= (uint32_t)buf[i] << (8 * i);
		if (c->def->is_signed && c->def->size < 4 && (v & (1u << (c->def->size * 8 - 1))))
			v |= ~0u << (c->def->size * 8);
		*ret_v1 = (int32_t)v;
		return true;
	}
	return false;
}

/* The value of each half the node has, through get_ctrl(); 0 for a missing one. */
static int
ctrl_get(struct uvc_fn *fn, const struct fn_ctrl *c, int32_t *ret_v1, int32_t *ret_v2)
{
	int r = 0;

	*ret_v1 = *ret_v2 = 0;
	if (c->has)
		r = fn->ops->get_ctrl(fn->data, c->range.id, ret_v1);
	if (r == 0 && c->has2)
		r = fn->ops->get_ctrl(fn->data, c->range2.id, ret_v2);
	return r;
}

/* SET_CUR: each half the node has, checked against its range, then set. */
static int
ctrl_set(struct uvc_fn *fn, const struct fn_ctrl *c, const uint8_t *out)
{
	int32_t v1, v2;
	int r = 0;

	if (!ctrl_decode(c, out, &v1, &v2) || (c->has && (v1 < c->range.min || v1 > c->range.max)) ||
	    (c->has2 && (v2 < c->range2.min || v2 > c->range2.max))) {
		fn->error_code = ERR_OUT_OF_RANGE;
		return -EPIPE;
	}
	if (c->has)
		r = fn->ops->set_ctrl(fn->data, c->range.id, v1);
	if (r == 0 && c->has2)
		r = fn->ops->set_ctrl(fn->data, c->range2.id, v2);
	if (r < 0) {
		fn->error_code = r == -EBUSY ? ERR_WRONG_STATE : ERR_UNKNOWN;
		return -EPIPE;
	}
	return 0;
}

static int
unit_request(struct uvc_fn *fn, uint8_t unit, uint8_t request, uint8_t selector,
	     uint16_t w_length, const uint8_t *out, size_t out_len, uint8_t *reply)
{
	const struct fn_ctrl *c = NULL;
	uint8_t buf[8] = { 0 };
	int32_t v1, v2;
	int r;

	if (unit == 0 && selector == VC_REQUEST_ERROR_CODE_CONTROL) {
		if (request == GET_CUR)
			return reply_with(reply, w_length, &fn->error_code, 1);
		if (request == GET_INFO)
			return reply_with(reply, w_length, (const uint8_t[]){ 0x01 }, 1);
		return -EPIPE;
	}
	fn->error_code = ERR_NONE;
	if (unit != ID_CAMERA && unit != ID_PROCESSING) {
		fn->error_code = unit == ID_OUTPUT ? ERR_INVALID_CONTROL : ERR_INVALID_UNIT;
		return -EPIPE;
	}
	for (unsigned int i = 0; i < fn->n_ctrls && !c; i++)
		if (fn->ctrls[i].def->unit == unit && fn->ctrls[i].def->selector == selector)
			c = &fn->ctrls[i];
	if (!c) {
		fn->error_code = ERR_INVALID_CONTROL;
		return -EPIPE;
	}
	switch (request) {
	case SET_CUR:
		if (out_len < c->def->size) {
			fn->error_code = ERR_UNKNOWN;
			return -EPIPE;
		}
		r = ctrl_set(fn, c, out);
		return r < 0 ? r : (int)out_len;
	case GET_CUR:
		r = ctrl_get(fn, c, &v1, &v2);
		if (r < 0) {
			fn->error_code = ERR_UNKNOWN;
			return -EPIPE;
		}
		break;
	case GET_MIN:
		v1 = c->range.min;
		v2 = c->range2.min;
		break;
	case GET_MAX:
		v1 = c->range.max;
		v2 = c->range2.max;
		break;
	case GET_RES:
		if (c->def->kind == CTRL_AE_MODE) {
			/* The modes the node offers, as uvcvideo reads AE mode's resolution. */
			for (int32_t i = c->range.min; i <= c->range.max; i++)
				buf[0] |= ae_mode_bits[i];
			return reply_with(reply, w_length, buf, 1);
		}
		v1 = MAX(c->range.step, 1);
		v2 = MAX(c->range2.step, 1);
		break;
	case GET_DEF:
		v1 = c->range.def;
		v2 = c->range2.def;
		break;
	case GET_INFO:
		return reply_with(reply, w_length, (const uint8_t[]){ 0x03 }, 1);
	case GET_LEN: {
		uint8_t l[2] = { c->def->size, 0 };

		return reply_with(reply, w_length, l, 2);
	}
	default:
		fn->error_code = ERR_INVALID_REQUEST;
		return -EPIPE;
	}
	ctrl_encode(c, v1, v2, buf);
	return reply_with(reply, w_length, buf, c->def->size);
}

int
uvc_fn_control(struct uvc_fn *fn, const uint8_t setup[8], const uint8_t *out, size_t out_len,
	       uint8_t *reply)
{
	uint8_t type = setup[0], request = setup[1];
	uint16_t value = get16(setup + 2), index = get16(setup + 4), w_length = get16(setup + 6);
	bool in = type & 0x80;

	if (!in && out_len < w_length)
		return -EPIPE;		/* the data stage is short */
	switch ((type >> 5) & 3) {
	case 0:
		return standard_request(fn, type, request, value, index, w_length, reply);
	case 1:
		/* Class requests to an interface (recipient 1); the entity in wIndex's high byte. */
		if ((type & 0x1f) != 1 || in != !!(request & 0x80))
			return -EPIPE;
		if ((index & 0xff) == INTF_STREAMING)
			return streaming_request(fn, request, value >> 8, w_length, out, out_len,
						 reply);
		if ((index & 0xff) == INTF_CONTROL)
			return unit_request(fn, index >> 8, request, value >> 8, w_length, out,
					    out_len, reply);
		return -EPIPE;
	default:
		return -EPIPE;
	}
}

size_t
uvc_fn_payload_header(struct uvc_fn *fn, uint8_t hdr[UVC_PAYLOAD_HEADER], size_t len,
		      size_t frame_len, size_t offset, bool error, size_t *ret_data)
{
	size_t room = len > UVC_PAYLOAD_HEADER ? len - UVC_PAYLOAD_HEADER : 0;
	size_t left = frame_len > offset ? frame_len - offset : 0;
	size_t data = MIN(room, left);

	if (offset == 0)
		fn->fid ^= UVC_HDR_FID;
	hdr[0] = UVC_PAYLOAD_HEADER;
	hdr[1] = (uint8_t)(UVC_HDR_EOH | fn->fid | (data == left ? UVC_HDR_EOF : 0) |
			   (error ? UVC_HDR_ERR : 0));
	*ret_data = data;
	return UVC_PAYLOAD_HEADER;
}
