/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The USB/IP network server (daemon/usbip-server.h): OP_REQ_DEVLIST and
 * OP_REQ_IMPORT of tools/usb/usbip (usb/usbip.h has the layouts). A
 * connection asks one thing: the list (answered, closed) or an import
 * (answered, then the same connection carries the URB protocol, served by
 * a v4l2cuse-usb given the socket).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <gio/gio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "conf.h"
#include "manager.h"
#include "usbface.h"
#include "usbip.h"
#include "uvc.h"
#include "usbip-server.h"

#define REQUEST_TIMEOUT_S 10
#define MAX_CONNECTIONS 16		/* requests in flight at once */
#define BUSNUM 1

struct import {
	GSubprocess *sub;
	char *id, *node;
	struct v4l2cuse_usbip_server *s;	/* NULL once the server let it go */
};

struct conn {
	struct v4l2cuse_usbip_server *s;	/* NULL once the server is gone */
	GSocketConnection *c;
	char *peer;
	GCancellable *cancel;
	guint timeout;
	uint8_t op[USBIP_OP_COMMON_SIZE];
	char busid[USBIP_BUSID_SIZE];
};

struct v4l2cuse_usbip_server {
	struct v4l2cuse_manager *m;
	GSocketService *service;
	GPtrArray *allow;		/* GInetAddressMask * */
	GPtrArray *imports;		/* struct import * */
	GPtrArray *conns;		/* struct conn *, requests in flight */
	char *listen;
};

static void
conn_free(struct conn *k)
{
	g_clear_handle_id(&k->timeout, g_source_remove);
	g_io_stream_close(G_IO_STREAM(k->c), NULL, NULL);
	g_object_unref(k->c);
	g_object_unref(k->cancel);
	if (k->s)
		g_ptr_array_remove(k->s->conns, k);
	g_free(k->peer);
	g_free(k);
}

static gboolean
conn_timeout(gpointer data)
{
	struct conn *k = data;

	k->timeout = 0;
	g_message("usbip: %s sent no complete request in %d s: closed", k->peer,
		  REQUEST_TIMEOUT_S);
	g_cancellable_cancel(k->cancel);
	return G_SOURCE_REMOVE;
}

static bool
conn_write(struct conn *k, const void *data, size_t len)
{
	GOutputStream *out = g_io_stream_get_output_stream(G_IO_STREAM(k->c));
	g_autoptr(GError) error = NULL;

	if (!g_output_stream_write_all(out, data, len, NULL, k->cancel, &error)) {
		g_message("usbip: %s: %s", k->peer, error->message);
		return false;
	}
	return true;
}

/* --- the device list --- */

struct export {
	const char *id, *node;
	uint32_t devnum;
	struct usbip_device_info info;
};

struct exports {
	GArray *a;		/* struct export */
	uint32_t next_devnum;
};

static void
add_export(const char *id, const char *node, const char *label, void *data)
{
	struct exports *e = data;
	struct export x = { .id = id, .node = node, .devnum = ++e->next_devnum };

	/* The bus id is the device id; longer ones cannot be named. */
	if (strlen(id) >= USBIP_BUSID_SIZE)
		return;
	uvc_device_info(id, BUSNUM, x.devnum, &x.info);
	g_array_append_val(e->a, x);
}

static GArray *
list_exports(struct v4l2cuse_usbip_server *s)
{
	struct exports e = { .a = g_array_new(FALSE, TRUE, sizeof(struct export)), .next_devnum = 1 };

	v4l2cuse_manager_foreach_serving(s->m, add_export, &e);
	return e.a;
}

static void
reply_devlist(struct conn *k)
{
	g_autoptr(GArray) ex = list_exports(k->s);
	g_autoptr(GByteArray) b = g_byte_array_new();
	uint8_t op[USBIP_OP_COMMON_SIZE], n[4];

	usbip_op_encode(op, USBIP_OP_REP_DEVLIST, USBIP_ST_OK);
	g_byte_array_append(b, op, sizeof(op));
	n[0] = (uint8_t)(ex->len >> 24);
	n[1] = (uint8_t)(ex->len >> 16);
	n[2] = (uint8_t)(ex->len >> 8);
	n[3] = (uint8_t)ex->len;
	g_byte_array_append(b, n, sizeof(n));
	for (unsigned int i = 0; i < ex->len; i++) {
		const struct export *x = &g_array_index(ex, struct export, i);
		uint8_t dev[USBIP_DEVICE_SIZE];

		usbip_device_encode(dev, &x->info);
		g_byte_array_append(b, dev, sizeof(dev));
		for (unsigned int f = 0; f < x->info.n_interfaces; f++) {
			uint8_t intf[USBIP_INTERFACE_SIZE] = {
				x->info.interfaces[f].class, x->info.interfaces[f].subclass,
				x->info.interfaces[f].protocol, 0
			};

			g_byte_array_append(b, intf, sizeof(intf));
		}
	}
	conn_write(k, b->data, b->len);
	g_debug("usbip: %s: listed %u devices", k->peer, ex->len);
}

/* --- imports --- */

static void
import_exited(GObject *source, GAsyncResult *res, gpointer data)
{
	struct import *im = data;

	g_subprocess_wait_finish(im->sub, res, NULL);
	g_message("usbip: the import of %s ended", im->id);
	if (im->s)
		g_ptr_array_remove(im->s->imports, im);
	g_object_unref(im->sub);
	g_free(im->id);
	g_free(im->node);
	g_free(im);
}

static void
reply_import(struct conn *k)
{
	g_autoptr(GArray) ex = list_exports(k->s);
	g_autoptr(GSubprocessLauncher) l = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *node_path = NULL, *parent = NULL;
	const struct export *x = NULL;
	uint8_t op[USBIP_OP_COMMON_SIZE], dev[USBIP_DEVICE_SIZE];
	struct import *im;
	GSubprocess *sub;
	int fd, one = 1;

	k->busid[USBIP_BUSID_SIZE - 1] = '\0';
	for (unsigned int i = 0; i < ex->len && !x; i++)
		if (strcmp(g_array_index(ex, struct export, i).id, k->busid) == 0)
			x = &g_array_index(ex, struct export, i);
	if (!x) {
		g_message("usbip: %s asked for '%s', which is not a serving device", k->peer,
			  k->busid);
		usbip_op_encode(op, USBIP_OP_REP_IMPORT, USBIP_ST_NODEV);
		conn_write(k, op, sizeof(op));
		return;
	}
	usbip_op_encode(op, USBIP_OP_REP_IMPORT, USBIP_ST_OK);
	usbip_device_encode(dev, &x->info);
	if (!conn_write(k, op, sizeof(op)) || !conn_write(k, dev, sizeof(dev)))
		return;

	/* From here the connection is the camera's: its own v4l2cuse-usb serves it. */
	fd = g_socket_get_fd(g_socket_connection_get_socket(k->c));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	l = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDIN_INHERIT);
	g_subprocess_launcher_take_fd(l, dup(fd), 3);
	node_path = g_strconcat("/dev/", x->node, NULL);
	parent = g_strdup_printf("%d", (int)getpid());
	sub = g_subprocess_launcher_spawn(l, &error, v4l2cuse_usbface_program(), "--node",
					  node_path, "--fd", "3", "--parent-pid", parent,
					  g_log_get_debug_enabled() ? "--verbose" : NULL, NULL);
	if (!sub) {
		g_warning("usbip: cannot start v4l2cuse-usb for %s: %s", x->id, error->message);
		return;
	}
	g_message("usbip: %s imported %s (%s)", k->peer, x->id, node_path);
	im = g_new0(struct import, 1);
	im->sub = sub;
	im->id = g_strdup(x->id);
	im->node = g_strdup(x->node);
	im->s = k->s;
	g_ptr_array_add(k->s->imports, im);
	g_subprocess_wait_async(sub, NULL, import_exited, im);
}

/* --- requests --- */

static void
busid_read(GObject *source, GAsyncResult *res, gpointer data)
{
	struct conn *k = data;
	gsize n = 0;

	if (g_input_stream_read_all_finish(G_INPUT_STREAM(source), res, &n, NULL) &&
	    n == sizeof(k->busid) && k->s)
		reply_import(k);
	conn_free(k);
}

static void
op_read(GObject *source, GAsyncResult *res, gpointer data)
{
	struct conn *k = data;
	uint16_t code;
	uint32_t status;
	gsize n = 0;

	if (!g_input_stream_read_all_finish(G_INPUT_STREAM(source), res, &n, NULL) ||
	    n != sizeof(k->op) || !k->s) {
		conn_free(k);
		return;
	}
	if (usbip_op_decode(k->op, &code, &status) < 0) {
		g_message("usbip: %s: not a USB/IP request (version %02x%02x)", k->peer, k->op[0],
			  k->op[1]);
		conn_free(k);
		return;
	}
	switch (code) {
	case USBIP_OP_REQ_DEVLIST:
		reply_devlist(k);
		conn_free(k);
		return;
	case USBIP_OP_REQ_IMPORT:
		g_input_stream_read_all_async(G_INPUT_STREAM(source), k->busid, sizeof(k->busid),
					      G_PRIORITY_DEFAULT, k->cancel, busid_read, k);
		return;
	default:
		g_message("usbip: %s: unknown request %#06x", k->peer, code);
		conn_free(k);
		return;
	}
}

static bool
allowed(struct v4l2cuse_usbip_server *s, GInetAddress *addr)
{
	if (!s->allow->len)
		return g_inet_address_get_is_loopback(addr);
	for (unsigned int i = 0; i < s->allow->len; i++)
		if (g_inet_address_mask_matches(s->allow->pdata[i], addr))
			return true;
	return false;
}

static gboolean
on_incoming(GSocketService *service, GSocketConnection *c, GObject *source, gpointer data)
{
	struct v4l2cuse_usbip_server *s = data;
	g_autoptr(GSocketAddress) sa = g_socket_connection_get_remote_address(c, NULL);
	GInetAddress *addr = sa && G_IS_INET_SOCKET_ADDRESS(sa) ?
			     g_inet_socket_address_get_address(G_INET_SOCKET_ADDRESS(sa)) : NULL;
	g_autofree char *peer = addr ? g_inet_address_to_string(addr) : g_strdup("?");
	struct conn *k;

	if (!addr || !allowed(s, addr)) {
		g_message("usbip: refused a connection from %s (not in usbip-allow)", peer);
		g_io_stream_close(G_IO_STREAM(c), NULL, NULL);
		return TRUE;
	}
	if (s->conns->len >= MAX_CONNECTIONS) {
		g_message("usbip: %s: too many requests at once: closed", peer);
		g_io_stream_close(G_IO_STREAM(c), NULL, NULL);
		return TRUE;
	}
	k = g_new0(struct conn, 1);
	k->s = s;
	k->c = g_object_ref(c);
	k->peer = g_steal_pointer(&peer);
	k->cancel = g_cancellable_new();
	k->timeout = g_timeout_add_seconds(REQUEST_TIMEOUT_S, conn_timeout, k);
	g_ptr_array_add(s->conns, k);
	g_input_stream_read_all_async(g_io_stream_get_input_stream(G_IO_STREAM(c)), k->op,
				      sizeof(k->op), G_PRIORITY_DEFAULT, k->cancel, op_read, k);
	return TRUE;
}

static void
import_end(struct import *im)
{
	/* It unplugs (the importer sees a disconnect) and exits; import_exited() reaps it. */
	im->s = NULL;
	g_subprocess_send_signal(im->sub, SIGTERM);
}

struct v4l2cuse_usbip_server *
v4l2cuse_usbip_server_new(const char *listen, const char *const *allow, struct v4l2cuse_manager *m,
			  char **ret_error)
{
	struct v4l2cuse_usbip_server *s = g_new0(struct v4l2cuse_usbip_server, 1);
	g_autoptr(GInetAddress) addr = NULL;
	g_autoptr(GSocketAddress) sa = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *host = NULL;
	uint16_t port;

	s->m = m;
	s->listen = g_strdup(listen);
	s->allow = g_ptr_array_new_with_free_func(g_object_unref);
	s->imports = g_ptr_array_new();
	s->conns = g_ptr_array_new();
	for (unsigned int i = 0; allow && allow[i]; i++) {
		GInetAddressMask *mask = g_inet_address_mask_new_from_string(allow[i], NULL);

		if (mask)
			g_ptr_array_add(s->allow, mask);
	}
	if (v4l2cuse_parse_listen(listen, &host, &port, ret_error) < 0)
		goto err;
	addr = g_inet_address_new_from_string(host);
	sa = g_inet_socket_address_new(addr, port);
	s->service = g_socket_service_new();
	if (!g_socket_listener_add_address(G_SOCKET_LISTENER(s->service), sa,
					   G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL, NULL,
					   &error)) {
		*ret_error = g_strdup_printf("usbip-listen=%s: %s", listen, error->message);
		goto err;
	}
	g_signal_connect(s->service, "incoming", G_CALLBACK(on_incoming), s);
	g_socket_service_start(s->service);
	g_message("usbip: listening on %s for %s", listen,
		  s->allow->len ? "the addresses of usbip-allow" : "loopback clients only");
	return s;
err:
	v4l2cuse_usbip_server_free(s);
	return NULL;
}

void
v4l2cuse_usbip_server_free(struct v4l2cuse_usbip_server *s)
{
	if (!s)
		return;
	if (s->service) {
		g_socket_service_stop(s->service);
		g_socket_listener_close(G_SOCKET_LISTENER(s->service));
		g_object_unref(s->service);
	}
	for (unsigned int i = 0; i < s->imports->len; i++)
		import_end(s->imports->pdata[i]);
	g_ptr_array_unref(s->imports);
	/* Requests in flight end in their callbacks, which see the server gone. */
	for (unsigned int i = 0; i < s->conns->len; i++) {
		struct conn *k = s->conns->pdata[i];

		k->s = NULL;
		g_cancellable_cancel(k->cancel);
	}
	g_ptr_array_unref(s->conns);
	g_ptr_array_unref(s->allow);
	g_free(s->listen);
	g_free(s);
}

static void
still_serving(const char *id, const char *node, const char *label, void *data)
{
	GPtrArray *gone = data;

	for (unsigned int i = 0; i < gone->len; i++) {
		struct import *im = gone->pdata[i];

		if (strcmp(im->id, id) == 0 && strcmp(im->node, node) == 0)
			g_ptr_array_remove_index_fast(gone, i--);
	}
}

void
v4l2cuse_usbip_server_check(struct v4l2cuse_usbip_server *s)
{
	g_autoptr(GPtrArray) gone = NULL;

	if (!s)
		return;
	gone = g_ptr_array_copy(s->imports, NULL, NULL);
	v4l2cuse_manager_foreach_serving(s->m, still_serving, gone);
	for (unsigned int i = 0; i < gone->len; i++) {
		struct import *im = gone->pdata[i];

		g_message("usbip: %s is gone: ending its import", im->id);
		g_ptr_array_remove(s->imports, im);
		import_end(im);
	}
}
