/* SPDX-License-Identifier: MIT */
/*
 * The notification loop. One thread receives each trapped call, runs its
 * handler from a table indexed by syscall number and sends the answer, with
 * SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP so that the target and the supervisor hand
 * the CPU to each other instead of waking across CPUs. A trapped call without a
 * handler is refused: a gap in the table fails closed.
 */
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "audit.h"
#include "filter.h"
#include "moat/log.h"
#include "moat/macro.h"
#include "moat/sys.h"
#include "sv.h"

#define NR_MAX 512

static const struct {
	const char *name;
	sv_handler handler;
} handlers[] = {
    {"open", sv_open},
    {"openat", sv_openat},
    {"openat2", sv_openat2},
    {"creat", sv_creat},
    {"stat", sv_stat},
    {"lstat", sv_lstat},
    {"newfstatat", sv_newfstatat},
    {"statx", sv_statx},
    {"access", sv_access},
    {"faccessat", sv_faccessat},
    {"faccessat2", sv_faccessat2},
    {"readlink", sv_readlink},
    {"readlinkat", sv_readlinkat},
    {"statfs", sv_statfs},
    {"chdir", sv_chdir},
    {"execve", sv_execve},
    {"execveat", sv_execveat},
    {"mkdir", sv_mkdir},
    {"mkdirat", sv_mkdirat},
    {"unlink", sv_unlink},
    {"unlinkat", sv_unlinkat},
    {"rmdir", sv_rmdir},
    {"rename", sv_rename},
    {"renameat", sv_renameat},
    {"renameat2", sv_renameat2},
    {"link", sv_link},
    {"linkat", sv_linkat},
    {"symlink", sv_symlink},
    {"symlinkat", sv_symlinkat},
    {"chmod", sv_chmod},
    {"fchmod", sv_fchmod},
    {"fchmodat", sv_fchmodat},
    {"fchmodat2", sv_fchmodat2},
    {"chown", sv_chown},
    {"fchown", sv_fchown},
    {"lchown", sv_lchown},
    {"fchownat", sv_fchownat},
    {"truncate", sv_truncate},
    {"utime", sv_utime},
    {"utimes", sv_utimes},
    {"futimesat", sv_futimesat},
    {"utimensat", sv_utimensat},
    {"mknod", sv_mknod},
    {"mknodat", sv_mknodat},
    {"getxattr", sv_getxattr},
    {"lgetxattr", sv_lgetxattr},
    {"listxattr", sv_listxattr},
    {"llistxattr", sv_llistxattr},
    {"setxattr", sv_setxattr},
    {"lsetxattr", sv_lsetxattr},
    {"fsetxattr", sv_fsetxattr},
    {"removexattr", sv_removexattr},
    {"lremovexattr", sv_lremovexattr},
    {"fremovexattr", sv_fremovexattr},
    {"inotify_add_watch", sv_inotify_add_watch},
    {"connect", sv_connect},
    {"bind", sv_bind},
    {"sendto", sv_sendto},
    {"sendmsg", sv_sendmsg},
    {"sendmmsg", sv_sendmmsg},
};

static sv_handler by_nr[NR_MAX];
static const char *names[NR_MAX];

static void
build_table(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(handlers); i++) {
		int nr = sv_syscall_nr(handlers[i].name);
		if (nr >= 0 && nr < NR_MAX)
			by_nr[nr] = handlers[i].handler;
	}
}

sv_handler
sv_handler_for(int nr, const char **ret_name)
{
	if (nr < 0 || nr >= NR_MAX) {
		*ret_name = "?";
		return NULL;
	}
	if (!names[nr]) {
		char *n = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
		names[nr] = n ? n : "?";
	}
	*ret_name = names[nr];
	return by_nr[nr];
}

static void
handle(struct sv *sv)
{
	struct sv_call c = {.sv = sv, .req = sv->req};

	memset(sv->req, 0, sv->req_size);
	int r = sys_notif_recv(sv->notify_fd, sv->req);
	if (r < 0)
		return; /* ENOENT: the target died before we read the call */
	c.tid = (pid_t)sv->req->pid;
	c.nr = sv->req->data.nr;
	sv_handler h = sv_handler_for(c.nr, &c.name);
	if (h)
		h(&c);
	else
		c.err = EPERM; /* trapped but not handled: fail closed */
	if (c.gone || c.replied) {
		audit_call(sv->audit, &c);
		return;
	}
	memset(sv->resp, 0, sv->resp_size);
	sv->resp->id = sv->req->id;
	if (c.cont) {
		sv->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	} else {
		sv->resp->error = c.err ? -c.err : 0;
		sv->resp->val = c.err ? 0 : c.val;
	}
	sys_notif_send(sv->notify_fd, sv->resp); /* ENOENT: it died meanwhile */
	if (c.after)
		c.after(&c);
	audit_call(sv->audit, &c);
}

/* Signals that moat passes on to the agent. */
static const int forwarded[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2};

/*
 * The agent stopped (Ctrl-Z): stop moat too, so that the shell sees its job
 * stopped; when the shell continues moat, give the terminal back to the agent
 * and continue it.
 */
static void
follow_stop(struct sv *sv, int agent_pidfd)
{
	siginfo_t si = {0};

	if (waitid(P_PIDFD, (id_t)agent_pidfd, &si, WSTOPPED | WNOHANG | WNOWAIT) < 0 ||
	    si.si_pid == 0 || si.si_code != CLD_STOPPED)
		return;
	/* Consume the stop report. */
	waitid(P_PIDFD, (id_t)agent_pidfd, &si, WSTOPPED | WNOHANG);
	audit_flush(sv->audit);
	if (sv->tty_fd >= 0)
		tcsetpgrp(sv->tty_fd, getpgrp());
	kill(getpid(), SIGSTOP);
	if (sv->tty_fd >= 0)
		tcsetpgrp(sv->tty_fd, sv->agent_pgrp);
	kill(-sv->agent_pgrp, SIGCONT);
}

void
sv_agent_reaped(struct sv *sv, int status)
{
	sv->agent_exited = true;
	sv->agent_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int
sv_loop(struct sv *sv, int agent_pidfd, int *ret_status)
{
	sigset_t set;
	siginfo_t si;

	build_table();
	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigaddset(&set, SIGCHLD);
	_cleanup_close_ int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return log_error_errno(-errno, "signalfd");
	/* Linux 6.6+; without it the loop is correct, only slower. */
	(void)sys_notif_set_flags(sv->notify_fd, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);

	struct pollfd pfd[3] = {
	    {.fd = sv->notify_fd, .events = POLLIN},
	    {.fd = agent_pidfd, .events = POLLIN},
	    {.fd = sfd, .events = POLLIN},
	};
	for (;;) {
		int n = poll(pfd, ARRAY_SIZE(pfd), audit_pending(sv->audit) ? 200 : -1);
		if (n < 0 && errno != EINTR)
			return log_error_errno(-errno, "poll");
		if (n <= 0) {
			audit_flush(sv->audit);
			continue;
		}
		if (pfd[0].revents & POLLIN)
			handle(sv);
		if (sv->agent_exited) {
			*ret_status = sv->agent_status;
			return 0;
		}
		if (pfd[2].revents & POLLIN) {
			struct signalfd_siginfo ssi;
			while (read(sfd, &ssi, sizeof(ssi)) == sizeof(ssi)) {
				if (ssi.ssi_signo == SIGCHLD)
					follow_stop(sv, agent_pidfd);
				else
					sys_pidfd_send_signal(agent_pidfd, (int)ssi.ssi_signo);
			}
		}
		if (pfd[1].revents & POLLIN) {
			memset(&si, 0, sizeof(si));
			if (waitid(P_PIDFD, (id_t)agent_pidfd, &si, WEXITED) < 0)
				return log_error_errno(-errno, "waitid");
			*ret_status = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
			return 0;
		}
	}
}
