/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The network under the service (network.h): what devices need, the
 * generator's drop-in, and the daemon's check against what the unit
 * allows. What a source spec reaches is sources/live-spec.c's
 * (v4l2cuse_source_network()); this file adds the device (network=,
 * placeholder=) and the unit.
 */
#include "config.h"

#include <string.h>
#include <glib.h>

#include "v4l2cuse/source.h"
#include "conf.h"
#include "network.h"

/* A peer as the drop-in and the log show it; a URI's host may hold anything. */
static char *
net_describe(enum v4l2cuse_source_net n, const char *peer)
{
	char *s;

	if (n == V4L2CUSE_SOURCE_NET_ADDRESS)
		s = g_strdup(peer);
	else if (peer)
		s = g_strdup_printf("%s, a host name: its addresses are not known at boot", peer);
	else
		s = g_strdup("any peer: a port that receives from any sender, or no single "
			     "peer named");
	return g_strdelimit(s, "\n\r\t\v\f\x1b", '?');
}

enum v4l2cuse_source_net
v4l2cuse_net_device_needs(const struct v4l2cuse_conf_device *d, GPtrArray *peers)
{
	const char *const specs[] = { d->source, d->placeholder };
	enum v4l2cuse_source_net need = V4L2CUSE_SOURCE_NET_NONE;

	if (d->has_network) {
		if (!d->network)
			return V4L2CUSE_SOURCE_NET_NONE;
		if (peers)
			g_ptr_array_add(peers, g_strdup("any peer (network=true)"));
		return V4L2CUSE_SOURCE_NET_ANY;
	}
	for (size_t i = 0; i < G_N_ELEMENTS(specs); i++) {
		g_autofree char *peer = NULL;
		enum v4l2cuse_source_net n = v4l2cuse_source_network(specs[i], &peer);

		if (n == V4L2CUSE_SOURCE_NET_NONE)
			continue;
		if (peers)
			g_ptr_array_add(peers, net_describe(n, peer));
		need = MAX(need, n);
	}
	return need;
}

bool
v4l2cuse_net_conf_needs(const struct v4l2cuse_conf *conf)
{
	for (unsigned int i = 0; i < conf->devices->len; i++) {
		const struct v4l2cuse_conf_device *d = conf->devices->pdata[i];

		if (d->enabled && v4l2cuse_net_device_needs(d, NULL) != V4L2CUSE_SOURCE_NET_NONE)
			return true;
	}
	return false;
}

static void
net_join(GString *s, GPtrArray *a, const char *sep)
{
	for (unsigned int i = 0; i < a->len; i++)
		g_string_append_printf(s, "%s%s", i ? sep : "", (char *)a->pdata[i]);
}

char *
v4l2cuse_net_dropin(const struct v4l2cuse_conf *conf, const char *source)
{
	g_autoptr(GPtrArray) addrs = g_ptr_array_new_with_free_func(g_free);
	GString *s = g_string_new(NULL);
	bool any = false, needed = false;

	g_string_append_printf(s,
		"# Written by v4l2cuse-generator from %s (and its conf.d/) at boot and at\n"
		"# every `systemctl daemon-reload`: the network that the configured devices\n"
		"# need (docs/service.md, \"Network\"). Change the configuration, not this file.\n",
		source);
	for (unsigned int i = 0; i < conf->devices->len; i++) {
		const struct v4l2cuse_conf_device *d = conf->devices->pdata[i];
		g_autoptr(GPtrArray) peers = g_ptr_array_new_with_free_func(g_free);
		enum v4l2cuse_source_net n;

		if (!d->enabled)
			continue;
		n = v4l2cuse_net_device_needs(d, peers);
		if (n == V4L2CUSE_SOURCE_NET_NONE)
			continue;
		needed = true;
		any |= n == V4L2CUSE_SOURCE_NET_ANY;
		g_string_append_printf(s, "# [device %s]: ", d->id);
		net_join(s, peers, "; ");
		g_string_append_c(s, '\n');
		/* Only read while !any, and then every peer is an address. */
		for (unsigned int k = 0; k < peers->len; k++) {
			if (!g_ptr_array_find_with_equal_func(addrs, peers->pdata[k], g_str_equal,
							      NULL))
				g_ptr_array_add(addrs, g_strdup(peers->pdata[k]));
		}
	}
	if (!needed) {
		g_string_free(s, TRUE);
		return NULL;
	}
	if (any)
		g_string_append(s, "# A device above has no single address known at boot: any address\n"
				   "# is allowed.\n");
	g_string_append(s, "[Service]\n"
			   "PrivateNetwork=no\n"
			   "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n"
			   "IPAddressAllow=");
	if (any)
		g_string_append(s, "any");
	else
		net_join(s, addrs, " ");
	g_string_append(s, "\nEnvironment=" V4L2CUSE_NET_ENV "=");
	if (any)
		g_string_append(s, "any");
	else
		net_join(s, addrs, ",");
	g_string_append_c(s, '\n');
	return g_string_free(s, FALSE);
}

char *
v4l2cuse_net_uncovered(const char *allowed, const struct v4l2cuse_conf_device *d)
{
	g_autoptr(GPtrArray) peers = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GString) need = g_string_new(NULL);
	g_auto(GStrv) list = NULL;
	enum v4l2cuse_source_net n;
	bool covered;

	if (!allowed)
		return NULL;
	n = v4l2cuse_net_device_needs(d, peers);
	if (n == V4L2CUSE_SOURCE_NET_NONE || strcmp(allowed, "any") == 0)
		return NULL;
	list = g_strsplit(allowed, ",", -1);
	for (unsigned int i = 0; list[i]; i++)
		g_strstrip(list[i]);
	covered = n == V4L2CUSE_SOURCE_NET_ADDRESS;
	for (unsigned int i = 0; covered && i < peers->len; i++)
		covered = g_strv_contains((const char *const *)list, peers->pdata[i]);
	if (covered)
		return NULL;
	net_join(need, peers, "; ");
	return g_strdup_printf("%s: needs the network (%s), which the service does not allow "
			       "(" V4L2CUSE_NET_ENV "=%s), and shows its placeholder; with the "
			       "device in the configuration, run 'systemctl daemon-reload && "
			       "systemctl restart v4l2cuse'", d->id, need->str, allowed);
}
