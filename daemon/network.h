/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The network under the service (docs/service.md, "Network"). The unit
 * has none (PrivateNetwork=yes, IPAddressDeny=any, AF_UNIX only, and
 * V4L2CUSE_SERVICE_NETWORK=none); v4l2cuse-generator reads the
 * configuration at boot and at every `systemctl daemon-reload` and, when
 * an enabled device needs the network, writes the drop-in
 * v4l2cuse_net_dropin() makes: the network back, IPAddressAllow= the
 * literal addresses the sources name (any when one names a host or
 * receives from anyone), and V4L2CUSE_SERVICE_NETWORK= saying what it
 * allowed. The daemon compares each device it starts with that variable
 * (v4l2cuse_net_uncovered()): a device configured after boot, or added
 * with v4l2cuse-ctl, may need what the unit does not allow.
 *
 * What a device needs: network=false: nothing; network=true: any peer (a
 * gst: description's connections are not known); else what its source=
 * and placeholder= reach (v4l2cuse_source_network(): a uri: that is not
 * file:).
 */

#include <stdbool.h>
#include <glib.h>

#include "v4l2cuse/source.h"
#include "conf.h"

#define V4L2CUSE_NET_ENV	"V4L2CUSE_SERVICE_NETWORK"
/* Below the generator's output directory. */
#define V4L2CUSE_NET_DROPIN_DIR		"v4l2cuse.service.d"
#define V4L2CUSE_NET_DROPIN_FILE	"50-network.conf"

/*
 * What @d needs (above). Its peers are appended to @peers when not NULL
 * (g_malloc'ed): literal addresses as they are, others described ("host
 * cam.local", "any sender"). ADDRESS only when every peer is an address.
 */
enum v4l2cuse_source_net v4l2cuse_net_device_needs(const struct v4l2cuse_conf_device *d,
						   GPtrArray *peers);

/* Whether an enabled device of @conf needs the network (the sandbox's resolver files). */
bool v4l2cuse_net_conf_needs(const struct v4l2cuse_conf *conf);

/*
 * The drop-in for the enabled devices of @conf (@source names the
 * configuration in its comments), NULL when none needs the network.
 */
char *v4l2cuse_net_dropin(const struct v4l2cuse_conf *conf, const char *source);

/*
 * Whether device @d needs more than @allowed (the daemon's
 * V4L2CUSE_SERVICE_NETWORK: "none", "any", or addresses separated by ','):
 * NULL when it does not, or when @allowed is NULL (not under the unit);
 * else the line to log (g_free), naming the device, what it needs and
 * what to run.
 */
char *v4l2cuse_net_uncovered(const char *allowed, const struct v4l2cuse_conf_device *d);
