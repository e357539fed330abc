/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * v4l2cuse-usb: one v4l2cuse node as a USB Video Class camera, plugged into
 * the kernel's USB/IP host controller (vhci-hcd) over a socketpair, or
 * served to a remote `usbip attach` over TCP (docs/usb.md). The kernel's
 * uvcvideo driver then makes a real /dev/videoN of it.
 *
 * usbip.c  the USB/IP wire formats (pure)
 * uvc.c    the UVC function: descriptors, control transfers, payloads (pure)
 * face.c   one connection: URBs in, the node's frames and controls out
 * vhci.c   vhci-hcd's sysfs: free ports, attach, detach
 * main.c   the program: options, the node's probe, the main loop
 *
 * One process per device and connection, one thread, GLib's main loop. It
 * reaches the device only as any V4L2 app does (client/).
 */

#include <stdbool.h>
#include <stdint.h>

#include "uvc.h"

/* --- vhci.c --- */
/* Is vhci-hcd loaded? */
bool usb_vhci_present(void);
/*
 * Plug the device whose URBs go over @sock (connected, SOCK_STREAM) into a
 * free high-speed port: 0 and the port, or -errno with one line in
 * *ret_error (-ENODEV: no vhci-hcd).
 */
int usb_vhci_attach(int sock, uint32_t devid, unsigned int *ret_port, char **ret_error);
/* Unplug @port: 0 or -errno. */
int usb_vhci_detach(unsigned int port);
/*
 * What attaching and detaching write, for a sandbox made now: vhci-hcd's
 * sysfs directory, or, while the module is not loaded, the platform bus
 * directory it will appear in.
 */
const char *usb_vhci_sysfs_writable(void);

/* --- face.c --- */
struct usb_face;

/*
 * Serve the URB protocol on @sock (taken) for the node at @node_path, with
 * @ctrl_fd (borrowed) an open handle of it for controls. @done is called
 * once, on the main loop, when the connection ends (the host unplugged the
 * device, or it failed: @error says why, NULL for a clean end).
 */
struct usb_face *usb_face_new(int sock, const char *node_path, int ctrl_fd,
			      const struct uvc_ctrl_range *ctrls, unsigned int n_ctrls,
			      const struct client_mode *modes, unsigned int n_modes,
			      const char *product, const char *serial,
			      void (*done)(void *data, const char *error), void *data);
void usb_face_free(struct usb_face *face);
