/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * relayd-client: what v4l2-relayd does on a loopback's writer node to run
 * its camera only while somebody watches, for tests/vm/test-loopback.sh.
 *
 *   relayd-client DEVICE old|new SECONDS
 *
 * Opens DEVICE (O_RDWR, as GStreamer's v4l2sink, on whose fd v4l2-relayd
 * subscribes), subscribes to v4l2loopback's client-usage event (id 0,
 * V4L2_EVENT_SUB_FL_SEND_INITIAL) of type "old", V4L2_EVENT_PRIVATE_START
 * (v4l2-relayd's own definition, from v4l2loopback's first version), or
 * "new", V4L2_EVENT_PRIVATE_START + 0x08E00000 + 1 (v4l2loopback 0.13 and
 * later, which distributions patch v4l2-relayd to), then, as v4l2-relayd's
 * G_IO_PRI watch, polls for POLLPRI alone and on each wake-up DQEVENTs
 * until `pending` is 0. The ids are spelled out here rather than taken
 * from the daemon's header on purpose: this is the app's side of the ABI.
 *
 * Prints "relayd-client dev=D type=0x... subscribed", then per event
 * "usage=N seq=S ts=T at=T" (ts: the event's timestamp, at: when it was
 * dequeued, both CLOCK_MONOTONIC seconds), and at the end "relayd-client
 * events=N". Runs SECONDS seconds or until SIGTERM/SIGINT. Exit status:
 * 0 ran to its end with at least one event, 1 subscribing, polling or a
 * DQEVENT failed ("error: ..."), or no event came, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "vm-client.h"

/* v4l2loopback.h: V4L2LOOPBACK_EVENT_OFFSET and V4L2_EVENT_PRI_CLIENT_USAGE. */
#define EVENT_USAGE_OLD	V4L2_EVENT_PRIVATE_START
#define EVENT_USAGE_NEW	(V4L2_EVENT_PRIVATE_START + 0x08E00000 + 1)

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	stop = 1;
}

int
main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART: EINTR */
	struct v4l2_event_subscription sub;
	unsigned int events = 0;
	double end;
	uint32_t type;
	int fd;

	if (argc != 4 || (strcmp(argv[2], "old") != 0 && strcmp(argv[2], "new") != 0) ||
	    atoi(argv[3]) <= 0) {
		fprintf(stderr, "usage: relayd-client DEVICE old|new SECONDS\n");
		return 2;
	}
	type = strcmp(argv[2], "old") == 0 ? EVENT_USAGE_OLD : EVENT_USAGE_NEW;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* the script watches the lines come */

	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("error: %s: %s\n", argv[1], vm_errno_name(errno));
		return 1;
	}
	memset(&sub, 0, sizeof(sub));
	sub.type = type;
	sub.id = 0;
	sub.flags = V4L2_EVENT_SUB_FL_SEND_INITIAL;
	if (ioctl(fd, VIDIOC_SUBSCRIBE_EVENT, &sub) < 0) {
		printf("error: SUBSCRIBE_EVENT 0x%08x: %s\n", type, vm_errno_name(errno));
		return 1;
	}
	printf("relayd-client dev=%s type=0x%08x subscribed\n", argv[1], type);

	end = vm_clock_seconds(CLOCK_MONOTONIC) + atoi(argv[3]);
	while (!stop) {
		double left = end - vm_clock_seconds(CLOCK_MONOTONIC);
		struct pollfd pfd = { .fd = fd, .events = POLLPRI };
		struct v4l2_event ev;
		int n;

		if (left <= 0)
			break;
		n = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			printf("error: poll: %s\n", vm_errno_name(errno));
			return 1;
		}
		if (n == 0 || !(pfd.revents & POLLPRI))
			continue;
		do {
			struct v4l2_event_client_usage {
				uint32_t count;
			} usage;

			memset(&ev, 0, sizeof(ev));
			if (ioctl(fd, VIDIOC_DQEVENT, &ev) < 0) {
				printf("error: DQEVENT: %s\n", vm_errno_name(errno));
				return 1;
			}
			if (ev.type != type) {
				printf("event of type 0x%08x, not subscribed\n", ev.type);
				continue;
			}
			memcpy(&usage, &ev.u, sizeof(usage));
			events++;
			printf("usage=%u seq=%u ts=%.3f at=%.3f\n", usage.count, ev.sequence,
			       (double)ev.timestamp.tv_sec + ev.timestamp.tv_nsec / 1e9,
			       vm_clock_seconds(CLOCK_MONOTONIC));
		} while (ev.pending);
	}
	close(fd);
	printf("relayd-client events=%u\n", events);
	return events ? 0 : 1;
}
