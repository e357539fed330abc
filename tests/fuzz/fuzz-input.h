/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the harnesses that play a client from the input's bytes
 * (fuzz-shim.c, fuzz-fastpath.c): reading it, zeros once it is used up.
 */

#include <stdint.h>
#include <string.h>
#include <glib.h>

struct fuzz_input {
	const uint8_t *p, *end;
};

static inline uint8_t
fuzz_in_u8(struct fuzz_input *in)
{
	return in->p < in->end ? *in->p++ : 0;
}

/* @n bytes into @buf, zeros for what the input no longer has. */
static inline void
fuzz_in_bytes(struct fuzz_input *in, void *buf, size_t n)
{
	size_t k = MIN(n, (size_t)(in->end - in->p));

	memset(buf, 0, n);
	memcpy(buf, in->p, k);
	in->p += k;
}
