/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What preload.c provides inside the library, for the tests that link the
 * shim's core directly (test-shim-track, test-fastpath): shim_real,
 * shim_debug_enabled and a silent shim_debug() (fake-shim-libc.c).
 */

/* shim_real's close, ioctl, mmap, munmap and syscall: plain libc. */
void fake_shim_libc_init(void);
