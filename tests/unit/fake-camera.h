/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A fake camera for the uvc source's unit tests (sources/uvc-private.h's
 * struct uvc_backend): a single-planar YUYV camera with discrete sizes,
 * each with the colorimetry it is set up with, that answers what the
 * source asks of a real one (QUERYCAP, ENUM_FMT, ENUM_FRAMESIZES,
 * ENUM_FRAMEINTERVALS, G/S/TRY_FMT, G/S_PARM) and streams (REQBUFS,
 * QUERYBUF, mmap of its own memory, QBUF, DQBUF, STREAMON/OFF) frames of
 * one flat Y'CbCr colour. Whatever else is asked (controls, events) goes
 * to the test's own ioctl function.
 *
 * One camera at a time; the "fd" is an eventfd, which a test may write to
 * make it readable (control events). The camera counts its opens and
 * closes, and can be unplugged (open fails, an open fd answers ENODEV),
 * made busy and made slow to open.
 */

#include <stdbool.h>
#include <stdint.h>

/* One size the camera has, and what G/S/TRY_FMT answer at it. */
struct fake_camera_mode {
	uint32_t width, height;
	uint32_t colorspace, ycbcr_enc, quantization, xfer_func;
};

struct fake_camera {
	const struct fake_camera_mode *modes;	/* the first is the current one */
	unsigned int n_modes;
	/* Every pixel of every frame: Y', Cb, Cr. */
	uint8_t y, cb, cr;
	/* The ioctls the fake does not answer itself, NULL: -ENOTTY. */
	int (*ioctl)(int fd, unsigned long req, void *arg);
};

/* The uvc source reaches @cam from now on (it must outlive its sources). */
void fake_camera_install(const struct fake_camera *cam);
/* libv4l2 again; the camera must be closed (its sources destroyed). */
void fake_camera_remove(void);
/* The open camera's fd, -1 if none. */
int fake_camera_fd(void);
/* Opens and closes since install. */
unsigned int fake_camera_opens(void);
unsigned int fake_camera_closes(void);
/* Unplugged: open() fails with ENOENT, every ioctl on an open fd with ENODEV. */
void fake_camera_unplug(bool gone);
/* Busy (another application streams): S_FMT fails with EBUSY. */
void fake_camera_busy(bool busy);
/* Held: open() waits until released (at most 5 s), from any thread. */
void fake_camera_hold_open(bool hold);
/* Held: S_FMT (the first step of a stream's set-up) waits, likewise. */
void fake_camera_hold_setup(bool hold);
/* Wait (at most 5 s) until a call waits at one of the holds: whether one does. */
bool fake_camera_wait_parked(void);
/* The size the camera was last set to (S_FMT). */
void fake_camera_current(uint32_t *ret_width, uint32_t *ret_height);
