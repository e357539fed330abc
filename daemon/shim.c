/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The preload shim's server: tokens for the attach ioctl, a SOCK_SEQPACKET
 * unix socket on the GLib main loop, peer credential checks, buffer memfds
 * over SCM_RIGHTS and the mapping counts behind V4L2_BUF_FLAG_MAPPED.
 * docs/shim.md describes the protocol and the security model.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <glib.h>
#include <glib-unix.h>

#include "util/fd-watch.h"
#include "util/macros.h"
#include "videobuf.h"
#include "device.h"
#include "shim.h"

struct shim_token {
	uint8_t token[V4L2CUSE_SHIM_TOKEN_SIZE];
	struct v4l2cuse_fh *fh;
	uint64_t serial;		/* issue order, for the per-handle limit */
};

/* A buffer the client mapped, until it says UNMAP or disconnects. */
struct shim_map {
	uint64_t id;
	unsigned int index;
	unsigned int generation;	/* vb_queue_generation() at MAP time */
};

struct shim_conn {
	struct v4l2cuse_shim *s;
	GList link;			/* in s->conns */
	int fd;
	guint watch;
	guint hello_timeout;		/* before HELLO only */
	GList pending_link;		/* in s->pending before HELLO */
	struct ucred cred;		/* at connect() time */
	bool authenticated;
	struct v4l2cuse_fh *fh;		/* bound at HELLO, NULL after its release */
	struct vb_queue *q;		/* the handle's queue, NULL after its release */
	GHashTable *maps;		/* uint64_t id -> struct shim_map */
	uint64_t next_map_id;
};

struct v4l2cuse_shim {
	struct v4l2cuse_device *dev;
	char *name;			/* the device's, for logs */
	char *path;
	int listen_fd;
	guint listen_watch;
	GQueue conns;
	GQueue pending;			/* struct shim_conn * before HELLO, oldest first */
	GHashTable *tokens;		/* token bytes -> struct shim_token */
	uint64_t token_serial;
	unsigned int refused;
};

/* ---------------------------------------------------------------------- */
/* Tokens */

static guint
token_hash(gconstpointer key)
{
	guint h;

	/* The bytes are uniformly random: any 4 of them are a fine hash. */
	memcpy(&h, key, sizeof(h));
	return h;
}

static gboolean
token_equal(gconstpointer a, gconstpointer b)
{
	return memcmp(a, b, V4L2CUSE_SHIM_TOKEN_SIZE) == 0;
}

static void
shim_drop_oldest_token(struct v4l2cuse_shim *s, struct v4l2cuse_fh *fh)
{
	GHashTableIter it;
	struct shim_token *t, *oldest = NULL;
	unsigned int n = 0;

	g_hash_table_iter_init(&it, s->tokens);
	while (g_hash_table_iter_next(&it, NULL, (gpointer *)&t)) {
		if (t->fh != fh)
			continue;
		n++;
		if (!oldest || t->serial < oldest->serial)
			oldest = t;
	}
	if (n >= V4L2CUSE_SHIM_MAX_TOKENS_PER_FH && oldest)
		g_hash_table_remove(s->tokens, oldest->token);
}

int
v4l2cuse_shim_attach(struct v4l2cuse_shim *s, struct v4l2cuse_fh *fh,
		     struct v4l2cuse_shim_attach *a)
{
	struct shim_token *t;

	if (a->magic != V4L2CUSE_SHIM_MAGIC)
		return -EINVAL;
	if (a->version != V4L2CUSE_SHIM_VERSION) {
		g_message("%s: pid %d: preload shim protocol %u, the daemon speaks %u",
			  s->name, (int)v4l2cuse_fh_pid(fh), a->version, V4L2CUSE_SHIM_VERSION);
		return -EPROTONOSUPPORT;
	}
	shim_drop_oldest_token(s, fh);
	t = g_new0(struct shim_token, 1);
	if (getrandom(t->token, sizeof(t->token), 0) != sizeof(t->token)) {
		int r = -errno;

		g_free(t);
		return r < 0 ? r : -EIO;
	}
	t->fh = fh;
	t->serial = ++s->token_serial;
	g_hash_table_replace(s->tokens, t->token, t);

	memset(a, 0, sizeof(*a));
	a->magic = V4L2CUSE_SHIM_MAGIC;
	a->version = V4L2CUSE_SHIM_VERSION;
	memcpy(a->token, t->token, sizeof(a->token));
	g_strlcpy(a->socket_path, s->path, sizeof(a->socket_path));
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Connections */

/* The mapping counts of @c's buffers go; the mappings themselves may live on. */
static void
shim_conn_drop_counts(struct shim_conn *c)
{
	GHashTableIter it;
	struct shim_map *m;
	unsigned int gen;

	if (!c->q)
		return;
	gen = vb_queue_generation(c->q);
	g_hash_table_iter_init(&it, c->maps);
	while (g_hash_table_iter_next(&it, NULL, (gpointer *)&m)) {
		if (m->generation == gen)
			vb_queue_mapped(c->q, m->index, -1);
	}
	c->q = NULL;
}

/* @c said HELLO or goes: no longer pending. */
static void
shim_conn_unpend(struct shim_conn *c)
{
	if (!c->pending_link.data)
		return;
	if (c->hello_timeout)
		g_source_remove(c->hello_timeout);
	c->hello_timeout = 0;
	g_queue_unlink(&c->s->pending, &c->pending_link);
	c->pending_link.data = NULL;
}

static void
shim_conn_free(struct shim_conn *c)
{
	struct v4l2cuse_shim *s = c->s;

	/* The process is gone (or dropped the handle): its mappings are too. */
	shim_conn_drop_counts(c);
	g_hash_table_destroy(c->maps);
	if (c->watch)
		g_source_remove(c->watch);
	shim_conn_unpend(c);
	g_queue_unlink(&s->conns, &c->link);
	close(c->fd);
	g_free(c);
}

static int
shim_send(struct shim_conn *c, const struct v4l2cuse_shim_reply *rep, const int *fds,
	  unsigned int n_fds)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)rep, sizeof(*rep) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (n_fds) {
		struct cmsghdr *cm;

		g_assert(n_fds <= 2);
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(n_fds * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(n_fds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, n_fds * sizeof(int));
	}
	/*
	 * The client waits for each reply, so at most one is in flight and
	 * the socket buffer never fills; if it does, the client misbehaves.
	 */
	if (sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(*rep))
		return -errno ? -errno : -EIO;
	return 0;
}

/*
 * Is thread @tid (the handle's opener, in our pid namespace) in process
 * @pid? tgkill() with signal 0 sends nothing: it fails with ESRCH unless
 * @tid is a thread of @pid, and only then checks whether we may signal it
 * (EPERM for another user's process: we have no CAP_KILL). Unlike
 * /proc/PID/task/TID it does not depend on what /proc shows us: with
 * hidepid=2,gid=G a root daemon without CAP_SYS_PTRACE, not in G, sees no
 * other user's process there. /proc stays the fallback where tgkill() is
 * not allowed at all (a seccomp filter: then it fails on our own thread).
 */
static bool
shim_thread_of(pid_t tid, pid_t pid)
{
	static int usable = -1;		/* tgkill(self, 0) works: 1 */
	char path[64];

	if (tid <= 0 || pid <= 0)
		return false;
	if (usable < 0)
		usable = syscall(SYS_tgkill, getpid(), gettid(), 0) == 0;
	if (usable) {
		if (syscall(SYS_tgkill, pid, tid, 0) == 0)
			return true;
		return errno == EPERM || errno == EACCES;	/* found, not ours to signal */
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	return access(path, F_OK) == 0;
}

static int
shim_hello(struct shim_conn *c, const struct v4l2cuse_shim_request *req)
{
	struct v4l2cuse_shim *s = c->s;
	struct shim_token *t;
	struct v4l2cuse_fh *fh;
	const char *why = NULL;

	if (c->authenticated)
		return -EALREADY;
	if (req->hello.version != V4L2CUSE_SHIM_VERSION)
		return -EPROTONOSUPPORT;
	t = g_hash_table_lookup(s->tokens, req->hello.token);
	if (!t) {
		why = "unknown or used token";
		goto refuse;
	}
	/* Single use: whoever presents it, it is gone. */
	fh = t->fh;
	g_hash_table_remove(s->tokens, req->hello.token);
	if (c->cred.uid != v4l2cuse_fh_uid(fh))
		why = "uid differs from the opener's";
	else if (!shim_thread_of(v4l2cuse_fh_pid(fh), c->cred.pid))
		why = "not the process that opened the handle";
	if (why)
		goto refuse;

	c->authenticated = true;
	c->fh = fh;
	c->q = v4l2cuse_fh_queue(fh);
	shim_conn_unpend(c);
	v4l2cuse_fh_set_streaming(fh, true);
	g_debug("%s: shim attached for pid %d (uid %u)", s->name, (int)c->cred.pid,
		(unsigned int)c->cred.uid);
	return 0;

refuse:
	s->refused++;
	g_message("%s: refused a shim connection from pid %d (uid %u): %s", s->name,
		  (int)c->cred.pid, (unsigned int)c->cred.uid, why);
	return -EACCES;
}

/* May @c see the buffers of the queue's owner? Same handle or same user. */
static int
shim_check_owner(struct shim_conn *c, bool owner_only)
{
	const struct v4l2cuse_fh *owner;

	if (!c->fh)
		return -EBADF;		/* the handle was closed */
	owner = vb_queue_owner(c->q);
	if (!owner)
		return -EINVAL;		/* no buffers */
	if (owner == c->fh)
		return 0;
	if (owner_only || v4l2cuse_fh_uid(owner) != v4l2cuse_fh_uid(c->fh))
		return -EACCES;
	return 0;
}

static int
shim_map(struct shim_conn *c, const struct v4l2cuse_shim_request *req,
	 struct v4l2cuse_shim_reply *rep, int *ret_fd)
{
	struct vb_queue *q = c->q;
	struct shim_map *m;
	unsigned int index;
	int r, fd;

	r = shim_check_owner(c, false);
	if (r < 0)
		return r;
	if (req->map.offset > UINT32_MAX || req->map.length == 0 ||
	    req->map.length > UINT32_MAX)
		return -EINVAL;
	if (g_hash_table_size(c->maps) >= V4L2CUSE_SHIM_MAX_MAPS)
		return -ENOMEM;
	r = vb_queue_mmap_fd(q, (uint32_t)req->map.offset, req->map.length, &fd, &index);
	if (r < 0)
		return r;
	m = g_new0(struct shim_map, 1);
	m->id = ++c->next_map_id;
	m->index = index;
	m->generation = vb_queue_generation(q);
	g_hash_table_insert(c->maps, &m->id, m);
	vb_queue_mapped(q, index, 1);
	rep->index = index;
	rep->map_id = m->id;
	rep->length = req->map.length;
	*ret_fd = fd;
	return 0;
}

static int
shim_unmap(struct shim_conn *c, const struct v4l2cuse_shim_request *req)
{
	struct vb_queue *q = c->q;
	struct shim_map *m = g_hash_table_lookup(c->maps, &req->unmap.map_id);

	if (!m)
		return -EINVAL;
	/*
	 * Orphaned buffers (freed since) have no count left to drop, nor
	 * has a released handle (shim_conn_drop_counts()).
	 */
	if (q && m->generation == vb_queue_generation(q))
		vb_queue_mapped(q, m->index, -1);
	g_hash_table_remove(c->maps, &req->unmap.map_id);
	return 0;
}

static int
shim_staging(struct shim_conn *c, const struct v4l2cuse_shim_request *req,
	     struct v4l2cuse_shim_reply *rep, int *ret_fd)
{
	struct vb_queue *q = c->q;
	struct v4l2_buffer b = { .index = req->staging.index };
	struct stat st;
	int r, fd;

	r = shim_check_owner(c, true);
	if (r < 0)
		return r;
	b.type = vb_queue_type(q);
	r = vb_queue_querybuf(q, &b);
	if (r < 0)
		return r;
	if (b.memory != V4L2_MEMORY_USERPTR)
		return -EINVAL;		/* MMAP memory goes through MAP */
	r = vb_queue_buffer_fd(q, req->staging.index, &fd);
	if (r < 0)
		return r;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	rep->index = req->staging.index;
	rep->length = (uint64_t)st.st_size;
	*ret_fd = fd;
	return 0;
}

/* The handle's shared-memory queue (daemon/fastpath.c): memfd and socket. */
static int
shim_fastpath(struct shim_conn *c, const struct v4l2cuse_shim_request *req,
	      struct v4l2cuse_shim_reply *rep, int *ret_fds)
{
	size_t size;
	int r;

	if (!c->fh)
		return -EBADF;		/* the handle was closed */
	if (req->fastpath.version != V4L2CUSE_FP_VERSION)
		return -EPROTONOSUPPORT;
	r = v4l2cuse_fh_fastpath(c->fh, &ret_fds[0], &ret_fds[1], &size);
	if (r < 0)
		return r;
	rep->length = size;
	return 0;
}

/* Answer what @c sent, if anything; false: close it. */
static bool
shim_conn_serve(struct shim_conn *c)
{
	struct v4l2cuse_shim_request req;
	struct v4l2cuse_shim_reply rep;
	uint8_t buf[sizeof(req) + 1];
	int out_fds[2] = { -1, -1 }, r;
	unsigned int n_fds;
	ssize_t n;

	/* No control buffer: fds a client sends us are discarded by the kernel. */
	n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n != (ssize_t)sizeof(req)) {
		/* EOF, an error, or a malformed message: drop the client. */
		if (n > 0)
			g_debug("%s: shim client pid %d sent %zd bytes; closing", c->s->name,
				(int)c->cred.pid, n);
		return false;
	}
	memcpy(&req, buf, sizeof(req));
	memset(&rep, 0, sizeof(rep));
	rep.type = req.type;
	rep.seq = req.seq;

	if (req.type == V4L2CUSE_SHIM_HELLO)
		r = shim_hello(c, &req);
	else if (!c->authenticated)
		r = -EACCES;
	else if (req.type == V4L2CUSE_SHIM_MAP)
		r = shim_map(c, &req, &rep, &out_fds[0]);
	else if (req.type == V4L2CUSE_SHIM_UNMAP)
		r = shim_unmap(c, &req);
	else if (req.type == V4L2CUSE_SHIM_STAGING)
		r = shim_staging(c, &req, &rep, &out_fds[0]);
	else if (req.type == V4L2CUSE_SHIM_FASTPATH)
		r = shim_fastpath(c, &req, &rep, out_fds);
	else
		r = -EOPNOTSUPP;
	rep.status = r;
	n_fds = (out_fds[0] >= 0) + (out_fds[1] >= 0);
	r = shim_send(c, &rep, out_fds, n_fds);
	for (unsigned int i = 0; i < n_fds; i++)
		close(out_fds[i]);
	if (r < 0 || !c->authenticated) {
		/* A refused HELLO (or anything before one) ends the connection. */
		if (r < 0 && rep.type == V4L2CUSE_SHIM_MAP && rep.status == 0)
			shim_unmap(c, &(struct v4l2cuse_shim_request){ .unmap.map_id = rep.map_id });
		return false;
	}
	return true;
}

static gboolean
shim_conn_cb(int fd, GIOCondition cond, gpointer data)
{
	struct shim_conn *c = data;

	if (shim_conn_serve(c))
		return G_SOURCE_CONTINUE;
	c->watch = 0;
	shim_conn_free(c);
	return G_SOURCE_REMOVE;
}

static gboolean
shim_hello_timeout_cb(gpointer data)
{
	struct shim_conn *c = data;

	g_debug("%s: shim client pid %d sent no HELLO in time", c->s->name,
		(int)c->cred.pid);
	c->hello_timeout = 0;
	shim_conn_free(c);
	return G_SOURCE_REMOVE;
}

/* @uid's connections before HELLO; its oldest in *ret_oldest. */
static unsigned int
shim_pending_of(struct v4l2cuse_shim *s, uid_t uid, struct shim_conn **ret_oldest)
{
	unsigned int n = 0;

	*ret_oldest = NULL;
	for (GList *l = s->pending.head; l; l = l->next) {
		struct shim_conn *c = l->data;

		if (c->cred.uid == uid && !n++)
			*ret_oldest = c;
	}
	return n;
}

/* The oldest connection before HELLO of the uid that holds the most (ties: the oldest). */
static struct shim_conn *
shim_pending_victim(struct v4l2cuse_shim *s)
{
	struct shim_conn *victim = NULL, *oldest;
	unsigned int most = 0;

	for (GList *l = s->pending.head; l; l = l->next) {
		unsigned int n = shim_pending_of(s, ((struct shim_conn *)l->data)->cred.uid,
						 &oldest);

		if (n > most) {
			most = n;
			victim = oldest;
		}
	}
	return victim;
}

/*
 * Make room for a connection of @uid before HELLO. The socket is 0666, so
 * anyone can connect without a token: a uid's own oldest connection makes
 * room for its next, and at the device's limit the oldest of the uid that
 * holds the most goes, never a connection of a uid that holds fewer. So
 * idle connections of one user never keep another's attach out.
 */
static void
shim_pending_make_room(struct v4l2cuse_shim *s, uid_t uid)
{
	struct shim_conn *victim;

	if (shim_pending_of(s, uid, &victim) < V4L2CUSE_SHIM_MAX_PENDING_PER_UID)
		victim = s->pending.length >= V4L2CUSE_SHIM_MAX_PENDING ? shim_pending_victim(s)
								      : NULL;
	if (!victim)
		return;
	g_debug("%s: closing pid %d's connection without HELLO (uid %u) for one of uid %u",
		s->name, (int)victim->cred.pid, (unsigned int)victim->cred.uid,
		(unsigned int)uid);
	shim_conn_free(victim);
}

int
v4l2cuse_shim_adopt(struct v4l2cuse_shim *s, int fd, const struct ucred *cred)
{
	struct shim_conn *c;

	if (g_queue_get_length(&s->conns) >= V4L2CUSE_SHIM_MAX_CONNECTIONS) {
		close(fd);
		return -EBUSY;
	}
	shim_pending_make_room(s, cred->uid);
	c = g_new0(struct shim_conn, 1);
	c->s = s;
	c->fd = fd;
	c->cred = *cred;
	c->maps = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
	c->link.data = c;
	g_queue_push_tail_link(&s->conns, &c->link);
	c->watch = v4l2cuse_fd_watch_add(fd, G_IO_IN | G_IO_HUP | G_IO_ERR, shim_conn_cb, c);
	c->hello_timeout = g_timeout_add_seconds(V4L2CUSE_SHIM_HELLO_TIMEOUT_S,
						 shim_hello_timeout_cb, c);
	c->pending_link.data = c;
	g_queue_push_tail_link(&s->pending, &c->pending_link);
	/*
	 * The shim sends HELLO right after connect(), so it is usually here
	 * already: answered now, the connection is no longer pending before
	 * the next one is accepted.
	 */
	if (!shim_conn_serve(c)) {
		shim_conn_free(c);
		return -ECONNRESET;
	}
	return 0;
}

static gboolean
shim_accept_cb(int fd, GIOCondition cond, gpointer data)
{
	struct v4l2cuse_shim *s = data;

	for (int i = 0; i < 16; i++) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (cfd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				g_debug("%s: accept on the shim socket: %s", s->name,
					g_strerror(errno));
			break;
		}
		if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			close(cfd);
			continue;
		}
		v4l2cuse_shim_adopt(s, cfd, &cred);
	}
	return G_SOURCE_CONTINUE;
}

void
v4l2cuse_shim_fh_release(struct v4l2cuse_shim *s, struct v4l2cuse_fh *fh)
{
	GHashTableIter it;
	struct shim_token *t;

	g_hash_table_iter_init(&it, s->tokens);
	while (g_hash_table_iter_next(&it, NULL, (gpointer *)&t))
		if (t->fh == fh)
			g_hash_table_iter_remove(&it);
	/*
	 * Connections stay until the client drops them: its mappings outlive
	 * the fd (they are orphans now if this handle owned the buffers).
	 */
	for (GList *l = s->conns.head; l; l = l->next) {
		struct shim_conn *c = l->data;

		if (c->fh != fh)
			continue;
		shim_conn_drop_counts(c);
		c->fh = NULL;
	}
}

void
v4l2cuse_shim_queues_changed(struct v4l2cuse_shim *s)
{
	for (GList *l = s->conns.head; l; l = l->next) {
		struct shim_conn *c = l->data;

		shim_conn_drop_counts(c);
		if (c->fh)
			c->q = v4l2cuse_fh_queue(c->fh);
	}
}

void
v4l2cuse_shim_get_stats(struct v4l2cuse_shim *s, struct v4l2cuse_shim_stats *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->tokens = g_hash_table_size(s->tokens);
	ret->refused = s->refused;
	for (GList *l = s->conns.head; l; l = l->next) {
		struct shim_conn *c = l->data;

		ret->connections++;
		ret->authenticated += c->authenticated;
		ret->mappings += g_hash_table_size(c->maps);
	}
}

/* ---------------------------------------------------------------------- */
/* Lifecycle */

char *
v4l2cuse_shim_socket_path(const char *name, char **ret_error)
{
	const char *env = g_getenv("RUNTIME_DIRECTORY");
	g_autofree char *dir = NULL;
	char *path;
	struct stat st;

	if (env && *env) {
		const char *colon = strchr(env, ':');

		dir = colon ? g_strndup(env, colon - env) : g_strdup(env);
	} else {
		dir = g_strdup("/run/v4l2cuse");
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		*ret_error = g_strdup_printf("cannot create %s: %s", dir, g_strerror(errno));
		return NULL;
	}
	if (lstat(dir, &st) < 0) {
		*ret_error = g_strdup_printf("cannot stat %s: %s", dir, g_strerror(errno));
		return NULL;
	}
	/* Nobody else may plant or swap our socket. */
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0022)) {
		*ret_error = g_strdup_printf("%s must be a directory owned by uid %u and "
					     "writable only by it", dir, (unsigned int)geteuid());
		return NULL;
	}
	path = g_strdup_printf("%s/%s.sock", dir, name);
	if (strlen(path) >= V4L2CUSE_SHIM_PATH_SIZE) {
		*ret_error = g_strdup_printf("socket path %s is too long", path);
		g_free(path);
		return NULL;
	}
	return path;
}

struct v4l2cuse_shim *
v4l2cuse_shim_new(struct v4l2cuse_device *dev, const char *path, char **ret_error)
{
	struct v4l2cuse_shim *s;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		*ret_error = g_strdup_printf("socket path %s is too long", path);
		return NULL;
	}
	strcpy(sa.sun_path, path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			*ret_error = g_strdup_printf("%s exists and is not a socket", path);
			return NULL;
		}
		unlink(path);		/* stale, from a daemon that died */
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		*ret_error = g_strdup_printf("socket: %s", g_strerror(errno));
		return NULL;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0666) < 0 || listen(fd, 64) < 0) {
		*ret_error = g_strdup_printf("cannot listen on %s: %s", path, g_strerror(errno));
		close(fd);
		unlink(path);
		return NULL;
	}
	s = g_new0(struct v4l2cuse_shim, 1);
	s->dev = dev;
	s->name = g_strdup(v4l2cuse_device_name(dev));
	s->path = g_strdup(path);
	s->listen_fd = fd;
	g_queue_init(&s->conns);
	g_queue_init(&s->pending);
	s->tokens = g_hash_table_new_full(token_hash, token_equal, NULL, g_free);
	s->listen_watch = g_unix_fd_add(fd, G_IO_IN, shim_accept_cb, s);
	v4l2cuse_device_set_shim(dev, s);
	return s;
}

void
v4l2cuse_shim_free(struct v4l2cuse_shim *s)
{
	GList *l;

	if (!s)
		return;
	while ((l = s->conns.head))
		shim_conn_free(l->data);
	if (s->listen_watch)
		g_source_remove(s->listen_watch);
	close(s->listen_fd);
	unlink(s->path);
	g_hash_table_destroy(s->tokens);
	v4l2cuse_device_set_shim(s->dev, NULL);
	g_free(s->name);
	g_free(s->path);
	g_free(s);
}

const char *
v4l2cuse_shim_path(struct v4l2cuse_shim *s)
{
	return s->path;
}
