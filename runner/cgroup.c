/* SPDX-License-Identifier: MIT */
/*
 * The tasks' cgroup: pids and memory limits that hold for every process of
 * the runner's tasks, whoever they run as (RLIMIT_NPROC counts every process
 * of a uid on the machine, and does not bind uid 0 at all).
 *
 * cgroup v2 where the runner's own cgroup delegates pids and memory to its
 * children; else the v1 pids and memory hierarchies where they are mounted and
 * writable. The runner moves itself into a group made below its own, once:
 * every task it clones is born there. (A group per task would cost a
 * migration per launch, and a v1 migration waits for an RCU grace period and
 * holds up every fork on the machine meanwhile.) Where neither works, tasks
 * fall back to rlimits (task.c). The same file makes the agent's group, which
 * finds its tree if moat is killed.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "moat/macro.h"
#include "runner.h"

static int
write_text(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
		return -ENAMETOOLONG;
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return write(fd, text, strlen(text)) < 0 ? -errno : 0;
}

/* The runner's own cgroup in hierarchy `want` ("pids", "memory", or "" for v2). */
static int
own_path(const char *want, char *out, size_t size)
{
	char line[PATH_MAX + 64];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (r < 0 && fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!path)
			continue;
		*path++ = '\0';
		ctl++;
		path[strcspn(path, "\n")] = '\0';
		bool match = *want ? strstr(ctl, want) != NULL : *ctl == '\0';
		if (match && (size_t)snprintf(out, size, "%s", path) < size)
			r = 0;
	}
	fclose(f);
	return r;
}

static bool
listed(const char *dir, const char *file, const char *word)
{
	char path[PATH_MAX], buf[512];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (char *s = strtok(buf, " \n"); s; s = strtok(NULL, " \n"))
		if (strcmp(s, word) == 0)
			return true;
	return false;
}

/* A directory below which task cgroups can be made, or -errno. */
static int
v1_base(const char *ctl, char *out, size_t size)
{
	char own[PATH_MAX];
	int r = own_path(ctl, own, sizeof(own));

	if (r < 0)
		return r;
	if ((size_t)snprintf(out, size, "/sys/fs/cgroup/%s%s", ctl, own) >= size)
		return -ENAMETOOLONG;
	return access(out, W_OK) < 0 ? -errno : 0;
}

int
cg_detect(struct cg_root *root)
{
	char own[PATH_MAX];

	*root = (struct cg_root){0};
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
		/* v2: usable where our cgroup hands pids and memory down to its children. */
		if (own_path("", own, sizeof(own)) == 0 &&
		    (size_t)snprintf(root->pids, sizeof(root->pids), "/sys/fs/cgroup%s", own) <
		        sizeof(root->pids) &&
		    access(root->pids, W_OK) == 0 &&
		    listed(root->pids, "cgroup.subtree_control", "pids") &&
		    listed(root->pids, "cgroup.subtree_control", "memory")) {
			root->version = 2;
			snprintf(root->mem, sizeof(root->mem), "%s", root->pids);
			return 0;
		}
		*root = (struct cg_root){0};
		return -EOPNOTSUPP;
	}
	if (v1_base("pids", root->pids, sizeof(root->pids)) < 0)
		root->pids[0] = '\0';
	if (v1_base("memory", root->mem, sizeof(root->mem)) < 0)
		root->mem[0] = '\0';
	if (!root->pids[0] && !root->mem[0])
		return -EOPNOTSUPP;
	root->version = 1;
	return 0;
}

/* Makes base/name (or takes it, if it exists); 0 or -errno. */
static int
make_dir(const char *base, const char *name, char **ret)
{
	char *dir = NULL;

	if (asprintf(&dir, "%s/%s", base, name) < 0)
		return -ENOMEM;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		int r = -errno;
		free(dir);
		return r;
	}
	*ret = dir;
	return 0;
}

int
cg_set_limits(struct task_cg *cg, unsigned pids, unsigned memory_mb)
{
	char value[32];
	int r = 0;

	if (cg->pids && pids != cg->pids_limit) {
		snprintf(value, sizeof(value), "%u", pids);
		if (!pids)
			snprintf(value, sizeof(value), "max");
		r = write_text(cg->pids, "pids.max", value);
		if (r == 0)
			cg->pids_limit = pids;
	}
	const char *mem = cg->mem_in_pids ? cg->pids : cg->mem;
	if (r == 0 && mem && memory_mb != cg->memory_limit) {
		if (memory_mb)
			snprintf(value, sizeof(value), "%llu", (unsigned long long)memory_mb << 20);
		else
			snprintf(value, sizeof(value), cg->mem_in_pids ? "max" : "-1");
		r = write_text(mem, cg->mem_in_pids ? "memory.max" : "memory.limit_in_bytes",
		               value);
		if (r == 0)
			cg->memory_limit = memory_mb;
	}
	return r;
}

int
cg_enter(const struct cg_root *root, const char *name, struct task_cg *ret)
{
	char self[32];
	int r = 0;

	*ret = (struct task_cg){0};
	snprintf(self, sizeof(self), "%d", (int)getpid());
	if (root->pids[0])
		r = make_dir(root->pids, name, &ret->pids);
	if (r == 0 && root->mem[0]) {
		if (root->version == 2)
			ret->mem_in_pids = ret->pids != NULL;
		else
			r = make_dir(root->mem, name, &ret->mem);
	}
	if (r == 0 && ret->pids)
		r = write_text(ret->pids, "cgroup.procs", self);
	if (r == 0 && ret->mem)
		r = write_text(ret->mem, "cgroup.procs", self);
	if (r < 0)
		cg_leave(root, ret);
	return r;
}

void
cg_leave(const struct cg_root *root, struct task_cg *cg)
{
	char self[32];

	/* Back where this process was, so that the group can go. */
	snprintf(self, sizeof(self), "%d", (int)getpid());
	if (cg->pids) {
		write_text(root->pids, "cgroup.procs", self);
		rmdir(cg->pids);
	}
	if (cg->mem) {
		write_text(root->mem, "cgroup.procs", self);
		rmdir(cg->mem);
	}
	free(cg->pids);
	free(cg->mem);
	*cg = (struct task_cg){0};
}

static void
sweep_dir(const char *base, const char *prefix)
{
	DIR *d = base[0] ? opendir(base) : NULL;
	struct dirent *e;
	char path[PATH_MAX];

	while (d && (e = readdir(d)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 &&
		    (size_t)snprintf(path, sizeof(path), "%s/%s", base, e->d_name) < sizeof(path))
			rmdir(path); /* EBUSY while a process is left in it: kept */
	if (d)
		closedir(d);
}

void
cg_sweep(const struct cg_root *root, const char *prefix)
{
	sweep_dir(root->pids, prefix);
	if (strcmp(root->mem, root->pids) != 0)
		sweep_dir(root->mem, prefix);
}

char *
cg_make_group(const struct cg_root *root, const char *name)
{
	char *dir = NULL;

	if (!root->pids[0] || asprintf(&dir, "%s/%s", root->pids, name) < 0)
		return NULL;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		free(dir);
		return NULL;
	}
	return dir;
}

int
cg_kill_all(const char *dir)
{
	char path[PATH_MAX], buf[4096];
	int killed = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= sizeof(path))
		return 0;
	/* A process may fork while the list is read: again, until none is left. */
	for (int round = 0; round < 200; round++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			break;
		buf[n] = '\0';
		bool any = false;
		for (char *s = buf, *end; *s; s = end) {
			long pid = strtol(s, &end, 10);
			if (end == s)
				break;
			if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0) {
				any = true;
				killed++;
			}
		}
		if (!any)
			break;
		usleep(1000);
	}
	/* The dead leave as their reaper collects them: a moment, then the group goes. */
	for (int i = 0; i < 50 && rmdir(dir) < 0 && errno == EBUSY; i++)
		usleep(20000);
	return killed;
}
