/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * v4l2cuse-usb: serve one v4l2cuse node as a USB camera (usb/usb.h,
 * docs/usb.md). The daemon starts one per device with usb=true (attach
 * mode) and one per remote import (--fd); it can be run by hand too.
 *
 * Exit status: 0 when the host unplugged the camera or a signal asked us
 * to stop, 1 on failure (one line says why), 2 for bad options.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <glib-unix.h>

#include "util/cleanup.h"
#include "v4l2cuse/ctl-protocol.h"
#include "usb.h"

struct usb_main {
	GMainLoop *loop;
	int status;
	bool attached;
	unsigned int port;
};

/* The node's integer-valued controls: QUERYCTRL from the first on. */
static GArray *
probe_ctrls(int fd)
{
	GArray *ctrls = g_array_new(FALSE, FALSE, sizeof(struct uvc_ctrl_range));
	struct v4l2_queryctrl q = { .id = V4L2_CTRL_FLAG_NEXT_CTRL };

	while (client_xioctl(fd, VIDIOC_QUERYCTRL, &q) == 0) {
		if (!(q.flags & (V4L2_CTRL_FLAG_DISABLED | V4L2_CTRL_FLAG_READ_ONLY)) &&
		    (q.type == V4L2_CTRL_TYPE_INTEGER || q.type == V4L2_CTRL_TYPE_BOOLEAN ||
		     q.type == V4L2_CTRL_TYPE_MENU)) {
			struct uvc_ctrl_range r = {
				.id = q.id, .min = q.minimum, .max = q.maximum,
				.step = q.step, .def = q.default_value,
			};

			g_array_append_val(ctrls, r);
		}
		q.id |= V4L2_CTRL_FLAG_NEXT_CTRL;
	}
	return ctrls;
}

static void
on_done(void *data, const char *error)
{
	struct usb_main *m = data;

	if (error) {
		g_printerr("v4l2cuse-usb: %s\n", error);
		m->status = 1;
	} else {
		g_message("the USB host unplugged the camera");
		m->attached = false;	/* nothing left to detach */
	}
	g_main_loop_quit(m->loop);
}

static gboolean
on_signal(gpointer data)
{
	struct usb_main *m = data;

	g_main_loop_quit(m->loop);
	return G_SOURCE_CONTINUE;
}

int
main(int argc, char **argv)
{
	g_autofree char *node = NULL, *product = NULL, *serial = NULL;
	g_autofree char *error = NULL;
	gboolean verbose = FALSE;
	int sock_fd = -1, parent = -1;
	GOptionEntry entries[] = {
		{ "node", 0, 0, G_OPTION_ARG_FILENAME, &node, "The v4l2cuse node", "PATH" },
		{ "product", 0, 0, G_OPTION_ARG_STRING, &product,
		  "Product string (default: the node's card name)", "TEXT" },
		{ "serial", 0, 0, G_OPTION_ARG_STRING, &serial,
		  "Serial number string (default: the node's device id)", "TEXT" },
		{ "fd", 0, 0, G_OPTION_ARG_INT, &sock_fd,
		  "Serve the URB protocol on this connected socket (a remote import) "
		  "instead of attaching to vhci-hcd", "FD" },
		{ "parent-pid", 0, 0, G_OPTION_ARG_INT, &parent,
		  "Stop when this process (the daemon) is gone", "PID" },
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "Debug messages", NULL },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = g_option_context_new("- a v4l2cuse node as a USB camera");
	g_autoptr(GArray) modes = g_array_new(FALSE, TRUE, sizeof(struct client_mode));
	g_autoptr(GArray) ctrls = NULL;
	struct usb_main m = { .status = 0 };
	struct usb_face *face;
	struct v4l2cuse_info info = { 0 };
	struct v4l2_capability cap = { 0 };
	_cleanup_close_ int ctrl_fd = -1;
	int r;

	setlocale(LC_ALL, "");
	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!g_option_context_parse(ctx, &argc, &argv, NULL) || !node || argc > 1) {
		g_printerr("usage: v4l2cuse-usb --node PATH [--fd FD] [--product TEXT] "
			   "[--serial TEXT]\n");
		return 2;
	}
	if (verbose)
		g_setenv("G_MESSAGES_DEBUG", "all", TRUE);
	/* The daemon's child: go with it (a crash included), so the kernel unplugs us. */
	if (parent > 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			return 0;
	}

	ctrl_fd = open(node, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (ctrl_fd < 0 && errno == EPERM) {
		/* A device cgroup: CUSE nodes have dynamic majors (docs/service.md). */
		g_printerr("v4l2cuse-usb: %s: %s: a device policy forbids opening the node "
			   "(the service's DevicePolicy=closed: see docs/usb.md, \"As a service\")\n",
			   node, g_strerror(errno));
		return 1;
	}
	if (ctrl_fd < 0) {
		g_printerr("v4l2cuse-usb: %s: %s\n", node, g_strerror(errno));
		return 1;
	}
	if (client_xioctl(ctrl_fd, VIDIOC_V4L2CUSE_INFO, &info) < 0 ||
	    info.magic != V4L2CUSE_INFO_MAGIC || client_xioctl(ctrl_fd, VIDIOC_QUERYCAP, &cap) < 0) {
		g_printerr("v4l2cuse-usb: %s: not a v4l2cuse node\n", node);
		return 1;
	}
	info.id[sizeof(info.id) - 1] = '\0';
	if (!product)
		product = g_strndup((const char *)cap.card, sizeof(cap.card));
	if (!serial)
		serial = g_strdup(info.id);
	r = client_probe_modes(ctrl_fd, uvc_fourcc_supported, modes);
	if (r < 0 || modes->len == 0) {
		g_printerr("v4l2cuse-usb: %s: no format a USB camera can carry "
			   "(YUYV, UYVY, NV12, YU12, GREY or MJPEG)\n", node);
		return 1;
	}
	ctrls = probe_ctrls(ctrl_fd);

	if (sock_fd < 0) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
			g_printerr("v4l2cuse-usb: socketpair: %s\n", g_strerror(errno));
			return 1;
		}
		/* vhci takes its own reference to its end. */
		r = usb_vhci_attach(sv[1], (1u << 16) | 2u, &m.port, &error);
		close(sv[1]);
		if (r < 0) {
			close(sv[0]);
			g_printerr("v4l2cuse-usb: %s: %s\n", node, error);
			return 1;
		}
		m.attached = true;
		sock_fd = sv[0];
		g_message("%s: attached to vhci-hcd port %u as \"%s\" (serial %s)", node, m.port,
			  product, serial);
	}
	m.loop = g_main_loop_new(NULL, FALSE);
	face = usb_face_new(sock_fd, node, ctrl_fd, (const struct uvc_ctrl_range *)ctrls->data,
			    ctrls->len, (const struct client_mode *)modes->data, modes->len, product,
			    serial, on_done, &m);
	if (!face) {
		g_printerr("v4l2cuse-usb: %s: no mode to offer\n", node);
		if (m.attached)
			usb_vhci_detach(m.port);
		return 1;
	}
	g_unix_signal_add(SIGTERM, on_signal, &m);
	g_unix_signal_add(SIGINT, on_signal, &m);
	g_main_loop_run(m.loop);
	/* Unplug first, so that uvcvideo stops before our end closes. */
	if (m.attached) {
		r = usb_vhci_detach(m.port);
		if (r < 0)
			g_debug("detach of port %u: %s", m.port, g_strerror(-r));
		else
			g_message("%s: detached from vhci-hcd port %u", node, m.port);
	}
	usb_face_free(face);
	g_main_loop_unref(m.loop);
	return m.status;
}
