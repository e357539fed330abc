/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket: one request line per connection, a text reply ending
 * in "ok" or "error <message>" (include/v4l2cuse/ctl-protocol.h).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <glib.h>
#include <glib-unix.h>

#include "v4l2cuse/ctl-protocol.h"
#include "util/cleanup.h"
#include "conf.h"
#include "manager.h"
#include "control.h"

#define CTL_MAX_GROUPS	65536
/* How long a daemon waits for the one it takes the socket over from. */
#define CTL_YIELD_TIMEOUT_MS	2000

struct ctl_client {
	struct v4l2cuse_control *c;
	GList link;
	int fd;
	guint watch;
	guint timeout;
	struct ucred cred;
	GString *buf;
};

struct v4l2cuse_control {
	char *path;
	gid_t gid;
	enum v4l2cuse_control_kind kind;
	int listen_fd;		/* -1: no socket (never had one, or gave it away) */
	guint listen_watch;
	dev_t dev;		/* the socket file it bound: only that one is removed */
	ino_t ino;
	GQueue clients;
	struct v4l2cuse_manager *m;
	v4l2cuse_control_reload_fn reload;
	void *data;
};

char *
v4l2cuse_control_default_path(void)
{
	const char *env = g_getenv("RUNTIME_DIRECTORY");

	if (env && *env) {
		g_autofree char *dir = g_strndup(env, strcspn(env, ":"));

		return g_build_filename(dir, V4L2CUSE_CTL_SOCKET_NAME, NULL);
	}
	return g_build_filename(V4L2CUSE_CTL_RUNDIR, V4L2CUSE_CTL_SOCKET_NAME, NULL);
}

static void
client_free(struct ctl_client *cl)
{
	g_queue_unlink(&cl->c->clients, &cl->link);
	if (cl->watch)
		g_source_remove(cl->watch);
	if (cl->timeout)
		g_source_remove(cl->timeout);
	close(cl->fd);
	g_string_free(cl->buf, TRUE);
	g_free(cl);
}

/* Best effort, never blocks: a reply fits the socket buffer. */
static void
client_send(struct ctl_client *cl, const GString *out)
{
	size_t done = 0;

	while (done < out->len) {
		ssize_t n = send(cl->fd, out->str + done, out->len - done,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			g_debug("control: reply cut short: %s", g_strerror(errno));
			return;
		}
		done += (size_t)n;
	}
}

static bool
peer_in_group(int fd, const struct ucred *cred, gid_t gid)
{
	socklen_t len = 64 * sizeof(gid_t);
	g_autofree gid_t *groups = NULL;

	if (cred->uid == 0)
		return true;
	if (gid == (gid_t)-1)
		return false;
	if (cred->gid == gid)
		return true;
	for (int tries = 0; tries < 2; tries++) {
		g_free(groups);
		groups = g_malloc(len);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0)
			break;
		if (errno != ERANGE || len > CTL_MAX_GROUPS * sizeof(gid_t))
			return false;
	}
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/* ---------------------------------------------------------------------- */
/* Commands */

static int
cmd_add(struct v4l2cuse_control *c, char **argv, GString *out, char **ret_error)
{
	return v4l2cuse_manager_add_keys(c->m, argv[1],
					 argv[1] ? (const char *const *)argv + 2 : NULL,
					 ret_error);
}

/* add, remove and reload in a daemon whose one device is its command line. */
static int
cmd_refused_cmdline(const char *cmd, char **ret_error)
{
	*ret_error = g_strdup_printf("this v4l2cuse (pid %d) serves the one device of its command "
				     "line (--device): %s", (int)getpid(),
				     strcmp(cmd, "reload") == 0
					? "it has no configuration to reload"
					: "devices are added and removed in a daemon started with "
					  "a configuration");
	return -EOPNOTSUPP;
}

static void
control_stop_listening(struct v4l2cuse_control *c)
{
	struct stat st;

	if (c->listen_fd < 0)
		return;
	g_source_remove(c->listen_watch);
	c->listen_watch = 0;
	clear_fd(&c->listen_fd);
	/*
	 * Only our own file: the directory may have been emptied since
	 * (systemd removes RuntimeDirectory= when its service stops) and
	 * another daemon may listen on the path now.
	 */
	if (lstat(c->path, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino)
		unlink(c->path);
}

/* "yield-socket": a daemon started with a configuration takes the path over. */
static int
cmd_yield_socket(struct ctl_client *cl, char **ret_error)
{
	struct v4l2cuse_control *c = cl->c;

	if (c->kind != V4L2CUSE_CONTROL_CMDLINE) {
		*ret_error = g_strdup("this daemon was started with a configuration and keeps "
				      "its control socket");
		return -EBUSY;
	}
	if (c->listen_fd < 0) {
		*ret_error = g_strdup("this daemon has given its control socket up already");
		return -EALREADY;
	}
	/* Closed and removed before the answer: the asker binds when it reads "ok". */
	control_stop_listening(c);
	g_message("control socket %s given to v4l2cuse pid %d, started with a configuration: "
		  "v4l2cuse-ctl reaches that one now", c->path, (int)cl->cred.pid);
	return 0;
}

static int
client_run(struct ctl_client *cl, char **argv, GString *out, char **ret_error)
{
	struct v4l2cuse_control *c = cl->c;
	const char *cmd = argv[0];
	unsigned int argc = g_strv_length(argv);

	if (strcmp(cmd, "list") == 0 && argc == 1) {
		v4l2cuse_manager_list(c->m, out);
		return 0;
	}
	if (strcmp(cmd, "stats") == 0 && argc == 1) {
		v4l2cuse_manager_stats(c->m, out);
		return 0;
	}
	if (c->kind == V4L2CUSE_CONTROL_CMDLINE &&
	    (strcmp(cmd, "add") == 0 || strcmp(cmd, "remove") == 0 || strcmp(cmd, "reload") == 0))
		return cmd_refused_cmdline(cmd, ret_error);
	if (strcmp(cmd, "add") == 0)
		return cmd_add(c, argv, out, ret_error);
	if (strcmp(cmd, "remove") == 0 && argc == 2)
		return v4l2cuse_manager_remove(c->m, argv[1], ret_error);
	if (strcmp(cmd, "set-source") == 0 && argc == 3)
		return v4l2cuse_manager_set_source(c->m, argv[1], argv[2], ret_error);
	if (strcmp(cmd, "set-placeholder") == 0 && argc == 3)
		return v4l2cuse_manager_set_placeholder(c->m, argv[1],
							g_ascii_strcasecmp(argv[2], "none") == 0
								? NULL : argv[2], ret_error);
	if (strcmp(cmd, "reload") == 0 && argc == 1)
		return c->reload(c->data, ret_error);
	/* Daemon to daemon (v4l2cuse_control_new()), not in v4l2cuse-ctl's list. */
	if (strcmp(cmd, "yield-socket") == 0 && argc == 1)
		return cmd_yield_socket(cl, ret_error);
	*ret_error = g_strdup_printf("unknown command or wrong arguments: '%s' (known: list, stats, "
				     "add ID [KEY=VALUE...], remove ID, set-source ID SPEC, "
				     "set-placeholder ID SPEC|none, reload)", cmd);
	return -EINVAL;
}

static void
client_handle(struct ctl_client *cl, const char *line)
{
	g_auto(GStrv) argv = g_strsplit(line, "\t", 64);
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree char *err = NULL;
	int r;

	if (!argv[0] || !*argv[0] || !g_utf8_validate(line, -1, NULL)) {
		g_string_append(out, "error empty or invalid request\n");
		client_send(cl, out);
		return;
	}
	/* Changes are logged; the read-only commands are not (a monitor may poll). */
	if (strcmp(argv[0], "list") != 0 && strcmp(argv[0], "stats") != 0)
		g_message("control: uid %u pid %d: %s%s%s", (unsigned int)cl->cred.uid,
			  (int)cl->cred.pid, argv[0], argv[1] ? " " : "", argv[1] ? argv[1] : "");
	r = client_run(cl, argv, out, &err);
	if (r < 0) {
		g_strdelimit(err, "\n", ' ');
		g_string_append_printf(out, "error %s\n", err ? err : g_strerror(-r));
	} else {
		g_string_append(out, "ok\n");
	}
	client_send(cl, out);
}

static gboolean
client_on_data(int fd, GIOCondition cond, gpointer data)
{
	struct ctl_client *cl = data;
	char chunk[1024];
	ssize_t n;
	char *nl;

	n = recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return G_SOURCE_CONTINUE;
	if (n <= 0) {
		cl->watch = 0;
		client_free(cl);
		return G_SOURCE_REMOVE;
	}
	g_string_append_len(cl->buf, chunk, n);
	nl = memchr(cl->buf->str, '\n', cl->buf->len);
	if (!nl && cl->buf->len < V4L2CUSE_CTL_MAX_REQUEST)
		return G_SOURCE_CONTINUE;
	if (!nl || memchr(cl->buf->str, '\0', nl - cl->buf->str)) {
		GString msg = { .str = (char *)"error request too long or not text\n" };

		msg.len = strlen(msg.str);
		client_send(cl, &msg);
	} else {
		*nl = '\0';
		client_handle(cl, cl->buf->str);
	}
	cl->watch = 0;
	client_free(cl);
	return G_SOURCE_REMOVE;
}

static gboolean
client_on_timeout(gpointer data)
{
	struct ctl_client *cl = data;

	cl->timeout = 0;
	client_free(cl);
	return G_SOURCE_REMOVE;
}

static gboolean
control_on_accept(int fd, GIOCondition cond, gpointer data)
{
	struct v4l2cuse_control *c = data;
	struct ctl_client *cl;
	socklen_t len = sizeof(struct ucred);
	int cfd;

	cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0)
		return G_SOURCE_CONTINUE;
	if (g_queue_get_length(&c->clients) >= V4L2CUSE_CTL_MAX_CLIENTS) {
		close(cfd);
		return G_SOURCE_CONTINUE;
	}
	cl = g_new0(struct ctl_client, 1);
	cl->c = c;
	cl->fd = cfd;
	cl->buf = g_string_new(NULL);
	cl->link.data = cl;
	g_queue_push_tail_link(&c->clients, &cl->link);
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cl->cred, &len) < 0 ||
	    !peer_in_group(cfd, &cl->cred, c->gid)) {
		GString msg = { .str = (char *)"error permission denied: root or the "
					       "control group only\n" };

		msg.len = strlen(msg.str);
		g_message("control: refused uid %u pid %d", (unsigned int)cl->cred.uid,
			  (int)cl->cred.pid);
		client_send(cl, &msg);
		client_free(cl);
		return G_SOURCE_CONTINUE;
	}
	cl->watch = g_unix_fd_add(cfd, G_IO_IN | G_IO_HUP | G_IO_ERR, client_on_data, cl);
	cl->timeout = g_timeout_add_seconds(V4L2CUSE_CTL_TIMEOUT_S, client_on_timeout, cl);
	return G_SOURCE_CONTINUE;
}

/* "v4l2cuse pid 123", or "another v4l2cuse" when its pid is not known here. */
static char *
holder_name(pid_t pid)
{
	return pid > 0 ? g_strdup_printf("v4l2cuse pid %d", (int)pid)
		       : g_strdup("another v4l2cuse");
}

/*
 * Who holds @sa's path. 0: nobody, the path is free (no file, or a socket
 * nobody listens on, left by a daemon that ended: removed). -EADDRINUSE: a
 * daemon listens there; *ret_fd is a connection to it, *ret_pid its pid
 * (0: unknown). Else -errno, and nothing is removed: any other connect()
 * error (EACCES, ...) says nothing about whether a daemon listens.
 */
static int
control_probe(const struct sockaddr_un *sa, int *ret_fd, pid_t *ret_pid, char **ret_error)
{
	_cleanup_close_ int fd = -1;
	struct ucred cred = { 0 };
	socklen_t len = sizeof(cred);
	struct stat st;
	int r;

	if (lstat(sa->sun_path, &st) < 0) {
		r = -errno;
		if (r == -ENOENT)
			return 0;
		*ret_error = g_strdup_printf("cannot look at %s: %s", sa->sun_path, g_strerror(-r));
		return r;
	}
	if (!S_ISSOCK(st.st_mode)) {
		*ret_error = g_strdup_printf("%s exists and is not a socket", sa->sun_path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		r = -errno;
		*ret_error = g_strdup_printf("socket: %s", g_strerror(-r));
		return r;
	}
	/* EAGAIN: its backlog is full, so someone listens. */
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 || errno == EAGAIN) {
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
			cred.pid = 0;
		*ret_fd = steal_fd(&fd);
		*ret_pid = cred.pid;
		return -EADDRINUSE;
	}
	r = -errno;
	if (r == -ENOENT)
		return 0;		/* removed since the lstat() */
	if (r != -ECONNREFUSED) {
		*ret_error = g_strdup_printf("cannot tell whether a daemon listens on %s: %s",
					     sa->sun_path, g_strerror(-r));
		return r;
	}
	if (unlink(sa->sun_path) < 0 && errno != ENOENT) {
		r = -errno;
		*ret_error = g_strdup_printf("cannot remove the stale %s: %s", sa->sun_path,
					     g_strerror(-r));
		return r;
	}
	g_debug("control: removed %s, left by a daemon that ended", sa->sun_path);
	return 0;
}

/*
 * Ask the daemon at the other end of @fd to give its socket up
 * ("yield-socket"): 0 once it has closed and removed it, else -errno and
 * why in *ret_error. Waits at most CTL_YIELD_TIMEOUT_MS, before our loop
 * runs (the socket is there before READY=1, as without a holder).
 */
static int
control_ask_yield(int fd, char **ret_error)
{
	static const char req[] = "yield-socket\n";
	gint64 end = g_get_monotonic_time() + CTL_YIELD_TIMEOUT_MS * G_GINT64_CONSTANT(1000);
	g_autoptr(GString) reply = g_string_new(NULL);
	char buf[512];
	ssize_t n;

	if (send(fd, req, strlen(req), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)strlen(req)) {
		*ret_error = g_strdup_printf("asking it: %s", g_strerror(errno));
		return -EIO;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		gint64 left_ms = (end - g_get_monotonic_time()) / 1000;

		if (left_ms <= 0) {
			*ret_error = g_strdup_printf("no answer in %d ms", CTL_YIELD_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
		if (poll(&pfd, 1, (int)left_ms) < 0 && errno != EINTR) {
			*ret_error = g_strdup_printf("poll: %s", g_strerror(errno));
			return -EIO;
		}
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0 || reply->len + (size_t)n > V4L2CUSE_CTL_MAX_REQUEST) {
			*ret_error = g_strdup_printf("its answer: %s",
						     n < 0 ? g_strerror(errno) : "too long");
			return -EIO;
		}
		g_string_append_len(reply, buf, n);
	}
	/* The whole answer is one line: "ok", or "error <why>". */
	if (strcmp(reply->str, "ok\n") == 0)
		return 0;
	g_strchomp(reply->str);
	*ret_error = g_strdup(g_str_has_prefix(reply->str, "error ") ? reply->str + 6
				: "it closed the connection without an answer");
	return -EBUSY;
}

/* Listen on c->path, as v4l2cuse_control_new() says; 0 or -errno and why. */
static int
control_listen(struct v4l2cuse_control *c, char **ret_error)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	g_autofree char *dir = g_path_get_dirname(c->path);
	g_autofree char *holder = NULL;
	g_autofree char *why = NULL;
	_cleanup_close_ int holder_fd = -1;
	_cleanup_close_ int fd = -1;
	pid_t pid = 0;
	struct stat st;
	int r;

	if (strlen(c->path) >= sizeof(sa.sun_path)) {
		*ret_error = g_strdup_printf("control socket path %s is too long", c->path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, c->path);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		r = -errno;
		*ret_error = g_strdup_printf("cannot create %s: %s", dir, g_strerror(-r));
		return r;
	}
	r = control_probe(&sa, &holder_fd, &pid, ret_error);
	if (r == -EADDRINUSE) {
		holder = holder_name(pid);
		if (c->kind == V4L2CUSE_CONTROL_CMDLINE) {
			*ret_error = g_strdup_printf("%s listens on %s", holder, c->path);
			return r;
		}
		/* Only a --device daemon gives it up; another configured one keeps it. */
		if (control_ask_yield(holder_fd, &why) < 0) {
			*ret_error = g_strdup_printf("%s listens on %s and did not give it up: %s",
						     holder, c->path, why);
			return r;
		}
		g_message("control socket %s taken over from %s, started with --device",
			  c->path, holder);
	} else if (r < 0) {
		return r;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	/* Mode and group before listen(): no window where others may connect. */
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(c->path, c->gid == (gid_t)-1 ? 0600 : 0660) < 0 ||
	    (c->gid != (gid_t)-1 && chown(c->path, (uid_t)-1, c->gid) < 0) ||
	    lstat(c->path, &st) < 0 ||
	    listen(fd, V4L2CUSE_CTL_MAX_CLIENTS) < 0) {
		r = -errno;
		*ret_error = g_strdup_printf("cannot listen on %s: %s", c->path, g_strerror(-r));
		return r;
	}
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->listen_fd = steal_fd(&fd);
	c->listen_watch = g_unix_fd_add(c->listen_fd, G_IO_IN, control_on_accept, c);
	return 0;
}

struct v4l2cuse_control *
v4l2cuse_control_new(const char *path, gid_t gid, enum v4l2cuse_control_kind kind,
		     struct v4l2cuse_manager *m, v4l2cuse_control_reload_fn reload, void *data)
{
	struct v4l2cuse_control *c = g_new0(struct v4l2cuse_control, 1);
	g_autofree char *err = NULL;
	int r;

	c->path = g_strdup(path);
	c->gid = gid;
	c->kind = kind;
	c->listen_fd = -1;
	c->m = m;
	c->reload = reload;
	c->data = data;
	g_queue_init(&c->clients);
	r = control_listen(c, &err);
	if (r == -EADDRINUSE)
		g_message("no control socket: %s; v4l2cuse-ctl reaches that one, not this daemon",
			  err);
	else if (r < 0)
		g_message("no control socket: %s; v4l2cuse-ctl cannot reach this daemon", err);
	return c;
}

bool
v4l2cuse_control_serving(const struct v4l2cuse_control *c)
{
	return c->listen_fd >= 0;
}

void
v4l2cuse_control_free(struct v4l2cuse_control *c)
{
	GList *l;

	if (!c)
		return;
	while ((l = c->clients.head))
		client_free(l->data);
	control_stop_listening(c);
	g_free(c->path);
	g_free(c);
}
