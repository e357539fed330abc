/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <glib-unix.h>

/*
 * g_unix_fd_add() for the watches that fire once a frame or more (frame
 * timers, camera fds, the fast path's and the transports' sockets).
 *
 * GLib blocks a source that cannot recurse while its callback runs: it
 * takes the source's fds out of the poll set before the callback and puts
 * them back after it, and each of the two changes signals the context's
 * wake-up eventfd (GLib 2.74). Every dispatch then cost two write()s, a
 * poll() woken by them and a read(): four of the seven system calls the
 * daemon made per streamed frame (strace in the test VM). A source that
 * may recurse is not blocked. None of the daemon's callbacks runs a main
 * loop of its own, so a watch can never be dispatched inside itself.
 */
static inline guint
v4l2cuse_fd_watch_add(int fd, GIOCondition cond, GUnixFDSourceFunc fn, gpointer data)
{
	GSource *s = g_unix_fd_source_new(fd, cond);
	guint id;

	g_source_set_callback(s, (GSourceFunc)(void (*)(void))fn, data, NULL);
	g_source_set_can_recurse(s, TRUE);
	id = g_source_attach(s, NULL);
	g_source_unref(s);
	return id;
}
