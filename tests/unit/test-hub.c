/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/hub.c: two devices whose source= names the same file (also
 * through a symlink, as a /dev/v4l/by-id link names a camera) share one
 * instance of the source, and stream at the same time at different sizes:
 * one alone (frames straight from the source), both (the input at the
 * larger size, each device converting), and the other alone again. Every
 * frame is checked whole and showing one of the file's frames.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <linux/videodev2.h>

#include "v4l2cuse/source.h"
#include "videobuf.h"
#include "device.h"
#include "hub.h"
#include "fake-req.h"
#include "fake-consumer.h"
#include "test-main.h"

#define FW 320
#define FH 240
#define FRAMES 20

static char *tmpdir;

/* Frame i of the file: Y' = 16 + 8 i everywhere, Cb = Cr = 128. */
static uint8_t
frame_y(unsigned int i)
{
	return (uint8_t)(16 + 8 * i);
}

static char *
write_clip(void)
{
	char *path = g_build_filename(tmpdir, "clip.y4m", NULL);
	FILE *f = fopen(path, "wb");
	g_autofree uint8_t *y = g_malloc(FW * FH), *c = g_malloc(FW * FH / 4);

	g_assert_nonnull(f);
	fprintf(f, "YUV4MPEG2 W%u H%u F30:1 Ip A1:1 C420jpeg\n", FW, FH);
	memset(c, 128, FW * FH / 4);
	for (unsigned int i = 0; i < FRAMES; i++) {
		memset(y, frame_y(i), FW * FH);
		fputs("FRAME\n", f);
		fwrite(y, 1, FW * FH, f);
		fwrite(c, 1, FW * FH / 4, f);
		fwrite(c, 1, FW * FH / 4, f);
	}
	fclose(f);
	return path;
}

static struct v4l2cuse_device *
device(const char *name, const char *spec, uint32_t w, uint32_t h, struct v4l2cuse_hub *hub)
{
	struct v4l2cuse_device_config cfg = fake_yuyv_config(name, spec, w, h, 30);

	cfg.hub = hub;
	return fake_device(&cfg);
}

/* A YUYV frame showing one of the clip's frames: uniform luma, neutral chroma. */
static void
check_frame(const uint8_t *p, uint32_t w, uint32_t h)
{
	uint8_t y = p[0];
	bool known = false;

	for (unsigned int i = 0; i < FRAMES; i++)
		known |= y == frame_y(i);
	g_assert_true(known);
	for (size_t i = 0; i < (size_t)w * h * 2; i += 2) {
		g_assert_cmpuint(p[i], ==, y);
		g_assert_cmpint(ABS((int)p[i + 1] - 128), <=, 1);
	}
}

/* Run the loop until each of @n consumers got @want more frames (checked). */
static void
stream(struct fake_consumer **cs, const uint32_t *w, const uint32_t *h, unsigned int n,
       unsigned int want)
{
	unsigned int got[4] = { 0 };
	gint64 end = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
	bool done = false;

	while (!done && g_get_monotonic_time() < end) {
		g_main_context_iteration(NULL, TRUE);
		done = true;
		for (unsigned int i = 0; i < n; i++) {
			struct v4l2_buffer b;

			while (fake_consumer_dqbuf(cs[i], w[i] * h[i] * 2, &b) == 0) {
				check_frame(cs[i]->mem[b.index], w[i], h[i]);
				got[i]++;
				g_assert_cmpint(fake_consumer_qbuf(cs[i], b.index), ==, 0);
			}
			done &= got[i] >= want;
		}
	}
	for (unsigned int i = 0; i < n; i++)
		g_assert_cmpuint(got[i], >=, want);
}

V4L2CUSE_TEST("/hub/two-devices-one-file", test_two_devices_one_file)
{
	g_autofree char *path = write_clip();
	g_autofree char *link = g_build_filename(tmpdir, "by-id-link.y4m", NULL);
	g_autofree char *spec_a = g_strdup_printf("file:%s,sizes=160x120+320x240", path);
	g_autofree char *spec_b = g_strdup_printf("file:%s,sizes=160x120+320x240", link);
	struct v4l2cuse_hub *hub = v4l2cuse_hub_new();
	struct v4l2cuse_device *a, *b, *c;
	struct v4l2cuse_device_stats sa, sb, sc;
	struct fake_consumer ca, cb;
	struct fake_consumer *both[2] = { &ca, &cb };
	const uint32_t ws[2] = { 160, 320 }, hs[2] = { 120, 240 };

	g_assert_no_errno(symlink(path, link));
	a = device("video40", spec_a, 160, 120, hub);
	b = device("video41", spec_b, 320, 240, hub);
	/* Other options: another input. */
	c = device("video42", "pattern", 320, 240, hub);
	v4l2cuse_device_get_stats(a, &sa);
	v4l2cuse_device_get_stats(b, &sb);
	v4l2cuse_device_get_stats(c, &sc);
	g_assert_nonnull(sa.input);
	g_assert_cmpstr(sa.input, ==, sb.input);
	g_assert_cmpuint(sa.input_users, ==, 2);
	g_assert_null(sc.input);

	/* a alone: frames straight from the file source. */
	fake_consumer_start(&ca, a, 4, 0);
	stream(both, ws, hs, 1, 5);
	/* b joins at a larger size: the input restarts for both. */
	fake_consumer_start(&cb, b, 4, 0);
	stream(both, ws, hs, 2, 8);
	/* a leaves: b alone again. */
	fake_consumer_close(&ca);
	stream(both + 1, ws + 1, hs + 1, 1, 5);
	/* No frame missed, but a stall of this process longer than the producer makes up for. */
	v4l2cuse_device_get_stats(b, &sb);
	g_assert_cmpuint(cb.gaps, <=, sb.stalls);
	fake_consumer_close(&cb);

	v4l2cuse_device_free(c);
	v4l2cuse_device_free(a);
	v4l2cuse_device_get_stats(b, &sb);
	g_assert_cmpuint(sb.input_users, ==, 1);
	v4l2cuse_device_free(b);
	v4l2cuse_hub_free(hub);
	g_unlink(link);
	g_unlink(path);
}

/* A spec whose options differ reads a separate input. */
V4L2CUSE_TEST("/hub/keys", test_keys)
{
	g_autofree char *path = write_clip();
	g_autofree char *k1 = NULL, *k2 = NULL, *k3 = NULL;
	g_autofree char *s1 = g_strdup_printf("file:%s", path);
	g_autofree char *s2 = g_strdup_printf("file:%s,loop=0", path);

	k1 = v4l2cuse_source_input_key(s1);
	k2 = v4l2cuse_source_input_key(s2);
	k3 = v4l2cuse_source_input_key("pattern:smpte");
	g_assert_nonnull(k1);
	g_assert_nonnull(k2);
	g_assert_cmpstr(k1, !=, k2);
	g_assert_null(k3);
	g_assert_null(v4l2cuse_source_input_key("file:/nonexistent/x.y4m"));
	g_unlink(path);
}

int
main(int argc, char **argv)
{
	int r;

	g_test_init(&argc, &argv, NULL);
	tmpdir = g_dir_make_tmp("v4l2cuse-hub-XXXXXX", NULL);
	v4l2cuse_test_add_registered();
	r = g_test_run();
	g_rmdir(tmpdir);
	g_free(tmpdir);
	return r;
}
