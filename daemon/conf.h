/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The configuration: /etc/v4l2cuse/v4l2cuse.conf plus the *.conf files in
 * conf.d/ next to it (GKeyFile syntax), one [device ID] group per camera and an optional
 * [daemon] group. docs/man/v4l2cuse.conf.5 documents every key;
 * examples/v4l2cuse.conf is a commented example.
 *
 * Strict: an unknown group or key, a key given twice, a bad value or a
 * clash between devices fails with exactly one line,
 *   "PATH:LINE: [device cam] size: '0x0' is not a valid size (...)",
 * and nothing is half-applied. No FUSE, no devices: unit-testable.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>
#include <linux/videodev2.h>

#include "v4l2cuse/parse.h"
#include "device.h"
#include "offer.h"
#include "sandbox.h"

/* The daemon's default --config (SYSCONFDIR: config.h), v4l2cuse-generator's too. */
#define V4L2CUSE_CONF_DEFAULT_PATH	SYSCONFDIR "/v4l2cuse/v4l2cuse.conf"

#define V4L2CUSE_CONF_MAX_DEVICES	64
#define V4L2CUSE_CONF_ID_MAX		31	/* bytes of a device id */
#define V4L2CUSE_CONF_MAX_FILE		(1024 * 1024)
#define V4L2CUSE_CONF_MAX_DROPINS	256

/*
 * Buffer memory limits (docs/service.md): per device, enough for
 * VB_MAX_BUFFERS (32) buffers of 3840x2160 YUYV (16.6 MB each, 506 MiB in
 * all); for the whole daemon 2 GiB, but at most half the machine's RAM.
 */
#define V4L2CUSE_CONF_DEVICE_MEMORY	((uint64_t)512 << 20)
#define V4L2CUSE_CONF_TOTAL_MEMORY	((uint64_t)2 << 30)
#define V4L2CUSE_CONF_MIN_MEMORY	((uint64_t)64 << 10)	/* smallest limit but 0 */

struct v4l2cuse_conf_device {
	char *id;		/* [device ID] */
	char *where;		/* "PATH:LINE: [device ID]" for messages */
	char *where_source;	/* "PATH:LINE: [device ID] source" */
	bool enabled;		/* enabled=false: parsed, not started */
	char *node;		/* "video42"; NULL: a free videoN, 32 <= N <= 63 */
	char *label;		/* QUERYCAP card; NULL: the default */
	char *source;		/* source spec, "pattern" by default */
	char *placeholder;	/* source spec shown while the source fails; NULL: none */
	bool share;		/* share=: every consumer streams on its own queue */
	bool usb;		/* usb=: also a USB camera through vhci-hcd (docs/usb.md) */
	struct v4l2cuse_offer offer;	/* formats=, sizes=, frame-rates= */
	uint32_t width, height;	/* size= (0: the source's default) */
	uint32_t pixelformat;	/* format= (0: the source's default) */
	struct v4l2_fract interval;	/* frame-rate= as an interval (0/0: the source's) */
	unsigned int min_buffers;	/* min-buffers= (0: default) */
	unsigned int read_buffers;	/* read-buffers= (0: default) */
	char *group;		/* group= (NULL: [daemon] group=, else "video" if it exists) */
	gid_t gid;		/* resolved; (gid_t)-1: leave the node's group alone */
	mode_t mode;		/* mode= (default 0660) */
	bool has_mode;
	uint64_t buffer_memory_limit;	/* buffer-memory-limit= in bytes (0: unlimited) */
	bool has_buffer_memory_limit;
	bool network;		/* network=: needs the network, any peer (daemon/network.h) */
	bool has_network;	/* network= given; else its source says (uri:) */
};

struct v4l2cuse_conf {
	/* [daemon] */
	char *control_socket;	/* NULL: $RUNTIME_DIRECTORY or /run/v4l2cuse */
	char *control_group;	/* NULL: root only */
	gid_t control_gid;
	bool loopback_control;	/* /dev/v4l2loopback (daemon/lbctl.h), default true */
	unsigned int retry_interval_s;	/* a taken name is retried this often (0: never) */
	unsigned int retry_limit;	/* attempts after the first (0: no limit) */
	unsigned int selftest_timeout_s;
	char *group;		/* default group= of the devices */
	mode_t mode;		/* default mode= of the devices */
	bool has_mode;
	uint64_t buffer_memory_limit;	/* all devices together (0: unlimited) */
	uint64_t device_buffer_memory_limit;	/* default buffer-memory-limit= of the devices */

	GPtrArray *devices;	/* struct v4l2cuse_conf_device *, in file order */

	/* [daemon] usbip-listen= and usbip-allow= (docs/usb.md, "Other machines") */
	char *usbip_listen;	/* "ADDR:PORT"; NULL: off */
	GStrv usbip_allow;	/* "ADDR" or "ADDR/PREFIX"; NULL: loopback only */

	/* [daemon] sandbox= and sandbox-paths= (daemon/sandbox.h) */
	enum v4l2cuse_sandbox_mode sandbox;
	GStrv sandbox_paths;	/* absolute paths; NULL: none */
};

struct v4l2cuse_conf *v4l2cuse_conf_new(void);
void v4l2cuse_conf_free(struct v4l2cuse_conf *conf);	/* NULL-safe */
static inline void
v4l2cuse_conf_freep(struct v4l2cuse_conf **conf)
{
	v4l2cuse_conf_free(*conf);
}

/*
 * Read @path and then the .conf files of <dir of @path>/conf.d in name order, and
 * finish. A missing @path is an error only if @required (conf.d alone is
 * fine); *ret_found tells whether anything was read. 0 or -errno with one
 * line in *ret_error.
 */
int v4l2cuse_conf_load(const char *path, bool required, struct v4l2cuse_conf **ret_conf,
		       bool *ret_found, char **ret_error);

/*
 * Add the groups of one file's text to @conf; @name is used in messages.
 * Call v4l2cuse_conf_finish() after the last file.
 */
int v4l2cuse_conf_parse(struct v4l2cuse_conf *conf, const char *name, const char *data,
			size_t len, char **ret_error);

/* Defaults that depend on several files, groups, node clashes. */
int v4l2cuse_conf_finish(struct v4l2cuse_conf *conf, char **ret_error);

const struct v4l2cuse_conf_device *v4l2cuse_conf_find(const struct v4l2cuse_conf *conf,
						      const char *id);
/* Same device settings (not counting where/where_source). */
bool v4l2cuse_conf_device_equal(const struct v4l2cuse_conf_device *a,
				const struct v4l2cuse_conf_device *b);
/* Equal except maybe source=, placeholder= and share= (those switch live). */
bool v4l2cuse_conf_device_equal_but_source(const struct v4l2cuse_conf_device *a,
					   const struct v4l2cuse_conf_device *b);
struct v4l2cuse_conf_device *v4l2cuse_conf_device_dup(const struct v4l2cuse_conf_device *d);
void v4l2cuse_conf_device_free(struct v4l2cuse_conf_device *d);

/* The device config view of @d (strings borrowed from @d). */
void v4l2cuse_conf_device_config(const struct v4l2cuse_conf_device *d,
				 struct v4l2cuse_device_config *ret);

/*
 * Value parsers shared with the command line (conf-values.c). Each returns 0, or -EINVAL
 * with a message that names the value but not the key, e.g.
 * "'cam0' is not a node name like video42". Sizes, frame rates, fourccs
 * and lists: v4l2cuse/parse.h.
 */
/* A decimal number of at most UINT32_MAX, digits only: true if @s is one. */
bool v4l2cuse_parse_u32(const char *s, uint32_t *ret);
int v4l2cuse_parse_node(const char *s, char **ret_name, char **ret_error);
int v4l2cuse_parse_mode(const char *s, mode_t *ret, char **ret_error);
int v4l2cuse_parse_group(const char *s, gid_t *ret, char **ret_error);
/* "512M", "2G", "65536", "64K" (binary units) or "0"/"unlimited" (0): bytes. */
int v4l2cuse_parse_memory(const char *s, uint64_t *ret, char **ret_error);
/*
 * "ADDR:PORT" with ADDR a literal IPv4 or IPv6 address ("[::1]:3240"):
 * 0 and the parts (NULL: not wanted; *ret_addr g_malloc'ed), or -EINVAL.
 */
int v4l2cuse_parse_listen(const char *s, char **ret_addr, uint16_t *ret_port, char **ret_error);
/*
 * A list of "ADDR" or "ADDR/PREFIX" separated by spaces or commas: the
 * entries, or NULL with a message naming the bad one.
 */
GStrv v4l2cuse_parse_allow(const char *s, char **ret_error);
/* The default global limit: V4L2CUSE_CONF_TOTAL_MEMORY or half the RAM. */
uint64_t v4l2cuse_conf_default_total_memory(void);
bool v4l2cuse_conf_id_valid(const char *id);
