/* SPDX-License-Identifier: MIT */
/* import: nccl-tests and nvbandwidth output into a megatune.profile/1: the
 * options, then the readers, the profile builder and the summaries of
 * import/import.h. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../import/import.h"
#include "../lib/bundled.h"
#include "../lib/fsutil.h"
#include "../lib/sbuf.h"
#include "../perfmodel/profile.h"
#include "../perfmodel/cluster.h"
#include "cli.h"
#include "common.h"

static const char import_head[] =
	"usage: megatune import nccl-tests|nvbandwidth FILE... [-o profile.json]\n"
	"                       [--base NAME|FILE] [--name NAME] [--span nvlink|network]\n"
	"                       [--op OP] [--ranks N] [--strict] [--json]\n"
	"\n"
	"Reads the output of nccl-tests (all_reduce_perf, all_gather_perf,\n"
	"reduce_scatter_perf, alltoall_perf, sendrecv_perf, broadcast_perf: the text\n"
	"as printed, in any of its table layouts, with mpirun --tag-output prefixes\n"
	"and NCCL INFO lines tolerated, several tests per file, or the -J JSON file)\n"
	"or of nvbandwidth (text or -j JSON), checks every table against itself, and\n"
	"writes a cluster profile that `megatune advise --cluster FILE` reads:\n"
	"  nccl-tests   one collective curve per test: op, span, ranks, ranks per\n"
	"               node, and per size the out-of-place busbw and time\n"
	"  nvbandwidth  host->device, device->host and bidirectional copy bandwidth\n"
	"               (pinned, NUMA-local: the median over the GPUs; a GPU more than\n"
	"               10% below it is named in the profile's outliers)\n"
	"Every file becomes a source (kind \"imported\") with a citation naming the\n"
	"tool and NCCL versions, the ranks and hosts, the GPU and the file.\n"
	"\n"
	"Checks: busbw = algbw x the bus factor of the collective for every row; the\n"
	"'Avg bus bandwidth' footer is the mean of every busbw of the table within\n"
	"the rounding of the printed digits; nvbandwidth SUM lines add up.  A failed\n"
	"check is a warning, or an error with --strict.\n";

static const char import_tail[] =
	"exit codes: 0 success; 1 a check failed under --strict; 2 bad usage or bad\n"
	"input (not a log of that tool, an empty file, a table without rows, a value\n"
	"that is not a number), with the file, the line and what was expected; the\n"
	"output file is then left as it was.\n";

struct iopts {
	const char *out, *base, *name;
	int span, op, ranks, strict, json;
};

static int import_opt_name(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	if (!arg[0] || strlen(arg) > 63)
		return cli_opt_bad(cmd, opt->name, "a name of 1 to 63 characters", arg);
	((struct iopts *)args)->name = arg;
	return 0;
}

static int opt_op(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	if ((((struct iopts *)args)->op = mt_coll_parse(arg)) < 0)
		return cli_opt_bad(cmd, opt->name, "all_reduce, all_gather, reduce_scatter, "
				   "alltoall, sendrecv or broadcast", arg);
	return 0;
}

/* in the order of enum mt_span */
static const char *const spans[] = { "nvlink", "network", NULL };

#define IO(field) offsetof(struct iopts, field)

static const struct cli_opt import_opts[] = {
	CLI_SEC("options"),
	{ .type = CLI_STR, .name = "output", .short_name = 'o', .meta = "FILE", .off = IO(out),
	  .help = "the profile to write (atomically; '-': standard output).\n"
		  "Without it the files are only read and checked." },
	{ .type = CLI_STR, .name = "base", .meta = "NAME|FILE", .off = IO(base),
	  .help = "the profile the measurements are added to (its GPU,\n"
		  "node, GEMM and other curves stay); default: the bundled\n"
		  "profile of the GPU the logs name (H100 dgx-h100, H200\n"
		  "dgx-h200, A100 dgx-a100-80g, B200 dgx-b200, GB200\n"
		  "gb200-nvl72)" },
	{ .type = CLI_FN, .name = "name", .meta = "NAME", .fn = import_opt_name, .has_arg = 1,
	  .help = "the profile's name (default: the output file's name)" },
	{ .type = CLI_CHOICE, .name = "span", .meta = "S", .off = IO(span), .choices = spans,
	  .help = "nvlink or network for every curve (default: nvlink when\n"
		  "every rank ran on one host inside one NVLink domain)" },
	{ .type = CLI_FN, .name = "op", .meta = "OP", .fn = opt_op, .has_arg = 1,
	  .help = "the collective of a table the log does not name\n"
		  "(all_reduce, all_gather, reduce_scatter, alltoall,\n"
		  "sendrecv, broadcast); a named test keeps its name" },
	{ .type = CLI_INT, .name = "ranks", .meta = "N", .off = IO(ranks), .lo = 2, .hi = 1 << 24,
	  .want = "a number of ranks from 2 to 16777216",
	  .help = "the rank count where the log has no device list and\n"
		  "busbw/algbw does not determine it" },
	{ .type = CLI_FLAG, .name = "strict", .off = IO(strict),
	  .help = "a failed consistency check is an error (exit 1)" },
	{ .type = CLI_FLAG, .name = "json", .off = IO(json),
	  .help = "print what was read and checked as JSON\n"
		  "(megatune.import/1) instead of the text summary" },
	CLI_OPT_END
};

const struct cli_spec cli_spec_import = {
	.cmd = "import", .head = import_head, .opts = import_opts, .tail = import_tail,
};

static int import_parse(int argc, char **argv, struct iopts *o, int *first)
{
	memset(o, 0, sizeof(*o));
	o->span = o->op = -1;
	return cli_parse(&cli_spec_import, argc, argv, o, first);
}

/* ------------------------------------------------------------------ */

/* The profile's default name: the output file's name without .json. */
static void default_name(const struct iopts *o, const char *base, char *out, size_t cap)
{
	const char *p = o->out && strcmp(o->out, "-") ? o->out : base;
	const char *b = strrchr(p, '/');
	size_t n;

	b = b ? b + 1 : p;
	n = strlen(b);
	if (n > 5 && !strcmp(b + n - 5, ".json"))
		n -= 5;
	if (n > cap - 10)
		n = cap - 10;
	memcpy(out, b, n);
	out[n] = 0;
	if (!(o->out && strcmp(o->out, "-")))
		memcpy(out + n, "-imported", sizeof("-imported"));
}

/* The tool and the files of the command line checked before any is read. */
static int import_check_args(int argc, char **argv, const struct iopts *o, int *first, int *tool)
{
	int rc;

	if (*first >= argc)
		return cli_usage_error("import",
			"give the tool (nccl-tests or nvbandwidth) and at least one file");
	if ((*tool = mt_import_tool_parse(argv[*first])) < 0)
		return cli_usage_error("import", "expected nccl-tests or nvbandwidth, got '%s'",
				       argv[*first]);
	(*first)++;
	if (*first >= argc)
		return cli_usage_error("import",
			"give at least one %s output file", mt_import_tool_name(*tool));
	if (o->json && o->out && !strcmp(o->out, "-"))
		return cli_usage_error("import",
				       "--json and -o - would both write to standard output");
	if (argc - *first > 4096)
		return cli_usage_error("import", "at most 4096 files");
	if ((rc = cli_check_io("import", (const char *const *)argv + *first, argc - *first, &o->out,
			       1)) || (rc = cli_check_io("import", &o->base, 1, &o->out, 1)))
		return rc;
	return 0;
}

/* The profile the measurements go into: --base, else the bundled one of the logs' GPU. */
static int import_pick_base(const struct iopts *o, struct mt_import *const *ims, int n,
			    const char **base, struct mt_error *err)
{
	*base = o->base;
	if (!*base) {
		const char *gpu = mt_import_gpu(ims, n);
		*base = mt_import_base_for_gpu(gpu);
		if (!*base && o->out) {
			if (gpu)
				mt_error_set(err, MT_EUSAGE, "the logs ran on '%s', which no "
					     "bundled profile describes (H100, H200, A100, B200, "
					     "GB200): give --base NAME|FILE", gpu);
			else
				mt_error_set(err, MT_EUSAGE, "the logs do not name the GPU: give "
					     "--base NAME|FILE (dgx-a100-80g, dgx-h100, dgx-h200, "
					     "dgx-b200, gb200-nvl72 or a profile)");
			return -1;
		}
	}
	return 0;
}

/* The profile built written to -o, or read as a cluster to check it when not written. */
static int import_profile_out(const cJSON *doc, const char *out, struct mt_error *err)
{
	int rc;

	if (out) {
		rc = mt_profile_write(doc, out, err);
		if (!rc)
			cli_profile_warnings("import", doc, out);
	} else {
		struct mt_cluster *c = NULL;
		rc = mt_cluster_from_json(doc, "(imported profile)", &c, err);
		if (rc)
			mt_error_prefix(err, "the profile would be invalid: ");
		else
			cli_cluster_warnings("import", c);
		mt_cluster_free(c);
	}
	return rc;
}

int cmd_import(int argc, char **argv)
{
	struct iopts o;
	struct mt_import_opts po;
	struct mt_import_build_opts bo;
	struct mt_import_summary summary;
	struct mt_import **ims = NULL;
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf sb = SBUF_INIT;
	char **gw = NULL, name[64] = "";
	const char *base = NULL;
	cJSON *doc = NULL;
	int first = 0, n = 0, i, j, rc, tool = -1, built = 0, ngw = 0, *nparse_warn = NULL;

	if ((rc = import_parse(argc, argv, &o, &first)) >= 0)
		return rc;
	if ((rc = import_check_args(argc, argv, &o, &first, &tool)))
		return rc;
	po.op = o.op;
	po.ranks = o.ranks;
	po.strict = o.strict;
	bo.span = o.span;
	ims = calloc((size_t)(argc - first), sizeof(*ims));
	nparse_warn = calloc((size_t)(argc - first), sizeof(*nparse_warn));
	if (!ims || !nparse_warn) {
		mt_error_set(&err, MT_ENOMEM, "out of memory");
		goto fail;
	}
	for (i = first; i < argc; i++) {
		if ((rc = mt_import_file(tool, argv[i], &po, &ims[n], &err)))
			goto fail;
		n++;
	}
	/* what the files said, before anything can fail */
	for (i = 0; i < n; i++)
		for (j = 0; j < ims[i]->nwarn; j++)
			fprintf(stderr, "megatune import: warning: %s\n", ims[i]->warn[j]);
	for (i = 0; i < n; i++)
		nparse_warn[i] = ims[i]->nwarn;
	/* the profile the measurements go into */
	if (import_pick_base(&o, ims, n, &base, &err))
		goto fail;
	if (base) {
		if (o.name)
			snprintf(name, sizeof(name), "%s", o.name);
		else
			default_name(&o, base, name, sizeof(name));
		if (!mt_is_path(base) && !mt_bundled_find("profile", base)) {
			struct sbuf names = SBUF_INIT;
			mt_bundled_list("profile", &names);
			mt_error_set(&err, MT_EUSAGE, "--base: unknown profile '%s': give a profile file "
				     "or one of: %s", base, names.buf);
			sbuf_release(&names);
			goto fail;
		}
		if ((rc = mt_profile_new(base, name, &doc, &err)))
			goto fail;
		rc = mt_import_build(doc, ims, n, &bo, &gw, &ngw, &err);
		/* then what building the profile found */
		for (i = 0; i < n; i++)
			for (j = nparse_warn[i]; j < ims[i]->nwarn; j++)
				fprintf(stderr, "megatune import: warning: %s\n", ims[i]->warn[j]);
		for (i = 0; i < ngw; i++)
			fprintf(stderr, "megatune import: warning: %s\n", gw[i]);
		if (rc)
			goto fail;
		if (import_profile_out(doc, o.out, &err))
			goto fail;
		built = 1;
	}
	/* the summary to standard output, or to standard error when the
	 * profile went to standard output */
	summary.base = built ? base : NULL;
	summary.name = name;
	summary.written = o.out;
	summary.warn = gw;
	summary.nwarn = ngw;
	if (o.json)
		mt_import_summary_json(&sb, ims, n, tool, &summary);
	else
		mt_import_summary_text(&sb, ims, n, tool, &summary);
	if (sb.failed) {
		mt_error_set(&err, MT_ENOMEM, "out of memory");
		goto fail;
	}
	fputs(sb.buf, o.out && !strcmp(o.out, "-") ? stderr : stdout);
	rc = 0;
	goto out;
fail:
	rc = cli_fail("import", &err);
out:
	for (i = 0; i < ngw; i++)
		free(gw[i]);
	free(gw);
	for (i = 0; i < n; i++)
		mt_import_free(ims[i]);
	free(ims);
	free(nparse_warn);
	cJSON_Delete(doc);
	sbuf_release(&sb);
	return rc;
}
