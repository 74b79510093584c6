/* SPDX-License-Identifier: MIT */
/* rank: the ranking's entries, one per parallel layout (tuner/rank.h). */
#include "rank.h"

#include <stdio.h>
#include <string.h>

#include "../lib/units.h"
#include "../perfmodel/constants.h"

int mt_same_layout(const struct mt_config *a, const struct mt_config *b)
{
	return a->tp == b->tp && a->pp == b->pp && a->cp == b->cp && a->ep == b->ep &&
	       a->etp == b->etp && (a->ep * a->etp == 1 || a->dispatcher == b->dispatcher) &&
	       a->fsdp == b->fsdp;
}

/* A runner-up of layout i, kept when among its MT_VARIANTS fastest */
void mt_rank_fold(struct mt_search_result *r, int i, const struct mt_eval *e)
{
	struct mt_variant *v = r->var[i];
	int n = r->nvar[i], at;

	r->folded[i]++;
	if (n == MT_VARIANTS && mt_rank_key(e) >= v[n - 1].key)
		return;
	at = n < MT_VARIANTS ? n++ : n - 1;
	while (at > 0 && v[at - 1].key > mt_rank_key(e)) {
		v[at] = v[at - 1];
		at--;
	}
	v[at] = (struct mt_variant){ e->cfg, e->time.step, e->mem.total,
				     e->tput.tokens_per_s_per_gpu, mt_rank_key(e) };
	r->nvar[i] = n;
}

/* Entry i of the ranking (a layout with its variants) into place j */
void mt_rank_move(struct mt_search_result *r, int j, int i)
{
	r->top[j] = r->top[i];
	memcpy(r->var[j], r->var[i], sizeof(r->var[i]));
	r->nvar[j] = r->nvar[i];
	r->folded[j] = r->folded[i];
}

/* Entry i moves up while the one above ranks after it */
void mt_rank_bubble(struct mt_search_result *r, int i)
{
	struct mt_eval e = r->top[i];
	struct mt_variant v[MT_VARIANTS];
	int nv = r->nvar[i];
	long long f = r->folded[i];

	memcpy(v, r->var[i], sizeof(v));
	while (i > 0 && mt_rank_key(&r->top[i - 1]) > mt_rank_key(&e)) {
		mt_rank_move(r, i, i - 1);
		i--;
	}
	r->top[i] = e;
	memcpy(r->var[i], v, sizeof(v));
	r->nvar[i] = nv;
	r->folded[i] = f;
}


const char *mt_variant_why(const struct mt_variant *x, const struct mt_eval *top, double usable,
			   char *buf, size_t cap)
{
	/* lighter as the outputs print memory, to 0.1 GiB */
	int faster = x->step < top->time.step, lighter = x->mem < top->mem.total - 0.05 * MT_GIB;

	if (faster)
		snprintf(buf, cap, "%s as predicted, but less surely: the ranking's key (step + "
			 "its own uncertainty) is %.3f s against %.3f s (its own terms +%.2f%%, the "
			 "pick's +%.2f%%)", lighter ? "faster and lighter" : "faster", x->key,
			 mt_rank_key(top), 100 * (x->key / x->step - 1),
			 100 * top->band.spec_hi / top->time.step);
	else if (lighter && top->mem.total > MT_ROOMY_USE * usable)
		snprintf(buf, cap, "%.1f GiB lighter but slower than the pick: within a layout "
			 "the step decides; headroom moves the first pick alone (docs/MODEL.md 7.1)",
			 (top->mem.total - x->mem) / MT_GIB);
	else if (lighter)
		snprintf(buf, cap, "%.1f GiB lighter but slower than the pick: memory counts in "
			 "the ranking only above %.0f%% of the usable (docs/MODEL.md 7.1)",
			 (top->mem.total - x->mem) / MT_GIB, 100 * MT_ROOMY_USE);
	else
		return NULL;
	return buf;
}
