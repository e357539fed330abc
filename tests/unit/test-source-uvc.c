/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "uvc" source without a camera: every startup error is one line that
 * names the device. (Streaming, controls and unplugging are covered in the
 * VM over vivid: tests/vm/test-sources.sh.)
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib.h>

#include "v4l2cuse/source.h"
#include "test-main.h"

V4L2CUSE_TEST("/uvc/errors", test_errors)
{
	static const struct {
		const char *spec;
		const char *want;
	} cases[] = {
		{ "uvc", "uvc: no device given" },
		{ "uvc:", "uvc: no device given" },
		{ "uvc:/dev/v4l2cuse-no-such-camera", "uvc: '/dev/v4l2cuse-no-such-camera': No such "
						      "file or directory" },
		{ "uvc:/dev/null", "uvc: '/dev/null': not a V4L2 capture device" },
		{ "uvc:/dev/null,buffers=1", "uvc: option 'buffers'" },
		{ "uvc:/dev/null,retry_ms=x", "uvc: option 'retry_ms'" },
		{ "uvc:/dev/null,frobnicate=1", "uvc: unknown option 'frobnicate'" },
		/* The device draws placeholders (placeholder= of the device), not the source. */
		{ "uvc:/dev/null,placeholder=/x.png", "uvc: unknown option 'placeholder'" },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct v4l2cuse_source *src = NULL;
		g_autofree char *error = NULL;

		g_assert_cmpint(v4l2cuse_source_create(cases[i].spec, &src, &error), <, 0);
		g_assert_null(src);
		g_test_message("%s -> %s", cases[i].spec, error);
		if (!g_str_has_prefix(error, cases[i].want))
			g_error("%s: '%s' does not start with '%s'", cases[i].spec, error,
				cases[i].want);
		g_assert_null(strchr(error, '\n'));
	}
}
