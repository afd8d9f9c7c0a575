/* SPDX-License-Identifier: MIT */
/*
 * The objects under the policy's plain deny entries, by (device, inode), found
 * by a walk at start. A decision on a path is also a decision on the object: a
 * hard link or a bind-mount alias of a denied file has an allowed path, but the
 * same inode, and is denied as its original is.
 */
#ifndef MOAT_SUPERVISOR_DENYSET_H
#define MOAT_SUPERVISOR_DENYSET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "moat/policy.h"

struct denyset;

/* Walks every non-glob deny entry (at most limit objects in all; the rest are counted). */
int denyset_build(const struct policy *p, size_t limit, struct denyset **ret);
struct denyset *denyset_free(struct denyset *d);

/*
 * The deny rule whose tree holds (dev, ino), or NULL; *ret_multi tells whether the
 * object is a file that had other names when the tree was walked. No allocation,
 * no system call.
 */
const struct policy_rule *denyset_find(const struct denyset *d, dev_t dev, ino_t ino,
                                       bool *ret_multi);

size_t denyset_size(const struct denyset *d);
size_t denyset_skipped(const struct denyset *d);

#endif
