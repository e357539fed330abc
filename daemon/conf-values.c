/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The values the configuration file and the command line share (conf.h):
 * node names, modes, groups, memory sizes, device ids. Formats, sizes and
 * rates are include/v4l2cuse/parse.h's, shared with the sources.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <gio/gio.h>

#include "util/macros.h"
#include "conf.h"


int
v4l2cuse_parse_node(const char *s, char **ret_name, char **ret_error)
{
	const char *name = g_str_has_prefix(s, "/dev/") ? s + 5 : s;
	const char *p = name + 5;

	if (!g_str_has_prefix(name, "video") || !*p || strlen(p) > 3)
		goto err;
	for (const char *q = p; *q; q++)
		if (!g_ascii_isdigit(*q))
			goto err;
	if (p[0] == '0' && p[1])
		goto err;		/* video042 would not match the kernel's name */
	*ret_name = g_strdup(name);
	return 0;
err:
	*ret_error = g_strdup_printf("'%s' is not a node name like video42", s);
	return -EINVAL;
}

bool
v4l2cuse_parse_u32(const char *s, uint32_t *ret)
{
	guint64 v;
	char *end;

	if (!g_ascii_isdigit(*s))
		return false;
	errno = 0;
	v = g_ascii_strtoull(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return false;
	*ret = (uint32_t)v;
	return true;
}

int
v4l2cuse_parse_mode(const char *s, mode_t *ret, char **ret_error)
{
	char *end;
	unsigned long m;

	errno = 0;
	m = strtoul(s, &end, 8);
	if (errno || *end || end == s || !g_ascii_isdigit(*s) || m > 0777) {
		*ret_error = g_strdup_printf("'%s' is not an octal mode like 0660", s);
		return -EINVAL;
	}
	*ret = (mode_t)m;
	return 0;
}

int
v4l2cuse_parse_group(const char *s, gid_t *ret, char **ret_error)
{
	struct group *gr = *s ? getgrnam(s) : NULL;

	if (!gr) {
		*ret_error = g_strdup_printf("no group named '%s'", s);
		return -EINVAL;
	}
	*ret = gr->gr_gid;
	return 0;
}

int
v4l2cuse_parse_memory(const char *s, uint64_t *ret, char **ret_error)
{
	static const char units[] = "KMGT";
	const char *u;
	guint64 v;
	char *end;

	if (g_ascii_strcasecmp(s, "unlimited") == 0) {
		*ret = 0;
		return 0;
	}
	errno = 0;
	v = g_ascii_isdigit(*s) ? g_ascii_strtoull(s, &end, 10) : 0;
	if (!g_ascii_isdigit(*s) || errno)
		goto err;
	if (*end && (u = strchr(units, g_ascii_toupper(*end))) && end[1] == '\0') {
		unsigned int shift = 10 * (unsigned int)(u - units + 1);

		if (v > (UINT64_MAX >> shift))
			goto err;
		v <<= shift;
	} else if (*end) {
		goto err;
	}
	if (v != 0 && v < V4L2CUSE_CONF_MIN_MEMORY)
		goto err;
	*ret = v;
	return 0;
err:
	*ret_error = g_strdup_printf("'%s' is not a memory size (bytes with K, M, G or T, "
				     "at least 64K, or 0 or unlimited)", s);
	return -EINVAL;
}

uint64_t
v4l2cuse_conf_default_total_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t half;

	if (pages <= 0 || page <= 0)
		return V4L2CUSE_CONF_TOTAL_MEMORY;
	half = (uint64_t)pages * (uint64_t)page / 2;
	return MIN(half, V4L2CUSE_CONF_TOTAL_MEMORY);
}

bool
v4l2cuse_conf_id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > V4L2CUSE_CONF_ID_MAX)
		return false;
	for (const char *p = id; *p; p++)
		if (!g_ascii_isalnum(*p) && *p != '-' && *p != '_' && *p != '.')
			return false;
	return true;
}


int
v4l2cuse_parse_listen(const char *s, char **ret_addr, uint16_t *ret_port, char **ret_error)
{
	g_autoptr(GSocketConnectable) na = g_network_address_parse(s, 0, NULL);
	g_autoptr(GInetAddress) addr = NULL;
	const char *host;
	guint16 port;

	if (!na || !(port = g_network_address_get_port(G_NETWORK_ADDRESS(na))) ||
	    !(host = g_network_address_get_hostname(G_NETWORK_ADDRESS(na))) ||
	    !(addr = g_inet_address_new_from_string(host))) {
		*ret_error = g_strdup_printf("'%s' is not ADDR:PORT with an IP address "
					     "(127.0.0.1:3240, [::1]:3240)", s);
		return -EINVAL;
	}
	if (ret_addr)
		*ret_addr = g_strdup(host);
	if (ret_port)
		*ret_port = port;
	return 0;
}

GStrv
v4l2cuse_parse_allow(const char *s, char **ret_error)
{
	g_auto(GStrv) parts = g_strsplit_set(s, " ,\t", -1);
	g_autoptr(GStrvBuilder) b = g_strv_builder_new();

	for (char **p = parts; *p; p++) {
		g_autoptr(GInetAddressMask) mask = NULL;

		if (!**p)
			continue;
		mask = g_inet_address_mask_new_from_string(*p, NULL);
		if (!mask) {
			*ret_error = g_strdup_printf("'%s' is not an IP address or ADDR/PREFIX", *p);
			return NULL;
		}
		g_strv_builder_add(b, *p);
	}
	return g_strv_builder_end(b);
}
