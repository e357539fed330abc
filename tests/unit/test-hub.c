/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/hub.c: two devices whose source= names the same file (also
 * through a symlink, as a /dev/v4l/by-id link names a camera) share one
 * instance of the source, and stream at the same time at different sizes:
 * one alone (frames straight from the source), both (the input at the
 * larger size, each device converting), and the other alone again. Every
 * frame is checked whole and showing one of the file's frames. A shared
 * camera's frames converted for another device are read in the
 * colorimetry the camera reports (pixels against colour-ref.h). A device
 * that lags behind the others when the input restarts or changes mode
 * gets no frame staged before that, only the next one.
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
#include "colour-ref.h"
#include "fake-camera.h"
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

/* Every pixel of an RGB24 frame @w x @h is @want within 2. */
static void
check_rgb_frame(const uint8_t *p, uint32_t w, uint32_t h, const double want[3])
{
	for (size_t i = 0; i < (size_t)w * h * 3; i += 3) {
		if (ABS(p[i] - want[0]) > 2 || ABS(p[i + 1] - want[1]) > 2 ||
		    ABS(p[i + 2] - want[2]) > 2)
			g_error("pixel %zu: R'G'B' %u %u %u, want %.1f %.1f %.1f", i / 3, p[i],
				p[i + 1], p[i + 2], want[0], want[1], want[2]);
	}
}

/*
 * Two devices on one camera: the first streams its YUYV at 320x240, which
 * the camera labels Rec. 709 (format.c's label at 240 lines is BT.601);
 * the second asks RGB24 at that size and is fed from the first one's
 * frames (fanout): they decode with the camera's BT.709, as they would
 * from the camera alone.
 */
V4L2CUSE_TEST("/hub/camera-colour", test_camera_colour)
{
	static const struct fake_camera_mode modes[] = {
		{ 320, 240, V4L2_COLORSPACE_REC709, V4L2_YCBCR_ENC_709,
		  V4L2_QUANTIZATION_LIM_RANGE, V4L2_XFER_FUNC_709 },
	};
	static const struct fake_camera cam = { .modes = modes, .n_modes = 1,
						.y = 120, .cb = 90, .cr = 190 };
	const double ycc[3] = { cam.y, cam.cb, cam.cr };
	/*
	 * The hub keys a camera by its node: a file stands for it (the fake
	 * opens any path). Kept open: start() streams at once.
	 */
	g_autofree char *node = g_build_filename(tmpdir, "camera", NULL);
	g_autofree char *spec = g_strdup_printf("uvc:%s,keep_open=1", node);
	struct v4l2cuse_hub *hub = v4l2cuse_hub_new();
	struct v4l2cuse_device_config cfg = fake_yuyv_config("video41", spec, 320, 240, 30);
	struct v4l2cuse_device *a, *b;
	struct v4l2cuse_device_stats sa, sb;
	struct v4l2_format fmt = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct fake_consumer ca, cb;
	double want[3], other[3];
	unsigned int got = 0;
	gint64 end;

	g_assert_true(g_file_set_contents(node, "", 0, NULL));
	fake_camera_install(&cam);
	a = device("video40", spec, 320, 240, hub);
	cfg.hub = hub;
	cfg.pixelformat = V4L2_PIX_FMT_RGB24;
	b = fake_device(&cfg);
	v4l2cuse_device_get_stats(a, &sa);
	v4l2cuse_device_get_stats(b, &sb);
	g_assert_nonnull(sa.input);
	g_assert_cmpstr(sa.input, ==, sb.input);

	ref_ycc_to_rgb(true, ycc, want);
	ref_ycc_to_rgb(false, ycc, other);
	g_assert_cmpfloat(ABS(want[0] - other[0]), >, 6);
	fake_consumer_start(&ca, a, 4, 0);
	fake_consumer_start(&cb, b, 4, 0);
	/* The fake always has a frame: its fd readable for good, so the loop wakes for it. */
	g_assert_cmpint(write(fake_camera_fd(), &(uint64_t){ 1 }, sizeof(uint64_t)), ==,
			sizeof(uint64_t));
	g_assert_cmpint(fake_ioctl(ca.fh, VIDIOC_G_FMT, &fmt), ==, 0);
	g_assert_cmpuint(fmt.fmt.pix.colorspace, ==, V4L2_COLORSPACE_REC709);
	end = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
	while (got < 3 && g_get_monotonic_time() < end) {
		struct v4l2_buffer buf;

		g_main_context_iteration(NULL, TRUE);
		while (fake_consumer_dqbuf(&ca, 320 * 240 * 2, &buf) == 0)
			g_assert_cmpint(fake_consumer_qbuf(&ca, buf.index), ==, 0);
		while (fake_consumer_dqbuf(&cb, 320 * 240 * 3, &buf) == 0) {
			check_rgb_frame(cb.mem[buf.index], 320, 240, want);
			got++;
			g_assert_cmpint(fake_consumer_qbuf(&cb, buf.index), ==, 0);
		}
	}
	g_assert_cmpuint(got, >=, 3);
	fake_consumer_close(&cb);
	fake_consumer_close(&ca);
	v4l2cuse_device_free(b);
	v4l2cuse_device_free(a);
	v4l2cuse_hub_free(hub);
	fake_camera_remove();
	g_unlink(node);
}

/*
 * One camera, three taps driven by hand (no devices): the test says when
 * the camera has a frame and when each tap takes one, so that a tap lags
 * behind the others when the input restarts or changes mode. The camera's
 * frames are flat, of the luma set before each: a frame a tap delivers
 * shows which one it was. All sizes have the same colorimetry, so that
 * scaling keeps the luma.
 */
struct shared_camera {
	struct fake_camera_mode modes[3];
	struct fake_camera cam;
	char *node;
	struct v4l2cuse_hub *hub;
	struct v4l2cuse_source *tap[3];
};

static void
shared_camera_setup(struct shared_camera *f, gconstpointer data)
{
	static const uint32_t sizes[3][2] = { { 160, 120 }, { 320, 240 }, { 640, 480 } };
	g_autofree char *spec = NULL;

	for (unsigned int i = 0; i < 3; i++)
		f->modes[i] = (struct fake_camera_mode){
			sizes[i][0], sizes[i][1], V4L2_COLORSPACE_SMPTE170M, V4L2_YCBCR_ENC_601,
			V4L2_QUANTIZATION_LIM_RANGE, V4L2_XFER_FUNC_709,
		};
	f->cam = (struct fake_camera){ .modes = f->modes, .n_modes = 3, .cb = 128, .cr = 128 };
	f->node = g_build_filename(tmpdir, "camera", NULL);
	/* Kept open: a restart of the input streams at once, as the taps expect. */
	spec = g_strdup_printf("uvc:%s,keep_open=1", f->node);
	g_assert_true(g_file_set_contents(f->node, "", 0, NULL));
	fake_camera_install(&f->cam);
	f->hub = v4l2cuse_hub_new();
	for (unsigned int i = 0; i < 3; i++)
		g_assert_cmpint(v4l2cuse_hub_source_create(f->hub, spec, &f->tap[i], NULL), ==, 0);
}

static void
shared_camera_teardown(struct shared_camera *f, gconstpointer data)
{
	for (unsigned int i = 0; i < 3; i++)
		v4l2cuse_source_destroy(f->tap[i]);
	v4l2cuse_hub_free(f->hub);
	fake_camera_remove();
	g_unlink(f->node);
	g_free(f->node);
}

V4L2CUSE_TEST_FIXTURE(struct shared_camera, shared_camera_setup, shared_camera_teardown);

static void
tap_start(struct v4l2cuse_source *tap, uint32_t w, uint32_t h)
{
	struct v4l2_pix_format pix = { .width = w, .height = h,
				       .pixelformat = V4L2_PIX_FMT_YUYV };
	/* 0 ns: every frame is due, the test and not the clock says when one comes. */
	const struct v4l2_fract iv = { 1, UINT32_MAX };

	g_assert_cmpint(v4l2cuse_source_negotiate(tap, &pix), ==, 0);
	g_assert_cmpuint(pix.width, ==, w);
	g_assert_cmpuint(pix.height, ==, h);
	g_assert_cmpint(tap->ops->start(tap, &pix, &iv), ==, 0);
}

/* The camera has a frame of luma @y; in fanout the hub stages it. */
static void
camera_frame(struct shared_camera *f, uint8_t y)
{
	uint64_t n;

	f->cam.y = y;
	g_assert_cmpint(write(fake_camera_fd(), &(uint64_t){ 1 }, sizeof(n)), ==, sizeof(n));
	g_main_context_iteration(NULL, FALSE);
	g_assert_cmpint(read(fake_camera_fd(), &n, sizeof(n)), ==, sizeof(n));
}

/*
 * One produce() of @tap streaming YUYV @w x @h; a frame must fill exactly
 * that size and show the camera's frame of luma @y.
 */
static int
tap_take(struct v4l2cuse_source *tap, uint32_t w, uint32_t h, uint8_t y)
{
	size_t len = (size_t)w * h * 2;
	g_autofree uint8_t *p = g_malloc(len);
	struct v4l2_pix_format pix = { .width = w, .height = h, .pixelformat = V4L2_PIX_FMT_YUYV,
				       .bytesperline = w * 2, .sizeimage = (uint32_t)len };
	struct v4l2cuse_frame frame = { .data = p, .length = len, .fmt = &pix };
	int r;

	memset(p, 0xee, len);
	r = tap->ops->produce(tap, &frame);
	if (r < 0)
		return r;
	g_assert_cmpuint(frame.bytesused, ==, len);
	g_assert_false(frame.error);
	for (size_t i = 0; i < len; i += 2) {
		if (p[i] != y || ABS((int)p[i + 1] - 128) > 1)
			g_error("byte %zu of %ux%u: Y' %u C %u, want Y' %u C 128", i, w, h, p[i],
				p[i + 1], y);
	}
	return 0;
}

/*
 * A tap that had not taken the newest staged frame when a larger device
 * restarts the input (staging reallocated): it waits for the first frame
 * at the new size, and does not convert what staging held as it.
 */
V4L2CUSE_TEST_F("/hub/restart-larger", test_restart_larger)
{
	uint32_t w, h;

	tap_start(f->tap[0], 320, 240);
	tap_start(f->tap[1], 160, 120);		/* fanout at 320x240 */
	camera_frame(f, 60);
	g_assert_cmpint(tap_take(f->tap[0], 320, 240, 60), ==, 0);
	/* tap 1 lags; tap 2 joins larger: the input restarts at 640x480. */
	tap_start(f->tap[2], 640, 480);
	fake_camera_current(&w, &h);
	g_assert_cmpuint(w, ==, 640);
	g_assert_cmpuint(h, ==, 480);
	g_assert_cmpint(tap_take(f->tap[1], 160, 120, 60), ==, -EAGAIN);
	g_assert_cmpint(tap_take(f->tap[0], 320, 240, 60), ==, -EAGAIN);
	g_assert_cmpint(tap_take(f->tap[2], 640, 480, 60), ==, -EAGAIN);
	camera_frame(f, 100);
	g_assert_cmpint(tap_take(f->tap[1], 160, 120, 100), ==, 0);
	g_assert_cmpint(tap_take(f->tap[0], 320, 240, 100), ==, 0);
	g_assert_cmpint(tap_take(f->tap[2], 640, 480, 100), ==, 0);
	g_assert_cmpint(tap_take(f->tap[1], 160, 120, 100), ==, -EAGAIN);
}

/*
 * The largest device stops and the input restarts smaller (staging kept):
 * the taps that had not taken its last frame do not take it at the new
 * size, neither one at that size (a copy of the old, larger frame) nor
 * one converting (the old rows read as the new ones).
 */
V4L2CUSE_TEST_F("/hub/restart-smaller", test_restart_smaller)
{
	uint32_t w, h;

	tap_start(f->tap[0], 320, 240);
	tap_start(f->tap[1], 160, 120);
	tap_start(f->tap[2], 640, 480);		/* fanout at 640x480 */
	camera_frame(f, 60);
	g_assert_cmpint(tap_take(f->tap[2], 640, 480, 60), ==, 0);
	/* Taps 0 and 1 lag; tap 2 stops: the input restarts at 320x240. */
	f->tap[2]->ops->stop(f->tap[2]);
	fake_camera_current(&w, &h);
	g_assert_cmpuint(w, ==, 320);
	g_assert_cmpuint(h, ==, 240);
	g_assert_cmpint(tap_take(f->tap[0], 320, 240, 60), ==, -EAGAIN);
	g_assert_cmpint(tap_take(f->tap[1], 160, 120, 60), ==, -EAGAIN);
	camera_frame(f, 100);
	g_assert_cmpint(tap_take(f->tap[0], 320, 240, 100), ==, 0);
	g_assert_cmpint(tap_take(f->tap[1], 160, 120, 100), ==, 0);
}

/*
 * Fanout, direct, fanout again at the same format (no restart): the frame
 * staged before the direct spell is older than those the remaining device
 * took straight from the camera meanwhile, and is not delivered after them.
 */
V4L2CUSE_TEST_F("/hub/direct-then-fanout", test_direct_then_fanout)
{
	tap_start(f->tap[0], 320, 240);
	tap_start(f->tap[1], 320, 240);		/* fanout at 320x240 */
	camera_frame(f, 60);
	g_assert_cmpint(tap_take(f->tap[1], 320, 240, 60), ==, 0);
	/* Tap 0 lags; tap 1 stops: tap 0 alone, straight from the camera. */
	f->tap[1]->ops->stop(f->tap[1]);
	f->cam.y = 80;
	g_assert_cmpint(tap_take(f->tap[0], 320, 240, 80), ==, 0);
	tap_start(f->tap[1], 320, 240);		/* fanout again */
	g_assert_cmpint(tap_take(f->tap[0], 320, 240, 60), ==, -EAGAIN);
	camera_frame(f, 100);
	g_assert_cmpint(tap_take(f->tap[0], 320, 240, 100), ==, 0);
	g_assert_cmpint(tap_take(f->tap[1], 320, 240, 100), ==, 0);
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
