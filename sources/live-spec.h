/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The live source's spec without GStreamer (live-spec.c): what
 * sources/gst-live.c parses and what v4l2cuse_source_network() reads, in
 * every build (the daemon's service policy and v4l2cuse-generator need it
 * without -Dgstreamer too).
 */

/* The options of gst: and uri: (NULL-terminated). */
extern const char *const v4l2cuse_live_keys[];

/*
 * "DESCRIPTION,key=v,key=v" -> the description (or URI) and ",key=v,key=v"
 * (what v4l2cuse_opts_parse() takes for "no ARG"): trailing items that are
 * our options, from the right; the rest, commas included, is the
 * description. Both g_malloc'ed.
 */
void v4l2cuse_live_split(const char *args, char **ret_desc, char **ret_opts);
