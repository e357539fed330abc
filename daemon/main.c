/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * v4l2cuse: V4L2 capture devices in user space over CUSE.
 *
 * Either one device from the command line (--device, --source, ...) or the
 * devices of a configuration file (--config, default
 * SYSCONFDIR/v4l2cuse/v4l2cuse.conf plus conf.d/), served by one process on
 * one main loop (daemon/manager.c). Under systemd: Type=notify with READY=1
 * after every node passed its self-test, STATUS=, RELOADING=1 on SIGHUP,
 * WATCHDOG=1, and logs to the journal.
 */
#include "config.h"

#include <errno.h>
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
#include "v4l2cuse/source.h"
#include "util/cleanup.h"
#include "device.h"
#include "conf.h"
#include "manager.h"
#include "network.h"
#include "control.h"
#include "lbctl.h"
#include "sandbox.h"
#include "usb.h"
#include "usbface.h"
#include "usbip-server.h"

#define EXIT_USAGE 2

struct options {
	char *device;
	char *source;
	char *size;
	char *format;
	int fps;
	char *label;
	gboolean share;
	gboolean usb;
	char *group;
	char *mode;
	char *buffer_memory;
	char *device_buffer_memory;
	char *config;
	char *sandbox;
	gboolean check_config;
	gboolean verbose;
	gboolean version;
};

struct daemon_state {
	GMainLoop *loop;
	int exit_code;
	struct v4l2cuse_manager *m;
	struct v4l2cuse_control *control;
	struct v4l2cuse_lbctl *lbctl;	/* /dev/v4l2loopback ([daemon] loopback-control=) */
	struct v4l2cuse_usbip_server *usbip;	/* [daemon] usbip-listen= */
	char *usbip_key;		/* its listen= and allow= as started */
	char *config_path;		/* NULL: a command-line device */
	bool config_required;		/* --config given: the file must exist */
	bool ready_sent;
	bool reloading;
	char *status;			/* last STATUS= sent */
	guint status_idle;
	/* --buffer-memory-limit, --device-buffer-memory-limit: override the config. */
	bool has_total_memory, has_device_memory;
	uint64_t total_memory, device_memory;
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

/* ---------------------------------------------------------------------- */
/* Logging: the journal when stderr is a journal stream, else stderr. */

static bool log_to_journal;

static GLogWriterOutput
log_writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer data)
{
	const char *domain = NULL;

	for (gsize i = 0; i < n_fields; i++)
		if (strcmp(fields[i].key, "GLIB_DOMAIN") == 0)
			domain = fields[i].value;
	/* G_MESSAGES_DEBUG=all (or a domain list) enables debug messages. */
	if (g_log_writer_default_would_drop(level, domain))
		return G_LOG_WRITER_HANDLED;
	if (log_to_journal &&
	    g_log_writer_journald(level, fields, n_fields, data) == G_LOG_WRITER_HANDLED)
		return G_LOG_WRITER_HANDLED;
	return g_log_writer_standard_streams(level, fields, n_fields, data);
}

/* ---------------------------------------------------------------------- */
/* systemd notifications */

static void G_GNUC_PRINTF(1, 2)
notify(const char *fmt, ...)
{
#if HAVE_LIBSYSTEMD
	g_autofree char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	sd_notify(0, msg);
#endif
}

static void
update_status(struct daemon_state *st)
{
	g_autofree char *s = v4l2cuse_manager_status(st->m);

	if (g_strcmp0(s, st->status) == 0)
		return;
	notify("STATUS=%s", s);
	g_free(st->status);
	st->status = g_steal_pointer(&s);
}

static gboolean
status_idle_cb(gpointer data)
{
	struct daemon_state *st = data;

	st->status_idle = 0;
	update_status(st);
	return G_SOURCE_REMOVE;
}

static gboolean
watchdog_cb(gpointer data)
{
	/* Sent from the dispatcher's own loop: a stuck loop stops it. */
	notify("WATCHDOG=1");
	return G_SOURCE_CONTINUE;
}

static void
on_changed(void *data)
{
	struct daemon_state *st = data;

	if (!st->status_idle)
		st->status_idle = g_idle_add(status_idle_cb, st);
	v4l2cuse_usbip_server_check(st->usbip);
}

/* Start, restart or stop the USB/IP server as the configuration in force says. */
static void
apply_usbip(struct daemon_state *st)
{
	const struct v4l2cuse_conf *conf = v4l2cuse_manager_conf(st->m);
	g_autofree char *allow = conf->usbip_allow ? g_strjoinv(",", conf->usbip_allow) : NULL;
	g_autofree char *key = conf->usbip_listen ? g_strdup_printf("%s %s", conf->usbip_listen,
								      allow ? allow : "") : NULL;
	g_autofree char *err = NULL;

	if (g_strcmp0(key, st->usbip_key) == 0)
		return;
	g_clear_pointer(&st->usbip, v4l2cuse_usbip_server_free);
	g_free(st->usbip_key);
	st->usbip_key = g_steal_pointer(&key);
	if (!conf->usbip_listen)
		return;
	st->usbip = v4l2cuse_usbip_server_new(conf->usbip_listen,
					      (const char *const *)conf->usbip_allow, st->m, &err);
	if (!st->usbip)
		g_warning("no USB/IP server: %s", err);
}

/*
 * The v4l2loopback control device, as [daemon] loopback-control= says: in
 * a daemon started with a configuration (the one-device command line has
 * no runtime devices: v4l2cuse-ctl add is refused there too).
 */
static void
apply_lbctl(struct daemon_state *st)
{
	const struct v4l2cuse_conf *conf = v4l2cuse_manager_conf(st->m);
	g_autofree char *err = NULL;

	if (!conf->loopback_control || !st->config_path) {
		g_clear_pointer(&st->lbctl, v4l2cuse_lbctl_free);
		return;
	}
	if (st->lbctl)
		return;		/* control-group= changes take effect at the next start */
	st->lbctl = v4l2cuse_lbctl_new(st->m, conf->control_gid, &err);
	if (!st->lbctl)
		g_message("no /dev/v4l2loopback for v4l2loopback-ctl: %s", err);
}

static void
on_settled(void *data)
{
	struct daemon_state *st = data;
	unsigned int serving, total;

	v4l2cuse_manager_count(st->m, &serving, &total);
	update_status(st);
	if (!st->ready_sent || st->reloading) {
		g_message("%s: %u of %u devices serving", st->ready_sent ? "reloaded" : "ready",
			  serving, total);
		notify("READY=1\nSTATUS=%s", st->status);
	}
	st->ready_sent = true;
	st->reloading = false;
}

static void
on_fatal(void *data, const char *error)
{
	struct daemon_state *st = data;

	g_printerr("v4l2cuse: %s\n", error);
	st->exit_code = EXIT_FAILURE;
	g_main_loop_quit(st->loop);
}

static const struct v4l2cuse_manager_events manager_events = {
	.settled = on_settled,
	.fatal = on_fatal,
	.changed = on_changed,
};

/* ---------------------------------------------------------------------- */
/* The configuration */

/* The device the daemon serves with no configuration at all. */
static struct v4l2cuse_conf *
default_conf(void)
{
	static const char text[] = "[device video42]\nnode=video42\n";
	struct v4l2cuse_conf *conf = v4l2cuse_conf_new();
	g_autofree char *err = NULL;

	if (v4l2cuse_conf_parse(conf, "built-in", text, strlen(text), &err) < 0 ||
	    v4l2cuse_conf_finish(conf, &err) < 0)
		g_error("bug: the built-in configuration: %s", err);
	return conf;
}

/* The memory limits from the command line win over [daemon] and the defaults. */
static void
apply_memory_options(const struct daemon_state *st, struct v4l2cuse_conf *conf)
{
	if (st->has_total_memory)
		conf->buffer_memory_limit = st->total_memory;
	if (!st->has_device_memory)
		return;
	conf->device_buffer_memory_limit = st->device_memory;
	for (unsigned int i = 0; i < conf->devices->len; i++) {
		struct v4l2cuse_conf_device *d = conf->devices->pdata[i];

		if (!d->has_buffer_memory_limit)
			d->buffer_memory_limit = st->device_memory;
	}
}

static int
load_config(struct daemon_state *st, struct v4l2cuse_conf **ret_conf, char **ret_error)
{
	bool found = false;
	int r;

	r = v4l2cuse_conf_load(st->config_path, st->config_required, ret_conf, &found,
			       ret_error);
	if (r < 0)
		return r;
	if (!found) {
		g_message("no %s: serving the default device /dev/video42", st->config_path);
		v4l2cuse_conf_free(*ret_conf);
		*ret_conf = default_conf();
	}
	apply_memory_options(st, *ret_conf);
	return 0;
}

/* Build every enabled device once, without CUSE: --check-config. */
static int
check_devices(const struct v4l2cuse_conf *conf, char **ret_error)
{
	for (unsigned int i = 0; i < conf->devices->len; i++) {
		const struct v4l2cuse_conf_device *d = conf->devices->pdata[i];
		struct v4l2cuse_device_config cfg;
		struct v4l2cuse_device *dev;
		g_autofree char *err = NULL;

		if (!d->enabled)
			continue;
		v4l2cuse_conf_device_config(d, &cfg);
		if (!cfg.name)
			cfg.name = "video32";
		dev = v4l2cuse_device_new(&cfg, &err);
		if (!dev) {
			*ret_error = g_strdup_printf("%s: %s", d->where_source, err);
			return -EINVAL;
		}
		v4l2cuse_device_free(dev);
	}
	return 0;
}

static int
reload(void *data, char **ret_error)
{
	struct daemon_state *st = data;
	struct v4l2cuse_conf *conf = NULL;
	int r;

	if (!st->config_path) {
		*ret_error = g_strdup("started with a command-line device: nothing to reload");
		return -EOPNOTSUPP;
	}
	notify("RELOADING=1");
	r = load_config(st, &conf, ret_error);
	if (r == 0) {
		st->reloading = true;
		r = v4l2cuse_manager_apply(st->m, conf, ret_error);
		if (r < 0) {
			v4l2cuse_conf_free(conf);
		} else {
			apply_usbip(st);
			apply_lbctl(st);
		}
	}
	if (r < 0) {
		st->reloading = false;
		g_warning("reload failed, the running configuration stays: %s", *ret_error);
		notify("READY=1");
	}
	return r;
}

static gboolean
on_hup(gpointer data)
{
	g_autofree char *err = NULL;

	g_message("SIGHUP: reloading the configuration");
	reload(data, &err);
	return G_SOURCE_CONTINUE;
}

static gboolean
on_quit_signal(gpointer data)
{
	struct daemon_state *st = data;

	g_message("stopping");
	notify("STOPPING=1");
	g_main_loop_quit(st->loop);
	return G_SOURCE_CONTINUE;
}

/* One device from the command line; usage errors name the option. */
static struct v4l2cuse_conf *
cli_conf(const struct options *o)
{
	struct v4l2cuse_conf *conf = v4l2cuse_conf_new();
	struct v4l2cuse_conf_device *d = g_new0(struct v4l2cuse_conf_device, 1);
	char *err = NULL;

	if (v4l2cuse_parse_node(o->device ? o->device : "video42", &d->node, &err) < 0)
		usage_error("--device: %s", err);
	d->id = g_strdup(d->node);
	d->where = g_strdup("command line");
	d->where_source = g_strdup("--source");
	d->enabled = true;
	d->source = g_strdup(o->source ? o->source : "pattern");
	d->label = g_strdup(o->label);
	d->share = o->share;
	d->usb = o->usb;
	/* Left out: the source's own (a camera's current format; 640x480 for the pattern). */
	if (o->size && v4l2cuse_parse_size(o->size, &d->width, &d->height, &err) < 0)
		usage_error("--size: %s", err);
	if (o->format && v4l2cuse_parse_fourcc(o->format, &d->pixelformat, &err) < 0)
		usage_error("--format: %s", err);
	if (o->fps != G_MININT && (o->fps < 1 || o->fps > V4L2CUSE_MAX_FPS))
		usage_error("--fps: %d is out of range (1..%d)", o->fps, V4L2CUSE_MAX_FPS);
	if (o->fps != G_MININT)
		d->interval = (struct v4l2_fract){ 1, (uint32_t)o->fps };
	d->mode = 0660;
	d->has_mode = true;
	if (o->mode && v4l2cuse_parse_mode(o->mode, &d->mode, &err) < 0)
		usage_error("--mode: %s", err);
	d->gid = (gid_t)-1;
	if (o->group) {
		if (v4l2cuse_parse_group(o->group, &d->gid, &err) < 0)
			usage_error("--group: %s", err);
		d->group = g_strdup(o->group);
	}
	g_ptr_array_add(conf->devices, d);
	conf->retry_interval_s = 0;
	if (v4l2cuse_conf_finish(conf, &err) < 0)
		usage_error("%s", err);
	return conf;
}

static void
options_clear(struct options *o)
{
	g_free(o->device);
	g_free(o->source);
	g_free(o->size);
	g_free(o->format);
	g_free(o->label);
	g_free(o->group);
	g_free(o->mode);
	g_free(o->buffer_memory);
	g_free(o->device_buffer_memory);
	g_free(o->config);
	g_free(o->sandbox);
}

/*
 * The Landlock domain (daemon/sandbox.h) for @conf: its directory (conf.d,
 * reloads), every file its sources and placeholders name, sandbox-paths=,
 * the socket directories, and name resolution when a device needs the
 * network (daemon/network.h). Before any thread exists.
 */
static int
restrict_to(const struct daemon_state *st, const struct v4l2cuse_conf *conf,
	    const char *mode_arg, bool create_dirs, char **ret_error)
{
	g_autoptr(GPtrArray) reads = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *ctl_path = v4l2cuse_control_default_path();
	g_autofree char *ctl_dir = g_path_get_dirname(ctl_path);
	g_autofree char *own_ctl_dir = conf->control_socket ?
				       g_path_get_dirname(conf->control_socket) : NULL;
	const char *sock_dirs[] = { ctl_dir, own_ctl_dir, NULL };
	/* usb=true (daemon/usbface.h): its program, and what attaching writes. */
	const char *exec_files[] = { v4l2cuse_usbface_program(), NULL };
	const char *write_trees[] = { usb_vhci_sysfs_writable(), NULL };
	struct v4l2cuse_sandbox_config cfg = {
		.mode = conf->sandbox,
		.sock_dirs = sock_dirs,
		.exec_files = exec_files,
		.write_trees = write_trees,
		.create_dirs = create_dirs,
		.network = v4l2cuse_net_conf_needs(conf),
	};

	if (mode_arg && v4l2cuse_sandbox_parse_mode(mode_arg, &cfg.mode, ret_error) < 0)
		usage_error("--sandbox: %s", *ret_error);
	if (st->config_path)
		g_ptr_array_add(reads, g_path_get_dirname(st->config_path));
	for (unsigned int i = 0; i < conf->devices->len; i++) {
		const struct v4l2cuse_conf_device *d = conf->devices->pdata[i];

		v4l2cuse_sandbox_spec_paths(d->source, reads);
		v4l2cuse_sandbox_spec_paths(d->placeholder, reads);
	}
	for (unsigned int i = 0; conf->sandbox_paths && conf->sandbox_paths[i]; i++)
		g_ptr_array_add(reads, g_strdup(conf->sandbox_paths[i]));
	g_ptr_array_add(reads, NULL);
	cfg.read_paths = (const char *const *)reads->pdata;
	return v4l2cuse_sandbox_restrict(&cfg, ret_error);
}

/* Run the loop until SIGTERM/SIGINT (or a fatal error); takes @conf. */
static int
serve(struct daemon_state *st, struct v4l2cuse_conf *conf, bool cli)
{
	g_autofree char *err = NULL;
	g_autofree char *ctl_path = g_strdup(conf->control_socket);
	gid_t ctl_gid = conf->control_gid;
	uint64_t wd_usec = 0;

	st->loop = g_main_loop_new(NULL, FALSE);
	g_unix_signal_add(SIGINT, on_quit_signal, st);
	g_unix_signal_add(SIGTERM, on_quit_signal, st);
	g_unix_signal_add(SIGHUP, on_hup, st);
	st->m = v4l2cuse_manager_new(&manager_events, st, cli);
	if (!ctl_path)
		ctl_path = v4l2cuse_control_default_path();

	/* Builds every device first: a bad one stops us before any CUSE work. */
	if (v4l2cuse_manager_apply(st->m, conf, &err) < 0) {
		if (cli && strstr(err, "unknown source"))
			usage_error("%s", err);
		g_printerr("v4l2cuse: %s\n", err);
		v4l2cuse_conf_free(conf);
		st->exit_code = EXIT_USAGE;
	} else {
		g_message("sandbox: %s", v4l2cuse_sandbox_summary());
		/*
		 * A --device daemon serves the shared path too, while no other
		 * daemon does, and gives it to the service (control.h).
		 */
		st->control = v4l2cuse_control_new(ctl_path, ctl_gid,
						   cli ? V4L2CUSE_CONTROL_CMDLINE
						       : V4L2CUSE_CONTROL_CONFIGURED,
						   st->m, cli ? NULL : reload, st);
		apply_usbip(st);
		apply_lbctl(st);
#if HAVE_LIBSYSTEMD
		if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec)
			g_timeout_add(MAX(wd_usec / 2000, 1), watchdog_cb, st);
#endif
		g_main_loop_run(st->loop);
	}

	/* Parked requests are answered (ENODEV) and the nodes removed. */
	g_clear_pointer(&st->usbip, v4l2cuse_usbip_server_free);
	g_free(st->usbip_key);
	v4l2cuse_lbctl_free(st->lbctl);		/* before the devices its ADDs wait for */
	v4l2cuse_control_free(st->control);
	v4l2cuse_manager_free(st->m);
	g_main_loop_unref(st->loop);
	return st->exit_code;
}

int
main(int argc, char **argv)
{
	struct options o = { .fps = G_MININT };
	GOptionEntry entries[] = {
		{ "config", 'c', 0, G_OPTION_ARG_FILENAME, &o.config,
		  "Configuration file (default " V4L2CUSE_CONF_DEFAULT_PATH ", plus conf.d/ next to it)",
		  "FILE" },
		{ "check-config", 0, 0, G_OPTION_ARG_NONE, &o.check_config,
		  "Check the configuration (and build its devices) and exit", NULL },
		{ "sandbox", 0, 0, G_OPTION_ARG_STRING, &o.sandbox,
		  "File-system sandbox (Landlock): auto (default), required or off; "
		  "overrides sandbox= of the configuration", "MODE" },
		{ "device", 'd', 0, G_OPTION_ARG_STRING, &o.device,
		  "One device from the command line: node name (default video42)", "videoN" },
		{ "source", 's', 0, G_OPTION_ARG_STRING, &o.source,
		  "Frame source (default pattern): pattern[:NAME][,opt=...], file:PATH[,opt=...], "
		  "uvc:/dev/videoN[,opt=...], gst:PIPELINE[,opt=...], uri:URI[,opt=...] "
		  "(gst: and uri: with GStreamer)", "SPEC" },
		{ "size", 0, 0, G_OPTION_ARG_STRING, &o.size,
		  "Default frame size (default: the source's; a camera's current one, "
		  "640x480 for the test pattern)", "WxH" },
		{ "format", 0, 0, G_OPTION_ARG_STRING, &o.format,
		  "Default pixel format (default: the source's; a camera's current one, "
		  "YUYV for the test pattern)", "FOURCC" },
		{ "fps", 0, 0, G_OPTION_ARG_INT, &o.fps,
		  "Default frame rate (default: the source's; a camera's current one, 30 for "
		  "the test pattern)", "N" },
		{ "share", 0, 0, G_OPTION_ARG_NONE, &o.share,
		  "Serve several consumers at once, each on its own buffer queue", NULL },
		{ "usb", 0, 0, G_OPTION_ARG_NONE, &o.usb,
		  "Also present the device as a USB camera through vhci-hcd, which every app "
		  "streams from without v4l2cuse-run (docs/usb.md)", NULL },
		{ "label", 0, 0, G_OPTION_ARG_STRING, &o.label,
		  "Device name shown to apps (QUERYCAP card)", "TEXT" },
		{ "group", 0, 0, G_OPTION_ARG_STRING, &o.group,
		  "Group of the node (default video)", "GROUP" },
		{ "mode", 0, 0, G_OPTION_ARG_STRING, &o.mode,
		  "Permissions of the node (default 0660)", "OCTAL" },
		{ "buffer-memory-limit", 0, 0, G_OPTION_ARG_STRING, &o.buffer_memory,
		  "Buffer memory of all devices together (default 2G or half the RAM; "
		  "0: unlimited)", "SIZE" },
		{ "device-buffer-memory-limit", 0, 0, G_OPTION_ARG_STRING,
		  &o.device_buffer_memory,
		  "Buffer memory per device (default 512M; 0: unlimited)", "SIZE" },
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &o.verbose,
		  "Debug messages (same as G_MESSAGES_DEBUG=all)", NULL },
		{ "version", 0, 0, G_OPTION_ARG_NONE, &o.version, "Print the version", NULL },
		{ NULL }
	};
	g_autoptr(GOptionContext) ctx = NULL;
	g_autoptr(GError) error = NULL;
	g_autofree char *err = NULL;
	struct daemon_state st = { .exit_code = EXIT_SUCCESS };
	struct v4l2cuse_conf *conf = NULL;
	bool cli;
	int r;

	setlocale(LC_ALL, "");
	ctx = g_option_context_new("- V4L2 cameras in user space (CUSE)");
	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_set_description(ctx,
		"Examples:\n"
		"  v4l2cuse --device video42 --source pattern:smpte --size 1280x720\n"
		"  v4l2cuse --config /etc/v4l2cuse/v4l2cuse.conf    (see v4l2cuse.conf(5))\n"
		"Apps that stream with mmap (ffmpeg, browsers) run under v4l2cuse-run.\n"
		"v4l2cuse-ctl lists and changes the devices of a running daemon.");
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
	log_to_journal = g_log_writer_is_journald(fileno(stderr));
	g_log_set_writer_func(log_writer, NULL, NULL);

	cli = o.device || o.source || o.size || o.format || o.fps != G_MININT || o.label ||
	      o.group || o.mode || o.share || o.usb;
	if (cli && o.config)
		usage_error("--config cannot be combined with the one-device options "
			    "(--device, --source, ...)");
	if (o.buffer_memory) {
		if (v4l2cuse_parse_memory(o.buffer_memory, &st.total_memory, &err) < 0)
			usage_error("--buffer-memory-limit: %s", err);
		st.has_total_memory = true;
	}
	if (o.device_buffer_memory) {
		if (v4l2cuse_parse_memory(o.device_buffer_memory, &st.device_memory, &err) < 0)
			usage_error("--device-buffer-memory-limit: %s", err);
		st.has_device_memory = true;
	}
	/* Before the configuration: it is read as it will be on reload. */
	if (v4l2cuse_sandbox_drop_caps(&err) < 0) {
		g_printerr("v4l2cuse: %s\n", err);
		options_clear(&o);
		return EXIT_FAILURE;
	}
	if (cli) {
		conf = cli_conf(&o);
		apply_memory_options(&st, conf);
	} else {
		st.config_path = g_strdup(o.config ? o.config : V4L2CUSE_CONF_DEFAULT_PATH);
		st.config_required = o.config != NULL;
		if (load_config(&st, &conf, &err) < 0) {
			g_printerr("v4l2cuse: %s\n", err);
			g_free(st.config_path);
			options_clear(&o);
			return EXIT_USAGE;
		}
	}
	/* Sources are built under the sandbox, as they will be on reload. */
	if (restrict_to(&st, conf, o.sandbox, !o.check_config, &err) < 0) {
		g_printerr("v4l2cuse: %s\n", err);
		v4l2cuse_conf_free(conf);
		g_free(st.config_path);
		options_clear(&o);
		return EXIT_FAILURE;
	}
	if (o.check_config) {
		r = check_devices(conf, &err);
		if (r < 0)
			g_printerr("v4l2cuse: %s\n", err);
		v4l2cuse_conf_free(conf);
		options_clear(&o);
		g_free(st.config_path);
		return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;
	}

	r = serve(&st, conf, cli);
	g_free(st.config_path);
	g_free(st.status);
	options_clear(&o);
	return r;
}
