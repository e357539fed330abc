/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * share-fanout: what each extra consumer of a shared device costs.
 *
 *   share-fanout [FRAMES] [WxH]
 *
 * A shared device (share=true) on the test pattern, YUYV at 120 fps
 * (default 1920x1080), driven through the unit tests' fake transport (no
 * CUSE: the daemon's own work only). For N = 1, 2, 4, 8 consumers, each
 * streaming 4 MMAP buffers and requeueing every frame at once, it runs
 * FRAMES frames (default 240) and prints the process CPU time (user +
 * system, getrusage) per produced frame and the extra cost per consumer
 * beyond the first. The first consumer's frame is rendered straight into
 * its buffer; every other one costs a copy of sizeimage bytes.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <glib.h>

#include "device.h"
#include "fake-req.h"
#include "fake-consumer.h"

static double
cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static double
run(unsigned int n, unsigned int frames, uint32_t w, uint32_t h)
{
	g_autofree char *spec = g_strdup_printf("pattern,sizes=%ux%u,fps=120", w, h);
	struct v4l2cuse_device_config cfg = {
		.name = "video42",
		.source = spec,
		.width = w,
		.height = h,
		.pixelformat = V4L2_PIX_FMT_YUYV,
		.interval = { 1, 120 },
		.shared = true,
	};
	struct fake_consumer c[8];
	struct v4l2cuse_device *dev = fake_device(&cfg);
	unsigned int got = 0;
	double t0 = 0;

	for (unsigned int i = 0; i < n; i++)
		fake_consumer_start(&c[i], dev, 4, 0);
	/* Warm up (page faults of the buffers), then measure. */
	while (got < frames + 20) {
		g_main_context_iteration(NULL, TRUE);
		for (unsigned int i = 0; i < n; i++) {
			struct v4l2_buffer b;

			while (fake_consumer_dqbuf(&c[i], w * h * 2, &b) == 0) {
				fake_consumer_qbuf(&c[i], b.index);
				if (i == 0 && ++got == 20)
					t0 = cpu_seconds();
			}
		}
	}
	t0 = (cpu_seconds() - t0) / frames;
	for (unsigned int i = 0; i < n; i++)
		fake_consumer_close(&c[i]);
	v4l2cuse_device_free(dev);
	return t0;
}

int
main(int argc, char **argv)
{
	unsigned int frames = argc > 1 ? (unsigned int)atoi(argv[1]) : 240;
	uint32_t w = 1920, h = 1080;
	static const unsigned int ns[] = { 1, 2, 4, 8 };
	double base = 0;

	if (argc > 2 && sscanf(argv[2], "%ux%u", &w, &h) != 2)
		return 2;
	g_log_set_handler("v4l2cuse-daemon", G_LOG_LEVEL_MESSAGE, g_log_default_handler, NULL);
	printf("%ux%u YUYV, %u frames per run\n", w, h, frames);
	printf("consumers  cpu ms/frame  extra ms per consumer beyond the first\n");
	for (size_t i = 0; i < G_N_ELEMENTS(ns); i++) {
		double t = run(ns[i], frames, w, h) * 1e3;

		if (i == 0)
			base = t;
		printf("%9u  %12.3f  %s", ns[i], t, i ? "" : "-\n");
		if (i)
			printf("%.3f\n", (t - base) / (ns[i] - 1));
	}
	return 0;
}
