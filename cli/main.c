/* SPDX-License-Identifier: MIT */
/* megatune: calibrate GPU clusters, profile training runs, advise on
 * Megatron-LM configurations.  This file dispatches to the subcommands.
 *
 * `calibrate`, `probe` and `proxy` run in megatune-probe (cli/probe_main.c),
 * the executable that links MPI, BLAS and PAPI: this one execs it from its own
 * folder with the same arguments and environment, and links none of them.
 * One table, commands[], gives the dispatch and the list of `megatune --help`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/bundled.h"
#include "../lib/version.h"
#include "cli.h"
#include "commit.h" /* $(BUILD)/gen/commit.h: MEGATUNE_COMMIT (scripts/version-commit.sh) */
#include "manpage.h"

/* The commands: name, function (NULL: it runs in megatune-probe, which this
 * program execs), the line of `megatune --help` (NULL: an alias, not listed;
 * '\n' continues it on the next line, indented). */
struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
	int probe_exe; /* runs in megatune-probe */
};

static const struct command commands[] = {
	{ "advise", cmd_advise, "search every parallel configuration and rank the best", 0 },
	{ "estimate", cmd_estimate, "break down memory and time of one configuration", 0 },
	{ "check", cmd_check,
	  "read the job you run (launch script, arguments, log): what is wrong, what\n"
	  "to change, how much it gains", 0 },
	{ "rules", cmd_rules, "list, show, lint and check the tuning rules", 0 },
	{ "report", cmd_report,
	  "the HTML report of an advice, a profile, an analysis, a comparison", 0 },
	{ "calibrate", NULL,
	  "run the probes and write a cluster profile (mpirun/srun for many nodes)", 1 },
	{ "probe", NULL, "run one probe (gemm, attention, collective, dispatch, offload, host,\n"
			 "topology)", 1 },
	{ "import", cmd_import, "turn nccl-tests or nvbandwidth output into a cluster profile", 0 },
	{ "profile", cmd_profile, "run a command under the CUPTI tracer (one trace per process)",
	  0 },
	{ "analyze", cmd_analyze, "per-rank time breakdown, overlap, idle and stragglers of traces",
	  0 },
	{ "analyse", cmd_analyze, NULL, 0 },
	{ "compare", cmd_compare,
	  "noise-aware verdicts of current results against a baseline or a history", 0 },
	{ "history", cmd_history, "store runs in a history (SQLite) for compare; list, show, prune",
	  0 },
	{ "validate", cmd_validate,
	  "run the top candidates for real and compare predicted with measured", 0 },
	{ "tune", cmd_tune,
	  "advise, validate, correct and re-rank until the measured best is stable", 0 },
	{ "proxy", NULL, "run one advice candidate as a layer proxy (under mpirun), printing\n"
			 "Megatron-LM iteration lines", 1 },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char usage_head[] =
	"usage: megatune <command> [options]\n"
	"\n"
	"Advise on the parallel configuration of Megatron-LM / Megatron-Core /\n"
	"Megatron-Bridge training from a model, a GPU budget and a cluster profile.\n"
	"\n"
	"commands:\n";

static const char usage_tail[] =
	"\n"
	"Run 'megatune <command> --help' for the options of a command.\n"
	"\n"
	"exit codes:\n"
	"  0   success\n"
	"  1   the check failed (for advise: nothing feasible)\n"
	"  2   bad usage or bad input (the message names the file and field), or a GPU\n"
	"      library missing on a machine with an NVIDIA GPU\n"
	"  77  not applicable on this machine\n";

/* The usage: the commands of the table, each with its line from column 13. */
static void usage(FILE *f)
{
	size_t i;

	fputs(usage_head, f);
	for (i = 0; i < NCOMMANDS; i++) {
		const char *h = commands[i].help, *nl;

		if (!h)
			continue;
		fprintf(f, "  %-10s ", commands[i].name);
		while ((nl = strchr(h, '\n'))) {
			fprintf(f, "%.*s\n%13s", (int)(nl - h), h, "");
			h = nl + 1;
		}
		fprintf(f, "%s\n", h);
	}
	fputs(usage_tail, f);
}

/* The files of megatune(1) (a build folder has them beside megatune). */
static const char *const man_files[][2] = {
	{ "megatune-probe", "beside megatune: calibrate, probe and proxy run in it, the one "
	  "program linking MPI, BLAS and PAPI" },
	{ "../lib/megatune/libmegatune_trace.so",
	  "the CUPTI tracer megatune profile injects (when built: the CUDA toolkit's CUPTI "
	  "headers); looked for beside megatune, then here; $MEGATUNE_TRACE_LIB or --lib "
	  "names another" },
	{ "../lib/megatune/libmegatune_cuda.so",
	  "the CUDA back end of the probes (when built: nvcc), found the same way; "
	  "$MEGATUNE_CUDA_LIB names another" },
	{ "../lib/megatune/probe-NAME", "megatune-probe under the name of a probe: runs "
	  "megatune probe NAME" },
};

/* The line of `megatune --help` of command i (an alias: its command's). */
static const char *summary_of(size_t i)
{
	size_t j;

	for (j = 0; !commands[i].help && j < NCOMMANDS; j++)
		if (commands[j].help && commands[j].fn == commands[i].fn)
			return commands[j].help;
	return commands[i].help ? commands[i].help : "";
}

/* megatune(1): the usage, the commands with their lines, the exit codes, the files. */
static void man_page(void)
{
	const char *see[NCOMMANDS];
	char pages[NCOMMANDS][32];
	size_t i, n = 0, len = strlen(usage_head);

	cli_man_begin(stdout, "megatune", "advise on the parallel configuration of "
		      "Megatron-LM training, measure clusters, profile runs");
	if (len > 10 && !strcmp(usage_head + len - 10, "commands:\n"))
		len -= 10; /* the commands are a section of their own */
	cli_man_head(stdout, usage_head, len);
	cli_man_section(stdout, "COMMANDS");
	for (i = 0; i < NCOMMANDS; i++) {
		if (!commands[i].help)
			continue;
		cli_man_item(stdout, commands[i].name, commands[i].help);
		snprintf(pages[n], sizeof(pages[n]), "megatune-%s", commands[i].name);
		see[n] = pages[n];
		n++;
	}
	cli_man_item(stdout, "--version", "the version and the commit it is built from");
	cli_man_tail(stdout, usage_tail);
	cli_man_section(stdout, "FILES");
	for (i = 0; i < sizeof(man_files) / sizeof(man_files[0]); i++)
		cli_man_item(stdout, man_files[i][0], man_files[i][1]);
	cli_man_end(stdout, see, n);
}

/* `megatune --help=FORMAT`: for tools, as `megatune CMD --help=FORMAT` (cli/opts.h):
 * man, megatune(1); complete, the commands and options of shell completion; models and
 * profiles, the bundled names, one a line.  Returns the exit code. */
static int help_as(const char *format)
{
	const char *kind = !strcmp(format, "models") ? "model"
			   : !strcmp(format, "profiles") ? "profile" : NULL;
	const struct mt_bundled *b;
	size_t i;

	if (!strcmp(format, "man")) {
		man_page();
		return 0;
	}
	if (kind) {
		for (b = mt_bundled_files; b->name; b++)
			if (!strcmp(b->kind, kind))
				printf("%s\n", b->name);
		return 0;
	}
	if (strcmp(format, "complete")) {
		fprintf(stderr, "megatune: error: --help: expected man, complete, models or "
			"profiles, got '%s'\n", format);
		return 2;
	}
	for (i = 0; i < NCOMMANDS; i++) {
		const char *h = commands[i].help;

		if (!h)
			continue;
		printf("%s\t\t\t", commands[i].name);
		for (; *h; h++)
			putchar(*h == '\n' ? ' ' : *h);
		putchar('\n');
	}
	printf("--help\t\t\tthe commands and the exit codes\n"
	       "--version\t\t\tthe version and the commit it is built from\n");
	return 0;
}

/* Exec megatune-probe from this program's folder with argv and the
 * environment as they are; returns (2) only when that fails. */
static int run_probe_exe(const char *cmd, char **argv)
{
	char path[4096];

	cli_sibling_exe("megatune-probe", path, sizeof(path));
	execv(path, argv);
	fprintf(stderr, "megatune %s: error: %s: %s (calibrate and probe run in "
		"megatune-probe, built beside megatune by make)\n", cmd, path, strerror(errno));
	return 2;
}

int main(int argc, char **argv)
{
	/* build/probe-<name> names megatune-probe; a link to megatune under
	 * such a name goes there too */
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	size_t i;

	atexit(cli_check_stdout);
	if (!strncmp(base, "probe-", 6))
		return run_probe_exe("probe", argv);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strncmp(argv[1], "--help=", 7))
		return help_as(argv[1] + 7);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("megatune %s (commit %s)\n", MEGATUNE_VERSION, MEGATUNE_COMMIT);
		return 0;
	}
	for (i = 0; i < NCOMMANDS; i++) {
		int k;

		if (strcmp(argv[1], commands[i].name))
			continue;
		/* the NAME line of its page (cli/manpage.h), in megatune-probe too */
		for (k = 2; k < argc; k++)
			if (!strcmp(argv[k], "--help=man"))
				setenv("MEGATUNE_MAN_SUMMARY", summary_of(i), 1);
		if (commands[i].probe_exe)
			return run_probe_exe(argv[1], argv);
		return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "megatune: error: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
