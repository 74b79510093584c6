/* SPDX-License-Identifier: MIT */
/* best: the least step time and memory seen per knob value during a search,
 * for the rules' best() and least_mem(). */
#include "run.h"

#include <math.h>
#include <string.h>

static void pair_init(struct pair *p, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i].step = p[i].mem = INFINITY;
}

static void pair_put(struct pair *p, const struct mt_eval *e, int timed)
{
	if (e->mem.total < p->mem)
		p->mem = e->mem.total;
	if (timed && e->time.step < p->step)
		p->step = e->time.step;
}

static unsigned tuple_hash(const int *k)
{
	unsigned h = 2166136261u;
	int i;

	for (i = 0; i < 5; i++)
		h = (h ^ (unsigned)k[i]) * 16777619u;
	return h;
}

void mt_rules_observe(struct mt_rules_run *r, const struct mt_eval *e, int timed)
{
	struct best *b = &r->best;
	const struct mt_config *c = &e->cfg;
	int key[5] = { c->tp, c->pp, c->cp, c->ep, c->etp };
	struct tuple *t = &b->t[b->last];
	unsigned h, i;

	if (!r->observing)
		return;
	if (!(t->used && !memcmp(t->key, key, sizeof(key)))) {
		h = tuple_hash(key) & (TUPLE_SLOTS - 1);
		for (i = 0; i < TUPLE_SLOTS; i++) {
			t = &b->t[(h + i) & (TUPLE_SLOTS - 1)];
			if (!t->used) {
				t->used = 1;
				memcpy(t->key, key, sizeof(key));
				t->step = t->mem = INFINITY;
				b->used[b->nused++] = (int)((h + i) & (TUPLE_SLOTS - 1));
				break;
			}
			if (!memcmp(t->key, key, sizeof(key)))
				break;
		}
		if (i == TUPLE_SLOTS)
			return; /* full: a space this large is not explained per tuple */
		b->last = (int)((h + i) & (TUPLE_SLOTS - 1));
	}
	if (e->mem.total < t->mem)
		t->mem = e->mem.total;
	if (timed && e->time.step < t->step)
		t->step = e->time.step;
	if (c->vpp >= 0 && c->vpp < SMALL_MAX)
		pair_put(&b->vpp[c->vpp], e, timed);
	if (c->mbs >= 0 && c->mbs < SMALL_MAX)
		pair_put(&b->mbs[c->mbs], e, timed);
	if (c->recompute >= 0 && c->recompute < MT_RC_N)
		pair_put(&b->rc[c->recompute], e, timed);
	pair_put(&b->dist[c->dist_opt ? 1 : 0], e, timed);
	pair_put(&b->sp[c->sp ? 1 : 0], e, timed);
	if (c->cp_comm >= 0 && c->cp_comm < MT_CP_N && c->cp > 1)
		pair_put(&b->cc[c->cp_comm], e, timed);
}

void mt_rules_best_init(struct best *b)
{
	pair_init(b->vpp, SMALL_MAX);
	pair_init(b->mbs, SMALL_MAX);
	pair_init(b->rc, MT_RC_N);
	pair_init(b->dist, 2);
	pair_init(b->sp, 2);
	pair_init(b->cc, MT_CP_N);
}

void mt_rules_observe_reset(struct mt_rules_run *r)
{
	struct best *b = &r->best;

	if (!r->observing)
		return;
	memset(b->t, 0, TUPLE_SLOTS * sizeof(*b->t));
	b->nused = 0;
	b->last = 0;
	mt_rules_best_init(b);
}

double mt_rules_best_fn(void *ctx, int what, const int *knob, const double *val, int n)
{
	struct mt_rules_run *r = ctx;
	struct best *b = &r->best;
	double v = INFINITY;
	const struct pair *p = NULL;
	int i, k, x;

	if (!r->observing || n < 1)
		return NAN;
	if (knob[0] > MT_BK_ETP) {
		if (!(val[0] >= 0 && val[0] < SMALL_MAX) || val[0] != floor(val[0]))
			return NAN;
		x = (int)val[0];
		switch (knob[0]) {
		case MT_BK_VPP: p = x < SMALL_MAX ? &b->vpp[x] : NULL; break;
		case MT_BK_MBS: p = x < SMALL_MAX ? &b->mbs[x] : NULL; break;
		case MT_BK_RECOMPUTE: p = x < MT_RC_N ? &b->rc[x] : NULL; break;
		case MT_BK_DIST_OPT: p = x < 2 ? &b->dist[x] : NULL; break;
		case MT_BK_SP: p = x < 2 ? &b->sp[x] : NULL; break;
		case MT_BK_CP_COMM: p = x < MT_CP_N ? &b->cc[x] : NULL; break;
		}
		if (!p)
			return NAN;
		v = what ? p->mem : p->step;
		return isinf(v) ? NAN : v;
	}
	for (i = 0; i < b->nused; i++) {
		const struct tuple *t = &b->t[b->used[i]];
		int match = 1;
		for (k = 0; k < n && match; k++)
			match = knob[k] <= MT_BK_ETP && t->key[knob[k]] == val[k];
		if (match) {
			double y = what ? t->mem : t->step;
			if (y < v)
				v = y;
		}
	}
	return isinf(v) ? NAN : v;
}

int mt_rules_observing(const struct mt_rules_run *r) { return r->observing; }
