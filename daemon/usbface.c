/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Supervising a device's v4l2cuse-usb (daemon/usbface.h).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gio/gio.h>

#include "device.h"
#include "usb.h"
#include "usbface.h"

#define BACKOFF_MIN_S 1
#define BACKOFF_MAX_S 30
#define VHCI_POLL_S 5

/* One process; outlives the face when the face is freed before it exits. */
struct proc {
	GSubprocess *sub;
	struct v4l2cuse_usbface *face;	/* NULL once the face let it go */
};

struct v4l2cuse_usbface {
	char *id;
	char *node_path;
	struct proc *proc;
	gint64 started;			/* monotonic µs, of the running process */
	int last_status;		/* of the last end (1000 + signal); -1: none yet */
	guint timer;
	unsigned int backoff_s;
	bool told_no_vhci;
	const char *state;
	struct v4l2cuse_device *dev;
	mode_t mode;			/* the node's usual mode */
	bool hide;
	bool hidden;
};

static void face_spawn(struct v4l2cuse_usbface *f);

const char *
v4l2cuse_usbface_program(void)
{
	static char *program;

	if (!program) {
		g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
		g_autofree char *dir = exe ? g_path_get_dirname(exe) : NULL;
		g_autofree char *built = dir ? g_build_filename(dir, "..", "usb", "v4l2cuse-usb",
								 NULL) : NULL;

		program = built && g_file_test(built, G_FILE_TEST_IS_EXECUTABLE)
				  ? g_steal_pointer(&built) : g_strdup(V4L2CUSE_USB_PROGRAM);
	}
	return program;
}

/* The node root's alone while a face runs (usbface.h, "Listed once"). */
static void
face_hide_node(struct v4l2cuse_usbface *f, bool hide)
{
	v4l2cuse_device_set_usb_face(f->dev, hide);
	if (!f->hide || hide == f->hidden)
		return;
	if (chmod(f->node_path, hide ? 0600 : f->mode) < 0) {
		g_message("%s: cannot set the mode of %s: %s", f->id, f->node_path,
			  g_strerror(errno));
		return;
	}
	f->hidden = hide;
}

static gboolean
face_timer(gpointer data)
{
	struct v4l2cuse_usbface *f = data;

	f->timer = 0;
	face_spawn(f);
	return G_SOURCE_REMOVE;
}

static void
face_retry_in(struct v4l2cuse_usbface *f, unsigned int seconds)
{
	g_clear_handle_id(&f->timer, g_source_remove);
	f->timer = g_timeout_add_seconds(seconds, face_timer, f);
}

static void
proc_exited(GObject *source, GAsyncResult *res, gpointer data)
{
	struct proc *p = data;
	struct v4l2cuse_usbface *f = p->face;
	int status;

	g_subprocess_wait_finish(p->sub, res, NULL);
	status = g_subprocess_get_if_exited(p->sub) ? g_subprocess_get_exit_status(p->sub) : -1;
	if (f) {
		f->proc = NULL;
		/* A face that ran for a while starts again quickly. */
		if (g_get_monotonic_time() - f->started > BACKOFF_MAX_S * G_USEC_PER_SEC) {
			f->backoff_s = BACKOFF_MIN_S;
			f->last_status = -1;
		}
		/*
		 * It said why on our stderr; start it again, later each time. The
		 * same end again (a face that cannot start) is logged once.
		 */
		if (status == -1)
			status = 1000 + g_subprocess_get_term_sig(p->sub);
		if (status != f->last_status)
			g_warning("%s: the USB face (v4l2cuse-usb) %s %d; restarting it in %u s"
				  "%s", f->id, status >= 1000 ? "died of signal" : "ended with status",
				  status >= 1000 ? status - 1000 : status, f->backoff_s,
				  f->last_status < 0 ? " (the same end again: at debug level)" : "");
		else
			g_debug("%s: the USB face ended the same way; restarting it in %u s", f->id,
				f->backoff_s);
		f->last_status = status;
		f->state = "restarting";
		face_hide_node(f, false);
		face_retry_in(f, f->backoff_s);
		f->backoff_s = MIN(f->backoff_s * 2, BACKOFF_MAX_S);
	}
	g_object_unref(p->sub);
	g_free(p);
}

static void
face_spawn(struct v4l2cuse_usbface *f)
{
	g_autoptr(GError) error = NULL;
	g_autofree char *parent = g_strdup_printf("%d", (int)getpid());
	struct proc *p;
	GSubprocess *sub;

	if (!usb_vhci_present()) {
		if (!f->told_no_vhci)
			g_warning("%s: usb=true, but vhci-hcd is not loaded (modprobe vhci-hcd): "
				  "%s serves as a CUSE node only until it is", f->id, f->node_path);
		f->told_no_vhci = true;
		f->state = "no vhci-hcd";
		face_hide_node(f, false);
		face_retry_in(f, VHCI_POLL_S);
		return;
	}
	if (f->told_no_vhci)
		g_message("%s: vhci-hcd is loaded now: starting the USB face", f->id);
	f->told_no_vhci = false;
	sub = g_subprocess_new(G_SUBPROCESS_FLAGS_STDIN_INHERIT, &error,
			       v4l2cuse_usbface_program(), "--node", f->node_path, "--parent-pid",
			       parent, g_log_get_debug_enabled() ? "--verbose" : NULL, NULL);
	if (!sub) {
		g_warning("%s: cannot start the USB face (%s): %s; retrying in %u s", f->id,
			  v4l2cuse_usbface_program(), error->message, f->backoff_s);
		f->state = "cannot start";
		face_hide_node(f, false);
		face_retry_in(f, f->backoff_s);
		f->backoff_s = MIN(f->backoff_s * 2, BACKOFF_MAX_S);
		return;
	}
	face_hide_node(f, true);
	p = g_new0(struct proc, 1);
	p->sub = sub;
	p->face = f;
	f->proc = p;
	f->started = g_get_monotonic_time();
	f->state = "attached";
	g_subprocess_wait_async(sub, NULL, proc_exited, p);
}

struct v4l2cuse_usbface *
v4l2cuse_usbface_new(struct v4l2cuse_device *dev, const char *id, const char *node, mode_t mode,
		     bool hide)
{
	struct v4l2cuse_usbface *f = g_new0(struct v4l2cuse_usbface, 1);

	f->dev = dev;
	f->mode = mode;
	f->hide = hide;
	f->id = g_strdup(id);
	f->node_path = g_strconcat("/dev/", node, NULL);
	f->backoff_s = BACKOFF_MIN_S;
	f->last_status = -1;
	face_spawn(f);
	return f;
}

void
v4l2cuse_usbface_free(struct v4l2cuse_usbface *f)
{
	if (!f)
		return;
	g_clear_handle_id(&f->timer, g_source_remove);
	v4l2cuse_device_set_usb_face(f->dev, false);
	if (f->proc) {
		/* It unplugs the camera and exits; proc_exited() reaps it. */
		f->proc->face = NULL;
		g_subprocess_send_signal(f->proc->sub, SIGTERM);
	}
	g_free(f->id);
	g_free(f->node_path);
	g_free(f);
}

const char *
v4l2cuse_usbface_state(const struct v4l2cuse_usbface *f)
{
	return f->state;
}
