/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * v4l2cuse-pipewire: publish every v4l2cuse node this user can open as a
 * PipeWire camera (docs/pipewire.md, v4l2cuse-pipewire(1)).
 *
 * One thread: GLib's main loop runs the device monitor and the captures,
 * and PipeWire's own loop is one more GSource on it (its fd, dispatched
 * with pw_loop_iterate(loop, 0)), as mutter and xdg-desktop-portal do.
 * PipeWire's callbacks therefore run on this thread and never need a lock.
 *
 * PipeWire may not run yet when we start (a user unit ordered after it
 * but racing its socket), or may restart: we connect with a back-off of
 * 1, 2, 4 ... 30 s, say so in one line, and publish every camera again
 * once connected.
 */
#include "config.h"

#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <glib.h>
#include <glib-unix.h>
#include <spa/utils/result.h>

#include "bridge.h"

#define EXIT_USAGE 2
#define BACKOFF_MAX_S 30
#define DEV_DIR "/dev"

struct bridge {
	GMainLoop *loop;
	struct pw_loop *pw_loop;
	GSource *pw_source;
	struct pw_context *context;
	struct pw_core *core;
	struct spa_hook core_listener;
	guint connect_id;		/* a connection attempt is scheduled */
	guint disconnect_id;		/* the connection broke: tear it down */
	unsigned int backoff_s;
	bool said_unavailable;		/* the one-line error was printed */
	GHashTable *cameras;		/* node name -> struct bridge_camera */
	GHashTable *feeds;		/* node name -> struct bridge_feed */
	struct bridge_monitor *monitor;
};

/* --- PipeWire's loop as a GSource ------------------------------------------ */

struct pw_gsource {
	GSource base;
	struct pw_loop *loop;
};

static gboolean
pw_gsource_dispatch(GSource *source, GSourceFunc callback, gpointer data)
{
	struct pw_gsource *s = (struct pw_gsource *)source;
	int r = pw_loop_iterate(s->loop, 0);

	if (r < 0 && r != -EINTR)
		g_warning("PipeWire loop: %s", spa_strerror(r));
	return G_SOURCE_CONTINUE;
}

static void
pw_gsource_finalize(GSource *source)
{
	struct pw_gsource *s = (struct pw_gsource *)source;

	pw_loop_leave(s->loop);
}

static GSourceFuncs pw_gsource_funcs = {
	/* No prepare/check: ready exactly when the loop's fd is. */
	.dispatch = pw_gsource_dispatch,
	.finalize = pw_gsource_finalize,
};

static GSource *
pw_gsource_new(struct pw_loop *loop)
{
	struct pw_gsource *s = (struct pw_gsource *)g_source_new(&pw_gsource_funcs,
								   sizeof(*s));

	s->loop = loop;
	g_source_set_name(&s->base, "PipeWire loop");
	g_source_add_unix_fd(&s->base, pw_loop_get_fd(loop), G_IO_IN | G_IO_ERR);
	/* Callbacks run on this thread from now on. */
	pw_loop_enter(loop);
	g_source_attach(&s->base, NULL);
	return &s->base;
}

/* --- the connection --------------------------------------------------------- */

static gboolean bridge_connect(gpointer data);

static void
schedule_connect(struct bridge *b)
{
	b->backoff_s = b->backoff_s ? MIN(b->backoff_s * 2, BACKOFF_MAX_S) : 1;
	b->connect_id = g_timeout_add_seconds(b->backoff_s, bridge_connect, b);
}

static void
set_core_all(struct bridge *b, struct pw_core *core)
{
	GHashTableIter it;
	struct bridge_camera *cam;
	struct bridge_feed *feed;

	g_hash_table_iter_init(&it, b->cameras);
	while (g_hash_table_iter_next(&it, NULL, (gpointer *)&cam))
		bridge_camera_set_core(cam, core);
	g_hash_table_iter_init(&it, b->feeds);
	while (g_hash_table_iter_next(&it, NULL, (gpointer *)&feed))
		bridge_feed_set_core(feed, core);
}

static void
bridge_disconnect(struct bridge *b)
{
	if (!b->core)
		return;
	set_core_all(b, NULL);
	spa_hook_remove(&b->core_listener);
	pw_core_disconnect(b->core);
	b->core = NULL;
}

static gboolean
on_disconnect(gpointer data)
{
	struct bridge *b = data;

	b->disconnect_id = 0;
	bridge_disconnect(b);
	b->backoff_s = 0;
	schedule_connect(b);
	return G_SOURCE_REMOVE;
}

static void
on_core_error(void *data, uint32_t id, int seq, int res, const char *message)
{
	struct bridge *b = data;

	if (id != PW_ID_CORE) {
		/* A stream's object: the stream reports it in its state. */
		g_debug("PipeWire error on object %u: %s (%s)", id, message, spa_strerror(res));
		return;
	}
	if (res != -EPIPE) {
		g_warning("PipeWire: %s (%s)", message, spa_strerror(res));
		return;
	}
	/* Not from inside the core's own callback. */
	g_warning("lost the connection to PipeWire: publishing again once it is back");
	if (!b->disconnect_id)
		b->disconnect_id = g_idle_add(on_disconnect, b);
}

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	/* The connection broke (-EPIPE) or an object failed. */
	.error = on_core_error,
};

static gboolean
bridge_connect(gpointer data)
{
	struct bridge *b = data;
	int e;

	b->connect_id = 0;
	b->core = pw_context_connect(b->context, NULL, 0);
	if (!b->core) {
		e = errno;
		schedule_connect(b);
		if (!b->said_unavailable)
			g_warning("cannot connect to PipeWire (%s): is it running? "
				  "Retrying with a back-off of up to %d s", g_strerror(e),
				  BACKOFF_MAX_S);
		else
			g_debug("cannot connect to PipeWire (%s): next try in %u s", g_strerror(e),
				b->backoff_s);
		b->said_unavailable = true;
		return G_SOURCE_REMOVE;
	}
	if (b->said_unavailable)
		g_message("connected to PipeWire");
	b->said_unavailable = false;
	b->backoff_s = 0;
	pw_core_add_listener(b->core, &b->core_listener, &core_events, b);
	set_core_all(b, b->core);
	return G_SOURCE_REMOVE;
}

/* --- devices ---------------------------------------------------------------- */

static void
on_device_added(struct bridge_device *dev, void *user_data)
{
	struct bridge *b = user_data;
	struct bridge_camera *cam;

	if (dev->feed) {
		struct bridge_feed *feed = bridge_feed_new(dev);

		g_hash_table_replace(b->feeds, g_strdup(dev->name), feed);
		bridge_feed_set_core(feed, b->core);
		return;
	}
	cam = bridge_camera_new(dev);

	/* A name that comes back replaces its old camera. */
	g_hash_table_replace(b->cameras, g_strdup(dev->name), cam);
	if (b->core)
		bridge_camera_set_core(cam, b->core);
	else
		g_message("%s: found (\"%s\"); published once PipeWire is there", dev->path,
			  dev->card);
}

static void
on_device_removed(const char *name, void *user_data)
{
	struct bridge *b = user_data;

	g_hash_table_remove(b->cameras, name);
	g_hash_table_remove(b->feeds, name);
}

static gboolean
on_signal(gpointer data)
{
	struct bridge *b = data;

	g_main_loop_quit(b->loop);
	return G_SOURCE_CONTINUE;
}

int
main(int argc, char **argv)
{
	gboolean verbose = FALSE, version = FALSE;
	const GOptionEntry entries[] = {
		{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose,
		  "Log debug messages (like G_MESSAGES_DEBUG=all)", NULL },
		{ "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL },
		{ NULL }
	};
	g_autoptr(GOptionContext) oc = NULL;
	g_autoptr(GError) error = NULL;
	struct bridge b = { 0 };

	setlocale(LC_ALL, "");
	oc = g_option_context_new(NULL);
	g_option_context_set_summary(oc,
		"Publish every v4l2cuse camera this user can open as a PipeWire camera\n"
		"(media.class Video/Source, media.role Camera), so that desktop apps,\n"
		"the Camera portal, Flatpak apps, browsers and OBS find it. The node is\n"
		"opened only while a PipeWire consumer streams.");
	g_option_context_set_description(oc,
		"PipeWire's socket is found as by every client (PIPEWIRE_REMOTE,\n"
		"XDG_RUNTIME_DIR). See v4l2cuse-pipewire(1).");
	g_option_context_add_main_entries(oc, entries, NULL);
	if (!g_option_context_parse(oc, &argc, &argv, &error)) {
		fprintf(stderr, "v4l2cuse-pipewire: %s (try --help)\n", error->message);
		return EXIT_USAGE;
	}
	if (argc > 1) {
		fprintf(stderr, "v4l2cuse-pipewire: unexpected argument '%s' (try --help)\n",
			argv[1]);
		return EXIT_USAGE;
	}
	if (version) {
		printf("v4l2cuse-pipewire %s (libpipewire %s)\n", PACKAGE_VERSION,
		       pw_get_library_version());
		return EXIT_SUCCESS;
	}
	if (verbose)
		g_log_set_debug_enabled(TRUE);

	pw_init(NULL, NULL);
	b.loop = g_main_loop_new(NULL, FALSE);
	b.cameras = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					  (GDestroyNotify)bridge_camera_free);
	b.feeds = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					(GDestroyNotify)bridge_feed_free);
	b.pw_loop = pw_loop_new(NULL);
	if (!b.pw_loop) {
		fprintf(stderr, "v4l2cuse-pipewire: cannot create a PipeWire loop: %s\n",
			g_strerror(errno));
		return EXIT_FAILURE;
	}
	b.pw_source = pw_gsource_new(b.pw_loop);
	b.context = pw_context_new(b.pw_loop, NULL, 0);
	if (!b.context) {
		fprintf(stderr, "v4l2cuse-pipewire: cannot create a PipeWire context: %s\n",
			g_strerror(errno));
		return EXIT_FAILURE;
	}
	b.monitor = bridge_monitor_new(DEV_DIR, on_device_added, on_device_removed, &b, &error);
	if (!b.monitor) {
		fprintf(stderr, "v4l2cuse-pipewire: %s\n", error->message);
		return EXIT_FAILURE;
	}
	g_unix_signal_add(SIGINT, on_signal, &b);
	g_unix_signal_add(SIGTERM, on_signal, &b);

	bridge_connect(&b);
	bridge_monitor_start(b.monitor);
	g_main_loop_run(b.loop);

	if (b.connect_id)
		g_source_remove(b.connect_id);
	if (b.disconnect_id)
		g_source_remove(b.disconnect_id);
	bridge_monitor_free(b.monitor);
	bridge_disconnect(&b);
	g_hash_table_destroy(b.cameras);
	g_hash_table_destroy(b.feeds);
	pw_context_destroy(b.context);
	g_source_destroy(b.pw_source);
	g_source_unref(b.pw_source);
	pw_loop_destroy(b.pw_loop);
	g_main_loop_unref(b.loop);
	pw_deinit();
	return EXIT_SUCCESS;
}
