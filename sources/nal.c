/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parameter sets kept and put in front of key frames that lack them
 * (nal.h). NAL unit types: ITU-T H.264 table 7-1, H.265 table 7-1.
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>
#include <linux/videodev2.h>

#include "nal.h"

struct v4l2cuse_nal {
	bool hevc;
	bool started;			/* a key frame went out since the reset */
	GByteArray *params;		/* the newest parameter sets, each after 00 00 00 01 */
};

struct nal_unit {
	size_t start;			/* its start code */
	size_t payload;			/* its first byte after the start code */
	size_t end;			/* the next unit's start code, or the frame's end */
	unsigned int type;
};

struct v4l2cuse_nal *
v4l2cuse_nal_new(uint32_t fourcc)
{
	struct v4l2cuse_nal *n;

	if (fourcc != V4L2_PIX_FMT_H264 && fourcc != V4L2_PIX_FMT_HEVC)
		return NULL;
	n = g_new0(struct v4l2cuse_nal, 1);
	n->hevc = fourcc == V4L2_PIX_FMT_HEVC;
	n->params = g_byte_array_new();
	return n;
}

void
v4l2cuse_nal_free(struct v4l2cuse_nal *n)
{
	if (!n)
		return;
	g_byte_array_unref(n->params);
	g_free(n);
}

void
v4l2cuse_nal_reset(struct v4l2cuse_nal *n)
{
	n->started = false;
}

/* The next start code (00 00 01, with a leading 00 when there is one) at or after @from. */
static bool
nal_find(const uint8_t *d, size_t size, size_t from, size_t *ret_start, size_t *ret_payload)
{
	for (size_t i = from; i + 3 <= size; i++) {
		if (d[i] == 0 && d[i + 1] == 0 && d[i + 2] == 1) {
			*ret_start = i > from && d[i - 1] == 0 ? i - 1 : i;
			*ret_payload = i + 3;
			return true;
		}
	}
	return false;
}

static bool
nal_is_param(const struct v4l2cuse_nal *n, unsigned int type)
{
	return n->hevc ? type >= 32 && type <= 34 : type == 7 || type == 8;
}

static bool
nal_is_key(const struct v4l2cuse_nal *n, unsigned int type)
{
	return n->hevc ? type >= 16 && type <= 21 : type == 5;
}

static bool
nal_is_aud(const struct v4l2cuse_nal *n, unsigned int type)
{
	return n->hevc ? type == 35 : type == 9;
}

int
v4l2cuse_nal_frame(struct v4l2cuse_nal *n, const uint8_t *data, size_t size, uint8_t *dst,
		   size_t dst_len, size_t *ret_len, bool *ret_key)
{
	static const uint8_t start_code[4] = { 0, 0, 0, 1 };
	GByteArray *params = NULL;
	size_t start, payload, aud_end = 0, out = 0;
	bool key = false, has_params = false, first = true;

	if (!nal_find(data, size, 0, &start, &payload))
		return -EBADMSG;
	while (payload < size) {
		struct nal_unit u = { .start = start, .payload = payload, .end = size };

		if (nal_find(data, size, payload, &start, &payload))
			u.end = start;
		else
			payload = size;
		u.type = n->hevc ? (data[u.payload] >> 1) & 0x3f : data[u.payload] & 0x1f;
		if (first && nal_is_aud(n, u.type))
			aud_end = u.end;
		first = false;
		key |= nal_is_key(n, u.type);
		if (nal_is_param(n, u.type)) {
			has_params = true;
			if (!params)
				params = g_byte_array_new();
			g_byte_array_append(params, start_code, sizeof(start_code));
			g_byte_array_append(params, data + u.payload, (guint)(u.end - u.payload));
		}
	}
	if (params) {
		/* The newest ones stand (a camera may change them with its settings). */
		g_byte_array_unref(n->params);
		n->params = params;
	}
	if (!key && !n->started)
		return -EAGAIN;
	if (key && !has_params && n->params->len) {
		if (size + n->params->len > dst_len)
			return -ENOSPC;
		memcpy(dst, data, aud_end);
		out = aud_end;
		memcpy(dst + out, n->params->data, n->params->len);
		out += n->params->len;
		memcpy(dst + out, data + aud_end, size - aud_end);
		out += size - aud_end;
	} else {
		if (size > dst_len)
			return -ENOSPC;
		memcpy(dst, data, size);
		out = size;
	}
	n->started |= key;
	*ret_len = out;
	*ret_key = key;
	return 0;
}
