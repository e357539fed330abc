/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * convert-pairs: the converter alone (sources/convert.h), one input frame
 * to one target per call, for the pairs the file, uvc and loopback paths
 * use most, at 1920x1080 and scaled to 1280x720.
 *
 *   convert-pairs [SECONDS_PER_CASE]       (default 1.0)
 *
 * Inputs are made once: a moving-gradient R'G'B' picture converted by the
 * converter itself to each input format (MJPEG: a JPEG of it), in 4
 * different frames, so that no two calls see the same bytes. Each figure
 * is the best of three rounds of SECONDS_PER_CASE / 3, in frames per
 * second on one core (the converter is single-threaded). Uses only the
 * converter's public API, so the same file measures older versions of it.
 * See docs/performance.md ("Converter").
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "convert.h"

#define BW	1920
#define BH	1080
#define NFRAMES	4

struct input {
	uint32_t fourcc;
	uint8_t *data[NFRAMES];
	size_t size[NFRAMES];
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct v4l2_pix_format
pix_of(uint32_t fourcc, uint32_t w, uint32_t h)
{
	struct v4l2_pix_format pix = { .pixelformat = fourcc, .width = w, .height = h };

	if (v4l2cuse_format_fill(&pix) < 0) {
		fprintf(stderr, "convert-pairs: %.4s %ux%u: no such format\n",
			(const char *)&fourcc, w, h);
		exit(1);
	}
	return pix;
}

static void
make_input(struct v4l2cuse_convert *cv, uint32_t fourcc, struct input *in)
{
	uint8_t *rgb = g_malloc((size_t)BW * BH * 3);
	struct v4l2_pix_format pix = pix_of(fourcc, BW, BH);

	in->fourcc = fourcc;
	for (unsigned int n = 0; n < NFRAMES; n++) {
		struct v4l2cuse_image img = {
			.fourcc = V4L2_PIX_FMT_RGB24, .width = BW, .height = BH, .data = rgb,
			.size = (size_t)BW * BH * 3,
		};
		uint32_t used;

		for (uint32_t y = 0; y < BH; y++) {
			for (uint32_t x = 0; x < BW; x++) {
				uint8_t *p = rgb + ((size_t)y * BW + x) * 3;

				p[0] = (uint8_t)((x + 7 * n) * 255 / BW);
				p[1] = (uint8_t)((y + 5 * n) * 255 / BH);
				p[2] = (uint8_t)(((x + y) / 2 + 11 * n) & 0xff);
			}
		}
		in->data[n] = g_malloc(pix.sizeimage);
		if (v4l2cuse_convert_frame(cv, &img, &pix, in->data[n], pix.sizeimage, &used) < 0) {
			fprintf(stderr, "convert-pairs: cannot make %.4s input\n",
				(const char *)&fourcc);
			exit(1);
		}
		in->size[n] = used;
	}
	g_free(rgb);
}

/* Frames per second of @in to @out for @seconds. */
static double
run(struct v4l2cuse_convert *cv, const struct input *in, const struct v4l2_pix_format *out,
    uint8_t *dst, double seconds)
{
	double t0 = now(), t;
	unsigned long frames = 0;

	do {
		for (unsigned int n = 0; n < NFRAMES; n++) {
			struct v4l2cuse_image img = {
				.fourcc = in->fourcc, .width = BW, .height = BH,
				.data = in->data[n], .size = in->size[n],
			};
			uint32_t used;

			if (v4l2cuse_convert_frame(cv, &img, out, dst, out->sizeimage, &used) < 0) {
				fprintf(stderr, "convert-pairs: %.4s -> %.4s failed\n",
					(const char *)&in->fourcc, (const char *)&out->pixelformat);
				exit(1);
			}
			frames++;
		}
		t = now() - t0;
	} while (t < seconds);
	return frames / t;
}

int
main(int argc, char **argv)
{
	static const struct {
		uint32_t in, out;
		uint32_t w, h;
	} cases[] = {
		{ V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_RGB24, BW, BH },
		{ V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_XBGR32, BW, BH },
		{ V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_NV12, BW, BH },
		{ V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_YUV420, BW, BH },
		{ V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_MJPEG, BW, BH },
		{ V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_YUYV, BW, BH },
		{ V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_RGB24, BW, BH },
		{ V4L2_PIX_FMT_YUV420, V4L2_PIX_FMT_RGB24, BW, BH },
		{ V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_YUYV, BW, BH },
		{ V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_YUV420, BW, BH },
		{ V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_YUYV, BW, BH },
		{ V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_RGB24, BW, BH },
		{ V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_YUYV, 1280, 720 },
		{ V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_NV12, 1280, 720 },
		{ V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_RGB24, 1280, 720 },
		{ V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_YUYV, 1280, 720 },
	};
	static const uint32_t inputs[] = {
		V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_YUV420, V4L2_PIX_FMT_RGB24,
		V4L2_PIX_FMT_MJPEG,
	};
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();
	struct input in[G_N_ELEMENTS(inputs)];
	uint8_t *dst = g_malloc((size_t)BW * BH * 4);

	if (seconds <= 0)
		seconds = 1.0;
	for (size_t i = 0; i < G_N_ELEMENTS(inputs); i++)
		make_input(cv, inputs[i], &in[i]);
	printf("# %ux%u in, %u frames, %.1f s per case, best of 3\n", BW, BH, NFRAMES, seconds);
	printf("| case | fps | ms/frame |\n|---|---|---|\n");
	for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
		struct v4l2_pix_format out = pix_of(cases[c].out, cases[c].w, cases[c].h);
		const struct input *src = NULL;
		double best = 0;

		for (size_t i = 0; i < G_N_ELEMENTS(inputs); i++)
			if (inputs[i] == cases[c].in)
				src = &in[i];
		for (unsigned int r = 0; r < 3; r++)
			best = MAX(best, run(cv, src, &out, dst, seconds / 3));
		printf("| %.4s %ux%u -> %.4s %ux%u | %.0f | %.2f |\n", (const char *)&cases[c].in,
		       BW, BH, (const char *)&cases[c].out, cases[c].w, cases[c].h, best,
		       1000.0 / best);
		fflush(stdout);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(inputs); i++)
		for (unsigned int n = 0; n < NFRAMES; n++)
			g_free(in[i].data[n]);
	g_free(dst);
	v4l2cuse_convert_free(cv);
	return 0;
}
