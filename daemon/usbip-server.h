/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The USB/IP network server (docs/usb.md, "Other machines"): [daemon]
 * usbip-listen= on TCP, the stock `usbip list -r` and `usbip attach -r -b`
 * of another machine. Every serving device is exported under its id as the
 * bus id. A connection from an address outside usbip-allow= (loopback
 * only by default; USB/IP has no authentication) is closed at once, with
 * one line in the log. An import hands the connection to a v4l2cuse-usb of
 * its own (as a usb=true device's local face, daemon/usbface.h), which
 * ends when the importer detaches, the device goes, or the daemon stops.
 * Loop thread only.
 */

#include <glib.h>

struct v4l2cuse_manager;
struct v4l2cuse_usbip_server;

/*
 * Listen on @listen ("ADDR:PORT") for clients in @allow (NULL: loopback
 * addresses only). NULL with one line in *ret_error.
 */
struct v4l2cuse_usbip_server *v4l2cuse_usbip_server_new(const char *listen,
							const char *const *allow,
							struct v4l2cuse_manager *m,
							char **ret_error);
/* Stop listening and end every import. NULL-safe. */
void v4l2cuse_usbip_server_free(struct v4l2cuse_usbip_server *s);
/* The devices changed: end the imports of devices no longer serving. */
void v4l2cuse_usbip_server_check(struct v4l2cuse_usbip_server *s);
