/* SPDX-License-Identifier: MIT */
/* text: a check as text (docs/CHECK.md section 1): the job, as it is and its
 * diagnoses, the log's run measured beside predicted, the changes; and the
 * closing lines of several jobs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../reports/advice.h"
#include "../tuner/suggest.h"
#include "check_memory.h"
#include "state.h"

static double gain_of(const struct check_base *b, const struct found *f)
{
	return check_gain(b, &f->e);
}

/* The job's header lines: its file, model, GPUs, flags not modelled, notes */
static void text_job(struct sbuf *sb, const struct mt_check *t)
{
	const struct mt_jobsrc *src = t->src;
	const struct mt_megatron_job *mj = t->mj;
	int i;

	sbuf_addf(sb, "megatune check: %s (%s%s%s)\n", src->file, check_kind_name(src->kind, 0),
		  src->entry[0] ? ": " : "", src->entry);
	sbuf_addf(sb, "  model: %s, %d layers, hidden %d, %d heads, %.1fB parameters%s\n",
		  mj->model.name, mj->model.layers, mj->model.hidden, mj->model.heads,
		  mj->model.params_total / 1e9, mj->model.experts ? " (MoE)" : "");
	sbuf_addf(sb, "  job: %d GPUs of %s (%s), seq %d, global batch %lld\n", mj->job.gpus,
		  t->c->name, mj->gpus_from, mj->job.seq, (long long)mj->job.gbs);
	if (mj->nunknown && check_lists_every_field(src->kind)) {
		/* the block and the saved configs hold every field, set or default */
		sbuf_addf(sb, "  not modelled: %d other field%s of the %s (it holds every field, set "
			  "or default; --json lists them)\n", mj->nunknown, mj->nunknown > 1 ? "s" : "",
			  src->kind == MT_JS_ARGBLOCK ? "arguments block" : "config");
	} else if (mj->nunknown) {
		sbuf_addf(sb, "  not modelled (%d %s megatune does not time):", mj->nunknown,
			  src->format == MT_JF_MEGATRON ? (mj->nunknown > 1 ? "flags" : "flag") :
			  (mj->nunknown > 1 ? "keys" : "key"));
		for (i = 0; i < mj->nunknown; i++) {
			char name[128];

			check_arg_name(src, mj->unknown[i], name, sizeof(name));
			sbuf_addf(sb, "%s %s (line %d)", i ? "," : "", name, src->line[mj->unknown[i]]);
		}
		sbuf_adds(sb, "\n");
	}
	i = mt_jobsrc_find(src, "transformer-impl");
	if (i >= 0 && !strcmp(src->arg[i].val, "local"))
		sbuf_adds(sb, "  Megatron-LM's own layers (--transformer-impl local): timed as the PyTorch "
			  "eager kernels they run, the unfused attention's score matrix, the norms, RoPE, "
			  "the activation and the residual adds each with its HBM traffic, and the host's "
			  "issue of each kernel; the fusions the job turns off as their eager ops; the "
			  "optimizer step Megatron-LM falls back to without Transformer Engine and Apex "
			  "(torch's AdamW, a loop over the parameter tensors for the norm and the "
			  "clipping) (docs/MODEL.md 4.11)\n");
	if (mj->nfusion_off) {
		sbuf_adds(sb, "  timed as fused (Megatron-LM's default; the job turns the fusion off and "
			  "runs slower than timed):");
		for (i = 0; i < mj->nfusion_off; i++) {
			char name[128];

			check_arg_name(src, mj->fusion_off[i], name, sizeof(name));
			sbuf_addf(sb, "%s %s", i ? "," : "", name);
		}
		sbuf_adds(sb, "\n");
	}
	if (src->nskipped)
		sbuf_addf(sb, "  not timed: %d key%s of sections that do not change the step time "
			  "(checkpoint, logger, scheduler, ...)\n", src->nskipped,
			  src->nskipped > 1 ? "s" : "");
	for (i = 0; i < src->nnotes; i++)
		sbuf_addf(sb, "  note: %s\n", src->notes[i]);
}

/* The job as it is and its diagnoses */
static void text_as_is(struct sbuf *sb, const struct mt_check *t)
{
	const struct mt_megatron_job *mj = t->mj;
	struct sbuf est = SBUF_INIT;
	int n;

	sbuf_adds(sb, "\nas it is:\n");
	if (t->cant[0]) {
		sbuf_addf(sb, "  ! megatune cannot time the job as written: %s\n", t->cant);
		if (check_span_domains(&mj->cfg, t->c))
			sbuf_addf(sb, "  ! TP %d spans %d NVLink domains of %d GPUs: its collectives cross "
				  "the network, each layer's all-gathers and reduce-scatters at the NICs' "
				  "bandwidth\n", mj->cfg.tp,
				  (mj->cfg.tp + t->c->nvlink_domain - 1) / t->c->nvlink_domain,
				  t->c->nvlink_domain);
		return;
	}
	mt_estimate_text(&est, &mj->model, t->c, &mj->job, &t->as, -1, &t->ar);
	sbuf_add(sb, est.buf, est.len);
	sbuf_release(&est);
	sbuf_adds(sb, "\ndiagnoses (what the job departs from, each with its rule):\n");
	n = check_diagnoses(sb, NULL, t->run ? &t->as_ex : NULL);
	if (!t->as.feasible) {
		sbuf_addf(sb, "  ! the job does not fit: %.1f GiB per GPU on its most loaded stage, "
			  "%.1f GiB usable (the memory table above)\n", t->as.mem.total / (1u << 30),
			  t->c->memory_bytes * (1 - mj->job.mem_headroom) / (1u << 30));
		n++;
	}
	n += check_env_gaps(sb, NULL, t->src, t->want_env, t->nwant);
	if (!n)
		sbuf_adds(sb, "  none\n");
}

/* Measured beside predicted: the log's steady steps, memory and failure */
static void text_measured(struct sbuf *sb, const struct mt_check *t)
{
	const struct mt_vcand *c = t->has_run ? &t->v.cand[0] : NULL;

	if (!c)
		return;
	sbuf_addf(sb, "\nmeasured (the log: %d iteration line%s):\n", t->lp->nstep,
		  t->lp->nstep == 1 ? "" : "s");
	if (c->has_measured) {
		sbuf_addf(sb, "  step %.3f s (median of %d after iteration %d; IQR %.3f s) against "
			  "%.3f s predicted: %+.1f%%\n", c->meas.step_s, c->meas.step_n, t->warmup,
			  c->meas.step_iqr_s, c->pred.step_s,
			  100 * mt_vrel(c->meas.step_s, c->pred.step_s));
		sbuf_addf(sb, "  %.0f tokens/s per GPU (predicted %.0f), %.1f model TFLOP/s per GPU "
			  "(predicted %.1f)\n", c->meas.tokens_per_s_per_gpu,
			  c->pred.tokens_per_s_per_gpu, c->meas.tflops_per_gpu, c->pred.tflops_per_gpu);
	}
	if (c->nmemr)
		check_memory_ranks(sb, NULL, c);
	else if (isfinite(c->meas.mem_max_reserved_gib) && c->has_measured)
		sbuf_addf(sb, "  memory: %.1f GiB reserved at most (worst rank) against %.1f GiB "
			  "predicted\n", c->meas.mem_max_reserved_gib, c->pred.mem_gib);
	sbuf_addf(sb, "  status: %s", mt_vstatus_name(c->status));
	if (c->reason)
		sbuf_addf(sb, " (%s)", c->reason);
	sbuf_adds(sb, "\n");
	if (c->evidence_line && c->status != MT_VS_OK)
		sbuf_addf(sb, "  line %ld: %s\n", c->evidence_lineno, c->evidence_line);
}

/* The changes: one knob, two, everything */
static void text_changes(struct sbuf *sb, const struct mt_check *t)
{
	int one = t->best1.feasible && (!t->as_ok || gain_of(&t->base, &t->best1) >= MIN_GAIN);
	int two = t->best2.feasible && (!t->best1.feasible ||
					t->best2.e.time.step < t->best1.e.time.step * (1 - MIN_GAIN));
	int all = t->overall.feasible && (!t->as_ok || gain_of(&t->base, &t->overall) >= MIN_GAIN);
	double m = t->base.measured, p = t->as.time.step;
	int i;

	if (mt_check_nothing_fits(t)) {
		struct mt_search_result *res = calloc(1, sizeof(*res));

		sbuf_adds(sb, "\nno change of the knobs makes the job fit");
		if (res && mt_suggest_fits(&t->mj->model, t->c, &t->mj->job, res) > 0) {
			sbuf_adds(sb, "; changes of the job that do:\n");
			for (i = 0; i < res->nsugg; i++)
				sbuf_addf(sb, "  %s\n", res->sugg[i].change);
		} else {
			sbuf_adds(sb, "\n");
		}
		free(res);
	}
	/* the basis of the changes, said once (check_change.h) */
	if (m > 0 && (one || two || all))
		sbuf_addf(sb, "\nevery change below is stated against the measured step: the model's "
			  "ratio applied to\n%.3f s, its band widened by the %.2fx the model is off here\n",
			  m, m >= p ? m / p : p / m);
	if (one)
		check_changes_show(sb, NULL, "one knob", &t->best1, t);
	else if (t->as_ok)
		sbuf_adds(sb, "\none knob: no single change gains 0.5% or more\n");
	else
		sbuf_adds(sb, "\none knob: no single change makes the job run and fit\n");
	if (two)
		check_changes_show(sb, NULL, "two knobs", &t->best2, t);
	if (all)
		check_changes_show(sb, NULL, "best overall", &t->overall, t);
	else if (t->as_ok && t->overall.feasible)
		sbuf_adds(sb, "\nbest overall: the job is within 0.5% of the best megatune finds\n");
	sbuf_addf(sb, "\n(%lld searches from the job; docs/CHECK.md)\n", t->x.searches);
}

int mt_check_text(struct sbuf *sb, const struct mt_check *t, struct mt_error *err)
{
	text_job(sb, t);
	text_as_is(sb, t);
	text_measured(sb, t);
	text_changes(sb, t);
	return sb->failed ? mt_error_set(err, MT_ENOMEM, "out of memory") : MT_OK;
}

int mt_check_tally_init(struct mt_check_tally *y, int njobs)
{
	memset(y, 0, sizeof(*y));
	if (!(y->err = calloc((size_t)njobs, sizeof(*y->err))))
		return MT_ENOMEM;
	sbuf_addf(&y->sum, "\n%d jobs:\n", njobs);
	return MT_OK;
}

/* The closing lines of several jobs: each one's outcome, its measured step
 * against the prediction where it is a log with a run */
void mt_check_tally_add(struct mt_check_tally *y, const struct mt_check *t,
			enum mt_check_outcome outcome)
{
	const struct mt_vcand *c = t->has_run ? &t->v.cand[0] : NULL;
	struct sbuf *sum = &y->sum;

	sbuf_addf(sum, "  %s: ", t->a.job);
	if (outcome == MT_CHECK_NOT_READ)
		sbuf_adds(sum, "not read (the error above)\n");
	else if (c && c->has_measured) {
		double e = mt_vrel(c->meas.step_s, c->pred.step_s);

		sbuf_addf(sum, "%s, step %.3f s measured against %.3f s predicted (%+.1f%%)\n",
			  mt_vstatus_name(c->status), c->meas.step_s, c->pred.step_s, 100 * e);
		y->err[y->nerr++] = fabs(e);
	} else if (c)
		sbuf_addf(sum, "%s, no steady step measured\n", mt_vstatus_name(c->status));
	else
		sbuf_addf(sum, "%s%s\n", t->cant[0] ? "cannot be timed as written" :
			  outcome == MT_CHECK_NO_FIT ? "does not fit" : "checked",
			  t->lp ? "" : " (no run: not a log)");
}

static int check_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void mt_check_tally_end(struct mt_check_tally *y)
{
	int nerr = y->nerr;

	if (nerr) {
		qsort(y->err, (size_t)nerr, sizeof(*y->err), check_cmp_double);
		sbuf_addf(&y->sum, "step error of the %d measured run%s: median %.1f%%, largest %.1f%%\n",
			  nerr, nerr > 1 ? "s" : "", 100 * y->err[nerr / 2], 100 * y->err[nerr - 1]);
	}
}

void mt_check_tally_free(struct mt_check_tally *y)
{
	sbuf_release(&y->sum);
	free(y->err);
}
