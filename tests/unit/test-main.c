/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tests the macros of test-main.h register, in source order.
 */

#include "config.h"

#include <string.h>

#include <glib.h>

#include "test-main.h"

static struct v4l2cuse_test *tests;

static int
compare(const struct v4l2cuse_test *a, const struct v4l2cuse_test *b)
{
	int c = strcmp(a->file, b->file);

	if (c)
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/*
 * Keep the list sorted as it grows: constructors run in no promised order,
 * and they run before main(), so nothing here allocates.
 */
void
v4l2cuse_test_register(struct v4l2cuse_test *t)
{
	struct v4l2cuse_test **p = &tests;

	while (*p && compare(*p, t) < 0)
		p = &(*p)->next;
	t->next = *p;
	*p = t;
}

void
v4l2cuse_test_add_registered(void)
{
	for (const struct v4l2cuse_test *t = tests; t; t = t->next) {
		if (t->fixture)
			g_test_add_vtable(t->path, t->fixture->size, t->data, t->fixture->setup,
					  t->fixture_func, t->fixture->teardown);
		else if (t->data_func)
			g_test_add_data_func(t->path, t->data, t->data_func);
		else
			g_test_add_func(t->path, t->func);
	}
}
