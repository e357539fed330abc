/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The USB face of a device with usb=true (docs/usb.md): a v4l2cuse-usb
 * process (usb/) that streams from the device's node like any app and
 * plugs it into vhci-hcd as a USB camera. Started when the device serves,
 * stopped (SIGTERM: it unplugs the camera) when the device goes; a face
 * that ends on its own is started again with back-off. Where vhci-hcd is
 * not loaded, one line says so and the face starts once it is. The
 * process ends with the daemon, a crash included (it asks the kernel for
 * a signal when we die), so the kernel unplugs the camera then too.
 *
 * Listed once: while the face runs, the CUSE node is root's alone (0600),
 * so the apps of users, which find the uvcvideo node, cannot list it a
 * second time (browsers scan /dev/video*; v4l2cuse-pipewire publishes
 * what it can open). While there is no face (no vhci-hcd, a restart's
 * back-off) it has its usual mode and serves as before. A mode= of the
 * configuration is kept as it is. The info ioctl's V4L2CUSE_INFO_USB_FACE
 * tells programs running as root (v4l2cuse-pipewire) the same. Loop thread
 * only.
 */

#include <stdbool.h>
#include <sys/types.h>

struct v4l2cuse_usbface;
struct v4l2cuse_device;

/*
 * The face of device @id, whose node is /dev/@node with @mode; @hide: make
 * the node 0600 while the face runs.
 */
struct v4l2cuse_usbface *v4l2cuse_usbface_new(struct v4l2cuse_device *dev, const char *id,
					      const char *node, mode_t mode, bool hide);
/* Stop it (the camera is unplugged). NULL-safe. */
void v4l2cuse_usbface_free(struct v4l2cuse_usbface *f);
/*
 * What `v4l2cuse-ctl list` says of it: "attached" (its process runs), "no
 * vhci-hcd", "restarting", "cannot start".
 */
const char *v4l2cuse_usbface_state(const struct v4l2cuse_usbface *f);

/* The program, found next to the daemon in a build tree, else installed. */
const char *v4l2cuse_usbface_program(void);
