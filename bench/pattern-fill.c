/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pattern-fill: how fast the "pattern" source fills frames, per format,
 * against memcpy of the same number of bytes in the same run.
 *
 *   pattern-fill [SECONDS_PER_CASE]     (default 0.5)
 *
 * Raw formats at 1920x1080 with the default overlay (75% bars + 4 text
 * lines), i.e. what a client streaming the default pattern costs us; then
 * MJPEG at 1280x720, static (only the overlay band is re-encoded) and with
 * box=1 (every frame fully encoded). Each figure is the best of several
 * alternating rounds. See docs/performance.md.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib.h>

#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "bench.h"

/* frames/s, or -1 on error; *ret_bytes: average bytesused */
static double
bench_source(const char *spec, uint32_t fourcc, uint32_t w, uint32_t h, double seconds,
	     double *ret_bytes)
{
	struct v4l2_pix_format pix = { .pixelformat = fourcc, .width = w, .height = h };
	struct v4l2_fract iv = { 1, 30 };
	struct v4l2cuse_source *src = NULL;
	struct v4l2cuse_frame f = { 0 };
	char *error = NULL;
	double t0, t, bytes = 0;
	unsigned long n = 0;

	if (v4l2cuse_source_create(spec, &src, &error) < 0) {
		fprintf(stderr, "%s\n", error);
		return -1;
	}
	if (v4l2cuse_source_negotiate(src, &pix) < 0 || pix.pixelformat != fourcc ||
	    src->ops->start(src, &pix, &iv) < 0) {
		v4l2cuse_source_destroy(src);
		return -1;
	}
	f.length = pix.sizeimage;
	f.data = g_malloc0(f.length);
	f.fmt = &pix;
	/* warm up: first frame builds the line cache / JPEG row cache */
	src->ops->produce(src, &f);
	t0 = now_s();
	do {
		f.sequence = (uint32_t)++n;
		f.timestamp_ns = (uint64_t)n * 33333333u;
		if (src->ops->produce(src, &f) < 0) {
			n = 0;
			break;
		}
		bytes += f.bytesused;
		t = now_s();
	} while (t - t0 < seconds);
	g_free(f.data);
	v4l2cuse_source_destroy(src);
	if (!n)
		return -1;
	*ret_bytes = bytes / n;
	return n / (t - t0);
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.5;
	const uint32_t w = 1920, h = 1080;

	if (seconds <= 0)
		seconds = 0.5;
	printf("raw formats, %ux%u, default pattern with overlay, %.2f s per case\n", w, h,
	       seconds);
	printf("%-6s %10s %12s %12s %8s\n", "format", "bytes", "fill fps", "memcpy fps", "ratio");
	for (unsigned int i = 0; v4l2cuse_format_by_index(i); i++) {
		const struct v4l2cuse_format_info *info = v4l2cuse_format_by_index(i);
		struct v4l2_pix_format pix = { .pixelformat = info->fourcc, .width = w, .height = h };
		double fill, copy, bytes;
		char fcc[5];

		if (info->compressed)
			continue;
		v4l2cuse_format_fill(&pix);
		memcpy(fcc, &info->fourcc, 4);
		fcc[4] = 0;
		/* best of 5 alternating rounds: the machine is shared and noisy */
		fill = copy = 0;
		for (unsigned int round = 0; round < 5; round++) {
			fill = MAX(fill, bench_source("pattern", info->fourcc, w, h, seconds / 5,
						      &bytes));
			copy = MAX(copy, memcpy_rate(pix.sizeimage, seconds / 5));
		}
		printf("%-6s %10u %12.1f %12.1f %8.2f\n", fcc, pix.sizeimage, fill, copy,
		       fill / copy);
	}

	printf("\nMJPEG 1280x720 (quality 80)\n");
	printf("%-28s %12s %12s\n", "case", "fps", "avg bytes");
	{
		static const char *const specs[] = {
			"pattern", "pattern:smpte", "pattern,overlay=0",
			"pattern,box=1", "pattern:ramp,hscroll=2",
		};

		for (size_t i = 0; i < G_N_ELEMENTS(specs); i++) {
			double bytes = 0, fps = 0;

			for (unsigned int round = 0; round < 3; round++)
				fps = MAX(fps, bench_source(specs[i], V4L2_PIX_FMT_MJPEG, 1280, 720,
							    seconds / 3, &bytes));

			printf("%-28s %12.1f %12.0f\n", specs[i], fps, bytes);
		}
	}
	return 0;
}
