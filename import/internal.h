/* SPDX-License-Identifier: MIT */
/* import/internal.h: what the readers of import/ share, and nothing outside
 * import/ includes.
 *
 *  - lex.c: warnings, the white-space tokenizer, printed numbers ("321.10",
 *    "N/A") and their rounding, NCCL version strings, nccl-tests binary names,
 *    the type errors and string fields of the JSON readers; the small string
 *    helpers are inline here;
 *  - parsed.c: the result (struct mt_import) and its tests and rows, which
 *    the readers fill;
 *  - import.c: the entry points that choose a reader;
 *  - nccl_tests.c (text) and nccl_tests_json.c (-J) fill the tests through
 *    the reader state `struct ntp`; nccl_checks.c decides each test's
 *    collective and ranks and runs the checks of import.h;
 *  - nvbandwidth.c (text and -j JSON);
 *  - build.c adds parsed files to a profile; summary.c renders them.
 *
 * Allocation failures return NULL or MT_ENOMEM; nothing prints or exits. */
#ifndef MT_IMPORT_INTERNAL_H
#define MT_IMPORT_INTERNAL_H

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../lib/jsonr.h"
#include "import.h"

/* ------------------------------------------------------------------ */
/* small helpers */

static inline void copy(char *dst, size_t cap, const char *src, size_t len)
{
	if (!cap)
		return;
	if (len >= cap)
		len = cap - 1;
	memcpy(dst, src, len);
	dst[len] = 0;
}

static inline void copys(char *dst, size_t cap, const char *src)
{
	copy(dst, cap, src, strlen(src));
}

/* atoi without its undefined overflow: clamped to +-1e9 */
static inline int toint(const char *s)
{
	long v = strtol(s, NULL, 10);

	return v > 1000000000L ? 1000000000 : v < -1000000000L ? -1000000000 : (int)v;
}

/* a double as an int, clamped; NaN gives 0 */
static inline int dtoi(double v)
{
	return v != v ? 0 : v > 1e9 ? 1000000000 : v < -1e9 ? -1000000000 : (int)v;
}

static inline const char *skipws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static inline int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Trim trailing white space in place. */
static inline void rtrim(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
}

#define MAXTOK 256
struct toks {
	int n;               /* MAXTOK + 1: more than MAXTOK tokens */
	const char *p[MAXTOK];
	int len[MAXTOK];
};

static inline int tok_is(const struct toks *t, int i, const char *s)
{
	return i < t->n && i < MAXTOK && t->len[i] == (int)strlen(s) &&
	       !memcmp(t->p[i], s, (size_t)t->len[i]);
}

static inline void tok_copy(char *dst, size_t cap, const struct toks *t, int i)
{
	copy(dst, cap, t->p[i], (size_t)t->len[i]);
}

static inline const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* Append a formatted warning to the list *w of *n (at most 10,000; a failed
 * allocation drops it). */
void imp_vwarn(char ***w, int *n, const char *fmt, va_list ap);
void __attribute__((format(printf, 2, 3)))
imp_warnf(struct mt_import *im, const char *fmt, ...);

/* Call fn(state, line) for each line of text (without its newline, in a
 * buffer fn may change), counting them in *lineno first; stops at the first
 * non-zero return, which it returns (MT_ENOMEM with the message in err when
 * a line cannot be copied). */
int imp_each_line(struct mt_import *im, const char *text, size_t len, int *lineno,
		  int (*fn)(void *state, char *line), void *state, struct mt_error *err);
/* Split s at white space into t (t->n = MAXTOK + 1: too many tokens). */
void imp_tokenize(const char *s, struct toks *t);
/* Blank out mpirun --tag-output prefixes ("[1,0]<stdout>:") wherever they
 * are and a leading srun --label ("0: "), keeping the other characters where
 * they were; 1 when an mpirun prefix was found. */
int imp_strip_tags(char *s);
/* 1 to 20 decimal digits and nothing else. */
int imp_all_digits(const char *p, int len);
/* 0: a number; 1: "N/A" (v = NAN); -1: neither. */
int imp_parse_num(const char *p, int len, struct mt_imp_num *out);
/* Half a unit of the last printed digit of s ("321.10" -> 0.005). */
double imp_half_unit(const char *s);
/* Set n to v printed with fmt ("N/A" when not finite). */
void imp_num_set(struct mt_imp_num *n, double v, const char *fmt);
/* NCCL_VERSION_CODE -> "2.29.2" ("" when out of range). */
void imp_nccl_code(int code, char *out, size_t cap);
/* "2.26.6+cuda12.8 ..." -> "2.26.6" and "12.8" (left as they were when absent). */
void imp_nccl_version_text(const char *s, char *nccl, size_t ncap, char *cuda, size_t ccap);
/* "all_reduce_perf" -> MT_COLL_ALL_REDUCE; -2 a test with no profile curve;
 * -1 not a test name. */
int imp_op_of_test(const char *name);
/* "path: field 'where': expected what, got <type>" (MT_EINVAL). */
int imp_jtype_error(struct mt_error *err, const char *path, const char *where,
		    const char *what, const cJSON *v);
/* Copy the string field key of o into out; 0 when it is not a string. */
int imp_jstring(const cJSON *o, const char *key, char *out, size_t cap);

/* ------------------------------------------------------------------ */
/* results (parsed.c) */

struct mt_import *imp_new(int tool, const char *path);
/* A new test (op unknown, no footer) or row; NULL when out of memory or past
 * the limits (4,096 tests, 4M rows). */
struct mt_nt_test *imp_new_test(struct mt_import *im, int line);
struct mt_nt_row *imp_new_row(struct mt_nt_test *t);

/* ------------------------------------------------------------------ */
/* nccl-tests readers */

/* What a command line naming an nccl-tests binary says. */
struct cmdinfo {
	char name[64];
	int np, g, t, ppn, mpi, seen;
};

#define MAXCOLS 48
struct colmap {
	int n;
	int col[MAXCOLS];
	int half[MAXCOLS];
	int has_ts;
	char name[MAXCOLS][16];
};

struct ntp {
	struct mt_import *im;
	const struct mt_import_opts *o;
	struct mt_error *err;
	int cur;                /* index of the current test, -1 none */
	struct colmap map;
	int have_map, open;     /* a header seen for the current test; rows may follow */
	int guessed;
	/* hosts of the current test */
	char (*hosts)[128];
	int *host_ranks;
	int nhosts, caphosts, max_rank;
	/* file-wide */
	char info_nccl[24], info_cuda[16];
	struct cmdinfo cmd;     /* the last command line seen */
	struct cmdinfo *tcmd;   /* the one each test started under */
	int ntcmd;
	int mpi_tags;
	int nvb_lines;
	int lineno;
};

/* Count a rank on host (the first len bytes) for the current test. */
int imp_nt_add_host(struct ntp *s, const char *host, size_t len);
/* The current test's hosts and ranks per node from the hosts counted. */
void imp_nt_close_hosts(struct ntp *s);
/* Decide what test t measured and over how many ranks, then check it. */
int imp_nt_finish_test(struct ntp *s, struct mt_nt_test *t);
/* Warn about each failed check; MT_EINFEASIBLE for the first under strict. */
int imp_nt_report_checks(struct mt_import *im, const struct mt_import_opts *o,
			 struct mt_error *err);

int imp_parse_nt_text(struct mt_import *im, const char *text, size_t len,
		      const struct mt_import_opts *o, struct mt_error *err);
int imp_parse_nt_json(struct mt_import *im, const cJSON *root, const struct mt_import_opts *o,
		      struct mt_error *err);

/* ------------------------------------------------------------------ */
/* nvbandwidth readers */

int imp_parse_nvb_text(struct mt_import *im, const char *text, size_t len,
		       const struct mt_import_opts *o, struct mt_error *err);
int imp_parse_nvb_json(struct mt_import *im, const cJSON *root, const struct mt_import_opts *o,
		       struct mt_error *err);

#endif
