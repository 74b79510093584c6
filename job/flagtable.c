/* SPDX-License-Identifier: MIT */
/* flagtable: flags and overrides by upstream release (flagtable.h). */
#include "flagtable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEGATRON MT_FLAG_MEGATRON
#define BRIDGE MT_FLAG_BRIDGE
#define SAME MT_CONV_SAME
#define LAYERS_PER_STAGE MT_CONV_LAYERS_PER_STAGE
#define BARE MT_CONV_BARE

#define MT_FORK(kind, name, base, src)
#define MT_FORK_FLAG(kind, fork, name)
static const struct mt_flag_row rows[] = {
#define MT_RELEASE(kind, name)
#define MT_FLAG(kind, name, first, last, older, conv, src, src_new) \
	{ kind, name, first, last, older, conv, src, src_new },
#include "flagtable.def"
#undef MT_FLAG
#undef MT_RELEASE
};

struct release {
	int kind;
	const char *name;
};

static const struct release releases[] = {
#define MT_FLAG(kind, name, first, last, older, conv, src, src_new)
#define MT_RELEASE(kind, name) { kind, name },
#include "flagtable.def"
#undef MT_FLAG
#undef MT_RELEASE
};

#undef MT_FORK
#undef MT_FORK_FLAG

struct fork {
	int kind;
	const char *name, *base, *source;
};

static const struct fork forks[] = {
#define MT_FLAG(kind, name, first, last, older, conv, src, src_new)
#define MT_RELEASE(kind, name)
#define MT_FORK(kind, name, base, src) { kind, name, base, src },
#define MT_FORK_FLAG(kind, fork, name)
#include "flagtable.def"
#undef MT_FLAG
#undef MT_RELEASE
#undef MT_FORK
#undef MT_FORK_FLAG
};

struct fork_flag {
	int kind;
	const char *fork, *name;
};

static const struct fork_flag fork_flags[] = {
#define MT_FLAG(kind, name, first, last, older, conv, src, src_new)
#define MT_RELEASE(kind, name)
#define MT_FORK(kind, name, base, src)
#define MT_FORK_FLAG(kind, fork, name) { kind, fork, name },
#include "flagtable.def"
#undef MT_FLAG
#undef MT_RELEASE
#undef MT_FORK
#undef MT_FORK_FLAG
};

#define NROWS ((int)(sizeof(rows) / sizeof(rows[0])))
#define NREL ((int)(sizeof(releases) / sizeof(releases[0])))
#define NFORK ((int)(sizeof(forks) / sizeof(forks[0])))
#define NFORKFLAG ((int)(sizeof(fork_flags) / sizeof(fork_flags[0])))

const struct mt_flag_row *mt_flag_rows(int *n)
{
	*n = NROWS;
	return rows;
}

const struct mt_flag_row *mt_flag_find(int kind, const char *name)
{
	int i;

	for (i = 0; i < NROWS; i++)
		if (rows[i].kind == kind && !strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

int mt_release_count(int kind)
{
	int i, n = 0;

	for (i = 0; i < NREL; i++)
		n += releases[i].kind == kind;
	return n;
}

/* The fork of index i (mt_release_count(kind) and up), or NULL */
static const struct fork *fork_at(int kind, int i)
{
	int k;

	i -= mt_release_count(kind);
	for (k = 0; i >= 0 && k < NFORK; k++)
		if (forks[k].kind == kind && i-- == 0)
			return &forks[k];
	return NULL;
}

int mt_release_forks(int kind)
{
	int k, n = 0;

	for (k = 0; k < NFORK; k++)
		n += forks[k].kind == kind;
	return n;
}

const char *mt_release_name(int kind, int i)
{
	const struct fork *f = fork_at(kind, i);
	int k;

	if (f)
		return f->name;
	for (k = 0; k < NREL; k++)
		if (releases[k].kind == kind && i-- == 0)
			return releases[k].name;
	return NULL;
}

const char *mt_release_fork_base(int kind, int i)
{
	const struct fork *f = fork_at(kind, i);

	return f ? f->base : NULL;
}

/* "0.14" matches "core_v0.14.0" and "v0.14.0": the number after the prefix,
 * with ".0" implied for a missing patch level. */
static int same_number(const char *rel, const char *s)
{
	const char *num = strchr(rel, 'v');
	size_t n = strlen(s);

	num = num ? num + 1 : rel;
	if (!strcmp(num, s))
		return 1;
	return !strncmp(num, s, n) && !strcmp(num + n, ".0") && n > 0;
}

int mt_release_find(int kind, const char *name)
{
	int i, n = mt_release_count(kind);

	for (i = n; i < n + mt_release_forks(kind); i++)
		if (!strcmp(mt_release_name(kind, i), name))
			return i;
	for (i = 0; i < n; i++)
		if (!strcmp(mt_release_name(kind, i), name))
			return i;
	for (i = 0; i < n; i++)
		if (same_number(mt_release_name(kind, i), name))
			return i;
	return -1;
}

int mt_release_resolve(int kind, int setting)
{
	int n = mt_release_count(kind);

	return setting > 0 && setting <= n + mt_release_forks(kind) ? setting - 1 : n - 1;
}

int mt_flag_accepts(const struct mt_flag_row *r, int rel)
{
	const struct fork *f = fork_at(r->kind, rel);
	int first = mt_release_find(r->kind, r->first), k;

	if (f) {
		for (k = 0; k < NFORKFLAG; k++)
			if (fork_flags[k].kind == r->kind && !strcmp(fork_flags[k].fork, f->name) &&
			    !strcmp(fork_flags[k].name, r->name))
				return 1;
		return mt_flag_accepts(r, mt_release_find(r->kind, f->base));
	}
	int last = r->last[0] ? mt_release_find(r->kind, r->last) : mt_release_count(r->kind) - 1;

	return first >= 0 && last >= 0 && rel >= first && rel <= last;
}

static long long find_num(const struct mt_kv *o, int n, const char *key)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(o[i].key, key))
			return atoll(o[i].val);
	return 0;
}

/* The value for the older spelling; 0 when it cannot be given. */
static int convert(const struct mt_flag_row *r, struct mt_kv *kv, const struct mt_kv *o, int n)
{
	long long layers, pp, vpp;

	switch (r->conv) {
	case MT_CONV_BARE:
		kv->val[0] = '\0';
		return 1;
	case MT_CONV_LAYERS_PER_STAGE:
		/* an uneven split (first/last stage layers) has no such form */
		layers = find_num(o, n, "num-layers");
		pp = find_num(o, n, "pipeline-model-parallel-size");
		vpp = atoll(kv->val);
		if (layers <= 0 || pp <= 0 || vpp <= 0 || layers % (pp * vpp) ||
		    find_num(o, n, "decoder-first-pipeline-num-layers") > 0)
			return 0;
		snprintf(kv->val, sizeof(kv->val), "%lld", layers / (pp * vpp));
		return 1;
	default:
		return 1;
	}
}

/* The item becomes a note; `what` names it ("--foo", "--foo flex", "a.b"). */
static void needs_note(int kind, const struct mt_flag_row *r, int rel, struct mt_kv *kv,
		       const char *what)
{
	const char *who = kind == MT_FLAG_MEGATRON ? "Megatron-LM" : "Megatron-Bridge";
	const char *base = mt_release_fork_base(kind, rel);
	int first = mt_release_find(kind, r->first);
	char key[sizeof(kv->key)];

	snprintf(key, sizeof(key), "%s", kv->key);
	if (base) { /* a fork: as its base release, named itself */
		snprintf(kv->key, sizeof(kv->key), "#%.94s", key);
		snprintf(kv->val, sizeof(kv->val), "%s is not accepted by %s (%s, %s)", what,
			 mt_release_name(kind, rel), who, base);
		return;
	}
	snprintf(kv->key, sizeof(kv->key), "#%.94s", key);
	if (rel < first)
		snprintf(kv->val, sizeof(kv->val), "%s needs %s >= %s (left out for %s)", what, who,
			 r->first, mt_release_name(kind, rel));
	else
		snprintf(kv->val, sizeof(kv->val), "%s was accepted up to %s %s (left out for %s)",
			 what, who, r->last, mt_release_name(kind, rel));
}

/* A value a release's parser does not accept: a row "name=value". */
static const struct mt_flag_row *refused_value(int kind, int rel, const struct mt_kv *kv)
{
	char nv[sizeof(kv->key) + sizeof(kv->val) + 1];
	const struct mt_flag_row *r;

	if (!kv->val[0])
		return NULL;
	snprintf(nv, sizeof(nv), "%s=%s", kv->key, kv->val);
	r = mt_flag_find(kind, nv);
	return r && !mt_flag_accepts(r, rel) ? r : NULL;
}

int mt_flags_for_release(int kind, int rel, struct mt_kv *o, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		const struct mt_flag_row *r, *old;
		char what[sizeof(o->key) + sizeof(o->val) + 4];
		const char *dash;
		struct mt_kv kv;

		if (o[i].key[0] == '#')
			continue;
		r = mt_flag_find(kind, o[i].key);
		if (!r)
			continue;
		dash = kind == MT_FLAG_MEGATRON ? "--" : "";
		if (mt_flag_accepts(r, rel)) {
			old = refused_value(kind, rel, &o[i]);
			snprintf(what, sizeof(what), "%s%s %s", dash, o[i].key, o[i].val);
			if (old)
				needs_note(kind, old, rel, &o[i], what);
			continue;
		}
		/* a value the older spelling cannot carry (hybridep was never
		 * --moe-enable-deepep) is a note, not a conversion */
		if ((old = refused_value(kind, rel, &o[i]))) {
			snprintf(what, sizeof(what), "%s%s %s", dash, o[i].key, o[i].val);
			needs_note(kind, old, rel, &o[i], what);
			continue;
		}
		old = r->older[0] ? mt_flag_find(kind, r->older) : NULL;
		kv = o[i];
		if (old && mt_flag_accepts(old, rel) && convert(r, &kv, o, n)) {
			snprintf(o[i].key, sizeof(o[i].key), "%s", old->name);
			snprintf(o[i].val, sizeof(o[i].val), "%s", kv.val);
			continue;
		}
		snprintf(what, sizeof(what), "%s%s", dash, o[i].key);
		needs_note(kind, r, rel, &o[i], what);
	}
	return n;
}

int mt_job_loongforge(const struct mt_job *j)
{
	const char *n = mt_release_name(MT_FLAG_MEGATRON,
					mt_release_resolve(MT_FLAG_MEGATRON, j->megatron_version));

	return n && !strcmp(n, "loongforge");
}
