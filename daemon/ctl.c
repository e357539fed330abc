/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * v4l2cuse-ctl: talk to a running v4l2cuse over its control socket
 * (include/v4l2cuse/ctl-protocol.h, docs/man/v4l2cuse-ctl.1).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <glib.h>

#include "v4l2cuse/ctl-protocol.h"

#define EXIT_USAGE 2

static const char usage_text[] =
	"Usage: v4l2cuse-ctl [--socket PATH] COMMAND [ARGS...]\n"
	"\n"
	"Commands:\n"
	"  list                          devices, nodes, states, consumers, frame counts\n"
	"  stats                         the daemon's and each device's figures, KEY VALUE\n"
	"  add ID [KEY=VALUE...]         add a device (keys as in v4l2cuse.conf(5))\n"
	"  remove ID                     remove a device\n"
	"  set-source ID SPEC            switch a device's source live (same format)\n"
	"  set-placeholder ID SPEC|none  frames shown while the source fails\n"
	"  reload                        re-read the configuration (like SIGHUP)\n"
	"\n"
	"The socket is $V4L2CUSE_CTL_SOCKET, else " V4L2CUSE_CTL_RUNDIR "/"
	V4L2CUSE_CTL_SOCKET_NAME ".\n"
	"Exit status: 0 ok, 1 the daemon refused or is unreachable, 2 usage.\n";

static int
usage(FILE *f, int status)
{
	fputs(usage_text, f);
	return status;
}

int
main(int argc, char **argv)
{
	const char *path = g_getenv("V4L2CUSE_CTL_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	g_autoptr(GString) req = g_string_new(NULL);
	g_autoptr(GString) reply = g_string_new(NULL);
	char buf[4096];
	const char *last;
	int i = 1, fd;
	ssize_t n;

	if (!path || !*path)
		path = V4L2CUSE_CTL_RUNDIR "/" V4L2CUSE_CTL_SOCKET_NAME;
	if (i < argc && (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0))
		return usage(stdout, 0);
	if (i < argc && strcmp(argv[i], "--version") == 0) {
		printf("v4l2cuse-ctl %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (i + 1 < argc && strcmp(argv[i], "--socket") == 0) {
		path = argv[i + 1];
		i += 2;
	}
	if (i >= argc)
		return usage(stderr, EXIT_USAGE);
	for (int k = i; k < argc; k++) {
		if (strpbrk(argv[k], "\t\n")) {
			fprintf(stderr,
				"v4l2cuse-ctl: arguments cannot contain tabs or newlines\n");
			return EXIT_USAGE;
		}
		g_string_append_printf(req, "%s%s", k > i ? "\t" : "", argv[k]);
	}
	g_string_append_c(req, '\n');
	if (req->len > V4L2CUSE_CTL_MAX_REQUEST) {
		fprintf(stderr, "v4l2cuse-ctl: request longer than %d bytes\n",
			V4L2CUSE_CTL_MAX_REQUEST);
		return EXIT_USAGE;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "v4l2cuse-ctl: socket path too long: %s\n", path);
		return EXIT_USAGE;
	}
	strcpy(sa.sun_path, path);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		fprintf(stderr, "v4l2cuse-ctl: cannot connect to %s: %s%s\n", path, g_strerror(e),
			e == EACCES ? " (root or the daemon's control-group only)" : "");
		/*
		 * Nobody listens. A running daemon may still have no socket:
		 * every daemon shares this path, and one that found it taken
		 * stays without it when the other ends (daemon/control.h).
		 */
		if (e == ENOENT || e == ECONNREFUSED)
			fprintf(stderr, "v4l2cuse-ctl: %sno v4l2cuse listens there: none is "
				"running, or the one running has another control-socket= (use "
				"--socket), or it runs without a control socket because another "
				"daemon held this one when it started, or it could not create it "
				"(its log says which)\n",
				e == ECONNREFUSED ? "the socket was left by a v4l2cuse that ended; "
						  : "");
		return 1;
	}
	for (size_t done = 0; done < req->len;) {
		n = send(fd, req->str + done, req->len - done, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "v4l2cuse-ctl: sending to %s: %s\n", path,
				g_strerror(errno));
			return 1;
		}
		done += (size_t)n;
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "v4l2cuse-ctl: reading from %s: %s\n", path,
				g_strerror(errno));
			return 1;
		}
		g_string_append_len(reply, buf, n);
	}
	close(fd);

	/* Everything but the last line is output; the last says ok or error. */
	if (reply->len && reply->str[reply->len - 1] == '\n')
		g_string_truncate(reply, reply->len - 1);
	last = strrchr(reply->str, '\n');
	last = last ? last + 1 : reply->str;
	fwrite(reply->str, 1, last - reply->str, stdout);
	if (strcmp(last, "ok") == 0)
		return 0;
	if (g_str_has_prefix(last, "error "))
		fprintf(stderr, "v4l2cuse-ctl: %s\n", last + 6);
	else
		fprintf(stderr,
			"v4l2cuse-ctl: the daemon closed the connection without an answer\n");
	return 1;
}
