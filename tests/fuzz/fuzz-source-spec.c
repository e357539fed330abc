/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for --source spec strings (sources/registry.c,
 * options.c and the create() of every source: pattern, file, uvc, and
 * with -Dgstreamer gst and uri, whose create() only parses): the
 * input up to its first NUL is the spec, as in "--source SPEC" or source=
 * in the config file. A created source is enumerated, negotiated and, at
 * small sizes, produces a frame (fuzz-source.h).
 *
 * No real device or arbitrary file is opened: the harness works in a fresh
 * directory under $TMPDIR holding a few small files (a.y4m, b.mjpeg,
 * c.jpg, d.raw), the current one during each input, and skips specs
 * containing '/', so every path a spec names (file:PATH, uvc:PATH) is a
 * name in that directory.
 *
 * Checked besides ASan/UBSan/LSan: a failure is -errno with one line that
 * names the source or says "unknown source"; what fuzz-source.h checks.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "fuzz-source.h"

#define SPEC_MAX	4096

static char *fuzz_dir;
static int home_fd = -1;	/* the directory we were started in */

static const char y4m[] = "YUV4MPEG2 W4 H2 F30:1 Ip A1:1 C420jpeg\nFRAME\nABCDEFGHijkl"
			  "FRAME\nabcdefghIJKL";
/* A 2x2 baseline JPEG, twice: an MJPEG stream. */
static const char jpeg[] = "\xff\xd8\xff\xc0\x00\x0b\x08\x00\x02\x00\x02\x01\x01\x11\x00\xff"
			   "\xda\x00\x08\x01\x01\x00\x00\x3f\x00\x12\xff\x00\x34\xff\xd0\x56"
			   "\xff\xd9";

static void
fuzz_cleanup(void)
{
	static const char *const names[] = { "a.y4m", "b.mjpeg", "c.jpg", "d.raw" };

	for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
		g_autofree char *p = g_build_filename(fuzz_dir, names[i], NULL);

		g_unlink(p);
	}
	g_rmdir(fuzz_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char mjpeg[2 * (sizeof(jpeg) - 1)];
	uint8_t raw[16 * 8 * 2];

	fuzz_quiet_glib(0);
	fuzz_dir = g_dir_make_tmp("fuzz-source-spec-XXXXXX", NULL);
	home_fd = open(".", O_PATH | O_CLOEXEC);
	if (!fuzz_dir || home_fd < 0 || chdir(fuzz_dir) < 0)
		abort();
	memcpy(mjpeg, jpeg, sizeof(jpeg) - 1);
	memcpy(mjpeg + sizeof(jpeg) - 1, jpeg, sizeof(jpeg) - 1);
	for (size_t i = 0; i < sizeof(raw); i++)
		raw[i] = (uint8_t)(i * 7);
	if (!g_file_set_contents("a.y4m", y4m, sizeof(y4m) - 1, NULL) ||
	    !g_file_set_contents("b.mjpeg", mjpeg, sizeof(mjpeg), NULL) ||
	    !g_file_set_contents("c.jpg", jpeg, sizeof(jpeg) - 1, NULL) ||
	    !g_file_set_contents("d.raw", (const char *)raw, sizeof(raw), NULL))
		abort();
	atexit(fuzz_cleanup);
	/* Back: libFuzzer opens the corpus paths it was given after this. */
	if (fchdir(home_fd) < 0)
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	g_autofree char *spec = g_strndup((const char *)data, MIN(size, SPEC_MAX));
	struct v4l2cuse_source *src = NULL;
	g_autofree char *error = NULL;
	size_t name_len = strcspn(spec, ":,");
	uint32_t want[3];
	int r;

	if (strchr(spec, '/'))
		return -1;		/* not added to the corpus */
	if (chdir(fuzz_dir) < 0)
		abort();
	r = v4l2cuse_source_create(spec, &src, &error);
	fuzz_check_result(r, error);
	if (r < 0) {
		fuzz_check(!src, "a failed create() left a source");
		fuzz_check(g_str_has_prefix(error, "unknown source '") ||
			   (name_len && strncmp(error, spec, name_len) == 0 &&
			    error[name_len] == ':'),
			   "message without the source's name: %s (spec %s)", error, spec);
	} else {
		fuzz_check(src && src->ops, "create() succeeded without a source");
		/* Ask for the format the input's last 12 bytes say. */
		memset(want, 0, sizeof(want));
		memcpy(want, data + size - MIN(size, sizeof(want)), MIN(size, sizeof(want)));
		fuzz_exercise_source(src, want[0], want[1] % 1024, want[2] % 1024);
		v4l2cuse_source_destroy(src);
	}
	if (fchdir(home_fd) < 0)
		abort();
	return 0;
}
