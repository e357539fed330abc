/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The readiness self-test (docs/cuse.md, "Names"): open each new node from a
 * worker thread, never from the dispatcher (whose loop must answer that
 * very open), and prove that this daemon instance serves it: QUERYCAP says
 * v4l2cuse, VIDIOC_V4L2CUSE_INFO returns our per-process nonce and the
 * node's name and id, and the node has the configured mode and group.
 *
 * Jobs run on a small thread pool; results come back on the main loop
 * through an eventfd, tagged with the caller's number, so a caller that
 * has moved on (device removed, timed out) just ignores a late one.
 */

#include <stdint.h>
#include <sys/types.h>

struct v4l2cuse_selftest;

struct v4l2cuse_selftest_spec {
	const char *node;	/* "video42" */
	const char *id;		/* expected device id */
	mode_t mode;		/* expected permission bits */
	gid_t gid;		/* expected group, (gid_t)-1: don't check */
};

/* Main loop: @r is 0 or -errno, @error one line when r < 0. */
typedef void (*v4l2cuse_selftest_done_fn)(void *data, uint64_t tag, int r,
					  const char *error);

struct v4l2cuse_selftest *v4l2cuse_selftest_new(v4l2cuse_selftest_done_fn done, void *data);
/*
 * Waits for running jobs and drops unreported results. Remove the nodes
 * under test first (close their CUSE sessions): a job blocked in open()
 * waits for the dispatcher otherwise. NULL-safe.
 */
void v4l2cuse_selftest_free(struct v4l2cuse_selftest *st);
void v4l2cuse_selftest_submit(struct v4l2cuse_selftest *st, uint64_t tag,
			      const struct v4l2cuse_selftest_spec *spec);

/* The test itself, blocking; any thread but the dispatcher. */
int v4l2cuse_selftest_check(const struct v4l2cuse_selftest_spec *spec, char **ret_error);
