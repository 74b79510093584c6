/* SPDX-License-Identifier: MIT */
/* import: read the output of nccl-tests and nvbandwidth into measurements with
 * provenance, check it against itself, and add it to a `megatune.profile/1`
 * document (perfmodel/profile.h) for `megatune import`.
 *
 * nccl-tests: the text output of every layout the tool has printed (the
 * current one with `root` and `#wrong`, the older one with an `error` column
 * and no `root`, the oldest without `redop`; `-C` cputime, `-I` per-iteration
 * and `-S` timestamp columns), found through its header line, with mpirun
 * `--tag-output` prefixes removed wherever they occur, NCCL INFO/WARN lines,
 * ssh warnings and MPI banners ignored, several tests per file, truncated
 * pastes; and the JSON file written with `-J` (format versions 1 to 3).
 * nvbandwidth: the text output and the `-j` JSON output (v0.8; earlier
 * versions print the same matrices).
 *
 * Checks (docs/FORMATS.md, "megatune import"):
 *  - every row: busbw = algbw x factor(op, ranks) within the printed rounding
 *    (and the rank count is derived from that ratio when no device list says);
 *  - every test with a footer: the `Avg bus bandwidth` footer (the mean of
 *    every busbw, out-of-place and in-place, of every row, computed by
 *    nccl-tests before rounding) is reproduced: the interval of means allowed
 *    by the printed digits of each busbw (narrowed by size / time where the
 *    time is the GPU time) contains a value that prints as the footer;
 *  - nvbandwidth: each SUM line equals the sum of its matrix within rounding.
 *
 * The summaries of what was read (text, and the megatune.import/1 JSON) are
 * rendered here too, into a string buffer for the command to print.
 *
 * Library code: nothing here prints or exits.  Warnings are collected as
 * strings in the result for the command to print.  The implementation is in
 * the files of import/; import/internal.h says which holds what.
 */
#ifndef MT_IMPORT_H
#define MT_IMPORT_H

#include <cjson/cJSON.h>

#include "../lib/err.h"

struct sbuf;

enum mt_imp_tool { MT_IMP_NCCL_TESTS, MT_IMP_NVBANDWIDTH, MT_IMP_TOOL_N };

/* A printed number kept as printed ("321.10", "2e-07", "N/A"). */
#define MT_IMP_TOK 24
struct mt_imp_num {
	double v;            /* NAN when absent or "N/A" */
	char s[MT_IMP_TOK];  /* "" when the column is absent */
};

/* One half of a row: out-of-place (0) or in-place (1). */
struct mt_nt_half {
	int present;
	struct mt_imp_num time, algbw, busbw, wrong;  /* wrong: #wrong, or error */
	struct mt_imp_num i_min, i_max, i_p99, i_cv;  /* -I per-iteration columns */
};

struct mt_nt_row {
	int line;                 /* 1-based line in the file (0: JSON input) */
	struct mt_imp_num size, count;
	char type[16], redop[16]; /* "" when the layout has no such column */
	int has_root, root;
	struct mt_nt_half h[2];
	char timestamp[32];       /* -S, "" otherwise */
};

enum mt_nt_layout {
	MT_NT_CURRENT,   /* size count type redop root time algbw busbw #wrong ... */
	MT_NT_OLD,       /* no root; `error` instead of `#wrong` */
	MT_NT_VERY_OLD,  /* no redop either */
	MT_NT_JSON,      /* the -J file */
};

struct mt_nt_test {
	char name[64];        /* "all_reduce_perf"; "" when the log never says */
	int op;               /* enum mt_coll; -1 unknown, -2 not a profile collective */
	char op_from[48];     /* how the op was found ("test header", "columns", ...) */
	int layout;
	char columns[320];    /* the header's column names, space separated */
	int cputime;          /* -C: the time columns are CPU time */
	int time_ms;          /* nccl-tests 1.x printed milliseconds */
	int per_iter, timestamps;
	int line;             /* first line of the test */
	int header_line;      /* 0: no header (columns guessed) */

	int nthread, ngpus;   /* from "# nThread N nGpus M" (0: not printed) */
	int ndev;             /* "#  Rank ..." device lines */
	int ranks;            /* 0 unknown */
	char ranks_from[48];
	int hosts;            /* distinct hosts; 0 unknown */
	int per_node;         /* ranks on the busiest host; 0 unknown */
	int uneven_hosts;     /* hosts hold different numbers of ranks */
	char gpu[96];         /* the first device's name */
	int mixed_gpus;

	char nt_version[24];  /* nccl-tests "2.17.8" */
	char nccl[24];        /* NCCL "2.29.2" */
	char cuda[16];        /* "12.8" from "NCCL version 2.26.6+cuda12.8" */

	struct mt_nt_row *rows;
	int nrows, caprows;

	int has_oob, oob, oob_ok;
	int has_avg, avg_line;
	struct mt_imp_num avg;   /* the footer as printed */
	int concluded;

	/* checks, filled when parsing ends */
	int nvals;               /* busbw values averaged */
	double mean_printed;     /* mean of the printed busbw values */
	double mean_est;         /* mean of the best estimates of each value */
	double mean_lo, mean_hi; /* the means the printed digits allow */
	int footer_ok;           /* -1 no footer, 0 not reproduced, 1 reproduced */
	int footer_exact;        /* mean_est prints exactly as the footer */
	int rows_checked, rows_bad, bad_line;
	double bad_busbw, bad_expect;
	int wrong_rows;          /* rows with wrong elements reported */
	double peak_oop, peak_ip;

	/* filled by mt_import_build() */
	int span;                /* enum mt_span; -1: not imported */
	int curve_per_node;
	int npoints, nskipped;
	char replaced[64];       /* "base profile" or the source id of an earlier file */
};

/* One nvbandwidth matrix (one test, or one of several a test prints). */
struct mt_nvb_test {
	char name[96];           /* the test key ("host_to_device_memcpy_ce") */
	char desc[160];          /* "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)" */
	char status[24];         /* "Passed", "Waived", "Error: ..." */
	int line;
	int nrows, ncols;
	double *v;               /* nrows x ncols, NAN for N/A */
	int has_sum;
	struct mt_imp_num sum;
	double sum_values;       /* the sum recomputed */
	double sum_half;         /* the rounding the printed values allow, summed */
	int sum_ok;              /* -1 no SUM line, 0 differs, 1 agrees */

	/* filled by mt_import_build() */
	char direction[16];      /* "h2d", "d2h", "bidirectional"; "" not imported */
	double gbps;             /* median over GPUs */
	int used;                /* the value written to the profile */
};

struct mt_import {
	int tool;
	int json;                 /* the input was a JSON file */
	char path[512];
	char base_name[256];      /* the file's base name, for citations */

	/* nccl-tests */
	struct mt_nt_test *nt;
	int nnt;
	int json_version;         /* -J format version */

	/* nvbandwidth */
	char nvb_version[24], nvb_git[48], driver[48], cuda_runtime[24], host[128];
	char (*gpu)[96];          /* device names by index */
	int ngpu;
	struct mt_nvb_test *nvb;
	int nnvb;

	/* filled by mt_import_build() */
	char source_id[48];
	char citation[512];

	char **warn;
	int nwarn;
};

struct mt_import_opts {
	int op;      /* enum mt_coll for tests the log does not name; -1: infer */
	int ranks;   /* the rank count where the log does not give it; 0: infer */
	int strict;  /* a failed consistency check is an error */
};

/* Parse `len` bytes of `text`, the contents of `path` (used in messages).
 * On success *out is owned by the caller (mt_import_free).  Errors name the
 * file, the line and what was expected; with o->strict a failed check returns
 * MT_EINFEASIBLE (exit status 1). */
int mt_import_parse(int tool, const char *path, const char *text, size_t len,
		    const struct mt_import_opts *o, struct mt_import **out, struct mt_error *err);
/* The same for a file (at most 512 MiB). */
int mt_import_file(int tool, const char *path, const struct mt_import_opts *o,
		   struct mt_import **out, struct mt_error *err);
void mt_import_free(struct mt_import *im);

const char *mt_import_tool_name(int tool);
int mt_import_tool_parse(const char *s);
const char *mt_nt_layout_name(int layout);

/* The bundled profile for a GPU name ("NVIDIA H100 80GB HBM3" -> "dgx-h100"),
 * or NULL. */
const char *mt_import_base_for_gpu(const char *gpu);
/* The GPU the imports ran on (the first named one), or NULL. */
const char *mt_import_gpu(struct mt_import *const *ims, int n);

struct mt_import_build_opts {
	int span;    /* enum mt_span for every curve; -1: by hosts and NVLink domain */
};

/* Add the measurements of `n` parsed files to the profile `doc` (from
 * mt_profile_new): one source per file, a collective curve per nccl-tests
 * test, offload records and outliers from nvbandwidth, software versions.
 * The decisions taken are stored back into the tests and matrices; warnings
 * go to each file's list, those about the whole import to `warn`.  Returns
 * an error when nothing could be imported. */
int mt_import_build(cJSON *doc, struct mt_import *const *ims, int n,
		    const struct mt_import_build_opts *o, char ***warn, int *nwarn,
		    struct mt_error *err);

/* What `megatune import` did with the files, for its summaries. */
struct mt_import_summary {
	const char *base;     /* the profile the measurements went into; NULL: none built */
	const char *name;     /* the profile's name (with base) */
	const char *written;  /* its file, "-" standard output; NULL: not written */
	char **warn;          /* warnings about the whole import (mt_import_build) */
	int nwarn;
};

/* Append the text summary of the `n` files read with `tool` to sb: per file
 * a line naming the tool and versions and a table of its tests or matrices
 * and their checks, then what was written. */
void mt_import_summary_text(struct sbuf *sb, struct mt_import *const *ims, int n, int tool,
			    const struct mt_import_summary *s);
/* Append the `megatune.import/1` document (docs/FORMATS.md) of the same to sb,
 * ending with a newline: every row as printed, the checks, the decisions. */
void mt_import_summary_json(struct sbuf *sb, struct mt_import *const *ims, int n, int tool,
			    const struct mt_import_summary *s);

/* Percentage below the median at which a GPU is reported as an outlier. */
#define MT_IMPORT_OUTLIER_PCT 10.0

#endif
