/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for the file source's options and its raw frames
 * (sources/file.c, options.c, modes.c, and the frame-size arithmetic of
 * convert.c and format.c). The input is
 *
 *   12 bytes    width, height, bytesperline (host order) for the size check
 *   1 byte      a fourcc index for it
 *   a line      the options after "file:PATH,": format=NV12,size=16x8,fps=25,...
 *   the rest    the file's content
 *
 * The file is a memfd named by /proc/self/fd/N: nothing is written to disk
 * and no other file is opened (no file source option names a file). A
 * created source is enumerated, negotiated and produces a frame when small
 * (fuzz-source.h).
 *
 * The size check: v4l2cuse_convert_input_size() (the raw reader's frame size, with the
 * converter's alignment rules) and v4l2cuse_format_fill() (sizeimage, with
 * its rounding) both lay out format.c's planes and must agree whenever both
 * accept a size as it is; both refuse sizes past
 * V4L2CUSE_MAX_WIDTH x V4L2CUSE_MAX_HEIGHT, and no size wraps around.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <glib.h>

#include "convert.h"
#include "fuzz-source.h"

#define OPTS_MAX	1024

/* The raw formats file.c takes (format=), and two it does not. */
static const uint32_t fourccs[] = {
	V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_UYVY, V4L2_PIX_FMT_YVYU, V4L2_PIX_FMT_NV16,
	V4L2_PIX_FMT_NV61, V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_NV21, V4L2_PIX_FMT_YUV420,
	V4L2_PIX_FMT_YVU420, V4L2_PIX_FMT_YUV422P, V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_BGR24,
	V4L2_PIX_FMT_XRGB32, V4L2_PIX_FMT_XBGR32, V4L2_PIX_FMT_RGB565, V4L2_PIX_FMT_GREY,
	V4L2_PIX_FMT_MJPEG, v4l2_fourcc('A', 'B', 'C', 'D'),
};

static int memfd = -1;
static char path[64];

static void
check_sizes(uint32_t fourcc, uint32_t w, uint32_t h, uint32_t bpl)
{
	const struct v4l2cuse_format_info *info = v4l2cuse_format_info(fourcc);
	struct v4l2_pix_format pix = { .pixelformat = fourcc, .width = w, .height = h };
	size_t in = v4l2cuse_convert_input_size(fourcc, w, h, bpl);
	size_t natural = v4l2cuse_convert_input_size(fourcc, w, h, 0);
	int r = v4l2cuse_format_fill(&pix);

	fuzz_check(r == 0 || r == -EINVAL || r == -EOVERFLOW, "format_fill: %d", r);
	if (w > V4L2CUSE_MAX_WIDTH || h > V4L2CUSE_MAX_HEIGHT) {
		fuzz_check(!in && !natural, "v4l2cuse_convert_input_size takes %ux%u", w, h);
		fuzz_check(r < 0, "format_fill takes %ux%u", w, h);
		return;
	}
	if (!w || !h) {
		fuzz_check(!in && r == -EINVAL, "a zero size: %zu, %d", in, r);
		return;
	}
	if (in) {
		/* Every plane fits in 64 bits, at most 4 bytes a pixel, plus padding. */
		fuzz_check(in >= (uint64_t)w * h, "%ux%u frame of %zu bytes", w, h, in);
		fuzz_check(in <= (uint64_t)(bpl ? bpl : 4ull * w) * h * 3, "%zu bytes for %ux%u",
			   in, w, h);
		fuzz_check(!bpl || in >= natural, "padded %zu < natural %zu", in, natural);
	}
	/* Formats that are only read (NV16, 422P, ...) are no output formats. */
	if (!info || info->compressed) {
		fuzz_check(!natural || !info, "a raw frame size for compressed %08x", fourcc);
		fuzz_check(r < 0 || info, "format_fill takes unknown %08x", fourcc);
		return;
	}
	fuzz_check(r == 0, "format_fill refuses %ux%u %.4s: %d", w, h, (const char *)&fourcc, r);
	fuzz_check(pix.width >= w && pix.height >= h && pix.width <= V4L2CUSE_MAX_WIDTH &&
		   pix.height <= V4L2CUSE_MAX_HEIGHT, "rounded %ux%u to %ux%u", w, h,
		   pix.width, pix.height);
	fuzz_check((uint64_t)pix.bytesperline * pix.height <= pix.sizeimage,
		   "bytesperline %u x %u > sizeimage %u", pix.bytesperline, pix.height,
		   pix.sizeimage);
	/* The two computations agree on what both accept. */
	if (natural && pix.width == w && pix.height == h)
		fuzz_check(natural == pix.sizeimage, "%ux%u %.4s: raw frame %zu, sizeimage %u",
			   w, h, (const char *)&fourcc, natural, pix.sizeimage);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_glib(0);
	memfd = memfd_create("fuzz-raw-options", MFD_CLOEXEC);
	if (memfd < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree char *spec = NULL, *error = NULL;
	struct v4l2cuse_source *src = NULL;
	const uint8_t *nl, *content;
	uint32_t hdr[3];
	size_t opts_len;
	int r;

	if (size < sizeof(hdr) + 1)
		return -1;
	memcpy(hdr, data, sizeof(hdr));
	check_sizes(fourccs[data[sizeof(hdr)] % G_N_ELEMENTS(fourccs)], hdr[0], hdr[1], hdr[2]);
	data += sizeof(hdr) + 1;
	size -= sizeof(hdr) + 1;

	nl = memchr(data, '\n', MIN(size, OPTS_MAX));
	opts_len = nl ? (size_t)(nl - data) : MIN(size, OPTS_MAX);
	content = data + opts_len + (nl != NULL);
	spec = g_strdup_printf("file:%s,%.*s", path, (int)opts_len, (const char *)data);

	if (ftruncate(memfd, 0) < 0 ||
	    pwrite(memfd, content, data + size - content, 0) != data + size - content)
		abort();
	r = v4l2cuse_source_create(spec, &src, &error);
	fuzz_check_result(r, error);
	if (r < 0) {
		fuzz_check(!src, "a failed create() left a source");
		fuzz_check(g_str_has_prefix(error, "file: "), "message without 'file: ': %s",
			   error);
		return 0;
	}
	fuzz_exercise_source(src, hdr[0] & 1 ? V4L2_PIX_FMT_YUYV : V4L2_PIX_FMT_MJPEG,
			     hdr[1] % 2048, hdr[2] % 2048);
	v4l2cuse_source_destroy(src);
	return 0;
}
