/* SPDX-License-Identifier: MIT */
/*
 * probe, linked statically: no dynamic loader, no libc.so, its own syscall
 * stubs. The same operations reach the supervisor the same way.
 */
#include "probe.c"
