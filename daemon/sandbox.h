/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon's own privilege drop (docs/service.md, "Privileges"), in two
 * steps, both before any thread exists (capabilities, no_new_privs and a
 * Landlock domain belong to a thread and are inherited by the threads it
 * creates, never by threads that already run):
 *
 * 1. v4l2cuse_sandbox_drop_caps(), right after the command line: the
 *    effective and permitted sets keep only CAP_CHOWN (node and control
 *    socket groups), the bounding set loses everything else, inheritable
 *    and ambient sets are emptied, and PR_SET_NO_NEW_PRIVS is set. The
 *    configuration is read after it, so a file only CAP_DAC_OVERRIDE could
 *    read fails at start exactly as it would on reload.
 * 2. v4l2cuse_sandbox_restrict(), once the configuration is known: a
 *    Landlock domain that lets the file system be read only where the
 *    configuration points (its directory with conf.d, every file a source
 *    or placeholder names, sandbox-paths=), plus what the daemon itself
 *    needs (/dev, the socket directories, /proc, /sys, /usr and a few
 *    files of /etc, more of them when a source needs the network: name
 *    resolution and TLS certificates). Sources named later (reload, v4l2cuse-ctl) are checked
 *    with v4l2cuse_sandbox_check_spec() for one clear error line.
 */

#include <stdbool.h>
#include <glib.h>

enum v4l2cuse_sandbox_mode {
	V4L2CUSE_SANDBOX_AUTO,		/* Landlock if the kernel has it, else one log line */
	V4L2CUSE_SANDBOX_REQUIRED,	/* no Landlock: refuse to start */
	V4L2CUSE_SANDBOX_OFF,		/* no Landlock (capabilities are dropped anyway) */
};

/* "auto", "required", "off": 0, or -EINVAL with a message naming the value. */
int v4l2cuse_sandbox_parse_mode(const char *s, enum v4l2cuse_sandbox_mode *ret,
				char **ret_error);

/*
 * Keep CAP_CHOWN (if held) and drop every other capability from the
 * effective, permitted, inheritable, ambient and (with CAP_SETPCAP) bounding
 * sets; set no_new_privs. Call before any thread is created. 0 or -errno
 * with one line in *ret_error.
 */
int v4l2cuse_sandbox_drop_caps(char **ret_error);

/*
 * Append to @out (a GPtrArray of g_malloc'ed strings) the file paths a
 * source spec reads: the PATH of "file:PATH" (no other option names a file).
 */
void v4l2cuse_sandbox_spec_paths(const char *spec, GPtrArray *out);

struct v4l2cuse_sandbox_config {
	enum v4l2cuse_sandbox_mode mode;
	const char *const *read_paths;	/* files or trees (NULL-terminated), may be NULL */
	const char *const *sock_dirs;	/* directories of our sockets, created 0755 if missing */
	const char *const *exec_files;	/* programs we start (outside /usr: a build tree), may be NULL */
	const char *const *write_trees;	/* files or trees written (vhci-hcd's sysfs), may be NULL */
	bool create_dirs;		/* false: --check-config creates nothing */
	bool network;			/* a source needs the network: name resolution, TLS */
};

/*
 * Append to @out the system files and trees (g_malloc'ed paths) the domain
 * of @cfg lets be read besides its read_paths, /dev, /usr, /proc and /sys:
 * NSS and the GStreamer registry; with cfg->network also what name
 * resolution and TLS read (/etc/hosts, /etc/resolv.conf, /etc/ssl, ...).
 */
void v4l2cuse_sandbox_system_reads(const struct v4l2cuse_sandbox_config *cfg, GPtrArray *out);

/*
 * Enter the Landlock domain (see above). With AUTO and a kernel without
 * Landlock it logs one line and returns 0; with REQUIRED that is an error.
 * Call before any thread is created. 0 or -errno with one line in
 * *ret_error.
 */
int v4l2cuse_sandbox_restrict(const struct v4l2cuse_sandbox_config *cfg, char **ret_error);

/* The Landlock ABI in force, 0 if none. */
int v4l2cuse_sandbox_abi(void);

/*
 * One line on the state, for the log once setup succeeded (so that a
 * configuration error stays the only line): "Landlock ABI 2, 14 rules: ...",
 * "Landlock is not available (...): ...", "off (sandbox=off): ...".
 */
const char *v4l2cuse_sandbox_summary(void);

/*
 * A source spec named after the sandbox was entered: -EACCES with one line
 * ("'PATH' is outside the sandbox (readable: ...); ...") if it reads a file
 * the domain does not allow; 0 otherwise (also without a domain, and for a
 * path that does not resolve: the source reports that itself).
 */
int v4l2cuse_sandbox_check_spec(const char *spec, char **ret_error);
