/* SPDX-License-Identifier: MIT */
/* logparse: Megatron-family training logs, line by line (logparse.h). */
#include "logparse.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const status_names[MT_VS_N] = {
	"ok", "oom", "nccl_timeout", "nccl_error", "nan", "hang", "exit", "no_iterations",
	"not_run",
};

const char *mt_vstatus_name(int s)
{
	return s >= 0 && s < MT_VS_N ? status_names[s] : NULL;
}

int mt_vstatus_parse(const char *s)
{
	int i;

	for (i = 0; s && i < MT_VS_N; i++)
		if (!strcmp(s, status_names[i]))
			return i;
	return -1;
}

void mt_logparse_init(struct mt_logparse *p)
{
	memset(p, 0, sizeof(*p));
	p->mem_max_alloc_b = NAN;
	p->mem_max_reserved_b = NAN;
}

/* the number after `key` (spaces skipped); 0 when key is absent or no number */
static int num_after(const char *s, const char *key, double *v)
{
	const char *k = strstr(s, key);
	char *end;

	if (!k)
		return 0;
	k += strlen(key);
	while (*k == ' ')
		k++;
	*v = strtod(k, &end);
	return end != k;
}

static int has_ci(const char *s, const char *needle)
{
	size_t n = strlen(needle);
	int lo = tolower((unsigned char)needle[0]), up = toupper((unsigned char)needle[0]);

	/* the first character before the whole comparison: a call per byte is
	 * most of the parser's time on long logs */
	for (; *s; s++)
		if ((*s == lo || *s == up) && !strncasecmp(s, needle, n))
			return 1;
	return 0;
}

/* failure ranks: a higher one replaces a lower one as the evidence */
static int failure_rank(int st)
{
	switch (st) {
	case MT_VS_OOM: return 4;
	case MT_VS_NAN: return 3;
	case MT_VS_NCCL_TIMEOUT: return 2;
	case MT_VS_NCCL_ERROR: return 1;
	default: return 0;
	}
}

static void logparse_fail(struct mt_logparse *p, int st, const char *line)
{
	if (failure_rank(st) <= failure_rank(p->failure))
		return;
	p->failure = st;
	p->evidence_lineno = p->lineno;
	snprintf(p->evidence, sizeof(p->evidence), "%s", line);
}

/* the line without the launchers' prefixes: `[default3]:`, `[rank3]: `,
 * srun --label ` 12: ` */
static const char *strip_prefix(const char *s)
{
	const char *q;

	for (;;) {
		if (!strncmp(s, "[default", 8) || !strncmp(s, "[rank", 5)) {
			q = s + (s[1] == 'd' ? 8 : 5);
			if (!isdigit((unsigned char)*q))
				return s;
			while (isdigit((unsigned char)*q))
				q++;
			if (q[0] != ']' || q[1] != ':')
				return s;
			s = q + 2;
			if (*s == ' ')
				s++;
			continue;
		}
		q = s;
		while (*q == ' ')
			q++;
		if (isdigit((unsigned char)*q) && q - s <= 6) {
			while (isdigit((unsigned char)*q))
				q++;
			if (q[0] == ':' && (q[1] == ' ' || q[1] == 0)) {
				s = q[1] ? q + 2 : q + 1;
				continue;
			}
		}
		return s;
	}
}

static void add_step(struct mt_logparse *p, long iter, double step_s, double tflops, int fmt)
{
	/* the same iteration again: another rank's line (srun --label, every rank
	 * printing) or a progress bar redrawn; the first one counts */
	if (p->nstep > 0 && p->iter[p->nstep - 1] == iter)
		return;
	if (p->nstep < MT_LOG_MAX_STEPS && step_s > 0 && isfinite(step_s)) {
		p->step_s[p->nstep] = step_s;
		p->iter[p->nstep] = iter;
		p->log_tflops[p->nstep] = tflops;
		p->nstep++;
		p->format = fmt;
	}
}

static void progress(struct mt_logparse *p, long iter, long total, const char *line)
{
	if (!p->at_end && p->seps > p->whole_seps)
		p->whole_seps = p->seps;
	p->iter_lines++;
	p->last_iter = iter;
	if (total > 0)
		p->train_iters = total;
	p->last_iter_lineno = p->lineno;
	snprintf(p->last_iter_line, sizeof(p->last_iter_line), "%s", line);
}

static void logparse_mem(struct mt_logparse *p, double alloc_b, double reserved_b)
{
	if (alloc_b >= 0 && (isnan(p->mem_max_alloc_b) || alloc_b > p->mem_max_alloc_b))
		p->mem_max_alloc_b = alloc_b;
	if (reserved_b >= 0 && (isnan(p->mem_max_reserved_b) || reserved_b > p->mem_max_reserved_b))
		p->mem_max_reserved_b = reserved_b;
}

/* does the iteration line carry a loss value ("lm loss: X", "lm loss X",
 * "<name> loss: X", "<name>_loss: X" but not "loss scale") */
static int has_loss(const char *s)
{
	const char *q;

	for (q = strstr(s, "loss"); q; q = strstr(q + 4, "loss")) {
		if (!strncmp(q, "loss scale", 10))
			continue;
		if (q[4] == ':' || (q[4] == ' ' && (isdigit((unsigned char)q[5]) || q[5] == '-' ||
						    q[5] == 'n' || q[5] == 'N')))
			return 1;
	}
	return 0;
}

/* does the line reach a field Megatron-LM prints after the losses (a line
 * cut before them says nothing of its loss) */
static int past_loss(const char *s)
{
	return strstr(s, "loss scale") || strstr(s, "grad norm") || strstr(s, "num zeros") ||
	       strstr(s, "params norm") || strstr(s, "number of skipped iterations") ||
	       strstr(s, "number of nan iterations");
}

/* Megatron-LM / Bridge: "iteration N/ M | ... elapsed time per iteration (ms): X" */
static int megatron_line(struct mt_logparse *p, const char *s, const char *line)
{
	const char *it = strstr(s, "iteration ");
	double ms, v, tflops = NAN, skipped = 0, nan_it = 0;
	long iter, total = 0, prev = p->last_iter;
	char *end;
	int loss;

	if (!it || !strstr(s, "elapsed time per iteration (ms):"))
		return 0;
	iter = strtol(it + 10, &end, 10);
	if (end == it + 10 || iter <= 0)
		return 0;
	if (*end == '/')
		total = strtol(end + 1, NULL, 10);
	if (!num_after(s, "elapsed time per iteration (ms):", &ms))
		return 0;
	if (num_after(s, "throughput per GPU (TFLOP/s/GPU):", &v) ||
	    num_after(s, "compute per GPU (TFLOP/s/GPU):", &v))
		tflops = v;
	num_after(s, "number of skipped iterations:", &skipped);
	num_after(s, "number of nan iterations:", &nan_it);
	progress(p, iter, total, line);
	p->skipped += (long)skipped;
	if (skipped > 0 && !p->skip_lineno) {
		p->skip_lineno = p->lineno;
		snprintf(p->skip_line, sizeof(p->skip_line), "%s", line);
	}
	p->nan_iters += (long)nan_it;
	loss = has_loss(s);
	if (nan_it > 0)
		logparse_fail(p, MT_VS_NAN, line);
	else if (!loss && p->loss_seen && skipped == 0 && past_loss(s))
		logparse_fail(p, MT_VS_NAN, line);
	if (loss)
		p->loss_seen = 1;
	/* an interval whose iterations were all skipped gives no step */
	if (skipped > 0 && skipped >= iter - prev)
		return 1;
	add_step(p, iter, ms / 1000.0, tflops, MT_LOGF_MEGATRON);
	return 1;
}

/* NeMo 2: "Training epoch E, iteration I/M | ... | train_step_timing in s: X" */
static int nemo2_line(struct mt_logparse *p, const char *s, const char *line)
{
	const char *it = strstr(s, "Training epoch ");
	double x, v, tflops = NAN;
	long iter, total = 0;
	char *end;

	if (!it || !(it = strstr(it, ", iteration ")))
		return 0;
	iter = strtol(it + 12, &end, 10);
	if (end == it + 12)
		return 0;
	if (*end == '/')
		total = strtol(end + 1, NULL, 10) + 1;
	progress(p, iter + 1, total, line);
	if (num_after(s, "max_memory_allocated:", &v))
		logparse_mem(p, v, -1);
	if (num_after(s, "max_memory_reserved:", &v))
		logparse_mem(p, -1, v);
	if (num_after(s, "peak_memory_usage:", &v))
		logparse_mem(p, -1, v);
	if (strstr(s, "max_memory_allocated:") || strstr(s, "max_memory_reserved:") ||
	    strstr(s, "peak_memory_usage:"))
		p->mem_lines++;
	if (num_after(s, "TFLOPS_per_GPU:", &v))
		tflops = v;
	if (num_after(s, "train_step_timing in s:", &x))
		add_step(p, iter + 1, x, tflops, MT_LOGF_NEMO2);
	if (strstr(s, "reduced_train_loss: nan"))
		logparse_fail(p, MT_VS_NAN, line);
	return 1;
}

/* Lightning: "Epoch E: ...| N/M [..., train_step_timing in s=X]" */
static int lightning_line(struct mt_logparse *p, const char *s, const char *line)
{
	const char *e = strstr(s, "Epoch "), *bar, *q;
	long n, total;
	double x;
	char *end;

	if (!e || !(bar = strstr(e, "%|")) || !(bar = strchr(bar + 2, '|')))
		return 0;
	q = bar + 1;
	while (*q == ' ')
		q++;
	n = strtol(q, &end, 10);
	if (end == q || *end != '/')
		return 0;
	total = strtol(end + 1, NULL, 10);
	progress(p, n, total, line);
	if (num_after(s, "train_step_timing in s=", &x))
		add_step(p, n, x, NAN, MT_LOGF_LIGHTNING);
	if (strstr(s, "reduced_train_loss=nan"))
		logparse_fail(p, MT_VS_NAN, line);
	return 1;
}

/* One report's four figures (bytes, NAN: not printed) */
static void mem_figures(const char *s, double unit, const char *const k[4], struct mt_logmem *m)
{
	double v;

	m->alloc_b = num_after(s, k[0], &v) ? v * unit : NAN;
	m->max_alloc_b = num_after(s, k[1], &v) ? v * unit : NAN;
	m->reserved_b = num_after(s, k[2], &v) ? v * unit : NAN;
	m->max_reserved_b = num_after(s, k[3], &v) ? v * unit : NAN;
	if (isnan(m->max_reserved_b) && num_after(s, "| max cached:", &v)) /* before 2020 */
		m->max_reserved_b = v * unit;
	if (isnan(m->reserved_b) && num_after(s, "| cached:", &v))
		m->reserved_b = v * unit;
}

/* Megatron-LM / Bridge memory reports: the worst rank's peaks, and each
 * rank's last report (the steady state) */
static void memory_line(struct mt_logparse *p, const char *s)
{
	static const char *const mb[4] = { "| allocated:", "| max allocated:", "| reserved:",
					   "| max reserved:" };
	static const char *const gb[4] = { "mem-allocated-gigabytes:", "mem-max-allocated-gigabytes:",
					   "mem-reserved-gigabytes:", "mem-max-reserved-gigabytes:" };
	const char *r = strstr(s, "[Rank ");
	struct mt_logmem m = { r ? atoi(r + 6) : -1, p->lineno, NAN, NAN, NAN, NAN };
	int i;

	if (strstr(s, "memory (MB)"))
		mem_figures(s, 1048576.0, mb, &m);
	else if (strstr(s, "memory (GB)"))
		mem_figures(s, 1e9, gb, &m);
	else
		return;
	if (isnan(m.max_alloc_b) && isnan(m.max_reserved_b))
		return;
	logparse_mem(p, isnan(m.max_alloc_b) ? -1 : m.max_alloc_b,
	    isnan(m.max_reserved_b) ? -1 : m.max_reserved_b);
	p->mem_lines++;
	for (i = 0; i < p->nmemr && p->memr[i].rank != m.rank; i++)
		;
	if (i == p->nmemr && p->nmemr < MT_LOG_MEM_RANKS)
		p->nmemr++;
	if (i < p->nmemr)
		p->memr[i] = m;
}

/* Bridge: "Step Time : Xs GPU utilization: T[ ]MODEL_TFLOP/s/GPU" */
static void steptime_line(struct mt_logparse *p, const char *s)
{
	double x, t = NAN, v;

	if (!num_after(s, "Step Time :", &x) || p->nst >= MT_LOG_MAX_STEPS)
		return;
	if (num_after(s, "GPU utilization:", &v))
		t = v;
	p->st_s[p->nst] = x;
	p->st_tflops[p->nst] = t;
	p->nst++;
}

static void failure_line(struct mt_logparse *p, const char *s, const char *line)
{
	double v;

	if (strstr(s, "CUDA out of memory") || strstr(s, "CUDA error: out of memory") ||
	    strstr(s, "Cuda failure 2 'out of memory'") || strstr(s, "OutOfMemoryError"))
		logparse_fail(p, MT_VS_OOM, line);
	if (strstr(s, "Watchdog caught collective operation timeout"))
		logparse_fail(p, MT_VS_NCCL_TIMEOUT, line);
	if (strstr(s, "NCCL error") || strstr(s, "ncclSystemError") ||
	    strstr(s, "ncclInternalError") || strstr(s, "ncclUnhandledCudaError") ||
	    strstr(s, "ncclInvalidUsage") || strstr(s, "ncclRemoteError"))
		logparse_fail(p, MT_VS_NCCL_ERROR, line);
	if (has_ci(s, "found NaN") || strstr(s, "grad norm: nan") || strstr(s, "lm loss: nan") ||
	    strstr(s, "loss is NaN") || (num_after(s, "number of nan iterations:", &v) && v > 0))
		logparse_fail(p, MT_VS_NAN, line);
}

/* the progress line a text starts, of any format (MT_LOGF_*), or 0: Megatron-LM's
 * `iteration N/`, NeMo 2's `Training epoch E, iteration`, a Lightning bar */
static int progress_kind(const char *s)
{
	const char *it = strstr(s, "iteration "), *e = strstr(s, "Epoch ");

	if (strstr(s, "Training epoch ") && strstr(s, ", iteration "))
		return MT_LOGF_NEMO2;
	if (e && strstr(e, "%|"))
		return MT_LOGF_LIGHTNING;
	for (; it; it = strstr(it + 10, "iteration ")) {
		const char *q = it + 10 + strspn(it + 10, " ");

		if (isdigit((unsigned char)*q) && q[strspn(q, "0123456789")] == '/')
			return MT_LOGF_MEGATRON;
	}
	return 0;
}

/* The partial last line: a progress line cut before its end is kept as the
 * cut and read for nothing; 1 then.  A Lightning bar is whole when closed by
 * ']' (its fields vary from bar to bar); an iteration line when it has as
 * many field separators as the whole ones, or with none read yet, a
 * Megatron-LM line closed by '|' (a NeMo 2 line then passes) */
static int cut_line(struct mt_logparse *p, const char *s, const char *line)
{
	int kind = progress_kind(s), whole;
	size_t n = strlen(s);

	if (!kind)
		return 0;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (kind == MT_LOGF_LIGHTNING)
		whole = n && s[n - 1] == ']';
	else if (p->whole_seps)
		whole = p->seps >= p->whole_seps;
	else
		whole = kind != MT_LOGF_MEGATRON || (n && s[n - 1] == '|');
	if (whole)
		return 0;
	p->cut_lineno = p->lineno;
	snprintf(p->cut_line, sizeof(p->cut_line), "%s", line);
	return 1;
}

void mt_logparse_line(struct mt_logparse *p, const char *line, size_t n)
{
	char buf[MT_LOG_LINE_MAX];
	const char *s, *q;

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, line, n);
	buf[n] = 0;
	p->lineno++;
	s = strip_prefix(buf);
	if (!s[strspn(s, " \t")])
		return;
	if (s[strspn(s, " \t-=*_#")]) { /* not a rule such as mpirun's banners */
		p->last_lineno = p->lineno;
		snprintf(p->last_line, sizeof(p->last_line), "%s", buf);
	}
	for (p->seps = 0, q = s; *q; q++)
		p->seps += *q == '|' || *q == ',' || *q == ']';
	if (p->at_end && cut_line(p, s, buf))
		return;
	if (has_ci(s, "error:")) {
		p->err_lineno = p->lineno;
		snprintf(p->err_line, sizeof(p->err_line), "%s", buf);
	}
	failure_line(p, s, buf);
	if (megatron_line(p, s, buf) || nemo2_line(p, s, buf) || lightning_line(p, s, buf))
		return;
	memory_line(p, s);
	steptime_line(p, s);
}

void mt_logparse_feed(struct mt_logparse *p, const char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char c = buf[i];

		if (c == '\n' && p->prev_cr) { /* the \n of a \r\n */
			p->prev_cr = 0;
			continue;
		}
		p->prev_cr = c == '\r';
		if (c == '\n' || c == '\r') {
			mt_logparse_line(p, p->part, p->plen);
			p->plen = 0;
			continue;
		}
		if (p->plen < sizeof(p->part) - 1)
			p->part[p->plen++] = c;
	}
}

void mt_logparse_finish(struct mt_logparse *p)
{
	int i;

	if (p->plen) { /* a last line without its newline: perhaps cut */
		p->at_end = 1;
		mt_logparse_line(p, p->part, p->plen);
		p->at_end = 0;
		p->plen = 0;
	}
	if (p->nstep == 0 && p->nst > 0) {
		for (i = 0; i < p->nst; i++)
			add_step(p, i + 1, p->st_s[i], p->st_tflops[i], MT_LOGF_STEPTIME);
		p->last_iter = p->nst;
	}
}

int mt_logparse_status(const struct mt_logparse *p)
{
	if (p->failure)
		return p->failure;
	return p->nstep > 0 ? MT_VS_OK : MT_VS_NO_ITERATIONS;
}

static const char *const format_names[] = {
	"none", "megatron", "nemo2", "lightning", "bridge-step-time",
};

void mt_logparse_text(struct sbuf *sb, const struct mt_logparse *p)
{
	int i, st = mt_logparse_status(p);

	sbuf_addf(sb, "format: %s\n", format_names[p->format]);
	sbuf_addf(sb, "lines: %ld\n", p->lineno);
	sbuf_addf(sb, "progress lines: %ld (last iteration %ld of %ld)\n", p->iter_lines,
		  p->last_iter, p->train_iters);
	sbuf_addf(sb, "steps: %d\n", p->nstep);
	for (i = 0; i < p->nstep; i++) {
		sbuf_addf(sb, "  iteration %ld: %.6g s", p->iter[i], p->step_s[i]);
		if (isfinite(p->log_tflops[i]))
			sbuf_addf(sb, ", %.6g TFLOP/s/GPU", p->log_tflops[i]);
		sbuf_addc(sb, '\n');
	}
	sbuf_addf(sb, "memory lines: %d\n", p->mem_lines);
	if (isfinite(p->mem_max_alloc_b))
		sbuf_addf(sb, "max allocated: %.6g GiB\n", p->mem_max_alloc_b / 1073741824.0);
	if (isfinite(p->mem_max_reserved_b))
		sbuf_addf(sb, "max reserved: %.6g GiB\n", p->mem_max_reserved_b / 1073741824.0);
	sbuf_addf(sb, "skipped iterations: %ld\nnan iterations: %ld\n", p->skipped, p->nan_iters);
	sbuf_addf(sb, "status: %s\n", mt_vstatus_name(st));
	if (p->skip_lineno)
		sbuf_addf(sb, "first skip: line %ld\n", p->skip_lineno);
	if (p->failure)
		sbuf_addf(sb, "evidence: line %ld: %s\n", p->evidence_lineno, p->evidence);
	if (p->cut_lineno)
		sbuf_addf(sb, "log cut: line %ld ends mid-line; its step is not counted: %s\n",
			  p->cut_lineno, p->cut_line);
}
