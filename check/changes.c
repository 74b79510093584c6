/* SPDX-License-Identifier: MIT */
/* changes: the changes `megatune check` searches from the job (the CHANGE
 * column of job/knobs.def: one knob a change, with those it frees), and the
 * walk over them: each change alone, each pair, everything free (docs/CHECK.md section 1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../job/knobs.h"
#include "../perfmodel/dispatch.h"
#include "../tuner/gains.h"
#include "../tuner/search.h"
#include "check_change.h"
#include "state.h"

/* ---- the changes searched ---- */

/* The changes are the knobs the CHANGE column of job/knobs.def tries, in its
 * order (t->chg): a change frees its knob and those that follow it (SP with
 * TP, VPP with PP, ...). */
int check_changes_new(struct mt_check *t)
{
	t->nchg = mt_knob_changes(t->chg, MT_KNOB_N);
	t->one = calloc(t->nchg > 0 ? t->nchg : 1, sizeof(*t->one));
	return t->one ? MT_OK : MT_ENOMEM;
}

static void free_knob(struct mt_job *j, int k)
{
	if (k == MT_KNOB_DISPATCHER)
		j->moe_dispatcher = MT_DISPATCH_AUTO;
	else
		mt_knob_set_pin(j, k, MT_UNSET);
	if (k == MT_KNOB_PP || k == MT_KNOB_VPP)
		j->pins.layout = NULL;
}

/* Knob k's change: it and the knobs that follow it, unpinned */
static void free_change(struct mt_job *j, int k)
{
	const struct mt_knob *kn = &mt_knobs[k];
	int i;

	free_knob(j, k);
	for (i = 0; i < (int)(sizeof(kn->follow) / sizeof(kn->follow[0])) && kn->follow[i] >= 0; i++)
		free_knob(j, kn->follow[i]);
}

/* The fastest configuration of job j (its pins as they are): top[0]. */
static int search(struct ctx *x, const struct mt_job *j, struct found *f, int a, int b,
		  struct mt_error *err)
{
	struct mt_search_result *res = calloc(1, sizeof(*res));
	struct mt_rules_run *run = NULL;
	int rc = MT_OK;

	memset(f, 0, sizeof(*f));
	f->a = a;
	f->b = b;
	if (!res)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	if (x->rs && (rc = mt_rules_start(x->rs, x->m, x->c, j, &run, err)))
		goto out;
	x->searches++;
	if ((rc = mt_search(x->m, x->c, j, run, res, err))) {
		/* a pin the change leaves makes the job impossible: no result */
		memset(err, 0, sizeof(*err));
		rc = MT_OK;
		goto out;
	}
	if (res->ntop) {
		f->feasible = 1;
		f->e = res->top[0];
		if (run && !mt_rules_explain(run, &f->e, 1, (int)res->feasible, f->e.time.step,
					     &f->ex))
			f->have_ex = 1;
	}
out:
	mt_rules_end(run);
	free(res);
	return rc;
}

static const char *change_name(const struct mt_check *t, const struct found *f, char *buf,
			       size_t cap)
{
	if (f->a == -2)
		snprintf(buf, cap, "everything");
	else if (f->b >= 0)
		snprintf(buf, cap, "%s + %s", mt_knobs[t->chg[f->a]].change,
			 mt_knobs[t->chg[f->b]].change);
	else
		snprintf(buf, cap, "%s", mt_knobs[t->chg[f->a]].change);
	return buf;
}

void check_changes_show(struct sbuf *sb, cJSON *arr, const char *title, const struct found *f,
			const struct mt_check *t)
{
	char name[96];
	struct check_change ch = { title, change_name(t, f, name, sizeof(name)), &f->e,
				   f->have_ex ? &f->ex : NULL, f->g, f->ng };

	check_show_change(sb, arr, &ch, &t->base, t->src, t->mj);
}

int check_changes_search(struct mt_check *t, struct mt_error *err)
{
	const struct mt_megatron_job *mj = t->mj;
	int i, k, moe = mj->model.experts > 0;

	t->x.m = &mj->model;
	t->x.c = t->c;
	t->x.rs = t->rs;
	for (i = 0; i < t->nchg; i++) {
		struct mt_job j = mj->job;

		t->one[i].a = -1;
		if (mt_knobs[t->chg[i]].change_moe && !moe)
			continue;
		free_change(&j, t->chg[i]);
		if (search(&t->x, &j, &t->one[i], i, -1, err))
			return MT_EINVAL;
		if (t->one[i].feasible &&
		    (!t->best1.feasible || t->one[i].e.time.step < t->best1.e.time.step))
			t->best1 = t->one[i];
	}
	for (i = 0; i < t->nchg; i++)
		for (k = i + 1; k < t->nchg; k++) {
			struct mt_job j = mj->job;
			struct found f;

			if ((!t->one[i].feasible && !t->one[k].feasible && t->as_ok) ||
			    ((mt_knobs[t->chg[i]].change_moe || mt_knobs[t->chg[k]].change_moe) && !moe))
				continue;
			free_change(&j, t->chg[i]);
			free_change(&j, t->chg[k]);
			if (search(&t->x, &j, &f, i, k, err))
				return MT_EINVAL;
			if (f.feasible && (!t->best2.feasible || f.e.time.step < t->best2.e.time.step)) {
				if (t->best2.have_ex)
					mt_explain_free(&t->best2.ex);
				t->best2 = f;
			} else if (f.have_ex) {
				mt_explain_free(&f.ex);
			}
		}
	{
		struct mt_job j = mj->job;

		for (i = 0; i < t->nchg; i++)
			free_change(&j, t->chg[i]);
		if (search(&t->x, &j, &t->overall, -2, -1, err))
			return MT_EINVAL;
	}
	/* what each setting of the changes shown buys, once for text and JSON */
	for (i = 0; t->as_ok && i < 3; i++) {
		struct found *f = i == 0 ? &t->best1 : i == 1 ? &t->best2 : &t->overall;

		if (f->feasible)
			f->ng = mt_gains(&mj->model, t->c, &mj->job, &f->e, &t->as.cfg, f->g,
					 MT_GAINS_MAX);
	}
	return MT_OK;
}

void check_changes_free(struct mt_check *t)
{
	int i;

	for (i = 0; t->one && i < t->nchg; i++)
		if (t->one[i].have_ex)
			mt_explain_free(&t->one[i].ex); /* best1 shares one of these */
	if (t->best2.have_ex)
		mt_explain_free(&t->best2.ex);
	if (t->overall.have_ex)
		mt_explain_free(&t->overall.ex);
}
