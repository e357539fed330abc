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
