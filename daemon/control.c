/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket: one request line per connection, a text reply ending
 * in "ok" or "error <message>" (include/v4l2cuse/ctl-protocol.h).
 */
#include "config.h"

#include <errno.h>
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
	int listen_fd;
	guint listen_watch;
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
	const struct v4l2cuse_conf *cur = v4l2cuse_manager_conf(c->m);
	_cleanup_(v4l2cuse_conf_freep) struct v4l2cuse_conf *conf = v4l2cuse_conf_new();
	g_autoptr(GString) text = g_string_new(NULL);
	int r;

	if (!argv[1] || !v4l2cuse_conf_id_valid(argv[1])) {
		*ret_error = g_strdup("usage: add ID [KEY=VALUE...] "
				      "(ID: 1..31 of A-Z a-z 0-9 - _ .)");
		return -EINVAL;
	}
	g_string_append_printf(text, "[device %s]\n", argv[1]);
	for (unsigned int i = 2; argv[i]; i++) {
		if (!strchr(argv[i], '=') || argv[i][0] == '[' || argv[i][0] == '#') {
			*ret_error = g_strdup_printf("'%s' is not KEY=VALUE", argv[i]);
			return -EINVAL;
		}
		g_string_append_printf(text, "%s\n", argv[i]);
	}
	/* The daemon's defaults for group= and mode=. */
	conf->group = g_strdup(cur->group);
	conf->mode = cur->mode;
	conf->has_mode = cur->has_mode;
	r = v4l2cuse_conf_parse(conf, "add", text->str, text->len, ret_error);
	if (r == 0)
		r = v4l2cuse_conf_finish(conf, ret_error);
	if (r == 0)
		r = v4l2cuse_manager_add(c->m, conf->devices->pdata[0], ret_error);
	return r;
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
	if (strcmp(cmd, "reload") == 0 && argc == 1) {
		if (!c->reload) {
			*ret_error = g_strdup("this daemon runs without a configuration file");
			return -EOPNOTSUPP;
		}
		return c->reload(c->data, ret_error);
	}
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

struct v4l2cuse_control *
v4l2cuse_control_new(const char *path, gid_t gid, struct v4l2cuse_manager *m,
		     v4l2cuse_control_reload_fn reload, void *data, char **ret_error)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	g_autofree char *dir = g_path_get_dirname(path);
	struct v4l2cuse_control *c;
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		*ret_error = g_strdup_printf("control socket path %s is too long", path);
		return NULL;
	}
	strcpy(sa.sun_path, path);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		*ret_error = g_strdup_printf("cannot create %s: %s", dir, g_strerror(errno));
		return NULL;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		*ret_error = g_strdup_printf("socket: %s", g_strerror(errno));
		return NULL;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			*ret_error = g_strdup_printf("%s exists and is not a socket", path);
			close(fd);
			return NULL;
		}
		/* Another daemon's, if someone listens; else stale, from one that died. */
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN) {
			*ret_error = g_strdup_printf("another v4l2cuse listens on %s", path);
			close(fd);
			return NULL;
		}
		close(fd);
		unlink(path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0) {
			*ret_error = g_strdup_printf("socket: %s", g_strerror(errno));
			return NULL;
		}
	}
	/* Mode and group before listen(): no window where others may connect. */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, gid == (gid_t)-1 ? 0600 : 0660) < 0 ||
	    (gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) < 0) ||
	    listen(fd, V4L2CUSE_CTL_MAX_CLIENTS) < 0) {
		*ret_error = g_strdup_printf("cannot listen on %s: %s", path, g_strerror(errno));
		close(fd);
		return NULL;
	}
	c = g_new0(struct v4l2cuse_control, 1);
	c->path = g_strdup(path);
	c->gid = gid;
	c->listen_fd = fd;
	c->m = m;
	c->reload = reload;
	c->data = data;
	g_queue_init(&c->clients);
	c->listen_watch = g_unix_fd_add(fd, G_IO_IN, control_on_accept, c);
	return c;
}

void
v4l2cuse_control_free(struct v4l2cuse_control *c)
{
	GList *l;

	if (!c)
		return;
	while ((l = c->clients.head))
		client_free(l->data);
	g_source_remove(c->listen_watch);
	close(c->listen_fd);
	unlink(c->path);
	g_free(c->path);
	g_free(c);
}
