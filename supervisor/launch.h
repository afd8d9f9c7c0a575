/* SPDX-License-Identifier: MIT */
/* Starting the agent under its filter. */
#ifndef MOAT_SUPERVISOR_LAUNCH_H
#define MOAT_SUPERVISOR_LAUNCH_H

#include <linux/filter.h>
#include <sys/types.h>

struct sv_agent {
	pid_t pid;
	int pidfd;
	int notify_fd; /* the filter's listener, now ours */
	int pgrp;      /* the agent's own process group */
};

/*
 * Forks the agent: in the child, its own process group, death with the
 * supervisor, default signal dispositions, the filter with a listener, and an
 * exec of argv (PATH searched). The parent takes the listener with pidfd_getfd
 * before the child goes on, and moves it into the cgroup at group (may be NULL)
 * while it waits. Returns 0 or -errno.
 */
int sv_agent_start(char *const argv[], const struct sock_fprog *prog, const char *group,
                   struct sv_agent *ret);

#endif
