/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/control.c, the control socket, with the real v4l2cuse-ctl
 * ($V4L2CUSE_CTL) as the client and managers on a fake CUSE (fake-cuse.c):
 * a daemon started with --device answers list and stats and refuses what
 * needs a configuration; daemons sharing one path never take a socket
 * another one listens on, except that a daemon started with a
 * configuration takes it over from a --device one, which gives it up; a
 * stale socket is taken; a daemon removes only its own socket; and what
 * v4l2cuse-ctl says when nobody listens.
 *
 * The "other daemon" is this program run again (--holder KIND PATH): it
 * serves until SIGTERM or the end of the test (its stdin), so the daemon
 * under test may block on it.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <gio/gio.h>
#include <glib.h>
#include <glib-unix.h>
#include <glib/gstdio.h>

#include "conf.h"
#include "manager.h"
#include "control.h"
#include "test-main.h"

#define CMDLINE_DEV	"[device video42]\nnode = video42\n"
#define CONFIGURED_DEV	"[device cfg]\nnode = video44\n"
#define OTHER_DEV	"[device other]\nnode = video45\n"
#define HOLDER_DEV	"[device held]\nnode = video50\n"

/* One daemon's devices and control socket, in this process. */
struct daemon {
	struct v4l2cuse_manager *m;
	struct v4l2cuse_control *c;
	bool settled;
	unsigned int reloads;
};

static void
on_settled(void *data)
{
	((struct daemon *)data)->settled = true;
}

static void
on_fatal(void *data, const char *error)
{
	g_error("the daemon stopped: %s", error);
}

static int
fake_reload(void *data, char **ret_error)
{
	((struct daemon *)data)->reloads++;
	return 0;
}

/* Devices of @text serving, then the control socket on @path, as serve() does. */
static void
daemon_start(struct daemon *d, enum v4l2cuse_control_kind kind, const char *text,
	     const char *path)
{
	static const struct v4l2cuse_manager_events ev = {
		.settled = on_settled, .fatal = on_fatal,
	};
	struct v4l2cuse_conf *conf = v4l2cuse_conf_new();
	gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
	g_autofree char *err = NULL;

	if (v4l2cuse_conf_parse(conf, "test.conf", text, strlen(text), &err) < 0 ||
	    v4l2cuse_conf_finish(conf, &err) < 0)
		g_error("%s", err);
	d->m = v4l2cuse_manager_new(&ev, d, kind == V4L2CUSE_CONTROL_CMDLINE);
	if (v4l2cuse_manager_apply(d->m, conf, &err) < 0)
		g_error("%s", err);
	while (!d->settled && g_get_monotonic_time() < end)
		g_main_context_iteration(NULL, TRUE);
	g_assert_true(d->settled);
	d->c = v4l2cuse_control_new(path, (gid_t)-1, kind, d->m,
				    kind == V4L2CUSE_CONTROL_CMDLINE ? NULL : fake_reload, d);
}

static void
daemon_stop(struct daemon *d)
{
	g_clear_pointer(&d->c, v4l2cuse_control_free);
	g_clear_pointer(&d->m, v4l2cuse_manager_free);
}

static gboolean
on_sigterm(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_CONTINUE;
}

/* Our stdin is a pipe from the test, never written: it ends when the test does. */
static gboolean
on_test_gone(int fd, GIOCondition cond, gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

/* The other daemon: this program with --holder KIND PATH. */
static int
holder_main(const char *kind, const char *path)
{
	g_autoptr(GMainLoop) loop = g_main_loop_new(NULL, FALSE);
	struct daemon d = { 0 };

	daemon_start(&d, strcmp(kind, "cmdline") == 0 ? V4L2CUSE_CONTROL_CMDLINE
						       : V4L2CUSE_CONTROL_CONFIGURED,
		     HOLDER_DEV, path);
	printf("serving %d\n", v4l2cuse_control_serving(d.c));
	fflush(stdout);
	g_unix_signal_add(SIGTERM, on_sigterm, loop);
	g_unix_fd_add(STDIN_FILENO, G_IO_IN | G_IO_HUP | G_IO_ERR, on_test_gone, loop);
	g_main_loop_run(loop);
	daemon_stop(&d);
	return 0;
}

struct fixture {
	char *dir;
	char *run_dir;			/* the shim sockets' ($RUNTIME_DIRECTORY) */
	char *path;			/* the shared control socket */
	struct daemon a, b;
	GSubprocess *holder;
};

static void
fixture_setup(struct fixture *f, gconstpointer data)
{
	f->dir = g_dir_make_tmp("v4l2cuse-control-XXXXXX", NULL);
	g_assert_nonnull(f->dir);
	f->run_dir = g_build_filename(f->dir, "run", NULL);
	g_assert_cmpint(g_mkdir(f->run_dir, 0755), ==, 0);
	g_setenv("RUNTIME_DIRECTORY", f->run_dir, TRUE);
	f->path = g_build_filename(f->dir, "control.sock", NULL);
}

static void
fixture_teardown(struct fixture *f, gconstpointer data)
{
	daemon_stop(&f->b);
	daemon_stop(&f->a);
	if (f->holder) {
		g_subprocess_send_signal(f->holder, SIGTERM);
		g_subprocess_wait(f->holder, NULL, NULL);
		g_object_unref(f->holder);
	}
	g_unsetenv("RUNTIME_DIRECTORY");
	g_assert_cmpint(g_rmdir(f->run_dir), ==, 0);	/* no shim socket left behind */
	g_remove(f->path);
	g_assert_cmpint(g_rmdir(f->dir), ==, 0);
	g_free(f->path);
	g_free(f->run_dir);
	g_free(f->dir);
}

V4L2CUSE_TEST_FIXTURE(struct fixture, fixture_setup, fixture_teardown);

struct ctl_run {
	bool done;
	char *out, *err;
	GError *error;
};

static void
ctl_done(GObject *src, GAsyncResult *res, gpointer data)
{
	struct ctl_run *run = data;

	g_subprocess_communicate_utf8_finish(G_SUBPROCESS(src), res, &run->out, &run->err,
					     &run->error);
	run->done = true;
}

/*
 * v4l2cuse-ctl --socket @path ARGS...: its exit status, stdout and stderr.
 * Our loop runs meanwhile: the daemons of this process answer it.
 */
static int G_GNUC_NULL_TERMINATED
ctl(const char *path, char **ret_out, char **ret_err, ...)
{
	const char *exe = g_getenv("V4L2CUSE_CTL");
	g_autoptr(GPtrArray) argv = g_ptr_array_new();
	g_autoptr(GSubprocess) sp = NULL;
	g_autoptr(GError) error = NULL;
	struct ctl_run run = { 0 };
	const char *arg;
	va_list ap;

	g_assert_nonnull(exe);
	g_ptr_array_add(argv, (char *)exe);
	g_ptr_array_add(argv, (char *)"--socket");
	g_ptr_array_add(argv, (char *)path);
	va_start(ap, ret_err);
	while ((arg = va_arg(ap, const char *)))
		g_ptr_array_add(argv, (char *)arg);
	va_end(ap);
	g_ptr_array_add(argv, NULL);
	sp = g_subprocess_newv((const char *const *)argv->pdata,
			       G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
			       &error);
	g_assert_no_error(error);
	g_subprocess_communicate_utf8_async(sp, NULL, NULL, ctl_done, &run);
	while (!run.done)
		g_main_context_iteration(NULL, TRUE);
	g_assert_no_error(run.error);
	g_subprocess_wait(sp, NULL, &error);
	g_assert_no_error(error);
	g_test_message("v4l2cuse-ctl %s: exit %d\n%s%s", (char *)argv->pdata[3],
		       g_subprocess_get_exit_status(sp), run.out, run.err);
	*ret_out = run.out;
	*ret_err = run.err;
	return g_subprocess_get_exit_status(sp);
}

/* The device ids in `v4l2cuse-ctl list` (the first column after the header). */
static char *
listed_ids(const char *path)
{
	g_autofree char *out = NULL, *err = NULL;
	g_auto(GStrv) lines = NULL;
	GString *ids = g_string_new(NULL);

	g_assert_cmpint(ctl(path, &out, &err, "list", NULL), ==, 0);
	lines = g_strsplit(out, "\n", -1);
	for (unsigned int i = 1; lines[i]; i++) {
		g_auto(GStrv) cols = g_strsplit_set(lines[i], " ", 2);

		if (cols[0] && *cols[0])
			g_string_append_printf(ids, "%s%s", ids->len ? " " : "", cols[0]);
	}
	return g_string_free(ids, FALSE);
}

/* The other daemon, serving (or not, @serving) once this returns. */
static void
holder_start(struct fixture *f, const char *kind, bool serving)
{
	g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
	const char *argv[] = { self, "--holder", kind, f->path, NULL };
	g_autoptr(GError) error = NULL;
	GInputStream *out;
	char line[32] = "";

	/* Its stdin: a failed test (abort) does not leave it running. */
	f->holder = g_subprocess_newv(argv, G_SUBPROCESS_FLAGS_STDIN_PIPE |
				      G_SUBPROCESS_FLAGS_STDOUT_PIPE |
				      G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
	g_assert_no_error(error);
	out = g_subprocess_get_stdout_pipe(f->holder);
	/* Byte by byte: the rest stays in the pipe for holder_stop(). */
	for (size_t n = 0; n + 1 < sizeof(line) && !strchr(line, '\n'); n++)
		g_assert_cmpint(g_input_stream_read(out, line + n, 1, NULL, &error), ==, 1);
	g_assert_cmpstr(line, ==, serving ? "serving 1\n" : "serving 0\n");
}

/* SIGTERM to the other daemon: what it logged. */
static char *
holder_stop(struct fixture *f)
{
	g_autoptr(GError) error = NULL;
	char *out = NULL, *err = NULL;

	g_subprocess_send_signal(f->holder, SIGTERM);
	g_subprocess_communicate_utf8(f->holder, NULL, NULL, &out, &err, &error);
	g_assert_no_error(error);
	g_assert_true(g_subprocess_get_if_exited(f->holder));
	g_assert_cmpint(g_subprocess_get_exit_status(f->holder), ==, 0);
	g_clear_object(&f->holder);
	g_test_message("the other daemon logged:\n%s", err);
	g_free(out);
	return err;
}

static ino_t
inode_of(const char *path)
{
	struct stat st;

	g_assert_cmpint(lstat(path, &st), ==, 0);
	g_assert_true(S_ISSOCK(st.st_mode));
	return st.st_ino;
}

V4L2CUSE_TEST_F("/control/cmdline/list-and-stats", test_cmdline_list)
{
	g_autofree char *out = NULL, *err = NULL, *ids = NULL;

	/* A --device daemon with the path to itself serves it. */
	daemon_start(&f->a, V4L2CUSE_CONTROL_CMDLINE, CMDLINE_DEV, f->path);
	g_assert_true(v4l2cuse_control_serving(f->a.c));
	ids = listed_ids(f->path);
	g_assert_cmpstr(ids, ==, "video42");
	g_assert_cmpint(ctl(f->path, &out, &err, "stats", NULL), ==, 0);
	g_assert_nonnull(strstr(out, "[device video42]\nnode video42\nstate serving\n"));
}

V4L2CUSE_TEST_F("/control/cmdline/refuses-add-remove-reload", test_cmdline_refuses)
{
	static const char why[] = "serves the one device of its command line (--device): ";
	g_autofree char *out = NULL, *err = NULL, *ids = NULL;

	daemon_start(&f->a, V4L2CUSE_CONTROL_CMDLINE, CMDLINE_DEV, f->path);

	/* An added device whose node failed would end this daemon: refused. */
	g_assert_cmpint(ctl(f->path, &out, &err, "add", "extra", "node=video43", NULL), ==, 1);
	g_assert_nonnull(strstr(err, why));
	g_assert_nonnull(strstr(err, "added and removed in a daemon started with a "
				     "configuration"));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&err, g_free);
	g_assert_cmpint(ctl(f->path, &out, &err, "remove", "video42", NULL), ==, 1);
	g_assert_nonnull(strstr(err, why));
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&err, g_free);
	g_assert_cmpint(ctl(f->path, &out, &err, "reload", NULL), ==, 1);
	g_assert_nonnull(strstr(err, "it has no configuration to reload"));
	ids = listed_ids(f->path);
	g_assert_cmpstr(ids, ==, "video42");

	/* What works on one device still does. */
	g_clear_pointer(&out, g_free);
	g_clear_pointer(&err, g_free);
	g_assert_cmpint(ctl(f->path, &out, &err, "set-placeholder", "video42", "pattern:smpte",
			    NULL), ==, 0);
}

V4L2CUSE_TEST_F("/control/cmdline/does-not-steal", test_cmdline_does_not_steal)
{
	g_autofree char *ids = NULL, *ids_after = NULL, *log = NULL;
	ino_t ino;

	holder_start(f, "cmdline", true);
	ino = inode_of(f->path);

	/* A second --device daemon leaves the first one's socket alone. */
	daemon_start(&f->a, V4L2CUSE_CONTROL_CMDLINE, CMDLINE_DEV, f->path);
	g_assert_false(v4l2cuse_control_serving(f->a.c));
	g_assert_cmpuint(inode_of(f->path), ==, ino);
	ids = listed_ids(f->path);
	g_assert_cmpstr(ids, ==, "held");

	/* Nor does it remove that socket when it ends. */
	daemon_stop(&f->a);
	ids_after = listed_ids(f->path);
	g_assert_cmpstr(ids_after, ==, "held");
	log = holder_stop(f);
	g_assert_null(strstr(log, "given to"));
}

V4L2CUSE_TEST_F("/control/configured/takes-over-from-cmdline", test_configured_takes_over)
{
	g_autofree char *ids = NULL, *ids_after = NULL, *log = NULL, *given = NULL;

	holder_start(f, "cmdline", true);

	/* The service started after a --device daemon still gets its socket... */
	daemon_start(&f->a, V4L2CUSE_CONTROL_CONFIGURED, CONFIGURED_DEV, f->path);
	g_assert_true(v4l2cuse_control_serving(f->a.c));
	ids = listed_ids(f->path);
	g_assert_cmpstr(ids, ==, "cfg");

	/* ...which the other one gave up, and does not remove when it ends. */
	log = holder_stop(f);
	given = g_strdup_printf("control socket %s given to v4l2cuse pid %d", f->path,
				(int)getpid());
	g_assert_nonnull(strstr(log, given));
	ids_after = listed_ids(f->path);
	g_assert_cmpstr(ids_after, ==, "cfg");
}

V4L2CUSE_TEST_F("/control/configured/keeps-from-configured", test_configured_keeps)
{
	g_autofree char *ids = NULL, *log = NULL;
	ino_t ino;

	holder_start(f, "configured", true);
	ino = inode_of(f->path);

	/* A daemon started with a configuration keeps it from every other one. */
	daemon_start(&f->a, V4L2CUSE_CONTROL_CONFIGURED, CONFIGURED_DEV, f->path);
	g_assert_false(v4l2cuse_control_serving(f->a.c));
	daemon_start(&f->b, V4L2CUSE_CONTROL_CMDLINE, CMDLINE_DEV, f->path);
	g_assert_false(v4l2cuse_control_serving(f->b.c));
	g_assert_cmpuint(inode_of(f->path), ==, ino);
	ids = listed_ids(f->path);
	g_assert_cmpstr(ids, ==, "held");
	log = holder_stop(f);
	g_assert_null(strstr(log, "given to"));
}

/* A socket file nobody listens on: what a daemon killed with SIGKILL leaves. */
static void
make_stale(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	g_assert_cmpint(fd, >=, 0);
	g_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
	g_assert_cmpint(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
	close(fd);
}

V4L2CUSE_TEST_F("/control/stale-socket-taken", test_stale_taken)
{
	g_autofree char *ids = NULL;

	make_stale(f->path);
	daemon_start(&f->a, V4L2CUSE_CONTROL_CMDLINE, CMDLINE_DEV, f->path);
	g_assert_true(v4l2cuse_control_serving(f->a.c));
	ids = listed_ids(f->path);
	g_assert_cmpstr(ids, ==, "video42");
}

V4L2CUSE_TEST_F("/control/not-a-socket-left-alone", test_not_a_socket)
{
	g_autofree char *text = NULL;

	g_assert_true(g_file_set_contents(f->path, "mine", -1, NULL));
	daemon_start(&f->a, V4L2CUSE_CONTROL_CONFIGURED, CONFIGURED_DEV, f->path);
	g_assert_false(v4l2cuse_control_serving(f->a.c));
	daemon_stop(&f->a);
	g_assert_true(g_file_get_contents(f->path, &text, NULL, NULL));
	g_assert_cmpstr(text, ==, "mine");
}

V4L2CUSE_TEST_F("/control/removes-only-its-own", test_removes_only_its_own)
{
	g_autofree char *ids = NULL;

	daemon_start(&f->a, V4L2CUSE_CONTROL_CONFIGURED, CONFIGURED_DEV, f->path);
	g_assert_true(v4l2cuse_control_serving(f->a.c));
	/* Its directory emptied (systemd does so to RuntimeDirectory=)... */
	g_assert_cmpint(g_unlink(f->path), ==, 0);
	/* ...another daemon serves the path... */
	daemon_start(&f->b, V4L2CUSE_CONTROL_CMDLINE, OTHER_DEV, f->path);
	g_assert_true(v4l2cuse_control_serving(f->b.c));
	/* ...and keeps it when the first one ends. */
	daemon_stop(&f->a);
	ids = listed_ids(f->path);
	g_assert_cmpstr(ids, ==, "other");
}

V4L2CUSE_TEST_F("/control/ctl/nobody-listens", test_ctl_nobody_listens)
{
	static const char why[] = "v4l2cuse-ctl: no v4l2cuse listens there: none is running, "
				  "or the one running has another control-socket= (use "
				  "--socket), or it runs without a control socket because "
				  "another daemon held this one when it started";
	g_autofree char *out = NULL, *err = NULL, *out2 = NULL, *err2 = NULL;

	/* No file: perhaps a daemon runs whose holder of the path has ended. */
	g_assert_cmpint(ctl(f->path, &out, &err, "list", NULL), ==, 1);
	g_assert_nonnull(strstr(err, "No such file or directory"));
	g_assert_nonnull(strstr(err, why));

	make_stale(f->path);
	g_assert_cmpint(ctl(f->path, &out2, &err2, "list", NULL), ==, 1);
	g_assert_nonnull(strstr(err2, "v4l2cuse-ctl: the socket was left by a v4l2cuse that "
				      "ended; no v4l2cuse listens there: "));
}

int
main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--holder") == 0)
		return holder_main(argv[2], argv[3]);
	g_test_init(&argc, &argv, NULL);
	v4l2cuse_test_add_registered();
	return g_test_run();
}
