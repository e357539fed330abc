/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * convert-pairs: the converter alone (sources/convert.h), one input frame
 * to one target per call, for the pairs the file, uvc and loopback paths
 * use most, at 1920x1080 and scaled to 1280x720.
 *
 *   convert-pairs [SECONDS_PER_CASE]       (default 1.0)
 *
 *   convert-pairs --all [SECONDS_PER_CASE]  every raw input to every raw
 *                                           target at 1920x1080 (default 0.3)
 *   convert-pairs SECONDS IN OUT            one pair at 1920x1080 (fourccs:
 *                                           YUYV RGB3 ...), e.g. under perf
 *
 * Inputs are made once: a moving-gradient R'G'B' picture converted by the
 * converter itself to each input format (MJPEG: a JPEG of it), in 4
 * different frames, so that no two calls see the same bytes. A case runs
 * ROUNDS rounds of SECONDS_PER_CASE / ROUNDS each and reports the best
 * round twice: in frames per second of wall-clock time, and in frames per
 * second of this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), i.e. per
 * core: the converter is single-threaded, and the CPU figure does not drop
 * when other processes share the core (the wall one does). Uses only the
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
#include "bench.h"

#define BW	1920
#define BH	1080
#define NFRAMES	4
#define ROUNDS	5

struct input {
	uint32_t fourcc;
	uint8_t *data[NFRAMES];
	size_t size[NFRAMES];
};

struct rate {
	double wall;	/* frames per second of wall-clock time */
	double cpu;	/* frames per second of this thread's CPU time */
};

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
	uint8_t *rgb;
	struct v4l2_pix_format pix;

	in->fourcc = fourcc;
	if (!v4l2cuse_format_info(fourcc)) {
		/* A format the converter only reads: a byte ramp (any bytes are samples). */
		size_t size = v4l2cuse_convert_input_size(fourcc, BW, BH, 0);

		for (unsigned int n = 0; n < NFRAMES; n++) {
			in->data[n] = g_malloc(size);
			in->size[n] = size;
			for (size_t i = 0; i < size; i++)
				in->data[n][i] = (uint8_t)(i / 7 + n * 3 + (i / (BW * 2)) * 5);
		}
		return;
	}
	rgb = g_malloc((size_t)BW * BH * 3);
	pix = pix_of(fourcc, BW, BH);
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

/* Frames per second of @in to @out for @seconds (wall clock). */
static struct rate
run(struct v4l2cuse_convert *cv, const struct input *in, const struct v4l2_pix_format *out,
    uint8_t *dst, double seconds)
{
	double t0 = now_s(), c0 = thread_cpu_s(), t;
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
		t = now_s() - t0;
	} while (t < seconds);
	return (struct rate){
		.wall = frames / t, .cpu = frames / (thread_cpu_s() - c0),
	};
}

static const struct input *
find_input(struct v4l2cuse_convert *cv, struct input *in, size_t *n_in, uint32_t fourcc)
{
	for (size_t i = 0; i < *n_in; i++)
		if (in[i].fourcc == fourcc)
			return &in[i];
	make_input(cv, fourcc, &in[*n_in]);
	return &in[(*n_in)++];
}

/* One table line: the best of ROUNDS rounds, wall and CPU each. */
static void
bench_case(struct v4l2cuse_convert *cv, const struct input *src, uint32_t fourcc, uint32_t w,
	   uint32_t h, uint8_t *dst, double seconds)
{
	struct v4l2_pix_format out = pix_of(fourcc, w, h);
	struct rate best = { 0, 0 };

	for (unsigned int r = 0; r < ROUNDS; r++) {
		struct rate rate = run(cv, src, &out, dst, seconds / ROUNDS);

		best.wall = MAX(best.wall, rate.wall);
		best.cpu = MAX(best.cpu, rate.cpu);
	}
	printf("| %.4s %ux%u -> %.4s %ux%u | %.0f | %.0f | %.2f |\n", (const char *)&src->fourcc,
	       BW, BH, (const char *)&fourcc, w, h, best.wall, best.cpu, 1000.0 / best.cpu);
	fflush(stdout);
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
		{ V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_MJPEG, BW, BH },
		{ V4L2_PIX_FMT_YUV420, V4L2_PIX_FMT_RGB24, BW, BH },
		{ V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_YUYV, BW, BH },
		{ V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_YUV420, BW, BH },
		{ V4L2_PIX_FMT_RGB24, V4L2_PIX_FMT_MJPEG, BW, BH },
		{ V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_YUYV, BW, BH },
		{ V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_RGB24, BW, BH },
		{ V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_YUYV, 1280, 720 },
		{ V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_NV12, 1280, 720 },
		{ V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_RGB24, 1280, 720 },
		{ V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_YUYV, 1280, 720 },
	};
	bool all = argc > 1 && strcmp(argv[1], "--all") == 0;
	double seconds = argc > 1 + all ? atof(argv[1 + all]) : all ? 0.3 : 1.0;
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();
	struct input in[64];
	size_t n_in = 0;
	uint8_t *dst = g_malloc((size_t)BW * BH * 4);

	if (seconds <= 0)
		seconds = all ? 0.3 : 1.0;
	printf("# %ux%u in, %u frames, %.2f s per case, best of %u rounds\n", BW, BH, NFRAMES,
	       seconds, ROUNDS);
	printf("| case | wall fps | fps per CPU-second | CPU ms/frame |\n|---|---|---|---|\n");
	if (!all && argc == 4 && strlen(argv[2]) == 4 && strlen(argv[3]) == 4) {
		bench_case(cv, find_input(cv, in, &n_in, v4l2_fourcc(argv[2][0], argv[2][1],
								    argv[2][2], argv[2][3])),
			   v4l2_fourcc(argv[3][0], argv[3][1], argv[3][2], argv[3][3]), BW, BH, dst,
			   seconds);
	} else if (all) {
		/* Every raw format the converter reads, to every raw one it writes. */
		const struct v4l2cuse_format_info *fi, *fo;

		for (unsigned int i = 0; (fi = v4l2cuse_format_lookup_by_index(i)); i++) {
			if (fi->compressed)
				continue;
			for (unsigned int o = 0; (fo = v4l2cuse_format_by_index(o)); o++) {
				if (fo->compressed || fo->fourcc == fi->fourcc)
					continue;
				bench_case(cv, find_input(cv, in, &n_in, fi->fourcc), fo->fourcc,
					   BW, BH, dst, seconds);
			}
		}
	} else {
		for (size_t c = 0; c < G_N_ELEMENTS(cases); c++)
			bench_case(cv, find_input(cv, in, &n_in, cases[c].in), cases[c].out,
				   cases[c].w, cases[c].h, dst, seconds);
	}
	for (size_t i = 0; i < n_in; i++)
		for (unsigned int n = 0; n < NFRAMES; n++)
			g_free(in[i].data[n]);
	g_free(dst);
	v4l2cuse_convert_free(cv);
	return 0;
}
