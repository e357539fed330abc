/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The network under the service: what a source spec reaches
 * (v4l2cuse_source_network(), sources/live-spec.c), what a device needs
 * (network=, placeholder=), the daemon's check against the unit's
 * V4L2CUSE_SERVICE_NETWORK (daemon/network.c), and v4l2cuse-generator
 * itself ($V4L2CUSE_GENERATOR) run on configurations in a temporary
 * directory: the drop-in it writes, or none.
 */
#include "config.h"

#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "v4l2cuse/source.h"
#include "util/cleanup.h"
#include "conf.h"
#include "network.h"
#include "test-main.h"

V4L2CUSE_TEST("/network/source-spec", test_source_spec)
{
	static const struct {
		const char *spec;
		enum v4l2cuse_source_net need;
		const char *peer;
	} cases[] = {
		{ NULL, V4L2CUSE_SOURCE_NET_NONE, NULL },
		{ "pattern", V4L2CUSE_SOURCE_NET_NONE, NULL },
		{ "file:/srv/a.y4m", V4L2CUSE_SOURCE_NET_NONE, NULL },
		{ "uvc:/dev/video0", V4L2CUSE_SOURCE_NET_NONE, NULL },
		/* What a description connects to is not known (network= says it). */
		{ "gst:rtspsrc location=rtsp://192.0.2.7/x ! decodebin",
		  V4L2CUSE_SOURCE_NET_NONE, NULL },
		{ "uri:file:///srv/a.mp4", V4L2CUSE_SOURCE_NET_NONE, NULL },
		{ "uri:FILE:///srv/a.mp4,sizes=640x480", V4L2CUSE_SOURCE_NET_NONE, NULL },
		{ "uri:not a uri", V4L2CUSE_SOURCE_NET_NONE, NULL },
		{ "uri:rtsp://192.0.2.7:8554/x", V4L2CUSE_SOURCE_NET_ADDRESS, "192.0.2.7" },
		{ "uri:rtsp://viewer:secret@192.0.2.7:554/s1,latency=100,sizes=1280x720+640x480",
		  V4L2CUSE_SOURCE_NET_ADDRESS, "192.0.2.7" },
		/* The options are split off first: the port is "8554", not "8554,latency=100". */
		{ "uri:rtsp://192.0.2.7:8554,latency=100", V4L2CUSE_SOURCE_NET_ADDRESS, "192.0.2.7" },
		{ "uri:rtsp://[2001:DB8:0::1]/x", V4L2CUSE_SOURCE_NET_ADDRESS, "2001:db8::1" },
		{ "uri:rtsp://[fe80::1%25eth0]:554/x", V4L2CUSE_SOURCE_NET_ADDRESS, "fe80::1" },
		{ "uri:srt://192.0.2.8:9000", V4L2CUSE_SOURCE_NET_ADDRESS, "192.0.2.8" },
		{ "uri:https://198.51.100.3/cam.mjpg", V4L2CUSE_SOURCE_NET_ADDRESS, "198.51.100.3" },
		/* Names: resolved later, to addresses not known now. */
		{ "uri:http://cam.local/x.mjpg", V4L2CUSE_SOURCE_NET_ANY, "cam.local" },
		{ "uri:rtsps://user:pw@door.example:322/s", V4L2CUSE_SOURCE_NET_ANY, "door.example" },
		/* Receiving from any sender. */
		{ "uri:udp://0.0.0.0:5000", V4L2CUSE_SOURCE_NET_ANY, NULL },
		{ "uri:udp://@:5000", V4L2CUSE_SOURCE_NET_ANY, NULL },
		{ "uri:udp://192.0.2.7:5000", V4L2CUSE_SOURCE_NET_ANY, NULL },	/* ours, bound */
		{ "uri:rtp://@239.1.1.1:5004", V4L2CUSE_SOURCE_NET_ANY, NULL },
		{ "uri:srt://:9000?mode=listener", V4L2CUSE_SOURCE_NET_ANY, NULL },
		{ "uri:srt://192.0.2.8:9000?latency=100&mode=listener", V4L2CUSE_SOURCE_NET_ANY, NULL },
		{ "uri:rtsp://224.1.2.3/x", V4L2CUSE_SOURCE_NET_ANY, NULL },
		{ "uri:rtmp://[::]/live", V4L2CUSE_SOURCE_NET_ANY, NULL },
		/* GLib cannot read it: no peer known. */
		{ "uri:rtsp://cam:80x/s", V4L2CUSE_SOURCE_NET_ANY, NULL },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *peer = NULL;
		enum v4l2cuse_source_net n = v4l2cuse_source_network(cases[i].spec, &peer);

		if (n != cases[i].need || g_strcmp0(peer, cases[i].peer) != 0)
			g_error("'%s': expected %d '%s', got %d '%s'", cases[i].spec,
				cases[i].need, cases[i].peer, n, peer);
	}
}

/* The first device of @text (the parse must succeed). */
static struct v4l2cuse_conf *
conf_of(const char *text)
{
	struct v4l2cuse_conf *conf = v4l2cuse_conf_new();
	g_autofree char *err = NULL;

	if (v4l2cuse_conf_parse(conf, "t.conf", text, strlen(text), &err) < 0 ||
	    v4l2cuse_conf_finish(conf, &err) < 0)
		g_error("%s", err);
	return conf;
}

/* uri: and gst: are sources (and so valid in a configuration) with -Dgstreamer. */
#define SKIP_WITHOUT_URI() do {						\
	if (!HAVE_GSTREAMER_READER) {					\
		g_test_skip("uri: and gst: need -Dgstreamer");		\
		return;							\
	}								\
} while (0)

V4L2CUSE_TEST("/network/device", test_device)
{
	static const struct {
		const char *group;
		enum v4l2cuse_source_net need;
		const char *peers;
	} cases[] = {
		{ "source=pattern\n", V4L2CUSE_SOURCE_NET_NONE, "" },
		{ "source=uri:rtsp://192.0.2.7/x\n", V4L2CUSE_SOURCE_NET_ADDRESS, "192.0.2.7" },
		/* The placeholder counts too. */
		{ "source=uri:rtsp://192.0.2.7/x\nplaceholder=uri:rtsp://[2001:db8::1]/off\n",
		  V4L2CUSE_SOURCE_NET_ADDRESS, "192.0.2.7|2001:db8::1" },
		{ "source=pattern\nplaceholder=uri:http://cam.local/off.jpg\n",
		  V4L2CUSE_SOURCE_NET_ANY,
		  "cam.local, a host name: its addresses are not known at boot" },
		/* network= wins over the source: a description, or none at all. */
		{ "source=gst:videotestsrc\nnetwork=true\n", V4L2CUSE_SOURCE_NET_ANY,
		  "any peer (network=true)" },
		{ "source=uri:rtsp://192.0.2.7/x\nnetwork=false\n", V4L2CUSE_SOURCE_NET_NONE, "" },
	};

	SKIP_WITHOUT_URI();
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *text = g_strdup_printf("[device d]\n%s", cases[i].group);
		_cleanup_(v4l2cuse_conf_freep) struct v4l2cuse_conf *conf = conf_of(text);
		g_autoptr(GPtrArray) peers = g_ptr_array_new_with_free_func(g_free);
		g_autofree char *joined = NULL;
		enum v4l2cuse_source_net n;

		n = v4l2cuse_net_device_needs(conf->devices->pdata[0], peers);
		g_ptr_array_add(peers, NULL);
		joined = g_strjoinv("|", (char **)peers->pdata);
		if (n != cases[i].need || strcmp(joined, cases[i].peers) != 0)
			g_error("case %zu: expected %d '%s', got %d '%s'", i, cases[i].need,
				cases[i].peers, n, joined);
		g_assert_cmpint(v4l2cuse_net_conf_needs(conf), ==, n != V4L2CUSE_SOURCE_NET_NONE);
	}
}

/* The daemon's check: what the unit allows against what a device needs. */
static char *
uncovered(const char *allowed, const char *group)
{
	g_autofree char *text = g_strdup_printf("[device door]\n%s", group);
	_cleanup_(v4l2cuse_conf_freep) struct v4l2cuse_conf *conf = conf_of(text);

	return v4l2cuse_net_uncovered(allowed, conf->devices->pdata[0]);
}

V4L2CUSE_TEST("/network/uncovered", test_uncovered)
{
	static const char *const covered[][2] = {
		/* Not under the unit: nothing to say. */
		{ NULL, "source=uri:rtsp://192.0.2.7/x\n" },
		{ "none", "source=pattern\n" },
		{ "none", "source=uri:file:///srv/a.mp4\n" },
		{ "none", "source=uri:rtsp://192.0.2.7/x\nnetwork=false\n" },
		{ "192.0.2.7", "source=uri:rtsp://192.0.2.7:8554/x\n" },
		{ "198.51.100.1,192.0.2.7", "source=uri:rtsp://192.0.2.7/x\n" },
		{ "192.0.2.7,2001:db8::1",
		  "source=uri:rtsp://192.0.2.7/x\nplaceholder=uri:rtsp://[2001:db8::1]/off\n" },
		{ "any", "source=uri:http://cam.local/x\n" },
		{ "any", "source=gst:videotestsrc\nnetwork=true\n" },
		{ "any", "source=uri:udp://@:5000\n" },
	};
	static const char *const not_covered[][3] = {
		{ "none", "source=uri:rtsp://192.0.2.7/x\n", "192.0.2.7" },
		{ "192.0.2.7", "source=uri:rtsp://192.0.2.9/x\n", "192.0.2.9" },
		{ "192.0.2.7", "source=uri:rtsp://192.0.2.7/x\nplaceholder=uri:rtsp://192.0.2.9/o\n",
		  "192.0.2.7; 192.0.2.9" },
		/* A name is never covered by addresses: it may resolve to any. */
		{ "192.0.2.7", "source=uri:rtsp://cam.local/x\n", "cam.local, a host name" },
		{ "192.0.2.7", "source=uri:udp://192.0.2.7:5000\n", "any peer: a port that receives" },
		{ "none", "source=gst:videotestsrc\nnetwork=true\n", "any peer (network=true)" },
	};

	SKIP_WITHOUT_URI();
	for (size_t i = 0; i < G_N_ELEMENTS(covered); i++) {
		g_autofree char *msg = uncovered(covered[i][0], covered[i][1]);

		if (msg)
			g_error("case %zu: expected nothing, got '%s'", i, msg);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(not_covered); i++) {
		g_autofree char *msg = uncovered(not_covered[i][0], not_covered[i][1]);
		g_autofree char *env = g_strdup_printf("(V4L2CUSE_SERVICE_NETWORK=%s)",
						       not_covered[i][0]);
		g_autofree char *need = g_strdup_printf("needs the network (%s",
							not_covered[i][2]);

		g_assert_nonnull(msg);
		g_assert_null(strchr(msg, '\n'));
		g_assert_true(g_str_has_prefix(msg, "door: "));
		g_assert_nonnull(strstr(msg, need));
		g_assert_nonnull(strstr(msg, env));
		g_assert_nonnull(strstr(msg, "placeholder"));
		g_assert_nonnull(strstr(msg, "'systemctl daemon-reload && systemctl restart "
					     "v4l2cuse'"));
	}
}

/* --- v4l2cuse-generator -------------------------------------------------- */

struct gen_run {
	char *dir;		/* the temporary root */
	char *dropin;		/* its drop-in's text, NULL: none written */
	char *err;		/* its stderr */
	int status;		/* exit status */
};

static void
gen_run_clear(struct gen_run *g)
{
	g_autofree char *cmd = g->dir ? g_strdup_printf("rm -rf '%s'", g->dir) : NULL;

	if (cmd)
		g_assert_cmpint(system(cmd), ==, 0);
	g_free(g->dir);
	g_free(g->dropin);
	g_free(g->err);
}

static void
put(const char *dir, const char *name, const char *text)
{
	g_autofree char *p = g_build_filename(dir, name, NULL);
	g_autofree char *d = g_path_get_dirname(p);

	g_assert_cmpint(g_mkdir_with_parents(d, 0755), ==, 0);
	g_assert_true(g_file_set_contents(p, text, -1, NULL));
}

/*
 * Run the generator as systemd does (three output directories) on
 * DIR/etc/v4l2cuse.conf = @main (NULL: none) and DIR/etc/conf.d/10.conf =
 * @dropin (NULL: none).
 */
static void
gen_exec(struct gen_run *g, const char *main_text, const char *dropin_text)
{
	const char *exe = g_getenv("V4L2CUSE_GENERATOR");
	g_autoptr(GError) error = NULL;
	g_autofree char *conf = NULL, *normal = NULL, *early = NULL, *late = NULL, *out = NULL;
	g_autofree char *path = NULL, *ddir = NULL;
	int wait_status;

	g_assert_nonnull(exe);
	g->dir = g_dir_make_tmp("v4l2cuse-gen-XXXXXX", &error);
	g_assert_no_error(error);
	conf = g_build_filename(g->dir, "etc", "v4l2cuse.conf", NULL);
	if (main_text)
		put(g->dir, "etc/v4l2cuse.conf", main_text);
	if (dropin_text)
		put(g->dir, "etc/conf.d/10.conf", dropin_text);
	normal = g_build_filename(g->dir, "normal", NULL);
	early = g_build_filename(g->dir, "early", NULL);
	late = g_build_filename(g->dir, "late", NULL);
	{
		const char *argv[] = { exe, "--config", conf, normal, early, late, NULL };

		g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL,
					   NULL, &out, &g->err, &wait_status, &error));
		g_assert_no_error(error);
	}
	g_assert_true(WIFEXITED(wait_status));
	g->status = WEXITSTATUS(wait_status);
	g_assert_cmpstr(out, ==, "");
	path = g_build_filename(normal, "v4l2cuse.service.d", "50-network.conf", NULL);
	if (!g_file_get_contents(path, &g->dropin, NULL, NULL))
		g->dropin = NULL;
	/* Only ever the first directory, and only that file. */
	g_assert_false(g_file_test(early, G_FILE_TEST_EXISTS));
	g_assert_false(g_file_test(late, G_FILE_TEST_EXISTS));
	ddir = g_path_get_dirname(path);
	if (!g->dropin)
		g_assert_false(g_file_test(ddir, G_FILE_TEST_EXISTS));
}

/* The value of "KEY=" in @text's [Service] lines, NULL if none. */
static char *
setting(const char *text, const char *key)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
	g_autofree char *prefix = g_strdup_printf("%s=", key);
	char *found = NULL;

	for (unsigned int i = 0; lines[i]; i++) {
		if (g_str_has_prefix(lines[i], prefix)) {
			g_assert_null(found);	/* once */
			found = g_strdup(lines[i] + strlen(prefix));
		}
	}
	return found;
}

/* A drop-in was written, with the network back and these allowed. */
static void
assert_dropin(const struct gen_run *g, const char *allow, const char *env)
{
	g_autofree char *pn = NULL, *af = NULL, *ip = NULL, *e = NULL;

	g_assert_cmpint(g->status, ==, 0);
	g_assert_cmpstr(g->err, ==, "");
	g_assert_nonnull(g->dropin);
	g_assert_nonnull(strstr(g->dropin, "\n[Service]\n"));
	pn = setting(g->dropin, "PrivateNetwork");
	af = setting(g->dropin, "RestrictAddressFamilies");
	ip = setting(g->dropin, "IPAddressAllow");
	e = setting(g->dropin, "Environment");
	g_assert_cmpstr(pn, ==, "no");
	g_assert_cmpstr(af, ==, "AF_UNIX AF_INET AF_INET6");
	g_assert_cmpstr(ip, ==, allow);
	g_assert_true(g_str_has_prefix(e, "V4L2CUSE_SERVICE_NETWORK="));
	g_assert_cmpstr(e + strlen("V4L2CUSE_SERVICE_NETWORK="), ==, env);
	/* IPAddressDeny=any stays the unit's: not touched here. */
	g_assert_null(strstr(g->dropin, "IPAddressDeny"));
}

static void
assert_no_dropin(const struct gen_run *g)
{
	g_assert_cmpint(g->status, ==, 0);
	g_assert_cmpstr(g->err, ==, "");
	g_assert_null(g->dropin);
}

V4L2CUSE_TEST("/network/generator/none", test_gen_none)
{
	_cleanup_(gen_run_clear) struct gen_run a = { 0 };
	_cleanup_(gen_run_clear) struct gen_run b = { 0 };
	_cleanup_(gen_run_clear) struct gen_run c = { 0 };
	_cleanup_(gen_run_clear) struct gen_run d = { 0 };

	SKIP_WITHOUT_URI();
	/* No configuration at all: the daemon's default device. */
	gen_exec(&a, NULL, NULL);
	assert_no_dropin(&a);
	gen_exec(&b, "[device a]\nsource=pattern\n[device b]\nsource=uri:file:///srv/x.mp4\n"
		    "placeholder=file:/srv/off.png\n", NULL);
	assert_no_dropin(&b);
	/* Disabled: ignored; network=false: none, whatever the source. */
	gen_exec(&c, "[device a]\nsource=uri:rtsp://192.0.2.7/x\nenabled=false\n"
		    "[device b]\nsource=uri:http://cam.local/x\nnetwork=false\n", NULL);
	assert_no_dropin(&c);
	/* A gst: description reaches nothing by itself (network= says it does). */
	gen_exec(&d, "[device a]\nsource=gst:videotestsrc\n", NULL);
	assert_no_dropin(&d);
}

V4L2CUSE_TEST("/network/generator/address", test_gen_address)
{
	_cleanup_(gen_run_clear) struct gen_run a = { 0 };
	_cleanup_(gen_run_clear) struct gen_run b = { 0 };
	_cleanup_(gen_run_clear) struct gen_run c = { 0 };

	SKIP_WITHOUT_URI();
	gen_exec(&a, "[device door]\nsource=uri:rtsp://192.0.2.7:8554/x\n", NULL);
	assert_dropin(&a, "192.0.2.7", "192.0.2.7");
	g_assert_nonnull(strstr(a.dropin, "\n# [device door]: 192.0.2.7\n"));

	gen_exec(&b, "[device v6]\nsource=uri:rtsp://[2001:db8::1]/x,latency=100\n", NULL);
	assert_dropin(&b, "2001:db8::1", "2001:db8::1");

	/*
	 * Several devices, conf.d read as the daemon reads it, a placeholder,
	 * a disabled device's address left out, an address named twice once;
	 * no credentials in the file (it is world-readable under /run).
	 */
	gen_exec(&c, "[device door]\nsource=uri:rtsp://viewer:secret@192.0.2.7/x\n"
		    "[device old]\nsource=uri:rtsp://203.0.113.5/x\nenabled=false\n",
		"[device yard]\nsource=uri:rtsp://[2001:db8::1]/y\n"
		"placeholder=uri:rtsp://192.0.2.7/off\n");
	assert_dropin(&c, "192.0.2.7 2001:db8::1", "192.0.2.7,2001:db8::1");
	g_assert_null(strstr(c.dropin, "203.0.113.5"));
	g_assert_null(strstr(c.dropin, "secret"));
}

V4L2CUSE_TEST("/network/generator/any", test_gen_any)
{
	_cleanup_(gen_run_clear) struct gen_run a = { 0 };
	_cleanup_(gen_run_clear) struct gen_run b = { 0 };
	_cleanup_(gen_run_clear) struct gen_run c = { 0 };

	SKIP_WITHOUT_URI();
	/* A name: its addresses are not known at boot. */
	gen_exec(&a, "[device door]\nsource=uri:rtsp://192.0.2.7/x\n"
		    "[device lobby]\nsource=uri:http://cam.local/x.mjpg\n", NULL);
	assert_dropin(&a, "any", "any");
	g_assert_nonnull(strstr(a.dropin, "# [device lobby]: cam.local, a host name: its "
					  "addresses are not known at boot\n"));
	/* A gst: description said to use the network. */
	gen_exec(&b, "[device phone]\nsource=gst:videotestsrc\nnetwork=true\n", NULL);
	assert_dropin(&b, "any", "any");
	/* A port that receives: the sender is unknown. */
	gen_exec(&c, "[device udp]\nsource=uri:udp://0.0.0.0:5000\n", NULL);
	assert_dropin(&c, "any", "any");
}

V4L2CUSE_TEST("/network/generator/broken", test_gen_broken)
{
	_cleanup_(gen_run_clear) struct gen_run a = { 0 };
	_cleanup_(gen_run_clear) struct gen_run b = { 0 };

	SKIP_WITHOUT_URI();
	/* The daemon refuses the file too: the unit keeps no network, boot goes on. */
	gen_exec(&a, "[device door]\nsource=uri:rtsp://192.0.2.7/x\ncolour=red\n", NULL);
	g_assert_cmpint(a.status, ==, 0);
	g_assert_null(a.dropin);
	g_assert_true(g_str_has_prefix(a.err, "v4l2cuse-generator: "));
	g_assert_nonnull(strstr(a.err, "v4l2cuse.conf:3: [device door] colour: unknown key"));
	g_assert_true(g_str_has_suffix(a.err, "\n"));
	g_assert_cmpint(strchr(a.err, '\n') - a.err, ==, strlen(a.err) - 1);	/* one line */

	/* A bad conf.d file is as bad. */
	gen_exec(&b, "[device door]\nsource=uri:rtsp://192.0.2.7/x\n", "[device door]\n");
	g_assert_cmpint(b.status, ==, 0);
	g_assert_null(b.dropin);
	g_assert_nonnull(strstr(b.err, "already defined"));
}

/* What the generator allows covers every device it allowed it for. */
V4L2CUSE_TEST("/network/generator/round-trip", test_gen_round_trip)
{
	static const char text[] =
		"[device a]\nsource=uri:rtsp://192.0.2.7/x\n"
		"[device b]\nsource=uri:rtsp://[2001:db8::1]/x\nplaceholder=uri:http://198.51.100.2/o\n"
		"[device c]\nsource=pattern\n";
	_cleanup_(v4l2cuse_conf_freep) struct v4l2cuse_conf *conf = NULL;
	g_autofree char *dropin = NULL, *env = NULL;

	SKIP_WITHOUT_URI();
	conf = conf_of(text);
	dropin = v4l2cuse_net_dropin(conf, "t.conf");
	g_assert_nonnull(dropin);
	env = setting(dropin, "Environment");
	g_assert_cmpstr(env, ==, "V4L2CUSE_SERVICE_NETWORK=192.0.2.7,2001:db8::1,198.51.100.2");
	for (unsigned int i = 0; i < conf->devices->len; i++) {
		g_autofree char *msg = v4l2cuse_net_uncovered(strchr(env, '=') + 1,
							      conf->devices->pdata[i]);

		g_assert_null(msg);
	}
}
