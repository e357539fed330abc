/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The fake CUSE of fake-cuse.c: registrations succeed at the next idle,
 * unless their name was refused here.
 */

/* The next registration of node @name fails as a taken name does (-EEXIST). */
void fake_cuse_refuse(const char *name);
