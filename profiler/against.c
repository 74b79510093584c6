/* SPDX-License-Identifier: MIT */
/* against: a trace beside the model's terms (profiler/against.h). */
#include "against.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../perfmodel/constants.h"
#include "../perfmodel/host.h"
#include "../perfmodel/perf.h"

static const char *const keys[MT_AG_N] = {
	"gemm", "attention", "elementwise", "recompute", "kernel_gaps", "computation", "comm",
	"comm_ep", "exposed_comm", "idle", "window",
};
static const char *const labels[MT_AG_N] = {
	"GEMM", "attention", "element-wise", "recompute (in the above)",
	"kernel gaps, SMs lent", "computation", "communication", "  of it expert dispatch",
	"exposed communication", "idle", "window",
};

const char *mt_against_key(int row)
{
	return row >= 0 && row < MT_AG_N ? keys[row] : "?";
}

const char *mt_against_label(int row)
{
	return row >= 0 && row < MT_AG_N ? labels[row] : "?";
}

/* The traces pooled: mean over ranks, seconds */
static void measured(const struct mt_rank_stats *r, int n, double units, double *v)
{
	double s[MT_AG_N] = { 0 };
	int i, k;

	for (i = 0; i < n; i++) {
		const struct mt_rank_stats *x = &r[i];

		s[MT_AG_GEMM] += (double)x->cat_time[MT_KC_GEMM];
		s[MT_AG_ATTN] += (double)x->cat_time[MT_KC_ATTENTION];
		s[MT_AG_ELEM] += (double)(x->cat_time[MT_KC_ELEMENTWISE] +
					  x->cat_time[MT_KC_REDUCTION] + x->cat_time[MT_KC_MEMSET] +
					  x->cat_time[MT_KC_OTHER]);
		s[MT_AG_COMP] += (double)x->comp;
		s[MT_AG_COMM] += (double)x->comm;
		s[MT_AG_COMM_EP] += (double)(x->custom_comm + x->coll_time[MT_TC_ALLTOALL]);
		s[MT_AG_EXPOSED] += (double)x->exposed_comm;
		s[MT_AG_IDLE] += (double)x->idle;
		s[MT_AG_WINDOW] += (double)x->total;
	}
	for (k = 0; k < MT_AG_N; k++)
		v[k] = s[k] * 1e-9 / n / units;
	v[MT_AG_RECOMPUTE] = NAN;
	v[MT_AG_GAPS] = NAN;
}

/* The model's terms of one training step */
static void per_step(const struct mt_eval *e, double *v)
{
	const struct mt_time *t = &e->time;

	v[MT_AG_GEMM] = t->gemm;
	v[MT_AG_ATTN] = t->attention;
	v[MT_AG_ELEM] = t->elementwise;
	v[MT_AG_RECOMPUTE] = t->recompute;
	v[MT_AG_COMM] = t->tp_exposed + t->tp_hidden + t->cp_exposed + t->cp_hidden +
			t->ep_exposed + t->ep_hidden + t->pp_exposed + t->pp_hidden +
			t->dp_exposed + t->dp_hidden;
	v[MT_AG_COMM_EP] = t->ep_exposed + t->ep_hidden;
	v[MT_AG_EXPOSED] = t->tp_exposed + t->cp_exposed + t->ep_exposed + t->pp_exposed +
			   t->dp_exposed;
	v[MT_AG_IDLE] = t->host_exposed + t->bubble + t->offload_exposed;
	v[MT_AG_GAPS] = t->gpu_overhead;
	v[MT_AG_COMP] = t->compute;
	v[MT_AG_WINDOW] = t->step;
}

/* The model's terms of n layers of kind k, forward and backward of one
 * micro-batch each; with the EP overlap every layer is taken as paired with
 * another micro-batch's (a 1F1B or DualPipe chunk pair) */
static void per_layers(const struct mt_ctx *x, const struct mt_costs *a,
		       const struct mt_config *cfg, int k, double n, double *v)
{
	double ep_exp = a->ep_exposed[k], save = 0, gpu, exposed, busy;
	double nl[MT_L_N] = { 0 };
	struct mt_host_tl tl;

	if (k == MT_L_MOE && cfg->ep_overlap) {
		ep_exp = a->ep_1f1b_exposed;
		save = a->ep_1f1b_save;
	}
	v[MT_AG_GEMM] = n * (a->gemm_f[k] + a->gemm_b[k]);
	v[MT_AG_ATTN] = n * (a->attn_f[k] + a->attn_b[k]);
	v[MT_AG_ELEM] = n * (a->elem_f[k] + a->elem_b[k]);
	v[MT_AG_RECOMPUTE] = cfg->recompute == MT_RC_SELECTIVE ? n * mt_rc_time(a, k, mt_rc_mods(cfg), 0)
			     : cfg->recompute == MT_RC_FULL ? n * a->rc_full[k] : 0;
	v[MT_AG_COMM] = n * (a->tp_comm[k] + a->cp_comm[k] + a->ep_comm[k]);
	v[MT_AG_COMM_EP] = n * a->ep_comm[k];
	exposed = a->tp_exposed[k] + a->cp_exposed[k] + ep_exp;
	v[MT_AG_EXPOSED] = n * exposed;
	busy = a->fwd[k] + a->bwd[k] - save;
	v[MT_AG_GAPS] = n * fmax(0, busy - (a->gemm_f[k] + a->gemm_b[k] + a->attn_f[k] +
					    a->attn_b[k] + a->elem_f[k] + a->elem_b[k] + exposed));
	v[MT_AG_COMP] = v[MT_AG_GEMM] + v[MT_AG_ATTN] + v[MT_AG_ELEM] + v[MT_AG_RECOMPUTE] +
			v[MT_AG_GAPS];
	gpu = n * busy + v[MT_AG_RECOMPUTE];
	nl[k] = n;
	mt_host_timeline(a->hl, nl, cfg->cuda_graph, x->hc.sync, gpu, 0, &tl);
	v[MT_AG_IDLE] = fmax(0, tl.t - gpu);
	v[MT_AG_WINDOW] = gpu + v[MT_AG_IDLE];
}

/* Why a kernel class is more than MT_AG_WHY_OFF off: what the model's term
 * is made of, and the measurement that would settle it (docs/MODEL.md 11.2). */
static void against_explain(struct mt_against *o, const struct mt_model *m, const struct mt_cluster *c,
		    const struct mt_job *j)
{
	static const int rows[] = { MT_AG_GEMM, MT_AG_ATTN, MT_AG_ELEM };
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int k = rows[i];
		double meas = o->meas[k], mod = o->model[k], gaps = o->model[MT_AG_GAPS];
		char *w = o->why[k];
		size_t cap = sizeof(o->why[k]);

		if (!isfinite(meas) || !isfinite(mod) || meas <= 0 ||
		    fabs(mod - meas) <= MT_AG_WHY_OFF * meas)
			continue;
		if (k == MT_AG_GEMM && mod < meas && isfinite(gaps) && gaps > 0)
			snprintf(w, cap, "the trace's GEMMs ran on the SMs the communication kernels "
				 "beside them left, a cost the model books apart (kernel gaps, SMs "
				 "lent): the two together are %.3f ms against %.3f measured (%+.0f%%)",
				 (mod + gaps) * 1e3, meas * 1e3, 100 * (mod + gaps - meas) / meas);
		else if (k == MT_AG_GEMM)
			snprintf(w, cap, "the model's GEMMs run at the profile's standalone sweep "
				 "(%s); clocks under the power limit and kernels beside them change it "
				 "in a step: calibrate gemm on this cluster", c->name);
		else if (k == MT_AG_ATTN) {
			int dqk = m->mla ? m->qk_nope_dim + m->qk_rope_dim : m->head_dim;
			int hd = mt_attn_nearest_hd(c, j->attn_impl, dqk);

			if (hd > 0 && hd != dqk)
				snprintf(w, cap, "the profile %s measures attention at head dimension "
					 "%d, not the model's %d%s: the rate is another head dimension's; "
					 "calibrate attention at %d", c->name, hd, dqk,
					 m->mla ? " (MLA's query-key width)" : "", dqk);
			else
				snprintf(w, cap, "the profile %s's attention curve at head dimension %d "
					 "with megatune's causal factor (4.2); the trace's kernels (its "
					 "FlashAttention version and masking) differ: calibrate attention",
					 c->name, dqk);
		} else
			snprintf(w, cap, "element-wise time is the HBM traffic the model counts at "
				 "%.0f%% of the bandwidth (4.3), not a per-kernel measurement; fused "
				 "kernels move less, unfused ones more", 100 * MT_ELEM_EFFICIENCY);
	}
}

int mt_against_compare(const struct mt_model *m, const struct mt_cluster *c,
		       const struct mt_job *j, const struct mt_eval *e,
		       const struct mt_rank_stats *r, int n, int layers,
		       struct mt_against *out, struct mt_error *err)
{
	int k, i, steps = 0;
	double far = -1;

	memset(out, 0, sizeof(*out));
	out->layers = layers;
	out->ranks = n;
	out->worst = -1;
	out->kind = m->experts > 0 && m->moe_layers > 0 ? MT_L_MOE : MT_L_DENSE;
	for (i = 0; i < n; i++)
		if (r[i].has_steps && (steps == 0 || (int)r[i].nsteps < steps))
			steps = (int)r[i].nsteps;
	if (layers > 0) {
		int have = out->kind == MT_L_MOE ? m->moe_layers : m->layers - m->moe_layers;

		if (layers > have)
			return mt_error_set(err, MT_EINVAL, "--layers %d: the model has %d %s layers",
					    layers, have, out->kind == MT_L_MOE ? "MoE" : "dense");
		out->units = 1;
	} else {
		if (steps < 1)
			return mt_error_set(err, MT_EINVAL, "%s: no ProfilerStep range: a trace of "
					    "whole steps has them (or give --layers N for a trace "
					    "of N layers, forward and backward)", r[0].path);
		out->units = steps;
	}
	measured(r, n, out->units, out->meas);
	if (layers > 0) {
		struct mt_ctx x;
		struct mt_shape sh;
		struct mt_costs a;

		mt_ctx_init(&x, m, c, j);
		mt_shape_of(&e->cfg, &sh);
		mt_costs_compute(&x, &sh, &a);
		if (!a.valid)
			return mt_error_set(err, MT_EINVAL, "the configuration's layer shape cannot "
					    "be timed");
		per_layers(&x, &a, &e->cfg, out->kind, layers, out->model);
	} else {
		per_step(e, out->model);
	}
	/* the term furthest off: the classes a trace measures on its own */
	{
		static const int cand[] = { MT_AG_GEMM, MT_AG_ATTN, MT_AG_ELEM, MT_AG_COMM_EP,
					    MT_AG_EXPOSED, MT_AG_IDLE };

		for (k = 0; k < (int)(sizeof(cand) / sizeof(cand[0])); k++) {
			double d = fabs(out->meas[cand[k]] - out->model[cand[k]]);

			if (isfinite(d) && d > far) {
				far = d;
				out->worst = cand[k];
			}
		}
	}
	against_explain(out, m, c, j);
	return MT_OK;
}

static void ms_cell(struct sbuf *sb, double v)
{
	if (isfinite(v))
		sbuf_addf(sb, " %10.3f", v * 1e3);
	else
		sbuf_addf(sb, " %10s", "-");
}

void mt_against_text(struct sbuf *sb, const struct mt_against *a)
{
	int k;
	double per = a->layers > 0 ? a->layers : 1;

	sbuf_addf(sb, "\nAgainst the model (%s; %s):\n", a->config,
		  a->layers > 0 ? "the trace holds layers, forward and backward, one micro-batch each"
				: "per training step");
	if (a->layers > 0)
		sbuf_addf(sb, "  unit: %d %s layer%s; measured: mean of %d trace%s\n", a->layers,
			  a->kind == MT_L_MOE ? "MoE" : "dense", a->layers == 1 ? "" : "s", a->ranks,
			  a->ranks == 1 ? "" : "s");
	else
		sbuf_addf(sb, "  unit: one step (%g ProfilerStep%s); measured: mean of %d trace%s\n",
			  a->units, a->units == 1 ? "" : "s", a->ranks, a->ranks == 1 ? "" : "s");
	sbuf_addf(sb, "  # %-26s %10s %10s %10s %8s%s\n", "class", "measured", "model", "off",
		  "model/", a->layers > 0 ? "   per layer" : "");
	sbuf_addf(sb, "  # %-26s %10s %10s %10s %8s%s\n", "", "ms", "ms", "ms", "measured",
		  a->layers > 0 ? "  meas/model ms" : "");
	for (k = 0; k < MT_AG_N; k++) {
		double m = a->meas[k], p = a->model[k];

		if (k == MT_AG_COMM_EP && !(m > 0) && !(p > 0))
			continue;
		sbuf_addf(sb, "    %-26s", mt_against_label(k));
		ms_cell(sb, m);
		ms_cell(sb, p);
		if (isfinite(m) && isfinite(p))
			sbuf_addf(sb, " %+10.3f", (p - m) * 1e3);
		else
			sbuf_addf(sb, " %10s", "-");
		if (isfinite(m) && isfinite(p) && m > 0)
			sbuf_addf(sb, " %8.2f", p / m);
		else
			sbuf_addf(sb, " %8s", "-");
		if (a->layers > 0 && isfinite(m) && isfinite(p))
			sbuf_addf(sb, "  %6.3f / %.3f", m * 1e3 / per, p * 1e3 / per);
		else if (a->layers > 0 && isfinite(p))
			sbuf_addf(sb, "       - / %.3f", p * 1e3 / per);
		sbuf_adds(sb, "\n");
	}
	{
		double r = a->model[MT_AG_WINDOW] / a->meas[MT_AG_WINDOW];

		if (isfinite(r) && (r > 3 || r < 1.0 / 3))
			sbuf_addf(sb, "warning: the model's window is %.3gx the trace's: is the trace "
				  "this configuration, and the unit right (--layers)?\n", r);
	}
	if (a->worst >= 0) {
		double m = a->meas[a->worst], p = a->model[a->worst];

		sbuf_addf(sb, "furthest off: %s, the model %s by %.3f ms (%s%.0f%%)\n",
			  keys[a->worst], p < m ? "under" : "over", fabs(p - m) * 1e3,
			  p < m ? "-" : "+", m > 0 ? fabs(p - m) / m * 100 : 100.0);
	}
	for (k = 0; k < MT_AG_N; k++)
		if (a->why[k][0])
			sbuf_addf(sb, "why %s is %.0f%% off: %s\n", keys[k],
				  100 * fabs(a->model[k] - a->meas[k]) / a->meas[k], a->why[k]);
}

void mt_against_jw(struct jw *w, const struct mt_against *a)
{
	int k;

	jw_obj(w, "against");
	jw_str(w, "config", a->config);
	jw_str(w, "unit", a->layers > 0 ? "layers" : "step");
	if (a->layers > 0) {
		jw_int(w, "layers", a->layers);
		jw_str(w, "layer_kind", a->kind == MT_L_MOE ? "moe" : "dense");
	}
	jw_num(w, "units", a->units, 6);
	jw_int(w, "ranks", a->ranks);
	jw_obj(w, "classes");
	for (k = 0; k < MT_AG_N; k++) {
		jw_obj(w, keys[k]);
		if (isfinite(a->meas[k]))
			jw_fix(w, "measured_ms", a->meas[k] * 1e3, 4);
		else
			jw_null(w, "measured_ms");
		if (isfinite(a->model[k]))
			jw_fix(w, "model_ms", a->model[k] * 1e3, 4);
		else
			jw_null(w, "model_ms");
		if (a->why[k][0])
			jw_str(w, "why", a->why[k]);
		jw_end(w);
	}
	jw_end(w);
	if (a->worst >= 0)
		jw_str(w, "furthest_off", keys[a->worst]);
	else
		jw_null(w, "furthest_off");
	jw_end(w);
}
