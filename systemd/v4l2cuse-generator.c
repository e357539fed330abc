/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * v4l2cuse-generator: a systemd system generator (systemd.generator(7))
 * that gives v4l2cuse.service exactly the network its configured sources
 * need (daemon/network.h, docs/service.md "Network").
 *
 *   v4l2cuse-generator [--config PATH] NORMAL_DIR [EARLY_DIR LATE_DIR]
 *
 * systemd runs it at boot and at every `systemctl daemon-reload` with the
 * three directories; it reads the daemon's configuration as the daemon
 * does (v4l2cuse_conf_load(), the daemon's default path; --config is for
 * tests and for a unit started with another one) and, when an enabled
 * device needs the network, writes NORMAL_DIR/v4l2cuse.service.d/
 * 50-network.conf. Otherwise it writes nothing and the unit keeps no
 * network. A configuration that does not load is one line on stderr
 * (the journal) and no drop-in: the daemon refuses that file too, and a
 * generator must not fail the boot, so the exit status is 0.
 *
 * Generators run before most services: nothing here talks to another
 * process. Group names in the configuration are looked up with NSS;
 * nss-systemd is told not to ask PID 1, which waits for us.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "util/cleanup.h"
#include "conf.h"
#include "network.h"

static int
gen_write(const char *dir, const char *text)
{
	g_autofree char *ddir = g_build_filename(dir, V4L2CUSE_NET_DROPIN_DIR, NULL);
	g_autofree char *path = g_build_filename(ddir, V4L2CUSE_NET_DROPIN_FILE, NULL);
	g_autoptr(GError) error = NULL;

	if (g_mkdir_with_parents(ddir, 0755) < 0) {
		fprintf(stderr, "v4l2cuse-generator: %s: %s; the unit keeps no network\n", ddir,
			g_strerror(errno));
		return -1;
	}
	if (!g_file_set_contents_full(path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644,
				      &error)) {
		fprintf(stderr, "v4l2cuse-generator: %s; the unit keeps no network\n",
			error->message);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	_cleanup_(v4l2cuse_conf_freep) struct v4l2cuse_conf *conf = NULL;
	const char *config = V4L2CUSE_CONF_DEFAULT_PATH;
	g_autofree char *err = NULL, *text = NULL;
	bool found;	/* neither file: the daemon's default device, no network */
	int i = 1;

	if (argc > 2 && strcmp(argv[1], "--config") == 0) {
		config = argv[2];
		i = 3;
	}
	if (argc - i != 1 && argc - i != 3) {
		fprintf(stderr, "usage: v4l2cuse-generator [--config PATH] NORMAL_DIR "
			"[EARLY_DIR LATE_DIR]\n");
		return 2;
	}
	/* nss-systemd: no varlink call to PID 1, which runs generators synchronously. */
	g_setenv("SYSTEMD_NSS_DYNAMIC_BYPASS", "1", TRUE);
	if (v4l2cuse_conf_load(config, false, &conf, &found, &err) < 0) {
		fprintf(stderr, "v4l2cuse-generator: %s; the unit keeps no network\n", err);
		return 0;
	}
	text = v4l2cuse_net_dropin(conf, config);
	/* systemd logs a failed generator and boots on. */
	if (text && gen_write(argv[i], text) < 0)
		return 1;
	return 0;
}
