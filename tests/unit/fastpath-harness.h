/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The harness of test-fastpath.c: the daemon's side (a device through the
 * fake transport and its shim socket server) runs on the main loop, an
 * "app" thread uses the shim's side as the library does inside an app, and
 * every CUSE request the app makes is handed to the loop thread as the
 * kernel would hand it to the daemon. Polling a node's fd asks the device.
 * Its main() (test-main.h) sets the shim's libc table up, then runs the
 * program's registered tests. Used by test-fastpath.c, test-fastpath-read.c,
 * test-fastpath-write.c, test-fastpath-races.c and test-client-capture.c.
 * The shim's real read() and write() of a node are CUSE ones (fake_read(),
 * fake_write(): requests of at most 128 KiB), counted in the device's
 * requests as every ioctl.
 */

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "videobuf.h"
#include "device.h"
#include "hub.h"
#include "shim.h"
#include "preload-private.h"

#define W 160
#define H 120
#define SIZEIMAGE (W * H * 2)
#define FPS 60
#define INTERVAL_NS (1000000000ull / FPS)

struct fixture {
	char *dir;
	struct v4l2cuse_device *dev;
	struct v4l2cuse_shim *shim;
	struct v4l2cuse_hub *hub;
	struct v4l2cuse_device *capture;	/* output test: the writer's reader */
	struct v4l2cuse_shim *capture_shim;
	GMainLoop *loop;
	pthread_t app;
};

struct client {
	struct fixture *f;
	struct v4l2cuse_device *dev;
	struct v4l2cuse_fh *fh;
	struct shim_handle *h;
	int fd;				/* the app's fd of the node: tracked, for poll & co */
	uint32_t type;
	unsigned int n;
	uint8_t *mem[VB_MAX_BUFFERS];
	size_t len[VB_MAX_BUFFERS];
};

/* Run @fn on the loop thread, as the kernel hands a request to the daemon. */
void on_loop(void (*fn)(gpointer), gpointer data);
/*
 * Signal the app thread with SIGUSR1 every @interval_ms, from the loop
 * thread, until app_signals_stop(): its wait may not have begun when the
 * first one comes. The handler only counts (app_signals_seen()); without
 * @restart (SA_RESTART) a wait it interrupts ends with EINTR, with it the
 * wait goes on, as the kernel restarts an interrupted ioctl or read().
 * After the stop SIGUSR1 is ignored (a signal sent just before may still
 * arrive).
 */
void app_signals_start(struct fixture *f, unsigned int interval_ms, bool restart);
unsigned int app_signals_seen(void);
void app_signals_stop(void);
/*
 * epoll_wait() on @ep as the shim rewrites it (shim_epoll_fix) until one
 * event comes, which must be EPOLLIN with @data; stale wake-ups dropped.
 */
void epoll_wait_in(int ep, uint64_t data);
/* An ioctl through "CUSE". */
int cuse_ioctl(struct v4l2cuse_fh *fh, unsigned int cmd, void *arg);
/* The device's counters, read on the loop thread. */
struct v4l2cuse_device_stats stats(struct v4l2cuse_device *dev);
/* Run @fn as the app, while this thread serves as the daemon. */
void run_app(struct fixture *f, void (*fn)(struct fixture *f));
/*
 * A device (data "shared": share=true; "output": a loopback writer, with
 * its reader in capture; "static": every frame the same, no overlay) and
 * its shim server.
 */
void fixture_setup(struct fixture *f, gconstpointer data);
void fixture_teardown(struct fixture *f, gconstpointer data);
/* The handle of the app's fd @fd (taken off the list with @remove); NULL if none. */
struct v4l2cuse_fh *node_fh(int fd, bool remove);
/* Open @dev, attach to its shim server, with the fast path if @fast. */
void client_open(struct fixture *f, struct v4l2cuse_device *dev, struct client *c, bool fast);
/* REQBUFS(@n) MMAP, map, QBUF the first @queue buffers (CUSE), STREAMON. */
void client_stream(struct client *c, unsigned int n, unsigned int queue);
/* Unmap, drop the shim handle, release the handle (on the loop). */
void client_close(struct client *c);
/*
 * The app's close() of the client's fd, as the kernel sees it: the shim
 * forgets the fd, and the handle is released (c->fh NULL) unless another
 * fd (one the shim dup'ed) still refers to the file. The shim handle and
 * the mappings stay the test's.
 */
void client_close_fd(struct client *c);
/* Move the client's fd to the (free) number @fd, as if the open had returned it. */
void client_renumber(struct client *c, int fd);
/* poll() of the app's fd through the shim: the revents, 0 after 5 s. */
short client_poll(struct client *c, short events, int timeout_ms);
/* Wait for a frame and DQBUF it through the fast path. */
void fast_dqbuf(struct client *c, struct v4l2_buffer *b);
/* DQBUF through the fast path, no poll() first (a blocking one waits in the shim). */
void fast_dqbuf_now(struct client *c, struct v4l2_buffer *b);
/* QBUF @index through the fast path. */
void fast_qbuf(struct client *c, uint32_t index);
/* The buffer's timestamp in microseconds. */
int64_t ts_us(const struct v4l2_buffer *b);
/* Release the client's (@p) handle; call it on the loop. */
void release_cb(gpointer p);
