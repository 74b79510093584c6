/* SPDX-License-Identifier: MIT */
/* layout: Megatron-LM's pipeline layout strings (docs/MODEL.md 4.6). */
#include "layout.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "model.h"

#define EXP_MAX 8192 /* expanded symbols a layout string may stand for */

#define SYMBOLS "expected E (embedding), t (transformer layer), m (MTP layer), L (loss), " \
	"| (stage boundary), (...)*N or X*N (repetition)"

struct expanded {
	char c[EXP_MAX];
	short pos[EXP_MAX]; /* 1-based position in the string as given */
	int n;
};

static int layout_push(struct expanded *e, char c, short pos)
{
	if (e->n >= EXP_MAX)
		return -1;
	e->c[e->n] = c;
	e->pos[e->n++] = pos;
	return 0;
}

/* digits at s[i..]: the value (capped) and the index after them; -1 none */
static long digits(const char *s, int i, int n, int *end)
{
	long v = 0;
	int k = i;

	while (k < n && s[k] >= '0' && s[k] <= '9') {
		if (v < EXP_MAX + 1)
			v = v * 10 + (s[k] - '0');
		k++;
	}
	*end = k;
	return k > i ? v : -1;
}

/* The two re.sub passes of parse_str_to_list, with each symbol's position.
 * Pass 1: "(X)*N" with X of one or more characters other than ')'. */
static int expand_groups(const struct expanded *in, struct expanded *out)
{
	int i = 0, j, end, r, k;
	long v;

	out->n = 0;
	while (i < in->n) {
		if (in->c[i] == '(') {
			for (j = i + 1; j < in->n && in->c[j] != ')'; j++)
				;
			if (j < in->n && j > i + 1 && j + 1 < in->n && in->c[j + 1] == '*') {
				v = digits(in->c, j + 2, in->n, &end);
				if (v >= 0) {
					for (r = 0; r < v; r++)
						for (k = i + 1; k < j; k++)
							if (layout_push(out, in->c[k], in->pos[k]))
								return -1;
					i = end;
					continue;
				}
			}
		}
		if (layout_push(out, in->c[i], in->pos[i]))
			return -1;
		i++;
	}
	return 0;
}

/* Pass 2: "c*N", any one character repeated. */
static int expand_chars(const struct expanded *in, struct expanded *out)
{
	int i = 0, end, r;
	long v;

	out->n = 0;
	while (i < in->n) {
		if (i + 2 < in->n && in->c[i + 1] == '*') {
			v = digits(in->c, i + 2, in->n, &end);
			if (v >= 0) {
				for (r = 0; r < v; r++)
					if (layout_push(out, in->c[i], in->pos[i]))
						return -1;
				i = end;
				continue;
			}
		}
		if (layout_push(out, in->c[i], in->pos[i]))
			return -1;
		i++;
	}
	return 0;
}

static int layout_bad(struct mt_error *err, int pos, const char *what)
{
	return mt_error_set(err, MT_EUSAGE, "--pp-layout: position %d: %s", pos, what);
}

/* The symbols, chunk by chunk, with the checks the string alone decides. */
static int read_symbols(const struct expanded *e, struct mt_layout *o, struct mt_error *err)
{
	int i, ne = 0, nl = 0, seen_m = -1;

	for (i = 0; i < e->n; i++) {
		char c = e->c[i];

		if (c == '|') {
			if (o->n + 1 >= MT_LAYOUT_MAX)
				return layout_bad(err, e->pos[i], "more than 256 stages; at most 256 expected");
			o->n++;
			continue;
		}
		if (c != 'E' && c != 't' && c != 'm' && c != 'L')
			return mt_error_set(err, MT_EUSAGE, "--pp-layout: position %d: unknown symbol "
					    "'%c'; %s", e->pos[i], c, SYMBOLS);
		if (c == 'E' && (i > 0 || ne++))
			return layout_bad(err, e->pos[i], "E: the embedding must be the first symbol, "
				   "exactly once");
		if (i == 0 && c != 'E')
			return mt_error_set(err, MT_EUSAGE, "--pp-layout: position %d: '%c': the layout "
					    "must start with E (the embedding)", e->pos[i], c);
		if (c == 'L' && (i != e->n - 1 || nl++))
			return layout_bad(err, e->pos[i], "L: the loss must be the last symbol, exactly once");
		if (c == 't') {
			if (seen_m >= 0)
				return layout_bad(err, e->pos[i], "t: transformer layers must come before "
					   "the MTP layers");
			o->t[o->n]++;
			o->layers++;
		} else if (c == 'm') {
			if (seen_m >= 0 && seen_m != o->n)
				return layout_bad(err, e->pos[i], "m: all MTP layers must be in one stage");
			if (seen_m < 0)
				o->mtp_pos = e->pos[i];
			seen_m = o->n;
			o->m[o->n]++;
			o->mtp++;
		}
	}
	if (!e->n || e->c[e->n - 1] != 'L')
		return layout_bad(err, e->n ? e->pos[e->n - 1] : 1, "the layout must end with L (the loss)");
	o->n++;
	o->mtp_chunk = seen_m;
	return MT_OK;
}

int mt_layout_parse(const char *s, struct mt_layout *o, struct mt_error *err)
{
	static struct expanded a, b; /* large: kept off the stack */
	size_t len = strlen(s), i;

	memset(o, 0, sizeof(*o));
	o->mtp_chunk = -1;
	if (len == 0)
		return mt_error_set(err, MT_EUSAGE, "--pp-layout: empty; %s", SYMBOLS);
	if (len > MT_LAYOUT_STR_MAX)
		return mt_error_set(err, MT_EUSAGE, "--pp-layout: %zu characters; at most %d expected",
				    len, MT_LAYOUT_STR_MAX);
	a.n = 0;
	for (i = 0; i < len; i++)
		if (s[i] != ',') /* purely cosmetic commas */
			layout_push(&a, s[i], (short)(i + 1));
	if (expand_groups(&a, &b) || expand_chars(&b, &a))
		return mt_error_set(err, MT_EUSAGE, "--pp-layout: expands to more than %d symbols",
				    EXP_MAX);
	return read_symbols(&a, o, err);
}

int mt_layout_check(const struct mt_layout *l, const struct mt_model *m, int pp, int vpp,
		    struct mt_error *err)
{
	if (pp < 1 || l->n % pp)
		return mt_error_set(err, MT_EUSAGE, "--pp-layout: %d stages, not a multiple of PP %d "
				    "(PP x VPP stages expected, one per '|'-separated part)", l->n, pp);
	if (vpp > 0 && l->n != pp * vpp)
		return mt_error_set(err, MT_EUSAGE, "--pp-layout: %d stages where PP %d x VPP %d = %d "
				    "were expected", l->n, pp, vpp, pp * vpp);
	if (l->mtp && !m->mtp_layers)
		return mt_error_set(err, MT_EUSAGE, "--pp-layout: position %d: 'm' (an MTP layer) but "
				    "model '%s' has no MTP layers; expected t, E, L or |", l->mtp_pos,
				    m->name);
	if (l->layers != m->layers)
		return mt_error_set(err, MT_EUSAGE, "--pp-layout: %d transformer layers ('t') where "
				    "model '%s' has %d", l->layers, m->name, m->layers);
	if (l->mtp != m->mtp_layers)
		return mt_error_set(err, MT_EUSAGE, "--pp-layout: %d MTP layers ('m') where model '%s' "
				    "has %d", l->mtp, m->name, m->mtp_layers);
	if (l->mtp && l->mtp_chunk < l->n - pp)
		return mt_error_set(err, MT_EUSAGE, "--pp-layout: the MTP layers are in stage %d; "
				    "Megatron expects them in the last virtual stage of a rank "
				    "(stages %d to %d)", l->mtp_chunk + 1, l->n - pp + 1, l->n);
	return MT_OK;
}

/* ---- weights: forward FLOPs per token */

static double attn_core(const struct mt_model *m, int seq)
{
	double hd = m->mla ? (m->qk_nope_dim + m->qk_rope_dim + m->v_head_dim) / 2.0 : m->head_dim;

	return 2.0 * seq * m->heads * hd; /* causal QK^T and AV */
}

double mt_layout_weight_layer(const struct mt_model *m, int seq, int layer)
{
	double p = (double)mt_model_attn_params(m);

	if (m->experts && layer >= 0 && layer < m->layers && m->is_moe[layer])
		p += (double)m->topk * mt_model_expert_params(m) + mt_model_shared_params(m) +
		     mt_model_router_params(m);
	else
		p += (double)mt_model_dense_mlp_params(m);
	return 2 * p + attn_core(m, seq);
}

double mt_layout_weight_loss(const struct mt_model *m)
{
	return 2.0 * m->vocab * m->hidden;
}

double mt_layout_weight_mtp(const struct mt_model *m, int seq)
{
	return mt_layout_weight_layer(m, seq, m->layers - 1) + 4.0 * m->hidden * m->hidden +
	       mt_layout_weight_loss(m);
}

/* The items in order: E, the layers, the MTP group (when any), L. */
static int items(const struct mt_model *m, int seq, double *w, int cap)
{
	int n = 0, i;

	if (m->layers + 3 > cap)
		return -1;
	w[n++] = 0;
	for (i = 0; i < m->layers; i++)
		w[n++] = mt_layout_weight_layer(m, seq, i);
	if (m->mtp_layers > 0)
		w[n++] = m->mtp_layers * mt_layout_weight_mtp(m, seq);
	w[n++] = mt_layout_weight_loss(m);
	return n;
}

/* Right-to-left packing into exactly nc chunks, each at most T where it can
 * be, leaving one item for each chunk still to fill.  first[c] gets the index
 * of chunk c's first item; returns 1 when every chunk is within T. */
static int pack(const double *w, int ni, int nc, double T, int *first)
{
	int c, r = ni - 1, ok = 1;

	for (c = nc - 1; c >= 0; c--) {
		double s = w[r];
		int k = r;

		if (c == 0) {
			for (k = r - 1; k >= 0; k--)
				s += w[k];
			k = 0;
		} else {
			while (k - 1 >= c && s + w[k - 1] <= T)
				s += w[--k];
		}
		if (s > T)
			ok = 0;
		first[c] = k;
		r = k - 1;
	}
	return ok;
}

/* Chunk boundaries at the prefix sums nearest to the cumulative targets
 * tgt[j] (the weight up to the end of chunk j), one item at least per chunk:
 * rounding errors do not add up from chunk to chunk. */
static void cut_at(const double *w, int ni, int nc, const double *tgt, int *first)
{
	double cum = 0;
	int j, e = 0;

	first[0] = 0;
	for (j = 0; j + 1 < nc; j++) {
		int lo = first[j] + 1, hi = ni - (nc - 1 - j);

		/* cum is the weight of items [0, e) */
		while (e < lo)
			cum += w[e++];
		while (e < hi && fabs(cum + w[e] - tgt[j]) < fabs(cum - tgt[j]))
			cum += w[e++];
		first[j + 1] = e;
	}
}

/* Cumulative targets that give each stage the same weight: a chunk's share
 * is its stage's (total / pp less the loss and MTP weights the stage holds,
 * where mtp_last says whether the MTP layers share the last chunk with the
 * loss or take the one before) over vpp, plus what it holds of those. */
static void stage_targets(const double *w, int ni, int nc, int pp, int has_mtp, int mtp_last,
			  double *tgt)
{
	static double fixed[MT_LAYOUT_MAX], fs[MT_LAYOUT_MAX];
	double W = 0, cum = 0, total = 0;
	int i, vpp = nc / pp;

	for (i = 0; i < ni; i++)
		W += w[i];
	for (i = 0; i < nc; i++)
		fixed[i] = 0;
	for (i = 0; i < pp; i++)
		fs[i] = 0;
	fixed[nc - 1] = w[ni - 1];
	if (has_mtp)
		fixed[mtp_last || nc < 2 ? nc - 1 : nc - 2] += w[ni - 2];
	for (i = 0; i < nc; i++)
		fs[i % pp] += fixed[i];
	for (i = 0; i < nc; i++)
		total += fmax(0, W / pp - fs[i % pp]) / vpp + fixed[i];
	for (i = 0; i < nc; i++) {
		cum += fmax(0, W / pp - fs[i % pp]) / vpp + fixed[i];
		tgt[i] = total > 0 ? W * cum / total : 0;
	}
}

static void from_cuts(const struct mt_model *m, const int *first, int n, int ni,
		      struct mt_layout *o)
{
	int c, i;

	memset(o, 0, sizeof(*o));
	o->n = n;
	o->mtp_chunk = -1;
	for (c = 0; c < n; c++) {
		int end = c + 1 < n ? first[c + 1] : ni;

		for (i = first[c]; i < end; i++) {
			if (i >= 1 && i <= m->layers) {
				o->t[c]++;
				o->layers++;
			} else if (m->mtp_layers > 0 && i == m->layers + 1) {
				o->m[c] = (unsigned char)m->mtp_layers;
				o->mtp = m->mtp_layers;
				o->mtp_chunk = c;
			}
		}
	}
}

/* The heaviest stage of a layout from the items' weights (items()). */
static double max_stage_w(const double *w, int ni, const struct mt_layout *l, int pp)
{
	static double st[MT_LAYOUT_MAX];
	double best = 0;
	int c, i, item = 1;

	for (c = 0; c < pp; c++)
		st[c] = 0;
	for (c = 0; c < l->n; c++) {
		for (i = 0; i < l->t[c]; i++)
			st[c % pp] += w[item++];
		if (l->m[c])
			st[c % pp] += w[ni - 2];
	}
	st[(l->n - 1) % pp] += w[ni - 1];
	for (c = 0; c < pp; c++)
		if (st[c] > best)
			best = st[c];
	return best;
}

/* Keep `cand` in *o when it is valid and its heaviest stage is lighter. */
static void keep_lighter(const double *w, int ni, int pp, const struct mt_layout *cand,
			 struct mt_layout *o, double *best)
{
	double ms;

	char str[MT_LAYOUT_STR_MAX + 1];

	/* a layout Megatron reads back from a flag of at most
	 * MT_LAYOUT_STR_MAX characters (the Bridge override quotes it) */
	if ((cand->mtp && cand->mtp_chunk < cand->n - pp) ||
	    mt_layout_format(cand, str, sizeof(str) - 2) < 0)
		return;
	ms = max_stage_w(w, ni, cand, pp);
	if (*best < 0 || ms < *best) {
		memcpy(o, cand, sizeof(*cand));
		*best = ms;
	}
}

int mt_layout_balanced(const struct mt_model *m, int seq, int pp, int vpp, struct mt_layout *o)
{
	static struct mt_layout cand; /* large: kept off the stack */
	static double tgt[MT_LAYOUT_MAX];
	double w[MT_LAYOUT_MAX + 3], lo = 0, hi = 0, W = 0, best = -1;
	int first[MT_LAYOUT_MAX], n = pp * vpp, ni, it, i, v;

	o->n = 0;
	ni = items(m, seq, w, MT_LAYOUT_MAX + 3);
	if (ni < 0 || n < 1 || n > MT_LAYOUT_MAX || n > ni)
		return -1;
	for (i = 0; i < ni; i++) {
		W += w[i];
		if (w[i] > lo)
			lo = w[i];
	}
	/* (a) equal stages, the MTP layers with the loss or just before it */
	for (v = 0; v < (m->mtp_layers > 0 ? 2 : 1); v++) {
		stage_targets(w, ni, n, pp, m->mtp_layers > 0, v, tgt);
		cut_at(w, ni, n, tgt, first);
		from_cuts(m, first, n, ni, &cand);
		keep_lighter(w, ni, pp, &cand, o, &best);
	}
	/* (b) equal chunks */
	for (i = 0; i < n; i++)
		tgt[i] = W * (i + 1) / n;
	cut_at(w, ni, n, tgt, first);
	from_cuts(m, first, n, ni, &cand);
	keep_lighter(w, ni, pp, &cand, o, &best);
	/* (c) the lightest heaviest chunk, packed from the loss end */
	hi = W;
	if (!pack(w, ni, n, lo, first)) {
		for (it = 0; it < 48 && hi - lo > 1e-9 * hi; it++) {
			double mid = 0.5 * (lo + hi);
			if (pack(w, ni, n, mid, first))
				hi = mid;
			else
				lo = mid;
		}
		pack(w, ni, n, hi, first);
	}
	from_cuts(m, first, n, ni, &cand);
	keep_lighter(w, ni, pp, &cand, o, &best);
	return best < 0 ? -1 : 0;
}

double mt_layout_max_stage(const struct mt_model *m, int seq, const struct mt_layout *l, int pp)
{
	double st[MT_LAYOUT_MAX] = { 0 }, best = 0;
	int c, i, layer = 0;

	if (pp < 1 || pp > MT_LAYOUT_MAX)
		return 0;
	for (c = 0; c < l->n; c++) {
		for (i = 0; i < l->t[c]; i++)
			st[c % pp] += mt_layout_weight_layer(m, seq, layer++);
		st[c % pp] += l->m[c] * mt_layout_weight_mtp(m, seq);
	}
	st[(l->n - 1) % pp] += mt_layout_weight_loss(m);
	for (c = 0; c < pp; c++)
		if (st[c] > best)
			best = st[c];
	return best;
}

/* ---- writing, into fixed buffers (the search formats without allocating) */

struct out {
	char *buf;
	size_t cap, len;
	int failed;
};

static void layout_put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void layout_put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->cap - o->len)
		o->failed = 1;
	else
		o->len += (size_t)n;
}

static void run(struct out *o, char c, int n)
{
	if (n == 1)
		layout_put(o, "%c", c);
	else if (n == 2)
		layout_put(o, "%c%c", c, c);
	else if (n > 2)
		layout_put(o, "%c*%d", c, n);
}

static void chunk_str(const struct mt_layout *l, int c, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0, 0 };

	buf[0] = '\0';
	if (c == 0)
		layout_put(&o, "E");
	run(&o, 't', l->t[c]);
	run(&o, 'm', l->m[c]);
	if (c == l->n - 1)
		layout_put(&o, "L");
}

int mt_layout_format(const struct mt_layout *l, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0, 0 };
	char a[48], b[48];
	int c = 0, k;

	if (!cap)
		return -1;
	buf[0] = '\0';
	while (c < l->n && !o.failed) {
		chunk_str(l, c, a, sizeof(a));
		for (k = 1; c + k < l->n; k++) {
			chunk_str(l, c + k, b, sizeof(b));
			if (strcmp(a, b))
				break;
		}
		if (c + k == l->n && k >= 2) { /* the last run: no trailing '|' */
			if (k == 2)
				layout_put(&o, "%s|%s", a, a);
			else
				layout_put(&o, "(%s|)*%d%s", a, k - 1, a);
		} else if (k >= 2) {
			layout_put(&o, "(%s|)*%d", a, k);
		} else {
			layout_put(&o, "%s%s", a, c + 1 < l->n ? "|" : "");
		}
		c += k;
	}
	return o.failed ? -1 : (int)o.len;
}

int mt_layout_of(const struct mt_model *m, const struct mt_job *j, int pp, int vpp,
		 struct mt_layout *out)
{
	if (j->pins.layout) {
		if (j->pins.layout->n != pp * vpp)
			return -1;
		memcpy(out, j->pins.layout, sizeof(*out));
		return 0;
	}
	return mt_layout_balanced(m, j->seq, pp, vpp, out);
}
