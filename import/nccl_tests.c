/* SPDX-License-Identifier: MIT */
/* import: the text output of nccl-tests (docs/FORMATS.md, "megatune import"):
 * every table layout, found through its header line, with device lists,
 * command lines, footers and mpirun tags; the checks are in nccl_checks.c. */
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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


static struct mt_nt_test *nccl_tests_cur(struct ntp *s)
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
	struct mt_nt_test *t = imp_new_test(s->im, s->lineno);

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
	if (s->cur < 0 || has_content(nccl_tests_cur(s)))
		return start_test(s);
	return MT_OK;
}

int imp_nt_add_host(struct ntp *s, const char *host, size_t len)
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
void imp_nt_close_hosts(struct ntp *s)
{
	struct mt_nt_test *t = nccl_tests_cur(s);
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

	imp_tokenize(p, &tk);
	if (tk.n < 5 || tk.n > MAXTOK || !tok_is(&tk, 0, "Rank") || !imp_all_digits(tk.p[1], tk.len[1]))
		return MT_OK;
	if (s->cur >= 0 && has_content(nccl_tests_cur(s)) && (rc = start_test(s)))
		return rc;
	if (s->cur < 0 && (rc = start_test(s)))
		return rc;
	t = nccl_tests_cur(s);
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
		if ((rc = imp_nt_add_host(s, tk.p[i + 1], (size_t)tk.len[i + 1])))
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
	imp_nt_close_hosts(s);
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

/* Append " name" (or "name" to an empty list) to the column list when it fits. */
static void add_column(char *cols, size_t cap, const char *name, size_t len)
{
	size_t n = strlen(cols);

	if (n + len + 2 > cap)
		return;
	snprintf(cols + n, cap - n, "%s%.*s", n ? " " : "", (int)len, name);
}

static int build_map(struct ntp *s, const struct toks *tk, int from, struct colmap *m)
{
	struct mt_nt_test *t = nccl_tests_cur(s);
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
		if (strlen(t->columns) + (size_t)tk->len[i] + 2 < sizeof(t->columns))
			add_column(t->columns, sizeof(t->columns), tk->p[i], (size_t)tk->len[i]);
	}
	t->timestamps = m->has_ts;
	t->layout = has_root && has_redop ? MT_NT_CURRENT : has_redop ? MT_NT_OLD : MT_NT_VERY_OLD;
	/* nccl-tests 1.x headed its table "bytes N type op" and printed ms */
	t->time_ms = tok_is(tk, from, "bytes");
	if (unknown)
		imp_warnf(s->im, "%s:%d: %d column%s of the table header not known to megatune (%s); "
			  "%s ignored", s->im->path, s->lineno, unknown, unknown > 1 ? "s" : "",
			  t->columns, unknown > 1 ? "they are" : "it is");
	return MT_OK;
}

/* Guess the columns of a table printed without its header (a truncated
 * paste): size count type [redop] [root] then the two halves. */
static int guess_map(struct ntp *s, const struct toks *tk)
{
	struct mt_nt_test *t = nccl_tests_cur(s);
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
		m->col[n++] = imp_parse_num(tk->p[3], tk->len[3], &x) == 0 ? C_ROOT : C_REDOP;
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
		add_column(t->columns, sizeof(t->columns), m->name[i], strlen(m->name[i]));
	}
	t->layout = extra == 2 ? MT_NT_CURRENT : extra == 1 && m->col[3] == C_REDOP ? MT_NT_OLD
									 : MT_NT_VERY_OLD;
	s->guessed = 1;
	imp_warnf(s->im, "%s:%d: a table without its header line: the columns are taken to be "
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
	struct mt_nt_test *t = nccl_tests_cur(s);
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
	if (!(r = imp_new_row(t)))
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
			if (!imp_all_digits(p, len))
				return row_error(s, "a whole number", colname, p, len);
			imp_parse_num(p, len, dst);
			break;
		case C_TYPE:
			copy(r->type, sizeof(r->type), p, (size_t)len);
			break;
		case C_REDOP:
			copy(r->redop, sizeof(r->redop), p, (size_t)len);
			break;
		case C_ROOT: {
			struct mt_imp_num x;
			if (imp_parse_num(p, len, &x) || x.v != floor(x.v) || x.v < -1 || x.v > 1e9)
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
			pr = imp_parse_num(p, len, dst);
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
	if (i + 1 < tk->n && i + 1 < MAXTOK && imp_all_digits(tk->p[i + 1], tk->len[i + 1]))
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
			else if (starts(a, "-g") && imp_all_digits(a + 2, (int)strlen(a + 2)))
				g = toint(a + 2);
			else if (starts(a, "-t") && imp_all_digits(a + 2, (int)strlen(a + 2)))
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
	if (s->cur >= 0 && has_content(nccl_tests_cur(s)))
		s->cur = -1;
	{
		struct mt_nt_test *t = nccl_tests_cur(s);
		if (t && s->cur < s->ntcmd)
			s->tcmd[s->cur] = s->cmd;
		if (t && !t->name[0]) {
			copys(t->name, sizeof(t->name), s->cmd.name);
			copys(t->op_from, sizeof(t->op_from), "command line");
		}
	}
}

static int footer_line(struct ntp *s, const char *p)
{
	struct mt_nt_test *t = nccl_tests_cur(s);
	const char *colon = strchr(p, ':');
	struct toks tk;
	struct mt_imp_num x;

	if (!t)
		return MT_OK;
	if (!colon)
		return MT_OK;
	imp_tokenize(colon + 1, &tk);
	if (starts(p, "Out of bounds values")) {
		if (tk.n >= 1 && tk.n <= MAXTOK && imp_all_digits(tk.p[0], tk.len[0])) {
			t->has_oob = 1;
			t->oob = toint(tk.p[0]);
			t->oob_ok = tk.n < 2 || tok_is(&tk, 1, "OK");
		}
		return MT_OK;
	}
	if (tk.n < 1 || tk.n > MAXTOK || imp_parse_num(tk.p[0], tk.len[0], &x))
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
		t = nccl_tests_cur(s);
		if ((s->cur < 0 || has_content(t) || t->name[0]) && (rc = start_test(s)))
			return rc;
		t = nccl_tests_cur(s);
		imp_tokenize(p + 18, &tk);
		if (tk.n >= 1 && tk.n <= MAXTOK)
			tok_copy(t->nt_version, sizeof(t->nt_version), &tk, 0);
		if (lib)
			imp_nccl_code(toint(lib + 13), t->nccl, sizeof(t->nccl));
		return MT_OK;
	}
	if (starts(p, "Collective test starting:")) {
		imp_tokenize(p + 25, &tk);
		t = nccl_tests_cur(s);
		/* the version line just before belongs to this test */
		if ((s->cur < 0 || has_content(t) || t->name[0]) && (rc = start_test(s)))
			return rc;
		t = nccl_tests_cur(s);
		if (tk.n >= 1 && tk.n <= MAXTOK) {
			tok_copy(t->name, sizeof(t->name), &tk, 0);
			copys(t->op_from, sizeof(t->op_from), "test header");
		}
		return MT_OK;
	}
	if (starts(p, "Collective test concluded:")) {
		if ((t = nccl_tests_cur(s)))
			t->concluded = 1;
		return MT_OK;
	}
	if (starts(p, "nThread ")) {
		if ((rc = starting(s)))
			return rc;
		t = nccl_tests_cur(s);
		imp_tokenize(p, &tk);
		if (tk.n >= 4 && tk.n <= MAXTOK && tok_is(&tk, 2, "nGpus")) {
			t->nthread = imp_all_digits(tk.p[1], tk.len[1]) ? toint(tk.p[1]) : 0;
			t->ngpus = imp_all_digits(tk.p[3], tk.len[3]) ? toint(tk.p[3]) : 0;
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
	imp_tokenize(p, &tk);
	if (tk.n >= 4 && tk.n <= MAXTOK && (tok_is(&tk, 0, "size") || tok_is(&tk, 0, "bytes"))) {
		int i, busbw = 0;
		for (i = 0; i < tk.n; i++)
			busbw |= tok_is(&tk, i, "busbw");
		if (!busbw)
			return MT_OK;
		if (s->cur >= 0 && (nccl_tests_cur(s)->nrows || nccl_tests_cur(s)->has_avg) && (rc = start_test(s)))
			return rc;
		if (s->cur < 0 && (rc = start_test(s)))
			return rc;
		t = nccl_tests_cur(s);
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

	if (imp_strip_tags(line))
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
			imp_nccl_version_text(v + 13, s->info_nccl, sizeof(s->info_nccl), s->info_cuda,
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
		t = nccl_tests_cur(s);
		imp_nccl_version_text(p + 13, t->nccl, sizeof(t->nccl), t->cuda, sizeof(t->cuda));
		return MT_OK;
	}
	/* nccl-tests 1.x printed these without '#' */
	if (starts(p, "Out of bounds values") || starts(p, "Avg bus bandwidth"))
		return footer_line(s, p);
	if (starts(p, "nThread "))
		return comment(s, p);
	imp_tokenize(p, &tk);
	if (tk.n >= 2 && tk.n <= MAXTOK && imp_all_digits(tk.p[0], tk.len[0]) &&
	    imp_all_digits(tk.p[1], tk.len[1])) {
		if (s->cur >= 0 && s->have_map && s->open)
			return data_row(s, &tk);
		/* rows without a header: a paste that starts at the table */
		if (tk.n >= 11 && tk.n <= 13 && isalpha((unsigned char)tk.p[2][0])) {
			if (s->cur < 0 || has_content(nccl_tests_cur(s)) || s->have_map) {
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


static int nt_line_cb(void *s, char *line)
{
	return nt_line(s, line);
}

int imp_parse_nt_text(struct mt_import *im, const char *text, size_t len,
			 const struct mt_import_opts *o, struct mt_error *err)
{
	struct ntp s;
	int rc = MT_OK, i, any_header = 0;

	memset(&s, 0, sizeof(s));
	s.im = im;
	s.o = o;
	s.err = err;
	s.cur = -1;
	s.max_rank = -1;
	if ((rc = imp_each_line(im, text, len, &s.lineno, nt_line_cb, &s, err)))
		goto out;
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
				imp_warnf(im, "%s:%d: %s printed no result table: skipped", im->path, t->line,
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
		if ((rc = imp_nt_finish_test(&s, t)))
			goto out;
		if (t->mixed_gpus)
			imp_warnf(im, "%s:%d: the device list names more than one GPU model; '%s' is used",
				  im->path, t->line, t->gpu);
		if (t->uneven_hosts)
			imp_warnf(im, "%s:%d: the hosts hold different numbers of ranks; the profile records "
				  "the largest (%d per node)", im->path, t->line, t->per_node);
	}
	rc = imp_nt_report_checks(im, o, err);
out:
	free(s.hosts);
	free(s.host_ranks);
	free(s.tcmd);
	return rc;
}
