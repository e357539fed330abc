/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The live source's spec (live-spec.h), and what network a source spec
 * needs (v4l2cuse_source_network(), v4l2cuse/source.h): only uri: reaches
 * the network by itself; what a gst: description does is not known here
 * (the device's network= says it, daemon/network.c).
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <glib.h>

#include "v4l2cuse/source.h"
#include "live-spec.h"

const char *const v4l2cuse_live_keys[] = {
	"sizes", "fps", "formats", "timeout", "latency", "retry", NULL,
};

/* Is @key=... one of our options? */
static bool
live_is_option(const char *field)
{
	const char *eq = strchr(field, '=');

	for (const char *const *k = v4l2cuse_live_keys; eq && *k; k++) {
		if ((size_t)(eq - field) == strlen(*k) && strncmp(field, *k, strlen(*k)) == 0)
			return true;
	}
	return false;
}

void
v4l2cuse_live_split(const char *args, char **ret_desc, char **ret_opts)
{
	g_auto(GStrv) fields = g_strsplit(args ? args : "", ",", -1);
	guint n = g_strv_length(fields), first = n;
	GString *desc = g_string_new(NULL), *opts = g_string_new(NULL);

	while (first > 1 && live_is_option(fields[first - 1]))
		first--;
	for (guint i = 0; i < n; i++)
		g_string_append_printf(i < first ? desc : opts, "%s%s",
				       i && i != first ? "," : "", fields[i]);
	g_string_prepend_c(opts, ',');
	*ret_desc = g_string_free(desc, FALSE);
	*ret_opts = g_string_free(opts, FALSE);
}

/*
 * Schemes whose GStreamer source receives on a port from whoever sends
 * (udpsrc, rtpsrc, ristsrc): the URI's host is an address of ours to bind
 * or a multicast group to join, never the peer.
 */
static const char *const net_receive_schemes[] = { "udp", "rtp", "rist", NULL };

/*
 * @host as a literal address in the form inet_ntop() writes
 * ("2001:db8::1"), or NULL for a name. A zone ("fe80::1%eth0") is dropped:
 * systemd's IPAddressAllow= takes none. *ret_wild: the unspecified address
 * (0.0.0.0, ::: listening) or a multicast group (joined: the sender is
 * anyone).
 */
static char *
net_literal(const char *host, bool *ret_wild)
{
	g_autofree char *h = g_strndup(host, strcspn(host, "%"));
	char buf[INET6_ADDRSTRLEN];
	struct in6_addr a6;
	struct in_addr a4;

	if (inet_pton(AF_INET, h, &a4) == 1) {
		*ret_wild = a4.s_addr == htonl(INADDR_ANY) || IN_MULTICAST(ntohl(a4.s_addr));
		return g_strdup(inet_ntop(AF_INET, &a4, buf, sizeof(buf)));
	}
	if (inet_pton(AF_INET6, h, &a6) == 1) {
		*ret_wild = IN6_IS_ADDR_UNSPECIFIED(&a6) || IN6_IS_ADDR_MULTICAST(&a6);
		return g_strdup(inet_ntop(AF_INET6, &a6, buf, sizeof(buf)));
	}
	return NULL;
}

/* srt://...?mode=listener: srtsrc waits for a caller, from anywhere. */
static bool
net_srt_listener(GUri *u)
{
	const char *query = g_uri_get_query(u);
	g_autoptr(GHashTable) params = NULL;
	const char *mode;

	if (!query)
		return false;
	params = g_uri_parse_params(query, -1, "&", G_URI_PARAMS_CASE_INSENSITIVE, NULL);
	mode = params ? g_hash_table_lookup(params, "mode") : NULL;
	return mode && g_ascii_strcasecmp(mode, "listener") == 0;
}

enum v4l2cuse_source_net
v4l2cuse_source_network(const char *spec, char **ret_peer)
{
	g_autofree char *uri = NULL, *opts = NULL, *addr = NULL;
	g_autoptr(GUri) u = NULL;
	const char *scheme, *host;
	bool wild = false;

	*ret_peer = NULL;
	if (!spec || !g_str_has_prefix(spec, "uri:"))
		return V4L2CUSE_SOURCE_NET_NONE;
	v4l2cuse_live_split(spec + 4, &uri, &opts);
	scheme = g_uri_peek_scheme(uri);	/* lower case */
	/* Not a URI at all: the source refuses it (create()), nothing connects. */
	if (!scheme || strcmp(scheme, "file") == 0)
		return V4L2CUSE_SOURCE_NET_NONE;
	/* One GLib cannot read names no peer we could know. */
	u = g_uri_parse(uri, G_URI_FLAGS_NONE, NULL);
	if (!u || g_strv_contains(net_receive_schemes, scheme) ||
	    (strcmp(scheme, "srt") == 0 && net_srt_listener(u)))
		return V4L2CUSE_SOURCE_NET_ANY;
	host = g_uri_get_host(u);
	if (!host || !*host)
		return V4L2CUSE_SOURCE_NET_ANY;
	addr = net_literal(host, &wild);
	if (!addr) {
		*ret_peer = g_strdup(host);	/* a name: its addresses are known later */
		return V4L2CUSE_SOURCE_NET_ANY;
	}
	if (wild)
		return V4L2CUSE_SOURCE_NET_ANY;
	*ret_peer = g_steal_pointer(&addr);
	return V4L2CUSE_SOURCE_NET_ADDRESS;
}
