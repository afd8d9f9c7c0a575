/* SPDX-License-Identifier: MIT */
/*
 * Fuzzes the policy loader and the matcher. The input is a policy text; if it
 * loads, a fixed set of hostile paths is matched for every access, the exec and
 * network deciders run, and the mount export is built and written.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include "moat/policy.h"

static enum policy_probe
probe(const char *path, void *userdata)
{
	return path[1] == 'e' ? POLICY_PROBE_FILE
	       : path[1]      ? POLICY_PROBE_DIR
	                      : POLICY_PROBE_MISSING;
}

static const char *const paths[] = {
    "/",
    "/home/u/repo/src/main.c",
    "/home/u/.ssh/id_rsa",
    "/home/u/repo/.env",
    "/etc/shadow",
    "/tmp/x/y/z.pem",
    "/home/u/repo2",
    "/a//b",
    "/a/./b",
    "/a/../b",
    "",
    "relative",
    "/proc/self/fd/3",
    "/usr/bin/git",
    "/home/u",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *env[] = {"HOME=/home/u", "GOPATH=/home/u/go", "EMPTY=", NULL};
	struct policy_env penv = {.cwd = "/home/u/repo", .environ = env};
	struct policy_diag diag;
	struct policy *p = NULL;

	if (policy_load_string((const char *)data, size, "fuzz", &penv, &p, &diag) < 0)
		return 0;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		for (int a = 0; a < POLICY_ACCESS_MAX; a++) {
			struct policy_verdict v;
			policy_match(p, paths[i], strlen(paths[i]), (enum policy_access)a, &v);
		}
	const char *argv[] = {"git", "push", "--force", NULL};
	policy_exec_decide(p, "/usr/bin/git", argv, NULL);

	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(443)};
	struct sockaddr_un un = {.sun_family = AF_UNIX, .sun_path = "/run/x.sock"};
	policy_net_decide(p, POLICY_NET_CONNECT, SOCK_STREAM, (struct sockaddr *)&in, sizeof(in),
	                  NULL);
	policy_net_decide(p, POLICY_NET_CONNECT, SOCK_STREAM, (struct sockaddr *)&un, sizeof(un),
	                  NULL);

	struct policy_mount_set *s = NULL;
	if (policy_mounts_build(p, probe, NULL, &s) == 0) {
		FILE *null = fopen("/dev/null", "w");
		if (null) {
			for (int f = 0; f < POLICY_FORMAT_MAX; f++)
				policy_mounts_write(s, (enum policy_mount_format)f, null);
			fclose(null);
		}
		policy_mounts_free(s);
	}
	policy_free(p);
	return 0;
}
