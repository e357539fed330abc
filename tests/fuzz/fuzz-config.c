/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for the configuration file parser (daemon/conf.c): the
 * input is the text of up to 8 files separated by NUL bytes, parsed in
 * order into one configuration like v4l2cuse.conf and its conf.d/ drop-ins
 * (v4l2cuse_conf_parse() per file, then v4l2cuse_conf_finish()), with no
 * file system access of the harness's own.
 *
 * Checked besides ASan/UBSan/LSan: every failure is -errno with one line
 * that starts with the file's name or a [group]; nothing is half-applied
 * past a failure that would crash the free; a parsed device is equal to its
 * copy; ids are valid and unique; an enabled node is given to one device
 * only; values stay within the documented limits; no g_critical.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <glib.h>

#include "v4l2cuse/format.h"
#include "conf.h"
#include "fuzz-common.h"

#define MAX_FILES	8

static void
check_device(const struct v4l2cuse_conf_device *d)
{
	struct v4l2cuse_conf_device *copy = v4l2cuse_conf_device_dup(d);
	struct v4l2cuse_device_config cfg;

	fuzz_check(v4l2cuse_conf_id_valid(d->id), "device id '%s' is not valid", d->id);
	fuzz_check(strlen(d->id) <= V4L2CUSE_CONF_ID_MAX, "device id too long");
	fuzz_check(d->where && d->where_source, "device without its place");
	fuzz_check(v4l2cuse_conf_device_equal(d, copy), "[device %s] differs from its copy",
		   d->id);
	fuzz_check(v4l2cuse_conf_device_equal_but_source(d, copy), "equal_but_source");
	v4l2cuse_conf_device_free(copy);

	fuzz_check(d->width <= V4L2CUSE_MAX_WIDTH && d->height <= V4L2CUSE_MAX_HEIGHT,
		   "size %ux%u", d->width, d->height);
	fuzz_check(!d->interval.numerator == !d->interval.denominator,
		   "interval %u/%u", d->interval.numerator, d->interval.denominator);
	fuzz_check(d->mode <= 0777, "mode %o", (unsigned int)d->mode);
	fuzz_check(!d->node || g_str_has_prefix(d->node, "video"), "node '%s'", d->node);
	v4l2cuse_conf_device_config(d, &cfg);
	fuzz_check(cfg.width == d->width && cfg.height == d->height, "config view size");
}

static void
check_conf(const struct v4l2cuse_conf *conf)
{
	fuzz_check(conf->devices->len <= V4L2CUSE_CONF_MAX_DEVICES, "%u devices",
		   conf->devices->len);
	fuzz_check(conf->mode <= 0777, "[daemon] mode %o", (unsigned int)conf->mode);
	for (unsigned int i = 0; i < conf->devices->len; i++) {
		const struct v4l2cuse_conf_device *d = conf->devices->pdata[i];

		check_device(d);
		fuzz_check(v4l2cuse_conf_find(conf, d->id) == d, "[device %s] not found by id",
			   d->id);
		for (unsigned int j = 0; j < i; j++) {
			const struct v4l2cuse_conf_device *e = conf->devices->pdata[j];

			fuzz_check(strcmp(d->id, e->id) != 0, "[device %s] twice", d->id);
			fuzz_check(!d->enabled || !e->enabled || !d->node ||
				   g_strcmp0(d->node, e->node) != 0, "node %s twice", d->node);
		}
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_glib(G_LOG_LEVEL_WARNING);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct v4l2cuse_conf *conf = v4l2cuse_conf_new();
	const uint8_t *p = data, *end = data + size;
	char *error = NULL;
	int r = 0;

	for (unsigned int i = 0; i < MAX_FILES && p <= end && r == 0; i++) {
		const uint8_t *nul = i + 1 < MAX_FILES ? memchr(p, 0, end - p) : NULL;
		size_t len = nul ? (size_t)(nul - p) : (size_t)(end - p);
		/* Each file its own heap copy (never NULL, like g_file_get_contents()'s),
		 * so a read past it is caught. */
		g_autofree char *text = g_malloc(len + 1);
		g_autofree char *name = g_strdup_printf("conf.d/%u.conf", i);

		memcpy(text, p, len);

		r = v4l2cuse_conf_parse(conf, name, text, len, &error);
		fuzz_check_result(r, error);
		if (r < 0)
			fuzz_check(g_str_has_prefix(error, name) || g_str_has_prefix(error, "["),
				   "message without its place: %s", error);
		p += len + 1;
	}
	if (r == 0) {
		r = v4l2cuse_conf_finish(conf, &error);
		fuzz_check_result(r, error);
		if (r == 0)
			check_conf(conf);
	}
	g_free(error);
	v4l2cuse_conf_free(conf);
	return 0;
}
