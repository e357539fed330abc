/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libv4l2cuse-preload.so loaded for real (meson runs this with LD_PRELOAD):
 * everything that is not a v4l2cuse node passes straight through, with the
 * real call's result and errno — files, /dev/null, pipes, anonymous and
 * file mappings, dup/fcntl, close_range, fork, and raw syscall() with the
 * numbers libv4l2 uses. No CUSE here; the VM tests cover our nodes.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>
#include <linux/close_range.h>
#include <linux/videodev2.h>

#include "test-main.h"

static char *tmpfile_path;

V4L2CUSE_TEST("/shim-preload/loaded", test_loaded)
{
	Dl_info info;

	/* open, mmap, syscall resolve to the preload library, not libc. */
	g_assert_true(dladdr(dlsym(RTLD_DEFAULT, "open"), &info));
	g_assert_nonnull(strstr(info.dli_fname, "libv4l2cuse-preload"));
	g_assert_true(dladdr(dlsym(RTLD_DEFAULT, "syscall"), &info));
	g_assert_nonnull(strstr(info.dli_fname, "libv4l2cuse-preload"));
	/* Nothing else is exported. */
	g_assert_true(dladdr(dlsym(RTLD_DEFAULT, "read"), &info));
	g_assert_nonnull(strstr(info.dli_fname, "libv4l2cuse-preload"));
	g_assert_true(dladdr(dlsym(RTLD_DEFAULT, "__read_chk"), &info));
	g_assert_nonnull(strstr(info.dli_fname, "libv4l2cuse-preload"));
	g_assert_true(dladdr(dlsym(RTLD_DEFAULT, "write"), &info));
	g_assert_nonnull(strstr(info.dli_fname, "libv4l2cuse-preload"));
	g_assert_null(dlsym(RTLD_DEFAULT, "shim_attach"));
	g_assert_null(dlsym(RTLD_DEFAULT, "shim_real"));
}

V4L2CUSE_TEST("/shim-preload/files", test_files)
{
	char buf[8];
	int fd, fd2, fd3, fd4;

	fd = open(tmpfile_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(write(fd, "v4l2cuse", 8), ==, 8);
	fd2 = dup(fd);
	fd3 = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	g_assert_cmpint(fd3, >=, 100);
	fd4 = dup3(fd, 200, O_CLOEXEC);
	g_assert_cmpint(fd4, ==, 200);
	g_assert_cmpint(dup2(fd, fd2), ==, fd2);
	g_assert_cmpint(pread(fd3, buf, 8, 0), ==, 8);
	g_assert_cmpmem(buf, 8, "v4l2cuse", 8);
	g_assert_cmpint(close(fd2), ==, 0);
	g_assert_cmpint(close(fd3), ==, 0);
	g_assert_cmpint(close(fd4), ==, 0);

	/* errno of failures is the real one. */
	errno = 0;
	g_assert_cmpint(open("/nonexistent/x", O_RDONLY), ==, -1);
	g_assert_cmpint(errno, ==, ENOENT);
	errno = 0;
	g_assert_cmpint(openat(AT_FDCWD, "/nonexistent/x", O_RDONLY), ==, -1);
	g_assert_cmpint(errno, ==, ENOENT);
	errno = 0;
	g_assert_cmpint(close(-1), ==, -1);
	g_assert_cmpint(errno, ==, EBADF);
	errno = 0;
	g_assert_cmpint(dup(-1), ==, -1);
	g_assert_cmpint(errno, ==, EBADF);
	errno = 0;
	g_assert_cmpint(ioctl(fd, VIDIOC_QUERYCAP, buf), ==, -1);
	g_assert_cmpint(errno, ==, ENOTTY);
	/* errno is left alone on success. */
	errno = 1234;
	fd2 = open(tmpfile_path, O_RDONLY | O_CLOEXEC);
	g_assert_cmpint(fd2, >=, 0);
	g_assert_cmpint(errno, ==, 1234);
	/* read(), the fortify __read_chk and write(): the real results and errno. */
	{
		ssize_t (*read_chk)(int, void *, size_t, size_t) =
			(ssize_t (*)(int, void *, size_t, size_t))dlsym(RTLD_DEFAULT, "__read_chk");
		int p[2];

		g_assert_cmpint(read(fd2, buf, 3), ==, 3);
		g_assert_cmpmem(buf, 3, "v4l", 3);
		g_assert_cmpint(errno, ==, 1234);
		g_assert_cmpint(read_chk(fd2, buf, 5, sizeof(buf)), ==, 5);
		g_assert_cmpmem(buf, 5, "2cuse", 5);
		g_assert_cmpint(read(fd2, buf, sizeof(buf)), ==, 0);	/* the end */
		g_assert_cmpint(errno, ==, 1234);
		errno = 0;
		g_assert_cmpint(read(-1, buf, 1), ==, -1);
		g_assert_cmpint(errno, ==, EBADF);
		errno = 0;
		g_assert_cmpint(read_chk(-1, buf, 1, sizeof(buf)), ==, -1);
		g_assert_cmpint(errno, ==, EBADF);
		g_assert_no_errno(pipe2(p, O_CLOEXEC | O_NONBLOCK));
		errno = 0;
		g_assert_cmpint(read(p[0], buf, 1), ==, -1);
		g_assert_cmpint(errno, ==, EAGAIN);
		g_assert_cmpint(write(p[1], "x", 1), ==, 1);
		g_assert_cmpint(syscall(SYS_read, p[0], buf, 8), ==, 1);
		g_assert_cmpint(buf[0], ==, 'x');
		errno = 0;
		g_assert_cmpint(syscall(SYS_read, p[0], buf, 8), ==, -1);
		g_assert_cmpint(errno, ==, EAGAIN);
		/* write() and syscall(SYS_write): the same. */
		g_assert_cmpint(syscall(SYS_write, p[1], "yz", 2), ==, 2);
		g_assert_cmpint(read(p[0], buf, 8), ==, 2);
		g_assert_cmpmem(buf, 2, "yz", 2);
		errno = 0;
		g_assert_cmpint(write(-1, "x", 1), ==, -1);
		g_assert_cmpint(errno, ==, EBADF);
		errno = 0;
		g_assert_cmpint(syscall(SYS_write, -1, "x", 1), ==, -1);
		g_assert_cmpint(errno, ==, EBADF);
		errno = 1234;
		g_assert_cmpint(write(p[1], "w", 1), ==, 1);
		g_assert_cmpint(errno, ==, 1234);
		close(p[0]);
		close(p[1]);
	}
	close(fd2);
	close(fd);

	/* O_PATH and a character device that is not CUSE. */
	fd = open(tmpfile_path, O_PATH | O_CLOEXEC);
	g_assert_cmpint(fd, >=, 0);
	close(fd);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	g_assert_cmpint(fd, >=, 0);
	errno = 0;
	g_assert_true(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) != MAP_FAILED ||
		      errno == ENODEV);
	g_assert_cmpint(close(fd), ==, 0);
}

V4L2CUSE_TEST("/shim-preload/mappings", test_mappings)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *p, *q;
	int fd;

	p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	g_assert_true(p != MAP_FAILED);
	p[0] = 1;
	/* MAP_FIXED over our own anonymous memory. */
	q = mmap(p + page, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	g_assert_true(q == p + page);
	g_assert_cmpint(munmap(p, 4 * page), ==, 0);

	fd = open(tmpfile_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	g_assert_no_errno(ftruncate(fd, page));
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	g_assert_true(p != MAP_FAILED);
	memcpy(p, "frame", 5);
	g_assert_cmpint(munmap(p, page), ==, 0);
	errno = 0;
	g_assert_true(mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 3) == MAP_FAILED);
	g_assert_cmpint(errno, ==, EINVAL);
	errno = 0;
	g_assert_true(mmap(NULL, page, PROT_READ, MAP_SHARED, 12345, 0) == MAP_FAILED);
	g_assert_cmpint(errno, ==, EBADF);
	errno = 0;
	g_assert_cmpint(munmap((void *)1, page), ==, -1);
	g_assert_cmpint(errno, ==, EINVAL);
	close(fd);
}

/* libv4l2's raw syscalls, and a few that must pass untouched. */
V4L2CUSE_TEST("/shim-preload/syscall", test_syscall)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;
	long fd;

	g_assert_cmpint(syscall(SYS_getpid), ==, getpid());
	fd = syscall(SYS_openat, AT_FDCWD, tmpfile_path, O_RDONLY | O_CLOEXEC, 0);
	g_assert_cmpint(fd, >=, 0);
	p = (void *)syscall(SYS_mmap, NULL, page, PROT_READ, MAP_SHARED, (int)fd, 0);
	g_assert_true(p != MAP_FAILED);
	g_assert_cmpmem(p, 5, "frame", 5);
	g_assert_cmpint(syscall(SYS_munmap, p, page), ==, 0);
	g_assert_cmpint(syscall(SYS_close, fd), ==, 0);
	errno = 0;
	g_assert_cmpint(syscall(SYS_close, fd), ==, -1);
	g_assert_cmpint(errno, ==, EBADF);
	errno = 0;
	g_assert_cmpint(syscall(SYS_openat, AT_FDCWD, "/nonexistent/x", O_RDONLY, 0), ==, -1);
	g_assert_cmpint(errno, ==, ENOENT);
#ifdef SYS_open
	fd = syscall(SYS_open, tmpfile_path, O_RDONLY | O_CLOEXEC, 0);
	g_assert_cmpint(fd, >=, 0);
	g_assert_cmpint(syscall(SYS_close, fd), ==, 0);
#endif
	/* Six arguments pass through (a futex wake with nobody waiting). */
	{
		int word = 0;

		g_assert_cmpint(syscall(SYS_futex, &word, 1 /* FUTEX_WAKE */, 1, NULL, NULL, 0),
				==, 0);
	}
}

V4L2CUSE_TEST("/shim-preload/close-range-fork", test_close_range_fork)
{
	int fds[2], status;
	pid_t pid;

	g_assert_no_errno(pipe2(fds, O_CLOEXEC));
	g_assert_cmpint(dup2(fds[0], 300), ==, 300);
	g_assert_cmpint(dup2(fds[1], 301), ==, 301);
	g_assert_cmpint(close_range(300, 301, CLOSE_RANGE_CLOEXEC), ==, 0);
	g_assert_cmpint(close_range(300, 301, 0), ==, 0);
	errno = 0;
	g_assert_cmpint(close(300), ==, -1);
	g_assert_cmpint(errno, ==, EBADF);

	pid = fork();
	g_assert_cmpint(pid, >=, 0);
	if (pid == 0) {
		int fd = open(tmpfile_path, O_RDONLY | O_CLOEXEC);

		_exit(fd >= 0 && close(fd) == 0 ? 0 : 1);
	}
	g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
	g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fds[0]);
	close(fds[1]);
}

/* V4L2CUSE_LOOPBACK_COMPAT: fopen("/proc/modules") lists v4l2loopback (OBS's check). */
static gboolean
modules_list_v4l2loopback(void)
{
	char line[512];
	gboolean found = FALSE;
	FILE *f = fopen("/proc/modules", "r");

	if (!f)
		return FALSE;	/* no /proc/modules here (a container) */
	while (fgets(line, sizeof(line), f))
		found |= strncmp(line, "v4l2loopback ", 13) == 0;
	fclose(f);
	return found;
}

V4L2CUSE_TEST("/shim-preload/loopback-compat", test_loopback_compat)
{
	g_unsetenv("V4L2CUSE_LOOPBACK_COMPAT");
	g_assert_false(modules_list_v4l2loopback());
	g_setenv("V4L2CUSE_LOOPBACK_COMPAT", "1", TRUE);
	g_assert_true(modules_list_v4l2loopback());
	g_setenv("V4L2CUSE_LOOPBACK_COMPAT", "0", TRUE);
	g_assert_false(modules_list_v4l2loopback());
	g_unsetenv("V4L2CUSE_LOOPBACK_COMPAT");
}

int
main(int argc, char **argv)
{
	g_autofree char *dir = NULL;
	int r;

	g_test_init(&argc, &argv, NULL);
	if (!getenv("LD_PRELOAD") || !strstr(getenv("LD_PRELOAD"), "libv4l2cuse-preload")) {
		g_test_skip("run with LD_PRELOAD=libv4l2cuse-preload.so (meson test does)");
		return 77;
	}
	dir = g_dir_make_tmp("shim-preload-XXXXXX", NULL);
	g_assert_nonnull(dir);
	tmpfile_path = g_build_filename(dir, "file", NULL);
	v4l2cuse_test_add_registered();
	r = g_test_run();
	unlink(tmpfile_path);
	rmdir(dir);
	g_free(tmpfile_path);
	return r;
}
