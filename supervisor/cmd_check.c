/* SPDX-License-Identifier: MIT */
/* moat check: which rule decides each path, and moat default-policy. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "moat/jsonw.h"
#include "moat/log.h"

static const char check_help[] =
    "Usage: moat check [--policy FILE] [--cwd DIR] [--access ACCESS] [--json] [PATH...]\n"
    "\n"
    "Explains which rule of the policy decides each PATH, as the supervisor would\n"
    "decide it for the agent. PATH is made absolute against the working directory and\n"
    "made canonical as far as it exists (symlinks resolved, '.', '..' and '//'\n"
    "folded), because moat decides on the object a path reaches, not on its spelling.\n"
    "With no PATH, validates the policy and prints a summary.\n"
    "\n"
    "Options:\n"
    "  --policy FILE    the policy to use (default: the embedded default policy)\n"
    "  --cwd DIR        the session's working directory (default: the current one);\n"
    "                   relative PATHs and the policy's \"cwd\" entry are taken from it\n"
    "  --access ACCESS  read (default), write, exec or stat\n"
    "  --json           one JSON object per line: path, canonical, access, decision,\n"
    "                   errno, mode, ancestor, private, rule\n"
    "  -h, --help       show this help\n"
    "\n"
    "Exit status: 0 every PATH is allowed (or the policy is valid), 1 some PATH is\n"
    "denied, 2 usage or policy error.\n";

static void
print_origin(FILE *out, const struct policy_origin *o)
{
	fprintf(out, " at %s", o->source);
	if (o->line)
		fprintf(out, ":%u:%u", o->line, o->col);
	if (o->key && *o->key)
		fprintf(out, " %s", o->key);
}

static void
print_text(const char *given, const char *canon, enum policy_access a,
           const struct policy_verdict *v)
{
	const struct policy_rule *r = v->rule;

	printf("%s", given);
	if (strcmp(given, canon) != 0)
		printf(" -> %s", canon);
	printf(": %s %s", policy_access_to_string(a), v->allow ? "allowed" : "denied");
	if (!v->allow)
		printf(" (%s)", strerrorname_np(v->err));
	if (!r) {
		printf(": no rule matches\n");
		return;
	}
	if (v->ancestor)
		printf(" as an ancestor of %s (%s \"%s\")", r->path, policy_kind_to_string(r->kind),
		       r->origin.text);
	else if (r->kind == POLICY_KIND_CWD)
		printf(" by cwd (%s)", policy_mode_to_string(r->mode));
	else {
		printf(" by %s%s \"%s\"", policy_kind_to_string(r->kind), r->glob ? " glob" : "",
		       r->origin.text);
		if (strcmp(r->origin.text, r->path) != 0)
			printf(" = %s", r->path);
		if (r->mode != POLICY_MODE_NONE)
			printf(" (%s)", policy_mode_to_string(r->mode));
	}
	print_origin(stdout, &r->origin);
	if (v->private_ && !v->ancestor)
		printf(" [private: hidden from tasks]");
	putchar('\n');
}

static void
print_json(const char *given, const char *canon, enum policy_access a,
           const struct policy_verdict *v)
{
	const struct policy_rule *r = v->rule;
	FILE *o = stdout;

	fputs("{\"path\":", o);
	jsonw_cstr(o, given);
	fputs(",\"canonical\":", o);
	jsonw_cstr(o, canon);
	fprintf(o, ",\"access\":\"%s\",\"decision\":\"%s\",\"errno\":", policy_access_to_string(a),
	        v->allow ? "allow" : "deny");
	if (v->allow)
		fputs("null", o);
	else
		fprintf(o, "\"%s\"", strerrorname_np(v->err));
	fprintf(o, ",\"mode\":\"%s\",\"ancestor\":%s,\"private\":%s,\"rule\":",
	        policy_mode_to_string(v->mode), v->ancestor ? "true" : "false",
	        v->private_ ? "true" : "false");
	if (!r) {
		fputs("null}\n", o);
		return;
	}
	fprintf(o, "{\"kind\":\"%s\",\"glob\":%s,\"path\":", policy_kind_to_string(r->kind),
	        r->glob ? "true" : "false");
	jsonw_cstr(o, r->path);
	fputs(",\"text\":", o);
	jsonw_cstr(o, r->origin.text);
	fputs(",\"source\":", o);
	jsonw_cstr(o, r->origin.source);
	fprintf(o, ",\"line\":%u,\"column\":%u,\"key\":", r->origin.line, r->origin.col);
	jsonw_cstr(o, r->origin.key);
	fputs("}}\n", o);
}

static int
summary(const struct cli_policy *c)
{
	const struct policy_rule *rules;
	const struct policy_exec_rule *er;
	const struct policy_net_rule *nr;
	const char *const *notes;
	size_t n = policy_rules(c->policy, &rules), globs = 0;

	for (size_t i = 0; i < n; i++)
		globs += rules[i].glob;
	size_t n_notes = policy_notes(c->policy, &notes);
	for (size_t i = 0; i < n_notes; i++)
		fprintf(stderr, "%s: note: %s\n", log_program, notes[i]);
	printf("%s: valid: %zu surface entries (%zu deny globs), %zu exec rules (default %s), "
	       "%zu network rules; cwd %s\n",
	       policy_source_name(c->policy), n, globs, policy_exec_rules(c->policy, &er),
	       policy_exec_action_to_string(policy_exec_default(c->policy)),
	       policy_net_rules(c->policy, &nr), c->cwd_canon);
	return EXIT_OK;
}

int
cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"policy", required_argument, NULL, 'p'}, {"cwd", required_argument, NULL, 'C'},
	    {"access", required_argument, NULL, 'a'}, {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},         {0},
	};
	struct cli_policy c = {0};
	enum policy_access access = POLICY_READ;
	bool json = false;
	int opt, ret = EXIT_OK;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			c.file = optarg;
			break;
		case 'C':
			c.cwd = optarg;
			break;
		case 'a':
			if (policy_access_from_string(optarg, &access) < 0)
				return cli_usage_error(
				    "check", "--access '%s': expected read, write, exec or stat",
				    optarg);
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(check_help, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("check", "bad option");
		}
	}
	if (cli_policy_load(&c) < 0)
		return EXIT_USAGE;
	if (optind == argc) {
		ret = summary(&c);
		cli_policy_done(&c);
		return ret;
	}
	for (int i = optind; i < argc; i++) {
		char canon[PATH_MAX];
		struct policy_verdict v;
		int r = canon_path(c.cwd_canon, argv[i], canon, sizeof(canon));
		if (r < 0) {
			log_error("check: %s: %s", argv[i], strerror(-r));
			ret = EXIT_USAGE;
			continue;
		}
		policy_match(c.policy, canon, strlen(canon), access, &v);
		(json ? print_json : print_text)(argv[i], canon, access, &v);
		if (!v.allow && ret == EXIT_OK)
			ret = EXIT_DENIED;
	}
	cli_policy_done(&c);
	if (fflush(stdout) != 0)
		return log_error("check: writing the output: %m"), EXIT_USAGE;
	return ret;
}

int
cmd_default_policy(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		puts("Usage: moat default-policy\n\n"
		     "Prints the policy moat uses when no --policy is given, as JSON: a\n"
		     "starting point for a policy of your own. \"system\" and \"tooling\" switch\n"
		     "on built-in sets; 'moat check PATH' shows their entries as <builtin:…>.");
		return EXIT_OK;
	}
	if (argc > 1)
		return cli_usage_error("default-policy", "unexpected argument '%s'", argv[1]);
	fputs(policy_default_text(), stdout);
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_USAGE;
}
