/* SPDX-License-Identifier: MIT */
/* metrics: the set of figures of one document, and finding its kind. */
#include "metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../lib/fsutil.h"
#include "../perfmodel/profile.h"

#define MAX_INPUT ((size_t)512 << 20)

static char *dup_str(const char *s)
{
	size_t n = strlen(s ? s : "") + 1;
	char *d = malloc(n);

	if (d)
		memcpy(d, s ? s : "", n);
	return d;
}

struct mt_cm_metric *mt_cm_add(struct mt_cm_set *s, const char *id, const char *name,
			       const char *unit, int higher_better, double value)
{
	struct mt_cm_metric *m;

	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 64;
		struct mt_cm_metric *nm = realloc(s->m, (size_t)cap * sizeof(*nm));

		if (!nm)
			return NULL;
		s->m = nm;
		s->cap = cap;
	}
	m = &s->m[s->n];
	memset(m, 0, sizeof(*m));
	m->id = dup_str(id);
	m->name = dup_str(name);
	if (!m->id || !m->name) {
		free(m->id);
		free(m->name);
		return NULL;
	}
	m->unit = unit;
	m->higher_better = higher_better;
	m->value = value;
	m->canary_ix = -1;
	m->cv = NAN;
	m->spread = NAN;
	s->n++;
	return m;
}

int mt_cm_set_samples(struct mt_cm_metric *m, const double *x, int n)
{
	if (n <= 0)
		return MT_OK;
	free(m->samples);
	if (!(m->samples = malloc((size_t)n * sizeof(double)))) {
		m->nsamples = 0;
		return MT_ENOMEM;
	}
	memcpy(m->samples, x, (size_t)n * sizeof(double));
	m->nsamples = n;
	return MT_OK;
}

int mt_cm_add_canary(struct mt_cm_set *s, double rank, double us)
{
	struct mt_cm_canary *c;
	int i;

	for (i = 0; i < s->ncanaries && s->canaries[i].rank != rank; i++)
		;
	if (i == s->ncanaries) {
		if (s->ncanaries == s->capcanaries) {
			int cap = s->capcanaries ? 2 * s->capcanaries : 4;
			struct mt_cm_canary *n = realloc(s->canaries, (size_t)cap * sizeof(*n));

			if (!n)
				return -1;
			s->canaries = n;
			s->capcanaries = cap;
		}
		s->canaries[i] = (struct mt_cm_canary){ rank, NULL, 0, 0, 0 };
		s->ncanaries++;
	}
	c = &s->canaries[i];
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 64;
		double *v = realloc(c->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -1;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = us;
	return i;
}

void mt_cm_canary_medians(struct mt_cm_set *s)
{
	int i;

	for (i = 0; i < s->ncanaries; i++)
		if (s->canaries[i].n)
			s->canaries[i].median = mt_median(s->canaries[i].v, (size_t)s->canaries[i].n);
}

static const struct mt_cm_set *sort_set;

/* by id, then round, then document order */
static int by_id_round(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	const struct mt_cm_metric *p = &sort_set->m[x], *q = &sort_set->m[y];
	int c = strcmp(p->id, q->id);

	if (!c)
		c = (p->round > q->round) - (p->round < q->round);
	return c ? c : (x > y) - (x < y);
}

static int merge_group(struct mt_cm_metric *m, const int *ix, int n, char *dead)
{
	struct mt_cm_metric *first = &m[ix[0]];
	int i, ns = 0, nc = 0;
	double *r, *tmp, *smp;

	for (i = 0; i < n; i++)
		ns += m[ix[i]].nsamples;
	r = malloc((size_t)n * sizeof(double));
	tmp = malloc((size_t)n * sizeof(double));
	smp = malloc((size_t)(ns ? ns : 1) * sizeof(double));
	if (!r || !tmp || !smp) {
		free(r);
		free(tmp);
		free(smp);
		return MT_ENOMEM;
	}
	for (i = ns = 0; i < n; i++) {
		struct mt_cm_metric *x = &m[ix[i]];

		r[i] = x->value;
		if (x->canary > 0)
			tmp[nc++] = x->canary;
		if (x->nsamples)
			memcpy(smp + ns, x->samples, (size_t)x->nsamples * sizeof(double));
		ns += x->nsamples;
		dead[ix[i]] = i > 0;
	}
	first->canary = nc ? mt_median(tmp, (size_t)nc) : 0;
	memcpy(tmp, r, (size_t)n * sizeof(double)); /* mt_median reorders its input */
	first->value = mt_median(tmp, (size_t)n);
	free(tmp);
	if (!ns) {
		free(smp);
		smp = NULL;
	}
	free(first->samples);
	free(first->rounds);
	first->samples = smp;
	first->nsamples = ns;
	first->rounds = r;
	first->nrounds = n;
	first->cv = NAN;
	first->n = n;
	return MT_OK;
}

int mt_cm_merge_rounds(struct mt_cm_set *s)
{
	int *ix, i, j, k, any = 0, rc = MT_OK;
	char *dead;

	for (i = 0; i < s->n && !any; i++)
		any = s->m[i].round > 0;
	if (!any)
		return MT_OK;
	ix = malloc((size_t)s->n * sizeof(int));
	dead = calloc((size_t)s->n, 1);
	if (!ix || !dead) {
		free(ix);
		free(dead);
		return MT_ENOMEM;
	}
	for (i = 0; i < s->n; i++)
		ix[i] = i;
	sort_set = s;
	qsort(ix, (size_t)s->n, sizeof(int), by_id_round);
	for (i = 0; i < s->n && !rc; i = j) {
		for (j = i + 1; j < s->n && !strcmp(s->m[ix[i]].id, s->m[ix[j]].id); j++)
			;
		if (j - i >= 2 && s->m[ix[i]].round > 0)
			rc = merge_group(s->m, ix + i, j - i, dead);
	}
	for (i = k = 0; i < s->n; i++) {
		if (dead[i]) {
			free(s->m[i].id);
			free(s->m[i].name);
			free(s->m[i].samples);
			free(s->m[i].rounds);
			continue;
		}
		s->m[k++] = s->m[i];
	}
	s->n = k;
	free(ix);
	free(dead);
	return rc;
}

static int by_id(const void *a, const void *b)
{
	return strcmp(sort_set->m[*(const int *)a].id, sort_set->m[*(const int *)b].id);
}

/* Make ids unique: a second "x" becomes "x #2" (a document that repeats a
 * case, e.g. two runs of one collective in one log, keeps both). */
static int uniquify(struct mt_cm_set *s)
{
	int i, k;

	for (i = 1; i < s->n; i++) {
		int a = s->order[i - 1], b = s->order[i];
		size_t len;
		char *nid;

		if (strcmp(s->m[a].id, s->m[b].id))
			continue;
		/* the later one in the document gets the suffix */
		if (a > b) {
			int t = a;
			a = b;
			b = t;
		}
		len = strlen(s->m[b].id) + 16;
		for (k = 2;; k++) {
			if (!(nid = malloc(len)))
				return MT_ENOMEM;
			snprintf(nid, len, "%s #%d", s->m[b].id, k);
			if (mt_cm_find(s, nid) < 0)
				break;
			free(nid);
		}
		free(s->m[b].id);
		s->m[b].id = nid;
		return 1; /* re-sort */
	}
	return 0;
}

int mt_cm_index(struct mt_cm_set *s)
{
	int i, rc;

	free(s->order);
	s->order = NULL;
	if (s->n == 0)
		return MT_OK;
	if (!(s->order = malloc((size_t)s->n * sizeof(int))))
		return MT_ENOMEM;
	for (i = 0; i < s->n; i++)
		s->order[i] = i;
	do {
		sort_set = s;
		qsort(s->order, (size_t)s->n, sizeof(int), by_id);
		sort_set = NULL;
		rc = uniquify(s);
	} while (rc == 1);
	return rc;
}

int mt_cm_find(const struct mt_cm_set *s, const char *id)
{
	int lo = 0, hi = s->n - 1;

	if (!s->order)
		return -1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(s->m[s->order[mid]].id, id);

		if (!c)
			return s->order[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

void mt_cm_set_free(struct mt_cm_set *s)
{
	int i;

	for (i = 0; i < s->n; i++) {
		free(s->m[i].id);
		free(s->m[i].name);
		free(s->m[i].samples);
		free(s->m[i].rounds);
	}
	for (i = 0; i < s->ncanaries; i++)
		free(s->canaries[i].v);
	free(s->canaries);
	free(s->m);
	free(s->order);
	memset(s, 0, sizeof(*s));
}

const char *mt_cm_unit(const char *s)
{
	static const char *const units[] = { "us", "s", "GB/s", "TFLOP/s", "%", "tokens/s",
					     "Gparam/s", NULL };
	int i;

	for (i = 0; s && units[i]; i++)
		if (!strcmp(s, units[i]))
			return units[i];
	return "?";
}

const char *mt_cm_size(char *buf, size_t cap, double bytes)
{
	static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int i = 0;

	while (bytes >= 1024 && i < 4) {
		bytes /= 1024;
		i++;
	}
	snprintf(buf, cap, bytes == floor(bytes) ? "%.0f %s" : "%.3g %s", bytes, u[i]);
	return buf;
}

/* The schema of a JSON document, or of the first line of JSON Lines: into
 * buf ("" when none); 1 when the text starts as JSON. */
static int find_schema(const char *text, size_t len, char *buf, size_t cap)
{
	size_t i = 0, eol;
	cJSON *doc;
	const cJSON *s;

	buf[0] = 0;
	while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
		i++;
	if (i == len || (text[i] != '{' && text[i] != '['))
		return 0;
	doc = cJSON_ParseWithLength(text + i, len - i);
	if (!doc) {
		for (eol = i; eol < len && text[eol] != '\n'; eol++)
			;
		doc = cJSON_ParseWithLength(text + i, eol - i);
	}
	s = doc ? cJSON_GetObjectItemCaseSensitive(doc, "schema") : NULL;
	if (cJSON_IsString(s))
		snprintf(buf, cap, "%s", s->valuestring);
	cJSON_Delete(doc);
	return 1;
}

/* "megatune.result/2" against "megatune.result/1": the same kind, newer */
static int newer_version(const char *have, const char *known)
{
	const char *sh = strrchr(have, '/'), *sk = strrchr(known, '/');

	return sh && sk && sh - have == sk - known && !strncmp(have, known, (size_t)(sh - have)) &&
	       atoi(sh + 1) > atoi(sk + 1);
}

int mt_cm_parse(const char *path, const char *text, size_t len, struct mt_cm_set *out,
		struct mt_error *err)
{
	char schema[128];
	const struct mt_cm_kind *k;
	int rc, json;

	memset(out, 0, sizeof(*out));
	json = find_schema(text, len, schema, sizeof(schema));
	for (k = mt_cm_kinds; k->name; k++) {
		if (k->schema ? (json && !strcmp(schema, k->schema))
			      : (!json && k->sniff && k->sniff(path, text, len)))
			break;
	}
	if (!k->name) {
		const struct mt_cm_kind *n;

		for (n = mt_cm_kinds; schema[0] && n->name; n++)
			if (n->schema && newer_version(schema, n->schema))
				return mt_error_set(err, MT_EINVAL, "%s: field 'schema': '%s' is newer "
						    "than this megatune reads (%s)", path, schema,
						    n->schema);
		if (json)
			return mt_error_set(err, MT_EINVAL, "%s: field 'schema': expected a document "
					    "megatune compares (megatune.result/1, profile/1, "
					    "analysis/1, advice/1, validation/1), got %s%s%s", path,
					    schema[0] ? "'" : "none", schema, schema[0] ? "'" : "");
		return mt_error_set(err, MT_EINVAL, "%s: not a megatune document, nccl-tests "
				    "output or nvbandwidth output", path);
	}
	out->kind = k->name;
	rc = k->extract(path, text, len, out, err);
	if (!rc && (rc = mt_cm_index(out)))
		rc = mt_error_set(err, rc, "%s: out of memory", path);
	return rc;
}

int mt_cm_load(const char *path, struct mt_cm_set *out, struct mt_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!mt_is_path(path) && !strchr(path, '.')) { /* a bundled profile ("dgx-h100") */
		cJSON *doc = NULL;

		if ((rc = mt_profile_load_json(path, &doc, err)))
			return rc;
		text = cJSON_PrintUnformatted(doc);
		cJSON_Delete(doc);
		if (!text)
			return mt_error_set(err, MT_ENOMEM, "%s: out of memory", path);
		len = strlen(text);
	} else if ((rc = mt_read_file(path, MAX_INPUT, &text, &len, err))) {
		return rc;
	}
	rc = mt_cm_parse(path, text, len, out, err);
	free(text);
	return rc;
}
