/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lbctl-client: v4l2loopback-ctl's part in tests/vm/test-loopback.sh, the
 * control device /dev/v4l2loopback driven with the calls v4l2loopback-ctl
 * makes (v4l2loopback's published ABI, as include/v4l2cuse/loopback-abi.h
 * writes it down):
 *
 *   lbctl-client [--old] [--device PATH] VERB ...
 *     add [-n LABEL] [-w MAXW] [-h MAXH] [--min-width W] [--min-height H]
 *         [-x EXCLUSIVE] [-b BUFFERS] [-o OPENERS] [OUTPUT [CAPTURE]]
 *     query DEVICE        list        delete DEVICE        version
 *     badcmd              (an ioctl v4l2loopback does not have)
 *
 * As v4l2loopback-ctl: add without options passes no structure (NULL),
 * else one with everything 0 but what was given (announce_all_caps -1
 * unless -x); CAPTURE goes into the structure's unused field (once
 * capture_nr), which v4l2loopback-ctl leaves uninitialised; DEVICE is
 * "/dev/videoN" or "N"; REMOVE passes the number by value. add prints
 * "/dev/videoN", query the structure, list "OUTPUT CAPTURE NAME" lines.
 * list queries every /dev/video* (v4l2loopback-ctl scans
 * /sys/devices/virtual/video4linux, where CUSE nodes are not). --old uses
 * the numbers of 0.13 and 0.14.
 *
 * A failed ioctl prints "VERB: ERRNO_NAME" (e.g. "delete: EBUSY") on
 * stdout and exits 1; bad usage exits 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "v4l2cuse/loopback-abi.h"
#include "vm-client.h"

static bool old_numbers;
static const char *ctl_path = "/dev/v4l2loopback";

static unsigned long
cmd_add(void)
{
	return old_numbers ? V4L2CUSE_LOOPBACK_CTL_ADD_OLD : V4L2CUSE_LOOPBACK_CTL_ADD;
}

static unsigned long
cmd_query(void)
{
	return old_numbers ? V4L2CUSE_LOOPBACK_CTL_QUERY_OLD : V4L2CUSE_LOOPBACK_CTL_QUERY;
}

static unsigned long
cmd_remove(void)
{
	return old_numbers ? V4L2CUSE_LOOPBACK_CTL_REMOVE_OLD : V4L2CUSE_LOOPBACK_CTL_REMOVE;
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: lbctl-client [--old] [--device PATH] "
		"add [OPTIONS] [OUTPUT [CAPTURE]] | query DEVICE | list | delete DEVICE | "
		"version | badcmd\n");
	exit(2);
}

/* "/dev/video7" or "7": 7; -1 for anything else. */
static int
parse_device(const char *s)
{
	char *end;
	long n;

	if (strncmp(s, "/dev/video", 10) == 0)
		s += 10;
	n = strtol(s, &end, 10);
	return *s && !*end && n >= 0 && n <= 0x7fffffff ? (int)n : -1;
}

static int
parse_int(const char *what, const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (!*s || *end) {
		fprintf(stderr, "lbctl-client: %s: '%s' is not a number\n", what, s);
		exit(2);
	}
	return (int)n;
}

static int
failed(const char *verb, int err)
{
	printf("%s: %s\n", verb, vm_errno_name(err));
	return 1;
}

static void
print_config(const struct v4l2cuse_loopback_config *cfg)
{
	printf("\tcapture_device#  : %d\n"
	       "\toutput_device#   : %d\n"
	       "\tcard_label       : %.32s\n"
	       "\tmin_width        : %u\n"
	       "\tmax_width        : %u\n"
	       "\tmin_height       : %u\n"
	       "\tmax_height       : %u\n"
	       "\tannounce_all_caps: %d\n"
	       "\tmax_buffers      : %d\n"
	       "\tmax_openers      : %d\n"
	       "\tdebug            : %d\n",
	       cfg->unused, cfg->output_nr, cfg->card_label, cfg->min_width, cfg->max_width,
	       cfg->min_height, cfg->max_height, cfg->announce_all_caps, cfg->max_buffers,
	       cfg->max_openers, cfg->debug);
}

static int
do_add(int fd, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "max-width", required_argument, NULL, 'w' },
		{ "max-height", required_argument, NULL, 'h' },
		{ "min-width", required_argument, NULL, 'W' },
		{ "min-height", required_argument, NULL, 'H' },
		{ "exclusive-caps", required_argument, NULL, 'x' },
		{ "buffers", required_argument, NULL, 'b' },
		{ "max-openers", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	struct v4l2cuse_loopback_config cfg;
	bool any = false;
	int c, r;

	/* v4l2loopback-ctl's: a stack structure, capture_nr never written. */
	memset(&cfg, 0, sizeof(cfg));
	cfg.unused = 0x5a5a5a5a;
	cfg.output_nr = -1;
	cfg.announce_all_caps = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:w:h:x:b:o:", opts, NULL)) != -1) {
		any = true;
		switch (c) {
		case 'n':
			snprintf(cfg.card_label, sizeof(cfg.card_label), "%s", optarg);
			break;
		case 'w':
			cfg.max_width = parse_int("max-width", optarg);
			break;
		case 'h':
			cfg.max_height = parse_int("max-height", optarg);
			break;
		case 'W':
			cfg.min_width = parse_int("min-width", optarg);
			break;
		case 'H':
			cfg.min_height = parse_int("min-height", optarg);
			break;
		case 'x':
			cfg.announce_all_caps = !parse_int("exclusive-caps", optarg);
			break;
		case 'b':
			cfg.max_buffers = parse_int("buffers", optarg);
			break;
		case 'o':
			cfg.max_openers = parse_int("max-openers", optarg);
			break;
		default:
			usage();
		}
	}
	if (argc - optind > 2)
		usage();
	if (argc - optind >= 1) {
		cfg.output_nr = parse_device(argv[optind]);
		if (cfg.output_nr < 0)
			usage();
		any = true;
	}
	if (argc - optind == 2) {
		cfg.unused = parse_device(argv[optind + 1]);
		if (cfg.unused < 0)
			usage();
	}
	r = ioctl(fd, cmd_add(), any ? &cfg : NULL);
	if (r < 0)
		return failed("add", errno);
	printf("/dev/video%d\n", r);
	return 0;
}

static int
query(int fd, int nr, struct v4l2cuse_loopback_config *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->output_nr = nr;
	ret->unused = nr;
	return ioctl(fd, cmd_query(), ret) < 0 ? -errno : 0;
}

static int
do_query(int fd, const char *device)
{
	struct v4l2cuse_loopback_config cfg;
	int nr = parse_device(device), r;

	if (nr < 0)
		usage();
	r = query(fd, nr, &cfg);
	if (r < 0)
		return failed("query", -r);
	printf("%s\n", device);
	print_config(&cfg);
	return 0;
}

static int
do_list(int fd)
{
	glob_t g = { 0 };
	int seen[64], n_seen = 0;

	glob("/dev/video*", 0, NULL, &g);
	printf("OUTPUT\tCAPTURE\tNAME\n");
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct v4l2cuse_loopback_config cfg;
		int nr = parse_device(g.gl_pathv[i]);
		bool dup = false;

		if (nr < 0 || query(fd, nr, &cfg) < 0)
			continue;
		for (int k = 0; k < n_seen; k++)
			dup |= seen[k] == cfg.output_nr;
		if (dup || n_seen == 64)
			continue;
		seen[n_seen++] = cfg.output_nr;
		printf("/dev/video%d\t/dev/video%d\t%.32s\n", cfg.output_nr, cfg.unused,
		       cfg.card_label);
	}
	globfree(&g);
	return 0;
}

static int
do_delete(int fd, const char *device)
{
	int nr = parse_device(device);

	if (nr < 0)
		usage();
	/* The number itself, not a pointer (v4l2loopback-ctl's call). */
	if (ioctl(fd, cmd_remove(), (unsigned long)nr) < 0)
		return failed("delete", errno);
	return 0;
}

static int
do_version(int fd)
{
	uint32_t v = 0;

	if (ioctl(fd, V4L2CUSE_LOOPBACK_CTL_VERSION, &v) < 0)
		return failed("version", errno);
	printf("%u.%u.%u\n", (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *verb;
	int fd, i = 1, r;

	while (i < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "--old") == 0)
			old_numbers = true;
		else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
			ctl_path = argv[++i];
		else
			usage();
		i++;
	}
	if (i >= argc)
		usage();
	verb = argv[i];
	fd = open(ctl_path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "lbctl-client: %s: %s\n", ctl_path, strerror(errno));
		return failed("open", errno);
	}
	if (strcmp(verb, "add") == 0)
		r = do_add(fd, argc - i, argv + i);
	else if (strcmp(verb, "query") == 0 && argc - i == 2)
		r = do_query(fd, argv[i + 1]);
	else if (strcmp(verb, "list") == 0 && argc - i == 1)
		r = do_list(fd);
	else if (strcmp(verb, "delete") == 0 && argc - i == 2)
		r = do_delete(fd, argv[i + 1]);
	else if (strcmp(verb, "version") == 0 && argc - i == 1)
		r = do_version(fd);
	else if (strcmp(verb, "badcmd") == 0 && argc - i == 1) {
		uint32_t v = 0;

		r = ioctl(fd, _IOR(V4L2CUSE_LOOPBACK_CTL_MAGIC, 9, uint32_t), &v) < 0 ?
		    failed("badcmd", errno) : 0;
	} else
		usage();
	close(fd);
	return r;
}
