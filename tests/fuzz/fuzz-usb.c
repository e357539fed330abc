/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for v4l2cuse-usb's pure parts (usb/usbip.c, usb/uvc.c):
 * the input is what a USB/IP host sends on the socket, handled the way
 * usb/face.c handles it.
 *
 * - First, optionally, the network protocol as on TCP 3240: op_common
 *   requests (OP_REQ_DEVLIST; OP_REQ_IMPORT and its 32-byte busid, after
 *   which the URB protocol starts). Bytes that are not op_common of
 *   version 0x0111 start the URB protocol at once.
 * - Then 48-byte headers, each followed by what usbip_cmd_decode() says
 *   (OUT data, isochronous packet descriptors). A header it refuses or a
 *   truncated command ends the stream, as face.c drops the connection.
 *   CMD_SUBMIT to ep 0 goes to uvc_fn_control() with an IN reply buffer
 *   of exactly wLength bytes; bulk IN submits to 0x81 are held and, while
 *   the host streams, answered with a payload (uvc_fn_payload_header());
 *   CMD_UNLINK drops a held one; anything else stalls.
 * - The fake ops (start/stop/get_ctrl/set_ctrl) fail when bits 24..27 of
 *   the command's devid say so (real hosts send small devids: all succeed).
 *
 * Checked besides ASan/UBSan/LSan:
 * - usbip_cmd_decode(): what follows is the OUT length plus 16 bytes per
 *   packet, fields in range, the output untouched on -EPROTO; the RET_*
 *   encoders' layouts; op_common round trips; usbip_device_encode()
 *   keeps its strings terminated;
 * - uvc_fn_control(): -EPIPE or a length, IN replies at most wLength, OUT
 *   at most the data given; the descriptors as the function's own (every
 *   GET_DESCRIPTOR answer a prefix of them); probe/commit answers always
 *   valid indices with our sizes;
 * - start() only with an offered mode and one of its rates, set_ctrl()
 *   only with an offered control and a value in its range, get_ctrl()
 *   only for offered controls;
 * - payloads: one header of 2 bytes, data never past len - 2 nor the
 *   frame's end, EOF exactly on the frame's last part, FID toggled at
 *   each frame start and kept within a frame, ERR as asked.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "usbip.h"
#include "uvc.h"
#include "fuzz-common.h"

#define MAX_CMDS	512
#define MAX_HELD	64
#define PROBE_SIZE	26

/* devid bits 24..27: which fake op fails. */
#define FAIL_START	(1u << 24)
#define FAIL_GET	(1u << 25)
#define FAIL_SET	(1u << 26)
#define FAIL_BUSY	(1u << 27)	/* with -EBUSY instead of -EIO */

#define R(n, d) { (n), (d) }

/* The node: three formats offered (YUYV 2 frames, NV12 1, MJPG 2), three modes not. */
static const struct client_mode modes[] = {
	{ V4L2_PIX_FMT_YUYV, 640, 480, 1280, 614400, { R(30, 1), R(15, 1) }, 2 },
	{ V4L2_PIX_FMT_NV12, 320, 240, 320, 115200, { R(30000, 1001), R(25, 1), R(5, 1) }, 3 },
	{ V4L2_PIX_FMT_RGB24, 640, 480, 1920, 921600, { R(30, 1) }, 1 },
	{ V4L2_PIX_FMT_YUYV, 160, 120, 320, 38400, { R(60, 1), R(30, 1) }, 2 },
	{ V4L2_PIX_FMT_YUYV, 1366, 768, 2752, 2752 * 768, { R(30, 1) }, 1 },
	{ V4L2_PIX_FMT_MJPEG, 1280, 720, 0, 1843200, { R(30, 1), R(15, 1) }, 2 },
	{ V4L2_PIX_FMT_YUYV, 800, 600, 1600, 960000, { R(0, 0) }, 0 },
	{ V4L2_PIX_FMT_MJPEG, 64, 48, 0, 4096, { R(1, 1) }, 1 },
};
#define N_OFFERED	5
static const uint8_t frames_per_format[] = { 2, 1, 2 };

static const struct uvc_ctrl_range ctrls[] = {
	{ V4L2_CID_BRIGHTNESS, -64, 64, 1, 0 },
	{ V4L2_CID_CONTRAST, 0, 255, 1, 128 },
	{ V4L2_CID_HUE, -180, 180, 2, 0 },
	{ V4L2_CID_POWER_LINE_FREQUENCY, 0, 2, 1, 1 },
	{ V4L2_CID_EXPOSURE_ABSOLUTE, 1, 10000, 1, 166 },
	{ V4L2_CID_FOCUS_AUTO, 0, 1, 1, 1 },
	{ V4L2_CID_CHROMA_GAIN, 0, 100, 1, 50 },	/* not a UVC control */
	{ V4L2_CID_SATURATION, 0, 70000, 1, 0 },	/* does not fit 16 bits */
	{ V4L2_CID_BRIGHTNESS, 0, 1, 1, 0 },		/* listed twice: the first counts */
};
#define N_OFFERED_CTRLS	6

/* The state of one input. */
static struct {
	uint32_t devid;			/* of the command being handled */
	bool streaming;
	const struct client_mode *mode;
	uint32_t starts, stops;
	/* Payload model. */
	size_t frame_len, offset;
	bool frame_error;
	uint8_t fid;
	bool any_payload;
} st;

static const struct uvc_ctrl_range *
offered_ctrl(uint32_t id)
{
	for (unsigned int i = 0; i < N_OFFERED_CTRLS; i++)
		if (ctrls[i].id == id)
			return &ctrls[i];
	return NULL;
}

static bool
is_offered_mode(const struct client_mode *m)
{
	for (unsigned int i = 0; i < G_N_ELEMENTS(modes); i++) {
		if (modes[i].fourcc == m->fourcc && modes[i].width == m->width &&
		    modes[i].height == m->height)
			return i != 2 && i != 4 && i != 6;
	}
	return false;
}

static int
fake_error(void)
{
	return st.devid & FAIL_BUSY ? -EBUSY : -EIO;
}

static int
fake_start(void *data, const struct client_mode *mode, struct client_rate rate)
{
	bool rate_ok = false;

	fuzz_check(mode && is_offered_mode(mode), "start() with a mode not offered");
	for (unsigned int r = 0; r < mode->n_rates; r++)
		rate_ok |= mode->rates[r].num == rate.num && mode->rates[r].denom == rate.denom;
	fuzz_check(rate_ok, "start() with a rate %u/%u the mode has not", rate.num, rate.denom);
	st.starts++;
	if (st.devid & FAIL_START)
		return fake_error();
	st.streaming = true;
	st.mode = mode;
	return 0;
}

static void
fake_stop(void *data)
{
	st.stops++;
	st.streaming = false;
}

static int
fake_get_ctrl(void *data, uint32_t id, int32_t *ret_value)
{
	const struct uvc_ctrl_range *c = offered_ctrl(id);

	fuzz_check(c, "get_ctrl() of %#x, not offered", id);
	if (st.devid & FAIL_GET)
		return fake_error();
	/* Anything in range, from the devid's low bits. */
	*ret_value = c->min + (int32_t)((st.devid & 0xffff) % ((uint32_t)(c->max - c->min) + 1));
	return 0;
}

static int
fake_set_ctrl(void *data, uint32_t id, int32_t value)
{
	const struct uvc_ctrl_range *c = offered_ctrl(id);

	fuzz_check(c, "set_ctrl() of %#x, not offered", id);
	fuzz_check(value >= c->min && value <= c->max, "set_ctrl(%#x, %d) out of %d..%d", id,
		   value, c->min, c->max);
	if (st.devid & FAIL_SET)
		return fake_error();
	return 0;
}

static const struct uvc_fn_ops fake_ops = {
	.start = fake_start,
	.stop = fake_stop,
	.get_ctrl = fake_get_ctrl,
	.set_ctrl = fake_set_ctrl,
};

/* --- helpers --- */

static uint32_t
be32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static uint16_t
le16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static void
check_ret_submit(uint32_t seqnum, int32_t status, int32_t actual)
{
	uint8_t out[USBIP_HEADER_SIZE];

	memset(out, 0xa5, sizeof(out));
	usbip_ret_submit_encode(out, seqnum, status, actual);
	fuzz_check(be32_at(out) == USBIP_RET_SUBMIT, "RET_SUBMIT command");
	fuzz_check(be32_at(out + 4) == seqnum, "RET_SUBMIT seqnum");
	fuzz_check(!be32_at(out + 8) && !be32_at(out + 12) && !be32_at(out + 16),
		   "RET_SUBMIT devid/direction/ep not 0");
	fuzz_check((int32_t)be32_at(out + 20) == status, "RET_SUBMIT status");
	fuzz_check((int32_t)be32_at(out + 24) == actual, "RET_SUBMIT actual_length");
	for (unsigned int i = 28; i < USBIP_HEADER_SIZE; i++)
		fuzz_check(out[i] == 0, "RET_SUBMIT byte %u not 0", i);
}

static void
check_ret_unlink(uint32_t seqnum, int32_t status)
{
	uint8_t out[USBIP_HEADER_SIZE];

	memset(out, 0xa5, sizeof(out));
	usbip_ret_unlink_encode(out, seqnum, status);
	fuzz_check(be32_at(out) == USBIP_RET_UNLINK, "RET_UNLINK command");
	fuzz_check(be32_at(out + 4) == seqnum, "RET_UNLINK seqnum");
	fuzz_check((int32_t)be32_at(out + 20) == status, "RET_UNLINK status");
	for (unsigned int i = 24; i < USBIP_HEADER_SIZE; i++)
		fuzz_check(out[i] == 0, "RET_UNLINK byte %u not 0", i);
}

/* --- the network protocol --- */

static void
reply_device(struct uvc_fn *fn, const uint8_t busid[USBIP_BUSID_SIZE])
{
	struct usbip_device_info d = {
		.busnum = 42, .devnum = 1, .speed = 3,
		.device_class = 0xef, .device_subclass = 2, .device_protocol = 1,
		.configuration_value = 1, .n_configurations = 1, .n_interfaces = 2,
	};
	uint8_t out[USBIP_DEVICE_SIZE];

	uvc_fn_ids(fn, &d.id_vendor, &d.id_product, &d.bcd_device);
	memset(d.path, 'p', sizeof(d.path));	/* no NUL: the encoder adds one */
	memcpy(d.busid, busid, USBIP_BUSID_SIZE);
	usbip_device_encode(out, &d);
	fuzz_check(out[255] == 0 && out[256 + USBIP_BUSID_SIZE - 1] == 0,
		   "usbip_usb_device strings not terminated");
	fuzz_check(strncmp((const char *)out + 256, (const char *)busid,
			   USBIP_BUSID_SIZE - 1) == 0, "busid not copied");
	fuzz_check(be32_at(out + 288) == 42 && be32_at(out + 296) == 3, "busnum/speed");
	fuzz_check(out[311] == 2, "bNumInterfaces");
}

/*
 * op_common requests at *p: returns true if the URB protocol follows
 * (an IMPORT, or bytes that are no op_common), false if the stream ended.
 */
static bool
net_phase(struct uvc_fn *fn, const uint8_t **p, const uint8_t *end)
{
	while (end - *p >= (ptrdiff_t)USBIP_OP_COMMON_SIZE) {
		uint16_t code = 0x5a5a, code2;
		uint32_t status = 0x5a5a5a5a, status2;
		uint8_t enc[USBIP_OP_COMMON_SIZE];

		if (usbip_op_decode(*p, &code, &status) < 0) {
			fuzz_check(code == 0x5a5a && status == 0x5a5a5a5a,
				   "op_common outputs written on failure");
			return true;
		}
		/* Round trip. */
		usbip_op_encode(enc, code, status);
		fuzz_check(memcmp(enc, *p, sizeof(enc)) == 0, "op_common does not round-trip");
		fuzz_check(usbip_op_decode(enc, &code2, &status2) == 0 && code2 == code &&
				   status2 == status, "op_common decode of our encode");
		*p += USBIP_OP_COMMON_SIZE;
		if (code == USBIP_OP_REQ_DEVLIST) {
			static const uint8_t busid[USBIP_BUSID_SIZE] = "42-1";

			reply_device(fn, busid);
			continue;
		}
		if (code == USBIP_OP_REQ_IMPORT) {
			if (end - *p < (ptrdiff_t)USBIP_BUSID_SIZE)
				return false;
			reply_device(fn, *p);
			*p += USBIP_BUSID_SIZE;
			return true;
		}
		return false;		/* usbipd closes on anything else */
	}
	return end - *p > 0;
}

/* --- the URB protocol --- */

static void
check_decoded(const uint8_t *hdr, const struct usbip_cmd *c, long follows)
{
	fuzz_check(c->command == be32_at(hdr) && c->seqnum == be32_at(hdr + 4),
		   "command/seqnum not as sent");
	fuzz_check(c->ep <= 15 && c->direction <= USBIP_DIR_IN, "ep/direction out of range");
	if (c->command == USBIP_CMD_UNLINK) {
		fuzz_check(follows == 0, "UNLINK followed by %ld bytes", follows);
		fuzz_check(c->unlink_seqnum == be32_at(hdr + 20), "unlink seqnum");
		return;
	}
	fuzz_check(c->command == USBIP_CMD_SUBMIT, "command %u accepted", c->command);
	fuzz_check(c->length >= 0 && c->n_packets >= 0 && c->n_packets <= USBIP_MAX_ISO_PACKETS,
		   "length %d / packets %d accepted", c->length, c->n_packets);
	fuzz_check(follows == (c->direction == USBIP_DIR_OUT ? (long)c->length : 0) +
				      16l * c->n_packets,
		   "follows %ld for length %d, %d packets", follows, c->length, c->n_packets);
	fuzz_check(c->direction == USBIP_DIR_IN || (uint32_t)c->length <= USBIP_MAX_OUT,
		   "OUT of %d accepted", c->length);
	fuzz_check(memcmp(c->setup, hdr + 40, 8) == 0, "setup not as sent");
}

/* What the function answered, against what it is. */
static void
check_control(struct uvc_fn *fn, const uint8_t setup[8], const uint8_t *reply, int r,
	      const GByteArray *device, const GByteArray *config)
{
	uint16_t value = le16_at(setup + 2), index = le16_at(setup + 4);

	if (r <= 0 || !(setup[0] & 0x80))
		return;
	if (setup[0] == 0x80 && setup[1] == 0x06 && value == 0x0100)
		fuzz_check((size_t)r == MIN(device->len, le16_at(setup + 6)) &&
				   memcmp(reply, device->data, r) == 0,
			   "device descriptor changed");
	if (setup[0] == 0x80 && setup[1] == 0x06 && value == 0x0200)
		fuzz_check((size_t)r == MIN(config->len, le16_at(setup + 6)) &&
				   memcmp(reply, config->data, r) == 0,
			   "configuration descriptor changed");
	if ((setup[0] & 0x60) == 0x20 && (index & 0xff) == 1 && r >= 4 &&
	    (value >> 8 == 1 || value >> 8 == 2) && setup[1] != 0x84 && setup[1] != 0x85 &&
	    setup[1] != 0x86) {
		/* A probe or commit: indices we offer, our sizes. */
		fuzz_check(reply[2] >= 1 && reply[2] <= G_N_ELEMENTS(frames_per_format),
			   "probe format %u", reply[2]);
		fuzz_check(reply[3] >= 1 && reply[3] <= frames_per_format[reply[2] - 1],
			   "probe frame %u of format %u", reply[3], reply[2]);
		if (r >= PROBE_SIZE)
			fuzz_check(reply[22] == 0 && reply[23] == 0x40 && reply[24] == 0 &&
					   reply[25] == 0, "dwMaxPayloadTransferSize");
	}
}

static void
payload(struct uvc_fn *fn, uint32_t length, uint32_t flags)
{
	uint8_t hdr[UVC_PAYLOAD_HEADER] = { 0 };
	size_t n_data = (size_t)-1, h;

	if (st.offset == 0) {
		/* A new frame: the mode's size, or a variable one like MJPEG's. */
		st.frame_len = flags & 0x80000000u ? (flags & 0xffff) : st.mode->size;
		st.frame_error = flags & 0x40000000u;
	}
	h = uvc_fn_payload_header(fn, hdr, length, st.frame_len, st.offset, st.frame_error,
				  &n_data);
	fuzz_check(h == UVC_PAYLOAD_HEADER && hdr[0] == UVC_PAYLOAD_HEADER, "header length");
	fuzz_check(n_data <= st.frame_len - st.offset, "data past the frame");
	fuzz_check(length < UVC_PAYLOAD_HEADER ? n_data == 0
					       : n_data <= length - UVC_PAYLOAD_HEADER,
		   "data %zu in a transfer of %u", n_data, length);
	fuzz_check(!!(hdr[1] & UVC_HDR_ERR) == st.frame_error, "ERR bit");
	if (st.offset == 0)
		fuzz_check(!st.any_payload || (hdr[1] & UVC_HDR_FID) != st.fid, "FID not toggled");
	else
		fuzz_check((hdr[1] & UVC_HDR_FID) == st.fid, "FID changed within a frame");
	st.fid = hdr[1] & UVC_HDR_FID;
	st.any_payload = true;
	st.offset += n_data;
	fuzz_check(!!(hdr[1] & UVC_HDR_EOF) == (st.offset >= st.frame_len), "EOF bit");
	if (st.offset >= st.frame_len)
		st.offset = 0;
	check_ret_submit(0, 0, (int32_t)(UVC_PAYLOAD_HEADER + n_data));
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_glib(G_LOG_LEVEL_WARNING);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	uint32_t held[MAX_HELD], held_len[MAX_HELD];
	unsigned int n_held = 0;
	GByteArray *device = g_byte_array_new(), *config = g_byte_array_new();
	struct uvc_fn *fn;
	uint8_t setup[8];
	uint8_t *buf;
	int r;

	memset(&st, 0, sizeof(st));
	fn = uvc_fn_new(modes, G_N_ELEMENTS(modes), ctrls, G_N_ELEMENTS(ctrls), "Fuzz cam",
			"0123", &fake_ops, NULL);
	fuzz_check(fn && uvc_fn_n_modes(fn) == N_OFFERED, "the function's modes");

	/* Its descriptors as enumeration reads them, for the checks. */
	buf = g_malloc(0xffff);
	memcpy(setup, "\x80\x06\x00\x01\x00\x00\xff\xff", 8);
	r = uvc_fn_control(fn, setup, NULL, 0, buf);
	fuzz_check(r == 18, "device descriptor of %d bytes", r);
	g_byte_array_append(device, buf, (guint)r);
	memcpy(setup, "\x80\x06\x00\x02\x00\x00\xff\xff", 8);
	r = uvc_fn_control(fn, setup, NULL, 0, buf);
	fuzz_check(r > 9 && le16_at(buf + 2) == r, "configuration descriptor");
	g_byte_array_append(config, buf, (guint)r);
	g_free(buf);

	if (!net_phase(fn, &p, end))
		goto out;

	for (unsigned int n = 0; n < MAX_CMDS && end - p >= (ptrdiff_t)USBIP_HEADER_SIZE; n++) {
		struct usbip_cmd c, before;
		long follows;

		memset(&before, 0x5a, sizeof(before));
		c = before;
		follows = usbip_cmd_decode(p, &c);
		if (follows < 0) {
			fuzz_check(follows == -EPROTO, "decode: %ld", follows);
			fuzz_check(memcmp(&c, &before, sizeof(c)) == 0, "decode wrote on failure");
			break;		/* face.c drops the connection */
		}
		check_decoded(p, &c, follows);
		if (end - p - (ptrdiff_t)USBIP_HEADER_SIZE < follows)
			break;		/* truncated: the connection ends before its data */
		st.devid = c.devid;

		if (c.command == USBIP_CMD_UNLINK) {
			int32_t status = 0;

			for (unsigned int i = 0; i < n_held; i++) {
				if (held[i] == c.unlink_seqnum) {
					memmove(held + i, held + i + 1,
						(n_held - i - 1) * sizeof(*held));
					memmove(held_len + i, held_len + i + 1,
						(n_held - i - 1) * sizeof(*held_len));
					n_held--;
					status = -ECONNRESET;
					break;
				}
			}
			check_ret_unlink(c.seqnum, status);
		} else if (c.ep == 0) {
			uint16_t w_length = le16_at(c.setup + 6);
			size_t out_len = c.direction == USBIP_DIR_OUT ? (size_t)c.length : 0;
			/*
			 * Exactly sized heap copies: ASan sees any read or write
			 * past them. No data, no buffer: NULL (the API allows it).
			 */
			uint8_t *out = out_len ? g_memdup2(p + USBIP_HEADER_SIZE, out_len) : NULL;
			uint8_t *reply = w_length ? g_malloc(w_length) : NULL;

			r = uvc_fn_control(fn, c.setup, out, out_len, reply);
			fuzz_check(r == -EPIPE || r >= 0, "control: %d", r);
			if (r >= 0 && (c.setup[0] & 0x80))
				fuzz_check(r <= w_length, "IN reply of %d for wLength %u", r,
					   w_length);
			if (r >= 0 && !(c.setup[0] & 0x80))
				fuzz_check((size_t)r <= out_len, "OUT took %d of %zu", r, out_len);
			check_control(fn, c.setup, reply, r, device, config);
			check_ret_submit(c.seqnum, r < 0 ? -EPIPE : 0, r < 0 ? 0 : r);
			g_free(out);
			g_free(reply);
		} else if (c.ep == (UVC_EP_IN & 0x0f) && c.direction == USBIP_DIR_IN &&
			   c.n_packets == 0) {
			if (n_held == MAX_HELD) {
				memmove(held, held + 1, (MAX_HELD - 1) * sizeof(*held));
				memmove(held_len, held_len + 1, (MAX_HELD - 1) * sizeof(*held_len));
				n_held--;
			}
			held[n_held] = c.seqnum;
			held_len[n_held++] = (uint32_t)c.length;
		} else {
			check_ret_submit(c.seqnum, -EPIPE, 0);
		}
		/* face_pump(): every held URB gets a payload while streaming. */
		while (st.streaming && n_held > 0) {
			payload(fn, held_len[0], c.transfer_flags);
			memmove(held, held + 1, (n_held - 1) * sizeof(*held));
			memmove(held_len, held_len + 1, (n_held - 1) * sizeof(*held_len));
			n_held--;
		}
		if (!st.streaming)
			st.offset = 0;	/* a new stream starts with a new frame */
		p += USBIP_HEADER_SIZE + follows;
	}
out:
	uvc_fn_free(fn);
	g_byte_array_unref(device);
	g_byte_array_unref(config);
	return 0;
}
