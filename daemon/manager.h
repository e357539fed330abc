/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The set of devices one daemon serves: for each, its v4l2cuse_device, its
 * CUSE session and its preload-shim socket, all on the one GLib main loop
 * (one dispatcher, however many devices). A device whose node name is
 * taken is reported and retried per the [daemon] retry policy without
 * touching the others. Every registered node passes the self-test
 * (selftest.h) before it counts as serving. Reloads add, remove and change
 * devices and leave untouched ones alone. Loop thread only.
 */

#include <stdbool.h>
#include <glib.h>

#include "conf.h"
#include "loopback.h"

struct v4l2cuse_manager;

struct v4l2cuse_manager_events {
	/* Every device has finished its first attempt (serving or failed). */
	void (*settled)(void *data);
	/* A device failed and the manager was told to stop on failure. */
	void (*fatal)(void *data, const char *error);
	/* Something list/STATUS shows changed. */
	void (*changed)(void *data);
};

/*
 * @stop_on_failure: a failed registration or self-test ends the daemon
 * (the single-device command line), instead of being retried.
 */
struct v4l2cuse_manager *v4l2cuse_manager_new(const struct v4l2cuse_manager_events *ev,
					      void *data, bool stop_on_failure);
/* Removes every device (parked requests get ENODEV, nodes vanish). NULL-safe. */
void v4l2cuse_manager_free(struct v4l2cuse_manager *m);

/*
 * Make the configured devices match @conf (taking it over): create new
 * ones, remove those gone, switch the source of those whose source or
 * placeholder changed, re-create those with other changes, leave the rest
 * alone. Devices added with v4l2cuse_manager_add() stay unless @conf
 * defines the same id. All new devices are built before anything changes:
 * on failure nothing changed and *ret_error has one line.
 */
int v4l2cuse_manager_apply(struct v4l2cuse_manager *m, struct v4l2cuse_conf *conf,
			   char **ret_error);
bool v4l2cuse_manager_settled(struct v4l2cuse_manager *m);
/* Devices serving / configured and enabled. */
void v4l2cuse_manager_count(struct v4l2cuse_manager *m, unsigned int *ret_serving,
			    unsigned int *ret_total);

/* Runtime control (v4l2cuse-ctl); 0 or -errno with one line in *ret_error. */
int v4l2cuse_manager_add(struct v4l2cuse_manager *m, const struct v4l2cuse_conf_device *d,
			 char **ret_error);
int v4l2cuse_manager_remove(struct v4l2cuse_manager *m, const char *id, char **ret_error);
/*
 * v4l2cuse-ctl add, and the v4l2loopback control device's ADD
 * (daemon/lbctl.c): the group [device @id] of @keys (NULL-terminated, each
 * "KEY=VALUE" as a line of a configuration file, the value escaped as in
 * one), with the daemon's defaults for group= and mode=, then
 * v4l2cuse_manager_add().
 */
int v4l2cuse_manager_add_keys(struct v4l2cuse_manager *m, const char *id,
			      const char *const *keys, char **ret_error);

/*
 * Told once, from the main loop: @r 0 when the device serves with every
 * node of it registered (a loopback's writer node too); -errno and one
 * line (-EEXIST: a node name was taken) when an attempt failed (the
 * device stays, retried as configured, unless @fn removes it); -ENODEV
 * when it was removed first (then @fn must not call the manager).
 */
typedef void (*v4l2cuse_manager_ready_fn)(void *data, int r, const char *error);
/* Watch device @id (one watch per device, replacing any); 0 or -ENOENT. */
int v4l2cuse_manager_watch_ready(struct v4l2cuse_manager *m, const char *id,
				 v4l2cuse_manager_ready_fn fn, void *data);
/* Drop @id's watch without a word (the watcher goes away). */
void v4l2cuse_manager_unwatch_ready(struct v4l2cuse_manager *m, const char *id);

/* A loopback device, as the v4l2loopback control device sees it. */
struct v4l2cuse_manager_loopback {
	const char *id;			/* borrowed until the next change */
	const char *node;		/* the capture node, "video32" */
	const char *writer_node;	/* "video33" */
	const char *label;		/* the capture node's QUERYCAP card */
	bool serving;
	unsigned int opens;		/* handles open on either node */
	struct v4l2cuse_loopback_stats lb;	/* its writers' size limits, ... */
};

/* The built loopback device one of whose nodes is @node: 0, or -ENODEV. */
int v4l2cuse_manager_find_loopback(struct v4l2cuse_manager *m, const char *node,
				   struct v4l2cuse_manager_loopback *ret);
/* The same for device @id: 0, or -ENODEV (none, not a loopback, not built). */
int v4l2cuse_manager_loopback_by_id(struct v4l2cuse_manager *m, const char *id,
				    struct v4l2cuse_manager_loopback *ret);
bool v4l2cuse_manager_has_device(struct v4l2cuse_manager *m, const char *id);
/* Whether a device of ours or anything else (/dev, CUSE, V4L2) has node name @node. */
bool v4l2cuse_manager_node_taken(struct v4l2cuse_manager *m, const char *node);
int v4l2cuse_manager_set_source(struct v4l2cuse_manager *m, const char *id,
				const char *spec, char **ret_error);
int v4l2cuse_manager_set_placeholder(struct v4l2cuse_manager *m, const char *id,
				     const char *spec, char **ret_error);
/* A header line and one line per device (v4l2cuse-ctl list). */
void v4l2cuse_manager_list(struct v4l2cuse_manager *m, GString *out);
/* Daemon-wide figures, then each device's (v4l2cuse-ctl stats). */
void v4l2cuse_manager_stats(struct v4l2cuse_manager *m, GString *out);
/* One line for systemd's STATUS=. */
char *v4l2cuse_manager_status(struct v4l2cuse_manager *m);
/* Each serving device (the USB/IP server's exports): @fn(id, node, label). */
void v4l2cuse_manager_foreach_serving(struct v4l2cuse_manager *m,
				      void (*fn)(const char *id, const char *node,
						 const char *label, void *data),
				      void *data);
/* The daemon-wide settings in force (the last applied configuration). */
const struct v4l2cuse_conf *v4l2cuse_manager_conf(struct v4l2cuse_manager *m);
