/* SPDX-License-Identifier: MIT */
/* validate: the top candidates of an advice run for real (validate.h). */
#include "validate.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../tuner/advice.h"
#include "../lib/jsonr.h"
#include "../lib/shell.h"
#include "../lib/stats.h"
#include "../lib/version.h"
#include "logparse.h"
#include "runner.h"

/* *dst freed and set to a copy of s (NULL: none); MT_ENOMEM (and *dst NULL)
 * when the copy cannot be made */
static int validate_set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? strdup(s) : NULL;
	return s && !*dst ? MT_ENOMEM : MT_OK;
}

static int nomem(struct mt_error *err)
{
	return mt_error_set(err, MT_ENOMEM, "out of memory");
}

static int validate_num(const cJSON *o, const char *key)
{
	return (int)mt_jget_num(o, key, 0);
}

/* c<rank>-tp..-pp..[-vpp..][-cp..][-ep..[-etp..]]-mbs..[-rc<kind>][-off..];
 * MT_ENOMEM when it cannot be formed */
static int cand_name(char *buf, size_t cap, int rank, const cJSON *cfg)
{
	struct sbuf sb;
	const char *rk = mt_jget_strd(cfg, "recompute", "none");
	int rc;

	sbuf_init(&sb);
	sbuf_addf(&sb, "c%d-tp%d-pp%d", rank, validate_num(cfg, "tp"), validate_num(cfg, "pp"));
	if (validate_num(cfg, "vpp") > 1)
		sbuf_addf(&sb, "-vpp%d", validate_num(cfg, "vpp"));
	if (validate_num(cfg, "cp") > 1)
		sbuf_addf(&sb, "-cp%d", validate_num(cfg, "cp"));
	if (validate_num(cfg, "ep") > 1) {
		sbuf_addf(&sb, "-ep%d", validate_num(cfg, "ep"));
		if (validate_num(cfg, "etp") > 1)
			sbuf_addf(&sb, "-etp%d", validate_num(cfg, "etp"));
	}
	sbuf_addf(&sb, "-mbs%d", validate_num(cfg, "mbs"));
	if (strcmp(rk, "none"))
		sbuf_addf(&sb, "-rc%.4s", rk);
	if (validate_num(cfg, "offload_layers") > 0)
		sbuf_addf(&sb, "-off%d", validate_num(cfg, "offload_layers"));
	snprintf(buf, cap, "%s", sb.buf ? sb.buf : "");
	rc = sb.failed ? MT_ENOMEM : MT_OK;
	sbuf_release(&sb);
	return rc;
}

static void now_iso(char *buf, size_t cap)
{
	time_t t = time(NULL);
	struct tm tmv;

	strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tmv));
}

void mt_validate_opts_init(struct mt_validate_opts *o, const char *dir)
{
	memset(o, 0, sizeof(*o));
	o->top = 5;
	o->backend = "cpu";
	o->probe_exe = "megatune-probe";
	o->dir = dir;
	o->iters = 20;
	o->warmup = 5;
	o->timeout_s = 600;
	o->grace_s = 10;
}

/* Each stage's predicted memory as the allocator counts it, from the advice
 * candidate's memory.stages (docs/FORMATS.md 3); none when it has none.
 * MT_ENOMEM when there is no room for it. */
static int stage_preds(struct mt_vcand *c, const cJSON *cand)
{
	const cJSON *arr = mt_jget(cand, "memory.stages"), *it;
	int n = cJSON_GetArraySize(arr), st;

	if (n <= 0 || n > 4096)
		return MT_OK;
	c->stage_pred = calloc((size_t)n, sizeof(*c->stage_pred));
	if (!c->stage_pred)
		return MT_ENOMEM;
	c->nstage_pred = n;
	for (st = 0; st < n; st++)
		c->stage_pred[st] = (struct mt_vmempred){ NAN, NAN, NAN };
	cJSON_ArrayForEach(it, arr) {
		st = (int)mt_jget_num(it, "stage", -1);
		if (st < 0 || st >= n)
			continue;
		c->stage_pred[st].allocated = mt_jget_num(it, "allocated_bytes", NAN);
		c->stage_pred[st].max_allocated = mt_jget_num(it, "max_allocated_bytes", NAN);
		c->stage_pred[st].reserved = mt_jget_num(it, "reserved_bytes", NAN);
	}
	return MT_OK;
}

int mt_validate_init(struct mt_validation *v, const cJSON *advice,
		     const struct mt_validate_opts *o, struct mt_error *err)
{
	struct mt_advice_doc d;
	char name[160], when[32];
	int rc, i, n;

	memset(v, 0, sizeof(*v));
	if ((rc = mt_advice_read(advice, o->advice_path, "--advice", &d, err)) != MT_OK)
		return rc;
	if (d.ncand == 0) {
		mt_advice_doc_free(&d);
		return mt_error_set(err, MT_EINVAL, "%s: field 'candidates': expected at least one "
				    "candidate, got none (nothing feasible to validate)",
				    o->advice_path);
	}
	n = o->top > 0 && o->top < d.ncand ? o->top : d.ncand;
	now_iso(when, sizeof(when));
	if (validate_set_str(&v->megatune_version, MEGATUNE_VERSION) || validate_set_str(&v->created, when) ||
	    validate_set_str(&v->advice, o->advice_path) || validate_set_str(&v->model, d.model) ||
	    validate_set_str(&v->cluster, d.cluster) || validate_set_str(&v->mode, o->proxy ? "proxy" : "launch"))
		goto nomem;
	v->gpus = isfinite(d.gpus) ? (int)d.gpus : 0;
	v->seq = isfinite(d.seq) ? (int)d.seq : 0;
	v->gbs = isfinite(d.gbs) ? (int)d.gbs : 0;
	v->iters = o->iters;
	v->warmup = o->warmup;
	v->cand = calloc((size_t)n, sizeof(*v->cand));
	if (!v->cand)
		goto nomem;
	for (i = 0; i < n; i++) {
		struct mt_vcand *c = &v->cand[i];
		const cJSON *j = d.cand[i].json, *cfg = mt_jget(j, "config");

		v->ncand++; /* freed with v from here on */
		c->predicted_rank = isfinite(d.cand[i].rank) ? (int)d.cand[i].rank : i + 1;
		if (cand_name(name, sizeof(name), c->predicted_rank, cfg) ||
		    validate_set_str(&c->name, name))
			goto nomem;
		c->config = cJSON_IsObject(cfg) ? cJSON_Duplicate(cfg, 1) : NULL;
		if (cJSON_IsObject(cfg) && !c->config)
			goto nomem;
		c->status = MT_VS_NOT_RUN;
		c->wall_s = NAN;
		c->tune_corrected_s = NAN;
		c->pred.step_s = mt_jget_num(j, "time.step_s", NAN);
		c->pred.tokens_per_s_per_gpu = mt_jget_num(j, "throughput.tokens_per_s_per_gpu", NAN);
		c->pred.tflops_per_gpu = mt_jget_num(j, "throughput.model_tflops_per_gpu", NAN);
		c->pred.mem_gib = mt_jget_num(j, "memory.total_bytes", NAN) / 1073741824.0;
		if (stage_preds(c, j))
			goto nomem;
	}
	mt_advice_doc_free(&d);
	return MT_OK;
nomem:
	mt_advice_doc_free(&d);
	mt_validation_free(v);
	return nomem(err);
}

static int copy_run(struct mt_vcand *to, const struct mt_vcand *from)
{
	to->status = from->status;
	to->evidence_lineno = from->evidence_lineno;
	if (validate_set_str(&to->evidence_line, from->evidence_line) ||
	    validate_set_str(&to->reason, from->reason) || validate_set_str(&to->log, from->log) ||
	    validate_set_str(&to->command, from->command))
		return MT_ENOMEM;
	to->wall_s = from->wall_s;
	to->has_measured = from->has_measured;
	to->meas = from->meas;
	to->tune_run = from->tune_run;
	to->tune_fitted_from = from->tune_fitted_from;
	to->tune_corrected_s = from->tune_corrected_s;
	free(to->memr);
	to->memr = NULL;
	to->nmemr = 0;
	if (from->nmemr > 0) {
		to->memr = malloc((size_t)from->nmemr * sizeof(*to->memr));
		if (!to->memr)
			return MT_ENOMEM;
		memcpy(to->memr, from->memr, (size_t)from->nmemr * sizeof(*to->memr));
		to->nmemr = from->nmemr;
	}
	return MT_OK;
}

int mt_validate_resume(struct mt_validation *v, const struct mt_validation *prev)
{
	int i, k;

	for (i = 0; i < v->ncand; i++)
		for (k = 0; k < prev->ncand; k++)
			if (prev->cand[k].status != MT_VS_NOT_RUN &&
			    !strcmp(prev->cand[k].name, v->cand[i].name) &&
			    copy_run(&v->cand[i], &prev->cand[k]) != MT_OK)
				return MT_ENOMEM;
	return MT_OK;
}

/* ------------------------------------------------------------ commands */

struct fill_ctx {
	const struct mt_validation *v;
	const struct mt_validate_opts *o;
	const cJSON *cand;
	int i, gpn;
	char vals[8][64];
	struct sbuf args, bridge, env, dir, log, advice;
};

static void quoted_list(struct sbuf *sb, const cJSON *arr)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr) {
		if (!cJSON_IsString(it))
			continue;
		if (sb->len)
			sbuf_addc(sb, ' ');
		mt_shell_word(sb, it->valuestring);
	}
}

static const char *lookup(const char *key, void *vctx)
{
	struct fill_ctx *x = vctx;
	int gpus = x->v->gpus > 0 ? x->v->gpus : 1;
	int gpn = x->gpn > 0 ? x->gpn : gpus;
	if (!strcmp(key, "megatron_args"))
		return x->args.buf ? x->args.buf : "";
	if (!strcmp(key, "bridge_overrides"))
		return x->bridge.buf ? x->bridge.buf : "";
	if (!strcmp(key, "env"))
		return x->env.buf ? x->env.buf : "";
	if (!strcmp(key, "dir"))
		return x->dir.buf;
	if (!strcmp(key, "log"))
		return x->log.buf;
	if (!strcmp(key, "advice"))
		return x->advice.buf;
	if (!strcmp(key, "name"))
		return x->v->cand[x->i].name;
	if (!strcmp(key, "gpus"))
		return snprintf(x->vals[0], 64, "%d", gpus), x->vals[0];
	if (!strcmp(key, "gpus_per_node"))
		return snprintf(x->vals[1], 64, "%d", gpus < gpn ? gpus : gpn), x->vals[1];
	if (!strcmp(key, "nodes"))
		return snprintf(x->vals[2], 64, "%d", gpus < gpn ? 1 : gpus / gpn), x->vals[2];
	if (!strcmp(key, "iters"))
		return snprintf(x->vals[3], 64, "%d", x->o->iters), x->vals[3];
	if (!strcmp(key, "warmup"))
		return snprintf(x->vals[4], 64, "%d", x->o->warmup), x->vals[4];
	if (!strcmp(key, "rank"))
		return snprintf(x->vals[5], 64, "%d", x->v->cand[x->i].predicted_rank), x->vals[5];
	return NULL;
}

static const cJSON *advice_cand(const cJSON *advice, int i)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(advice, "candidates"), i);
}

int mt_validate_command(const struct mt_validation *v, const cJSON *advice, int i,
			const struct mt_validate_opts *o, struct sbuf *sb, struct mt_error *err)
{
	struct fill_ctx x;
	const cJSON *it, *envo;
	char logp[4096];
	int rc;

	memset(&x, 0, sizeof(x));
	x.v = v;
	x.o = o;
	x.i = i;
	x.cand = advice_cand(advice, i);
	x.gpn = (int)mt_jget_num(advice, "cluster.gpus_per_node", 0);
	sbuf_init(&x.args);
	sbuf_init(&x.bridge);
	sbuf_init(&x.env);
	sbuf_init(&x.dir);
	sbuf_init(&x.log);
	sbuf_init(&x.advice);
	quoted_list(&x.args, mt_jget(x.cand, "megatron_args"));
	quoted_list(&x.bridge, mt_jget(x.cand, "bridge_overrides"));
	envo = mt_jget(x.cand, "env");
	cJSON_ArrayForEach(it, envo) {
		char kv[1024];

		if (!cJSON_IsString(it))
			continue;
		snprintf(kv, sizeof(kv), "%s=%s", it->string, it->valuestring);
		if (x.env.len)
			sbuf_addc(&x.env, ' ');
		mt_shell_word(&x.env, kv);
	}
	mt_shell_word(&x.dir, o->dir);
	snprintf(logp, sizeof(logp), "%s/%s.log", o->dir, v->cand[i].name);
	mt_shell_word(&x.log, logp);
	mt_shell_word(&x.advice, o->advice_path);
	if (o->proxy) {
		const char *pre = o->mpirun ? o->mpirun : "mpirun -np {gpus}";

		rc = mt_template_fill(pre, lookup, &x, sb, err);
		if (rc == MT_OK) {
			if (*pre)
				sbuf_addc(sb, ' ');
			mt_shell_word(sb, o->probe_exe);
			sbuf_adds(sb, " proxy --advice ");
			sbuf_adds(sb, x.advice.buf);
			/* the proxy prints every iteration, as Megatron-LM does: the
			 * warm-up is dropped here, from the log, once */
			sbuf_addf(sb, " --candidate %d --backend %s --iters %d --warmup 0",
				  v->cand[i].predicted_rank, o->backend, o->iters);
		}
	} else {
		rc = mt_template_fill(o->launch, lookup, &x, sb, err);
	}
	if (rc == MT_OK && (x.args.failed || x.bridge.failed || x.env.failed || x.dir.failed ||
			    x.log.failed || x.advice.failed || sb->failed))
		rc = nomem(err);
	sbuf_release(&x.args);
	sbuf_release(&x.bridge);
	sbuf_release(&x.env);
	sbuf_release(&x.dir);
	sbuf_release(&x.log);
	sbuf_release(&x.advice);
	return rc;
}

/* ------------------------------------------------------------ running */

static int validate_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* each rank's last memory report beside its stage's prediction; MT_ENOMEM
 * (none kept) when there is no room for them */
static int memory_ranks(struct mt_vcand *c, const struct mt_logparse *p, int gpus)
{
	int pp = (int)mt_jget_num(c->config, "pp", c->nstage_pred > 0 ? c->nstage_pred : 1), i;

	free(c->memr);
	c->memr = NULL;
	c->nmemr = 0;
	if (p->nmemr <= 0)
		return MT_OK;
	c->memr = calloc((size_t)p->nmemr, sizeof(*c->memr));
	if (!c->memr)
		return MT_ENOMEM;
	for (i = 0; i < p->nmemr; i++) {
		const struct mt_logmem *m = &p->memr[i];
		struct mt_vmemrank *r = &c->memr[i];

		r->rank = m->rank;
		r->stage = mt_rank_stage(m->rank, gpus, pp);
		r->lineno = m->lineno;
		r->allocated = m->alloc_b;
		r->max_allocated = m->max_alloc_b;
		r->reserved = m->reserved_b;
		r->max_reserved = m->max_reserved_b;
		r->pred = r->stage >= 0 && r->stage < c->nstage_pred
				  ? c->stage_pred[r->stage]
				  : (struct mt_vmempred){ NAN, NAN, NAN };
	}
	c->nmemr = p->nmemr;
	return MT_OK;
}

/* the measured figures of the steady steps (iteration > warmup); *steady:
 * how many (0: none).  MT_ENOMEM when there is no room to sort them. */
static int validate_measure(struct mt_vcand *c, const struct mt_logparse *p, const struct mt_validation *v,
		   double flops_step, int warmup, int *steady)
{
	struct mt_vmeas *m = &c->meas;
	double *x = malloc(sizeof(double) * (size_t)(p->nstep + 1));
	double *t = malloc(sizeof(double) * (size_t)(p->nstep + 1));
	int i, n = 0, nt = 0;

	*steady = 0;
	if (!x || !t || memory_ranks(c, p, v->gpus) != MT_OK) {
		free(x);
		free(t);
		return MT_ENOMEM;
	}
	for (i = 0; i < p->nstep; i++) {
		if (p->iter[i] <= warmup)
			continue;
		x[n++] = p->step_s[i];
		if (isfinite(p->log_tflops[i]))
			t[nt++] = p->log_tflops[i];
	}
	memset(m, 0, sizeof(*m));
	c->has_measured = n > 0;
	if (n > 0) {
		qsort(x, (size_t)n, sizeof(*x), validate_cmp_double);
		m->step_n = n;
		m->step_s = mt_quantile_sorted(x, n, 0.5);
		m->step_iqr_s = mt_quantile_sorted(x, n, 0.75) - mt_quantile_sorted(x, n, 0.25);
		m->step_min_s = x[0];
		m->step_max_s = x[n - 1];
		m->tokens_per_s_per_gpu = v->gpus > 0 ? (double)v->gbs * v->seq / m->step_s / v->gpus
						      : NAN;
		m->tflops_per_gpu = v->gpus > 0 && flops_step > 0
					    ? flops_step / m->step_s / v->gpus / 1e12 : NAN;
		m->log_tflops_per_gpu = nt ? mt_median(t, (size_t)nt) : NAN;
		m->mem_max_allocated_gib = p->mem_max_alloc_b / 1073741824.0;
		m->mem_max_reserved_gib = p->mem_max_reserved_b / 1073741824.0;
		m->skipped_iterations = p->skipped;
	}
	free(x);
	free(t);
	*steady = n;
	return MT_OK;
}

static int set_reason(struct mt_vcand *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int set_reason(struct mt_vcand *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return validate_set_str(&c->reason, buf);
}

static int validate_evidence(struct mt_vcand *c, const char *line, long lineno)
{
	c->evidence_lineno = lineno;
	return validate_set_str(&c->evidence_line, lineno > 0 ? line : NULL);
}

static const char *exit_text(const struct mt_run_result *r, char *buf, size_t cap)
{
	if (r->signo)
		snprintf(buf, cap, "killed by signal %d (%s)", r->signo, strsignal(r->signo));
	else if (r->exit_code > 128 && r->exit_code < 128 + 65)
		snprintf(buf, cap, "exit status %d (128 + signal %d, %s, as a shell reports it)",
			 r->exit_code, r->exit_code - 128, strsignal(r->exit_code - 128));
	else
		snprintf(buf, cap, "exit status %d", r->exit_code);
	return buf;
}

/* status, evidence and reason from how the run ended and what the log said;
 * MT_ENOMEM when the evidence or the reason cannot be kept */
static int validate_judge(struct mt_vcand *c, const struct mt_logparse *p, const struct mt_run_result *r,
		 const struct mt_validate_opts *o, int steady)
{
	char how[128];
	int failed = r->signo || r->exit_code != 0;
	int rc;

	exit_text(r, how, sizeof(how));
	if (r->end == MT_RUN_INTERRUPTED || r->end == MT_RUN_BUDGET) {
		c->status = MT_VS_NOT_RUN;
		c->has_measured = 0;
		if ((rc = validate_evidence(c, NULL, 0)))
			return rc;
		return set_reason(c, r->end == MT_RUN_BUDGET ? "the --budget ended during the run"
							     : "interrupted during the run");
	}
	if (p->failure) {
		c->status = p->failure;
		if ((rc = validate_evidence(c, p->evidence, p->evidence_lineno)) ||
		    (rc = set_reason(c, "%s at line %ld of the log; %s", mt_vstatus_name(p->failure),
				     p->evidence_lineno,
				     r->end == MT_RUN_HANG ? "then no progress" : how)))
			return rc;
	} else if (r->end == MT_RUN_HANG) {
		c->status = MT_VS_HANG;
		if (p->last_iter_lineno)
			rc = validate_evidence(c, p->last_iter_line, p->last_iter_lineno);
		else
			rc = validate_evidence(c, p->last_line, p->last_lineno);
		if (rc || (rc = set_reason(c, "no new iteration line for %g s (--timeout): the "
					   "process group was sent SIGTERM, then SIGKILL",
					   o->timeout_s)))
			return rc;
	} else if (failed) {
		c->status = MT_VS_EXIT;
		if (p->err_lineno)
			rc = validate_evidence(c, p->err_line, p->err_lineno);
		else
			rc = validate_evidence(c, p->last_line, p->last_lineno);
		if (rc || (rc = set_reason(c, "%s%s", how,
					   r->exit_code == 127 ? " (command not found)" : "")))
			return rc;
	} else if (!steady) {
		c->status = MT_VS_NO_ITERATIONS;
		if ((rc = validate_evidence(c, p->skip_line, p->skip_lineno)))
			return rc;
		if (p->skipped && !p->nstep)
			rc = set_reason(c, "every logged iteration was skipped (%ld; fp16 loss scale "
					"or non-finite gradients), the first reported at line %ld",
					p->skipped, p->skip_lineno);
		else if (p->nstep)
			rc = set_reason(c, "%d iteration line(s), none after the %d warm-up iterations",
					p->nstep, o->warmup);
		else
			rc = set_reason(c, "no iteration line in the log (%ld lines)", p->lineno);
		if (rc)
			return rc;
	} else {
		c->status = MT_VS_OK;
		if ((rc = validate_evidence(c, p->skip_line, p->skip_lineno)) ||
		    (rc = validate_set_str(&c->reason, NULL)))
			return rc;
		if (p->skipped && (rc = set_reason(c, "%ld iteration(s) skipped (fp16 loss scale or "
						   "non-finite gradients), the first reported at "
						   "line %ld", p->skipped, p->skip_lineno)))
			return rc;
	}
	if (p->cut_lineno) /* said whatever the status: the last step is not in it */
		return set_reason(c, "%s%slog cut: line %ld ends mid-line; its step is not counted",
				  c->reason ? c->reason : "", c->reason ? "; " : "", p->cut_lineno);
	return MT_OK;
}

static void progress_line(const struct mt_validate_opts *o, const struct mt_validation *v, int i)
{
	const struct mt_vcand *c = &v->cand[i];

	if (!o->progress)
		return;
	fprintf(o->progress, "[%d/%d] %s: %s", i + 1, v->ncand, c->name,
		mt_vstatus_name(c->status));
	if (c->status == MT_VS_OK)
		fprintf(o->progress, ", step %.4g s (n %d, predicted %.4g s, %+.1f%%)",
			c->meas.step_s, c->meas.step_n, c->pred.step_s,
			100 * mt_vrel(c->meas.step_s, c->pred.step_s));
	if (c->evidence_line)
		fprintf(o->progress, ", line %ld: %.160s", c->evidence_lineno, c->evidence_line);
	else if (c->reason && c->status != MT_VS_OK)
		fprintf(o->progress, ": %s", c->reason);
	if (c->reason && (c->status == MT_VS_OK || c->evidence_line)) /* skipped steps, a cut log */
		fprintf(o->progress, "; %s", c->reason);
	fputc('\n', o->progress);
	fflush(o->progress);
}

int mt_validate_one(struct mt_validation *v, const cJSON *advice, int i,
		    const struct mt_validate_opts *o, struct mt_error *err)
{
	struct mt_vcand *c = &v->cand[i];
	struct mt_logparse *p;
	struct mt_run_result r;
	struct mt_run_opts ro;
	struct sbuf cmd;
	char logp[4096];
	int rc, steady;

	sbuf_init(&cmd);
	if ((rc = mt_validate_command(v, advice, i, o, &cmd, err)) != MT_OK ||
	    (rc = mt_program_check(cmd.buf, "the --launch template", err)) != MT_OK) {
		sbuf_release(&cmd);
		return rc;
	}
	mkdir(o->dir, 0755);
	snprintf(logp, sizeof(logp), "%s/%s.log", o->dir, c->name);
	p = malloc(sizeof(*p));
	if (!p) {
		sbuf_release(&cmd);
		return nomem(err);
	}
	mt_logparse_init(p);
	memset(&ro, 0, sizeof(ro));
	ro.command = cmd.buf;
	ro.log_path = logp;
	ro.timeout_s = o->timeout_s;
	ro.grace_s = o->grace_s;
	ro.deadline = o->deadline;
	ro.stop = o->stop;
	rc = mt_run(&ro, p, &r, err);
	if (rc == MT_OK &&
	    (validate_measure(c, p, v, mt_jget_num(advice_cand(advice, i), "throughput.model_flops_per_step",
					  NAN), o->warmup, &steady) ||
	     validate_judge(c, p, &r, o, steady) || validate_set_str(&c->log, logp) ||
	     validate_set_str(&c->command, cmd.buf)))
		rc = nomem(err);
	if (rc == MT_OK) {
		c->wall_s = r.wall_s;
		progress_line(o, v, i);
		if (o->out)
			rc = mt_validation_write(o->out, v, err);
	}
	free(p);
	sbuf_release(&cmd);
	return rc;
}

int mt_validate_from_log(struct mt_validation *v, int i, const struct mt_logparse *p,
			 double flops_step, int warmup, const char *log)
{
	struct mt_vcand *c = &v->cand[i];
	struct mt_validate_opts o;
	struct mt_run_result r;
	int steady;

	memset(&o, 0, sizeof(o));
	o.warmup = warmup;
	memset(&r, 0, sizeof(r)); /* the command ended by itself, status 0 */
	v->warmup = warmup;
	if (validate_measure(c, p, v, flops_step, warmup, &steady) || validate_judge(c, p, &r, &o, steady) ||
	    validate_set_str(&c->log, log))
		return MT_ENOMEM;
	return MT_OK;
}

int mt_validate_all(struct mt_validation *v, const cJSON *advice,
		    const struct mt_validate_opts *o, struct mt_error *err)
{
	int i, rc = MT_OK;

	for (i = 0; i < v->ncand; i++) {
		struct mt_vcand *c = &v->cand[i];

		if (c->status != MT_VS_NOT_RUN)
			continue;
		if (o->stop && *o->stop) {
			if (set_reason(c, "interrupted before the run"))
				return nomem(err);
			continue;
		}
		if (o->deadline > 0 && mt_now() > o->deadline) {
			if (set_reason(c, "the --budget ended before the run"))
				return nomem(err);
			continue;
		}
		if ((rc = mt_validate_one(v, advice, i, o, err)) != MT_OK)
			return rc;
	}
	if (o->out)
		rc = mt_validation_write(o->out, v, err);
	return rc;
}

static void validate_fig(struct sbuf *sb, const char *fmt, double v)
{
	if (isfinite(v))
		sbuf_addf(sb, fmt, v);
	else
		sbuf_addf(sb, "%9s", "-");
}

int mt_validation_text(struct sbuf *sb, struct mt_validation *v)
{
	int i;

	if (mt_validation_summarize(v) != MT_OK)
		return MT_ENOMEM;
	sbuf_addf(sb, "%-32s %4s %9s %9s %8s %9s %9s  %s\n", "candidate", "pred", "pred s",
		  "meas s", "error", "tok/s/gpu", "max GiB", "status");
	for (i = 0; i < v->ncand; i++) {
		const struct mt_vcand *c = &v->cand[i];
		int m = c->has_measured;

		sbuf_addf(sb, "%-32s %4d ", c->name, c->predicted_rank);
		validate_fig(sb, "%9.4g", c->pred.step_s);
		sbuf_addc(sb, ' ');
		validate_fig(sb, "%9.4g", m ? c->meas.step_s : NAN);
		sbuf_addc(sb, ' ');
		if (m && isfinite(mt_vrel(c->meas.step_s, c->pred.step_s)))
			sbuf_addf(sb, "%+7.1f%%", 100 * mt_vrel(c->meas.step_s, c->pred.step_s));
		else
			sbuf_addf(sb, "%8s", "-");
		sbuf_addc(sb, ' ');
		validate_fig(sb, "%9.0f", m ? c->meas.tokens_per_s_per_gpu : NAN);
		sbuf_addc(sb, ' ');
		validate_fig(sb, "%9.2f", m ? c->meas.mem_max_reserved_gib : NAN);
		sbuf_addf(sb, "  %s", mt_vstatus_name(c->status));
		if (c->evidence_line)
			sbuf_addf(sb, " (line %ld: %.100s)", c->evidence_lineno, c->evidence_line);
		else if (c->reason && c->status != MT_VS_OK)
			sbuf_addf(sb, " (%s)", c->reason);
		sbuf_addc(sb, '\n');
	}
	sbuf_addf(sb, "\nmeasured ranking:");
	for (i = 0; i < v->sum.nranked; i++)
		sbuf_addf(sb, " %d. %s", i + 1, v->sum.measured_ranking[i]);
	if (!v->sum.nranked)
		sbuf_adds(sb, " none (no candidate ran to the end)");
	sbuf_addf(sb, "\n%d ok, %d failed, %d not run", v->sum.ok, v->sum.failed, v->sum.not_run);
	if (isfinite(v->sum.kendall_tau))
		sbuf_addf(sb, "; Kendall's tau (predicted vs measured step) %.3f", v->sum.kendall_tau);
	if (isfinite(v->sum.mae_step_s))
		sbuf_addf(sb, "; mean absolute error of the step %.4g s (%.1f%%)", v->sum.mae_step_s,
			  100 * v->sum.mape_step);
	sbuf_addc(sb, '\n');
	return sb->failed ? MT_ENOMEM : MT_OK;
}
