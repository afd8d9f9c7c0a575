/* SPDX-License-Identifier: MIT */
/* Name tables for the policy enums. */
#include <string.h>

#include "policy-private.h"

static const char *const access_names[POLICY_ACCESS_MAX] = {
    [POLICY_READ] = "read",
    [POLICY_WRITE] = "write",
    [POLICY_EXEC] = "exec",
    [POLICY_STAT] = "stat",
};

static const char *const mode_names[POLICY_MODE_MAX] = {
    [POLICY_MODE_NONE] = "none",
    [POLICY_MODE_RO] = "ro",
    [POLICY_MODE_RW] = "rw",
};

static const char *const kind_names[POLICY_KIND_MAX] = {
    [POLICY_KIND_CWD] = "cwd",         [POLICY_KIND_WRITE] = "write",
    [POLICY_KIND_READ] = "read",       [POLICY_KIND_PRIVATE] = "private",
    [POLICY_KIND_DENY] = "deny",       [POLICY_KIND_SYSTEM] = "system",
    [POLICY_KIND_TOOLING] = "tooling",
};

static const char *const action_names[POLICY_EXEC_ACTION_MAX] = {
    [POLICY_EXEC_REDIRECT] = "redirect",
    [POLICY_EXEC_ALLOW] = "allow",
    [POLICY_EXEC_DENY] = "deny",
};

static const char *const note_names[POLICY_NOTE_KIND_MAX] = {
    [POLICY_NOTE_MISSING] = "missing",
    [POLICY_NOTE_DROPPED] = "dropped",
    [POLICY_NOTE_GLOB] = "glob",
};

static const char *const format_names[POLICY_FORMAT_MAX] = {
    [POLICY_FORMAT_BWRAP] = "bwrap",
    [POLICY_FORMAT_DOCKER] = "docker",
    [POLICY_FORMAT_OCI] = "oci",
};

#define NAME_OF(table, v) ((unsigned)(v) < ARRAY_SIZE(table) ? table[v] : NULL)

const char *
policy_access_to_string(enum policy_access a)
{
	return NAME_OF(access_names, a);
}

const char *
policy_mode_to_string(enum policy_mode m)
{
	return NAME_OF(mode_names, m);
}

const char *
policy_kind_to_string(enum policy_kind k)
{
	return NAME_OF(kind_names, k);
}

const char *
policy_exec_action_to_string(enum policy_exec_action a)
{
	return NAME_OF(action_names, a);
}

const char *
policy_mount_note_kind_to_string(enum policy_mount_note_kind k)
{
	return NAME_OF(note_names, k);
}

static int
lookup(const char *const *table, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (table[i] && strcmp(table[i], s) == 0)
			return (int)i;
	return -EINVAL;
}

int
policy_access_from_string(const char *s, enum policy_access *ret)
{
	int i = lookup(access_names, ARRAY_SIZE(access_names), s);
	if (i < 0)
		return i;
	*ret = (enum policy_access)i;
	return 0;
}

int
policy_mount_format_parse(const char *s, enum policy_mount_format *ret)
{
	int i = lookup(format_names, ARRAY_SIZE(format_names), s);
	if (i < 0)
		return i;
	*ret = (enum policy_mount_format)i;
	return 0;
}
