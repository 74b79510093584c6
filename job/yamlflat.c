/* SPDX-License-Identifier: MIT */
/* yamlflat: a YAML document as dotted paths and scalars (job/yamlflat.h). */
#include "yamlflat.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 32

static int yamlflat_push(struct mt_yflat *f, const char *path, const char *val, int line, int list,
		int null, int quoted)
{
	struct mt_yitem *it;

	if (f->n == f->cap) {
		int cap = f->cap ? 2 * f->cap : 256;
		struct mt_yitem *v = realloc(f->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -1;
		f->v = v;
		f->cap = cap;
	}
	it = &f->v[f->n++];
	memset(it, 0, sizeof(*it));
	snprintf(it->path, sizeof(it->path), "%s", path);
	snprintf(it->val, sizeof(it->val), "%s", val);
	it->line = line;
	it->list = list;
	it->null = null;
	it->quoted = quoted;
	return 0;
}

static int plain_null(const yaml_node_t *n)
{
	const char *s = (const char *)n->data.scalar.value;

	return n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
		!strcmp(s, "NULL"));
}

static int quoted(const yaml_node_t *n)
{
	return n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
	       n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
}

static int walk(yaml_document_t *d, yaml_node_t *n, const char *path, int depth,
		struct mt_yflat *f)
{
	yaml_node_pair_t *p;
	yaml_node_item_t *i;
	char sub[sizeof(f->v->path)], words[sizeof(f->v->val)];
	size_t o = 0;

	if (!n || depth > MAX_DEPTH)
		return 0;
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return yamlflat_push(f, path, (const char *)n->data.scalar.value, (int)n->start_mark.line + 1, 0,
			    plain_null(n), quoted(n));
	case YAML_SEQUENCE_NODE:
		words[0] = '\0';
		for (i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
			yaml_node_t *c = yaml_document_get_node(d, *i);

			if (!c || c->type != YAML_SCALAR_NODE)
				return 0; /* a sequence of mappings: no knob */
			o += (size_t)snprintf(words + o, o < sizeof(words) ? sizeof(words) - o : 0, "%s%s",
					      o ? " " : "", (const char *)c->data.scalar.value);
		}
		if (o >= sizeof(words))
			words[sizeof(words) - 1] = '\0';
		return yamlflat_push(f, path, words, (int)n->start_mark.line + 1, 1, 0, 0);
	case YAML_MAPPING_NODE:
		for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(d, p->key);
			yaml_node_t *v = yaml_document_get_node(d, p->value);

			if (!k || k->type != YAML_SCALAR_NODE)
				continue;
			if (depth == 0 && v && v->type == YAML_MAPPING_NODE)
				f->nested = 1;
			snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "",
				 (const char *)k->data.scalar.value);
			if (walk(d, v, sub, depth + 1, f))
				return -1;
		}
		return 0;
	default:
		return 0;
	}
}

static struct mt_yitem *yamlflat_find(const struct mt_yflat *f, const char *path)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].path, path))
			return &f->v[i];
	return NULL;
}

const struct mt_yitem *mt_yflat_get(const struct mt_yflat *f, const char *path)
{
	return yamlflat_find(f, path);
}

int mt_yflat_has_section(const struct mt_yflat *f, const char *prefix)
{
	size_t l = strlen(prefix);
	int i;

	for (i = 0; i < f->n; i++)
		if (!strncmp(f->v[i].path, prefix, l) && f->v[i].path[l] == '.')
			return 1;
	return 0;
}

/* ${path} and ${oc.select:path,default}: the value, resolved in place (up
 * to 8 levels: an interpolation may name another) */
static void resolve(struct mt_yflat *f, struct mt_yitem *it, int depth)
{
	char ref[sizeof(it->path)], dflt[sizeof(it->val)];
	const char *s = it->val, *comma;
	struct mt_yitem *to;
	size_t l = strlen(s);

	if (depth > 8 || strncmp(s, "${", 2) || l < 4 || s[l - 1] != '}' || strchr(s + 2, '$'))
		return;
	dflt[0] = '\0';
	s += 2;
	l -= 3;
	if (!strncmp(s, "oc.select:", 10)) {
		s += 10;
		l -= 10;
		if ((comma = memchr(s, ',', l))) {
			snprintf(dflt, sizeof(dflt), "%.*s", (int)(l - (size_t)(comma - s) - 1), comma + 1);
			l = (size_t)(comma - s);
		}
	} else if (memchr(s, ':', l)) {
		return; /* another resolver (oc.env, ...): left as written */
	}
	snprintf(ref, sizeof(ref), "%.*s", (int)l, s);
	to = yamlflat_find(f, ref);
	if (to && to != it) {
		resolve(f, to, depth + 1);
		snprintf(it->val, sizeof(it->val), "%s", to->val);
		it->list = to->list;
		it->null = to->null;
		it->quoted = to->quoted;
	} else {
		while (*dflt == ' ')
			memmove(dflt, dflt + 1, strlen(dflt));
		snprintf(it->val, sizeof(it->val), "%s", dflt);
		it->null = !*dflt || !strcmp(dflt, "null");
		it->list = 0;
	}
}

int mt_yaml_flatten(const char *file, const char *buf, size_t len, struct mt_yflat *out,
		    struct mt_error *err)
{
	yaml_parser_t p;
	yaml_document_t d;
	yaml_node_t *root;
	int rc = MT_OK, i;

	memset(out, 0, sizeof(*out));
	if (!yaml_parser_initialize(&p))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&p, &d)) {
		rc = mt_error_set(err, MT_EINVAL, "%s:%lu: YAML: %s%s%s", file,
				  (unsigned long)p.problem_mark.line + 1,
				  p.problem ? p.problem : "cannot be read", p.context ? " " : "",
				  p.context ? p.context : "");
		yaml_parser_delete(&p);
		return rc;
	}
	root = yaml_document_get_root_node(&d);
	if (root && root->type == YAML_MAPPING_NODE)
		out->root_mapping = 1;
	if (root && walk(&d, root, "", 0, out))
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
	for (i = 0; !rc && i < out->n; i++)
		resolve(out, &out->v[i], 0);
	yaml_document_delete(&d);
	yaml_parser_delete(&p);
	if (rc)
		mt_yflat_free(out);
	return rc;
}

void mt_yflat_free(struct mt_yflat *f)
{
	free(f->v);
	memset(f, 0, sizeof(*f));
}

int mt_yaml_bool(const char *s)
{
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
		return 1;
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
		return 0;
	return -1;
}
