/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests that register themselves where they are defined (after
 * PipeWire's PWTEST() and systemd's TEST()): no list of g_test_add_func()
 * calls at the end of a file, and no test written but never run.
 *
 *	V4L2CUSE_TEST("/convert/round-trip", test_round_trip)
 *	{
 *		...
 *	}
 *
 * defines static void test_round_trip(void) and adds it as the GLib test
 * /convert/round-trip. Tests with a fixture name its type, setup and
 * teardown once per file, after those are defined; each test then gets
 * the fixture as `f` and the test data as `data`:
 *
 *	V4L2CUSE_TEST_FIXTURE(struct fixture, fixture_setup, fixture_teardown);
 *
 *	V4L2CUSE_TEST_F("/ioctl/querycap", test_querycap)
 *	{
 *		... f->fh ...
 *	}
 *
 * V4L2CUSE_TEST_F_DATA() passes a constant as `data` to the setup and the
 * test, and V4L2CUSE_TEST_DATA() adds an existing GTestDataFunc with a
 * constant (a function run more than once with different data).
 *
 * The tests of a program run in source order (file, then line), whatever
 * order the constructors that register them run in. Registration is a
 * constructor per test that links a static node into a list: nothing walks
 * a linker section, which ASan's redzones around globals would break.
 *
 * The unit-test-main library (tests/unit/meson.build) is linked to every
 * unit test. A program without a main() gets test-main-default.c's:
 * g_test_init(), v4l2cuse_test_add_registered(), g_test_run(). A program
 * that needs work around g_test_run() (temporary directories, ...) keeps
 * its own main() and calls v4l2cuse_test_add_registered() after
 * g_test_init().
 */
#pragma once

#include <glib.h>

struct v4l2cuse_test_fixture {
	gsize size;
	GTestFixtureFunc setup, teardown;
};

/* One registered test: set up by the macros below, never by hand. */
struct v4l2cuse_test {
	const char *path;
	const char *file;
	int line, seq;				/* source order */
	GTestFunc func;				/* a plain test, */
	GTestDataFunc data_func;		/* one with data, */
	GTestFixtureFunc fixture_func;		/* or one with a fixture */
	const struct v4l2cuse_test_fixture *fixture;
	gconstpointer data;
	struct v4l2cuse_test *next;
};

/* Called by the constructors the macros define. */
void v4l2cuse_test_register(struct v4l2cuse_test *t);

/* g_test_add_*() every registered test, in source order (after g_test_init()). */
void v4l2cuse_test_add_registered(void);

/* A static node and the constructor that registers it, named after @id. */
#define V4L2CUSE_TEST_NODE_(id, ...) V4L2CUSE_TEST_NODE__(id, __VA_ARGS__)
#define V4L2CUSE_TEST_NODE__(id, path_, ...)						\
	static struct v4l2cuse_test v4l2cuse_test_##id = {				\
		.path = (path_), .file = __FILE__, .line = __LINE__, .seq = (id),	\
		__VA_ARGS__								\
	};										\
	__attribute__((constructor)) static void					\
	v4l2cuse_test_register_##id(void)						\
	{										\
		v4l2cuse_test_register(&v4l2cuse_test_##id);				\
	}

/* Define static void @fn(void), the test @path. */
#define V4L2CUSE_TEST(path, fn)								\
	static void fn(void);								\
	V4L2CUSE_TEST_NODE_(__COUNTER__, path, .func = fn)				\
	static void fn(void)

/* Add the existing void @fn(gconstpointer data) as the test @path, with @data. */
#define V4L2CUSE_TEST_DATA(path, fn, data_)						\
	V4L2CUSE_TEST_NODE_(__COUNTER__, path, .data_func = fn, .data = (data_))

/*
 * The fixture of this file's V4L2CUSE_TEST_F() tests: @type, and @setup and
 * @teardown, functions of (@type *, gconstpointer) defined above.
 */
#define V4L2CUSE_TEST_FIXTURE(type, setup, teardown)					\
	typedef type v4l2cuse_test_fixture_t;						\
	static void									\
	v4l2cuse_test_setup_(gpointer f, gconstpointer data)				\
	{										\
		setup(f, data);								\
	}										\
	static void									\
	v4l2cuse_test_teardown_(gpointer f, gconstpointer data)			\
	{										\
		teardown(f, data);							\
	}										\
	static const struct v4l2cuse_test_fixture v4l2cuse_test_fixture_ = {		\
		sizeof(type), v4l2cuse_test_setup_, v4l2cuse_test_teardown_		\
	}

/*
 * Define static void @fn(fixture *f, gconstpointer data), the test @path,
 * @data_ passed to the setup, the test and the teardown.
 */
#define V4L2CUSE_TEST_F_DATA(path, fn, data_)						\
	static void fn(v4l2cuse_test_fixture_t *f, gconstpointer data);			\
	static void									\
	fn##_fixture_(gpointer f, gconstpointer data)					\
	{										\
		fn(f, data);								\
	}										\
	V4L2CUSE_TEST_NODE_(__COUNTER__, path, .fixture = &v4l2cuse_test_fixture_,	\
			    .fixture_func = fn##_fixture_, .data = (data_))		\
	static void fn(v4l2cuse_test_fixture_t *f, gconstpointer data)

/* The same with NULL for data. */
#define V4L2CUSE_TEST_F(path, fn) V4L2CUSE_TEST_F_DATA(path, fn, NULL)
