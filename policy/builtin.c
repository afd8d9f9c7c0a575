/* SPDX-License-Identifier: MIT */
/*
 * The built-in sets that "system": true and "tooling": true switch on. Each entry
 * is a template expanded like a policy entry: one whose variable is unset or empty
 * is dropped. The sets carry their own denials, so "/etc less secrets" stays true
 * for any policy that asks for the system set.
 */
#include <string.h>

#include "policy-private.h"

enum {
	B_RO = 1 << 0,
	B_RW = 1 << 1,
	B_DENY = 1 << 2,
	B_UNLESS_HOME = 1 << 3, /* skip when the path is $HOME */
};

struct builtin {
	const char *path;
	unsigned flags;
};

static const struct builtin system_set[] = {
    /* Programs and libraries. */
    {"/usr", B_RO},
    {"/bin", B_RO},
    {"/sbin", B_RO},
    {"/lib", B_RO},
    {"/lib32", B_RO},
    {"/lib64", B_RO},
    {"/libx32", B_RO},
    {"/opt", B_RO},
    {"/etc", B_RO},
    /* /etc/resolv.conf is a symlink here on systemd-resolved hosts. */
    {"/run/systemd/resolve/stub-resolv.conf", B_RO},
    {"/run/systemd/resolve/resolv.conf", B_RO},
    /* What terminals and runtimes open. */
    {"/dev/null", B_RW},
    {"/dev/zero", B_RW},
    {"/dev/full", B_RW},
    {"/dev/random", B_RW},
    {"/dev/urandom", B_RW},
    {"/dev/tty", B_RW},
    {"/dev/pts", B_RW},
    {"/dev/ptmx", B_RW},
    {"/proc/self", B_RO},
    {"/proc/thread-self", B_RO},
    {"/proc/cpuinfo", B_RO},
    {"/proc/meminfo", B_RO},
    {"/proc/stat", B_RO},
    {"/proc/loadavg", B_RO},
    {"/proc/uptime", B_RO},
    {"/proc/version", B_RO},
    {"/proc/filesystems", B_RO},
    {"/proc/sys", B_RO},
    {"/sys/devices/system/cpu", B_RO},
    {"/sys/fs/cgroup", B_RO},
    /* The secrets of /etc, and root's home unless it is the session's. */
    {"/etc/shadow", B_DENY},
    {"/etc/shadow-", B_DENY},
    {"/etc/gshadow", B_DENY},
    {"/etc/gshadow-", B_DENY},
    {"/etc/sudoers*", B_DENY},
    {"/etc/ssh/ssh_host_*key*", B_DENY},
    {"/etc/ssl/private", B_DENY},
    {"/etc/security/opasswd", B_DENY},
    {"/root", B_DENY | B_UNLESS_HOME},
};

static const struct builtin tooling_set[] = {
    {"$HOME/.gitconfig", B_RO},
    {"$HOME/.gitignore_global", B_RO},
    {"$HOME/.config/git", B_RO},
    {"$XDG_CONFIG_HOME/git", B_RO},
    {"$HOME/.editorconfig", B_RO},
    {"$HOME/.terminfo", B_RO},
    {"$HOME/.inputrc", B_RO},
    {"$GOPATH/pkg/mod", B_RO},
    {"$HOME/go/pkg/mod", B_RO},
    {"$GOROOT", B_RO},
    {"$HOME/.cache/go-build", B_RO},
    {"$HOME/.cargo", B_RO},
    {"$CARGO_HOME", B_RO},
    {"$HOME/.rustup", B_RO},
    {"$RUSTUP_HOME", B_RO},
    {"$HOME/.npm", B_RO},
    {"$HOME/.nvm", B_RO},
    {"$NVM_DIR", B_RO},
    {"$HOME/.bun", B_RO},
    {"$HOME/.deno", B_RO},
    {"$HOME/.volta", B_RO},
    {"$HOME/.pyenv", B_RO},
    {"$PYENV_ROOT", B_RO},
    {"$HOME/.cache/pip", B_RO},
    {"$HOME/.local/bin", B_RO},
    {"$HOME/.local/lib", B_RO},
    {"$HOME/.m2/repository", B_RO},
    {"$HOME/.gradle/caches", B_RO},
    /* Tokens that live beside the caches above. */
    {"$HOME/.cargo/credentials*", B_DENY},
    {"$CARGO_HOME/credentials*", B_DENY},
    {"$HOME/.npm/_authToken*", B_DENY},
};

static int
add_set(struct policy *p, const struct policy_env *env, const struct builtin *set, size_t n,
        enum policy_kind kind, const char *source)
{
	char path[POLICY_PATH_MAX + 1], err[600];
	const char *home = env_lookup(env->environ, "HOME", 4);
	char home_norm[POLICY_PATH_MAX + 1] = "";

	if (home && *home && policy_path_normalize("/", home, home_norm, sizeof(home_norm)) < 0)
		home_norm[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const struct builtin *b = &set[i];
		bool deny = b->flags & B_DENY;
		int r = pol_resolve_entry(p, env, b->path, NULL, deny, path, sizeof(path), err,
		                          sizeof(err));
		if (r == -ENOMEM)
			return r;
		if (r <= 0)
			continue; /* an unset variable, or a value no path can hold */
		if ((b->flags & B_UNLESS_HOME) && strcmp(path, home_norm) == 0)
			continue;
		enum policy_mode mode = deny              ? POLICY_MODE_NONE
		                        : b->flags & B_RW ? POLICY_MODE_RW
		                                          : POLICY_MODE_RO;
		struct policy_origin o = {.source = source, .key = "", .text = b->path};
		r = pol_add_rule_resolved(p, env, deny ? POLICY_KIND_DENY : kind, mode, path, &o);
		if (r < 0)
			return r;
	}
	return 0;
}

int
builtin_add_system(struct policy *p, const struct policy_env *env)
{
	return add_set(p, env, system_set, ARRAY_SIZE(system_set), POLICY_KIND_SYSTEM,
	               "<builtin:system>");
}

int
builtin_add_tooling(struct policy *p, const struct policy_env *env)
{
	return add_set(p, env, tooling_set, ARRAY_SIZE(tooling_set), POLICY_KIND_TOOLING,
	               "<builtin:tooling>");
}

/* Names tasks never see unless runner.env.keep names them: credentials and agent keys. */
static const char *const env_drop_builtin[] = {
    "SSH_AUTH_SOCK", "SSH_AGENT_PID",      "GPG_AGENT_INFO", "AWS_*",       "GOOGLE_*",
    "GCP_*",         "GCLOUD_*",           "CLOUDSDK_*",     "AZURE_*",     "ARM_CLIENT_SECRET",
    "*_TOKEN",       "*_TOKEN_*",          "*_API_KEY",      "*_APIKEY",    "*_SECRET*",
    "*_PASSWORD",    "*_PASSWD",           "*_CREDENTIALS*", "ANTHROPIC_*", "OPENAI_*",
    "GEMINI_*",      "CLAUDE_CODE_*",      "GITHUB_TOKEN",   "GH_TOKEN",    "NPM_TOKEN",
    "KUBECONFIG",    "DOCKER_AUTH_CONFIG", "VAULT_*",        NULL,
};

const char *const *
policy_env_drop_builtin(void)
{
	return env_drop_builtin;
}
