/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * file-read: how fast the "file" source reads and converts a Y4M file, per
 * target format, through the source ABI (produce() as the daemon calls it,
 * one new file frame per call).
 *
 *   file-read [SECONDS_PER_CASE] [DIR]     (default 1.0, $TMPDIR or /tmp)
 *
 * Writes a 4:2:0 Y4M of 24 frames at 1920x1080 (a gradient that moves, so
 * no two frames are alike) into DIR, reads it once to warm the page cache,
 * then times: YU12 at the native size (read + copy), each other format at
 * the native size (read + convert), and some scaled to 1280x720. Each
 * figure is the best of three rounds of SECONDS_PER_CASE / 3, in frames
 * per second; memcpy of a frame and a bare fread of the file's frames are
 * the references. The source cases also give frames per second of this
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID: produce() reads and converts
 * in the caller's thread), i.e. per core, which load on the host's other
 * cores does not lower. The file is removed at the end. See docs/performance.md
 * ("File source").
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "v4l2cuse/source.h"
#include "bench.h"

#define BW	1920
#define BH	1080
#define FRAMES	24

static int
write_y4m(const char *path)
{
	size_t ysize = (size_t)BW * BH, csize = ysize / 4;
	uint8_t *frame = g_malloc(ysize + 2 * csize);
	FILE *f = fopen(path, "wb");

	if (!f) {
		perror(path);
		g_free(frame);
		return -1;
	}
	fprintf(f, "YUV4MPEG2 W%u H%u F30:1 Ip A1:1 C420jpeg\n", BW, BH);
	for (unsigned int i = 0; i < FRAMES; i++) {
		for (size_t y = 0; y < BH; y++)
			for (size_t x = 0; x < BW; x++)
				frame[y * BW + x] = (uint8_t)(16 + (x + y + 8 * i) % 220);
		for (size_t c = 0; c < csize; c++) {
			frame[ysize + c] = (uint8_t)(64 + (c / 7 + i) % 128);
			frame[ysize + csize + c] = (uint8_t)(200 - (c / 11 + i) % 128);
		}
		fputs("FRAME\n", f);
		fwrite(frame, 1, ysize + 2 * csize, f);
	}
	fclose(f);
	g_free(frame);
	return 0;
}

/* Frames/s of plain fread() of the frames (FRAME lines included). */
static double
bench_fread(const char *path, double seconds)
{
	size_t size = (size_t)BW * BH * 3 / 2 + 6;
	uint8_t *buf = g_malloc(size);
	FILE *f = fopen(path, "rb");
	char line[128];
	unsigned long n = 0;
	double t0, t = 0;

	if (!f || !fgets(line, sizeof(line), f))
		return -1;
	t0 = now_s();
	do {
		if (fread(buf, 1, size, f) != size) {
			fseek(f, 0, SEEK_SET);
			if (!fgets(line, sizeof(line), f))
				break;
			continue;
		}
		n++;
	} while ((t = now_s()) - t0 < seconds);
	fclose(f);
	g_free(buf);
	return n / (t - t0);
}

/* Frames/s of produce() (wall clock; *ret_cpu: per CPU-second); *ret_bytes: average bytesused. */
static double
bench_file(const char *spec, uint32_t fourcc, uint32_t w, uint32_t h, double seconds,
	   double *ret_bytes, double *ret_cpu)
{
	struct v4l2_pix_format pix = { .pixelformat = fourcc, .width = w, .height = h };
	struct v4l2_fract iv = { 1, 30 };
	struct v4l2cuse_source *src = NULL;
	struct v4l2cuse_frame fr = { 0 };
	char *error = NULL;
	unsigned long n = 0;
	double t0, t = 0, c0, bytes = 0;

	if (v4l2cuse_source_create(spec, &src, &error) < 0) {
		fprintf(stderr, "%s\n", error);
		g_free(error);
		return -1;
	}
	if (v4l2cuse_source_negotiate(src, &pix) < 0 || pix.pixelformat != fourcc ||
	    pix.width != w || src->ops->start(src, &pix, &iv) < 0) {
		v4l2cuse_source_destroy(src);
		return -1;
	}
	fr.length = pix.sizeimage;
	fr.data = g_malloc0(fr.length);
	fr.fmt = &pix;
	t0 = now_s();
	c0 = thread_cpu_s();
	do {
		if (src->ops->produce(src, &fr) < 0)
			break;
		bytes += fr.bytesused;
		n++;
	} while ((t = now_s()) - t0 < seconds);
	*ret_cpu = n / (thread_cpu_s() - c0);
	src->ops->stop(src);
	v4l2cuse_source_destroy(src);
	g_free(fr.data);
	*ret_bytes = n ? bytes / n : 0;
	return n / (t - t0);
}

/* The best of three rounds (the host is shared: take the least disturbed), wall and CPU. */
static double
best_of(const char *spec, uint32_t fourcc, uint32_t w, uint32_t h, double seconds,
	double *ret_bytes, double *ret_cpu)
{
	double best = -1, cpu;

	*ret_cpu = -1;
	for (unsigned int i = 0; i < 3; i++) {
		best = MAX(best, bench_file(spec, fourcc, w, h, seconds / 3, ret_bytes, &cpu));
		*ret_cpu = MAX(*ret_cpu, cpu);
	}
	return best;
}

int
main(int argc, char **argv)
{
	static const uint32_t native[] = {
		V4L2_PIX_FMT_YUV420, V4L2_PIX_FMT_YVU420, V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_NV21,
		V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_UYVY, V4L2_PIX_FMT_GREY, V4L2_PIX_FMT_RGB24,
		V4L2_PIX_FMT_BGR24, V4L2_PIX_FMT_XBGR32, V4L2_PIX_FMT_RGB565, V4L2_PIX_FMT_MJPEG,
	};
	static const uint32_t scaled[] = {
		V4L2_PIX_FMT_YUV420, V4L2_PIX_FMT_YUYV, V4L2_PIX_FMT_NV12, V4L2_PIX_FMT_RGB24,
		V4L2_PIX_FMT_MJPEG,
	};
	double seconds = argc > 1 ? g_ascii_strtod(argv[1], NULL) : 1.0;
	const char *dir = argc > 2 ? argv[2] : g_get_tmp_dir();
	g_autofree char *path = g_build_filename(dir, "v4l2cuse-bench.y4m", NULL);
	g_autofree char *spec = g_strdup_printf("file:%s", path);
	double bytes, cpu;

	if (seconds <= 0)
		seconds = 1.0;
	if (write_y4m(path) < 0)
		return 1;
	bench_fread(path, 0.2);		/* warm the page cache */
	printf("# Y4M 4:2:0 %ux%u, %u frames, %.1f s per case\n", BW, BH, FRAMES, seconds);
	printf("| case | fps | ms/frame | fps per CPU-second |\n|---|---|---|---|\n");
	{
		double fps = MAX(memcpy_rate((size_t)BW * BH * 3 / 2, seconds / 3),
				 memcpy_rate((size_t)BW * BH * 3 / 2, seconds / 3));

		printf("| memcpy of a YU12 frame (3110400 bytes) | %.0f | %.2f | |\n", fps, 1000 / fps);
		fps = MAX(bench_fread(path, seconds / 3), bench_fread(path, seconds / 3));
		printf("| fread of the Y4M frames | %.0f | %.2f | |\n", fps, 1000 / fps);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(native); i++) {
		double fps = best_of(spec, native[i], BW, BH, seconds, &bytes, &cpu);

		printf("| %.4s %ux%u%s | %.0f | %.2f | %.0f |\n", (const char *)&native[i], BW, BH,
		       native[i] == V4L2_PIX_FMT_YUV420 ? " (copy)" : "", fps, 1000 / fps, cpu);
		if (native[i] == V4L2_PIX_FMT_MJPEG)
			printf("|   (MJPG average %.0f bytes/frame) | | | |\n", bytes);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(scaled); i++) {
		double fps = best_of(spec, scaled[i], 1280, 720, seconds, &bytes, &cpu);

		printf("| %.4s 1280x720 (scaled) | %.0f | %.2f | %.0f |\n", (const char *)&scaled[i],
		       fps, 1000 / fps, cpu);
	}
	unlink(path);
	return 0;
}
