/* SPDX-License-Identifier: MIT */
/* moat: the command-line entry point. Commands are a table. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "moat/log.h"

const char *log_program = "moat";

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
    {"run", cmd_run, "run an agent (any command) under the supervisor"},
    {"check", cmd_check, "explain which rule decides each path"},
    {"mounts", cmd_mounts, "print the surface as bwrap, docker or OCI mounts"},
    {"default-policy", cmd_default_policy, "print the embedded default policy"},
};

static void
usage(FILE *out)
{
	fprintf(out, "Usage: moat COMMAND [OPTIONS] [ARGS]\n"
	             "       moat --help | --version\n"
	             "\n"
	             "moat puts a kernel-enforced boundary around an AI coding agent: what it may\n"
	             "read, write, execute and connect to (its surface) comes from a policy file,\n"
	             "or from the embedded default when no --policy is given.\n"
	             "\n"
	             "Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-16s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n"
	             "Run 'moat COMMAND --help' for the options of a command.\n"
	             "Exit status: 0 success, 1 a path is denied (check), 2 usage or policy "
	             "error.\n");
}

int
main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr), EXIT_USAGE;
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
				if (strcmp(argv[2], commands[i].name) == 0) {
					char *args[] = {argv[2], "--help", NULL};
					return commands[i].run(2, args);
				}
			return cli_usage_error(NULL, "unknown command '%s'", argv[2]);
		}
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("moat %s (policy version %d)\n", MOAT_VERSION, POLICY_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	return cli_usage_error(NULL, "unknown command '%s'", argv[1]);
}
