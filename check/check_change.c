/* SPDX-License-Identifier: MIT */
/* check_change: one change of `megatune check`, text and JSON (check_change.h). */
#include "check_change.h"

#include <math.h>
#include <stdio.h>

#include "../tuner/advice.h"
#include "../tuner/gains.h"
#include "../job/diff.h"
#include "../job/flags.h"
#include "../reports/advice.h"

double check_gain(const struct check_base *b, const struct mt_eval *e)
{
	if (!b->ok || !(b->as->time.step > 0))
		return NAN;
	return b->as->time.step / e->time.step - 1;
}

/* What each setting a change makes buys against the job's (tuner/gains.h) */
static void change_gains(struct sbuf *sb, cJSON *o, const struct mt_gain *g, int n)
{
	int i;
	cJSON *arr = o ? cJSON_AddArrayToObject(o, "gains") : NULL, *x;

	if (sb)
		mt_gains_text(sb, g, n, "  ", "what each setting it changes buys against the job's");
	for (i = 0; arr && i < n; i++) {
		x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "setting", g[i].setting);
		cJSON_AddStringToObject(x, "from", g[i].from);
		cJSON_AddStringToObject(x, "to", g[i].to);
		if (isnan(g[i].gain))
			cJSON_AddNullToObject(x, "gain");
		else
			cJSON_AddNumberToObject(x, "gain", g[i].gain);
		cJSON_AddBoolToObject(x, "fits_without", g[i].fits);
		if (g[i].ev)
			cJSON_AddStringToObject(x, "evidence", g[i].ev->id);
		else
			cJSON_AddNullToObject(x, "evidence");
		cJSON_AddItemToArray(arr, x);
	}
}

/* The change's step on the measured basis: the model's step times the
 * measured over the predicted step of the job, and its band: the model's own
 * relative band, widened on each side by the factor the model was off */
static double on_measured(const struct check_base *b, const struct mt_eval *e, double *lo,
			  double *hi)
{
	double scale = b->measured / b->as->time.step, off = scale >= 1 ? scale : 1 / scale;
	double step = e->time.step * scale;

	*lo = e->band.lo > 0 ? step * (e->band.lo / e->time.step) / off : step / off;
	*hi = e->band.hi > 0 ? step * (e->band.hi / e->time.step) * off : step * off;
	return step;
}

/* The step line of a change, text and JSON */
static void step_line(struct sbuf *sb, cJSON *o, const struct check_base *b,
		      const struct mt_eval *e, double g)
{
	int meas = b->measured > 0 && b->as->time.step > 0;
	double lo = 0, hi = 0, step = meas ? on_measured(b, e, &lo, &hi) : e->time.step;

	if (sb && meas && b->ok)
		sbuf_addf(sb, "  step %.3f s measured -> %.3f s (band %.3f to %.3f s), %+.1f%% "
			  "tokens/s (%.2fx; the model: %.3f s -> %.3f s)\n", b->measured, step, lo,
			  hi, 100 * g, 1 + g, b->as->time.step, e->time.step);
	else if (sb && meas)
		sbuf_addf(sb, "  fits: %.1f GiB per GPU, step %.3f s against the measured %.3f s "
			  "(band %.3f to %.3f s; the model: %.3f s)\n", e->mem.total / (1u << 30),
			  step, b->measured, lo, hi, e->time.step);
	else if (sb && b->ok)
		sbuf_addf(sb, "  step %.3f s -> %.3f s, %+.1f%% tokens/s (%.2fx)\n", b->as->time.step,
			  e->time.step, 100 * g, 1 + g);
	else if (sb)
		sbuf_addf(sb, "  fits: %.1f GiB per GPU, step %.3f s\n", e->mem.total / (1u << 30),
			  e->time.step);
	if (o) {
		cJSON_AddNumberToObject(o, "step_s", e->time.step);
		if (meas) {
			cJSON_AddNumberToObject(o, "step_s_measured_basis", step);
			cJSON_AddNumberToObject(o, "band_lo_s", lo);
			cJSON_AddNumberToObject(o, "band_hi_s", hi);
		}
	}
}

void check_show_change(struct sbuf *sb, cJSON *arr, const struct check_change *ch,
		       const struct check_base *b, const struct mt_jobsrc *src,
		       const struct mt_megatron_job *mj)
{
	struct mt_kv x[MT_FLAGS_MAX], y[MT_FLAGS_MAX], ey[MT_FLAGS_MAX];
	const struct mt_eval *as = b->as, *e = ch->e;
	int nx, ny, ney;
	char label[160];
	double g = check_gain(b, e);
	cJSON *o = arr ? cJSON_CreateObject() : NULL, *d = NULL;

	/* the job's configuration and the new one as megatune prints them; the
	 * variables the new one's rules want */
	if (src->format == MT_JF_BRIDGE) {
		nx = mt_candidate_bridge(&mj->model, &mj->job, &as->cfg, b->ex, x);
		ny = mt_candidate_bridge(&mj->model, &mj->job, &e->cfg, ch->ex, y);
	} else if (src->format == MT_JF_VERL) {
		nx = mt_candidate_verl(&mj->model, &mj->job, &as->cfg, b->ex, x);
		ny = mt_candidate_verl(&mj->model, &mj->job, &e->cfg, ch->ex, y);
	} else {
		nx = mt_candidate_args(&mj->model, &mj->job, &as->cfg, b->ex, x);
		ny = mt_candidate_args(&mj->model, &mj->job, &e->cfg, ch->ex, y);
	}
	ney = ch->ex ? mt_candidate_env(ch->ex, ey) : 0;
	mt_config_label(label, sizeof(label), &mj->model, &e->cfg);
	if (sb)
		sbuf_addf(sb, "\n%s (%s): %s\n", ch->title, ch->name, label);
	if (o) {
		cJSON_AddStringToObject(o, "kind", ch->title);
		cJSON_AddStringToObject(o, "changes", ch->name);
		cJSON_AddStringToObject(o, "config", label);
	}
	step_line(sb, o, b, e, g);
	if (o) {
		cJSON_AddNumberToObject(o, "memory_gib", e->mem.total / (1u << 30));
		if (!isnan(g))
			cJSON_AddNumberToObject(o, "gain", g);
		d = cJSON_AddArrayToObject(o, "diff");
	}
	mt_job_diff(sb, d, "    ", src, x, nx, y, ny);
	mt_job_env_diff(sb, d, "    ", src, ey, ney);
	if (b->ok)
		change_gains(sb, o, ch->gains, ch->ngains);
	if (o)
		cJSON_AddItemToArray(arr, o);
}
