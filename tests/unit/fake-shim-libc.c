/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What preload.c provides in the library: here, plain libc (fake-shim-libc.h). */
#include "config.h"

#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim-client.h"
#include "fake-shim-libc.h"

struct shim_libc shim_real;
bool shim_debug_enabled;

void
shim_debug(const char *fmt, ...)
{
}

void
fake_shim_libc_init(void)
{
	shim_real.close = close;
	shim_real.ioctl = (int (*)(int, unsigned long, ...))ioctl;
	shim_real.mmap = mmap;
	shim_real.munmap = munmap;
	shim_real.syscall = syscall;
	shim_real.read = read;
	shim_real.write = write;
}
