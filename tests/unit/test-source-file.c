/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "file" source (sources/file.c) on sample files the test writes
 * itself: Y4M in every colour space, raw frames, MJPEG streams, JPEG and PNG
 * stills (GStreamer containers: test-source-gst.c); pacing, looping, corrupt
 * frames, startup errors, runtime failure (no signal) and the daemon's
 * "NO SIGNAL" card (sources/placeholder.c).
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <png.h>

#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "convert.h"
#include "placeholder.h"
#include "test-source-util.h"
#include "file-samples.h"
#include "test-main.h"

enum cs { CS_420, CS_422, CS_444, CS_444ALPHA, CS_MONO };

static void
write_y4m(const char *path, uint32_t w, uint32_t h, enum cs cs, unsigned int frames,
	  const char *rate, int bad_frame)
{
	static const char *const names[] = { "420jpeg", "422", "444", "444alpha", "mono" };
	FILE *f = fopen(path, "wb");
	size_t cw = cs == CS_444 || cs == CS_444ALPHA ? w : (w + 1) / 2;
	size_t ch = cs == CS_420 ? (h + 1) / 2 : h;

	g_assert_nonnull(f);
	fprintf(f, "YUV4MPEG2 W%u H%u F%s Ip A1:1 C%s XYSCSS=TEST\n", w, h, rate, names[cs]);
	for (unsigned int i = 0; i < frames; i++) {
		g_autofree uint8_t *y = g_malloc((size_t)w * h);
		g_autofree uint8_t *c = g_malloc(cw * ch);

		fputs((int)i == bad_frame ? "FRAXE\n" : "FRAME\n", f);
		memset(y, sample_y(i), (size_t)w * h);
		fwrite(y, 1, (size_t)w * h, f);
		if (cs == CS_MONO)
			continue;
		memset(c, 100 + i, cw * ch);
		fwrite(c, 1, cw * ch, f);
		memset(c, 150 - i, cw * ch);
		fwrite(c, 1, cw * ch, f);
		if (cs == CS_444ALPHA) {
			memset(y, 0x77, (size_t)w * h);
			fwrite(y, 1, (size_t)w * h, f);
		}
	}
	fclose(f);
}

static char *
create_error(const char *spec)
{
	struct v4l2cuse_source *src = NULL;
	char *error = NULL;

	g_assert_cmpint(v4l2cuse_source_create(spec, &src, &error), <, 0);
	g_assert_null(src);
	g_assert_nonnull(error);
	g_assert_null(strchr(error, '\n'));
	g_test_message("%s -> %s", spec, error);
	return error;
}

/* Produce one frame and return its (flat) luma, checking it is flat. */
static int
produce_y(struct v4l2cuse_source *src, const struct v4l2_pix_format *pix, uint8_t *buf)
{
	unsigned int step = pix->pixelformat == V4L2_PIX_FMT_YUYV ? 2 : 1;
	size_t n = (size_t)pix->width * pix->height;

	g_assert_cmpint(produce(src, pix, buf, NULL), ==, 0);
	for (size_t i = 1; i < n; i++)
		g_assert_cmpuint(buf[i * step], ==, buf[0]);
	return buf[0];
}

V4L2CUSE_TEST("/file/y4m-420", test_y4m_420)
{
	g_autofree char *path = tmp_path("a.y4m");
	g_autofree char *spec = NULL;
	struct v4l2cuse_source *src;
	struct v4l2_pix_format pix;
	struct v4l2_fract iv;
	g_autofree uint8_t *buf = NULL;
	uint32_t f, w, h;

	write_y4m(path, 64, 48, CS_420, 5, "30:1", -1);
	spec = g_strdup_printf("file:%s", path);
	src = ts_make(spec);

	/* The file's own format, size and rate come first. */
	ts_assert_format(src, 0, V4L2_PIX_FMT_YUV420);
	ts_assert_format(src, 1, V4L2_PIX_FMT_YUYV);
	g_assert_cmpint(src->ops->enum_format(src, 14, &f), ==, -EINVAL);
	f = V4L2_PIX_FMT_YUYV;
	ts_assert_size(src, f, 0, 64, 48);
	g_assert_cmpint(src->ops->enum_framesize(src, f, 1, &w, &h), ==, 0);
	g_assert_cmpuint(w, ==, 320);	/* A1:1: no extra square-pixel size */
	ts_assert_interval(src, f, 64, 48, 0, 1, 30);
	g_assert_cmpint(src->ops->enum_frameinterval(src, f, 64, 48, 2, &iv), ==, 0);
	g_assert_cmpuint(iv.denominator, ==, 15);	/* 30 is the file's: not twice */
	g_assert_cmpint(src->ops->enum_frameinterval(src, f, 64, 48, 3, &iv), ==, -EINVAL);

	/* YU12 at the native size: the file's bytes, in order, looping. */
	pix = ts_start(src, V4L2_PIX_FMT_YUV420, 64, 48, 1, 30);
	buf = g_malloc(pix.sizeimage);
	for (unsigned int i = 0; i < 12; i++) {
		g_assert_cmpint(produce_y(src, &pix, buf), ==, sample_y(i % 5));
		g_assert_cmpuint(buf[64 * 48], ==, 100 + i % 5);
		g_assert_cmpuint(buf[64 * 48 * 5 / 4], ==, 150 - i % 5);
	}
	src->ops->stop(src);
	g_clear_pointer(&buf, g_free);

	/* YUYV scaled to 320x240: flat stays exact; a restart starts at frame 0. */
	pix = ts_start(src, V4L2_PIX_FMT_YUYV, 320, 240, 1, 30);
	buf = g_malloc(pix.sizeimage);
	for (unsigned int i = 0; i < 6; i++) {
		g_assert_cmpint(produce_y(src, &pix, buf), ==, sample_y(i % 5));
		g_assert_cmpuint(buf[1], ==, 100 + i % 5);
		g_assert_cmpuint(buf[3], ==, 150 - i % 5);
	}
	v4l2cuse_source_destroy(src);
}

V4L2CUSE_TEST("/file/y4m-spaces", test_y4m_spaces)
{
	static const struct {
		enum cs cs;
		uint32_t w, h;		/* in the file */
		uint32_t ow, oh;	/* offered */
		bool chroma;
	} cases[] = {
		{ CS_422, 64, 48, 64, 48, true },
		{ CS_444, 64, 48, 64, 48, true },
		{ CS_444ALPHA, 64, 48, 64, 48, true },
		{ CS_MONO, 64, 48, 64, 48, false },
		{ CS_420, 33, 17, 32, 16, true },
		{ CS_422, 33, 17, 32, 16, true },
		{ CS_MONO, 33, 17, 32, 16, false },
	};

	for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
		g_autofree char *path = tmp_path("s.y4m");
		g_autofree char *spec = g_strdup_printf("file:%s", path);
		g_autofree uint8_t *buf = NULL;
		struct v4l2cuse_source *src;
		struct v4l2_pix_format pix;
		uint32_t w, h;

		write_y4m(path, cases[c].w, cases[c].h, cases[c].cs, 3, "25:1", -1);
		src = ts_make(spec);
		g_assert_cmpint(src->ops->enum_framesize(src, V4L2_PIX_FMT_YUYV, 0, &w, &h), ==, 0);
		g_assert_cmpuint(w, ==, cases[c].ow);
		g_assert_cmpuint(h, ==, cases[c].oh);
		pix = ts_start(src, V4L2_PIX_FMT_YUYV, w, h, 1, 25);
		buf = g_malloc(pix.sizeimage);
		for (unsigned int i = 0; i < 4; i++) {
			g_assert_cmpint(produce_y(src, &pix, buf), ==, sample_y(i % 3));
			g_assert_cmpuint(buf[1], ==, cases[c].chroma ? 100 + i % 3 : 128);
			g_assert_cmpuint(buf[3], ==, cases[c].chroma ? 150 - i % 3 : 128);
		}
		v4l2cuse_source_destroy(src);
	}
}

/* A non-square pixel aspect adds the square-pixel size after the file's. */
V4L2CUSE_TEST("/file/aspect", test_aspect)
{
	g_autofree char *path = tmp_path("pal.y4m");
	g_autofree char *spec = g_strdup_printf("file:%s", path);
	struct v4l2cuse_source *src;
	FILE *f = fopen(path, "wb");

	fputs("YUV4MPEG2 W720 H576 F25:1 A16:15 Cmono\nFRAME\n", f);
	for (unsigned int i = 0; i < 720 * 576; i++)
		fputc(100, f);
	fclose(f);
	src = ts_make(spec);
	ts_assert_size(src, V4L2_PIX_FMT_YUYV, 0, 720, 576);
	ts_assert_size(src, V4L2_PIX_FMT_YUYV, 1, 768, 576);
	v4l2cuse_source_destroy(src);
}

/* Output frame n shows file frame floor(n * T_out / T_file). */
V4L2CUSE_TEST("/file/pacing", test_pacing)
{
	g_autofree char *path = tmp_path("p.y4m");
	g_autofree char *spec = g_strdup_printf("file:%s", path);
	g_autofree char *spec0 = g_strdup_printf("file:%s,loop=0", path);
	g_autofree char *spec_fps = g_strdup_printf("file:%s,fps=10", path);
	struct v4l2cuse_source *src;
	struct v4l2_pix_format pix;
	uint8_t buf[16 * 8 * 3 / 2];

	write_y4m(path, 16, 8, CS_420, 10, "30:1", -1);
	src = ts_make(spec);
	pix = ts_start(src, V4L2_PIX_FMT_YUV420, 16, 8, 1, 15);	/* half rate: every other */
	for (unsigned int i = 0; i < 8; i++)
		g_assert_cmpint(produce_y(src, &pix, buf), ==, sample_y(2 * i % 10));
	src->ops->stop(src);
	pix = ts_start(src, V4L2_PIX_FMT_YUV420, 16, 8, 1, 60);	/* double rate: twice each */
	for (unsigned int i = 0; i < 8; i++)
		g_assert_cmpint(produce_y(src, &pix, buf), ==, sample_y(i / 2));
	v4l2cuse_source_destroy(src);

	/* fps= overrides the header's rate: 10 fps at 30 -> three times each. */
	src = ts_make(spec_fps);
	pix = ts_start(src, V4L2_PIX_FMT_YUV420, 16, 8, 1, 30);
	for (unsigned int i = 0; i < 9; i++)
		g_assert_cmpint(produce_y(src, &pix, buf), ==, sample_y(i / 3));
	v4l2cuse_source_destroy(src);

	/* loop=0 holds the last frame. */
	src = ts_make(spec0);
	pix = ts_start(src, V4L2_PIX_FMT_YUV420, 16, 8, 1, 30);
	for (unsigned int i = 0; i < 14; i++)
		g_assert_cmpint(produce_y(src, &pix, buf), ==, sample_y(MIN(i, 9u)));
	v4l2cuse_source_destroy(src);
}

V4L2CUSE_TEST("/file/y4m-corrupt", test_y4m_corrupt)
{
	g_autofree char *path = tmp_path("c.y4m");
	g_autofree char *spec = g_strdup_printf("file:%s", path);
	struct v4l2cuse_source *src;
	struct v4l2_pix_format pix;
	uint8_t buf[16 * 8 * 3 / 2];
	int seen[8] = { 0 };

	/* Frame 2's marker is broken: it is skipped, the others come in order. */
	write_y4m(path, 16, 8, CS_420, 6, "30:1", 2);
	src = ts_make(spec);
	pix = ts_start(src, V4L2_PIX_FMT_YUV420, 16, 8, 1, 30);
	for (unsigned int i = 0; i < 12; i++) {
		int y = produce_y(src, &pix, buf);

		g_assert_cmpint((y - 16) % 8, ==, 0);
		seen[(y - 16) / 8]++;
	}
	g_assert_cmpint(seen[0], >=, 1);
	g_assert_cmpint(seen[1], >=, 2);	/* shown again in place of frame 2 */
	g_assert_cmpint(seen[2], ==, 0);
	g_assert_cmpint(seen[3], >=, 1);
	g_assert_cmpint(seen[5], >=, 1);
	g_assert_cmpuint(n_warnings, >=, 1);
	v4l2cuse_source_destroy(src);
}

V4L2CUSE_TEST("/file/raw", test_raw)
{
	g_autofree char *path = tmp_path("r.yuyv");
	g_autofree char *spec = g_strdup_printf("file:%s,format=YUYV,size=32x16,fps=10", path);
	struct v4l2cuse_source *src;
	struct v4l2_pix_format pix;
	struct v4l2_fract iv;
	uint8_t frame[32 * 16 * 2], buf[32 * 16 * 2];
	FILE *f = fopen(path, "wb");

	for (unsigned int i = 0; i < 4; i++) {
		for (unsigned int p = 0; p < sizeof(frame); p += 2) {
			frame[p] = sample_y(i);
			frame[p + 1] = p % 4 ? 150 : 100;
		}
		fwrite(frame, 1, sizeof(frame), f);
	}
	fwrite(frame, 1, 100, f);	/* a partial frame at the end is ignored */
	fclose(f);

	src = ts_make(spec);
	g_assert_cmpint(src->ops->enum_frameinterval(src, V4L2_PIX_FMT_YUYV, 32, 16, 0, &iv), ==, 0);
	g_assert_cmpuint(iv.denominator, ==, 10);
	pix = ts_start(src, V4L2_PIX_FMT_YUYV, 32, 16, 1, 10);
	for (unsigned int i = 0; i < 9; i++) {
		g_assert_cmpint(produce_y(src, &pix, buf), ==, sample_y(i % 4));
		g_assert_cmpuint(buf[1], ==, 100);
		g_assert_cmpuint(buf[3], ==, 150);
	}
	v4l2cuse_source_destroy(src);
}

/* An RGB-flat JPEG of @w x @h encoded by convert.c (libjpeg-turbo). */
static uint8_t *
make_jpeg(uint32_t w, uint32_t h, uint8_t r, uint8_t g, uint8_t b, uint32_t *ret_len)
{
	g_autofree uint8_t *rgb = g_malloc((size_t)w * h * 3);
	struct v4l2_pix_format pix = { .pixelformat = V4L2_PIX_FMT_MJPEG, .width = w, .height = h };
	struct v4l2cuse_image in = {
		.fourcc = V4L2_PIX_FMT_RGB24, .width = w, .height = h, .data = rgb,
		.size = (size_t)w * h * 3,
	};
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();
	uint8_t *out;

	for (size_t i = 0; i < (size_t)w * h; i++) {
		rgb[3 * i] = r;
		rgb[3 * i + 1] = g;
		rgb[3 * i + 2] = b;
	}
	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, 0);
	out = g_malloc(pix.sizeimage);
	g_assert_cmpint(v4l2cuse_convert_frame(cv, &in, &pix, out, pix.sizeimage, ret_len), ==, 0);
	v4l2cuse_convert_free(cv);
	return out;
}

static uint8_t
jpeg_grey(unsigned int i)
{
	return (uint8_t)(30 + 40 * i);
}

V4L2CUSE_TEST("/file/mjpeg", test_mjpeg)
{
	g_autofree char *path = tmp_path("m.mjpeg");
	g_autofree char *spec = g_strdup_printf("file:%s,fps=20", path);
	g_autofree uint8_t *first = NULL;
	g_autofree uint8_t *buf = NULL;
	struct v4l2cuse_source *src;
	struct v4l2_pix_format pix;
	uint32_t first_len = 0, used;
	FILE *fp = fopen(path, "wb");

	/* Five frames; garbage before the first and between 1 and 2; frame 3 cut. */
	fputs("garbage", fp);
	for (unsigned int i = 0; i < 5; i++) {
		uint32_t len;
		g_autofree uint8_t *j = make_jpeg(48, 32, jpeg_grey(i), jpeg_grey(i), jpeg_grey(i),
						  &len);

		if (i == 0)
			first = g_memdup2(j, len), first_len = len;
		if (i == 2)
			fwrite("\xff\x00\x12junk\xff\xd8\xff\xd9", 1, 12, fp);
		fwrite(j, 1, i == 3 ? len - 40 : len, fp);	/* cut in the coded data */
	}
	fclose(fp);

	src = ts_make(spec);
	ts_assert_format(src, 0, V4L2_PIX_FMT_MJPEG);

	/* MJPEG at the native size: the file's JPEGs, unchanged. */
	pix = ts_start(src, V4L2_PIX_FMT_MJPEG, 48, 32, 1, 20);
	buf = g_malloc(pix.sizeimage);
	g_assert_cmpint(produce(src, &pix, buf, &used), ==, 0);
	g_assert_cmpmem(buf, used, first, first_len);
	src->ops->stop(src);
	g_clear_pointer(&buf, g_free);

	/*
	 * RGB: the greys in order. The junk before frame 2 (a JPEG without
	 * SOS) and the cut frame 3 take a frame slot each and are skipped:
	 * the frame before them shows again.
	 */
	pix = ts_start(src, V4L2_PIX_FMT_RGB24, 48, 32, 1, 20);
	buf = g_malloc(pix.sizeimage);
	for (unsigned int i = 0; i < 12; i++) {
		static const unsigned int expect[] = { 0, 1, 1, 2, 2, 4, 0, 1, 1, 2, 2, 4 };

		g_assert_cmpint(produce(src, &pix, buf, NULL), ==, 0);
		g_assert_cmpint(abs((int)buf[0] - jpeg_grey(expect[i])), <=, 3);
		g_assert_cmpint(abs((int)buf[pix.sizeimage - 1] - jpeg_grey(expect[i])), <=, 3);
	}
	v4l2cuse_source_destroy(src);
}

static void
write_png(const char *path, uint32_t w, uint32_t h, uint8_t r, uint8_t g, uint8_t b)
{
	png_image png = { .version = PNG_IMAGE_VERSION, .width = w, .height = h,
			  .format = PNG_FORMAT_RGB };
	g_autofree uint8_t *rgb = g_malloc((size_t)w * h * 3);

	for (size_t i = 0; i < (size_t)w * h; i++) {
		rgb[3 * i] = r;
		rgb[3 * i + 1] = g;
		rgb[3 * i + 2] = b;
	}
	g_assert_true(png_image_write_to_file(&png, path, 0, rgb, 0, NULL));
}

V4L2CUSE_TEST("/file/stills", test_stills)
{
	g_autofree char *png = tmp_path("s.png");
	g_autofree char *jpg = tmp_path("s.jpg");
	g_autofree char *spec_png = g_strdup_printf("file:%s", png);
	g_autofree char *spec_jpg = g_strdup_printf("file:%s", jpg);
	g_autofree uint8_t *j = NULL;
	uint32_t len;
	FILE *f;

	write_png(png, 40, 30, 200, 100, 50);
	j = make_jpeg(40, 30, 60, 120, 180, &len);
	f = fopen(jpg, "wb");
	fwrite(j, 1, len, f);
	fclose(f);

	for (unsigned int k = 0; k < 2; k++) {
		struct v4l2cuse_source *src = ts_make(k ? spec_jpg : spec_png);
		const uint8_t want[2][3] = { { 200, 100, 50 }, { 60, 120, 180 } };
		struct v4l2_pix_format pix;
		g_autofree uint8_t *buf = NULL;

		ts_assert_size(src, V4L2_PIX_FMT_RGB24, 0, 40, 30);
		pix = ts_start(src, V4L2_PIX_FMT_RGB24, 640, 480, 1, 30);
		buf = g_malloc(pix.sizeimage);
		for (unsigned int i = 0; i < 3; i++) {
			g_assert_cmpint(produce(src, &pix, buf, NULL), ==, 0);
			for (unsigned int c = 0; c < 3; c++) {
				g_assert_cmpint(abs((int)buf[c] - want[k][c]), <=, 3);
				g_assert_cmpint(abs((int)buf[pix.sizeimage - 3 + c] - want[k][c]), <=, 3);
			}
		}
		v4l2cuse_source_destroy(src);
	}
}

V4L2CUSE_TEST("/file/errors", test_errors)
{
	g_autofree char *missing = tmp_path("missing.y4m");
	g_autofree char *empty = tmp_path("empty.bin");
	g_autofree char *text = tmp_path("text.txt");
	g_autofree char *p10 = tmp_path("p10.y4m");
	g_autofree char *w0 = tmp_path("w0.y4m");
	g_autofree char *badjpeg = tmp_path("bad.jpg");
	g_autofree char *ok = tmp_path("ok.y4m");
	struct {
		char *spec;
		const char *want;
	} cases[] = {
		{ g_strdup_printf("file:%s", missing), "No such file or directory" },
		{ g_strdup_printf("file:%s", tmpdir), "not a regular file" },
		{ g_strdup_printf("file:%s", empty), "empty file" },
		{ g_strdup_printf("file:%s", text), "unsupported file type" },
		{ g_strdup_printf("file:%s", p10), "unsupported Y4M colour space 'C420p10'" },
		{ g_strdup_printf("file:%s", w0), "bad Y4M header tag 'W0'" },
		{ g_strdup_printf("file:%s", badjpeg), "no complete JPEG frame found" },
		{ g_strdup_printf("file:%s,format=YUYV", ok), "need both format= and size=" },
		{ g_strdup_printf("file:%s,format=H264,size=64x48", ok),
		  "option 'format': unknown pixel format 'H264' (known: YUYV" },
		{ g_strdup_printf("file:%s,format=MJPG,size=64x48", ok), "unknown pixel format" },
		{ g_strdup_printf("file:%s,format=YUYV,size=4096x4096", ok), "shorter than one" },
		{ g_strdup_printf("file:%s,sizes=7x5", ok), "option 'sizes'" },
		{ g_strdup_printf("file:%s,fps=0", ok), "option 'fps'" },
		{ g_strdup_printf("file:%s,colour=1", ok), "unknown option 'colour'" },
		{ g_strdup_printf("file:%s,placeholder=%s", ok, missing),
		  "unknown option 'placeholder'" },
		{ g_strdup("file"), "no file given" },
		{ g_strdup("file:"), "no file given" },
	};

	g_file_set_contents(empty, "", 0, NULL);
	g_file_set_contents(text, "hello, world\n", -1, NULL);
	g_file_set_contents(p10, "YUV4MPEG2 W64 H48 F30:1 C420p10\nFRAME\n", -1, NULL);
	g_file_set_contents(w0, "YUV4MPEG2 W0 H48\n", -1, NULL);
	g_file_set_contents(badjpeg, "\xff\xd8\xff\xe0 not really", -1, NULL);
	write_y4m(ok, 16, 8, CS_420, 2, "30:1", -1);
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *error = create_error(cases[i].spec);

		if (!strstr(error, cases[i].want))
			g_error("%s: '%s' lacks '%s'", cases[i].spec, error, cases[i].want);
		g_assert_true(g_str_has_prefix(error, "file: "));
		if (strchr(cases[i].spec, ':') && cases[i].spec[5] && !strstr(cases[i].spec, ",") &&
		    !strstr(error, cases[i].spec + 5))
			g_error("%s: '%s' does not name the file", cases[i].spec, error);
		g_free(cases[i].spec);
	}
}

/*
 * A file that fails at runtime is "no signal": -ENOLINK at every frame, and
 * frames again once it is readable (it is reopened every second).
 */
V4L2CUSE_TEST("/file/runtime-failure", test_runtime_failure)
{
	g_autofree char *path = tmp_path("f.y4m");
	g_autofree char *spec = g_strdup_printf("file:%s", path);
	g_autofree char *good = NULL;
	g_autofree char *bad = NULL;
	struct v4l2cuse_source *src;
	struct v4l2_pix_format pix;
	g_autofree uint8_t *buf = NULL;
	unsigned int i, lost = 0;
	gsize len;
	size_t hdr;
	FILE *f;
	int r;

	write_y4m(path, 64, 48, CS_420, 3, "30:1", -1);
	g_assert_true(g_file_get_contents(path, &good, &len, NULL));
	src = ts_make(spec);
	pix = ts_start(src, V4L2_PIX_FMT_YUYV, 64, 48, 1, 30);
	buf = g_malloc(pix.sizeimage);
	g_assert_cmpint(produce_y(src, &pix, buf), ==, sample_y(0));

	/* Overwrite the frames in place (same inode): no frame is readable. */
	bad = g_memdup2(good, len);
	hdr = (size_t)(strchr(bad, '\n') - bad) + 1;
	memset(bad + hdr, 'x', len - hdr);
	f = fopen(path, "r+b");
	fwrite(bad, 1, len, f);
	fclose(f);
	/* The frames already read show until the pass ends; then no signal, for good. */
	for (i = 0; i < 10 && lost == 0; i++) {
		r = produce(src, &pix, buf, NULL);
		if (r == -ENOLINK)
			lost++;
		else
			g_assert_cmpint(r, ==, 0);
	}
	g_assert_cmpuint(lost, ==, 1);
	for (i = 0; i < 5; i++)
		g_assert_cmpint(produce(src, &pix, buf, NULL), ==, -ENOLINK);

	/* Fixed again: within a second or so the frames are back. */
	g_file_set_contents(path, good, (gssize)len, NULL);
	g_usleep(1100 * 1000);
	g_assert_cmpint(produce_y(src, &pix, buf), ==, sample_y(0));
	g_assert_cmpint(produce_y(src, &pix, buf), ==, sample_y(1));
	v4l2cuse_source_destroy(src);
}

/*
 * Y' of the card's background in YUYV: limited-range BT.601 of R'G'B' 32 is
 * 43.48; libyuv's fixed point gives 44.
 */
#define CARD_Y	43

/* The daemon's "NO SIGNAL" card, in every format. */
V4L2CUSE_TEST("/placeholder/card", test_card)
{
	struct v4l2cuse_placeholder *ph = v4l2cuse_placeholder_new();
	struct v4l2_pix_format pix = {
		.pixelformat = V4L2_PIX_FMT_YUYV, .width = 64, .height = 48,
	};
	g_autofree uint8_t *buf = NULL;
	unsigned int bright = 0;
	uint32_t used;

	/* Background at the edges, bright text in the middle. */
	g_assert_cmpint(v4l2cuse_format_fill(&pix), ==, 0);
	buf = g_malloc(pix.sizeimage);
	g_assert_cmpint(v4l2cuse_placeholder_fill(ph, &pix, buf, pix.sizeimage, &used), ==, 0);
	g_assert_cmpuint(used, ==, pix.sizeimage);
	g_assert_cmpuint(buf[1], ==, 128);
	g_assert_cmpuint(buf[3], ==, 128);
	for (uint32_t x = 0; x < 64; x++) {
		g_assert_cmpint(abs(buf[(0 * 64 + x) * 2] - CARD_Y), <=, 1);
		g_assert_cmpint(abs(buf[(47 * 64 + x) * 2] - CARD_Y), <=, 1);
		bright += buf[(24 * 64 + x) * 2] > 150;
	}
	g_assert_cmpuint(bright, >, 4);

	/* It converts to every format, MJPEG included. */
	for (unsigned int i = 0; v4l2cuse_format_by_index(i); i++) {
		struct v4l2_pix_format p = {
			.pixelformat = v4l2cuse_format_by_index(i)->fourcc, .width = 320, .height = 240,
		};
		g_autofree uint8_t *d = NULL;

		g_assert_cmpint(v4l2cuse_format_fill(&p), ==, 0);
		d = g_malloc(p.sizeimage);
		g_assert_cmpint(v4l2cuse_placeholder_fill(ph, &p, d, p.sizeimage, &used), ==, 0);
		g_assert_cmpuint(used, >, 0);
		if (p.pixelformat == V4L2_PIX_FMT_GREY)
			g_assert_cmpint(abs((int)d[0] - V4L2CUSE_PLACEHOLDER_BG_RGB), <=, 1);
	}
	v4l2cuse_placeholder_free(ph);
}
