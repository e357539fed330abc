/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Plugging into vhci-hcd, the kernel's USB/IP host controller: its sysfs
 * files (drivers/usb/usbip/vhci_sysfs.c) under
 * /sys/devices/platform/vhci_hcd.0. `status` (and status.1, ... for more
 * controllers) has a row per port, "hs PORT STA SPD DEV SOCKFD BUSID"
 * (ss rows for the super-speed hub); STA 004 is a free port. Writing
 * "PORT SOCKFD DEVID SPEED" to `attach` plugs a device whose URBs then go
 * over SOCKFD (any connected SOCK_STREAM socket: vhci takes its own
 * reference), writing PORT to `detach` unplugs it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>

#include "usb.h"

#define VHCI_DIR "/sys/devices/platform/vhci_hcd.0"
#define VHCI_STATUS_FREE 4	/* VDEV_ST_NULL */
#define SPEED_HIGH 3		/* USB_SPEED_HIGH */

static int
write_attr(const char *name, const char *text)
{
	g_autofree char *path = g_build_filename(VHCI_DIR, name, NULL);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int r = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	if (n < 0)
		r = -errno;
	else if ((size_t)n != strlen(text))
		r = -EIO;
	close(fd);
	return r;
}

/* The free high-speed ports listed in one status file, appended to @ports. */
static void
free_ports(const char *path, GArray *ports)
{
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return;
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l; l++) {
		unsigned int port, sta;
		char hub[4];

		if (sscanf(*l, "%3s %u %u", hub, &port, &sta) == 3 && strcmp(hub, "hs") == 0 &&
		    sta == VHCI_STATUS_FREE)
			g_array_append_val(ports, port);
	}
}

static gint
cmp_port(gconstpointer a, gconstpointer b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

const char *
usb_vhci_sysfs_writable(void)
{
	return access(VHCI_DIR, F_OK) == 0 ? VHCI_DIR : "/sys/devices/platform";
}

bool
usb_vhci_present(void)
{
	return access(VHCI_DIR "/attach", F_OK) == 0;
}

int
usb_vhci_attach(int sock, uint32_t devid, unsigned int *ret_port, char **ret_error)
{
	g_autoptr(GArray) ports = g_array_new(FALSE, FALSE, sizeof(unsigned int));
	g_autoptr(GDir) dir = NULL;
	const char *name;
	int r = -EBUSY;

	if (!usb_vhci_present()) {
		*ret_error = g_strdup("no USB/IP host controller (" VHCI_DIR "): load the vhci-hcd "
				      "module (modprobe vhci-hcd)");
		return -ENODEV;
	}
	dir = g_dir_open(VHCI_DIR, 0, NULL);
	while (dir && (name = g_dir_read_name(dir))) {
		if (strcmp(name, "status") == 0 || g_str_has_prefix(name, "status.")) {
			g_autofree char *path = g_build_filename(VHCI_DIR, name, NULL);

			free_ports(path, ports);
		}
	}
	g_array_sort(ports, cmp_port);
	/* Another process may take a port between our read and our write: try the next. */
	for (unsigned int i = 0; i < ports->len; i++) {
		unsigned int port = g_array_index(ports, unsigned int, i);
		g_autofree char *cmd = g_strdup_printf("%u %d %u %d", port, sock, devid, SPEED_HIGH);

		r = write_attr("attach", cmd);
		if (r == 0) {
			*ret_port = port;
			return 0;
		}
		if (r != -EBUSY && r != -EINVAL)
			break;
	}
	*ret_error = ports->len ? g_strdup_printf("cannot attach to vhci-hcd: %s", g_strerror(-r))
				: g_strdup("vhci-hcd has no free high-speed port");
	return ports->len ? r : -EBUSY;
}

int
usb_vhci_detach(unsigned int port)
{
	g_autofree char *cmd = g_strdup_printf("%u", port);

	return write_attr("detach", cmd);
}
