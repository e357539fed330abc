/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The main() of a unit test that has none of its own: the linker takes it
 * from the unit-test-main library only when the program defines no main().
 */

#include "config.h"

#include <glib.h>

#include "test-main.h"

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	v4l2cuse_test_add_registered();
	return g_test_run();
}
