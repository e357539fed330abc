/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * v4l2cuse: a V4L2 capture device in user space over CUSE.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <glib-unix.h>
#if HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "v4l2cuse/format.h"
#include "device.h"
#include "cuse.h"
#include "shim.h"

#define EXIT_USAGE 2

struct options {
	char *device;
	char *source;
	char *size;
	char *format;
	int fps;
	char *label;
	char *group;
	char *mode;
	gboolean verbose;
	gboolean version;
};

struct daemon_state {
	GMainLoop *loop;
	int exit_code;
};

static void G_GNUC_PRINTF(1, 2)
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("v4l2cuse: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see --help)\n", stderr);
	exit(EXIT_USAGE);
}

static gboolean
on_quit_signal(gpointer data)
{
	struct daemon_state *st = data;

	g_message("stopping");
#if HAVE_LIBSYSTEMD
	sd_notify(0, "STOPPING=1");
#endif
	g_main_loop_quit(st->loop);
	return G_SOURCE_CONTINUE;
}

static void
on_cuse_state(struct v4l2cuse_cuse *c, enum v4l2cuse_cuse_state state, void *data)
{
	struct daemon_state *st = data;
	struct v4l2cuse_device *dev = v4l2cuse_cuse_device(c);
	const char *name = v4l2cuse_device_name(dev);

	switch (state) {
	case V4L2CUSE_CUSE_READY:
		g_message("serving /dev/%s (%s)", name, v4l2cuse_device_label(dev));
#if HAVE_LIBSYSTEMD
		sd_notifyf(0, "READY=1\nSTATUS=serving /dev/%s", name);
#endif
		return;
	case V4L2CUSE_CUSE_FAILED:
		if (v4l2cuse_cuse_error(c) == -EEXIST || v4l2cuse_cuse_error(c) == -ENODEV)
			g_printerr("v4l2cuse: device name '%s' is already taken: CUSE refused "
				   "to register /dev/%s\n", name, name);
		else
			g_printerr("v4l2cuse: registering /dev/%s failed: %s\n", name,
				   g_strerror(-v4l2cuse_cuse_error(c)));
		break;
	case V4L2CUSE_CUSE_ENDED:
		g_printerr("v4l2cuse: the CUSE connection of /dev/%s was aborted\n", name);
		break;
	}
	st->exit_code = EXIT_FAILURE;
	g_main_loop_quit(st->loop);
}

static void
parse_size(const char *s, uint32_t *w, uint32_t *h)
{
	unsigned int a, b;
	char end;

	if (sscanf(s, "%ux%u%c", &a, &b, &end) != 2 || a == 0 || b == 0 ||
	    a > V4L2CUSE_MAX_WIDTH || b > V4L2CUSE_MAX_HEIGHT)
		usage_error("--size: '%s' is not a valid size (WIDTHxHEIGHT, 1..%u each)", s,
			    V4L2CUSE_MAX_WIDTH);
	*w = a;
	*h = b;
}

static uint32_t
parse_fourcc(const char *s)
{
	char f[4] = { ' ', ' ', ' ', ' ' };
	size_t n = strlen(s);
	uint32_t fourcc;

	if (n == 0 || n > 4)
		usage_error("--format: '%s' is not a fourcc (e.g. YUYV, MJPG, NV12)", s);
	memcpy(f, s, n);
	fourcc = v4l2_fourcc(f[0], f[1], f[2], f[3]);
	if (!v4l2cuse_format_info(fourcc))
		usage_error("--format: unknown pixel format '%s'", s);
	return fourcc;
}

static const char *
parse_device(const char *s)
{
	const char *name = g_str_has_prefix(s, "/dev/") ? s + 5 : s;
	const char *p = name + 5;

	if (!g_str_has_prefix(name, "video") || !*p || strlen(p) > 3)
		usage_error("--device: '%s' is not a node name like video42", s);
	for (; *p; p++)
		if (!g_ascii_isdigit(*p))
			usage_error("--device: '%s' is not a node name like video42", s);
	return name;
}

int
main(int argc, char **argv)
{
	struct options o = { .fps = 30 };
	GOptionEntry entries[] = {
		{ "device", 'd', 0, G_OPTION_ARG_STRING, &o.device,
		  "Node name (default video42)", "videoN" },
		{ "source", 's', 0, G_OPTION_ARG_STRING, &o.source,
		  "Frame source (default pattern): pattern[:NAME][,opt=...]", "SPEC" },
		{ "size", 0, 0, G_OPTION_ARG_STRING, &o.size,
		  "Default frame size (default 640x480)", "WxH" },
		{ "format", 0, 0, G_OPTION_ARG_STRING, &o.format,
		  "Default pixel format (default YUYV)", "FOURCC" },
		{ "fps", 0, 0, G_OPTION_ARG_INT, &o.fps, "Default frame rate (default 30)", "N" },
		{ "label", 0, 0, G_OPTION_ARG_STRING, &o.label,
		  "Device name shown to apps (QUERYCAP card)", "TEXT" },
		{ "group", 0, 0, G_OPTION_ARG_STRING, &o.group,
		  "Group of the node (default video)", "GROUP" },
		{ "mode", 0, 0, G_OPTION_ARG_STRING, &o.mode,
		  "Permissions of the node (default 0660)", "OCTAL" },
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &o.verbose, "Debug messages", NULL },
		{ "version", 0, 0, G_OPTION_ARG_NONE, &o.version, "Print the version", NULL },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *err = NULL;
	struct daemon_state st = { .exit_code = EXIT_SUCCESS };
	struct v4l2cuse_device_config cfg = { 0 };
	struct v4l2cuse_device *dev;
	struct v4l2cuse_cuse *c;
	struct v4l2cuse_shim *shim = NULL;
	gid_t gid = (gid_t)-1;
	mode_t mode = 0660;

	setlocale(LC_ALL, "");
	ctx = g_option_context_new("- a V4L2 camera in user space (CUSE)");
	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_set_description(ctx,
		"Example: v4l2cuse --device video42 --source pattern:smpte --size 1280x720\n"
		"Apps that stream with mmap (ffmpeg, browsers) run under v4l2cuse-run.");
	if (!g_option_context_parse(ctx, &argc, &argv, &error))
		usage_error("%s", error->message);
	if (argc > 1)
		usage_error("unexpected argument '%s'", argv[1]);
	if (o.version) {
		printf("v4l2cuse %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (o.verbose)
		g_setenv("G_MESSAGES_DEBUG", "all", TRUE);

	cfg.name = parse_device(o.device ? o.device : "video42");
	cfg.source = o.source ? o.source : "pattern";
	cfg.label = o.label;
	cfg.width = 640;
	cfg.height = 480;
	if (o.size)
		parse_size(o.size, &cfg.width, &cfg.height);
	cfg.pixelformat = parse_fourcc(o.format ? o.format : "YUYV");
	if (o.fps < 1 || o.fps > 240)
		usage_error("--fps: %d is out of range (1..240)", o.fps);
	cfg.interval = (struct v4l2_fract){ 1, (uint32_t)o.fps };
	if (o.mode) {
		char *end;
		unsigned long m = strtoul(o.mode, &end, 8);

		if (*end || end == o.mode || m > 0777)
			usage_error("--mode: '%s' is not an octal mode like 0660", o.mode);
		mode = (mode_t)m;
	}
	{
		const char *gname = o.group ? o.group : "video";
		struct group *gr = getgrnam(gname);

		if (gr)
			gid = gr->gr_gid;
		else if (o.group)
			usage_error("--group: no group named '%s'", o.group);
	}

	dev = v4l2cuse_device_new(&cfg, &err);
	if (!dev) {
		if (strstr(err, "unknown source"))
			usage_error("--source: %s", err);
		g_printerr("v4l2cuse: %s\n", err);
		return EXIT_USAGE;
	}

	/* The preload shim's socket (docs/shim.md); without it handles stay plain. */
	{
		g_autofree char *sock_err = NULL;
		g_autofree char *sock_path = v4l2cuse_shim_socket_path(cfg.name, &sock_err);

		if (sock_path)
			shim = v4l2cuse_shim_new(dev, sock_path, &sock_err);
		if (!shim)
			g_message("%s: no preload shim socket (%s): apps under v4l2cuse-run "
				  "get read() I/O only", cfg.name, sock_err);
	}

	st.loop = g_main_loop_new(NULL, FALSE);
	g_unix_signal_add(SIGINT, on_quit_signal, &st);
	g_unix_signal_add(SIGTERM, on_quit_signal, &st);

	c = v4l2cuse_cuse_new(dev, mode, gid, on_cuse_state, &st, &err);
	if (!c) {
		g_printerr("v4l2cuse: %s\n", err);
		v4l2cuse_shim_free(shim);
		v4l2cuse_device_free(dev);
		g_main_loop_unref(st.loop);
		return EXIT_FAILURE;
	}

	g_main_loop_run(st.loop);

	v4l2cuse_cuse_free(c);
	v4l2cuse_shim_free(shim);
	v4l2cuse_device_free(dev);
	g_main_loop_unref(st.loop);
	g_free(o.device);
	g_free(o.source);
	g_free(o.size);
	g_free(o.format);
	g_free(o.label);
	g_free(o.group);
	g_free(o.mode);
	return st.exit_code;
}
