/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memfd-copy: what v4l2cuse-pipewire's one copy per frame costs: memcpy
 * from a read-only mapping of one memfd (the daemon's buffer) into a
 * shared mapping of another (PipeWire's), at the YUYV frame sizes of
 * 320x240 to 1920x1080.
 *
 *   memfd-copy [COPIES]     (default 2000 per size)
 *
 * Prints the mean time per copy of the best of three rounds per size.
 * See docs/pipewire.md, "Why one copy and not zero".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static void *
map_memfd(size_t size, int prot)
{
	int fd = memfd_create("memfd-copy", MFD_CLOEXEC);
	void *p;

	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		perror("memfd");
		exit(1);
	}
	p = mmap(NULL, size, prot, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	close(fd);
	return p;
}

int
main(int argc, char **argv)
{
	static const unsigned int sizes[][2] = {
		{ 320, 240 }, { 640, 480 }, { 1280, 720 }, { 1920, 1080 },
	};
	long copies = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;

	if (copies <= 0) {
		fprintf(stderr, "usage: memfd-copy [COPIES]\n");
		return 2;
	}
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t size = (size_t)sizes[s][0] * sizes[s][1] * 2;
		uint8_t *src = map_memfd(size, PROT_READ | PROT_WRITE);
		uint8_t *dst = map_memfd(size, PROT_READ | PROT_WRITE);
		double best = 1e9;

		memset(src, 0x80, size);	/* pages present, as a filled buffer */
		memset(dst, 0, size);
		mprotect(src, size, PROT_READ);	/* the bridge maps it read-only */
		for (int round = 0; round < 3; round++) {
			double t0 = now_s(), t;

			for (long i = 0; i < copies; i++) {
				memcpy(dst, src, size);
				__asm__ volatile("" : : "r"(dst) : "memory");
			}
			t = (now_s() - t0) / (double)copies;
			if (t < best)
				best = t;
		}
		printf("%4ux%-4u YUYV %8zu bytes: %7.1f us per copy (%.1f GB/s)\n", sizes[s][0],
		       sizes[s][1], size, best * 1e6, (double)size / best / 1e9);
		munmap(src, size);
		munmap(dst, size);
	}
	return 0;
}
