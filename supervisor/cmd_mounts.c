/* SPDX-License-Identifier: MIT */
/* moat mounts: the surface as mount arguments for bwrap, docker or an OCI runtime. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "moat/log.h"

static const char mounts_help[] =
    "Usage: moat mounts [--policy FILE] [--cwd DIR] [--format bwrap|docker|oci]\n"
    "\n"
    "Prints the policy's surface as the mounts of a sandbox root that shows the\n"
    "readable set and nothing else: rw binds for rw entries, ro binds for the rest of\n"
    "the readable set (source and destination are the same path), an empty tmpfs or\n"
    "/dev/null over denied and private entries that lie inside a bind, sorted by\n"
    "destination. A bind already given by its parent is left out. mounts.extra is\n"
    "composed by mounts.mode: \"additive\" (the surface wins a destination it also\n"
    "mounts) or \"exclusive\" (operator mounts dropped). /proc and /dev are left to the\n"
    "sandbox (bwrap: --proc /proc --dev /dev).\n"
    "\n"
    "Sources that do not exist, dropped operator mounts, and deny globs (which have no\n"
    "mount form) are listed on stderr, one line each.\n"
    "\n"
    "Formats (one mount per line, except oci):\n"
    "  bwrap    --ro-bind SRC DST, --bind SRC DST, --tmpfs DST [--remount-ro DST]\n"
    "  docker   --mount 'type=bind,source=SRC,target=DST[,readonly]', type=tmpfs\n"
    "  oci      a JSON array of OCI runtime-spec mount objects\n"
    "\n"
    "Options:\n"
    "  --policy FILE    the policy to use (default: the embedded default policy)\n"
    "  --cwd DIR        the session's working directory (default: the current one)\n"
    "  --format FORMAT  bwrap (default), docker or oci\n"
    "  -h, --help       show this help\n"
    "\n"
    "Exit status: 0 success, 2 usage or policy error.\n";

static enum policy_probe
probe(const char *path, void *userdata)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return POLICY_PROBE_MISSING;
	return S_ISDIR(st.st_mode) ? POLICY_PROBE_DIR : POLICY_PROBE_FILE;
}

static void
print_note(const struct policy_mount_note *n)
{
	fprintf(stderr, "%s: mounts: %s %s: %s", log_program,
	        policy_mount_note_kind_to_string(n->kind), n->path, n->why);
	if (n->origin) {
		fprintf(stderr, " (%s", n->origin->source);
		if (n->origin->line)
			fprintf(stderr, ":%u:%u", n->origin->line, n->origin->col);
		if (n->origin->key && *n->origin->key)
			fprintf(stderr, " %s", n->origin->key);
		fputc(')', stderr);
	}
	fputc('\n', stderr);
}

int
cmd_mounts(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"policy", required_argument, NULL, 'p'},
	    {"cwd", required_argument, NULL, 'C'},
	    {"format", required_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct cli_policy c = {0};
	enum policy_mount_format fmt = POLICY_FORMAT_BWRAP;
	struct policy_mount_set *set = NULL;
	int opt;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			c.file = optarg;
			break;
		case 'C':
			c.cwd = optarg;
			break;
		case 'f':
			if (policy_mount_format_parse(optarg, &fmt) < 0)
				return cli_usage_error(
				    "mounts", "--format '%s': expected bwrap, docker or oci",
				    optarg);
			break;
		case 'h':
			fputs(mounts_help, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("mounts", "bad option");
		}
	}
	if (optind < argc)
		return cli_usage_error("mounts", "unexpected argument '%s'", argv[optind]);
	if (cli_policy_load(&c) < 0)
		return EXIT_USAGE;
	int r = policy_mounts_build(c.policy, probe, NULL, &set);
	if (r < 0) {
		cli_policy_done(&c);
		return log_error_errno(r, "mounts"), EXIT_USAGE;
	}
	for (size_t i = 0; i < set->n_notes; i++)
		print_note(&set->notes[i]);
	r = policy_mounts_write(set, fmt, stdout);
	policy_mounts_free(set);
	cli_policy_done(&c);
	if (r < 0 || fflush(stdout) != 0)
		return log_error("mounts: writing the output: %m"), EXIT_USAGE;
	return EXIT_OK;
}
