/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Capabilities, no_new_privs and a Landlock domain (sandbox.h). Raw
 * syscalls: glibc has no Landlock wrappers and libcap is not a dependency.
 *
 * Landlock rules are tied to inodes. On file systems that make a new inode
 * for every lookup of an uncached dentry (9p without a cache, as in the
 * test VM) a rule would stop matching once its dentry is dropped, so the
 * O_PATH descriptor of every rule stays open: it pins the dentry, and with
 * it the inode that path walks meet.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <glib.h>
#include <linux/capability.h>
#include <linux/landlock.h>

#include "util/macros.h"
#include "sandbox.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

#define FS_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_FILE_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
			LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)

struct sb_rule {
	char *path;		/* resolved */
	uint64_t access;
	bool user;		/* named by the configuration: listed in errors */
	bool dir;
	dev_t dev;		/* what Landlock matches: the inode */
	ino_t ino;
	int fd;			/* O_PATH, kept open (see above) */
};

static struct {
	int abi;		/* in force; 0: no domain */
	GArray *rules;		/* struct sb_rule */
	char *summary;		/* v4l2cuse_sandbox_summary() */
} sb;

int
v4l2cuse_sandbox_parse_mode(const char *s, enum v4l2cuse_sandbox_mode *ret, char **ret_error)
{
	static const char *const names[] = {
		[V4L2CUSE_SANDBOX_AUTO] = "auto",
		[V4L2CUSE_SANDBOX_REQUIRED] = "required",
		[V4L2CUSE_SANDBOX_OFF] = "off",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (g_strcmp0(s, names[i]) == 0) {
			*ret = (enum v4l2cuse_sandbox_mode)i;
			return 0;
		}
	}
	*ret_error = g_strdup_printf("'%s' is not a sandbox mode (auto, required or off)", s);
	return -EINVAL;
}

/* --- capabilities ------------------------------------------------------- */

int
v4l2cuse_sandbox_drop_caps(char **ret_error)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };
	const uint32_t chown_bit = 1U << CAP_CHOWN;	/* CAP_CHOWN is 0: word 0 */
	bool keep_chown;
	int r;

	if (syscall(SYS_capget, &hdr, data) < 0) {
		r = -errno;
		*ret_error = g_strdup_printf("capget: %s", g_strerror(-r));
		return r;
	}
	keep_chown = data[0].permitted & chown_bit;

	/* The bounding set needs CAP_SETPCAP, so it goes first. */
	if (data[0].effective & (1U << CAP_SETPCAP)) {
		for (int cap = 0; cap <= 63; cap++) {
			if (cap == CAP_CHOWN)
				continue;
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
				if (errno == EINVAL)	/* past the kernel's last capability */
					break;
				r = -errno;
				*ret_error = g_strdup_printf("dropping capability %d from the "
							     "bounding set: %s", cap,
							     g_strerror(-r));
				return r;
			}
		}
	} else {
		g_debug("sandbox: no CAP_SETPCAP, the bounding set stays as it is");
	}
	/* Ambient capabilities would survive an exec (GStreamer's plugin scanner). */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) {
		r = -errno;
		*ret_error = g_strdup_printf("clearing the ambient capabilities: %s",
					     g_strerror(-r));
		return r;
	}
	memset(data, 0, sizeof(data));
	if (keep_chown) {
		data[0].effective = chown_bit;
		data[0].permitted = chown_bit;
	}
	if (syscall(SYS_capset, &hdr, data) < 0) {
		r = -errno;
		*ret_error = g_strdup_printf("capset: %s", g_strerror(-r));
		return r;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		r = -errno;
		*ret_error = g_strdup_printf("PR_SET_NO_NEW_PRIVS: %s", g_strerror(-r));
		return r;
	}
	g_debug("sandbox: capabilities: %s, no_new_privs", keep_chown ? "CAP_CHOWN only" : "none");
	return 0;
}

/* --- source specs ------------------------------------------------------- */

void
v4l2cuse_sandbox_spec_paths(const char *spec, GPtrArray *out)
{
	size_t len;

	if (!spec || !g_str_has_prefix(spec, "file:"))
		return;
	/* Same split as v4l2cuse_opts_parse(): the argument ends at the first ','. */
	len = strcspn(spec + 5, ",");
	if (len)
		g_ptr_array_add(out, g_strndup(spec + 5, len));
}

/* --- Landlock ----------------------------------------------------------- */

static void
sb_rule_clear(void *p)
{
	struct sb_rule *rule = p;

	g_free(rule->path);
	if (rule->fd >= 0)
		close(rule->fd);
}

static uint64_t
sb_handled(int abi)
{
	uint64_t h = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;	/* ABI 1: bits 0..12 */

	if (abi >= 2)
		h |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		h |= LANDLOCK_ACCESS_FS_TRUNCATE;
	return h;
}

/*
 * A rule for @path if it exists; a missing path (or one we may not even
 * look up) gets no rule, and opening it later fails as it would anyway.
 */
static void
sb_add(int ruleset, uint64_t handled, const char *path, uint64_t access, bool user)
{
	struct landlock_path_beneath_attr attr = { 0 };
	struct sb_rule rule = { .user = user, .fd = -1 };
	char resolved[PATH_MAX];
	struct stat st;

	rule.fd = open(path, O_PATH | O_CLOEXEC);
	if (rule.fd < 0 || fstat(rule.fd, &st) < 0 || !realpath(path, resolved)) {
		g_debug("sandbox: no rule for '%s': %s", path, g_strerror(errno));
		if (rule.fd >= 0)
			close(rule.fd);
		return;
	}
	rule.dir = S_ISDIR(st.st_mode);
	rule.dev = st.st_dev;
	rule.ino = st.st_ino;
	if (!rule.dir)
		access &= FS_FILE_RIGHTS;
	attr.allowed_access = access & handled;
	attr.parent_fd = rule.fd;
	if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) < 0) {
		g_warning("sandbox: no rule for '%s': %s", path, g_strerror(errno));
		close(rule.fd);
		return;
	}
	rule.path = g_strdup(resolved);
	rule.access = attr.allowed_access;
	g_array_append_val(sb.rules, rule);
	g_debug("sandbox: %s%s: 0x%" G_GINT64_MODIFIER "x", resolved, rule.dir ? "/" : "",
		(guint64)rule.access);
}

void
v4l2cuse_sandbox_system_reads(const struct v4l2cuse_sandbox_config *cfg, GPtrArray *out)
{
	static const char *const system_files[] = {
		"/etc/group", "/etc/passwd", "/etc/nsswitch.conf", "/etc/ld.so.cache",
		"/etc/localtime",
	};
	/*
	 * Network sources (docs/service.md, "Network"): glibc's resolver and
	 * getaddrinfo() configuration, systemd-resolved's directory (its
	 * stub-resolv.conf, where /etc/resolv.conf often points, is replaced
	 * by rename: a rule on the file would lose it), the TLS certificates
	 * (/etc/ssl/certs links into /usr/share/ca-certificates, under /usr).
	 */
	static const char *const network_reads[] = {
		"/etc/hosts", "/etc/resolv.conf", "/etc/host.conf", "/etc/gai.conf",
		"/etc/ssl", "/run/systemd/resolve",
	};

	for (size_t i = 0; i < ARRAY_SIZE(system_files); i++)
		g_ptr_array_add(out, g_strdup(system_files[i]));
	/* The GStreamer plugin registry. */
	g_ptr_array_add(out, g_build_filename(g_get_user_cache_dir(), "gstreamer-1.0", NULL));
	for (size_t i = 0; cfg->network && i < ARRAY_SIZE(network_reads); i++)
		g_ptr_array_add(out, g_strdup(network_reads[i]));
}

int
v4l2cuse_sandbox_restrict(const struct v4l2cuse_sandbox_config *cfg, char **ret_error)
{
	/* What the daemon reads or runs after setup, besides its configuration. */
	static const char *const system_trees[] = {
		"/usr", "/lib", "/lib64",	/* GStreamer plugins, libv4l2, NSS */
		"/proc", "/sys",		/* /sys/class/{cuse,video4linux}, /proc/self */
	};
	g_autoptr(GPtrArray) reads = g_ptr_array_new_with_free_func(g_free);
	struct landlock_ruleset_attr attr = { 0 };
	uint64_t handled;
	int abi, ruleset, r;

	if (cfg->mode == V4L2CUSE_SANDBOX_OFF) {
		sb.summary = g_strdup("off (sandbox=off): no file-system restrictions");
		return 0;
	}
	abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1) {
		r = abi < 0 ? errno : EOPNOTSUPP;
		if (cfg->mode == V4L2CUSE_SANDBOX_REQUIRED) {
			*ret_error = g_strdup_printf("sandbox=required, but Landlock is not "
						     "available (%s)", g_strerror(r));
			return -r;
		}
		/* EPERM: a seccomp filter (an older unit), ENOSYS/EOPNOTSUPP: the kernel. */
		sb.summary = g_strdup_printf("Landlock is not available (%s): no file-system "
					     "restrictions (sandbox=required would refuse to "
					     "start)", g_strerror(r));
		return 0;
	}
	handled = sb_handled(abi);
	attr.handled_access_fs = handled;
	ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0) {
		r = -errno;
		*ret_error = g_strdup_printf("landlock_create_ruleset: %s", g_strerror(-r));
		return r;
	}
	if (!sb.rules) {
		sb.rules = g_array_new(FALSE, TRUE, sizeof(struct sb_rule));
		g_array_set_clear_func(sb.rules, sb_rule_clear);
	}

	for (unsigned int i = 0; cfg->read_paths && cfg->read_paths[i]; i++)
		sb_add(ruleset, handled, cfg->read_paths[i], FS_READ, true);
	for (unsigned int i = 0; cfg->sock_dirs && cfg->sock_dirs[i]; i++) {
		if (cfg->create_dirs && mkdir(cfg->sock_dirs[i], 0755) < 0 && errno != EEXIST)
			g_debug("sandbox: mkdir '%s': %s", cfg->sock_dirs[i], g_strerror(errno));
		sb_add(ruleset, handled, cfg->sock_dirs[i],
		       LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_MAKE_SOCK |
		       LANDLOCK_ACCESS_FS_REMOVE_FILE, false);
	}
	/*
	 * /dev: /dev/cuse for every registration, our own nodes (the
	 * self-test) and cameras, which come back under a new inode after an
	 * unplug. No creating or removing anything there.
	 */
	sb_add(ruleset, handled, "/dev", FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE, false);
	for (size_t i = 0; i < ARRAY_SIZE(system_trees); i++)
		sb_add(ruleset, handled, system_trees[i],
		       FS_READ | (i < 3 ? LANDLOCK_ACCESS_FS_EXECUTE : 0), false);
	/* Files get read only (sb_add() keeps the file rights of FS_READ). */
	v4l2cuse_sandbox_system_reads(cfg, reads);
	for (unsigned int i = 0; i < reads->len; i++)
		sb_add(ruleset, handled, reads->pdata[i], FS_READ, false);
	for (unsigned int i = 0; cfg->exec_files && cfg->exec_files[i]; i++)
		sb_add(ruleset, handled, cfg->exec_files[i],
		       LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE, false);
	for (unsigned int i = 0; cfg->write_trees && cfg->write_trees[i]; i++)
		sb_add(ruleset, handled, cfg->write_trees[i],
		       FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE, false);

	/* drop_caps() set it already; Landlock needs it without CAP_SYS_ADMIN. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(__NR_landlock_restrict_self, ruleset, 0) < 0) {
		r = -errno;
		close(ruleset);
		*ret_error = g_strdup_printf("landlock_restrict_self: %s", g_strerror(-r));
		return r;
	}
	close(ruleset);
	sb.abi = abi;
	sb.summary = g_strdup_printf("Landlock ABI %d, %u rules: reads limited to the "
				     "configuration, its sources, sandbox-paths= and system "
				     "directories%s", abi, sb.rules->len,
				     cfg->network ? ", with name resolution and TLS "
						    "certificates (network sources)" : "");
	g_debug("sandbox: %s", sb.summary);
	return 0;
}

int
v4l2cuse_sandbox_abi(void)
{
	return sb.abi;
}

const char *
v4l2cuse_sandbox_summary(void)
{
	return sb.summary ? sb.summary : "not entered";
}

static bool
sb_rule_matches(const struct stat *st, bool dirs_only)
{
	for (unsigned int i = 0; i < sb.rules->len; i++) {
		const struct sb_rule *rule = &g_array_index(sb.rules, struct sb_rule, i);

		if ((rule->access & LANDLOCK_ACCESS_FS_READ_FILE) && (rule->dir || !dirs_only) &&
		    rule->dev == st->st_dev && rule->ino == st->st_ino)
			return true;
	}
	return false;
}

/*
 * What Landlock does on open: a rule on the file's inode or on the inode of
 * a directory above it. (So a named file replaced by rename, a new inode,
 * is outside until a restart.)
 */
static bool
sb_allows_read(const char *resolved)
{
	g_autofree char *p = g_strdup(resolved);
	struct stat st;
	bool dirs_only = false;

	for (;;) {
		char *slash;

		if (stat(*p ? p : "/", &st) == 0 && sb_rule_matches(&st, dirs_only))
			return true;
		slash = strrchr(p, '/');
		if (!slash || !*p)
			return false;
		*slash = '\0';
		dirs_only = true;
	}
}

static char *
sb_user_paths(void)
{
	GString *s = g_string_new(NULL);

	for (unsigned int i = 0; i < sb.rules->len; i++) {
		const struct sb_rule *rule = &g_array_index(sb.rules, struct sb_rule, i);

		if (rule->user)
			g_string_append_printf(s, "%s%s%s", s->len ? ", " : "", rule->path,
					       rule->dir ? "/" : "");
	}
	return g_string_free(s, FALSE);
}

int
v4l2cuse_sandbox_check_spec(const char *spec, char **ret_error)
{
	g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);

	/* Test hook (tests/vm/test-privileges.sh): let the kernel refuse instead. */
	if (!sb.abi || g_getenv("V4L2CUSE_SANDBOX_TEST_NO_CHECK"))
		return 0;
	v4l2cuse_sandbox_spec_paths(spec, paths);
	for (unsigned int i = 0; i < paths->len; i++) {
		g_autofree char *resolved = realpath(paths->pdata[i], NULL);
		g_autofree char *allowed = NULL;

		if (!resolved || sb_allows_read(resolved))
			continue;
		allowed = sb_user_paths();
		*ret_error = g_strdup_printf("'%s' is outside the sandbox (readable: %s and "
					     "system directories); restart the daemon with it "
					     "in the configuration, or add its directory to "
					     "sandbox-paths=", (char *)paths->pdata[i],
					     *allowed ? allowed : "nothing named");
		return -EACCES;
	}
	return 0;
}
