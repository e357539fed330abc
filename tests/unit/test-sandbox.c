/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/sandbox.c without a daemon: the mode parser, the paths of source
 * specs, and (where the kernel has Landlock, in a subprocess) that the
 * domain lets a named file be read and refuses its sibling, both in the
 * kernel (EACCES) and in the pre-check's one-line message; name resolution
 * files readable only when a source needs the network.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "conf.h"
#include "sandbox.h"
#include "test-main.h"

V4L2CUSE_TEST("/sandbox/mode", test_mode)
{
	enum v4l2cuse_sandbox_mode m = V4L2CUSE_SANDBOX_AUTO;
	g_autofree char *err = NULL;

	g_assert_cmpint(v4l2cuse_sandbox_parse_mode("required", &m, &err), ==, 0);
	g_assert_cmpint(m, ==, V4L2CUSE_SANDBOX_REQUIRED);
	g_assert_cmpint(v4l2cuse_sandbox_parse_mode("off", &m, &err), ==, 0);
	g_assert_cmpint(m, ==, V4L2CUSE_SANDBOX_OFF);
	g_assert_cmpint(v4l2cuse_sandbox_parse_mode("yes", &m, &err), ==, -EINVAL);
	g_assert_cmpstr(err, ==, "'yes' is not a sandbox mode (auto, required or off)");
}

V4L2CUSE_TEST("/sandbox/spec-paths", test_spec_paths)
{
	static const struct {
		const char *spec;
		const char *paths;	/* joined with '|' */
	} cases[] = {
		{ "pattern", "" },
		{ "pattern:smpte,fps=5", "" },
		{ NULL, "" },
		{ "file:/a/b.y4m", "/a/b.y4m" },
		{ "file:rel.png,loop=0", "rel.png" },
		{ "uvc:/dev/video0,retry_ms=100", "" },
		{ "file", "" },
		{ "file:", "" },
		{ "files:/x", "" },
		{ "file,loop=0", "" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func(g_free);
		g_autofree char *joined = NULL;

		v4l2cuse_sandbox_spec_paths(cases[i].spec, a);
		g_ptr_array_add(a, NULL);
		joined = g_strjoinv("|", (char **)a->pdata);
		g_assert_cmpstr(joined, ==, cases[i].paths);
	}
}

/* [daemon] sandbox= and sandbox-paths= (daemon/conf.c). */
static void
conf_expect(const char *text, const char *error)
{
	struct v4l2cuse_conf *conf = v4l2cuse_conf_new();
	g_autofree char *err = NULL;
	int r = v4l2cuse_conf_parse(conf, "t.conf", text, strlen(text), &err);

	if (!error) {
		g_assert_cmpint(r, ==, 0);
		g_assert_cmpint(conf->sandbox, ==, V4L2CUSE_SANDBOX_OFF);
		g_assert_cmpuint(g_strv_length(conf->sandbox_paths), ==, 2);
		g_assert_cmpstr(conf->sandbox_paths[1], ==, "/b");
	} else {
		g_assert_cmpint(r, <, 0);
		g_assert_cmpstr(err, ==, error);
	}
	v4l2cuse_conf_free(conf);
}

V4L2CUSE_TEST("/sandbox/conf-keys", test_conf_keys)
{
	conf_expect("[daemon]\nsandbox = off\nsandbox-paths = /srv/cam, /b\n", NULL);
	conf_expect("[daemon]\nsandbox = maybe\n", "t.conf:2: [daemon] sandbox: 'maybe' is not a "
		    "sandbox mode (auto, required or off)");
	conf_expect("[daemon]\nsandbox-paths = /a, rel\n",
		    "t.conf:2: [daemon] sandbox-paths: 'rel' is not an absolute path");
	conf_expect("[daemon]\nsandboxes = 1\n",
		    "t.conf:2: [daemon] sandboxes: unknown key (known: sandbox, sandbox-paths)");
}

/* Without a domain nothing is refused by the pre-check. */
V4L2CUSE_TEST("/sandbox/no-domain", test_no_domain)
{
	g_autofree char *err = NULL;

	g_assert_cmpint(v4l2cuse_sandbox_abi(), ==, 0);
	g_assert_cmpint(v4l2cuse_sandbox_check_spec("file:/etc/passwd", &err), ==, 0);
	g_assert_null(err);
}

V4L2CUSE_TEST("/sandbox/domain", test_domain)
{
	g_autofree char *named = NULL, *sibling = NULL, *spec = NULL, *err = NULL;
	g_autoptr(GError) error = NULL;
	const char *dir, *reads[2];
	struct v4l2cuse_sandbox_config cfg = { .mode = V4L2CUSE_SANDBOX_AUTO };
	int fd;

	/* The parent makes and removes the files: the child may not remove. */
	if (!g_test_subprocess()) {
		g_autofree char *tmp = g_dir_make_tmp("v4l2cuse-sandbox-XXXXXX", &error);

		g_assert_no_error(error);
		named = g_build_filename(tmp, "named.y4m", NULL);
		sibling = g_build_filename(tmp, "sibling.y4m", NULL);
		g_assert_true(g_file_set_contents(named, "x", 1, NULL));
		g_assert_true(g_file_set_contents(sibling, "x", 1, NULL));
		g_setenv("V4L2CUSE_TEST_SANDBOX_DIR", tmp, TRUE);
		g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
		g_unlink(named);
		g_unlink(sibling);
		g_rmdir(tmp);
		g_test_trap_assert_passed();
		return;
	}
	dir = g_getenv("V4L2CUSE_TEST_SANDBOX_DIR");
	g_assert_nonnull(dir);
	named = g_build_filename(dir, "named.y4m", NULL);
	sibling = g_build_filename(dir, "sibling.y4m", NULL);
	reads[0] = named;
	reads[1] = NULL;
	cfg.read_paths = reads;

	g_assert_cmpint(v4l2cuse_sandbox_restrict(&cfg, &err), ==, 0);
	if (v4l2cuse_sandbox_abi() == 0) {
		g_test_skip("this kernel has no Landlock");
		return;
	}
	fd = open(named, O_RDONLY | O_CLOEXEC);
	g_assert_cmpint(fd, >=, 0);
	close(fd);
	fd = open(sibling, O_RDONLY | O_CLOEXEC);
	g_assert_cmpint(fd, ==, -1);
	g_assert_cmpint(errno, ==, EACCES);

	spec = g_strdup_printf("file:%s,loop=1", named);
	g_assert_cmpint(v4l2cuse_sandbox_check_spec(spec, &err), ==, 0);
	g_free(spec);
	spec = g_strdup_printf("file:%s,loop=0", sibling);
	g_assert_cmpint(v4l2cuse_sandbox_check_spec(spec, &err), ==, -EACCES);
	g_assert_nonnull(strstr(err, "is outside the sandbox (readable: "));
	g_assert_nonnull(strstr(err, named));
	g_assert_nonnull(strstr(err, "sandbox-paths="));
	g_clear_pointer(&err, g_free);
	/* /usr stays readable (GStreamer plugins); a missing file is the source's business. */
	g_assert_cmpint(v4l2cuse_sandbox_check_spec("file:/usr/bin", &err), ==, 0);
	g_assert_cmpint(v4l2cuse_sandbox_check_spec("file:/nonexistent/x.y4m", &err), ==, 0);
	g_assert_null(err);
}

/* What name resolution and TLS read, asked for only by network sources. */
static const char *const network_reads[] = {
	"/etc/hosts", "/etc/resolv.conf", "/etc/host.conf", "/etc/gai.conf", "/etc/ssl",
	"/run/systemd/resolve",
};

V4L2CUSE_TEST("/sandbox/system-reads", test_system_reads)
{
	for (int network = 0; network <= 1; network++) {
		struct v4l2cuse_sandbox_config cfg = { .network = network };
		g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func(g_free);

		v4l2cuse_sandbox_system_reads(&cfg, a);
		g_assert_true(g_ptr_array_find_with_equal_func(a, "/etc/nsswitch.conf", g_str_equal,
							       NULL));
		for (size_t i = 0; i < G_N_ELEMENTS(network_reads); i++)
			g_assert_cmpint(g_ptr_array_find_with_equal_func(a, network_reads[i],
									 g_str_equal, NULL),
					==, network);
	}
}

/* In the kernel: /etc/hosts is refused without a network source, read with one. */
static void
domain_network(gconstpointer data)
{
	struct v4l2cuse_sandbox_config cfg = {
		.mode = V4L2CUSE_SANDBOX_AUTO,
		.network = GPOINTER_TO_INT(data),
	};
	g_autofree char *err = NULL;
	int fd;

	if (!g_test_subprocess()) {
		g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
		g_test_trap_assert_passed();
		return;
	}
	if (!g_file_test("/etc/hosts", G_FILE_TEST_IS_REGULAR)) {
		g_test_skip("no /etc/hosts");
		return;
	}
	g_assert_cmpint(v4l2cuse_sandbox_restrict(&cfg, &err), ==, 0);
	if (v4l2cuse_sandbox_abi() == 0) {
		g_test_skip("this kernel has no Landlock");
		return;
	}
	g_assert_cmpint(strstr(v4l2cuse_sandbox_summary(), "name resolution") != NULL, ==,
			cfg.network);
	fd = open("/etc/hosts", O_RDONLY | O_CLOEXEC);
	if (cfg.network) {
		g_assert_cmpint(fd, >=, 0);
		close(fd);
	} else {
		g_assert_cmpint(fd, ==, -1);
		g_assert_cmpint(errno, ==, EACCES);
	}
}
V4L2CUSE_TEST_DATA("/sandbox/domain-network/off", domain_network, GINT_TO_POINTER(0))
V4L2CUSE_TEST_DATA("/sandbox/domain-network/on", domain_network, GINT_TO_POINTER(1))
