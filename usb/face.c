/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One USB/IP connection: the host's URBs in, answers out (docs/usb.md,
 * "Streaming").
 *
 * Control transfers are answered at once by the UVC function (uvc.c),
 * which calls back here to start or stop the capture and to read or write
 * the node's controls. Bulk IN URBs of the streaming endpoint are held
 * until a frame is there: bulk transfers have no timeout, so holding them
 * paces the stream at the node's own rate. Each held URB then carries one
 * UVC payload (header + the next part of the frame); the frame's buffer
 * stays dequeued until its last part is out, and only then is the newest
 * finished frame taken (older ones go back to the node unsent, as a slow
 * consumer of any camera misses frames).
 *
 * CMD_UNLINK of a held URB is answered -ECONNRESET and the URB is never
 * answered again; of one already answered, 0. A reply with a seqnum vhci
 * does not expect makes it drop the connection, so every held URB is
 * answered exactly once.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <glib-unix.h>

#include "util/cleanup.h"
#include "usb.h"
#include "usbip.h"

#define CAPTURE_BUFFERS 4
#define BATCH_URBS 64		/* answers gathered into one sendmsg */
#define SEND_TIMEOUT_S 5	/* a host that stops reading for this long is gone */
#define MAX_HELD 64		/* bulk URBs held (uvcvideo keeps 5 in flight) */

struct held_urb {
	uint32_t seqnum;
	uint32_t length;
};

struct usb_face {
	int sock;
	char *node_path;
	int ctrl_fd;
	struct uvc_fn *fn;
	guint sock_watch;
	GByteArray *in;			/* bytes received, not yet a whole command */
	GArray *held;			/* struct held_urb, oldest first */
	struct client_capture *cap;
	guint cap_watch;
	guint stop_idle;		/* the host stopped: close the capture after answering */
	const struct client_frame *frame;	/* being sent */
	size_t offset;			/* of it, sent */
	bool failed;
	void (*done)(void *data, const char *error);
	void *done_data;
	guint done_idle;
	char *error;
	/* The answers of one batch. */
	struct iovec iov[BATCH_URBS * 3];
	unsigned int n_iov;
	uint8_t hdrs[BATCH_URBS][USBIP_HEADER_SIZE + UVC_PAYLOAD_HEADER];
	unsigned int n_hdrs;
	uint64_t frames_sent;
};

static void face_pump(struct usb_face *face);
static void face_watch_capture(struct usb_face *face);

static gboolean
face_done_idle(gpointer data)
{
	struct usb_face *face = data;

	face->done_idle = 0;
	face->done(face->done_data, face->error);
	return G_SOURCE_REMOVE;
}

/* The connection is over (first reason wins); tell the owner from the loop. */
static void
face_fail(struct usb_face *face, char *error)
{
	if (face->failed) {
		g_free(error);
		return;
	}
	face->failed = true;
	face->error = error;
	g_clear_handle_id(&face->sock_watch, g_source_remove);
	g_clear_handle_id(&face->cap_watch, g_source_remove);
	face->done_idle = g_idle_add(face_done_idle, face);
}

/* --- sending --- */

static int
face_flush(struct usb_face *face)
{
	struct msghdr msg = { .msg_iov = face->iov, .msg_iovlen = face->n_iov };

	while (msg.msg_iovlen > 0) {
		ssize_t n = sendmsg(face->sock, &msg, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			face->n_iov = face->n_hdrs = 0;
			face_fail(face, g_strdup_printf("cannot send to the USB host: %s",
							g_strerror(errno)));
			return -errno;
		}
		/* A partial send: skip what went. */
		while (msg.msg_iovlen > 0 && (size_t)n >= msg.msg_iov->iov_len) {
			n -= (ssize_t)msg.msg_iov->iov_len;
			msg.msg_iov++;
			msg.msg_iovlen--;
		}
		if (msg.msg_iovlen > 0) {
			msg.msg_iov->iov_base = (uint8_t *)msg.msg_iov->iov_base + n;
			msg.msg_iov->iov_len -= (size_t)n;
		}
	}
	face->n_iov = face->n_hdrs = 0;
	return 0;
}

static void
face_add_iov(struct usb_face *face, const void *data, size_t len)
{
	if (len)
		face->iov[face->n_iov++] = (struct iovec){ (void *)data, len };
}

/* Queue an answer: a header and @len bytes of @data (NULL: none). */
static int
face_answer(struct usb_face *face, const uint8_t hdr[USBIP_HEADER_SIZE], const void *data,
	    size_t len)
{
	uint8_t *h;

	if (face->n_hdrs == BATCH_URBS && face_flush(face) < 0)
		return -EIO;
	h = face->hdrs[face->n_hdrs++];
	memcpy(h, hdr, USBIP_HEADER_SIZE);
	face_add_iov(face, h, USBIP_HEADER_SIZE);
	face_add_iov(face, data, len);
	return 0;
}

static int
face_ret_submit(struct usb_face *face, uint32_t seqnum, int32_t status, const void *data,
		int32_t actual, size_t data_len)
{
	uint8_t hdr[USBIP_HEADER_SIZE];

	usbip_ret_submit_encode(hdr, seqnum, status, actual);
	return face_answer(face, hdr, data, data_len);
}

/* --- the node --- */

static void
face_stop_capture(struct usb_face *face)
{
	g_clear_handle_id(&face->cap_watch, g_source_remove);
	if (face->cap) {
		uint64_t frames, dropped;

		client_capture_counts(face->cap, &frames, &dropped);
		g_debug("stream stopped: %" G_GUINT64_FORMAT " frames sent, %" G_GUINT64_FORMAT
			" dropped", frames, dropped);
	}
	g_clear_pointer(&face->cap, client_capture_stop);
	face->frame = NULL;
	face->offset = 0;
}

static gboolean
face_stop_idle(gpointer data)
{
	struct usb_face *face = data;

	face->stop_idle = 0;
	face_stop_capture(face);
	return G_SOURCE_REMOVE;
}

static gboolean
face_capture_ready(gint fd, GIOCondition cond, gpointer data)
{
	struct usb_face *face = data;

	face->cap_watch = 0;
	face_pump(face);
	return G_SOURCE_REMOVE;
}

/*
 * Wake up when the capture may have a frame (only while none is being
 * sent): on client_capture_fd() as it is now, the fast path's wake-up
 * socket or the node.
 */
static void
face_watch_capture(struct usb_face *face)
{
	if (face->cap && !face->cap_watch && !face->stop_idle && !face->failed)
		face->cap_watch = g_unix_fd_add(client_capture_fd(face->cap), G_IO_IN | G_IO_ERR,
						face_capture_ready, face);
}

static int
face_start(void *data, const struct client_mode *mode, struct client_rate rate)
{
	struct usb_face *face = data;
	g_autofree char *error = NULL;
	int r;

	g_clear_handle_id(&face->stop_idle, g_source_remove);
	face_stop_capture(face);
	r = client_capture_start(face->node_path, mode, rate, CAPTURE_BUFFERS, &face->cap, &error);
	if (r < 0) {
		g_warning("%s: cannot stream %ux%u %.4s: %s", face->node_path, mode->width,
			  mode->height, (const char *)&mode->fourcc, error);
		return r;
	}
	g_debug("%s: streaming %ux%u %.4s at %u/%u fps", face->node_path, mode->width,
		mode->height, (const char *)&mode->fourcc, rate.num, rate.denom);
	face_watch_capture(face);
	return 0;
}

/*
 * The host stops streaming with CLEAR_FEATURE(HALT) and waits for our
 * answer in its STREAMOFF: answer first, close the capture (several
 * requests to the daemon) right after. Nothing is sent meanwhile.
 */
static void
face_stop(void *data)
{
	struct usb_face *face = data;

	g_clear_handle_id(&face->cap_watch, g_source_remove);
	face->frame = NULL;
	if (face->cap && !face->stop_idle)
		face->stop_idle = g_idle_add(face_stop_idle, face);
}

static int
face_get_ctrl(void *data, uint32_t id, int32_t *ret_value)
{
	struct usb_face *face = data;
	struct v4l2_control c = { .id = id };
	int r = client_xioctl(face->ctrl_fd, VIDIOC_G_CTRL, &c);

	if (r == 0)
		*ret_value = c.value;
	return r;
}

static int
face_set_ctrl(void *data, uint32_t id, int32_t value)
{
	struct usb_face *face = data;
	struct v4l2_control c = { .id = id, .value = value };

	return client_xioctl(face->ctrl_fd, VIDIOC_S_CTRL, &c);
}

static const struct uvc_fn_ops face_fn_ops = {
	.start = face_start,
	.stop = face_stop,
	.get_ctrl = face_get_ctrl,
	.set_ctrl = face_set_ctrl,
};

/*
 * Answer held URBs with the frame being sent, taking the newest finished
 * one when none is; the buffer goes back once its last part is queued and
 * sent.
 */
static void
face_pump(struct usb_face *face)
{
	while (face->cap && !face->stop_idle && face->held->len > 0 && !face->failed) {
		struct held_urb u = g_array_index(face->held, struct held_urb, 0);
		uint8_t ph[UVC_PAYLOAD_HEADER];
		uint8_t hdr[USBIP_HEADER_SIZE];
		size_t n_data, frame_len;
		uint8_t *h;

		if (!face->frame) {
			int r = client_capture_dequeue(face->cap);

			if (r == -EAGAIN) {
				face_watch_capture(face);
				break;
			}
			if (r < 0) {
				/* The node failed (the daemon went away): unplug. */
				face_fail(face, g_strdup_printf("%s: capture failed: %s",
								face->node_path, g_strerror(-r)));
				break;
			}
			face->frame = client_capture_pending(face->cap);
			face->offset = 0;
		}
		frame_len = face->frame->bytesused;
		uvc_fn_payload_header(face->fn, ph, u.length, frame_len, face->offset,
				      face->frame->error, &n_data);
		g_array_remove_index(face->held, 0);
		usbip_ret_submit_encode(hdr, u.seqnum, 0, (int32_t)(UVC_PAYLOAD_HEADER + n_data));
		if (face->n_hdrs == BATCH_URBS && face_flush(face) < 0)
			break;
		h = face->hdrs[face->n_hdrs++];
		memcpy(h, hdr, USBIP_HEADER_SIZE);
		memcpy(h + USBIP_HEADER_SIZE, ph, UVC_PAYLOAD_HEADER);
		face_add_iov(face, h, USBIP_HEADER_SIZE + UVC_PAYLOAD_HEADER);
		face_add_iov(face, (const uint8_t *)face->frame->data + face->offset, n_data);
		face->offset += n_data;
		if (face->offset >= frame_len) {
			/* Out before the buffer may be refilled. */
			if (face_flush(face) < 0)
				break;
			client_capture_delivered(face->cap);
			face->frames_sent++;
			face->frame = NULL;
			if (client_capture_release(face->cap) < 0) {
				face_fail(face, g_strdup_printf("%s: cannot queue a buffer",
								face->node_path));
				break;
			}
		}
	}
	if (face->n_iov)
		face_flush(face);
}

/* --- receiving --- */

static void
face_control(struct usb_face *face, const struct usbip_cmd *c, const uint8_t *out, size_t out_len)
{
	uint16_t w_length = (uint16_t)(c->setup[6] | c->setup[7] << 8);
	g_autofree uint8_t *reply = g_malloc0(MAX(w_length, 1));
	bool in = c->setup[0] & 0x80;
	int r;

	/* The setup packet's direction is the transfer's (a host that disagrees gets a stall). */
	if (in != (c->direction == USBIP_DIR_IN))
		r = -EPIPE;
	else
		r = uvc_fn_control(face->fn, c->setup, out, out_len, reply);
	/* Never more than the transfer buffer holds: vhci drops an overflowing answer. */
	if (in && r > c->length)
		r = c->length;
	if (r < 0) {
		g_debug("control %02x %02x %02x%02x %02x%02x: stall", c->setup[0], c->setup[1],
			c->setup[3], c->setup[2], c->setup[5], c->setup[4]);
		face_ret_submit(face, c->seqnum, -EPIPE, NULL, 0, 0);
	} else if (in) {
		face_ret_submit(face, c->seqnum, 0, reply, r, (size_t)r);
		/* The reply lives in @reply: out before it is freed. */
		face_flush(face);
	} else {
		/* OUT: actual_length is what the device took, and no data follows. */
		face_ret_submit(face, c->seqnum, 0, NULL, r, 0);
	}
}

static void
face_unlink(struct usb_face *face, const struct usbip_cmd *c)
{
	uint8_t hdr[USBIP_HEADER_SIZE];
	int32_t status = 0;

	for (unsigned int i = 0; i < face->held->len; i++) {
		if (g_array_index(face->held, struct held_urb, i).seqnum == c->unlink_seqnum) {
			g_array_remove_index(face->held, i);
			status = -ECONNRESET;
			break;
		}
	}
	usbip_ret_unlink_encode(hdr, c->seqnum, status);
	face_answer(face, hdr, NULL, 0);
}

static void
face_command(struct usb_face *face, const struct usbip_cmd *c, const uint8_t *out, size_t out_len)
{
	if (c->command == USBIP_CMD_UNLINK) {
		face_unlink(face, c);
		return;
	}
	if (c->ep == 0) {
		face_control(face, c, out, out_len);
	} else if (c->ep == (UVC_EP_IN & 0x0f) && c->direction == USBIP_DIR_IN &&
		   c->n_packets == 0 && c->length > UVC_PAYLOAD_HEADER &&
		   face->held->len < MAX_HELD) {
		struct held_urb u = { c->seqnum, (uint32_t)c->length };

		g_array_append_val(face->held, u);
	} else {
		/* Not our endpoint, too small for a payload, or more than any host keeps. */
		face_ret_submit(face, c->seqnum, -EPIPE, NULL, 0, 0);
	}
}

static gboolean
face_readable(gint fd, GIOCondition cond, gpointer data)
{
	struct usb_face *face = data;
	uint8_t buf[65536];
	ssize_t n;

	n = recv(face->sock, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return G_SOURCE_CONTINUE;
	if (n <= 0) {
		face->sock_watch = 0;
		face_fail(face, n < 0 ? g_strdup_printf("USB host connection: %s", g_strerror(errno))
				      : NULL);
		return G_SOURCE_REMOVE;
	}
	g_byte_array_append(face->in, buf, (guint)n);
	while (face->in->len >= USBIP_HEADER_SIZE && !face->failed) {
		struct usbip_cmd c;
		long follows = usbip_cmd_decode(face->in->data, &c);

		if (follows < 0) {
			face->sock_watch = 0;
			face_fail(face, g_strdup("the USB host sent a malformed USB/IP command"));
			return G_SOURCE_REMOVE;
		}
		if (face->in->len < USBIP_HEADER_SIZE + (size_t)follows)
			break;
		face_command(face, &c, face->in->data + USBIP_HEADER_SIZE,
			     c.direction == USBIP_DIR_OUT ? (size_t)c.length : 0);
		g_byte_array_remove_range(face->in, 0, USBIP_HEADER_SIZE + (guint)follows);
	}
	face_pump(face);
	return face->failed ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

struct usb_face *
usb_face_new(int sock, const char *node_path, int ctrl_fd, const struct uvc_ctrl_range *ctrls,
	     unsigned int n_ctrls, const struct client_mode *modes, unsigned int n_modes,
	     const char *product, const char *serial, void (*done)(void *data, const char *error),
	     void *data)
{
	struct usb_face *face = g_new0(struct usb_face, 1);
	struct timeval tv = { .tv_sec = SEND_TIMEOUT_S };

	face->sock = sock;
	face->node_path = g_strdup(node_path);
	face->ctrl_fd = ctrl_fd;
	face->done = done;
	face->done_data = data;
	face->in = g_byte_array_new();
	face->held = g_array_new(FALSE, FALSE, sizeof(struct held_urb));
	face->fn = uvc_fn_new(modes, n_modes, ctrls, n_ctrls, product, serial, &face_fn_ops, face);
	if (!face->fn) {
		usb_face_free(face);
		return NULL;
	}
	/*
	 * Sends block (the host reads as fast as it can), but not forever; an
	 * inherited socket may be non-blocking (the daemon's GSocket made it so).
	 */
	setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) & ~O_NONBLOCK);
	face->sock_watch = g_unix_fd_add(sock, G_IO_IN | G_IO_HUP | G_IO_ERR, face_readable, face);
	return face;
}

void
usb_face_free(struct usb_face *face)
{
	if (!face)
		return;
	g_clear_handle_id(&face->sock_watch, g_source_remove);
	g_clear_handle_id(&face->done_idle, g_source_remove);
	g_clear_handle_id(&face->stop_idle, g_source_remove);
	face_stop_capture(face);
	uvc_fn_free(face->fn);
	if (face->sock >= 0)
		close(face->sock);
	g_byte_array_unref(face->in);
	g_array_unref(face->held);
	g_free(face->node_path);
	g_free(face->error);
	g_free(face);
}
