/* SPDX-License-Identifier: MIT */
/* import: nccl-tests and nvbandwidth output into profile measurements.
 * The formats are described in docs/FORMATS.md ("megatune import"); what each
 * check means is in import.h. */
#include "import.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../lib/jsonr.h"
#include "../lib/sbuf.h"
#include "../tuner/cluster.h"
#include "../tuner/profile.h"

#define MAX_FILE_BYTES (512u << 20)

/* ------------------------------------------------------------------ */
/* small helpers */

static void vwarn(char ***w, int *n, const char *fmt, va_list ap)
{
	char buf[1024], *s, **a;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (*n >= 10000)
		return;
	s = strdup(buf);
	a = realloc(*w, (size_t)(*n + 1) * sizeof(*a));
	if (!s || !a) {
		free(s);
		if (a)
			*w = a;
		return;
	}
	a[(*n)++] = s;
	*w = a;
}

static void __attribute__((format(printf, 2, 3))) warnf(struct mt_import *im, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(&im->warn, &im->nwarn, fmt, ap);
	va_end(ap);
}

static void copy(char *dst, size_t cap, const char *src, size_t len)
{
	if (!cap)
		return;
	if (len >= cap)
		len = cap - 1;
	memcpy(dst, src, len);
	dst[len] = 0;
}

static void copys(char *dst, size_t cap, const char *src)
{
	copy(dst, cap, src, strlen(src));
}

/* atoi without its undefined overflow: clamped to +-1e9 */
static int toint(const char *s)
{
	long v = strtol(s, NULL, 10);

	return v > 1000000000L ? 1000000000 : v < -1000000000L ? -1000000000 : (int)v;
}

/* a double as an int, clamped; NaN gives 0 */
static int dtoi(double v)
{
	return v != v ? 0 : v > 1e9 ? 1000000000 : v < -1e9 ? -1000000000 : (int)v;
}

static const char *skipws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Trim trailing white space in place. */
static void rtrim(char *s)
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

static void tokenize(const char *s, struct toks *t)
{
	t->n = 0;
	for (;;) {
		while (*s && isspace((unsigned char)*s))
			s++;
		if (!*s)
			return;
		if (t->n == MAXTOK) {
			t->n = MAXTOK + 1;
			return;
		}
		t->p[t->n] = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		t->len[t->n] = (int)(s - t->p[t->n]);
		t->n++;
	}
}

static int tok_is(const struct toks *t, int i, const char *s)
{
	return i < t->n && i < MAXTOK && t->len[i] == (int)strlen(s) && !memcmp(t->p[i], s, (size_t)t->len[i]);
}

static void tok_copy(char *dst, size_t cap, const struct toks *t, int i)
{
	copy(dst, cap, t->p[i], (size_t)t->len[i]);
}

/* A decimal number as the tools print them: [+-]digits[.digits][e[+-]digits]
 * (no hex, no inf or nan). */
static int number_syntax(const char *p, int len)
{
	int i = 0, digits = 0;

	if (i < len && (p[i] == '+' || p[i] == '-'))
		i++;
	while (i < len && isdigit((unsigned char)p[i]))
		i++, digits++;
	if (i < len && p[i] == '.') {
		i++;
		while (i < len && isdigit((unsigned char)p[i]))
			i++, digits++;
	}
	if (!digits)
		return 0;
	if (i < len && (p[i] == 'e' || p[i] == 'E')) {
		int ed = 0;
		i++;
		if (i < len && (p[i] == '+' || p[i] == '-'))
			i++;
		while (i < len && isdigit((unsigned char)p[i]))
			i++, ed++;
		if (!ed)
			return 0;
	}
	return i == len;
}

static int all_digits(const char *p, int len)
{
	int i;

	if (len <= 0 || len > 20)
		return 0;
	for (i = 0; i < len; i++)
		if (!isdigit((unsigned char)p[i]))
			return 0;
	return 1;
}

/* 0: a number; 1: "N/A" (v = NAN); -1: neither. */
static int parse_num(const char *p, int len, struct mt_imp_num *out)
{
	char buf[64];

	out->v = NAN;
	out->s[0] = 0;
	if (len == 3 && !memcmp(p, "N/A", 3)) {
		copys(out->s, sizeof(out->s), "N/A");
		return 1;
	}
	if (len <= 0 || len >= (int)sizeof(buf) || !number_syntax(p, len))
		return -1;
	memcpy(buf, p, (size_t)len);
	buf[len] = 0;
	out->v = strtod(buf, NULL);
	if (!isfinite(out->v))
		return -1;
	copy(out->s, sizeof(out->s), p, (size_t)len);
	return 0;
}

/* Half a unit of the last printed digit of s ("321.10" -> 0.005,
 * "2e-07" -> 5e-8, "12646" -> 0.5). */
static double half_unit(const char *s)
{
	const char *dot = NULL, *e = NULL, *p;
	int dec = 0, ex = 0;

	for (p = s; *p; p++) {
		if (*p == '.')
			dot = p;
		else if (*p == 'e' || *p == 'E') {
			e = p;
			break;
		}
	}
	if (dot)
		dec = (int)((e ? e : p) - dot - 1);
	if (e)
		ex = toint(e + 1);
	if (ex - dec < -300 || ex - dec > 300)
		return 0;
	return 0.5 * pow(10, ex - dec);
}

static void num_set(struct mt_imp_num *n, double v, const char *fmt)
{
	n->v = v;
	if (isfinite(v))
		snprintf(n->s, sizeof(n->s), fmt, v);
	else
		copys(n->s, sizeof(n->s), "N/A");
}

/* NCCL_VERSION_CODE: major*10000 + minor*100 + patch from 2.9 on, before
 * that major*1000 + minor*100 + patch. */
static void nccl_code(int code, char *out, size_t cap)
{
	if (code <= 0 || code > 999999) {
		out[0] = 0;
		return;
	}
	if (code >= 20900)
		snprintf(out, cap, "%d.%d.%d", code / 10000, code % 10000 / 100, code % 100);
	else
		snprintf(out, cap, "%d.%d.%d", code / 1000, code % 1000 / 100, code % 100);
}

/* "2.26.6+cuda12.8 ..." -> "2.26.6" and "12.8" */
static void nccl_version_text(const char *s, char *nccl, size_t ncap, char *cuda, size_t ccap)
{
	size_t n = 0;

	while (s[n] && (isdigit((unsigned char)s[n]) || s[n] == '.'))
		n++;
	while (n && s[n - 1] == '.')
		n--;
	if (!n)
		return;
	copy(nccl, ncap, s, n);
	if (starts(s + n, "+cuda")) {
		const char *c = s + n + 5;
		size_t m = 0;
		while (c[m] && (isdigit((unsigned char)c[m]) || c[m] == '.'))
			m++;
		while (m && c[m - 1] == '.')
			m--;
		if (m)
			copy(cuda, ccap, c, m);
	}
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* The collective an nccl-tests binary measures: "all_reduce_perf" ->
 * MT_COLL_ALL_REDUCE; -2 a test with no profile curve (reduce, gather, ...);
 * -1 not a test name. */
static int op_of_test(const char *name)
{
	static const struct {
		const char *test;
		int op;
	} map[] = {
		{ "all_reduce", MT_COLL_ALL_REDUCE }, { "all_gather", MT_COLL_ALL_GATHER },
		{ "reduce_scatter", MT_COLL_REDUCE_SCATTER }, { "alltoall", MT_COLL_ALL_TO_ALL },
		{ "sendrecv", MT_COLL_SEND_RECV }, { "broadcast", MT_COLL_BROADCAST },
		{ "reduce", -2 }, { "gather", -2 }, { "scatter", -2 }, { "hypercube", -2 },
		{ "alltoallv", -2 }, { "alltoallv2", -2 }, { "bisection", -2 },
		{ "all_reduce_group", -2 },
	};
	char buf[64];
	char *p;
	size_t i;

	copys(buf, sizeof(buf), base_name(name));
	p = strstr(buf, "_perf");
	if (!p)
		return -1;
	*p = 0;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(buf, map[i].test))
			return map[i].op;
	return -2;
}

/* The collectives a file name mentions, as a bit set. */
static unsigned ops_in_file_name(const char *path)
{
	static const struct {
		const char *s;
		int op;
	} pats[] = {
		{ "all_reduce", MT_COLL_ALL_REDUCE }, { "allreduce", MT_COLL_ALL_REDUCE },
		{ "all_gather", MT_COLL_ALL_GATHER }, { "allgather", MT_COLL_ALL_GATHER },
		{ "reduce_scatter", MT_COLL_REDUCE_SCATTER },
		{ "reducescatter", MT_COLL_REDUCE_SCATTER },
		{ "alltoall", MT_COLL_ALL_TO_ALL }, { "all_to_all", MT_COLL_ALL_TO_ALL },
		{ "a2a", MT_COLL_ALL_TO_ALL }, { "sendrecv", MT_COLL_SEND_RECV },
		{ "send_recv", MT_COLL_SEND_RECV }, { "broadcast", MT_COLL_BROADCAST },
		{ "bcast", MT_COLL_BROADCAST },
	};
	char buf[256];
	unsigned set = 0;
	size_t i;

	copys(buf, sizeof(buf), base_name(path));
	for (i = 0; buf[i]; i++)
		buf[i] = (char)tolower((unsigned char)buf[i]);
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (strstr(buf, pats[i].s))
			set |= 1u << pats[i].op;
	return set;
}

static int single_bit(unsigned set)
{
	int i, found = -1;

	for (i = 0; i < MT_COLL_N; i++)
		if (set & (1u << i)) {
			if (found >= 0)
				return -1;
			found = i;
		}
	return found;
}

static int is_reduction(const char *redop)
{
	return redop[0] && strcmp(redop, "none");
}

/* ------------------------------------------------------------------ */
/* results */

static struct mt_import *import_new(int tool, const char *path)
{
	struct mt_import *im = calloc(1, sizeof(*im));

	if (!im)
		return NULL;
	im->tool = tool;
	copys(im->path, sizeof(im->path), path);
	copys(im->base_name, sizeof(im->base_name), base_name(path));
	return im;
}

void mt_import_free(struct mt_import *im)
{
	int i;

	if (!im)
		return;
	for (i = 0; i < im->nnt; i++)
		free(im->nt[i].rows);
	free(im->nt);
	for (i = 0; i < im->nnvb; i++)
		free(im->nvb[i].v);
	free(im->nvb);
	free(im->gpu);
	for (i = 0; i < im->nwarn; i++)
		free(im->warn[i]);
	free(im->warn);
	free(im);
}

static const char *const tool_names[MT_IMP_TOOL_N] = { "nccl-tests", "nvbandwidth" };

const char *mt_import_tool_name(int tool)
{
	return tool >= 0 && tool < MT_IMP_TOOL_N ? tool_names[tool] : "?";
}

int mt_import_tool_parse(const char *s)
{
	int i;

	for (i = 0; i < MT_IMP_TOOL_N; i++)
		if (!strcmp(s, tool_names[i]))
			return i;
	return -1;
}

const char *mt_nt_layout_name(int layout)
{
	switch (layout) {
	case MT_NT_CURRENT: return "current";
	case MT_NT_OLD: return "old";
	case MT_NT_VERY_OLD: return "very old";
	case MT_NT_JSON: return "json";
	default: return "?";
	}
}

static struct mt_nt_test *new_test(struct mt_import *im, int line)
{
	struct mt_nt_test *a, *t;

	if (im->nnt >= 4096)
		return NULL;
	a = realloc(im->nt, (size_t)(im->nnt + 1) * sizeof(*a));
	if (!a)
		return NULL;
	im->nt = a;
	t = &a[im->nnt++];
	memset(t, 0, sizeof(*t));
	t->op = -1;
	t->line = line;
	t->footer_ok = -1;
	t->span = -1;
	t->avg.v = NAN;
	return t;
}

static struct mt_nt_row *new_row(struct mt_nt_test *t)
{
	struct mt_nt_row *r;

	if (t->nrows == t->caprows) {
		int cap = t->caprows ? 2 * t->caprows : 32;
		struct mt_nt_row *a;
		if (cap > (1 << 22))
			return NULL;
		a = realloc(t->rows, (size_t)cap * sizeof(*a));
		if (!a)
			return NULL;
		t->rows = a;
		t->caprows = cap;
	}
	r = &t->rows[t->nrows++];
	memset(r, 0, sizeof(*r));
	r->size.v = r->count.v = NAN;
	return r;
}

/* ------------------------------------------------------------------ */
/* nccl-tests text */

enum col {
	C_SIZE, C_COUNT, C_TYPE, C_REDOP, C_ROOT, C_TIME, C_ALGBW, C_BUSBW, C_WRONG,
	C_IMIN, C_IMAX, C_IP99, C_ICV, C_TS, C_SKIP
};

static const char *const col_desc[] = {
	"size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
	"i_min", "i_max", "i_p99", "i_cv%", "timestamp", "?"
};

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

static struct mt_nt_test *cur(struct ntp *s)
{
	return s->cur >= 0 ? &s->im->nt[s->cur] : NULL;
}

static int oom(struct ntp *s)
{
	return mt_error_set(s->err, MT_ENOMEM, "%s: out of memory", s->im->path);
}

static int has_content(const struct mt_nt_test *t)
{
	return t && (t->nrows > 0 || t->has_avg || t->has_oob);
}

static int start_test(struct ntp *s)
{
	struct mt_nt_test *t = new_test(s->im, s->lineno);

	if (!t)
		return oom(s);
	s->cur = s->im->nnt - 1;
	s->have_map = s->open = s->guessed = 0;
	s->nhosts = 0;
	s->max_rank = -1;
	if (s->im->nnt > s->ntcmd) {
		struct cmdinfo *c = realloc(s->tcmd, (size_t)s->im->nnt * sizeof(*c));
		if (!c)
			return oom(s);
		s->tcmd = c;
		s->ntcmd = s->im->nnt;
	}
	s->tcmd[s->cur] = s->cmd;
	if (s->cmd.seen && s->cmd.name[0] && !t->name[0]) {
		copys(t->name, sizeof(t->name), s->cmd.name);
		copys(t->op_from, sizeof(t->op_from), "command line");
	}
	return MT_OK;
}

/* Something that begins a test: start a new one when the current one has
 * results already. */
static int starting(struct ntp *s)
{
	if (s->cur < 0 || has_content(cur(s)))
		return start_test(s);
	return MT_OK;
}

static int add_host(struct ntp *s, const char *host, size_t len)
{
	int i;

	for (i = 0; i < s->nhosts; i++)
		if (strlen(s->hosts[i]) == len && !memcmp(s->hosts[i], host, len)) {
			s->host_ranks[i]++;
			return MT_OK;
		}
	if (s->nhosts == s->caphosts) {
		int cap = s->caphosts ? 2 * s->caphosts : 16;
		char (*h)[128];
		int *r;
		if (cap > (1 << 20))
			return MT_OK;
		h = realloc(s->hosts, (size_t)cap * sizeof(*h));
		if (!h)
			return oom(s);
		s->hosts = h;
		r = realloc(s->host_ranks, (size_t)cap * sizeof(*r));
		if (!r)
			return oom(s);
		s->host_ranks = r;
		s->caphosts = cap;
	}
	copy(s->hosts[s->nhosts], sizeof(s->hosts[0]), host, len);
	s->host_ranks[s->nhosts++] = 1;
	return MT_OK;
}

/* Record the hosts of the current test once its device list is complete. */
static void close_hosts(struct ntp *s)
{
	struct mt_nt_test *t = cur(s);
	int i, mx = 0;

	if (!t || !s->nhosts)
		return;
	t->hosts = s->nhosts;
	t->uneven_hosts = 0;
	for (i = 0; i < s->nhosts; i++) {
		if (s->host_ranks[i] > mx)
			mx = s->host_ranks[i];
		if (s->host_ranks[i] != s->host_ranks[0])
			t->uneven_hosts = 1;
	}
	t->per_node = mx;
}

/* "Rank  0 Group  0 Pid 6899 on host device  0 [0000:04:00] NVIDIA H100 80GB HBM3"
 * (older: no Group; oldest: no Pid either) */
static int device_line(struct ntp *s, const char *p)
{
	struct mt_nt_test *t;
	struct toks tk;
	const char *on, *dev, *br;
	int i, rank, rc;

	tokenize(p, &tk);
	if (tk.n < 5 || tk.n > MAXTOK || !tok_is(&tk, 0, "Rank") || !all_digits(tk.p[1], tk.len[1]))
		return MT_OK;
	if (s->cur >= 0 && has_content(cur(s)) && (rc = start_test(s)))
		return rc;
	if (s->cur < 0 && (rc = start_test(s)))
		return rc;
	t = cur(s);
	rank = toint(tk.p[1]);
	/* a second list for the same test (one that never ran, then its retry):
	 * the last one counts */
	if (rank == 0 && t->ndev) {
		t->ndev = 0;
		t->hosts = t->per_node = t->uneven_hosts = t->mixed_gpus = 0;
		t->gpu[0] = 0;
		s->nhosts = 0;
		s->max_rank = -1;
	}
	t->ndev++;
	if (rank > s->max_rank)
		s->max_rank = rank;
	for (i = 2; i + 1 < tk.n; i++)
		if (tok_is(&tk, i, "on"))
			break;
	if (i + 1 < tk.n) {
		if ((rc = add_host(s, tk.p[i + 1], (size_t)tk.len[i + 1])))
			return rc;
		on = tk.p[i + 1] + tk.len[i + 1];
		dev = strstr(on, "device");
		br = dev ? strchr(dev, ']') : NULL;
		if (br) {
			char name[96];
			copys(name, sizeof(name), skipws(br + 1));
			rtrim(name);
			if (!t->gpu[0])
				copys(t->gpu, sizeof(t->gpu), name);
			else if (name[0] && strcmp(name, t->gpu))
				t->mixed_gpus = 1;
		}
	}
	close_hosts(s);
	if (s->max_rank + 1 > t->ndev && s->max_rank < (1 << 24))
		t->ranks = s->max_rank + 1;
	else
		t->ranks = t->ndev;
	copys(t->ranks_from, sizeof(t->ranks_from), "device list");
	return MT_OK;
}

static int header_col(const char *p, int len)
{
	static const struct {
		const char *name;
		int col;
	} names[] = {
		{ "size", C_SIZE }, { "bytes", C_SIZE }, { "count", C_COUNT }, { "N", C_COUNT },
		{ "type", C_TYPE }, { "redop", C_REDOP }, { "op", C_REDOP }, { "root", C_ROOT },
		{ "time", C_TIME }, { "cputime", C_TIME }, { "algbw", C_ALGBW },
		{ "busbw", C_BUSBW }, { "#wrong", C_WRONG }, { "wrong", C_WRONG },
		{ "error", C_WRONG }, { "res", C_WRONG }, { "i_min", C_IMIN }, { "i_max", C_IMAX },
		{ "i_p99", C_IP99 }, { "i_cv%", C_ICV }, { "timestamp", C_TS },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((int)strlen(names[i].name) == len && !memcmp(p, names[i].name, (size_t)len))
			return names[i].col;
	return C_SKIP;
}

static int build_map(struct ntp *s, const struct toks *tk, int from, struct colmap *m)
{
	struct mt_nt_test *t = cur(s);
	int i, half = 0, times = 0, unknown = 0, has_root = 0, has_redop = 0;

	memset(m, 0, sizeof(*m));
	t->columns[0] = 0;
	t->cputime = t->per_iter = t->timestamps = t->time_ms = 0;
	for (i = from; i < tk->n && i < MAXTOK && m->n < MAXCOLS; i++) {
		int c = header_col(tk->p[i], tk->len[i]);
		if (c == C_TIME) {
			if (times++ == 1)
				half = 1;
			if (tk->len[i] == 7)
				t->cputime = 1;
		}
		if (c == C_TS)
			m->has_ts = 1;
		if (c >= C_IMIN && c <= C_ICV)
			t->per_iter = 1;
		if (c == C_ROOT)
			has_root = 1;
		if (c == C_REDOP)
			has_redop = 1;
		if (c == C_SKIP)
			unknown++;
		m->col[m->n] = c;
		m->half[m->n] = half;
		tok_copy(m->name[m->n], sizeof(m->name[0]), tk, i);
		m->n++;
		if (strlen(t->columns) + (size_t)tk->len[i] + 2 < sizeof(t->columns)) {
			if (t->columns[0])
				strcat(t->columns, " ");
			strncat(t->columns, tk->p[i], (size_t)tk->len[i]);
		}
	}
	t->timestamps = m->has_ts;
	t->layout = has_root && has_redop ? MT_NT_CURRENT : has_redop ? MT_NT_OLD : MT_NT_VERY_OLD;
	/* nccl-tests 1.x headed its table "bytes N type op" and printed ms */
	t->time_ms = tok_is(tk, from, "bytes");
	if (unknown)
		warnf(s->im, "%s:%d: %d column%s of the table header not known to megatune (%s); "
		      "%s ignored", s->im->path, s->lineno, unknown, unknown > 1 ? "s" : "",
		      t->columns, unknown > 1 ? "they are" : "it is");
	return MT_OK;
}

/* Guess the columns of a table printed without its header (a truncated
 * paste): size count type [redop] [root] then the two halves. */
static int guess_map(struct ntp *s, const struct toks *tk)
{
	struct mt_nt_test *t = cur(s);
	struct colmap *m = &s->map;
	int extra = tk->n - 11, i, n = 0, h;
	int cols[] = { C_TIME, C_ALGBW, C_BUSBW, C_WRONG };

	if (extra < 0 || extra > 2)
		return 0;
	memset(m, 0, sizeof(*m));
	m->col[n++] = C_SIZE;
	m->col[n++] = C_COUNT;
	m->col[n++] = C_TYPE;
	if (extra == 2) {
		m->col[n++] = C_REDOP;
		m->col[n++] = C_ROOT;
	} else if (extra == 1) {
		struct mt_imp_num x;
		m->col[n++] = parse_num(tk->p[3], tk->len[3], &x) == 0 ? C_ROOT : C_REDOP;
	}
	for (h = 0; h < 2; h++)
		for (i = 0; i < 4; i++) {
			m->half[n] = h;
			m->col[n++] = cols[i];
		}
	m->n = n;
	t->columns[0] = 0;
	for (i = 0; i < n; i++) {
		copys(m->name[i], sizeof(m->name[0]), col_desc[m->col[i]]);
		if (t->columns[0])
			strcat(t->columns, " ");
		strcat(t->columns, m->name[i]);
	}
	t->layout = extra == 2 ? MT_NT_CURRENT : extra == 1 && m->col[3] == C_REDOP ? MT_NT_OLD
									 : MT_NT_VERY_OLD;
	s->guessed = 1;
	warnf(s->im, "%s:%d: a table without its header line: the columns are taken to be "
	      "'%s' (%d columns)", s->im->path, s->lineno, t->columns, tk->n);
	return 1;
}

static int row_error(struct ntp *s, const char *what, const char *col, const char *got, int glen)
{
	return mt_error_set(s->err, MT_EPARSE, "%s:%d: column '%s' of the result row: expected %s, "
			    "got '%.*s'", s->im->path, s->lineno, col, what, glen > 40 ? 40 : glen, got);
}

static int data_row(struct ntp *s, const struct toks *tk)
{
	struct mt_nt_test *t = cur(s);
	const struct colmap *m = &s->map;
	struct mt_nt_row *r;
	int want = m->n + (m->has_ts ? 1 : 0), i, k = 0;

	if (tk->n != want) {
		if (tk->n > MAXTOK)
			return mt_error_set(s->err, MT_EPARSE, "%s:%d: a result row with more than %d "
					    "columns; the table header has %d (%s)", s->im->path,
					    s->lineno, MAXTOK, m->n, t->columns);
		return mt_error_set(s->err, MT_EPARSE, "%s:%d: a result row of %d column%s; the table "
				    "header (line %d) has %d%s: %s", s->im->path, s->lineno, tk->n,
				    tk->n == 1 ? "" : "s", t->header_line, want,
				    m->has_ts ? " (the timestamp counts two)" : "", t->columns);
	}
	if (!(r = new_row(t)))
		return oom(s);
	r->line = s->lineno;
	for (i = 0; i < m->n; i++, k++) {
		const char *p = tk->p[k];
		int len = tk->len[k], h = m->half[i];
		struct mt_nt_half *hf = &r->h[h];
		struct mt_imp_num *dst = NULL;
		int pr;
		char colname[40];

		snprintf(colname, sizeof(colname), "%s%s", m->name[i],
			 m->col[i] >= C_TIME && m->col[i] <= C_ICV ? (h ? " (in-place)" : " (out-of-place)") : "");
		switch (m->col[i]) {
		case C_SIZE:
		case C_COUNT:
			dst = m->col[i] == C_SIZE ? &r->size : &r->count;
			if (!all_digits(p, len))
				return row_error(s, "a whole number", colname, p, len);
			parse_num(p, len, dst);
			break;
		case C_TYPE:
			copy(r->type, sizeof(r->type), p, (size_t)len);
			break;
		case C_REDOP:
			copy(r->redop, sizeof(r->redop), p, (size_t)len);
			break;
		case C_ROOT: {
			struct mt_imp_num x;
			if (parse_num(p, len, &x) || x.v != floor(x.v) || x.v < -1 || x.v > 1e9)
				return row_error(s, "a root rank (-1 when none)", colname, p, len);
			r->has_root = 1;
			r->root = (int)x.v;
			break;
		}
		case C_TS:
			if (k + 1 < tk->n)
				snprintf(r->timestamp, sizeof(r->timestamp), "%.*s %.*s",
					 len > 12 ? 12 : len, p, tk->len[k + 1] > 12 ? 12 : tk->len[k + 1],
					 tk->p[k + 1]);
			k++;
			break;
		case C_TIME: dst = &hf->time; break;
		case C_ALGBW: dst = &hf->algbw; break;
		case C_BUSBW: dst = &hf->busbw; break;
		case C_WRONG: dst = &hf->wrong; break;
		case C_IMIN: dst = &hf->i_min; break;
		case C_IMAX: dst = &hf->i_max; break;
		case C_IP99: dst = &hf->i_p99; break;
		case C_ICV: dst = &hf->i_cv; break;
		default:
			break;
		}
		if (dst && m->col[i] >= C_TIME) {
			hf->present = 1;
			pr = parse_num(p, len, dst);
			/* N/A only where nccl-tests prints it: the correctness column */
			if (pr < 0 || (pr == 1 && m->col[i] != C_WRONG))
				return row_error(s, m->col[i] == C_WRONG ? "a number or N/A" : "a number",
						 colname, p, len);
			if (dst->v < 0 && m->col[i] != C_WRONG)
				return row_error(s, "a number that is not negative", colname, p, len);
		}
	}
	return MT_OK;
}

/* "all_reduce_perf", "./build/sendrecv_perf_mpi" */
static int is_test_binary(const char *path)
{
	const char *b = base_name(path), *p = strstr(b, "_perf");

	return p && p > b && (!strcmp(p, "_perf") || !strcmp(p, "_perf_mpi"));
}

/* The value of option token i: after '=' in it (val), else the next token
 * when that is a whole number; 0 when neither. */
static int opt_value(const char *val, const struct toks *tk, int i)
{
	if (val)
		return toint(val);
	if (i + 1 < tk->n && i + 1 < MAXTOK && all_digits(tk->p[i + 1], tk->len[i + 1]))
		return toint(tk->p[i + 1]);
	return 0;
}

/* A command line naming an nccl-tests binary: the test name and the rank
 * count it implies (mpirun -np / srun -n, processes per node, -g, -t). */
static void command_line(struct ntp *s, const struct toks *tk)
{
	int i, perf = -1, np = 0, g = 0, th = 0, ppn = 0, mpi = 0;

	for (i = 0; i < tk->n && i < MAXTOK && perf < 0; i++) {
		char name[256];
		tok_copy(name, sizeof(name), tk, i);
		if (is_test_binary(name))
			perf = i;
	}
	if (perf < 0)
		return;
	for (i = 0; i < tk->n && i < MAXTOK; i++) {
		char a[64], *v;
		const char *b;
		tok_copy(a, sizeof(a), tk, i);
		b = base_name(a);
		if ((v = strchr(a, '=')))
			*v++ = 0;
		if (i < perf) {
			if (!strcmp(b, "mpirun") || !strcmp(b, "mpiexec") || !strcmp(b, "srun") ||
			    !strcmp(b, "orterun"))
				mpi = 1;
			else if (!strcmp(a, "-np") || !strcmp(a, "--np") || !strcmp(a, "-n") ||
				 !strcmp(a, "--ntasks"))
				np = opt_value(v, tk, i);
			else if (!strcmp(a, "-npernode") || !strcmp(a, "--npernode") ||
				 !strcmp(a, "-ppn") || !strcmp(a, "--ntasks-per-node"))
				ppn = opt_value(v, tk, i);
			else if (!strcmp(a, "--map-by") && i + 1 < tk->n && i + 1 < MAXTOK) {
				char mb[64];
				tok_copy(mb, sizeof(mb), tk, i + 1);
				if (starts(mb, "ppr:"))
					ppn = toint(mb + 4);
			}
		} else if (i > perf) {
			if (!strcmp(a, "-g") || !strcmp(a, "--ngpus"))
				g = opt_value(v, tk, i);
			else if (!strcmp(a, "-t") || !strcmp(a, "--nthreads"))
				th = opt_value(v, tk, i);
			else if (starts(a, "-g") && all_digits(a + 2, (int)strlen(a + 2)))
				g = toint(a + 2);
			else if (starts(a, "-t") && all_digits(a + 2, (int)strlen(a + 2)))
				th = toint(a + 2);
		}
	}
	{
		char name[256];
		tok_copy(name, sizeof(name), tk, perf);
		copys(s->cmd.name, sizeof(s->cmd.name), base_name(name));
	}
	s->cmd.np = np > 0 && np < (1 << 20) ? np : 0;
	s->cmd.g = g > 0 && g < 4096 ? g : 0;
	s->cmd.t = th > 0 && th < 4096 ? th : 0;
	s->cmd.ppn = ppn > 0 && ppn < 4096 ? ppn : 0;
	s->cmd.mpi = mpi;
	s->cmd.seen = 1;
	/* a command line after a finished test begins the next one */
	if (s->cur >= 0 && has_content(cur(s)))
		s->cur = -1;
	{
		struct mt_nt_test *t = cur(s);
		if (t && s->cur < s->ntcmd)
			s->tcmd[s->cur] = s->cmd;
		if (t && !t->name[0]) {
			copys(t->name, sizeof(t->name), s->cmd.name);
			copys(t->op_from, sizeof(t->op_from), "command line");
		}
	}
}

/* Remove mpirun --tag-output prefixes ("[1,0]<stdout>:"), wherever they are,
 * and a leading srun --label ("0: "), keeping the other characters where
 * they were. */
static int strip_tags(char *s)
{
	char *q = s;
	int found = 0;

	while ((q = strchr(q, '['))) {
		char *r = q + 1;
		int d1 = 0, d2 = 0;
		while (isdigit((unsigned char)*r))
			r++, d1++;
		if (d1 && *r == ',') {
			r++;
			while (isdigit((unsigned char)*r))
				r++, d2++;
		}
		if (d1 && d2 && r[0] == ']' && r[1] == '<') {
			char *gt = strchr(r + 2, '>');
			if (gt && gt - r < 12 && gt[1] == ':') {
				memset(q, ' ', (size_t)(gt + 2 - q));
				q = gt + 2;
				found = 1;
				continue;
			}
		}
		q++;
	}
	{
		char *p = s;
		while (*p == ' ' || *p == '\t')
			p++;
		if (isdigit((unsigned char)*p)) {
			char *r = p;
			while (isdigit((unsigned char)*r))
				r++;
			if (r[0] == ':' && r[1] == ' ' && r - p <= 6)
				memset(s, ' ', (size_t)(r + 1 - s));
		}
	}
	return found;
}

static int footer_line(struct ntp *s, const char *p)
{
	struct mt_nt_test *t = cur(s);
	const char *colon = strchr(p, ':');
	struct toks tk;
	struct mt_imp_num x;

	if (!t)
		return MT_OK;
	if (!colon)
		return MT_OK;
	tokenize(colon + 1, &tk);
	if (starts(p, "Out of bounds values")) {
		if (tk.n >= 1 && tk.n <= MAXTOK && all_digits(tk.p[0], tk.len[0])) {
			t->has_oob = 1;
			t->oob = toint(tk.p[0]);
			t->oob_ok = tk.n < 2 || tok_is(&tk, 1, "OK");
		}
		return MT_OK;
	}
	if (tk.n < 1 || tk.n > MAXTOK || parse_num(tk.p[0], tk.len[0], &x))
		return mt_error_set(s->err, MT_EPARSE, "%s:%d: 'Avg bus bandwidth': expected a number "
				    "of GB/s after the colon, got '%.*s'", s->im->path, s->lineno,
				    tk.n >= 1 && tk.n <= MAXTOK ? (tk.len[0] > 40 ? 40 : tk.len[0]) : 0,
				    tk.n >= 1 && tk.n <= MAXTOK ? tk.p[0] : "");
	t->has_avg = 1;
	t->avg_line = s->lineno;
	t->avg = x;
	s->open = 0;
	return MT_OK;
}

static int comment(struct ntp *s, const char *p)
{
	struct mt_nt_test *t;
	struct toks tk;
	int rc;

	p = skipws(p);
	if (starts(p, "nccl-tests version")) {
		const char *lib = strstr(p, "nccl-library=");
		t = cur(s);
		if ((s->cur < 0 || has_content(t) || t->name[0]) && (rc = start_test(s)))
			return rc;
		t = cur(s);
		tokenize(p + 18, &tk);
		if (tk.n >= 1 && tk.n <= MAXTOK)
			tok_copy(t->nt_version, sizeof(t->nt_version), &tk, 0);
		if (lib)
			nccl_code(toint(lib + 13), t->nccl, sizeof(t->nccl));
		return MT_OK;
	}
	if (starts(p, "Collective test starting:")) {
		tokenize(p + 25, &tk);
		t = cur(s);
		/* the version line just before belongs to this test */
		if ((s->cur < 0 || has_content(t) || t->name[0]) && (rc = start_test(s)))
			return rc;
		t = cur(s);
		if (tk.n >= 1 && tk.n <= MAXTOK) {
			tok_copy(t->name, sizeof(t->name), &tk, 0);
			copys(t->op_from, sizeof(t->op_from), "test header");
		}
		return MT_OK;
	}
	if (starts(p, "Collective test concluded:")) {
		if ((t = cur(s)))
			t->concluded = 1;
		return MT_OK;
	}
	if (starts(p, "nThread ")) {
		if ((rc = starting(s)))
			return rc;
		t = cur(s);
		tokenize(p, &tk);
		if (tk.n >= 4 && tk.n <= MAXTOK && tok_is(&tk, 2, "nGpus")) {
			t->nthread = all_digits(tk.p[1], tk.len[1]) ? toint(tk.p[1]) : 0;
			t->ngpus = all_digits(tk.p[3], tk.len[3]) ? toint(tk.p[3]) : 0;
			if (t->nthread > 4096 || t->ngpus > 4096)
				t->nthread = t->ngpus = 0;
		}
		return MT_OK;
	}
	if (starts(p, "Using devices"))
		return starting(s);
	if (starts(p, "Rank "))
		return device_line(s, p);
	if (starts(p, "Out of bounds values") || starts(p, "Avg bus bandwidth"))
		return footer_line(s, p);
	tokenize(p, &tk);
	if (tk.n >= 4 && tk.n <= MAXTOK && (tok_is(&tk, 0, "size") || tok_is(&tk, 0, "bytes"))) {
		int i, busbw = 0;
		for (i = 0; i < tk.n; i++)
			busbw |= tok_is(&tk, i, "busbw");
		if (!busbw)
			return MT_OK;
		if (s->cur >= 0 && (cur(s)->nrows || cur(s)->has_avg) && (rc = start_test(s)))
			return rc;
		if (s->cur < 0 && (rc = start_test(s)))
			return rc;
		t = cur(s);
		if ((rc = build_map(s, &tk, 0, &s->map)))
			return rc;
		t->header_line = s->lineno;
		s->have_map = s->open = 1;
		s->guessed = 0;
	}
	return MT_OK;
}

static int nt_line(struct ntp *s, char *line)
{
	struct toks tk;
	const char *p;
	int rc;

	if (strip_tags(line))
		s->mpi_tags = 1;
	rtrim(line);
	p = skipws(line);
	if (!*p)
		return MT_OK;
	/* NCCL's own log lines: only the version is of use */
	if (strstr(p, "NCCL INFO") || strstr(p, "NCCL WARN") || strstr(p, "NCCL TRACE") ||
	    strstr(p, "NCCL ERROR")) {
		const char *v = strstr(p, "NCCL version ");
		if (v && !s->info_nccl[0])
			nccl_version_text(v + 13, s->info_nccl, sizeof(s->info_nccl), s->info_cuda,
					  sizeof(s->info_cuda));
		return MT_OK;
	}
	if (*p == '#')
		return comment(s, p + 1);
	if (starts(p, "nvbandwidth Version") || starts(p, "Running host_to_device") ||
	    starts(p, "memcpy CE ") || starts(p, "memcpy SM ") || starts(p, "SUM "))
		s->nvb_lines++;
	if (starts(p, "NCCL version ")) {
		struct mt_nt_test *t;
		if ((rc = starting(s)))
			return rc;
		t = cur(s);
		nccl_version_text(p + 13, t->nccl, sizeof(t->nccl), t->cuda, sizeof(t->cuda));
		return MT_OK;
	}
	/* nccl-tests 1.x printed these without '#' */
	if (starts(p, "Out of bounds values") || starts(p, "Avg bus bandwidth"))
		return footer_line(s, p);
	if (starts(p, "nThread "))
		return comment(s, p);
	tokenize(p, &tk);
	if (tk.n >= 2 && tk.n <= MAXTOK && all_digits(tk.p[0], tk.len[0]) &&
	    all_digits(tk.p[1], tk.len[1])) {
		if (s->cur >= 0 && s->have_map && s->open)
			return data_row(s, &tk);
		/* rows without a header: a paste that starts at the table */
		if (tk.n >= 11 && tk.n <= 13 && isalpha((unsigned char)tk.p[2][0])) {
			if (s->cur < 0 || has_content(cur(s)) || s->have_map) {
				if ((rc = start_test(s)))
					return rc;
			}
			if (!guess_map(s, &tk))
				return MT_OK;
			s->have_map = s->open = 1;
			return data_row(s, &tk);
		}
		return MT_OK;
	}
	if (strstr(p, "_perf"))
		command_line(s, &tk);
	return MT_OK;
}

/* ------------------------------------------------------------------ */
/* checks */

/* The interval of busbw/algbw ratios every row allows; the number of values
 * used (0: none, -1: the rows disagree). */
static int ratio_interval(const struct mt_nt_test *t, double *lo, double *hi)
{
	int i, h, n = 0;

	*lo = 0;
	*hi = INFINITY;
	for (i = 0; i < t->nrows; i++)
		for (h = 0; h < 2; h++) {
			const struct mt_nt_half *x = &t->rows[i].h[h];
			double a, b, ha, hb;
			if (!x->present || !isfinite(x->algbw.v) || !isfinite(x->busbw.v))
				continue;
			a = x->algbw.v;
			b = x->busbw.v;
			ha = half_unit(x->algbw.s);
			hb = half_unit(x->busbw.s);
			if (a - ha <= 0 || b - hb <= 0)
				continue;
			if ((b - hb) / (a + ha) > *lo)
				*lo = (b - hb) / (a + ha);
			if ((b + hb) / (a - ha) < *hi)
				*hi = (b + hb) / (a - ha);
			n++;
		}
	if (n && *lo > *hi * (1 + 1e-12))
		return -1;
	return n;
}

/* The rank count a busbw/algbw ratio interval implies for `op` (0: none or
 * not one). */
static int ranks_from_ratio(int op, double lo, double hi)
{
	double nlo, nhi;
	long a, b;

	switch (op) {
	case MT_COLL_ALL_REDUCE:
		if (lo >= 2)
			return 0;
		nlo = 2 / (2 - lo);
		nhi = hi >= 2 ? INFINITY : 2 / (2 - hi);
		break;
	case MT_COLL_ALL_GATHER:
	case MT_COLL_REDUCE_SCATTER:
	case MT_COLL_ALL_TO_ALL:
		if (lo >= 1)
			return 0;
		nlo = 1 / (1 - lo);
		nhi = hi >= 1 ? INFINITY : 1 / (1 - hi);
		break;
	default:
		return 0;
	}
	if (!(nhi < 1e7))
		return 0;
	a = (long)ceil(nlo - 1e-9);
	b = (long)floor(nhi + 1e-9);
	if (a < 2)
		a = 2;
	return a == b ? (int)a : 0;
}

/* The busbw each printed value allows, narrowed by size / time when the
 * time column holds the GPU time the bandwidth was computed from. */
static void value_interval(const struct mt_nt_test *t, const struct mt_nt_row *r,
			   const struct mt_nt_half *x, double *lo, double *hi)
{
	double b = x->busbw.v, hb = t->layout == MT_NT_JSON ? 5e-7 : half_unit(x->busbw.s);

	*lo = b - hb > 0 ? b - hb : 0;
	*hi = b + hb;
	if (r->size.v == 0 && b == 0) {
		*lo = *hi = 0;
		return;
	}
	if (!t->cputime && t->op >= 0 && t->ranks > 0 && isfinite(x->time.v) && r->size.v > 0) {
		double tm = x->time.v, ht = t->layout == MT_NT_JSON ? 5e-7 : half_unit(x->time.s);
		double f = mt_coll_busbw_factor(t->op, t->ranks), l2, h2;
		if (t->time_ms) {
			tm *= 1e3;
			ht *= 1e3;
		}
		if (tm - ht <= 0)
			return;
		l2 = r->size.v * f / ((tm + ht) * 1e3);
		h2 = r->size.v * f / ((tm - ht) * 1e3);
		if (l2 < *lo)
			l2 = *lo;
		if (h2 > *hi)
			h2 = *hi;
		if (l2 <= h2) {
			*lo = l2;
			*hi = h2;
		}
	}
}

static void check_test(struct mt_import *im, struct mt_nt_test *t)
{
	double sum = 0, slo = 0, shi = 0, sest = 0;
	int i, h, n = 0;

	t->peak_oop = t->peak_ip = 0;
	for (i = 0; i < t->nrows; i++) {
		const struct mt_nt_row *r = &t->rows[i];
		int bad = 0, wrong = 0;
		for (h = 0; h < 2; h++) {
			const struct mt_nt_half *x = &r->h[h];
			double lo, hi;
			if (!x->present || !isfinite(x->busbw.v))
				continue;
			if (h == 0 && x->busbw.v > t->peak_oop)
				t->peak_oop = x->busbw.v;
			if (h == 1 && x->busbw.v > t->peak_ip)
				t->peak_ip = x->busbw.v;
			value_interval(t, r, x, &lo, &hi);
			sum += x->busbw.v;
			slo += lo;
			shi += hi;
			sest += (lo + hi) / 2;
			n++;
			if (t->op >= 0 && t->ranks > 0 && isfinite(x->algbw.v)) {
				double f = mt_coll_busbw_factor(t->op, t->ranks);
				double hb = t->layout == MT_NT_JSON ? 5e-7 : half_unit(x->busbw.s);
				double ha = t->layout == MT_NT_JSON ? 5e-7 : half_unit(x->algbw.s);
				double e = x->algbw.v * f;
				if (fabs(x->busbw.v - e) > hb + ha * f + 1e-9 * (1 + e)) {
					if (!bad && !t->rows_bad) {
						t->bad_line = r->line;
						t->bad_busbw = x->busbw.v;
						t->bad_expect = e;
					}
					bad = 1;
				}
			}
			if (t->layout != MT_NT_OLD && t->layout != MT_NT_VERY_OLD && isfinite(x->wrong.v) &&
			    x->wrong.v > 0)
				wrong = 1;
		}
		t->wrong_rows += wrong;
		if (t->op >= 0 && t->ranks > 0)
			t->rows_checked++;
		t->rows_bad += bad;
	}
	t->nvals = n;
	if (n) {
		t->mean_printed = sum / n;
		t->mean_lo = slo / n;
		t->mean_hi = shi / n;
		t->mean_est = sest / n;
	}
	if (t->has_avg && n) {
		double f = t->avg.v, hf = t->layout == MT_NT_JSON ? 5e-7 : half_unit(t->avg.s);
		double eps = 1e-9 * (1 + fabs(f));
		char buf[64];
		t->footer_ok = t->mean_lo <= f + hf + eps && t->mean_hi >= f - hf - eps;
		snprintf(buf, sizeof(buf), t->layout == MT_NT_JSON ? "%f" : "%g", t->mean_est);
		t->footer_exact = !strcmp(buf, t->avg.s);
	} else if (t->has_avg) {
		t->footer_ok = 0;
	}
	(void)im;
}

/* "file:line", or "file" for JSON input */
static const char *loc(const struct mt_import *im, int line, char *buf)
{
	if (line > 0 && !im->json)
		snprintf(buf, 600, "%s:%d", im->path, line);
	else
		snprintf(buf, 600, "%s", im->path);
	return buf;
}

/* Decide what each test measured and over how many ranks, then check. */
static int finish_test(struct ntp *s, struct mt_nt_test *t)
{
	struct mt_import *im = s->im;
	const struct mt_import_opts *o = s->o;
	double rlo = 0, rhi = INFINITY;
	int nratio = ratio_interval(t, &rlo, &rhi);
	unsigned fname = ops_in_file_name(im->path);
	int where = t->header_line ? t->header_line : t->nrows ? t->rows[0].line : t->line;
	long idx = t - im->nt;
	const struct cmdinfo *c = s->tcmd && idx >= 0 && idx < s->ntcmd ? &s->tcmd[idx] : &s->cmd;
	char lb[600];

	/* the collective */
	if (t->name[0]) {
		t->op = op_of_test(t->name);
		if (!t->op_from[0])
			copys(t->op_from, sizeof(t->op_from), "test header");
	}
	if (t->op == -1 && o->op >= 0) {
		t->op = o->op;
		copys(t->op_from, sizeof(t->op_from), "--op");
	}
	if (t->op == -1 && t->nrows) {
		const struct mt_nt_row *r0 = &t->rows[0];
		unsigned cand = 0;
		if (nratio > 0 && rhi < 1) {
			cand = is_reduction(r0->redop) ? 1u << MT_COLL_REDUCE_SCATTER
						       : (1u << MT_COLL_ALL_GATHER) | (1u << MT_COLL_ALL_TO_ALL);
		} else if (nratio > 0 && rlo > 1) {
			cand = 1u << MT_COLL_ALL_REDUCE;
		} else if (nratio > 0) {
			if (r0->has_root && r0->root >= 0)
				cand = is_reduction(r0->redop) ? 0 : 1u << MT_COLL_BROADCAST;
			else if (is_reduction(r0->redop) || !r0->redop[0])
				cand = (1u << MT_COLL_SEND_RECV) | (1u << MT_COLL_ALL_REDUCE);
		} else {
			cand = (1u << MT_COLL_N) - 1;
		}
		if (single_bit(cand) >= 0 && nratio > 0) {
			t->op = single_bit(cand);
			copys(t->op_from, sizeof(t->op_from), "busbw/algbw and redop columns");
		} else if (single_bit(cand & fname) >= 0) {
			t->op = single_bit(cand & fname);
			copys(t->op_from, sizeof(t->op_from), nratio > 0 ? "columns and file name"
									  : "file name");
		}
	}
	if (t->op == -1)
		return mt_error_set(s->err, MT_EINVAL, "%s: cannot tell which collective this table "
				    "measured (no 'Collective test starting' line, no command line, "
				    "and neither its columns nor the file name say): give --op "
				    "all_reduce|all_gather|reduce_scatter|alltoall|sendrecv|broadcast",
				    loc(im, where, lb));
	if (t->op == -2) {
		warnf(im, "%s: %s is not one of the collectives a profile holds (all_reduce, "
		      "all_gather, reduce_scatter, alltoall, sendrecv, broadcast): not imported",
		      loc(im, where, lb), t->name);
		check_test(im, t);
		return MT_OK;
	}

	/* the rank count */
	if (!t->ranks && o->ranks > 0) {
		t->ranks = o->ranks;
		copys(t->ranks_from, sizeof(t->ranks_from), "--ranks");
	}
	if (!t->ranks && c->seen && (c->np || c->g || c->t || !c->mpi)) {
		int per = (c->g ? c->g : t->ngpus ? t->ngpus : 1) *
			  (c->t ? c->t : t->nthread ? t->nthread : 1);
		if (c->mpi && c->np) {
			t->ranks = c->np * per;
			if (c->ppn && !t->hosts)
				t->hosts = (t->ranks + c->ppn * per - 1) / (c->ppn * per);
		} else if (!c->mpi && !s->mpi_tags) {
			t->ranks = per;
			t->hosts = 1;
		}
		if (t->ranks)
			copys(t->ranks_from, sizeof(t->ranks_from), "command line");
	}
	if (!t->ranks && nratio > 0) {
		t->ranks = ranks_from_ratio(t->op, rlo, rhi);
		if (t->ranks)
			copys(t->ranks_from, sizeof(t->ranks_from), "busbw/algbw ratio");
	}
	if (!t->ranks && t->nthread && t->ngpus && !s->mpi_tags) {
		t->ranks = t->nthread * t->ngpus;
		t->hosts = 1;
		copys(t->ranks_from, sizeof(t->ranks_from), "nThread x nGpus");
		warnf(im, "%s: no device list: %d ranks taken from 'nThread %d nGpus %d', which "
		      "assumes a single process (give --ranks if several processes ran)",
		      loc(im, where, lb), t->ranks, t->nthread, t->ngpus);
	}
	if (!t->ranks && t->nrows)
		return mt_error_set(s->err, MT_EINVAL, "%s: cannot tell over how many ranks %s ran "
				    "(no device list, no command line, and busbw/algbw does not "
				    "determine it for %s): give --ranks N", loc(im, where, lb),
				    t->name[0] ? t->name : "this test", mt_coll_name(t->op));
	if (t->ranks && t->hosts == 1 && !t->per_node)
		t->per_node = t->ranks;
	/* the device list and the measured ratio should agree */
	if (nratio > 0 && t->ranks) {
		int n2 = ranks_from_ratio(t->op, rlo, rhi);
		if (n2 && n2 != t->ranks)
			warnf(im, "%s: busbw/algbw says %d ranks, the %s says %d", loc(im, where, lb), n2,
			      t->ranks_from, t->ranks);
	}
	check_test(im, t);
	return MT_OK;
}

static int report_checks(struct mt_import *im, const struct mt_import_opts *o, struct mt_error *err)
{
	int i, failed = 0;
	char first[MT_ERROR_MSG_MAX] = "";

	for (i = 0; i < im->nnt; i++) {
		struct mt_nt_test *t = &im->nt[i];
		char msg[1400], lb[600];
		const char *name = t->name[0] ? t->name : t->op >= 0 ? mt_coll_name(t->op) : "test";

		if (t->op == -2)
			continue;
		msg[0] = 0;
		if (t->footer_ok == 0)
			snprintf(msg, sizeof(msg), "%s: %s: the footer 'Avg bus bandwidth : %s' is not "
				 "the mean of the %d busbw values of the table (their printed digits "
				 "allow %.6g to %.6g): rows missing or edited?", loc(im, t->avg_line, lb),
				 name, t->avg.s, t->nvals, t->mean_lo, t->mean_hi);
		if (msg[0]) {
			warnf(im, "%s", msg);
			if (!failed++)
				copys(first, sizeof(first), msg);
		}
		if (t->rows_bad) {
			snprintf(msg, sizeof(msg), "%s: %s: busbw %.6g is not algbw x %.6g (the factor "
				 "for %d ranks) = %.6g%s", loc(im, t->bad_line, lb), name,
				 t->bad_busbw, mt_coll_busbw_factor(t->op, t->ranks), t->ranks,
				 t->bad_expect, t->rows_bad > 1 ? " (and in more rows)" : "");
			warnf(im, "%s", msg);
			if (!failed++)
				copys(first, sizeof(first), msg);
		}
		if (t->wrong_rows || (t->has_oob && (t->oob || !t->oob_ok))) {
			snprintf(msg, sizeof(msg), "%s: %s: nccl-tests found wrong results (%d row%s "
				 "with wrong elements, out of bounds values %d)", loc(im, t->line, lb),
				 name, t->wrong_rows, t->wrong_rows == 1 ? "" : "s", t->oob);
			warnf(im, "%s", msg);
			if (!failed++)
				copys(first, sizeof(first), msg);
		}
		if (!t->has_avg && t->nrows)
			warnf(im, "%s: %s: no 'Avg bus bandwidth' footer (a truncated log?): the "
			      "average was not checked", loc(im, t->line, lb), name);
	}
	if (failed && o->strict)
		return mt_error_set(err, MT_EINFEASIBLE, "%s (--strict)", first);
	return MT_OK;
}

static int parse_nt_text(struct mt_import *im, const char *text, size_t len,
			 const struct mt_import_opts *o, struct mt_error *err)
{
	struct ntp s;
	const char *p = text, *end = text + len;
	char *buf = NULL;
	size_t cap = 0;
	int rc = MT_OK, i, any_header = 0;

	memset(&s, 0, sizeof(s));
	s.im = im;
	s.o = o;
	s.err = err;
	s.cur = -1;
	s.max_rank = -1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (l + 1 > cap) {
			char *b = realloc(buf, l + 1);
			if (!b) {
				rc = oom(&s);
				goto out;
			}
			buf = b;
			cap = l + 1;
		}
		memcpy(buf, p, l);
		buf[l] = 0;
		s.lineno++;
		if ((rc = nt_line(&s, buf)))
			goto out;
		p = nl ? nl + 1 : end;
	}
	/* what this file is */
	for (i = 0; i < im->nnt; i++)
		any_header |= im->nt[i].header_line > 0 || im->nt[i].nrows > 0;
	if (!any_header) {
		if (!len)
			rc = mt_error_set(err, MT_EPARSE, "%s: empty file", im->path);
		else if (s.nvb_lines)
			rc = mt_error_set(err, MT_EPARSE, "%s: this is nvbandwidth output, not nccl-tests: "
					  "use 'megatune import nvbandwidth'", im->path);
		else
			rc = mt_error_set(err, MT_EPARSE, "%s: not nccl-tests output: no result table (a "
					  "'#  size  count  type ...' header or result rows) in %d line%s",
					  im->path, s.lineno, s.lineno == 1 ? "" : "s");
		goto out;
	}
	/* drop what is not a test (device lists of tests that never ran) */
	for (i = 0; i < im->nnt; i++) {
		struct mt_nt_test *t = &im->nt[i];
		if (t->header_line && !t->nrows) {
			rc = mt_error_set(err, MT_EPARSE, "%s:%d: a table header with no result rows "
					  "under it%s", im->path, t->header_line,
					  t->name[0] ? " (the test printed no results)" : "");
			goto out;
		}
		if (!t->nrows) {
			if (t->name[0] || t->ndev)
				warnf(im, "%s:%d: %s printed no result table: skipped", im->path, t->line,
				      t->name[0] ? t->name : "a test");
			free(t->rows);
			memmove(t, t + 1, (size_t)(im->nnt - i - 1) * sizeof(*t));
			im->nnt--;
			i--;
		}
	}
	for (i = 0; i < im->nnt; i++) {
		struct mt_nt_test *t = &im->nt[i];
		if (!t->nccl[0] && s.info_nccl[0]) {
			copys(t->nccl, sizeof(t->nccl), s.info_nccl);
			copys(t->cuda, sizeof(t->cuda), s.info_cuda);
		}
		if ((rc = finish_test(&s, t)))
			goto out;
		if (t->mixed_gpus)
			warnf(im, "%s:%d: the device list names more than one GPU model; '%s' is used",
			      im->path, t->line, t->gpu);
		if (t->uneven_hosts)
			warnf(im, "%s:%d: the hosts hold different numbers of ranks; the profile records "
			      "the largest (%d per node)", im->path, t->line, t->per_node);
	}
	rc = report_checks(im, o, err);
out:
	free(buf);
	free(s.hosts);
	free(s.host_ranks);
	free(s.tcmd);
	return rc;
}

/* ------------------------------------------------------------------ */
/* nccl-tests -J JSON (util.cu of nccl-tests 2.17 and later) */

static const cJSON *jget(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static int jtype_error(struct mt_error *err, const char *path, const char *where,
		       const char *what, const cJSON *v)
{
	return mt_error_set(err, MT_EINVAL, "%s: field '%s': expected %s, got %s", path, where, what,
			    v ? mt_json_type(v) : "nothing");
}

/* A number field of the -J file; "nan" (how it writes NaN) gives NAN.
 * 1 present, 0 absent or null, <0 error. */
static int jnumber(struct mt_import *im, const cJSON *o, const char *where, const char *key,
		   double *out, struct mt_error *err)
{
	const cJSON *v = jget(o, key);
	char w[160];

	*out = NAN;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (cJSON_IsNumber(v)) {
		*out = v->valuedouble;
		return 1;
	}
	if (cJSON_IsString(v) && (!strcmp(v->valuestring, "nan") || !strcmp(v->valuestring, "-nan")))
		return 1;
	snprintf(w, sizeof(w), "%s%s%s", where, where[0] ? "." : "", key);
	return jtype_error(err, im->path, w, "a number", v);
}

static int jstring(const cJSON *o, const char *key, char *out, size_t cap)
{
	const cJSON *v = jget(o, key);

	if (!cJSON_IsString(v))
		return 0;
	copys(out, cap, v->valuestring);
	return 1;
}

static int json_half(struct mt_import *im, const cJSON *h, const char *where,
		     struct mt_nt_half *x, int *cputime, struct mt_error *err)
{
	double v;
	int rc;

	if (!h || cJSON_IsNull(h))
		return MT_OK;
	if (!cJSON_IsObject(h))
		return jtype_error(err, im->path, where, "an object", h);
	x->present = 1;
	if ((rc = jnumber(im, h, where, "time", &v, err)) < 0)
		return rc;
	if (!rc) {
		if ((rc = jnumber(im, h, where, "cpu_time", &v, err)) < 0)
			return rc;
		if (rc)
			*cputime = 1;
	}
	num_set(&x->time, v, "%f");
	if ((rc = jnumber(im, h, where, "alg_bw", &v, err)) < 0)
		return rc;
	num_set(&x->algbw, v, "%f");
	if ((rc = jnumber(im, h, where, "bus_bw", &v, err)) < 0)
		return rc;
	if (!rc)
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.bus_bw': missing", im->path, where);
	num_set(&x->busbw, v, "%f");
	if ((rc = jnumber(im, h, where, "nwrong", &v, err)) < 0)
		return rc;
	num_set(&x->wrong, v, "%.0f");
	return MT_OK;
}

static int json_per_iter(struct mt_import *im, const cJSON *p, const char *where,
			 struct mt_nt_half *x, struct mt_error *err)
{
	double v;
	int rc;

	if (!cJSON_IsObject(p))
		return MT_OK;
	if ((rc = jnumber(im, p, where, "min_us", &v, err)) < 0)
		return rc;
	num_set(&x->i_min, v, "%f");
	if ((rc = jnumber(im, p, where, "max_us", &v, err)) < 0)
		return rc;
	num_set(&x->i_max, v, "%f");
	if ((rc = jnumber(im, p, where, "p99_us", &v, err)) < 0)
		return rc;
	num_set(&x->i_p99, v, "%f");
	if ((rc = jnumber(im, p, where, "cv_pct", &v, err)) < 0)
		return rc;
	num_set(&x->i_cv, v, "%f");
	return 1;
}

static int jbool(const cJSON *v, int dflt)
{
	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v);
	if (cJSON_IsString(v))
		return !strcmp(v->valuestring, "true");
	return dflt;
}

static int parse_nt_json(struct mt_import *im, const cJSON *root, const struct mt_import_opts *o,
			 struct mt_error *err)
{
	const cJSON *cfg = jget(root, "config"), *res = jget(root, "results"), *v, *e;
	struct mt_nt_test *t;
	struct ntp s;
	double d;
	int i = 0, rc, per_iter = 0;

	memset(&s, 0, sizeof(s));
	s.im = im;
	s.o = o;
	s.err = err;
	if (!cJSON_IsArray(res))
		return jtype_error(err, im->path, "results", "an array of result rows", res);
	if (!(t = new_test(im, 0)))
		return mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
	t->layout = MT_NT_JSON;
	if (cJSON_IsNumber(v = jget(root, "version")))
		im->json_version = dtoi(v->valuedouble);
	if (cJSON_IsNumber(v = jget(root, "nccl_version")))
		nccl_code(dtoi(v->valuedouble), t->nccl, sizeof(t->nccl));
	/* the command line: the test and its -g / -t */
	v = jget(root, "args");
	if (cJSON_IsArray(v)) {
		int k = 0;
		cJSON_ArrayForEach(e, v) {
			const cJSON *nx = e->next;
			const char *a = cJSON_IsString(e) ? e->valuestring : "";
			int val = nx && cJSON_IsString(nx) ? toint(nx->valuestring) : 0;
			if (k++ == 0 && op_of_test(a) != -1) {
				copys(t->name, sizeof(t->name), base_name(a));
				copys(t->op_from, sizeof(t->op_from), "JSON args");
			}
			if ((!strcmp(a, "-g") || !strcmp(a, "--ngpus")) && val > 0 && val < 4096)
				s.cmd.g = val;
			if ((!strcmp(a, "-t") || !strcmp(a, "--nthreads")) && val > 0 && val < 4096)
				s.cmd.t = val;
		}
	}
	if (cJSON_IsObject(cfg)) {
		const cJSON *devs = jget(cfg, "devices");
		if (jnumber(im, cfg, "config", "nthreads", &d, err) > 0 && d >= 1 && d < 4096)
			t->nthread = (int)d;
		if (jnumber(im, cfg, "config", "ngpus", &d, err) > 0 && d >= 1 && d < 4096)
			t->ngpus = (int)d;
		per_iter = jbool(jget(cfg, "per_iter_timing"), 0);
		if (cJSON_IsArray(devs) && cJSON_GetArraySize(devs) > 0) {
			s.max_rank = -1;
			cJSON_ArrayForEach(e, devs) {
				char host[128] = "", info[96] = "";
				t->ndev++;
				jstring(e, "hostname", host, sizeof(host));
				jstring(e, "device_info", info, sizeof(info));
				if (host[0] && (rc = add_host(&s, host, strlen(host)))) {
					free(s.hosts);
					free(s.host_ranks);
					return rc;
				}
				if (!t->gpu[0])
					copys(t->gpu, sizeof(t->gpu), info);
				else if (info[0] && strcmp(info, t->gpu))
					t->mixed_gpus = 1;
			}
			/* one entry per process: each runs nthreads x ngpus ranks */
			{
				int per = (t->nthread ? t->nthread : 1) * (t->ngpus ? t->ngpus : 1);
				t->ranks = t->ndev * per;
				copys(t->ranks_from, sizeof(t->ranks_from), "JSON devices x nthreads x ngpus");
				if (s.nhosts) {
					s.cur = 0;
					close_hosts(&s);
					t->per_node *= per;
				}
			}
		}
	}
	free(s.hosts);
	free(s.host_ranks);
	s.hosts = NULL;
	s.host_ranks = NULL;
	cJSON_ArrayForEach(e, res) {
		char w[64];
		struct mt_nt_row *r;
		const cJSON *rt;
		if (!(r = new_row(t)))
			return mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
		snprintf(w, sizeof(w), "results[%d]", i++);
		if (!cJSON_IsObject(e))
			return jtype_error(err, im->path, w, "an object", e);
		if ((rc = jnumber(im, e, w, "size", &d, err)) < 0)
			return rc;
		if (!rc || !(d >= 0) || d != floor(d))
			return jtype_error(err, im->path, w, "a 'size' in bytes", jget(e, "size"));
		num_set(&r->size, d, "%.0f");
		if ((rc = jnumber(im, e, w, "count", &d, err)) < 0)
			return rc;
		num_set(&r->count, d, "%.0f");
		jstring(e, "type", r->type, sizeof(r->type));
		jstring(e, "redop", r->redop, sizeof(r->redop));
		rt = jget(e, "root");
		if (cJSON_IsString(rt) || cJSON_IsNumber(rt)) {
			r->has_root = 1;
			r->root = cJSON_IsNumber(rt) ? dtoi(rt->valuedouble) : toint(rt->valuestring);
		}
		{
			char w2[96];
			snprintf(w2, sizeof(w2), "%s.out_of_place", w);
			if ((rc = json_half(im, jget(e, "out_of_place"), w2, &r->h[0], &t->cputime, err)))
				return rc;
			snprintf(w2, sizeof(w2), "%s.in_place", w);
			if ((rc = json_half(im, jget(e, "in_place"), w2, &r->h[1], &t->cputime, err)))
				return rc;
			snprintf(w2, sizeof(w2), "%s.out_of_place_per_iter", w);
			if ((rc = json_per_iter(im, jget(e, "out_of_place_per_iter"), w2, &r->h[0], err)) < 0)
				return rc;
			per_iter |= rc;
			snprintf(w2, sizeof(w2), "%s.in_place_per_iter", w);
			if ((rc = json_per_iter(im, jget(e, "in_place_per_iter"), w2, &r->h[1], err)) < 0)
				return rc;
		}
		if (!r->h[0].present && !r->h[1].present)
			return mt_error_set(err, MT_EINVAL, "%s: field '%s': neither 'out_of_place' nor "
					    "'in_place' results", im->path, w);
	}
	if (!t->nrows)
		return mt_error_set(err, MT_EINVAL, "%s: field 'results': no result rows (the test "
				    "printed no results)", im->path);
	t->per_iter = per_iter;
	snprintf(t->columns, sizeof(t->columns), "size count type redop root %s alg_bw bus_bw nwrong "
		 "%s alg_bw bus_bw nwrong", t->cputime ? "cpu_time" : "time",
		 t->cputime ? "cpu_time" : "time");
	/* the footer; format version 1 spelt it "average_bus_bandwidith" */
	v = jget(root, "average_bus_bandwidth");
	if (!v)
		v = jget(root, "average_bus_bandwidith");
	if (cJSON_IsObject(v)) {
		if ((rc = jnumber(im, v, "average_bus_bandwidth", "bandwidth", &d, err)) < 0)
			return rc;
		if (!rc && (rc = jnumber(im, v, "average_bus_bandwidth", "bandwidith", &d, err)) < 0)
			return rc;
		if (rc) {
			t->has_avg = 1;
			num_set(&t->avg, d, "%f");
		}
	}
	v = jget(root, "out_of_bounds");
	if (cJSON_IsObject(v) && jnumber(im, v, "out_of_bounds", "count", &d, err) > 0) {
		t->has_oob = 1;
		t->oob = d >= 0 && d < 1e9 ? (int)d : 1;
		t->oob_ok = jbool(jget(v, "okay"), t->oob == 0);
	}
	if (cJSON_IsArray(v = jget(root, "errors")))
		cJSON_ArrayForEach(e, v)
			if (cJSON_IsString(e) && e->valuestring[0])
				warnf(im, "%s: nccl-tests reported an error: %.300s", im->path, e->valuestring);
	if (!t->ranks && (s.cmd.g || s.cmd.t))
		s.cmd.seen = 1;
	if ((rc = finish_test(&s, t)))
		return rc;
	if (t->mixed_gpus)
		warnf(im, "%s: the device list names more than one GPU model; '%s' is used", im->path,
		      t->gpu);
	return report_checks(im, o, err);
}

/* ------------------------------------------------------------------ */
/* nvbandwidth */

static struct mt_nvb_test *new_matrix(struct mt_import *im, const char *name, int line)
{
	struct mt_nvb_test *a, *m;

	if (im->nnvb >= 4096)
		return NULL;
	a = realloc(im->nvb, (size_t)(im->nnvb + 1) * sizeof(*a));
	if (!a)
		return NULL;
	im->nvb = a;
	m = &a[im->nnvb++];
	memset(m, 0, sizeof(*m));
	copys(m->name, sizeof(m->name), name);
	copys(m->status, sizeof(m->status), "Passed");
	m->line = line;
	m->sum_ok = -1;
	m->sum.v = NAN;
	return m;
}

static int matrix_row(struct mt_nvb_test *m)
{
	double *v;

	if (m->ncols <= 0 || m->nrows >= 4096)
		return -1;
	v = realloc(m->v, (size_t)(m->nrows + 1) * (size_t)m->ncols * sizeof(double));
	if (!v)
		return -1;
	m->v = v;
	m->nrows++;
	return 0;
}

static int set_gpu(struct mt_import *im, int idx, const char *name)
{
	char buf[96];
	size_t n;

	if (idx < 0 || idx >= 4096)
		return MT_OK;
	if (idx >= im->ngpu) {
		char (*g)[96] = realloc(im->gpu, (size_t)(idx + 1) * sizeof(*g));
		if (!g)
			return MT_ENOMEM;
		memset(g + im->ngpu, 0, (size_t)(idx + 1 - im->ngpu) * sizeof(*g));
		im->gpu = g;
		im->ngpu = idx + 1;
	}
	/* drop the " (00000000:1b:00)" PCI address */
	copys(buf, sizeof(buf), skipws(name));
	rtrim(buf);
	n = strlen(buf);
	if (n && buf[n - 1] == ')') {
		char *open = strrchr(buf, '(');
		if (open && open > buf && strchr(open, ':') && open[-1] == ' ')
			open[-1] = 0;
	}
	copys(im->gpu[idx], sizeof(im->gpu[0]), buf);
	return MT_OK;
}

static void nvb_sum(struct mt_nvb_test *m, const char *tok, int len)
{
	struct mt_imp_num x;

	if (parse_num(tok, len, &x) == 0) {
		m->has_sum = 1;
		m->sum = x;
	}
}

static void nvb_check(struct mt_import *im, const struct mt_import_opts *o, int *failed,
		      char *first, size_t cap)
{
	int i, k;

	for (i = 0; i < im->nnvb; i++) {
		struct mt_nvb_test *m = &im->nvb[i];
		double sum = 0;
		if (!m->nrows)
			continue;
		for (k = 0; k < m->nrows * m->ncols; k++)
			if (isfinite(m->v[k]))
				sum += m->v[k];
		m->sum_values = sum;
		if (m->has_sum) {
			double tol = m->sum_half + (im->json ? 0 : half_unit(m->sum.s)) + 1e-9 * (1 + sum);
			m->sum_ok = fabs(sum - m->sum.v) <= tol;
			if (!m->sum_ok) {
				char msg[1200];
				snprintf(msg, sizeof(msg), "%s:%d: %s: 'SUM %s' is not the sum of the "
					 "matrix above it (%.6g)", im->path, m->line, m->name, m->sum.s, sum);
				warnf(im, "%s", msg);
				if (!(*failed)++)
					copy(first, cap, msg, strlen(msg));
			}
		}
	}
	(void)o;
}

static int parse_nvb_text(struct mt_import *im, const char *text, size_t len,
			  const struct mt_import_opts *o, struct mt_error *err)
{
	const char *p = text, *end = text + len;
	char *buf = NULL, running[96] = "", single[128] = "", first[MT_ERROR_MSG_MAX] = "";
	size_t cap = 0;
	int lineno = 0, state = 0, markers = 0, nt_lines = 0, rc = MT_OK, failed = 0;
	struct mt_nvb_test *m = NULL;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *q;
		struct toks tk;

		if (l + 1 > cap) {
			char *b = realloc(buf, l + 1);
			if (!b) {
				rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
				goto out;
			}
			buf = b;
			cap = l + 1;
		}
		memcpy(buf, p, l);
		buf[l] = 0;
		lineno++;
		p = nl ? nl + 1 : end;
		strip_tags(buf);
		rtrim(buf);
		q = skipws(buf);
		if (!*q) {
			if (state == 2)
				state = 0;
			continue;
		}
		if (*q == '#' && (strstr(q, "busbw") || strstr(q, "nccl-tests") || strstr(q, "Rank ")))
			nt_lines++;
		tokenize(q, &tk);
		if (tk.n > MAXTOK)
			tk.n = MAXTOK;
		if (starts(q, "nvbandwidth Version:")) {
			markers++;
			if (tk.n >= 3)
				tok_copy(im->nvb_version, sizeof(im->nvb_version), &tk, 2);
			continue;
		}
		if (starts(q, "Built from Git version:")) {
			if (tk.n >= 5)
				tok_copy(im->nvb_git, sizeof(im->nvb_git), &tk, 4);
			continue;
		}
		if (starts(q, "CUDA Runtime Version:")) {
			if (tk.n >= 4)
				tok_copy(im->cuda_runtime, sizeof(im->cuda_runtime), &tk, 3);
			continue;
		}
		if (starts(q, "Driver Version:")) {
			if (tk.n >= 3)
				tok_copy(im->driver, sizeof(im->driver), &tk, 2);
			continue;
		}
		if (starts(q, "Device ") && tk.n >= 3 && tk.len[1] >= 2 && tk.p[1][tk.len[1] - 1] == ':' &&
		    all_digits(tk.p[1], tk.len[1] - 1)) {
			markers++;
			if (!im->host[0] && single[0])
				copys(im->host, sizeof(im->host), single);
			if (set_gpu(im, toint(tk.p[1]), tk.p[2])) {
				rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
				goto out;
			}
			continue;
		}
		if (starts(q, "Process ") && strstr(q, "device")) {
			/* multinode: "Process 0 (host): device 0: NAME (pci)" */
			const char *open = strchr(q, '('), *close = open ? strchr(open, ')') : NULL;
			const char *dev = strstr(q, "device");
			const char *colon = dev ? strchr(dev, ':') : NULL;
			markers++;
			if (open && close && !im->host[0])
				copy(im->host, sizeof(im->host), open + 1, (size_t)(close - open - 1));
			if (colon && tk.n >= 2 && all_digits(tk.p[1], tk.len[1]) &&
			    set_gpu(im, toint(tk.p[1]), colon + 1)) {
				rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
				goto out;
			}
			continue;
		}
		if (starts(q, "Running ")) {
			markers++;
			state = 0;
			tok_copy(running, sizeof(running), &tk, 1);
			if (running[0] && running[strlen(running) - 1] == '.')
				running[strlen(running) - 1] = 0;
			m = NULL;
			continue;
		}
		/* a waived test prints no "Running" line: only a status right after
		 * a Running line belongs to it */
		if ((starts(q, "Waived") || starts(q, "ERROR") || starts(q, "Error")) && running[0] &&
		    (starts(q, "E") || !m)) {
			if (!m || strcmp(m->name, running)) {
				if (!(m = new_matrix(im, running, lineno))) {
					rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
					goto out;
				}
			}
			copy(m->status, sizeof(m->status), q, strlen(q));
			state = 0;
			continue;
		}
		if (starts(q, "SUM ") || starts(q, "&&&& PERF ")) {
			int k = starts(q, "SUM ") ? 1 : 2;
			char key[96] = "";
			markers++;
			if (tk.n < k + 2)
				continue;
			tok_copy(key, sizeof(key), &tk, k);
			/* the last matrix without its sum, else a SUM line alone */
			if (!m || m->has_sum) {
				if (!(m = new_matrix(im, key, lineno))) {
					rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
					goto out;
				}
			}
			copys(m->name, sizeof(m->name), key);
			nvb_sum(m, tk.p[k + 1], tk.len[k + 1]);
			if (!m->has_sum) {
				rc = mt_error_set(err, MT_EPARSE, "%s:%d: 'SUM %s': expected a number of GB/s, "
						  "got '%.*s'", im->path, lineno, key,
						  tk.len[k + 1] > 40 ? 40 : tk.len[k + 1], tk.p[k + 1]);
				goto out;
			}
			state = 0;
			continue;
		}
		if (state == 0 && (strstr(q, "bandwidth (GB/s)") || strstr(q, "(ns)") ||
				   starts(q, "memcpy ") || starts(q, "memory latency"))) {
			markers++;
			if (!(m = new_matrix(im, running[0] ? running : "?", lineno))) {
				rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
				goto out;
			}
			copys(m->desc, sizeof(m->desc), q);
			state = 1;
			continue;
		}
		if (state == 1) {
			m->ncols = tk.n;
			state = 2;
			continue;
		}
		if (state == 2) {
			int c;
			if (tk.n != m->ncols + 1) {
				rc = mt_error_set(err, MT_EPARSE, "%s:%d: a row of the %s matrix: expected a "
						  "label and %d value%s, got %d field%s", im->path, lineno,
						  m->name, m->ncols, m->ncols == 1 ? "" : "s", tk.n,
						  tk.n == 1 ? "" : "s");
				goto out;
			}
			if (matrix_row(m)) {
				rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
				goto out;
			}
			for (c = 0; c < m->ncols; c++) {
				struct mt_imp_num x;
				int pr = parse_num(tk.p[c + 1], tk.len[c + 1], &x);
				if (pr < 0) {
					rc = mt_error_set(err, MT_EPARSE, "%s:%d: column %d of the %s matrix: "
							  "expected a number or N/A, got '%.*s'", im->path,
							  lineno, c + 1, m->name,
							  tk.len[c + 1] > 40 ? 40 : tk.len[c + 1], tk.p[c + 1]);
					goto out;
				}
				m->v[(m->nrows - 1) * m->ncols + c] = x.v;
				if (pr == 0)
					m->sum_half += half_unit(x.s);
			}
			continue;
		}
		if (tk.n == 1 && !strchr(q, ':'))
			tok_copy(single, sizeof(single), &tk, 0);
	}
	if (!markers) {
		if (!len)
			rc = mt_error_set(err, MT_EPARSE, "%s: empty file", im->path);
		else if (nt_lines)
			rc = mt_error_set(err, MT_EPARSE, "%s: this is nccl-tests output, not nvbandwidth: "
					  "use 'megatune import nccl-tests'", im->path);
		else
			rc = mt_error_set(err, MT_EPARSE, "%s: not nvbandwidth output: no 'nvbandwidth "
					  "Version', 'Running <test>' or bandwidth matrix in %d line%s",
					  im->path, lineno, lineno == 1 ? "" : "s");
		goto out;
	}
	if (!im->nnvb) {
		rc = mt_error_set(err, MT_EPARSE, "%s: nvbandwidth output with no results (no bandwidth "
				  "matrix and no SUM line)", im->path);
		goto out;
	}
	{
		int i;
		for (i = 0; i < im->nnvb; i++)
			if (im->nvb[i].ncols && !im->nvb[i].nrows) {
				rc = mt_error_set(err, MT_EPARSE, "%s:%d: the %s matrix has a header and no "
						  "rows", im->path, im->nvb[i].line, im->nvb[i].name);
				goto out;
			}
	}
	nvb_check(im, o, &failed, first, sizeof(first));
	if (failed && o->strict)
		rc = mt_error_set(err, MT_EINFEASIBLE, "%s (--strict)", first);
out:
	free(buf);
	return rc;
}

static int parse_nvb_json(struct mt_import *im, const cJSON *root, const struct mt_import_opts *o,
			  struct mt_error *err)
{
	const cJSON *nb = jget(root, "nvbandwidth"), *tc, *e, *v;
	char first[MT_ERROR_MSG_MAX] = "";
	int i = 0, failed = 0;

	if (!cJSON_IsObject(nb))
		return jtype_error(err, im->path, "nvbandwidth", "an object", nb);
	jstring(nb, "version", im->nvb_version, sizeof(im->nvb_version));
	jstring(nb, "git_version", im->nvb_git, sizeof(im->nvb_git));
	jstring(nb, "Driver Version", im->driver, sizeof(im->driver));
	if (cJSON_IsNumber(v = jget(nb, "CUDA Runtime Version")))
		snprintf(im->cuda_runtime, sizeof(im->cuda_runtime), "%.0f", v->valuedouble);
	if (cJSON_IsString(v = jget(nb, "error")) && v->valuestring[0])
		warnf(im, "%s: nvbandwidth reported an error: %.300s", im->path, v->valuestring);
	if (cJSON_IsString(v = jget(nb, "warning")) && v->valuestring[0])
		warnf(im, "%s: nvbandwidth warned: %.300s", im->path, v->valuestring);
	/* "0: NVIDIA H100 80GB HBM3 (00000000:1b:00): (host)" */
	if (cJSON_IsArray(v = jget(nb, "GPU Device list")))
		cJSON_ArrayForEach(e, v) {
			const char *s = cJSON_IsString(e) ? e->valuestring : "";
			const char *c = strchr(s, ':');
			char name[160];
			char *h;
			if (!c || !isdigit((unsigned char)s[0]))
				continue;
			copys(name, sizeof(name), c + 1);
			h = strstr(name, "): (");
			if (h) {
				char *hc = strrchr(h + 4, ')');
				if (!im->host[0])
					copy(im->host, sizeof(im->host), h + 4,
					     hc ? (size_t)(hc - h - 4) : strlen(h + 4));
				h[1] = 0;
			}
			if (set_gpu(im, toint(s), name))
				return mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
		}
	tc = jget(nb, "testcases");
	if (!cJSON_IsArray(tc))
		return jtype_error(err, im->path, "nvbandwidth.testcases", "an array of tests", tc);
	cJSON_ArrayForEach(e, tc) {
		struct mt_nvb_test *m;
		const cJSON *mat, *row, *val;
		char w[80], name[96] = "?";
		snprintf(w, sizeof(w), "nvbandwidth.testcases[%d]", i++);
		if (!cJSON_IsObject(e))
			return jtype_error(err, im->path, w, "an object", e);
		jstring(e, "name", name, sizeof(name));
		if (!(m = new_matrix(im, name, 0)))
			return mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
		jstring(e, "status", m->status, sizeof(m->status));
		jstring(e, "bandwidth_description", m->desc, sizeof(m->desc));
		if (cJSON_IsNumber(v = jget(e, "sum"))) {
			m->has_sum = 1;
			num_set(&m->sum, v->valuedouble, "%.10g");
		}
		mat = jget(e, "bandwidth_matrix");
		if (!mat)
			continue;
		if (!cJSON_IsArray(mat))
			return jtype_error(err, im->path, w, "a 'bandwidth_matrix' array", mat);
		cJSON_ArrayForEach(row, mat) {
			int c = 0;
			if (!cJSON_IsArray(row) || !cJSON_GetArraySize(row))
				return jtype_error(err, im->path, w, "rows of values in 'bandwidth_matrix'", row);
			if (!m->ncols)
				m->ncols = cJSON_GetArraySize(row);
			if (cJSON_GetArraySize(row) != m->ncols)
				return mt_error_set(err, MT_EINVAL, "%s: field '%s.bandwidth_matrix': rows of "
						    "different lengths (%d and %d)", im->path, w, m->ncols,
						    cJSON_GetArraySize(row));
			if (matrix_row(m))
				return mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
			cJSON_ArrayForEach(val, row) {
				struct mt_imp_num x;
				int pr = -1;
				if (cJSON_IsString(val))
					pr = parse_num(val->valuestring, (int)strlen(val->valuestring), &x);
				else if (cJSON_IsNumber(val)) {
					pr = 0;
					num_set(&x, val->valuedouble, "%.10g");
				}
				if (pr < 0)
					return mt_error_set(err, MT_EINVAL, "%s: field '%s.bandwidth_matrix[%d][%d]': "
							    "expected a number or \"N/A\", got %s", im->path, w,
							    m->nrows - 1, c, mt_json_type(val));
				m->v[(m->nrows - 1) * m->ncols + c] = x.v;
				if (pr == 0 && cJSON_IsString(val))
					m->sum_half += half_unit(x.s);
				c++;
			}
		}
	}
	if (!im->nnvb)
		return mt_error_set(err, MT_EINVAL, "%s: field 'nvbandwidth.testcases': no tests",
				    im->path);
	nvb_check(im, o, &failed, first, sizeof(first));
	if (failed && o->strict)
		return mt_error_set(err, MT_EINFEASIBLE, "%s (--strict)", first);
	return MT_OK;
}

/* ------------------------------------------------------------------ */
/* entry points */

int mt_import_parse(int tool, const char *path, const char *text, size_t len,
		    const struct mt_import_opts *o, struct mt_import **out, struct mt_error *err)
{
	static const struct mt_import_opts dflt = { -1, 0, 0 };
	struct mt_import *im;
	const char *p = text, *end = text + len;
	int rc;

	*out = NULL;
	if (!o)
		o = &dflt;
	if (tool < 0 || tool >= MT_IMP_TOOL_N)
		return mt_error_set(err, MT_EUSAGE, "unknown tool: expected nccl-tests or nvbandwidth");
	if (!(im = import_new(tool, path)))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	while (p < end && isspace((unsigned char)*p))
		p++;
	if (p < end && *p == '{') {
		cJSON *root = NULL;
		im->json = 1;
		if ((rc = mt_json_parse(path, text, len, &root, err)))
			goto fail;
		if (tool == MT_IMP_NCCL_TESTS) {
			if (jget(root, "nvbandwidth"))
				rc = mt_error_set(err, MT_EINVAL, "%s: this is nvbandwidth JSON, not "
						  "nccl-tests: use 'megatune import nvbandwidth'", path);
			else if (!cJSON_IsObject(root) || (!jget(root, "results") && !jget(root, "config")))
				rc = mt_error_set(err, MT_EINVAL, "%s: not an nccl-tests JSON file (-J): "
						  "expected an object with 'config' and 'results'", path);
			else
				rc = parse_nt_json(im, root, o, err);
		} else {
			if (jget(root, "results") || jget(root, "config"))
				rc = mt_error_set(err, MT_EINVAL, "%s: this is nccl-tests JSON, not "
						  "nvbandwidth: use 'megatune import nccl-tests'", path);
			else if (!jget(root, "nvbandwidth"))
				rc = mt_error_set(err, MT_EINVAL, "%s: not an nvbandwidth JSON file (-j): "
						  "expected an object with 'nvbandwidth'", path);
			else
				rc = parse_nvb_json(im, root, o, err);
		}
		cJSON_Delete(root);
	} else if (tool == MT_IMP_NCCL_TESTS) {
		rc = parse_nt_text(im, text, len, o, err);
	} else {
		rc = parse_nvb_text(im, text, len, o, err);
	}
	if (rc)
		goto fail;
	*out = im;
	return MT_OK;
fail:
	mt_import_free(im);
	return rc;
}

int mt_import_file(int tool, const char *path, const struct mt_import_opts *o,
		   struct mt_import **out, struct mt_error *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if ((rc = mt_read_file(path, MAX_FILE_BYTES, &data, &len, err)))
		return rc;
	rc = mt_import_parse(tool, path, data, len, o, out, err);
	free(data);
	return rc;
}

/* ------------------------------------------------------------------ */
/* into a profile */

const char *mt_import_base_for_gpu(const char *gpu)
{
	char u[128];
	size_t i;

	if (!gpu || !gpu[0])
		return NULL;
	copys(u, sizeof(u), gpu);
	for (i = 0; u[i]; i++)
		u[i] = (char)toupper((unsigned char)u[i]);
	if (strstr(u, "GB200"))
		return "gb200-nvl72";
	if (strstr(u, "B200"))
		return "dgx-b200";
	if (strstr(u, "H200"))
		return "dgx-h200";
	if (strstr(u, "H100"))
		return "dgx-h100";
	if (strstr(u, "A100"))
		return "dgx-a100-80g";
	return NULL;
}

const char *mt_import_gpu(struct mt_import *const *ims, int n)
{
	int i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < ims[i]->nnt; j++)
			if (ims[i]->nt[j].gpu[0])
				return ims[i]->nt[j].gpu;
		for (j = 0; j < ims[i]->ngpu; j++)
			if (ims[i]->gpu[j][0])
				return ims[i]->gpu[j];
	}
	return NULL;
}

static void __attribute__((format(printf, 3, 4))) gwarn(char ***w, int *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(w, n, fmt, ap);
	va_end(ap);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *x, int n)
{
	qsort(x, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* "NVIDIA H100 80GB HBM3" and "H100 80GB HBM3" name the same GPU */
static int same_gpu(const char *a, const char *b)
{
	if (starts(a, "NVIDIA "))
		a += 7;
	if (starts(b, "NVIDIA "))
		b += 7;
	for (; *a && *b; a++, b++)
		if (toupper((unsigned char)*a) != toupper((unsigned char)*b))
			return 0;
	return !*a && !*b;
}



static int source_exists(const cJSON *doc, const char *id)
{
	const cJSON *e, *a = jget(doc, "sources");

	cJSON_ArrayForEach(e, a)
		if (!strcmp(mt_jget_str(e, "id"), id))
			return 1;
	return 0;
}

static void make_source_id(const cJSON *doc, const struct mt_import *im, char *id, size_t cap)
{
	char stem[40];
	size_t i, n;
	int k;

	copys(stem, sizeof(stem), im->base_name);
	if (strrchr(stem, '.') && strrchr(stem, '.') != stem)
		*strrchr(stem, '.') = 0;
	for (i = 0; stem[i]; i++)
		if (!isalnum((unsigned char)stem[i]) && stem[i] != '.' && stem[i] != '_' && stem[i] != '-')
			stem[i] = '-';
	snprintf(id, cap, "import-%s", stem[0] ? stem : "file");
	n = strlen(id);
	for (k = 2; source_exists(doc, id) && k < 10000; k++)
		snprintf(id + (n > cap - 8 ? cap - 8 : n), cap - (n > cap - 8 ? cap - 8 : n), "-%d", k);
}

static void nt_citation(struct mt_import *im)
{
	struct sbuf sb = SBUF_INIT;
	const struct mt_nt_test *t0 = im->nnt ? &im->nt[0] : NULL;
	int i, minr = 0, maxr = 0, hosts = -1;

	sbuf_adds(&sb, "nccl-tests ");
	sbuf_adds(&sb, t0 && t0->nt_version[0] ? t0->nt_version : "(version not printed)");
	for (i = 0; i < im->nnt; i++) {
		const struct mt_nt_test *t = &im->nt[i];
		if (i < 5 && t->name[0])
			sbuf_addf(&sb, "%s %s", i ? "," : "", t->name);
		else if (i < 5)
			sbuf_addf(&sb, "%s %s_perf", i ? "," : "", t->op >= 0 ? mt_coll_name(t->op) : "?");
		if (!minr || t->ranks < minr)
			minr = t->ranks;
		if (t->ranks > maxr)
			maxr = t->ranks;
		if (hosts == -1)
			hosts = t->hosts;
		else if (hosts != t->hosts)
			hosts = 0;
	}
	if (im->nnt > 5)
		sbuf_addf(&sb, " and %d more", im->nnt - 5);
	sbuf_addf(&sb, ", NCCL %s", t0 && t0->nccl[0] ? t0->nccl : "version not printed");
	if (minr == maxr)
		sbuf_addf(&sb, ", %d ranks", minr);
	else
		sbuf_addf(&sb, ", %d to %d ranks", minr, maxr);
	if (hosts > 0)
		sbuf_addf(&sb, " on %d host%s", hosts, hosts == 1 ? "" : "s");
	else
		sbuf_adds(&sb, " (hosts not listed)");
	sbuf_addf(&sb, ", %s: %s", t0 && t0->gpu[0] ? t0->gpu : "GPU not named", im->base_name);
	copys(im->citation, sizeof(im->citation), sb.failed ? im->base_name : sb.buf);
	sbuf_release(&sb);
}

static void nvb_citation(struct mt_import *im)
{
	struct sbuf sb = SBUF_INIT;
	int i, k = 0;

	sbuf_adds(&sb, "nvbandwidth ");
	sbuf_adds(&sb, im->nvb_version[0] ? im->nvb_version : "(version not printed)");
	for (i = 0; i < im->nnvb; i++)
		if (im->nvb[i].used) {
			if (k < 5)
				sbuf_addf(&sb, "%s %s", k ? "," : "", im->nvb[i].name);
			k++;
		}
	if (k > 5)
		sbuf_addf(&sb, " and %d more", k - 5);
	if (im->driver[0])
		sbuf_addf(&sb, ", driver %s", im->driver);
	if (im->ngpu)
		sbuf_addf(&sb, ", %d GPU%s", im->ngpu, im->ngpu == 1 ? "" : "s");
	if (im->host[0])
		sbuf_addf(&sb, " on %s", im->host);
	sbuf_addf(&sb, ", %s: %s", im->ngpu && im->gpu[0][0] ? im->gpu[0] : "GPU not named",
		  im->base_name);
	copys(im->citation, sizeof(im->citation), sb.failed ? im->base_name : sb.buf);
	sbuf_release(&sb);
}

static int add_nt(cJSON *doc, struct mt_import *im, struct mt_import *const *ims, int nims,
		  const struct mt_import_build_opts *o, int domain, int gpn)
{
	int i, k, added = 0;

	for (i = 0; i < im->nnt; i++) {
		struct mt_nt_test *t = &im->nt[i];
		const char *name = t->name[0] ? t->name : t->op >= 0 ? mt_coll_name(t->op) : "test";
		double f;
		cJSON *curve, *e;
		int per_node, span;

		t->span = -1;
		if (t->op < 0)
			continue;
		if (t->ranks < 2) {
			warnf(im, "%s: %s ran on %d rank: no collective curve", im->path, name, t->ranks);
			continue;
		}
		if (o->span >= 0) {
			span = o->span;
		} else if (!t->hosts) {
			span = MT_SPAN_NETWORK;
			warnf(im, "%s: %s: the log does not list the hosts: taken to span the network with "
			      "%d ranks per node (give --span nvlink if one NVLink domain held them all)",
			      im->path, name, t->ranks < gpn ? t->ranks : gpn);
		} else {
			span = t->hosts == 1 && t->ranks <= domain ? MT_SPAN_NVLINK : MT_SPAN_NETWORK;
		}
		if (t->hosts == 1)
			per_node = t->ranks;
		else if (t->hosts > 1)
			per_node = t->per_node ? t->per_node : (t->ranks + t->hosts - 1) / t->hosts;
		else
			per_node = t->ranks < gpn ? t->ranks : gpn;
		if (per_node > t->ranks)
			per_node = t->ranks;
		/* what the profile had for this group */
		t->replaced[0] = 0;
		cJSON_ArrayForEach(e, jget(doc, "collectives")) {
			if (!strcmp(mt_jget_str(e, "op"), mt_coll_name(t->op)) &&
			    !strcmp(mt_jget_str(e, "span"), mt_span_name(span)) &&
			    dtoi(mt_jget_num(e, "ranks", 0)) == t->ranks &&
			    dtoi(mt_jget_num(e, "ranks_per_node", t->ranks)) == per_node) {
				const char *src = mt_jget_str(e, "source");
				int j, ours = 0;
				for (j = 0; j < nims; j++)
					if (ims[j]->source_id[0] && !strcmp(ims[j]->source_id, src))
						ours = 1;
				copys(t->replaced, sizeof(t->replaced), ours ? src : "base profile");
				if (ours)
					warnf(im, "%s: %s (%s, %s, %d ranks, %d per node) replaces the same curve "
					      "imported from %s", im->path, name, mt_coll_name(t->op),
					      mt_span_name(span), t->ranks, per_node, src);
			}
		}
		curve = NULL;
		f = mt_coll_busbw_factor(t->op, t->ranks);
		t->npoints = t->nskipped = 0;
		for (k = 0; k < t->nrows; k++) {
			const struct mt_nt_row *r = &t->rows[k];
			const struct mt_nt_half *x = &r->h[0];
			double b, tm;
			if (!(r->size.v > 0))
				continue;
			if (!x->present || !isfinite(x->busbw.v)) {
				t->nskipped++;
				continue;
			}
			tm = t->cputime || !isfinite(x->time.v) ? 0 : x->time.v * (t->time_ms ? 1e3 : 1);
			b = x->busbw.v;
			if (!(b > 0) && tm > 0)
				b = r->size.v / (tm * 1e3) * f;  /* printed as 0.00 */
			if (!(b >= 1e-6) || b > 1e6 || r->size.v > 1e15) {
				t->nskipped++;
				continue;
			}
			if (!curve)
				curve = mt_profile_coll_curve(doc, mt_coll_name(t->op), mt_span_name(span),
							      t->ranks, per_node, im->source_id);
			if (!curve)
				return MT_ENOMEM;
			mt_profile_coll_point(curve, r->size.v, b, tm >= 1e-3 ? tm : 0, NULL);
			t->npoints++;
		}
		if (!curve) {
			warnf(im, "%s: %s: no row with a size above 0 and a bus bandwidth: no curve",
			      im->path, name);
			continue;
		}
		t->span = span;
		t->curve_per_node = per_node;
		added++;
	}
	return added;
}

enum { NVB_H2D, NVB_D2H, NVB_BI_H2D, NVB_BI_D2H, NVB_KINDS };

/* What an nvbandwidth test measured: its kind and copy engine (1 CE,
 * 2 SM), or the reason it has no profile field. */
static int nvb_kind(const char *name, int *engine, const char **why)
{
	static const char *const names[NVB_KINDS] = {
		"host_to_device_memcpy", "device_to_host_memcpy",
		"host_to_device_bidirectional_memcpy", "device_to_host_bidirectional_memcpy"
	};
	int k;

	*engine = 0;
	*why = NULL;
	for (k = 0; k < NVB_KINDS; k++) {
		size_t n = strlen(names[k]);
		if (!strncmp(name, names[k], n) && (!strcmp(name + n, "_ce") || !strcmp(name + n, "_sm"))) {
			*engine = !strcmp(name + n, "_ce") ? 1 : 2;
			return k;
		}
	}
	if (strstr(name, "latency"))
		*why = "latencies, not bandwidths";
	else if (starts(name, "all_to_host") || starts(name, "host_to_all"))
		*why = "every GPU copying to or from the host at once";
	else if (starts(name, "device_local_copy"))
		*why = "copies inside one GPU's memory";
	else if (strstr(name, "device_to_device") || starts(name, "all_to_one") ||
		 starts(name, "one_to_all") || starts(name, "multinode"))
		*why = "GPU-to-GPU copies (nccl-tests measures the links the profile uses)";
	else
		*why = "a test megatune does not know";
	return -1;
}

static int nvb_values(const struct mt_import *im, const struct mt_nvb_test *m, double *x, int cap)
{
	int i, n = 0;

	for (i = 0; i < m->nrows * m->ncols && n < cap; i++)
		if (isfinite(m->v[i]) && m->v[i] > 0)
			x[n++] = m->v[i];
	if (!n && m->has_sum && m->sum.v > 0 && im->ngpu > 0)
		x[n++] = m->sum.v / im->ngpu;
	return n;
}

static int add_nvb(cJSON *doc, struct mt_import *im)
{
	static const char *const dir[NVB_KINDS] = { "h2d", "d2h", "bidirectional", "bidirectional" };
	static const char *const why_list[] = {
		"latencies, not bandwidths", "every GPU copying to or from the host at once",
		"copies inside one GPU's memory",
		"GPU-to-GPU copies (nccl-tests measures the links the profile uses)",
		"a test megatune does not know"
	};
	int pick[NVB_KINDS], i, k, added = 0, w;
	double med[NVB_KINDS];

	for (k = 0; k < NVB_KINDS; k++)
		pick[k] = -1;
	for (i = 0; i < im->nnvb; i++) {
		const struct mt_nvb_test *m = &im->nvb[i];
		const char *why;
		int engine, kind = nvb_kind(m->name, &engine, &why);
		if (kind < 0 || (!m->nrows && !m->has_sum))
			continue;
		/* the copy engine is what cudaMemcpyAsync offloading uses: CE first */
		if (pick[kind] < 0)
			pick[kind] = i;
		else {
			int e0;
			const char *w0;
			nvb_kind(im->nvb[pick[kind]].name, &e0, &w0);
			if (engine < e0)
				pick[kind] = i;
		}
	}
	for (k = 0; k < NVB_KINDS; k++) {
		double x[4096];
		int n;
		med[k] = 0;
		if (pick[k] < 0)
			continue;
		n = nvb_values(im, &im->nvb[pick[k]], x, 4096);
		if (n)
			med[k] = median(x, n);
		im->nvb[pick[k]].gbps = med[k];
	}
	for (k = 0; k < NVB_KINDS; k++) {
		struct mt_nvb_test *m;
		double gbps = med[k];
		if (pick[k] < 0 || !(med[k] > 0))
			continue;
		/* bidirectional: the slower of the two directions under two-way traffic */
		if (k == NVB_BI_D2H && pick[NVB_BI_H2D] >= 0 && med[NVB_BI_H2D] > 0)
			continue;
		if (k == NVB_BI_H2D && pick[NVB_BI_D2H] >= 0 && med[NVB_BI_D2H] > 0 &&
		    med[NVB_BI_D2H] < gbps)
			gbps = med[NVB_BI_D2H];
		m = &im->nvb[pick[k]];
		if (gbps < 1e-3 || gbps > 1e6)
			continue;
		mt_profile_offload(doc, dir[k], 1, 1, 0, gbps, NULL, im->source_id);
		copys(m->direction, sizeof(m->direction), dir[k]);
		m->used = 1;
		if (k == NVB_BI_H2D && pick[NVB_BI_D2H] >= 0 && med[NVB_BI_D2H] > 0) {
			copys(im->nvb[pick[NVB_BI_D2H]].direction, 16, dir[k]);
			im->nvb[pick[NVB_BI_D2H]].used = 1;
		}
		added++;
	}
	/* slow GPUs, per test used */
	for (k = 0; k < NVB_KINDS; k++) {
		const struct mt_nvb_test *m;
		int c, g;
		if (pick[k] < 0 || !im->nvb[pick[k]].used || !(med[k] > 0))
			continue;
		m = &im->nvb[pick[k]];
		for (i = 0; i < m->nrows; i++)
			for (c = 0; c < m->ncols; c++) {
				double v = m->v[i * m->ncols + c], pct;
				char what[256], metric[48];
				if (!isfinite(v) || v <= 0)
					continue;
				pct = 100 * (med[k] - v) / med[k];
				if (pct <= MT_IMPORT_OUTLIER_PCT)
					continue;
				g = m->nrows == 1 ? c : i;
				snprintf(what, sizeof(what), "GPU %d%s%s%s: %s", g,
					 g < im->ngpu && im->gpu[g][0] ? " (" : "",
					 g < im->ngpu ? im->gpu[g] : "", g < im->ngpu && im->gpu[g][0] ? ")" : "",
					 m->name);
				snprintf(metric, sizeof(metric), "%s_gbps", k == NVB_H2D ? "h2d" : k == NVB_D2H ? "d2h"
						 : k == NVB_BI_H2D ? "bidirectional_h2d" : "bidirectional_d2h");
				mt_profile_outlier(doc, what, metric, v, med[k], pct);
				warnf(im, "%s: %s at %.4g GB/s is %.0f%% below the median %.4g GB/s",
				      im->path, what, v, pct, med[k]);
			}
	}
	/* what has no profile field, said once per reason */
	for (w = 0; w < (int)(sizeof(why_list) / sizeof(why_list[0])); w++) {
		struct sbuf sb = SBUF_INIT;
		int count = 0;
		for (i = 0; i < im->nnvb; i++) {
			const char *why;
			int engine;
			nvb_kind(im->nvb[i].name, &engine, &why);
			if (why && !strcmp(why, why_list[w])) {
				if (count < 8)
					sbuf_addf(&sb, "%s%s", count ? ", " : "", im->nvb[i].name);
				count++;
			}
		}
		if (count > 8)
			sbuf_addf(&sb, " and %d more", count - 8);
		if (count)
			warnf(im, "%s: not imported, no profile field holds %s: %s", im->path, why_list[w],
			      sb.failed ? "" : sb.buf);
		sbuf_release(&sb);
	}
	for (k = 0; k < NVB_KINDS; k++)
		if (pick[k] >= 0 && !(med[k] > 0))
			warnf(im, "%s: %s: no bandwidth value to import", im->path, im->nvb[pick[k]].name);
	return added;
}

int mt_import_build(cJSON *doc, struct mt_import *const *ims, int n,
		    const struct mt_import_build_opts *o, char ***warn, int *nwarn,
		    struct mt_error *err)
{
	static const struct mt_import_build_opts dflt = { -1 };
	const cJSON *node = jget(doc, "node"), *gpu = jget(doc, "gpu");
	int domain = dtoi(mt_jget_num(node, "nvlink_domain", 8)), gpn = dtoi(mt_jget_num(node, "gpus_per_node", 8));
	const char *base_gpu = mt_jget_str(gpu, "name"), *first_gpu = NULL;
	const char *nccl = NULL, *cuda = NULL, *nccl_from = NULL;
	int i, j, total = 0;

	if (!o)
		o = &dflt;
	if (domain < 1)
		domain = 8;
	if (gpn < 1)
		gpn = 8;
	for (i = 0; i < n; i++) {
		struct mt_import *im = ims[i];
		int added;
		make_source_id(doc, im, im->source_id, sizeof(im->source_id));
		/* the source first: curves refer to it */
		if (im->tool == MT_IMP_NCCL_TESTS)
			nt_citation(im);
		else
			copys(im->citation, sizeof(im->citation), im->base_name);
		if (mt_profile_add_source(doc, im->source_id, "imported", im->citation))
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		if (im->tool == MT_IMP_NCCL_TESTS)
			added = add_nt(doc, im, ims, n, o, domain, gpn);
		else
			added = add_nvb(doc, im);
		if (added < 0)
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		if (im->tool == MT_IMP_NVBANDWIDTH) {
			nvb_citation(im);
			mt_profile_add_source(doc, im->source_id, "imported", im->citation);
		}
		if (!added) {
			/* a source nothing refers to is noise */
			cJSON *a = cJSON_GetObjectItemCaseSensitive(doc, "sources"), *e;
			int k = 0;
			cJSON_ArrayForEach(e, a) {
				if (!strcmp(mt_jget_str(e, "id"), im->source_id)) {
					cJSON_DeleteItemFromArray(a, k);
					break;
				}
				k++;
			}
			warnf(im, "%s: nothing in this file could be imported", im->path);
			im->source_id[0] = 0;
		}
		total += added;
		for (j = 0; j < im->nnt; j++) {
			const struct mt_nt_test *t = &im->nt[j];
			if (t->gpu[0] && !first_gpu)
				first_gpu = t->gpu;
			else if (t->gpu[0] && !same_gpu(t->gpu, first_gpu))
				gwarn(warn, nwarn, "%s ran on %s, another file on %s: they are imported into "
				      "one profile", im->path, t->gpu, first_gpu);
			if (t->nccl[0] && t->span >= 0) {
				if (!nccl) {
					nccl = t->nccl;
					cuda = t->cuda[0] ? t->cuda : NULL;
					nccl_from = im->path;
				} else if (strcmp(nccl, t->nccl)) {
					gwarn(warn, nwarn, "%s ran NCCL %s, %s ran NCCL %s: software.nccl says %s",
					      im->path, t->nccl, nccl_from, nccl, nccl);
				}
			}
		}
		for (j = 0; j < im->ngpu; j++)
			if (im->gpu[j][0] && !first_gpu)
				first_gpu = im->gpu[j];
	}
	if (first_gpu && base_gpu[0] && !same_gpu(first_gpu, base_gpu))
		gwarn(warn, nwarn, "the logs ran on %s, the base profile describes %s: its GPU and node "
		      "sections (memory, peak FLOP/s, NVLink domain) are kept", first_gpu, base_gpu);
	if (nccl)
		mt_profile_software(doc, nccl, cuda);
	if (!total)
		return mt_error_set(err, MT_EINVAL, "nothing to import: no collective curve and no "
				    "host<->device bandwidth in %d file%s (see the warnings)", n,
				    n == 1 ? "" : "s");
	return MT_OK;
}
