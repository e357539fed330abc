/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * capture.c's seam for the unit tests (tests/unit/test-client-capture.c):
 * a capture on a node that is open and attached already, which the tests
 * make with the fake transport and the daemon's shim server.
 */

#include "client.h"
#include "shim-client.h"

/*
 * client_capture_start() after its open() and shim_attach(): @fd and
 * @shim become the capture's (closed through shim_real.close() and
 * dropped by client_capture_stop(), on failure too). @path names the
 * node in messages.
 */
int client_capture_start_attached(int fd, struct shim_handle *shim, const char *path,
				  const struct client_mode *mode, struct client_rate rate,
				  unsigned int n_buffers, struct client_capture **ret,
				  char **ret_error);
