/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * v4l2cuse-usb's pure parts (usb/uvc.c, usb/usbip.c), driven with bytes as
 * vhci-hcd and uvcvideo send them:
 * - the descriptors uvc_fn_new() makes of a node's modes, fetched with real
 *   GET_DESCRIPTOR requests and parsed the way uvcvideo parses them (the
 *   layouts and checks of uvc_driver.c, Linux 6.1);
 * - probe/commit, streaming stop, the standard requests;
 * - the Processing Unit's and Camera Terminal's controls and the request
 *   error code control;
 * - the payload headers of a frame;
 * - the USB/IP wire formats (URB protocol and network protocol).
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "usbip.h"
#include "uvc.h"
#include "test-main.h"

/* --- setup packets --- */

#define RT_STD_IN	0x80	/* device-to-host, standard, device */
#define RT_STD_OUT	0x00
#define RT_CLASS_IN	0xa1	/* device-to-host, class, interface */
#define RT_CLASS_OUT	0x21

#define REQ_GET_STATUS		0x00
#define REQ_CLEAR_FEATURE	0x01
#define REQ_SET_FEATURE		0x03
#define REQ_GET_DESCRIPTOR	0x06
#define REQ_GET_CONFIGURATION	0x08
#define REQ_SET_CONFIGURATION	0x09
#define REQ_GET_INTERFACE	0x0a
#define REQ_SET_INTERFACE	0x0b

#define SET_CUR		0x01
#define GET_CUR		0x81
#define GET_MIN		0x82
#define GET_MAX		0x83
#define GET_RES		0x84
#define GET_LEN		0x85
#define GET_INFO	0x86
#define GET_DEF		0x87

#define PROBE		0x01
#define COMMIT		0x02
#define PROBE_SIZE	26

/* Entities of the function (usb/uvc.c). */
#define UNIT_CAMERA	1
#define UNIT_PU		2
#define UNIT_OT		3

static void
setup_packet(uint8_t setup[8], uint8_t type, uint8_t request, uint16_t value, uint16_t index,
	     uint16_t w_length)
{
	setup[0] = type;
	setup[1] = request;
	setup[2] = value & 0xff;
	setup[3] = value >> 8;
	setup[4] = index & 0xff;
	setup[5] = index >> 8;
	setup[6] = w_length & 0xff;
	setup[7] = w_length >> 8;
}

/*
 * An IN request. The reply buffer is exactly @w_length bytes on the heap,
 * as face.c allocates it, so a longer answer is an ASan error. *ret gets
 * the buffer (the caller frees it) or NULL on a stall.
 */
static int
ctl_in(struct uvc_fn *fn, uint8_t type, uint8_t request, uint16_t value, uint16_t index,
       uint16_t w_length, uint8_t **ret)
{
	uint8_t setup[8];
	uint8_t *reply = g_malloc0(MAX(w_length, 1));
	int r;

	setup_packet(setup, type, request, value, index, w_length);
	r = uvc_fn_control(fn, setup, NULL, 0, reply);
	g_assert_cmpint(r, <=, (int)w_length);
	if (r < 0) {
		g_assert_cmpint(r, ==, -EPIPE);
		g_free(reply);
		reply = NULL;
	}
	if (ret)
		*ret = reply;
	else
		g_free(reply);
	return r;
}

/* An OUT request with @len bytes of data (@w_length in the setup). */
static int
ctl_out(struct uvc_fn *fn, uint8_t type, uint8_t request, uint16_t value, uint16_t index,
	uint16_t w_length, const void *data, size_t len)
{
	uint8_t setup[8];
	g_autofree uint8_t *copy = g_memdup2(data ? data : "", MAX(len, 1));
	int r;

	setup_packet(setup, type, request, value, index, w_length);
	r = uvc_fn_control(fn, setup, copy, len, NULL);
	g_assert_true(r == -EPIPE || (r >= 0 && (size_t)r <= len));
	return r;
}

static uint16_t
le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t
le32(const uint8_t *p)
{
	return le16(p) | (uint32_t)le16(p + 2) << 16;
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* --- the node's modes and controls --- */

#define R(n, d) { (n), (d) }

static const struct client_mode test_modes[] = {
	{ V4L2_PIX_FMT_YUYV, 640, 480, 1280, 614400, { R(30, 1), R(15, 1) }, 2 },
	{ V4L2_PIX_FMT_NV12, 640, 480, 640, 460800, { R(30000, 1001), R(25, 1) }, 2 },
	/* uvcvideo has no GUID for RGB3: left out. */
	{ V4L2_PIX_FMT_RGB24, 640, 480, 1920, 921600, { R(30, 1) }, 1 },
	{ V4L2_PIX_FMT_YUYV, 320, 240, 640, 153600, { R(30, 1) }, 1 },
	/* Padded lines (2752 bytes instead of 2732): uvcvideo would drop every frame. */
	{ V4L2_PIX_FMT_YUYV, 1366, 768, 2752, 2752 * 768, { R(30, 1) }, 1 },
	{ V4L2_PIX_FMT_MJPEG, 1280, 720, 0, 1843200, { R(30, 1), R(15, 1), R(5, 1) }, 3 },
	/* No rate: left out. */
	{ V4L2_PIX_FMT_YUYV, 800, 600, 1600, 960000, { R(0, 0) }, 0 },
	{ V4L2_PIX_FMT_MJPEG, 640, 480, 0, 614400, { R(30, 1) }, 1 },
};

/* What is offered, by (format index, frame index), 1-based. */
static const struct {
	uint8_t format, frame;
	unsigned int mode;		/* into test_modes[] */
	uint32_t intervals[3];
} offered[] = {
	{ 1, 1, 0, { 333333, 666666 } },
	{ 1, 2, 3, { 333333 } },
	{ 2, 1, 1, { 333666, 400000 } },
	{ 3, 1, 5, { 333333, 666666, 2000000 } },
	{ 3, 2, 7, { 333333 } },
};

static const struct uvc_ctrl_range test_ctrls[] = {
	{ V4L2_CID_BRIGHTNESS, -64, 64, 1, 0 },
	{ V4L2_CID_CONTRAST, 0, 255, 1, 128 },
	{ V4L2_CID_HUE, -180, 180, 2, 0 },
	{ V4L2_CID_POWER_LINE_FREQUENCY, 0, 2, 1, 1 },
	{ V4L2_CID_EXPOSURE_ABSOLUTE, 1, 10000, 0, 166 },
	/* Not a UVC control: left out. */
	{ V4L2_CID_CHROMA_GAIN, 0, 100, 1, 50 },
};

#define PRODUCT		"Caméra d’essai ✓ \xf0\x9f\x8e\xa5"	/* a non-BMP character too */
#define SERIAL		"SN-0042"

/* --- fake ops: the node --- */

struct fake {
	unsigned int starts, stops;
	const struct client_mode *mode;		/* of the last start */
	struct client_mode mode_copy;
	struct client_rate rate;
	int start_result;
	unsigned int gets, sets;
	uint32_t set_id;
	int32_t set_value;
	int set_result, get_result;
	struct {
		uint32_t id;
		int32_t value;
	} values[8];
};

static int
fake_start(void *data, const struct client_mode *mode, struct client_rate rate)
{
	struct fake *fk = data;

	fk->starts++;
	fk->mode = mode;
	fk->mode_copy = *mode;
	fk->rate = rate;
	return fk->start_result;
}

static void
fake_stop(void *data)
{
	struct fake *fk = data;

	fk->stops++;
}

static int
fake_get_ctrl(void *data, uint32_t id, int32_t *ret_value)
{
	struct fake *fk = data;

	fk->gets++;
	if (fk->get_result < 0)
		return fk->get_result;
	for (unsigned int i = 0; i < G_N_ELEMENTS(fk->values); i++) {
		if (fk->values[i].id == id) {
			*ret_value = fk->values[i].value;
			return 0;
		}
	}
	return -EINVAL;
}

static int
fake_set_ctrl(void *data, uint32_t id, int32_t value)
{
	struct fake *fk = data;

	fk->sets++;
	fk->set_id = id;
	fk->set_value = value;
	return fk->set_result;
}

static const struct uvc_fn_ops fake_ops = {
	.start = fake_start,
	.stop = fake_stop,
	.get_ctrl = fake_get_ctrl,
	.set_ctrl = fake_set_ctrl,
};

struct fixture {
	struct fake fake;
	struct uvc_fn *fn;
};

static void
fixture_setup(struct fixture *f, gconstpointer data)
{
	memset(&f->fake, 0, sizeof(f->fake));
	f->fake.values[0].id = V4L2_CID_BRIGHTNESS;
	f->fake.values[0].value = -5;
	f->fake.values[1].id = V4L2_CID_CONTRAST;
	f->fake.values[1].value = 200;
	f->fake.values[2].id = V4L2_CID_HUE;
	f->fake.values[2].value = -180;
	f->fake.values[3].id = V4L2_CID_POWER_LINE_FREQUENCY;
	f->fake.values[3].value = 2;
	f->fake.values[4].id = V4L2_CID_EXPOSURE_ABSOLUTE;
	f->fake.values[4].value = 10000;
	f->fn = uvc_fn_new(test_modes, G_N_ELEMENTS(test_modes), test_ctrls,
			   G_N_ELEMENTS(test_ctrls), PRODUCT, SERIAL, &fake_ops, &f->fake);
	g_assert_nonnull(f->fn);
}

static void
fixture_teardown(struct fixture *f, gconstpointer data)
{
	uvc_fn_free(f->fn);
}

V4L2CUSE_TEST_FIXTURE(struct fixture, fixture_setup, fixture_teardown);

/* --- a configuration descriptor parser after uvcvideo's --- */

struct parsed_frame {
	uint8_t subtype, index;
	uint16_t width, height;
	uint32_t min_bit_rate, max_bit_rate, max_buffer, default_interval;
	uint8_t n_intervals;
	uint32_t intervals[CLIENT_MAX_RATES];
};

struct parsed_format {
	uint8_t subtype, index, n_frame_descs, bpp, default_frame;
	uint8_t guid[16];
	struct parsed_frame frames[8];
	unsigned int n_frames;
	bool colour;
	uint8_t primaries, transfer, matrix;
};

struct parsed {
	/* configuration */
	uint16_t total_length;
	uint8_t n_interfaces, configuration_value;
	/* interface association */
	bool iad;
	uint8_t iad_first, iad_count, iad_class, iad_subclass;
	/* interfaces 0 (control) and 1 (streaming) */
	unsigned int n_alts[2];
	uint8_t intf_class[2], intf_subclass[2], n_endpoints[2];
	unsigned int endpoints_seen[2];
	uint8_t ep_address, ep_attributes;
	uint16_t ep_max_packet;
	/* VideoControl */
	uint16_t bcd_uvc, vc_total;
	size_t vc_bytes;
	uint8_t vc_in_collection, vc_interface;
	uint8_t ct_id, ct_controls[3];
	uint16_t ct_type;
	uint8_t pu_id, pu_source, pu_controls[2];
	uint8_t ot_id, ot_source;
	uint16_t ot_type;
	/* VideoStreaming */
	uint16_t vs_total;
	size_t vs_bytes;
	uint8_t vs_n_formats, vs_endpoint, vs_terminal_link;
	struct parsed_format formats[8];
	unsigned int n_formats;
};

static void
parse_vc(struct parsed *p, const uint8_t *d)
{
	uint8_t len = d[0];

	switch (d[2]) {
	case 0x01:	/* header */
		g_assert_cmpuint(p->vc_bytes, ==, 0);	/* the first of them */
		g_assert_cmpuint(len, >=, 12);
		p->bcd_uvc = le16(d + 3);
		p->vc_total = le16(d + 5);
		p->vc_in_collection = d[11];
		g_assert_cmpuint(len, >=, 12 + d[11]);
		p->vc_interface = d[12];
		break;
	case 0x02:	/* input terminal */
		g_assert_cmpuint(len, >=, 15);
		p->ct_id = d[3];
		p->ct_type = le16(d + 4);
		g_assert_cmpuint(d[14], ==, 3);		/* bControlSize */
		g_assert_cmpuint(len, >=, 15 + d[14]);
		memcpy(p->ct_controls, d + 15, 3);
		break;
	case 0x05:	/* processing unit: UVC 1.0 is 9 + n bytes, 1.1 10 + n */
		g_assert_cmpuint(p->bcd_uvc, !=, 0);	/* after the header */
		g_assert_cmpuint(len, >=, (p->bcd_uvc >= 0x0110 ? 10 : 9) + d[7]);
		g_assert_cmpuint(d[7], ==, 2);
		p->pu_id = d[3];
		p->pu_source = d[4];
		memcpy(p->pu_controls, d + 8, 2);
		break;
	case 0x03:	/* output terminal */
		g_assert_cmpuint(len, >=, 9);
		p->ot_id = d[3];
		p->ot_type = le16(d + 4);
		p->ot_source = d[7];
		break;
	default:
		g_assert_not_reached();
	}
	p->vc_bytes += len;
}

static void
parse_vs(struct parsed *p, const uint8_t *d, uint8_t prev_subtype)
{
	uint8_t len = d[0];
	struct parsed_format *fmt = p->n_formats ? &p->formats[p->n_formats - 1] : NULL;

	switch (d[2]) {
	case 0x01:	/* input header */
		g_assert_cmpuint(p->vs_bytes, ==, 0);
		p->vs_n_formats = d[3];
		p->vs_total = le16(d + 4);
		p->vs_endpoint = d[6];
		p->vs_terminal_link = d[8];
		g_assert_cmpuint(len, >=, 13 + d[3] * d[12]);
		break;
	case 0x04:	/* format uncompressed */
	case 0x06:	/* format MJPEG */
		g_assert_cmpuint(p->n_formats, <, G_N_ELEMENTS(p->formats));
		fmt = &p->formats[p->n_formats++];
		fmt->subtype = d[2];
		fmt->index = d[3];
		fmt->n_frame_descs = d[4];
		if (d[2] == 0x04) {
			g_assert_cmpuint(len, >=, 27);
			memcpy(fmt->guid, d + 5, 16);
			fmt->bpp = d[21];
			fmt->default_frame = d[22];
		} else {
			g_assert_cmpuint(len, >=, 11);
			fmt->default_frame = d[6];
		}
		break;
	case 0x05:	/* frame uncompressed */
	case 0x07: {	/* frame MJPEG */
		struct parsed_frame *fr;

		/* uvcvideo takes the frames right after their format, of its kind. */
		g_assert_nonnull(fmt);
		g_assert_cmpuint(d[2], ==, fmt->subtype + 1);
		g_assert_true(prev_subtype == fmt->subtype || prev_subtype == d[2]);
		g_assert_cmpuint(fmt->n_frames, <, G_N_ELEMENTS(fmt->frames));
		fr = &fmt->frames[fmt->n_frames++];
		fr->subtype = d[2];
		fr->index = d[3];
		fr->width = le16(d + 5);
		fr->height = le16(d + 7);
		fr->min_bit_rate = le32(d + 9);
		fr->max_bit_rate = le32(d + 13);
		fr->max_buffer = le32(d + 17);
		fr->default_interval = le32(d + 21);
		fr->n_intervals = d[25];
		g_assert_cmpuint(fr->n_intervals, >, 0);	/* discrete */
		g_assert_cmpuint(fr->n_intervals, <=, CLIENT_MAX_RATES);
		g_assert_cmpuint(len, ==, 26 + 4 * fr->n_intervals);
		for (unsigned int i = 0; i < fr->n_intervals; i++)
			fr->intervals[i] = le32(d + 26 + 4 * i);
		break;
	}
	case 0x0d:	/* colour matching: right after the format's last frame */
		g_assert_nonnull(fmt);
		g_assert_cmpuint(len, ==, 6);
		g_assert_cmpuint(prev_subtype, ==, fmt->subtype + 1);
		fmt->colour = true;
		fmt->primaries = d[3];
		fmt->transfer = d[4];
		fmt->matrix = d[5];
		break;
	default:
		g_assert_not_reached();
	}
	p->vs_bytes += len;
}

static void
parse_config(const uint8_t *d, size_t n, struct parsed *p)
{
	int intf = -1;
	uint8_t prev_vs_subtype = 0;
	bool in_vs_class = false;

	memset(p, 0, sizeof(*p));
	g_assert_cmpuint(n, >=, 9);
	g_assert_cmpuint(d[0], ==, 9);
	g_assert_cmpuint(d[1], ==, 2);
	p->total_length = le16(d + 2);
	g_assert_cmpuint(p->total_length, ==, n);
	p->n_interfaces = d[4];
	p->configuration_value = d[5];

	for (size_t off = 9; off < n;) {
		const uint8_t *x = d + off;

		g_assert_cmpuint(n - off, >=, 2);
		g_assert_cmpuint(x[0], >=, 2);
		g_assert_cmpuint(x[0], <=, n - off);
		switch (x[1]) {
		case 0x0b:	/* interface association */
			g_assert_cmpuint(x[0], ==, 8);
			g_assert_cmpint(intf, ==, -1);	/* before its interfaces */
			p->iad = true;
			p->iad_first = x[2];
			p->iad_count = x[3];
			p->iad_class = x[4];
			p->iad_subclass = x[5];
			break;
		case 0x04:	/* interface */
			g_assert_cmpuint(x[0], ==, 9);
			g_assert_cmpuint(x[2], <=, 1);
			intf = x[2];
			p->n_alts[intf]++;
			g_assert_cmpuint(x[3], ==, 0);	/* bAlternateSetting */
			p->n_endpoints[intf] = x[4];
			p->intf_class[intf] = x[5];
			p->intf_subclass[intf] = x[6];
			in_vs_class = false;
			break;
		case 0x24:	/* class-specific interface */
			g_assert_cmpint(intf, >=, 0);
			g_assert_cmpuint(x[0], >=, 3);
			if (intf == 0) {
				parse_vc(p, x);
			} else {
				/* Every class-specific VS descriptor comes before the endpoint. */
				g_assert_cmpuint(p->endpoints_seen[1], ==, 0);
				parse_vs(p, x, in_vs_class ? prev_vs_subtype : 0);
				prev_vs_subtype = x[2];
				in_vs_class = true;
			}
			break;
		case 0x05:	/* endpoint */
			g_assert_cmpint(intf, >=, 0);
			g_assert_cmpuint(x[0], ==, 7);
			p->endpoints_seen[intf]++;
			p->ep_address = x[2];
			p->ep_attributes = x[3];
			p->ep_max_packet = le16(x + 4);
			break;
		default:
			g_assert_not_reached();
		}
		off += x[0];
	}
}

static GByteArray *
get_config(struct uvc_fn *fn)
{
	g_autofree uint8_t *head = NULL;
	uint8_t *full = NULL;
	GByteArray *a = g_byte_array_new();
	uint16_t total;
	int r;

	/* Linux reads the 9-byte header first, then wTotalLength. */
	r = ctl_in(fn, RT_STD_IN, REQ_GET_DESCRIPTOR, 0x0200, 0, 9, &head);
	g_assert_cmpint(r, ==, 9);
	total = le16(head + 2);
	r = ctl_in(fn, RT_STD_IN, REQ_GET_DESCRIPTOR, 0x0200, 0, total, &full);
	g_assert_cmpint(r, ==, total);
	g_assert_cmpmem(full, 9, head, 9);
	g_byte_array_append(a, full, (guint)r);
	g_free(full);
	/* A longer wLength gets the same. */
	r = ctl_in(fn, RT_STD_IN, REQ_GET_DESCRIPTOR, 0x0200, 0, 0xffff, &full);
	g_assert_cmpint(r, ==, total);
	g_assert_cmpmem(full, r, a->data, a->len);
	g_free(full);
	return a;
}

static const uint8_t guid_tail[12] = {
	0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71
};

/* --- descriptors --- */

V4L2CUSE_TEST_F("/usb/uvc/device-descriptor", test_device_descriptor)
{
	g_autofree uint8_t *d = NULL, *d8 = NULL;
	uint16_t vendor, product, bcd;

	g_assert_cmpint(ctl_in(f->fn, RT_STD_IN, REQ_GET_DESCRIPTOR, 0x0100, 0, 64, &d), ==, 18);
	g_assert_cmpuint(d[0], ==, 18);
	g_assert_cmpuint(d[1], ==, 1);
	g_assert_cmpuint(le16(d + 2), ==, 0x0200);
	/* Miscellaneous / common class / IAD: what a composite video device says. */
	g_assert_cmpuint(d[4], ==, 0xef);
	g_assert_cmpuint(d[5], ==, 0x02);
	g_assert_cmpuint(d[6], ==, 0x01);
	g_assert_cmpuint(d[7], ==, 64);
	uvc_fn_ids(f->fn, &vendor, &product, &bcd);
	g_assert_cmpuint(le16(d + 8), ==, vendor);
	g_assert_cmpuint(le16(d + 10), ==, product);
	g_assert_cmpuint(le16(d + 12), ==, bcd);
	g_assert_cmpuint(d[14], ==, 1);
	g_assert_cmpuint(d[15], ==, 2);
	g_assert_cmpuint(d[16], ==, 3);
	g_assert_cmpuint(d[17], ==, 1);
	/* The first 8 bytes only, as an old enumeration asks. */
	g_assert_cmpint(ctl_in(f->fn, RT_STD_IN, REQ_GET_DESCRIPTOR, 0x0100, 0, 8, &d8), ==, 8);
	g_assert_cmpmem(d8, 8, d, 8);
	/* Device qualifier, other speed, BOS, a second configuration: stall. */
	g_assert_cmpint(ctl_in(f->fn, RT_STD_IN, REQ_GET_DESCRIPTOR, 0x0600, 0, 10, NULL), ==,
			-EPIPE);
	g_assert_cmpint(ctl_in(f->fn, RT_STD_IN, REQ_GET_DESCRIPTOR, 0x0700, 0, 9, NULL), ==,
			-EPIPE);
	g_assert_cmpint(ctl_in(f->fn, RT_STD_IN, REQ_GET_DESCRIPTOR, 0x0f00, 0, 5, NULL), ==,
			-EPIPE);
	g_assert_cmpint(ctl_in(f->fn, RT_STD_IN, REQ_GET_DESCRIPTOR, 0x0201, 0, 9, NULL), ==,
			-EPIPE);
	/* GET_DESCRIPTOR as an OUT request: stall. */
	g_assert_cmpint(ctl_out(f->fn, RT_STD_OUT, REQ_GET_DESCRIPTOR, 0x0100, 0, 0, NULL, 0), ==,
			-EPIPE);
}

V4L2CUSE_TEST_F("/usb/uvc/config-descriptor", test_config_descriptor)
{
	g_autoptr(GByteArray) c = get_config(f->fn);
	struct parsed p;

	parse_config(c->data, c->len, &p);
	g_assert_cmpuint(p.n_interfaces, ==, 2);
	g_assert_cmpuint(p.configuration_value, ==, 1);

	/* The IAD groups both interfaces as one video function. */
	g_assert_true(p.iad);
	g_assert_cmpuint(p.iad_first, ==, 0);
	g_assert_cmpuint(p.iad_count, ==, 2);
	g_assert_cmpuint(p.iad_class, ==, 0x0e);
	g_assert_cmpuint(p.iad_subclass, ==, 0x03);

	/* One alternate setting each (bulk streaming), the one endpoint in VS. */
	g_assert_cmpuint(p.n_alts[0], ==, 1);
	g_assert_cmpuint(p.n_alts[1], ==, 1);
	g_assert_cmpuint(p.intf_class[0], ==, 0x0e);
	g_assert_cmpuint(p.intf_subclass[0], ==, 0x01);
	g_assert_cmpuint(p.intf_class[1], ==, 0x0e);
	g_assert_cmpuint(p.intf_subclass[1], ==, 0x02);
	g_assert_cmpuint(p.n_endpoints[0], ==, 0);
	g_assert_cmpuint(p.endpoints_seen[0], ==, 0);
	g_assert_cmpuint(p.n_endpoints[1], ==, 1);
	g_assert_cmpuint(p.endpoints_seen[1], ==, 1);
	g_assert_cmpuint(p.ep_address, ==, UVC_EP_IN);
	g_assert_cmpuint(p.ep_address, ==, 0x81);
	g_assert_cmpuint(p.ep_attributes & 3, ==, 2);	/* bulk */
	g_assert_cmpuint(p.ep_max_packet, ==, 512);

	/* VideoControl: header with its length, camera -> PU -> streaming OT. */
	g_assert_cmpuint(p.bcd_uvc, ==, 0x0100);
	g_assert_cmpuint(p.vc_total, ==, p.vc_bytes);
	g_assert_cmpuint(p.vc_in_collection, ==, 1);
	g_assert_cmpuint(p.vc_interface, ==, 1);
	g_assert_cmpuint(p.ct_type, ==, 0x0201);
	g_assert_cmpuint(p.ot_type, ==, 0x0101);
	g_assert_cmpuint(p.pu_source, ==, p.ct_id);
	g_assert_cmpuint(p.ot_source, ==, p.pu_id);
	g_assert_cmpuint(p.ct_id, ==, UNIT_CAMERA);
	g_assert_cmpuint(p.pu_id, ==, UNIT_PU);
	g_assert_cmpuint(p.ot_id, ==, UNIT_OT);

	/* VideoStreaming: the input header's length is that of what follows up to the endpoint. */
	g_assert_cmpuint(p.vs_total, ==, p.vs_bytes);
	g_assert_cmpuint(p.vs_endpoint, ==, 0x81);
	g_assert_cmpuint(p.vs_terminal_link, ==, p.ot_id);
	g_assert_cmpuint(p.vs_n_formats, ==, 3);
	g_assert_cmpuint(p.n_formats, ==, 3);
	g_assert_cmpuint(uvc_fn_n_modes(f->fn), ==, G_N_ELEMENTS(offered));
}

V4L2CUSE_TEST_F("/usb/uvc/formats-and-frames", test_formats_and_frames)
{
	g_autoptr(GByteArray) c = get_config(f->fn);
	struct parsed p;
	unsigned int k = 0;

	parse_config(c->data, c->len, &p);
	/* YUY2, NV12, MJPEG in the node's order; RGB3, padded YUYV and the rateless mode gone. */
	for (unsigned int i = 0; i < p.n_formats; i++) {
		const struct parsed_format *fmt = &p.formats[i];

		g_assert_cmpuint(fmt->index, ==, i + 1);
		g_assert_cmpuint(fmt->n_frame_descs, ==, fmt->n_frames);
		g_assert_cmpuint(fmt->default_frame, >=, 1);
		g_assert_cmpuint(fmt->default_frame, <=, fmt->n_frames);
		g_assert_true(fmt->colour);
		for (unsigned int j = 0; j < fmt->n_frames; j++, k++) {
			const struct parsed_frame *fr = &fmt->frames[j];
			const struct client_mode *m;

			g_assert_cmpuint(k, <, G_N_ELEMENTS(offered));
			g_assert_cmpuint(offered[k].format, ==, fmt->index);
			g_assert_cmpuint(offered[k].frame, ==, fr->index);
			g_assert_cmpuint(fr->index, ==, j + 1);
			m = &test_modes[offered[k].mode];
			g_assert_cmpuint(fr->width, ==, m->width);
			g_assert_cmpuint(fr->height, ==, m->height);
			g_assert_cmpuint(fr->max_buffer, ==, m->size);
			/* What uvcvideo computes for uncompressed frames: the node's size. */
			if (fmt->subtype == 0x04)
				g_assert_cmpuint((uint64_t)fmt->bpp * fr->width * fr->height / 8,
						 ==, m->size);
			g_assert_cmpuint(fr->min_bit_rate, ==, m->size * 8);
			g_assert_cmpuint(fr->max_bit_rate, >=, fr->min_bit_rate);
			g_assert_cmpuint(fr->n_intervals, ==, m->n_rates);
			g_assert_cmpuint(fr->default_interval, ==, offered[k].intervals[0]);
			for (unsigned int r = 0; r < fr->n_intervals; r++)
				g_assert_cmpuint(fr->intervals[r], ==, offered[k].intervals[r]);
		}
	}
	g_assert_cmpuint(k, ==, G_N_ELEMENTS(offered));

	/* YUY2: 59 55 59 32 + the standard tail, 16 bits. */
	g_assert_cmpuint(p.formats[0].subtype, ==, 0x04);
	g_assert_cmpmem(p.formats[0].guid, 4, "YUY2", 4);
	g_assert_cmpmem(p.formats[0].guid + 4, 12, guid_tail, 12);
	g_assert_cmpuint(p.formats[0].bpp, ==, 16);
	g_assert_cmpuint(p.formats[0].frames[0].subtype, ==, 0x05);
	/* NV12: 4e 56 31 32, 12 bits. */
	g_assert_cmpuint(p.formats[1].subtype, ==, 0x04);
	g_assert_cmpmem(p.formats[1].guid, 4, "NV12", 4);
	g_assert_cmpmem(p.formats[1].guid + 4, 12, guid_tail, 12);
	g_assert_cmpuint(p.formats[1].bpp, ==, 12);
	/* MJPEG: its own subtypes, no GUID. */
	g_assert_cmpuint(p.formats[2].subtype, ==, 0x06);
	g_assert_cmpuint(p.formats[2].frames[0].subtype, ==, 0x07);
	g_assert_cmpuint(p.formats[2].frames[1].subtype, ==, 0x07);
	/* 30 fps in 100 ns units. */
	g_assert_cmpuint(p.formats[2].frames[0].intervals[0], ==, 333333);
}

V4L2CUSE_TEST("/usb/uvc/no-mode-left", test_no_mode_left)
{
	static const struct client_mode modes[] = {
		{ V4L2_PIX_FMT_RGB24, 640, 480, 1920, 921600, { R(30, 1) }, 1 },
		{ V4L2_PIX_FMT_YUYV, 640, 480, 1280, 614400, { R(30, 1) }, 0 },
		{ V4L2_PIX_FMT_YUYV, 641, 480, 1284, 641 * 480 * 2 + 480, { R(30, 1) }, 1 },
		{ V4L2_PIX_FMT_MJPEG, 640, 480, 0, 0, { R(30, 1) }, 1 },
		{ V4L2_PIX_FMT_MJPEG, 70000, 480, 0, 614400, { R(30, 1) }, 1 },
	};
	struct fake fk = { 0 };

	g_assert_null(uvc_fn_new(modes, G_N_ELEMENTS(modes), NULL, 0, "p", "s", &fake_ops, &fk));
	g_assert_null(uvc_fn_new(NULL, 0, NULL, 0, "p", "s", &fake_ops, &fk));
	g_assert_true(uvc_fourcc_supported(V4L2_PIX_FMT_YUYV));
	g_assert_true(uvc_fourcc_supported(V4L2_PIX_FMT_NV12));
	g_assert_true(uvc_fourcc_supported(V4L2_PIX_FMT_MJPEG));
	g_assert_false(uvc_fourcc_supported(V4L2_PIX_FMT_RGB24));
	g_assert_false(uvc_fourcc_supported(V4L2_PIX_FMT_H264));
}

/* The string descriptor @index as UTF-8 (NULL on stall), checking its framing. */
static char *
get_string(struct uvc_fn *fn, uint8_t index, uint16_t w_length)
{
	g_autofree uint8_t *d = NULL;
	g_autofree gunichar2 *u16 = NULL;
	int r = ctl_in(fn, RT_STD_IN, REQ_GET_DESCRIPTOR, (uint16_t)(0x0300 | index), 0x0409,
		       w_length, &d);
	unsigned int n;
	char *s;

	if (r < 0)
		return NULL;
	g_assert_cmpint(r, >=, 2);
	g_assert_cmpint(r, ==, MIN(d[0], w_length));
	g_assert_cmpuint(d[1], ==, 3);
	g_assert_cmpuint(d[0] % 2, ==, 0);
	n = (unsigned int)(r - 2) / 2;
	u16 = g_new0(gunichar2, n + 1);
	for (unsigned int i = 0; i < n; i++)
		u16[i] = le16(d + 2 + 2 * i);
	s = g_utf16_to_utf8(u16, n, NULL, NULL, NULL);
	g_assert_nonnull(s);		/* well-formed UTF-16: no lone surrogate */
	return s;
}

V4L2CUSE_TEST_F("/usb/uvc/strings", test_strings)
{
	g_autofree uint8_t *langs = NULL;
	g_autofree char *s1 = NULL, *s2 = NULL, *s3 = NULL, *s2_short = NULL;

	/* 0: the language IDs, en-US. */
	g_assert_cmpint(ctl_in(f->fn, RT_STD_IN, REQ_GET_DESCRIPTOR, 0x0300, 0, 255, &langs), ==,
			4);
	g_assert_cmpuint(langs[0], ==, 4);
	g_assert_cmpuint(langs[1], ==, 3);
	g_assert_cmpuint(le16(langs + 2), ==, 0x0409);

	s1 = get_string(f->fn, 1, 255);
	s2 = get_string(f->fn, 2, 255);
	s3 = get_string(f->fn, 3, 255);
	g_assert_cmpstr(s1, ==, "v4l2cuse");
	g_assert_cmpstr(s2, ==, PRODUCT);
	g_assert_cmpstr(s3, ==, SERIAL);
	/* Linux's usb_string() asks with 255; a 2-byte read gives the length. */
	s2_short = get_string(f->fn, 2, 2);
	g_assert_cmpstr(s2_short, ==, "");

	/* Out of range: stall. */
	g_assert_null(get_string(f->fn, 4, 255));
	g_assert_null(get_string(f->fn, 0xee, 255));
	g_assert_null(get_string(f->fn, 0xff, 255));
}

V4L2CUSE_TEST("/usb/uvc/strings-long", test_strings_long)
{
	g_autofree char *ascii = g_strnfill(200, 'x');
	g_autofree char *head125 = g_strnfill(125, 'a');
	g_autofree char *split = g_strconcat(head125, "\xf0\x9f\x8e\xa5", "tail", NULL);
	g_autofree char *long_utf8 = NULL;
	g_autofree char *got = NULL, *got_split = NULL, *got_bad = NULL;
	GString *u = g_string_new(NULL);
	struct fake fk = { 0 };
	struct uvc_fn *fn;

	for (unsigned int i = 0; i < 130; i++)
		g_string_append(u, "é");
	long_utf8 = g_string_free(u, FALSE);

	/* 200 characters: 126 of them (bLength 254, the most a byte allows). */
	fn = uvc_fn_new(test_modes, 1, NULL, 0, ascii, long_utf8, &fake_ops, &fk);
	got = get_string(fn, 2, 255);
	g_assert_cmpuint(strlen(got), ==, 126);
	g_assert_true(strncmp(got, ascii, 126) == 0);
	g_free(got);
	got = get_string(fn, 3, 255);
	g_assert_cmpuint(g_utf8_strlen(got, -1), ==, 126);
	g_assert_true(strncmp(got, long_utf8, strlen(got)) == 0);
	uvc_fn_free(fn);

	/*
	 * A character outside the BMP across the 126th unit: the descriptor
	 * stops before it rather than end in half a surrogate pair.
	 */
	fn = uvc_fn_new(test_modes, 1, NULL, 0, split, "not UTF-8 \xff", &fake_ops, &fk);
	got_split = get_string(fn, 2, 255);
	g_assert_cmpstr(got_split, ==, head125);
	/* Invalid UTF-8: an empty string. */
	got_bad = get_string(fn, 3, 255);
	g_assert_cmpstr(got_bad, ==, "");
	uvc_fn_free(fn);
}

/* --- probe and commit --- */

static void
probe_set(uint8_t p[PROBE_SIZE], uint8_t format, uint8_t frame, uint32_t interval)
{
	memset(p, 0, PROBE_SIZE);
	p[0] = 1;			/* bmHint: dwFrameInterval */
	p[2] = format;
	p[3] = frame;
	p[4] = interval & 0xff;
	p[5] = (interval >> 8) & 0xff;
	p[6] = (interval >> 16) & 0xff;
	p[7] = interval >> 24;
}

static int
probe_out(struct uvc_fn *fn, uint8_t selector, uint8_t format, uint8_t frame, uint32_t interval)
{
	uint8_t p[PROBE_SIZE];

	probe_set(p, format, frame, interval);
	return ctl_out(fn, RT_CLASS_OUT, SET_CUR, (uint16_t)(selector << 8), 1, PROBE_SIZE, p,
		       PROBE_SIZE);
}

/* GET_@request of @selector: the fields that matter. */
static void
probe_check(struct uvc_fn *fn, uint8_t request, uint8_t selector, uint8_t format, uint8_t frame,
	    uint32_t interval, uint32_t frame_size)
{
	g_autofree uint8_t *p = NULL;

	g_assert_cmpint(ctl_in(fn, RT_CLASS_IN, request, (uint16_t)(selector << 8), 1, PROBE_SIZE,
			       &p), ==, PROBE_SIZE);
	g_assert_cmpuint(p[2], ==, format);
	g_assert_cmpuint(p[3], ==, frame);
	g_assert_cmpuint(le32(p + 4), ==, interval);
	g_assert_cmpuint(le32(p + 18), ==, frame_size);
	g_assert_cmpuint(le32(p + 22), ==, UVC_PAYLOAD_SIZE);
}

V4L2CUSE_TEST_F("/usb/uvc/probe", test_probe)
{
	static const struct {
		uint8_t format, frame;
		uint32_t interval;
		uint8_t want_format, want_frame;
		uint32_t want_interval, want_size;
	} cases[] = {
		/* As offered. */
		{ 1, 1, 333333, 1, 1, 333333, 614400 },
		{ 1, 1, 666666, 1, 1, 666666, 614400 },
		{ 1, 2, 333333, 1, 2, 333333, 153600 },
		{ 2, 1, 400000, 2, 1, 400000, 460800 },
		{ 3, 2, 333333, 3, 2, 333333, 614400 },
		/* 0: the frame's default interval. */
		{ 3, 1, 0, 3, 1, 333333, 1843200 },
		{ 2, 1, 0, 2, 1, 333666, 460800 },
		/* Rounded to the closest offered. */
		{ 2, 1, 333333, 2, 1, 333666, 460800 },
		{ 3, 1, 700000, 3, 1, 666666, 1843200 },
		{ 3, 1, 1300000, 3, 1, 666666, 1843200 },
		{ 3, 1, 1400000, 3, 1, 2000000, 1843200 },
		{ 3, 1, 1, 3, 1, 333333, 1843200 },
		{ 3, 1, 0xffffffff, 3, 1, 2000000, 1843200 },
		/* Indices out of range: clamped. */
		{ 0, 0, 0, 1, 1, 333333, 614400 },
		{ 1, 9, 333333, 1, 2, 333333, 153600 },
		{ 200, 200, 333333, 3, 2, 333333, 614400 },
		{ 2, 0, 0, 2, 1, 333666, 460800 },
		{ 4, 1, 0, 3, 1, 333333, 1843200 },
	};
	g_autofree uint8_t *len = NULL, *info = NULL, *part = NULL;
	uint8_t p34[34];

	/* Before any SET_CUR: the first frame of the first format at its default rate. */
	probe_check(f->fn, GET_CUR, PROBE, 1, 1, 333333, 614400);
	probe_check(f->fn, GET_DEF, PROBE, 1, 1, 333333, 614400);
	probe_check(f->fn, GET_CUR, COMMIT, 1, 1, 333333, 614400);

	for (unsigned int i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_test_message("probe %u/%u/%u", cases[i].format, cases[i].frame,
			       cases[i].interval);
		g_assert_cmpint(probe_out(f->fn, PROBE, cases[i].format, cases[i].frame,
					  cases[i].interval), ==, PROBE_SIZE);
		probe_check(f->fn, GET_CUR, PROBE, cases[i].want_format, cases[i].want_frame,
			    cases[i].want_interval, cases[i].want_size);
		/* GET_MIN/GET_MAX (uvcvideo asks both at S_FMT): the same probe. */
		probe_check(f->fn, GET_MIN, PROBE, cases[i].want_format, cases[i].want_frame,
			    cases[i].want_interval, cases[i].want_size);
		probe_check(f->fn, GET_MAX, PROBE, cases[i].want_format, cases[i].want_frame,
			    cases[i].want_interval, cases[i].want_size);
	}
	/* Probing starts nothing and leaves the committed state alone. */
	g_assert_cmpuint(f->fake.starts, ==, 0);
	probe_check(f->fn, GET_CUR, COMMIT, 1, 1, 333333, 614400);

	/* GET_LEN, GET_INFO. */
	g_assert_cmpint(ctl_in(f->fn, RT_CLASS_IN, GET_LEN, PROBE << 8, 1, 2, &len), ==, 2);
	g_assert_cmpuint(le16(len), ==, PROBE_SIZE);
	g_assert_cmpint(ctl_in(f->fn, RT_CLASS_IN, GET_INFO, PROBE << 8, 1, 1, &info), ==, 1);
	g_assert_cmpuint(info[0], ==, 0x03);	/* GET and SET supported */

	/* A shorter GET gets the beginning. */
	g_assert_cmpint(ctl_in(f->fn, RT_CLASS_IN, GET_CUR, PROBE << 8, 1, 4, &part), ==, 4);
	g_assert_cmpuint(part[2], ==, 3);

	/* A UVC 1.1 host's 34 bytes: the 26 of 1.0 are taken. */
	memset(p34, 0xee, sizeof(p34));
	probe_set(p34, 2, 1, 400000);
	g_assert_cmpint(ctl_out(f->fn, RT_CLASS_OUT, SET_CUR, PROBE << 8, 1, 34, p34, 34), ==, 34);
	probe_check(f->fn, GET_CUR, PROBE, 2, 1, 400000, 460800);

	/* The data stage shorter than wLength: stall, nothing changes. */
	probe_set(p34, 1, 2, 333333);
	g_assert_cmpint(ctl_out(f->fn, RT_CLASS_OUT, SET_CUR, PROBE << 8, 1, PROBE_SIZE, p34, 10),
			==, -EPIPE);
	probe_check(f->fn, GET_CUR, PROBE, 2, 1, 400000, 460800);

	/* A GET with the OUT direction, a SET with IN: stall. */
	g_assert_cmpint(ctl_out(f->fn, RT_CLASS_OUT, GET_CUR, PROBE << 8, 1, 0, NULL, 0), ==,
			-EPIPE);
	g_assert_cmpint(ctl_in(f->fn, RT_CLASS_IN, SET_CUR, PROBE << 8, 1, PROBE_SIZE, NULL), ==,
			-EPIPE);
	/* Another streaming selector: stall. */
	g_assert_cmpint(ctl_in(f->fn, RT_CLASS_IN, GET_CUR, 0x0300, 1, PROBE_SIZE, NULL), ==,
			-EPIPE);
	/* Another interface: stall. */
	g_assert_cmpint(ctl_in(f->fn, RT_CLASS_IN, GET_CUR, PROBE << 8, 2, PROBE_SIZE, NULL), ==,
			-EPIPE);
}

/* GET_CUR of VC_REQUEST_ERROR_CODE_CONTROL (unit 0, selector 2). */
static uint8_t
error_code(struct uvc_fn *fn)
{
	g_autofree uint8_t *e = NULL;

	g_assert_cmpint(ctl_in(fn, RT_CLASS_IN, GET_CUR, 0x0200, 0x0000, 1, &e), ==, 1);
	return e[0];
}

V4L2CUSE_TEST_F("/usb/uvc/commit", test_commit)
{
	g_autofree uint8_t *info = NULL;

	/* What uvcvideo's STREAMON sends: the last probe. */
	g_assert_cmpint(probe_out(f->fn, COMMIT, 2, 1, 333333), ==, PROBE_SIZE);
	g_assert_cmpuint(f->fake.starts, ==, 1);
	g_assert_true(f->fake.mode_copy.fourcc == V4L2_PIX_FMT_NV12);
	g_assert_cmpuint(f->fake.mode_copy.width, ==, 640);
	g_assert_cmpuint(f->fake.mode_copy.height, ==, 480);
	g_assert_cmpuint(f->fake.mode_copy.size, ==, 460800);
	g_assert_cmpuint(f->fake.rate.num, ==, 30000);
	g_assert_cmpuint(f->fake.rate.denom, ==, 1001);
	probe_check(f->fn, GET_CUR, COMMIT, 2, 1, 333666, 460800);
	probe_check(f->fn, GET_CUR, PROBE, 2, 1, 333666, 460800);

	/* Another mode without a stop in between: started again. */
	g_assert_cmpint(probe_out(f->fn, COMMIT, 3, 1, 666666), ==, PROBE_SIZE);
	g_assert_cmpuint(f->fake.starts, ==, 2);
	g_assert_cmpuint(f->fake.stops, ==, 0);
	g_assert_true(f->fake.mode_copy.fourcc == V4L2_PIX_FMT_MJPEG);
	g_assert_cmpuint(f->fake.mode_copy.width, ==, 1280);
	g_assert_cmpuint(f->fake.rate.num, ==, 15);
	g_assert_cmpuint(f->fake.rate.denom, ==, 1);

	/* The default interval, clamped indices. */
	g_assert_cmpint(probe_out(f->fn, COMMIT, 9, 9, 0), ==, PROBE_SIZE);
	g_assert_cmpuint(f->fake.mode_copy.width, ==, 640);
	g_assert_true(f->fake.mode_copy.fourcc == V4L2_PIX_FMT_MJPEG);
	g_assert_cmpuint(f->fake.rate.num, ==, 30);
	g_assert_cmpuint(f->fake.rate.denom, ==, 1);
	g_assert_cmpuint(f->fake.starts, ==, 3);

	/* A start that fails: stall, a non-zero error code, nothing committed. */
	f->fake.start_result = -EBUSY;
	g_assert_cmpint(probe_out(f->fn, COMMIT, 1, 2, 333333), ==, -EPIPE);
	g_assert_cmpuint(f->fake.starts, ==, 4);
	g_assert_cmpuint(error_code(f->fn), !=, 0);
	probe_check(f->fn, GET_CUR, COMMIT, 3, 2, 333333, 614400);
	/* GET_INFO of the error code control: GET only. */
	g_assert_cmpint(ctl_in(f->fn, RT_CLASS_IN, GET_INFO, 0x0200, 0, 1, &info), ==, 1);
	g_assert_cmpuint(info[0], ==, 0x01);
	/* Setting it: stall. */
	g_assert_cmpint(ctl_out(f->fn, RT_CLASS_OUT, SET_CUR, 0x0200, 0, 1, "\0", 1), ==, -EPIPE);

	/* A request to the streaming interface that succeeds clears the code. */
	g_assert_cmpint(probe_out(f->fn, PROBE, 1, 1, 0), ==, PROBE_SIZE);
	g_assert_cmpuint(error_code(f->fn), ==, 0);

	/* Working again. */
	f->fake.start_result = 0;
	g_assert_cmpint(probe_out(f->fn, COMMIT, 1, 2, 333333), ==, PROBE_SIZE);
	g_assert_cmpuint(f->fake.starts, ==, 5);
	g_assert_true(f->fake.mode_copy.fourcc == V4L2_PIX_FMT_YUYV);
	g_assert_cmpuint(f->fake.mode_copy.width, ==, 320);

	/* No data stage at all (wLength 0, no buffer): our probe as it was. */
	{
		uint8_t setup[8];

		setup_packet(setup, RT_CLASS_OUT, SET_CUR, PROBE << 8, 1, 0);
		g_assert_cmpint(uvc_fn_control(f->fn, setup, NULL, 0, NULL), ==, 0);
		probe_check(f->fn, GET_CUR, PROBE, 1, 2, 333333, 153600);
	}

	/* Short data: stall, no start. */
	g_assert_cmpint(ctl_out(f->fn, RT_CLASS_OUT, SET_CUR, COMMIT << 8, 1, PROBE_SIZE,
				"\1\0\1\1", 4), ==, -EPIPE);
	g_assert_cmpuint(f->fake.starts, ==, 5);
}

V4L2CUSE_TEST_F("/usb/uvc/stop", test_stop)
{
	uint8_t setup[8];
	g_autofree uint8_t *cfg = NULL, *cfg2 = NULL, *status = NULL, *alt = NULL;

	/* uvcvideo's bulk stream off: CLEAR_FEATURE(ENDPOINT_HALT) of 0x81. */
	setup_packet(setup, 0x02, REQ_CLEAR_FEATURE, 0, UVC_EP_IN, 0);
	g_assert_cmpint(uvc_fn_control(f->fn, setup, NULL, 0, NULL), ==, 0);
	g_assert_cmpuint(f->fake.stops, ==, 1);
	/* Other endpoints, remote wakeup of the device: accepted, no stop. */
	g_assert_cmpint(ctl_out(f->fn, 0x02, REQ_CLEAR_FEATURE, 0, 0x82, 0, NULL, 0), ==, 0);
	g_assert_cmpint(ctl_out(f->fn, 0x02, REQ_CLEAR_FEATURE, 0, 0x01, 0, NULL, 0), ==, 0);
	g_assert_cmpint(ctl_out(f->fn, RT_STD_OUT, REQ_CLEAR_FEATURE, 1, 0, 0, NULL, 0), ==, 0);
	g_assert_cmpuint(f->fake.stops, ==, 1);
	g_assert_cmpint(ctl_out(f->fn, 0x02, REQ_SET_FEATURE, 0, UVC_EP_IN, 0, NULL, 0), ==, 0);
	g_assert_cmpuint(f->fake.stops, ==, 1);

	/* SET_CONFIGURATION: 0 while unconfigured changes nothing; 1 then 0 stops. */
	g_assert_cmpint(ctl_out(f->fn, RT_STD_OUT, REQ_SET_CONFIGURATION, 0, 0, 0, NULL, 0), ==, 0);
	g_assert_cmpuint(f->fake.stops, ==, 1);
	g_assert_cmpint(ctl_out(f->fn, RT_STD_OUT, REQ_SET_CONFIGURATION, 1, 0, 0, NULL, 0), ==, 0);
	g_assert_cmpint(ctl_in(f->fn, RT_STD_IN, REQ_GET_CONFIGURATION, 0, 0, 1, &cfg), ==, 1);
	g_assert_cmpuint(cfg[0], ==, 1);
	g_assert_cmpuint(f->fake.stops, ==, 1);
	g_assert_cmpint(ctl_out(f->fn, RT_STD_OUT, REQ_SET_CONFIGURATION, 0, 0, 0, NULL, 0), ==, 0);
	g_assert_cmpuint(f->fake.stops, ==, 2);
	g_assert_cmpint(ctl_in(f->fn, RT_STD_IN, REQ_GET_CONFIGURATION, 0, 0, 1, &cfg2), ==, 1);
	g_assert_cmpuint(cfg2[0], ==, 0);
	/* No configuration 2. */
	g_assert_cmpint(ctl_out(f->fn, RT_STD_OUT, REQ_SET_CONFIGURATION, 2, 0, 0, NULL, 0), ==,
			-EPIPE);

	/* GET_STATUS, GET_INTERFACE / SET_INTERFACE (alt 0 only, two interfaces). */
	g_assert_cmpint(ctl_in(f->fn, RT_STD_IN, REQ_GET_STATUS, 0, 0, 2, &status), ==, 2);
	g_assert_cmpuint(le16(status), ==, 0);
	g_assert_cmpint(ctl_in(f->fn, 0x81, REQ_GET_INTERFACE, 0, 1, 1, &alt), ==, 1);
	g_assert_cmpuint(alt[0], ==, 0);
	g_assert_cmpint(ctl_in(f->fn, 0x81, REQ_GET_INTERFACE, 0, 2, 1, NULL), ==, -EPIPE);
	g_assert_cmpint(ctl_out(f->fn, 0x01, REQ_SET_INTERFACE, 0, 1, 0, NULL, 0), ==, 0);
	g_assert_cmpint(ctl_out(f->fn, 0x01, REQ_SET_INTERFACE, 1, 1, 0, NULL, 0), ==, -EPIPE);
	g_assert_cmpint(ctl_out(f->fn, 0x01, REQ_SET_INTERFACE, 0, 2, 0, NULL, 0), ==, -EPIPE);
	/* SET_ADDRESS (vhci answers it itself), an unknown request, a vendor one: stall. */
	g_assert_cmpint(ctl_out(f->fn, RT_STD_OUT, 0x05, 3, 0, 0, NULL, 0), ==, -EPIPE);
	g_assert_cmpint(ctl_in(f->fn, 0xc0, 0x01, 0, 0, 4, NULL), ==, -EPIPE);
	g_assert_cmpuint(f->fake.starts, ==, 0);
}

/* --- controls --- */

static int
ctrl_get(struct uvc_fn *fn, uint8_t request, uint8_t unit, uint8_t selector, uint16_t size,
	 uint8_t out[4])
{
	g_autofree uint8_t *r = NULL;
	int n = ctl_in(fn, RT_CLASS_IN, request, (uint16_t)(selector << 8), (uint16_t)(unit << 8),
		       size, &r);

	memset(out, 0, 4);
	if (n > 0)
		memcpy(out, r, MIN(n, 4));
	return n;
}

static int
ctrl_set(struct uvc_fn *fn, uint8_t unit, uint8_t selector, const uint8_t *v, uint16_t size)
{
	return ctl_out(fn, RT_CLASS_OUT, SET_CUR, (uint16_t)(selector << 8), (uint16_t)(unit << 8),
		       size, v, size);
}

/* The value of an n-byte answer, sign-extended if @is_signed. */
static int32_t
value_of(const uint8_t *b, unsigned int size, bool is_signed)
{
	uint32_t v = 0;

	for (unsigned int i = 0; i < size; i++)
		v |= (uint32_t)b[i] << (8 * i);
	if (is_signed && size < 4 && (v >> (8 * size - 1)) & 1)
		v |= ~0u << (8 * size);
	return (int32_t)v;
}

V4L2CUSE_TEST_F("/usb/uvc/controls-descriptors", test_controls_descriptors)
{
	g_autoptr(GByteArray) c = get_config(f->fn);
	struct parsed p;

	parse_config(c->data, c->len, &p);
	/* Camera terminal: exposure time, absolute (D3) only. */
	g_assert_cmpuint(p.ct_controls[0], ==, 0x08);
	g_assert_cmpuint(p.ct_controls[1], ==, 0x00);
	g_assert_cmpuint(p.ct_controls[2], ==, 0x00);
	/* PU: brightness D0, contrast D1, hue D2, power line frequency D10; no chroma gain. */
	g_assert_cmpuint(p.pu_controls[0], ==, 0x07);
	g_assert_cmpuint(p.pu_controls[1], ==, 0x04);
}

V4L2CUSE_TEST_F("/usb/uvc/controls-get", test_controls_get)
{
	static const struct {
		uint8_t unit, selector, size;
		bool is_signed;
		int32_t min, max, res, def, cur;
	} cases[] = {
		{ UNIT_PU, 0x02, 2, true, -64, 64, 1, 0, -5 },		/* brightness */
		{ UNIT_PU, 0x03, 2, false, 0, 255, 1, 128, 200 },		/* contrast */
		{ UNIT_PU, 0x06, 2, true, -180, 180, 2, 0, -180 },		/* hue */
		{ UNIT_PU, 0x05, 1, false, 0, 2, 1, 1, 2 },			/* power line */
		{ UNIT_CAMERA, 0x04, 4, false, 1, 10000, 1, 166, 10000 },	/* exposure abs */
	};
	uint8_t b[4];

	for (unsigned int i = 0; i < G_N_ELEMENTS(cases); i++) {
		uint8_t u = cases[i].unit, s = cases[i].selector, n = cases[i].size;
		bool sg = cases[i].is_signed;

		g_test_message("unit %u selector %#x", u, s);
		g_assert_cmpint(ctrl_get(f->fn, GET_MIN, u, s, n, b), ==, n);
		g_assert_cmpint(value_of(b, n, sg), ==, cases[i].min);
		g_assert_cmpint(ctrl_get(f->fn, GET_MAX, u, s, n, b), ==, n);
		g_assert_cmpint(value_of(b, n, sg), ==, cases[i].max);
		g_assert_cmpint(ctrl_get(f->fn, GET_RES, u, s, n, b), ==, n);
		g_assert_cmpint(value_of(b, n, sg), ==, cases[i].res);
		g_assert_cmpint(ctrl_get(f->fn, GET_DEF, u, s, n, b), ==, n);
		g_assert_cmpint(value_of(b, n, sg), ==, cases[i].def);
		g_assert_cmpint(ctrl_get(f->fn, GET_CUR, u, s, n, b), ==, n);
		g_assert_cmpint(value_of(b, n, sg), ==, cases[i].cur);
		g_assert_cmpint(ctrl_get(f->fn, GET_LEN, u, s, 2, b), ==, 2);
		g_assert_cmpuint(le16(b), ==, n);
		g_assert_cmpint(ctrl_get(f->fn, GET_INFO, u, s, 1, b), ==, 1);
		g_assert_cmpuint(b[0], ==, 0x03);
		g_assert_cmpuint(error_code(f->fn), ==, 0);
	}
	/* The bytes themselves: little-endian two's complement. */
	g_assert_cmpint(ctrl_get(f->fn, GET_MIN, UNIT_PU, 0x02, 2, b), ==, 2);
	g_assert_cmpmem(b, 2, "\xc0\xff", 2);
	g_assert_cmpint(ctrl_get(f->fn, GET_CUR, UNIT_PU, 0x06, 2, b), ==, 2);
	g_assert_cmpmem(b, 2, "\x4c\xff", 2);
	g_assert_cmpint(ctrl_get(f->fn, GET_CUR, UNIT_CAMERA, 0x04, 4, b), ==, 4);
	g_assert_cmpmem(b, 4, "\x10\x27\x00\x00", 4);
	g_assert_cmpuint(f->fake.gets, ==, G_N_ELEMENTS(cases) + 2);

	/* The node failing a read: stall with an error code. */
	f->fake.get_result = -EIO;
	g_assert_cmpint(ctrl_get(f->fn, GET_CUR, UNIT_PU, 0x02, 2, b), ==, -EPIPE);
	g_assert_cmpuint(error_code(f->fn), !=, 0);
}

V4L2CUSE_TEST_F("/usb/uvc/controls-set", test_controls_set)
{
	uint8_t b[4];

	/* Brightness -10: f6 ff, sign-extended. */
	g_assert_cmpint(ctrl_set(f->fn, UNIT_PU, 0x02, (const uint8_t *)"\xf6\xff", 2), ==, 2);
	g_assert_cmpuint(f->fake.sets, ==, 1);
	g_assert_cmpuint(f->fake.set_id, ==, V4L2_CID_BRIGHTNESS);
	g_assert_cmpint(f->fake.set_value, ==, -10);
	g_assert_cmpuint(error_code(f->fn), ==, 0);
	/* The limits themselves. */
	g_assert_cmpint(ctrl_set(f->fn, UNIT_PU, 0x06, (const uint8_t *)"\x4c\xff", 2), ==, 2);
	g_assert_cmpuint(f->fake.set_id, ==, V4L2_CID_HUE);
	g_assert_cmpint(f->fake.set_value, ==, -180);
	g_assert_cmpint(ctrl_set(f->fn, UNIT_PU, 0x03, (const uint8_t *)"\xff\x00", 2), ==, 2);
	g_assert_cmpuint(f->fake.set_id, ==, V4L2_CID_CONTRAST);
	g_assert_cmpint(f->fake.set_value, ==, 255);
	g_assert_cmpint(ctrl_set(f->fn, UNIT_CAMERA, 0x04, (const uint8_t *)"\x10\x27\0\0", 4), ==,
			4);
	g_assert_cmpuint(f->fake.set_id, ==, V4L2_CID_EXPOSURE_ABSOLUTE);
	g_assert_cmpint(f->fake.set_value, ==, 10000);
	g_assert_cmpint(ctrl_set(f->fn, UNIT_PU, 0x05, (const uint8_t *)"\x02", 1), ==, 1);
	g_assert_cmpuint(f->fake.set_id, ==, V4L2_CID_POWER_LINE_FREQUENCY);
	g_assert_cmpint(f->fake.set_value, ==, 2);
	g_assert_cmpuint(f->fake.sets, ==, 5);

	/* Out of range: stall, error code 4 (out of range), the node untouched. */
	static const struct {
		uint8_t unit, selector, size;
		const char *bytes;
	} bad[] = {
		{ UNIT_PU, 0x02, 2, "\x41\x00" },		/* brightness 65 */
		{ UNIT_PU, 0x02, 2, "\xbf\xff" },		/* brightness -65 */
		{ UNIT_PU, 0x03, 2, "\xff\xff" },		/* contrast 65535 */
		{ UNIT_PU, 0x06, 2, "\x00\x80" },		/* hue -32768 */
		{ UNIT_PU, 0x05, 1, "\x03" },			/* power line 3 */
		{ UNIT_CAMERA, 0x04, 4, "\x00\x00\x00\x00" },	/* exposure 0 */
		{ UNIT_CAMERA, 0x04, 4, "\x11\x27\x00\x00" },	/* exposure 10001 */
		{ UNIT_CAMERA, 0x04, 4, "\xff\xff\xff\xff" },	/* exposure 2^32-1 */
	};
	for (unsigned int i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_assert_cmpint(ctrl_set(f->fn, bad[i].unit, bad[i].selector,
					 (const uint8_t *)bad[i].bytes, bad[i].size), ==, -EPIPE);
		g_assert_cmpuint(error_code(f->fn), ==, 4);
	}
	g_assert_cmpuint(f->fake.sets, ==, 5);

	/* Unknown selectors: stall, error code 6 (invalid control). */
	g_assert_cmpint(ctrl_set(f->fn, UNIT_PU, 0x07, (const uint8_t *)"\0\0", 2), ==, -EPIPE);
	g_assert_cmpuint(error_code(f->fn), ==, 6);	/* saturation: not the node's */
	g_assert_cmpint(ctrl_get(f->fn, GET_CUR, UNIT_PU, 0x30, 2, b), ==, -EPIPE);
	g_assert_cmpuint(error_code(f->fn), ==, 6);
	g_assert_cmpint(ctrl_get(f->fn, GET_MIN, UNIT_CAMERA, 0x06, 2, b), ==, -EPIPE);
	g_assert_cmpuint(error_code(f->fn), ==, 6);	/* focus: not the node's */
	g_assert_cmpint(ctrl_get(f->fn, GET_CUR, UNIT_OT, 0x01, 2, b), ==, -EPIPE);
	g_assert_cmpuint(error_code(f->fn), ==, 6);	/* the output terminal has none */
	/* An entity that does not exist: 5 (invalid unit). */
	g_assert_cmpint(ctrl_get(f->fn, GET_CUR, 9, 0x02, 2, b), ==, -EPIPE);
	g_assert_cmpuint(error_code(f->fn), ==, 5);
	/* A request a control does not know: 7 (invalid request). */
	g_assert_cmpint(ctrl_get(f->fn, 0x88, UNIT_PU, 0x02, 2, b), ==, -EPIPE);
	g_assert_cmpuint(error_code(f->fn), ==, 7);
	/* Too few bytes for the control: stall. */
	g_assert_cmpint(ctrl_set(f->fn, UNIT_PU, 0x02, (const uint8_t *)"\x01", 1), ==, -EPIPE);
	g_assert_cmpuint(error_code(f->fn), !=, 0);
	g_assert_cmpuint(f->fake.sets, ==, 5);

	/* The node refusing: stall, 2 (wrong state) for -EBUSY, another code otherwise. */
	f->fake.set_result = -EBUSY;
	g_assert_cmpint(ctrl_set(f->fn, UNIT_PU, 0x02, (const uint8_t *)"\x01\x00", 2), ==, -EPIPE);
	g_assert_cmpuint(error_code(f->fn), ==, 2);
	f->fake.set_result = -EINVAL;
	g_assert_cmpint(ctrl_set(f->fn, UNIT_PU, 0x02, (const uint8_t *)"\x01\x00", 2), ==, -EPIPE);
	g_assert_cmpuint(error_code(f->fn), !=, 0);
	g_assert_cmpuint(f->fake.sets, ==, 7);
	/* And a success clears it. */
	f->fake.set_result = 0;
	g_assert_cmpint(ctrl_set(f->fn, UNIT_PU, 0x02, (const uint8_t *)"\x01\x00", 2), ==, 2);
	g_assert_cmpuint(error_code(f->fn), ==, 0);
	g_assert_cmpint(f->fake.set_value, ==, 1);
}

V4L2CUSE_TEST("/usb/uvc/controls-not-fitting", test_controls_not_fitting)
{
	static const struct uvc_ctrl_range ctrls[] = {
		{ V4L2_CID_CONTRAST, 0, 70000, 1, 100 },		/* above 16 bits */
		{ V4L2_CID_BRIGHTNESS, -40000, 0, 1, 0 },		/* below signed 16 bits */
		{ V4L2_CID_GAIN, 10, 5, 1, 7 },				/* min > max */
		{ V4L2_CID_POWER_LINE_FREQUENCY, 0, 256, 1, 1 },	/* above 8 bits */
		{ V4L2_CID_SATURATION, 0, 65535, 1, 0 },		/* fits */
	};
	struct fake fk = { 0 };
	struct uvc_fn *fn = uvc_fn_new(test_modes, 1, ctrls, G_N_ELEMENTS(ctrls), "p", "s",
				       &fake_ops, &fk);
	g_autoptr(GByteArray) c = get_config(fn);
	struct parsed p;
	uint8_t b[4];

	parse_config(c->data, c->len, &p);
	g_assert_cmpuint(p.pu_controls[0], ==, 0x08);	/* saturation, D3 */
	g_assert_cmpuint(p.pu_controls[1], ==, 0x00);
	g_assert_cmpint(ctrl_get(fn, GET_CUR, UNIT_PU, 0x03, 2, b), ==, -EPIPE);
	g_assert_cmpuint(error_code(fn), ==, 6);
	g_assert_cmpint(ctrl_get(fn, GET_MAX, UNIT_PU, 0x07, 2, b), ==, 2);
	g_assert_cmpmem(b, 2, "\xff\xff", 2);
	uvc_fn_free(fn);
}

V4L2CUSE_TEST("/usb/uvc/controls-duplicate", test_controls_duplicate)
{
	struct uvc_ctrl_range ctrls[40];
	struct fake fk = { 0 };
	struct uvc_fn *fn;
	g_autoptr(GByteArray) c = NULL;
	struct parsed p;
	uint8_t b[4];

	/* A node listing one control many times (more than UVC has): each once. */
	for (unsigned int i = 0; i < G_N_ELEMENTS(ctrls); i++)
		ctrls[i] = (struct uvc_ctrl_range){ V4L2_CID_BRIGHTNESS, -(int32_t)i, 10, 1, 0 };
	fn = uvc_fn_new(test_modes, 1, ctrls, G_N_ELEMENTS(ctrls), "p", "s", &fake_ops, &fk);
	c = get_config(fn);
	parse_config(c->data, c->len, &p);
	g_assert_cmpuint(p.pu_controls[0], ==, 0x01);
	/* The first one counts. */
	g_assert_cmpint(ctrl_get(fn, GET_MIN, UNIT_PU, 0x02, 2, b), ==, 2);
	g_assert_cmpint(value_of(b, 2, true), ==, 0);
	uvc_fn_free(fn);
}

/* A passed-through camera's auto exposure menu and pan/tilt pair. */
V4L2CUSE_TEST("/usb/uvc/controls-ae-pan-tilt", test_controls_ae_pan_tilt)
{
	static const struct uvc_ctrl_range ctrls[] = {
		/* AUTO..APERTURE_PRIORITY offered; MANUAL (1) the default. */
		{ V4L2_CID_EXPOSURE_AUTO, 0, 3, 1, 1 },
		{ V4L2_CID_PAN_ABSOLUTE, -36000, 36000, 3600, 0 },
		{ V4L2_CID_TILT_ABSOLUTE, -18000, 18000, 3600, 100 },
	};
	struct fake fk = { 0 };
	struct uvc_fn *fn;
	g_autoptr(GByteArray) c = NULL;
	g_autofree uint8_t *r = NULL;
	struct parsed p;
	uint8_t b[4];

	fk.values[0].id = V4L2_CID_EXPOSURE_AUTO;
	fk.values[0].value = 3;
	fk.values[1].id = V4L2_CID_PAN_ABSOLUTE;
	fk.values[1].value = -7200;
	fk.values[2].id = V4L2_CID_TILT_ABSOLUTE;
	fk.values[2].value = 3600;
	fn = uvc_fn_new(test_modes, 1, ctrls, G_N_ELEMENTS(ctrls), "p", "s", &fake_ops, &fk);
	c = get_config(fn);
	parse_config(c->data, c->len, &p);
	/* Camera terminal: AE mode D1, pan/tilt absolute D11. */
	g_assert_cmpuint(p.ct_controls[0], ==, 0x02);
	g_assert_cmpuint(p.ct_controls[1], ==, 0x08);

	/* AE mode: one byte, a bit per menu item; RES the bitmap of those offered. */
	g_assert_cmpint(ctrl_get(fn, GET_RES, UNIT_CAMERA, 0x02, 1, b), ==, 1);
	g_assert_cmpuint(b[0], ==, 0x0f);
	g_assert_cmpint(ctrl_get(fn, GET_DEF, UNIT_CAMERA, 0x02, 1, b), ==, 1);
	g_assert_cmpuint(b[0], ==, 0x01);	/* MANUAL */
	g_assert_cmpint(ctrl_get(fn, GET_CUR, UNIT_CAMERA, 0x02, 1, b), ==, 1);
	g_assert_cmpuint(b[0], ==, 0x08);	/* APERTURE_PRIORITY */
	g_assert_cmpint(ctrl_set(fn, UNIT_CAMERA, 0x02, (const uint8_t *)"\x02", 1), ==, 1);
	g_assert_cmpuint(fk.set_id, ==, V4L2_CID_EXPOSURE_AUTO);
	g_assert_cmpint(fk.set_value, ==, V4L2_EXPOSURE_AUTO);
	/* Not one mode's bit: out of range. */
	g_assert_cmpint(ctrl_set(fn, UNIT_CAMERA, 0x02, (const uint8_t *)"\x03", 1), ==, -EPIPE);
	g_assert_cmpuint(error_code(fn), ==, 4);

	/* Pan/tilt: 8 bytes, pan then tilt, each a signed 32-bit little-endian half. */
	g_assert_cmpint(ctl_in(fn, RT_CLASS_IN, GET_MIN, 0x0d << 8, UNIT_CAMERA << 8, 8, &r), ==, 8);
	g_assert_cmpint((int32_t)le32(r), ==, -36000);
	g_assert_cmpint((int32_t)le32(r + 4), ==, -18000);
	g_clear_pointer(&r, g_free);
	g_assert_cmpint(ctl_in(fn, RT_CLASS_IN, GET_DEF, 0x0d << 8, UNIT_CAMERA << 8, 8, &r), ==, 8);
	g_assert_cmpint((int32_t)le32(r), ==, 0);
	g_assert_cmpint((int32_t)le32(r + 4), ==, 100);
	g_clear_pointer(&r, g_free);
	g_assert_cmpint(ctl_in(fn, RT_CLASS_IN, GET_CUR, 0x0d << 8, UNIT_CAMERA << 8, 8, &r), ==, 8);
	g_assert_cmpint((int32_t)le32(r), ==, -7200);
	g_assert_cmpint((int32_t)le32(r + 4), ==, 3600);
	g_clear_pointer(&r, g_free);
	/* pan 10800, tilt -3600: both set, tilt last. */
	g_assert_cmpint(ctrl_set(fn, UNIT_CAMERA, 0x0d,
				 (const uint8_t *)"\x30\x2a\x00\x00\xf0\xf1\xff\xff", 8), ==, 8);
	g_assert_cmpuint(fk.set_id, ==, V4L2_CID_TILT_ABSOLUTE);
	g_assert_cmpint(fk.set_value, ==, -3600);
	/* A tilt beyond its range: stall, out of range. */
	g_assert_cmpint(ctrl_set(fn, UNIT_CAMERA, 0x0d,
				 (const uint8_t *)"\x00\x00\x00\x00\x20\x4e\x00\x00", 8), ==, -EPIPE);
	g_assert_cmpuint(error_code(fn), ==, 4);
	uvc_fn_free(fn);
}

/* --- payload headers --- */

V4L2CUSE_TEST_F("/usb/uvc/payload", test_payload)
{
	static const struct {
		size_t frame_len, len;
		bool error;
	} frames[] = {
		{ 10000, 4096, false },		/* 4094 + 4094 + 1812 */
		{ 8188, 4096, false },		/* exactly two */
		{ 100, UVC_PAYLOAD_SIZE, false },
		{ 0, UVC_PAYLOAD_SIZE, false },	/* empty: one header-only payload with EOF */
		{ 5000, 512, true },		/* a bad frame: ERR on each part */
		{ 614400, UVC_PAYLOAD_SIZE, false },
		{ 1, 3, false },
		{ 7, 3, false },
	};
	uint8_t prev_fid = 0xff;

	for (unsigned int i = 0; i < G_N_ELEMENTS(frames); i++) {
		size_t offset = 0, total = 0;
		unsigned int parts = 0, eofs = 0;
		uint8_t fid = 0xff;
		bool last;

		do {
			uint8_t hdr[UVC_PAYLOAD_HEADER];
			size_t n_data = 12345;
			size_t h = uvc_fn_payload_header(f->fn, hdr, frames[i].len,
							 frames[i].frame_len, offset,
							 frames[i].error, &n_data);

			g_assert_cmpuint(h, ==, UVC_PAYLOAD_HEADER);
			g_assert_cmpuint(hdr[0], ==, UVC_PAYLOAD_HEADER);
			g_assert_true(hdr[1] & UVC_HDR_EOH);
			g_assert_cmpuint(n_data, <=, frames[i].len - UVC_PAYLOAD_HEADER);
			g_assert_cmpuint(n_data, <=, frames[i].frame_len - offset);
			/* One FID per frame, another than the last frame's. */
			if (parts == 0) {
				fid = hdr[1] & UVC_HDR_FID;
				g_assert_cmpuint(fid, !=, prev_fid);
			}
			g_assert_cmpuint(hdr[1] & UVC_HDR_FID, ==, fid);
			g_assert_cmpuint(!!(hdr[1] & UVC_HDR_ERR), ==, frames[i].error);
			/* No PTS, SCR, still image bits. */
			g_assert_cmpuint(hdr[1] & 0x3c, ==, 0);
			offset += n_data;
			total += n_data;
			parts++;
			last = offset >= frames[i].frame_len;
			g_assert_cmpuint(!!(hdr[1] & UVC_HDR_EOF), ==, last);
			eofs += !!(hdr[1] & UVC_HDR_EOF);
			g_assert_cmpuint(parts, <=, frames[i].frame_len + 1);
		} while (!last);
		g_assert_cmpuint(total, ==, frames[i].frame_len);
		g_assert_cmpuint(eofs, ==, 1);
		g_assert_cmpuint(parts, ==,
				 MAX(1, (frames[i].frame_len + frames[i].len - 3) /
						(frames[i].len - 2)));
		prev_fid = fid;
	}
}

/* --- USB/IP --- */

/* A 48-byte CMD_SUBMIT header. */
static void
submit_header(uint8_t h[USBIP_HEADER_SIZE], uint32_t seqnum, uint32_t direction, uint32_t ep,
	      uint32_t length, uint32_t n_packets, const uint8_t setup[8])
{
	memset(h, 0, USBIP_HEADER_SIZE);
	put_be32(h, USBIP_CMD_SUBMIT);
	put_be32(h + 4, seqnum);
	put_be32(h + 8, 0x00010002);
	put_be32(h + 12, direction);
	put_be32(h + 16, ep);
	put_be32(h + 20, direction == USBIP_DIR_IN ? 0x200 : 0);
	put_be32(h + 24, length);
	put_be32(h + 28, 0);
	put_be32(h + 32, n_packets);
	put_be32(h + 36, 0);
	if (setup)
		memcpy(h + 40, setup, 8);
}

V4L2CUSE_TEST("/usb/usbip/cmd-submit", test_cmd_submit)
{
	static const uint8_t setup[8] = { 0x80, 0x06, 0x00, 0x01, 0x00, 0x00, 0x40, 0x00 };
	uint8_t h[USBIP_HEADER_SIZE];
	struct usbip_cmd c;

	/* A control IN: nothing follows. */
	submit_header(h, 7, USBIP_DIR_IN, 0, 64, 0, setup);
	g_assert_cmpint(usbip_cmd_decode(h, &c), ==, 0);
	g_assert_cmpuint(c.command, ==, USBIP_CMD_SUBMIT);
	g_assert_cmpuint(c.seqnum, ==, 7);
	g_assert_cmpuint(c.devid, ==, 0x00010002);
	g_assert_cmpuint(c.direction, ==, USBIP_DIR_IN);
	g_assert_cmpuint(c.ep, ==, 0);
	g_assert_cmpuint(c.transfer_flags, ==, 0x200);
	g_assert_cmpint(c.length, ==, 64);
	g_assert_cmpint(c.n_packets, ==, 0);
	g_assert_cmpmem(c.setup, 8, setup, 8);

	/* A bulk IN: nothing follows, whatever its length. */
	submit_header(h, 8, USBIP_DIR_IN, 1, 16384, 0, NULL);
	g_assert_cmpint(usbip_cmd_decode(h, &c), ==, 0);
	g_assert_cmpuint(c.ep, ==, 1);
	g_assert_cmpint(c.length, ==, 16384);

	/* OUT: its data follows, up to USBIP_MAX_OUT. */
	submit_header(h, 9, USBIP_DIR_OUT, 0, 26, 0, setup);
	g_assert_cmpint(usbip_cmd_decode(h, &c), ==, 26);
	g_assert_cmpuint(c.direction, ==, USBIP_DIR_OUT);
	submit_header(h, 9, USBIP_DIR_OUT, 0, 0, 0, setup);
	g_assert_cmpint(usbip_cmd_decode(h, &c), ==, 0);
	submit_header(h, 9, USBIP_DIR_OUT, 0, USBIP_MAX_OUT, 0, setup);
	g_assert_cmpint(usbip_cmd_decode(h, &c), ==, USBIP_MAX_OUT);

	/* vhci's "not isochronous": number_of_packets 0xffffffff, taken as 0. */
	submit_header(h, 10, USBIP_DIR_IN, 1, 512, 0xffffffff, NULL);
	g_assert_cmpint(usbip_cmd_decode(h, &c), ==, 0);
	g_assert_cmpint(c.n_packets, ==, 0);
	submit_header(h, 10, USBIP_DIR_OUT, 2, 100, 0xffffffff, NULL);
	g_assert_cmpint(usbip_cmd_decode(h, &c), ==, 100);
	g_assert_cmpint(c.n_packets, ==, 0);

	/* Isochronous: 16 bytes of descriptor per packet follow (after OUT data). */
	submit_header(h, 11, USBIP_DIR_IN, 1, 3072, 3, NULL);
	g_assert_cmpint(usbip_cmd_decode(h, &c), ==, 48);
	g_assert_cmpint(c.n_packets, ==, 3);
	submit_header(h, 11, USBIP_DIR_OUT, 1, 100, 2, NULL);
	g_assert_cmpint(usbip_cmd_decode(h, &c), ==, 100 + 32);
	submit_header(h, 11, USBIP_DIR_IN, 1, 0, USBIP_MAX_ISO_PACKETS, NULL);
	g_assert_cmpint(usbip_cmd_decode(h, &c), ==, USBIP_MAX_ISO_PACKETS * 16);
}

V4L2CUSE_TEST("/usb/usbip/cmd-unlink", test_cmd_unlink)
{
	uint8_t h[USBIP_HEADER_SIZE];
	struct usbip_cmd c;

	memset(h, 0xaa, sizeof(h));		/* the padding is not read */
	put_be32(h, USBIP_CMD_UNLINK);
	put_be32(h + 4, 21);
	put_be32(h + 8, 0x00010002);
	put_be32(h + 12, USBIP_DIR_OUT);
	put_be32(h + 16, 0);
	put_be32(h + 20, 17);
	g_assert_cmpint(usbip_cmd_decode(h, &c), ==, 0);
	g_assert_cmpuint(c.command, ==, USBIP_CMD_UNLINK);
	g_assert_cmpuint(c.seqnum, ==, 21);
	g_assert_cmpuint(c.unlink_seqnum, ==, 17);
	g_assert_cmpuint(c.ep, ==, 0);
}

V4L2CUSE_TEST("/usb/usbip/cmd-bad", test_cmd_bad)
{
	uint8_t h[USBIP_HEADER_SIZE];
	struct usbip_cmd c, before;

	memset(&before, 0x5a, sizeof(before));
#define BAD(...)							\
	do {								\
		c = before;						\
		g_assert_cmpint(usbip_cmd_decode(h, &c), ==, -EPROTO);	\
		g_assert_cmpmem(&c, sizeof(c), &before, sizeof(before));	\
	} while (0)

	/* Unknown commands, and the replies (a host never sends them). */
	for (uint32_t cmd = 0; cmd < 8; cmd++) {
		if (cmd == USBIP_CMD_SUBMIT || cmd == USBIP_CMD_UNLINK)
			continue;
		submit_header(h, 1, USBIP_DIR_IN, 0, 8, 0, NULL);
		put_be32(h, cmd);
		BAD();
	}
	submit_header(h, 1, USBIP_DIR_IN, 0, 8, 0, NULL);
	put_be32(h, 0x01000000);	/* little-endian 1 */
	BAD();
	/* Endpoint above 15, direction above 1. */
	submit_header(h, 1, USBIP_DIR_IN, 16, 8, 0, NULL);
	BAD();
	submit_header(h, 1, USBIP_DIR_IN, 0x81, 8, 0, NULL);
	BAD();
	submit_header(h, 1, 2, 0, 8, 0, NULL);
	BAD();
	submit_header(h, 1, 0xffffffff, 0, 8, 0, NULL);
	BAD();
	put_be32(h, USBIP_CMD_UNLINK);
	BAD();
	/* Negative lengths. */
	submit_header(h, 1, USBIP_DIR_IN, 1, 0x80000000, 0, NULL);
	BAD();
	submit_header(h, 1, USBIP_DIR_OUT, 0, 0xffffffff, 0, NULL);
	BAD();
	/* OUT above USBIP_MAX_OUT. */
	submit_header(h, 1, USBIP_DIR_OUT, 0, USBIP_MAX_OUT + 1, 0, NULL);
	BAD();
	submit_header(h, 1, USBIP_DIR_OUT, 2, 0x7fffffff, 0, NULL);
	BAD();
	/* Packet counts: negative (other than -1), above the limit. */
	submit_header(h, 1, USBIP_DIR_IN, 1, 0, 0xfffffffe, NULL);
	BAD();
	submit_header(h, 1, USBIP_DIR_IN, 1, 0, 0x80000000, NULL);
	BAD();
	submit_header(h, 1, USBIP_DIR_IN, 1, 0, USBIP_MAX_ISO_PACKETS + 1, NULL);
	BAD();
#undef BAD
}

V4L2CUSE_TEST("/usb/usbip/ret-encode", test_ret_encode)
{
	uint8_t out[USBIP_HEADER_SIZE];
	uint8_t zero[USBIP_HEADER_SIZE] = { 0 };

	memset(out, 0xcc, sizeof(out));
	usbip_ret_submit_encode(out, 0x01020304, -EPIPE, 0);
	g_assert_cmpuint(be32(out), ==, USBIP_RET_SUBMIT);
	g_assert_cmpuint(be32(out + 4), ==, 0x01020304);
	/* devid, direction, ep: 0 */
	g_assert_cmpmem(out + 8, 12, zero, 12);
	g_assert_cmpmem(out + 20, 4, "\xff\xff\xff\xe0", 4);	/* -32 */
	g_assert_cmpuint(be32(out + 24), ==, 0);
	/* start_frame, number_of_packets, error_count, padding: 0 */
	g_assert_cmpmem(out + 28, 20, zero, 20);

	memset(out, 0xcc, sizeof(out));
	usbip_ret_submit_encode(out, 5, 0, 16384);
	g_assert_cmpmem(out, 8, "\0\0\0\3\0\0\0\5", 8);
	g_assert_cmpuint(be32(out + 20), ==, 0);
	g_assert_cmpmem(out + 24, 4, "\x00\x00\x40\x00", 4);
	g_assert_cmpmem(out + 28, 20, zero, 20);

	memset(out, 0xcc, sizeof(out));
	usbip_ret_unlink_encode(out, 0xfffffffe, -ECONNRESET);
	g_assert_cmpuint(be32(out), ==, USBIP_RET_UNLINK);
	g_assert_cmpuint(be32(out + 4), ==, 0xfffffffe);
	g_assert_cmpmem(out + 8, 12, zero, 12);
	g_assert_cmpuint(be32(out + 20), ==, (uint32_t)-104);
	g_assert_cmpmem(out + 24, 24, zero, 24);

	usbip_ret_unlink_encode(out, 3, 0);
	g_assert_cmpuint(be32(out + 20), ==, 0);
}

V4L2CUSE_TEST("/usb/usbip/op-common", test_op_common)
{
	uint8_t out[USBIP_OP_COMMON_SIZE];
	uint16_t code = 0x1234;
	uint32_t status = 0x5678;

	usbip_op_encode(out, USBIP_OP_REP_DEVLIST, 0);
	g_assert_cmpmem(out, 8, "\x01\x11\x00\x05\x00\x00\x00\x00", 8);
	usbip_op_encode(out, USBIP_OP_REP_IMPORT, USBIP_ST_NODEV);
	g_assert_cmpmem(out, 8, "\x01\x11\x00\x03\x00\x00\x00\x04", 8);

	g_assert_cmpint(usbip_op_decode((const uint8_t *)"\x01\x11\x80\x05\x00\x00\x00\x00", &code,
					&status), ==, 0);
	g_assert_cmpuint(code, ==, USBIP_OP_REQ_DEVLIST);
	g_assert_cmpuint(status, ==, 0);
	g_assert_cmpint(usbip_op_decode((const uint8_t *)"\x01\x11\x80\x03\x01\x02\x03\x04", &code,
					&status), ==, 0);
	g_assert_cmpuint(code, ==, USBIP_OP_REQ_IMPORT);
	g_assert_cmpuint(status, ==, 0x01020304);
	/* Round trip. */
	usbip_op_encode(out, 0xbeef, 0xdeadbeef);
	g_assert_cmpint(usbip_op_decode(out, &code, &status), ==, 0);
	g_assert_cmpuint(code, ==, 0xbeef);
	g_assert_cmpuint(status, ==, 0xdeadbeef);

	/* Another version: refused, outputs untouched. */
	code = 1;
	status = 2;
	g_assert_cmpint(usbip_op_decode((const uint8_t *)"\x01\x10\x80\x05\x00\x00\x00\x00", &code,
					&status), ==, -EPROTO);
	g_assert_cmpint(usbip_op_decode((const uint8_t *)"\x11\x01\x80\x05\x00\x00\x00\x00", &code,
					&status), ==, -EPROTO);
	g_assert_cmpuint(code, ==, 1);
	g_assert_cmpuint(status, ==, 2);
}

V4L2CUSE_TEST("/usb/usbip/device", test_device)
{
	struct usbip_device_info d = {
		.busnum = 0x0102, .devnum = 0x0304, .speed = 3,
		.id_vendor = 0x1209, .id_product = 0x0001, .bcd_device = 0x0100,
		.device_class = 0xef, .device_subclass = 0x02, .device_protocol = 0x01,
		.configuration_value = 1, .n_configurations = 1, .n_interfaces = 2,
	};
	uint8_t out[USBIP_DEVICE_SIZE];
	uint8_t zero[256] = { 0 };
	const char *path = "/sys/devices/platform/v4l2cuse/video42";

	g_assert_cmpuint(USBIP_DEVICE_SIZE, ==, 312);
	g_strlcpy(d.path, path, sizeof(d.path));
	g_strlcpy(d.busid, "42-1", sizeof(d.busid));
	memset(out, 0xcc, sizeof(out));
	usbip_device_encode(out, &d);
	/* path[256] at 0, NUL-padded. */
	g_assert_cmpmem(out, strlen(path), path, strlen(path));
	g_assert_cmpmem(out + strlen(path), 256 - strlen(path), zero, 256 - strlen(path));
	/* busid[32] at 256. */
	g_assert_cmpmem(out + 256, 4, "42-1", 4);
	g_assert_cmpmem(out + 260, 28, zero, 28);
	g_assert_cmpuint(be32(out + 288), ==, 0x0102);
	g_assert_cmpuint(be32(out + 292), ==, 0x0304);
	g_assert_cmpuint(be32(out + 296), ==, 3);
	g_assert_cmpuint(be16(out + 300), ==, 0x1209);
	g_assert_cmpuint(be16(out + 302), ==, 0x0001);
	g_assert_cmpuint(be16(out + 304), ==, 0x0100);
	g_assert_cmpmem(out + 306, 6, "\xef\x02\x01\x01\x01\x02", 6);

	/* Over-long strings keep a terminating NUL. */
	memset(d.path, 'p', sizeof(d.path));
	memset(d.busid, 'b', sizeof(d.busid));
	usbip_device_encode(out, &d);
	g_assert_cmpuint(out[254], ==, 'p');
	g_assert_cmpuint(out[255], ==, 0);
	g_assert_cmpuint(out[256], ==, 'b');
	g_assert_cmpuint(out[256 + 30], ==, 'b');
	g_assert_cmpuint(out[256 + 31], ==, 0);
	g_assert_cmpuint(be32(out + 288), ==, 0x0102);
}
