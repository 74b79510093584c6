/* SPDX-License-Identifier: MIT */
/* script: a job's Megatron-LM arguments from a launch script, a file of
 * arguments or a log's arguments block (script.h; the block: argblock.c). */
#include "script.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/sbuf.h"

/* ---- the script's variables: each a list of words (a scalar has one) ---- */

#define MAX_VARS 256
#define MAX_WORDS 4096

struct var {
	char name[64];
	int n;
	char **item;
	int *iline;     /* the line each item was written on */
	int exported;
	int line;
};

struct word {
	char *s;
	int line;
};

struct lexer {
	const char *file;
	const char *p, *end;
	int line;
	struct mt_jobsrc *out;
	struct var vars[MAX_VARS];
	int nvars;
	/* the command being read */
	struct word w[MAX_WORDS];
	int nw;
	struct sbuf cur;
	int have, cur_line;
	/* words of commands that are arguments alone (a file of arguments) */
	struct word loose[MAX_WORDS];
	int nloose;
	int ntrain;            /* training commands seen */
	int hydra;             /* collect Hydra / Bridge overrides (mt_jobsrc_overrides) */
	struct mt_error *err;
};

static int is_name_start(int c) { return isalpha(c) || c == '_'; }
static int is_name_char(int c) { return isalnum(c) || c == '_'; }

static struct var *var_find(struct lexer *x, const char *name, size_t len)
{
	int i;

	for (i = 0; i < x->nvars; i++)
		if (strlen(x->vars[i].name) == len && !strncmp(x->vars[i].name, name, len))
			return &x->vars[i];
	return NULL;
}

static void var_clear(struct var *v)
{
	int i;

	for (i = 0; i < v->n; i++)
		free(v->item[i]);
	free(v->item);
	free(v->iline);
	v->item = NULL;
	v->iline = NULL;
	v->n = 0;
}

static struct var *var_get(struct lexer *x, const char *name, size_t len)
{
	struct var *v = var_find(x, name, len);

	if (v)
		return v;
	if (x->nvars >= MAX_VARS || len >= sizeof(v->name))
		return NULL;
	v = &x->vars[x->nvars++];
	memset(v, 0, sizeof(*v));
	memcpy(v->name, name, len);
	v->name[len] = '\0';
	return v;
}

static void var_push(struct var *v, const char *s, int line)
{
	char **it = realloc(v->item, sizeof(*it) * (size_t)(v->n + 1));
	int *il = it ? realloc(v->iline, sizeof(*il) * (size_t)(v->n + 1)) : NULL;
	char *d = strdup(s);

	if (it)
		v->item = it;
	if (il)
		v->iline = il;
	if (!it || !il || !d) {
		free(d);
		return;
	}
	v->iline[v->n] = line;
	v->item[v->n++] = d;
}

/* ---- words ---- */

static void word_end(struct lexer *x)
{
	if (!x->have)
		return;
	if (x->nw < MAX_WORDS) {
		x->w[x->nw].s = strdup(x->cur.buf ? x->cur.buf : "");
		x->w[x->nw].line = x->cur_line;
		x->nw++;
	}
	sbuf_reset(&x->cur);
	x->have = 0;
}

static void word_start(struct lexer *x)
{
	if (!x->have) {
		x->have = 1;
		x->cur_line = x->line;
		sbuf_reset(&x->cur);
		sbuf_adds(&x->cur, "");
	}
}

/* Text an expansion gives: unquoted, split into words at blanks */
static void script_put_text(struct lexer *x, const char *t, int quoted)
{
	const char *q;

	if (quoted) {
		word_start(x);
		sbuf_adds(&x->cur, t);
		return;
	}
	for (q = t; *q; q++) {
		if (isspace((unsigned char)*q)) {
			word_end(x);
			continue;
		}
		word_start(x);
		sbuf_addc(&x->cur, *q);
	}
}

/* ---- arithmetic: $(( ... )) over integers and the script's variables ---- */

struct arith {
	struct lexer *x;
	const char *p;
	int bad;
};

static long long ar_expr(struct arith *a);

static void ar_ws(struct arith *a)
{
	while (*a->p == ' ' || *a->p == '\t')
		a->p++;
}

static long long ar_atom(struct arith *a)
{
	long long v = 0;

	ar_ws(a);
	if (*a->p == '(') {
		a->p++;
		v = ar_expr(a);
		ar_ws(a);
		if (*a->p == ')')
			a->p++;
		else
			a->bad = 1;
		return v;
	}
	if (*a->p == '-') {
		a->p++;
		return -ar_atom(a);
	}
	if (*a->p == '$')
		a->p++;
	if (*a->p == '{')
		a->p++;
	if (isdigit((unsigned char)*a->p)) {
		char *e;

		v = strtoll(a->p, &e, 10);
		a->p = e;
	} else if (is_name_start((unsigned char)*a->p)) {
		const char *s = a->p;
		struct var *var;

		while (is_name_char((unsigned char)*a->p))
			a->p++;
		var = var_find(a->x, s, (size_t)(a->p - s));
		if (var && var->n > 0)
			v = strtoll(var->item[0], NULL, 10);
		else
			a->bad = 1;
	} else {
		a->bad = 1;
	}
	if (*a->p == '}')
		a->p++;
	return v;
}

static long long ar_term(struct arith *a)
{
	long long v = ar_atom(a), r;

	for (;;) {
		ar_ws(a);
		if (*a->p != '*' && *a->p != '/' && *a->p != '%')
			return v;
		char op = *a->p++;

		r = ar_atom(a);
		if (op == '*')
			v *= r;
		else if (r == 0)
			a->bad = 1;
		else
			v = op == '/' ? v / r : v % r;
	}
}

static long long ar_expr(struct arith *a)
{
	long long v = ar_term(a);

	for (;;) {
		ar_ws(a);
		if (*a->p != '+' && *a->p != '-')
			return v;
		if (*a->p++ == '+')
			v += ar_term(a);
		else
			v -= ar_term(a);
	}
}

/* ---- expansions ---- */

/* The end of a balanced group opened before p (depth 1), or NULL. */
static const char *closing(const char *p, const char *end, char open, char close)
{
	int depth = 1;

	for (; p < end; p++) {
		if (*p == open)
			depth++;
		else if (*p == close && --depth == 0)
			return p;
	}
	return NULL;
}

static void count_lines(struct lexer *x, const char *a, const char *b)
{
	for (; a < b; a++)
		if (*a == '\n')
			x->line++;
}

/* A command substitution up to end: not run, read as empty (a word still) */
static void skip_substitution(struct lexer *x, const char *end, const char *form)
{
	mt_jobsrc_note(x->out, "line %d: a command substitution %s is not run: read as empty", x->line, form);
	count_lines(x, x->p, end);
	x->p = end;
	word_start(x);
}

static void expand_var(struct lexer *x, const char *name, size_t len, int all, long idx,
		       const char *dflt, size_t dlen, int quoted)
{
	struct var *v = var_find(x, name, len);
	int i;

	if (!v || v->n == 0) {
		if (dflt) {
			char *d = strndup(dflt, dlen);

			if (d)
				script_put_text(x, d, quoted);
			free(d);
		} else {
			mt_jobsrc_note(x->out, "$%.*s is not set in the script: read as empty", (int)len, name);
		}
		return;
	}
	if (!all) {
		if (idx >= 0 && idx < v->n)
			script_put_text(x, v->item[idx], quoted);
		return;
	}
	for (i = 0; i < v->n; i++) {
		if (i && quoted)
			word_end(x);
		script_put_text(x, v->item[i], quoted);
		if (x->have) /* an array's words keep the line they were written on */
			x->cur_line = v->iline[i];
		if (!quoted && i + 1 < v->n)
			word_end(x);
	}
}

/* At '$': the expansion, x->p moved past it. */
static void expand(struct lexer *x, int quoted)
{
	const char *p = x->p + 1, *e;

	if (p < x->end && *p == '(' && p + 1 < x->end && p[1] == '(') {
		e = closing(p + 2, x->end, '(', ')');
		if (e && e + 1 < x->end && e[1] == ')') {
			struct arith a = { x, NULL, 0 };
			char *t = strndup(p + 2, (size_t)(e - p - 2)), num[32];
			long long v;

			a.p = t ? t : "";
			v = ar_expr(&a);
			ar_ws(&a);
			if (a.bad || *a.p) {
				mt_jobsrc_note(x->out, "line %d: $((%s)) could not be evaluated: read as empty",
				     x->line, t ? t : "");
			} else {
				snprintf(num, sizeof(num), "%lld", v);
				script_put_text(x, num, 1);
			}
			free(t);
			count_lines(x, x->p, e + 2);
			x->p = e + 2;
			return;
		}
	}
	if (p < x->end && *p == '(') {
		e = closing(p + 1, x->end, '(', ')');
		skip_substitution(x, e ? e + 1 : x->end, "$(...)");
		return;
	}
	if (p < x->end && *p == '{') {
		const char *n = p + 1, *ne;
		long idx = 0;
		int all = 0;

		e = closing(p + 1, x->end, '{', '}');
		if (!e) {
			x->p = x->end;
			return;
		}
		for (ne = n; ne < e && is_name_char((unsigned char)*ne); ne++)
			;
		if (ne < e && *ne == '[') {
			const char *ie = memchr(ne, ']', (size_t)(e - ne));

			if (ie && (ne[1] == '@' || ne[1] == '*'))
				all = 1;
			else if (ie)
				idx = strtol(ne + 1, NULL, 10);
			x->p = ie ? ie + 1 : e;
		} else {
			x->p = ne;
		}
		if (x->p < e && (*x->p == ':' || *x->p == '-')) {
			const char *d = x->p + (*x->p == ':' ? 1 : 0);

			if (d < e && (*d == '-' || *d == '=')) {
				expand_var(x, n, (size_t)(ne - n), all, idx, d + 1, (size_t)(e - d - 1),
					   quoted);
				x->p = e + 1;
				return;
			}
		}
		if (n == ne || x->p != e)
			mt_jobsrc_note(x->out, "line %d: ${%.*s} is not a form megatune expands: read as empty",
			     x->line, (int)(e - n), n);
		else
			expand_var(x, n, (size_t)(ne - n), all, idx, NULL, 0, quoted);
		x->p = e + 1;
		return;
	}
	if (p < x->end && is_name_start((unsigned char)*p)) {
		for (e = p; e < x->end && is_name_char((unsigned char)*e); e++)
			;
		expand_var(x, p, (size_t)(e - p), 0, 0, NULL, 0, quoted);
		x->p = e;
		return;
	}
	if (p < x->end && (isdigit((unsigned char)*p) || strchr("@*#?$!", *p))) {
		mt_jobsrc_note(x->out, "line %d: $%c (a positional or special parameter) is read as empty",
		     x->line, *p);
		x->p = p + 1;
		word_start(x);
		return;
	}
	word_start(x);
	sbuf_addc(&x->cur, '$');
	x->p = p;
}

/* Inside "...": x->p after the opening quote. */
static int dquote(struct lexer *x)
{
	int start = x->line;

	word_start(x);
	while (x->p < x->end && *x->p != '"') {
		if (*x->p == '\\' && x->p + 1 < x->end && strchr("$`\"\\\n", x->p[1])) {
			if (x->p[1] == '\n')
				x->line++;
			else
				sbuf_addc(&x->cur, x->p[1]);
			x->p += 2;
		} else if (*x->p == '$') {
			expand(x, 1);
		} else {
			if (*x->p == '\n')
				x->line++;
			sbuf_addc(&x->cur, *x->p++);
		}
	}
	if (x->p >= x->end)
		return mt_error_set(x->err, MT_EINVAL, "%s:%d: a double quote is not closed", x->file,
				    start);
	x->p++;
	return MT_OK;
}

static void free_words(struct word *w, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(w[i].s);
}

static void skip_comment(struct lexer *x)
{
	while (x->p < x->end && *x->p != '\n')
		x->p++;
}

/* One piece of a word at x->p, which is not a blank or a separator: a
 * backslash (a line continuation or an escaped character), a quoted string,
 * an expansion, a command substitution, or a plain character. */
static int word_part(struct lexer *x)
{
	char c = *x->p;
	const char *q;

	if (c == '\\' && x->p + 1 < x->end) {
		if (x->p[1] == '\n' || (x->p[1] == '\r' && x->p + 2 < x->end && x->p[2] == '\n')) {
			x->line++;
			x->p += x->p[1] == '\n' ? 2 : 3;
			return MT_OK;
		}
		word_start(x);
		sbuf_addc(&x->cur, x->p[1]);
		x->p += 2;
	} else if (c == '\'') {
		if (!(q = memchr(x->p + 1, '\'', (size_t)(x->end - x->p - 1))))
			return mt_error_set(x->err, MT_EINVAL, "%s:%d: a single quote is not closed",
					    x->file, x->line);
		word_start(x);
		sbuf_add(&x->cur, x->p + 1, (size_t)(q - x->p - 1));
		count_lines(x, x->p, q);
		x->p = q + 1;
	} else if (c == '"') {
		x->p++;
		return dquote(x);
	} else if (c == '$') {
		expand(x, 0);
	} else if (c == '`') {
		q = memchr(x->p + 1, '`', (size_t)(x->end - x->p - 1));
		skip_substitution(x, q ? q + 1 : x->end, "`...`");
	} else {
		word_start(x);
		sbuf_addc(&x->cur, c);
		x->p++;
	}
	return MT_OK;
}

/* NAME=( ... ): x->p at '('; the name is the current word without '='. */
static int array_assign(struct lexer *x)
{
	struct word saved[MAX_WORDS];
	int nsaved = x->nw, i, rc = MT_OK;
	char name[64];
	struct var *v;

	snprintf(name, sizeof(name), "%.*s", (int)(x->cur.len - 1), x->cur.buf);
	sbuf_reset(&x->cur);
	x->have = 0;
	memcpy(saved, x->w, sizeof(saved[0]) * (size_t)nsaved);
	x->nw = 0;
	x->p++;
	while (x->p < x->end && *x->p != ')' && !rc) {
		char c = *x->p;

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			word_end(x);
			if (c == '\n')
				x->line++;
			x->p++;
		} else if (c == '#' && !x->have) {
			skip_comment(x);
		} else {
			rc = word_part(x);
		}
	}
	word_end(x);
	if (x->p < x->end)
		x->p++;
	v = var_get(x, name, strlen(name));
	if (v) {
		var_clear(v);
		for (i = 0; i < x->nw; i++)
			var_push(v, x->w[i].s, x->w[i].line);
		v->line = x->line;
	}
	free_words(x->w, x->nw);
	memcpy(x->w, saved, sizeof(saved[0]) * (size_t)nsaved);
	x->nw = nsaved;
	return rc;
}

/* NAME=value: 1 with the name's length in *len, else 0 */
static int assignment(const char *w, size_t *len)
{
	const char *e;

	if (!is_name_start((unsigned char)*w))
		return 0;
	for (e = w; is_name_char((unsigned char)*e); e++)
		;
	if (*e != '=')
		return 0;
	*len = (size_t)(e - w);
	return 1;
}

void mt_jobsrc_setenv(struct mt_jobsrc *s, const char *name, const char *val, int line)
{
	int i;

	for (i = 0; i < s->nenv; i++)
		if (!strcmp(s->env[i].key, name))
			break;
	if (i == s->nenv) {
		if (s->nenv >= MT_JOBSRC_ENV)
			return;
		s->nenv++;
	}
	snprintf(s->env[i].key, sizeof(s->env[i].key), "%s", name);
	snprintf(s->env[i].val, sizeof(s->env[i].val), "%s", val);
	s->env_line[i] = line;
}

static void assign(struct lexer *x, const char *w, size_t len, int line, int exported)
{
	struct var *v = var_get(x, w, len);

	if (!v)
		return;
	var_clear(v);
	var_push(v, w + len + 1, line);
	v->line = line;
	if (exported)
		v->exported = 1;
	if (v->exported)
		mt_jobsrc_setenv(x->out, v->name, w + len + 1, line);
}

static const char *basename_of(const char *s)
{
	const char *b = strrchr(s, '/');

	return b ? b + 1 : s;
}

static int script_ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

/* A launcher option's integer: "--name N" or "--name=N" (an elastic
 * "MIN:MAX" takes MAX). */
static int launcher_int(struct word *w, int i, int n, const char *name, int *out)
{
	size_t l = strlen(name);
	const char *v = NULL, *c;

	if (!strncmp(w[i].s, name, l) && w[i].s[l] == '=')
		v = w[i].s + l + 1;
	else if (!strcmp(w[i].s, name) && i + 1 < n)
		v = w[i + 1].s;
	if (!v)
		return 0;
	c = strrchr(v, ':');
	*out = atoi(c ? c + 1 : v);
	return 1;
}

static int add_args(struct lexer *x, struct word *w, int n);

/* The launcher's GPU counts among words [from, to) */
static void launcher_counts(struct lexer *x, struct word *w, int from, int to)
{
	int k, v;

	for (k = from; k < to; k++) {
		if (launcher_int(w, k, to, "--nproc_per_node", &v) ||
		    launcher_int(w, k, to, "--nproc-per-node", &v) ||
		    launcher_int(w, k, to, "--ntasks-per-node", &v) ||
		    launcher_int(w, k, to, "--gpus-per-node", &v))
			x->out->nproc_per_node = v;
		else if (launcher_int(w, k, to, "--nnodes", &v) ||
			 launcher_int(w, k, to, "--nodes", &v) || launcher_int(w, k, to, "-N", &v))
			x->out->nnodes = v;
	}
}

/* An override word: [+|++|~]a.b.c=value (a dotted key); *klen the key's
 * length after the prefix, which is *pre bytes. */
static int override_word(const char *s, size_t *pre, size_t *klen)
{
	size_t p = 0, k;
	int dot = 0;

	while (p < 2 && (s[p] == '+' || s[p] == '~'))
		p++;
	if (!isalpha((unsigned char)s[p]) && s[p] != '_')
		return 0;
	for (k = p; s[k] && s[k] != '='; k++) {
		if (s[k] == '.')
			dot = 1;
		else if (!isalnum((unsigned char)s[k]) && s[k] != '_' && s[k] != '-')
			return 0;
	}
	/* a key without a dot: Bridge's mixed_precision (a recipe name) */
	if (!dot && (k - p != 15 || strncmp(s + p, "mixed_precision", 15)))
		return 0;
	if (s[k] != '=' && s[0] != '~')
		return 0;
	*pre = p;
	*klen = k - p;
	return 1;
}

/* A command's override words into raw[]: Hydra's (verl) and Bridge's */
static int hydra_words(struct lexer *x, struct word *w, int i, int n)
{
	int k, entry = -1;
	size_t pre, kl, len;
	char key[96];

	for (k = i; k < n; k++)
		if (script_ends_with(w[k].s, ".py") || (k > i && !strcmp(w[k - 1].s, "-m"))) {
			entry = k;
			break;
		}
	if (entry >= 0 && !x->ntrain++) {
		snprintf(x->out->entry, sizeof(x->out->entry), "%s", basename_of(w[entry].s));
		x->out->entry_line = w[entry].line;
		launcher_counts(x, w, i, entry);
		for (k = 0; k < i; k++) { /* VAR=value python ...: its environment */
			assignment(w[k].s, &len);
			w[k].s[len] = '\0';
			mt_jobsrc_setenv(x->out, w[k].s, w[k].s + len + 1, w[k].line);
		}
	}
	for (k = i; k < n; k++) {
		if (!override_word(w[k].s, &pre, &kl))
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)kl, w[k].s + pre);
		if (w[k].s[0] == '~') {
			mt_jobsrc_note(x->out, "line %d: ~%s deletes a key: read as not set", w[k].line, key);
			continue;
		}
		if (!mt_jobsrc_raw(x->out, key, w[k].s + pre + kl + 1, w[k].line))
			return mt_error_set(x->err, MT_EINVAL, "%s:%d: more than %d overrides", x->file,
					    w[k].line, MT_JOBSRC_ARGS);
	}
	return MT_OK;
}

/* A whole command: assignments, a training command or arguments alone. */
static int command(struct lexer *x)
{
	struct word *w = x->w;
	int n = x->nw, i = 0, j, rc = MT_OK, exported = 0;
	size_t len;

	if (n && (!strcmp(w[0].s, "export") || !strcmp(w[0].s, "declare") ||
		  !strcmp(w[0].s, "local") || !strcmp(w[0].s, "readonly") ||
		  !strcmp(w[0].s, "typeset"))) {
		exported = !strcmp(w[0].s, "export");
		for (i = 1; i < n; i++) {
			if (w[i].s[0] == '-')
				continue;
			if (assignment(w[i].s, &len)) {
				assign(x, w[i].s, len, w[i].line, exported);
			} else if (exported) {
				struct var *v = var_find(x, w[i].s, strlen(w[i].s));

				if (v) {
					v->exported = 1;
					mt_jobsrc_setenv(x->out, v->name, v->n ? v->item[0] : "", w[i].line);
				}
			}
		}
		goto done;
	}
	for (i = 0; i < n && assignment(w[i].s, &len); i++)
		;
	if (i == n) { /* assignments alone */
		if (x->hydra && (rc = hydra_words(x, w, 0, n)))
			goto done;
		for (j = 0; j < n; j++) {
			assignment(w[j].s, &len);
			assign(x, w[j].s, len, w[j].line, 0);
		}
		goto done;
	}
	if (x->hydra) {
		rc = hydra_words(x, w, i, n);
		goto done;
	}
	/* the training command: the first word that is a Python script */
	for (j = i; j < n; j++)
		if (script_ends_with(w[j].s, ".py"))
			break;
	if (j < n) {
		int k;

		if (x->ntrain++) {
			mt_jobsrc_note(x->out, "line %d: a second training command (%s) is not read", w[j].line,
			     basename_of(w[j].s));
			goto done;
		}
		x->out->kind = MT_JS_SCRIPT;
		snprintf(x->out->entry, sizeof(x->out->entry), "%s", basename_of(w[j].s));
		x->out->entry_line = w[j].line;
		x->out->loongforge = strstr(w[j].s, "loongforge/") != NULL;
		for (k = 0; k < i; k++) { /* VAR=value torchrun ...: its environment */
			assignment(w[k].s, &len);
			w[k].s[len] = '\0';
			mt_jobsrc_setenv(x->out, w[k].s, w[k].s + len + 1, w[k].line);
		}
		launcher_counts(x, w, i, j);
		rc = add_args(x, w + j + 1, n - j - 1);
		goto done;
	}
	/* arguments alone (a file of arguments) */
	if (i == 0 && !strncmp(w[0].s, "--", 2)) {
		for (j = 0; j < n && x->nloose < MAX_WORDS; j++) {
			x->loose[x->nloose] = w[j];
			w[j].s = NULL;
			x->nloose++;
		}
	}
done:
	free_words(x->w, x->nw);
	x->nw = 0;
	return rc;
}

/* "--flag v v ..." words into arguments */
static int add_args(struct lexer *x, struct word *w, int n)
{
	struct sbuf val = SBUF_INIT;
	int i = 0, rc = MT_OK;

	while (i < n && !rc) {
		const char *k = w[i].s, *eq;
		int line = w[i].line;

		if (strncmp(k, "--", 2) || !k[2]) {
			mt_jobsrc_note(x->out, "line %d: '%s' follows no flag: not read", line, k);
			i++;
			continue;
		}
		k += 2;
		sbuf_reset(&val);
		sbuf_adds(&val, "");
		if ((eq = strchr(k, '='))) {
			sbuf_adds(&val, eq + 1);
			rc = mt_jobsrc_push(x->out, x->file, k, (size_t)(eq - k), val.buf, line, x->err);
			i++;
			continue;
		}
		for (i++; i < n && strncmp(w[i].s, "--", 2); i++) {
			if (val.len)
				sbuf_addc(&val, ' ');
			sbuf_adds(&val, w[i].s);
		}
		rc = mt_jobsrc_push(x->out, x->file, k, strlen(k), val.buf ? val.buf : "", line, x->err);
	}
	sbuf_release(&val);
	return rc;
}

static int lex(struct lexer *x)
{
	int rc = MT_OK;

	while (x->p < x->end && !rc) {
		char c = *x->p;

		if (c == ' ' || c == '\t' || c == '\r') {
			word_end(x);
			x->p++;
		} else if (c == '\n' || c == ';' || c == '&' || c == '|') {
			word_end(x);
			rc = command(x);
			if (c == '\n')
				x->line++;
			x->p++;
		} else if (c == '#' && !x->have) {
			skip_comment(x);
		} else if (c == '(' && x->have && x->cur.len > 1 && x->cur.buf[x->cur.len - 1] == '=' &&
			   assignment(x->cur.buf, &(size_t){ 0 })) {
			rc = array_assign(x);
		} else if (c == '(' && !x->have && x->p + 1 < x->end && x->p[1] == '[') {
			/* a Python list expression left unquoted in a file of
			 * arguments: --moe-layer-freq ([0]*3+[1]*58) */
			sbuf_addc(&x->cur, c);
			x->have = 1;
			x->p++;
		} else if (c == '(' || c == ')' || c == '{' || c == '}') {
			if (x->have)
				sbuf_addc(&x->cur, c);
			else
				word_end(x);
			x->p++;
		} else {
			rc = word_part(x);
		}
		if (x->cur.failed)
			return mt_error_set(x->err, MT_ENOMEM, "out of memory");
	}
	if (!rc) {
		word_end(x);
		rc = command(x);
	}
	return rc;
}

/* 1 when the text holds w */
static int has_word(const char *buf, size_t len, const char *w)
{
	size_t i, n = strlen(w);

	for (i = 0; i + n <= len; i++)
		if (!memcmp(buf + i, w, n))
			return 1;
	return 0;
}

/* What a training log holds that a script does not */
static int looks_like_log(const char *buf, size_t len)
{
	static const char *const marks[] = {
		" iteration", "Step Time", "train_step_timing", "Traceback (most recent", "NCCL",
		"elapsed time", "Epoch ", "forward-backward", NULL,
	};
	int i;

	for (i = 0; marks[i]; i++)
		if (has_word(buf, len, marks[i]))
			return 1;
	return 0;
}

static int run_lexer(const char *file, const char *buf, size_t len, struct mt_jobsrc *s,
		     int hydra, struct mt_error *err)
{
	struct lexer *x = calloc(1, sizeof(*x));
	int rc, i;

	if (!x)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	x->file = file;
	x->p = buf;
	x->end = buf + len;
	x->line = 1;
	x->out = s;
	x->err = err;
	x->hydra = hydra;
	rc = lex(x);
	if (!rc && !hydra && !x->ntrain && x->nloose)
		rc = add_args(x, x->loose, x->nloose);
	free_words(x->w, x->nw);
	free_words(x->loose, x->nloose);
	for (i = 0; i < x->nvars; i++)
		var_clear(&x->vars[i]);
	sbuf_release(&x->cur);
	free(x);
	return rc;
}

int mt_jobsrc_overrides(const char *file, const char *buf, size_t len, struct mt_jobsrc *s,
			struct mt_error *err)
{
	return run_lexer(file, buf, len, s, 1, err);
}

int mt_jobsrc_read(const char *file, const char *buf, size_t len, struct mt_jobsrc *s,
		   struct mt_error *err)
{
	int rc;

	memset(s, 0, sizeof(*s));
	snprintf(s->file, sizeof(s->file), "%s", file);
	if (has_word(buf, len, "--- arguments ---")) {
		s->kind = MT_JS_ARGBLOCK;
		if ((rc = mt_jobsrc_argblock(file, buf, len, s, err)))
			return rc;
		if (!s->n)
			return mt_error_set(err, MT_EINVAL, "%s: the arguments block holds no argument",
					    file);
		return MT_OK;
	}
	s->kind = MT_JS_ARGS;
	rc = run_lexer(file, buf, len, s, 0, err);
	if (!rc && !s->n && looks_like_log(buf, len))
		rc = mt_error_set(err, MT_EINVAL, "%s: a training log without Megatron-LM's arguments "
				  "block or Megatron-Bridge's configuration summary: no job in it "
				  "(both are printed at start-up; give the log from its start, or the "
				  "launch script)", file);
	else if (!rc && !s->n)
		rc = mt_error_set(err, MT_EINVAL, "%s: no Megatron-LM arguments: expected a launch "
				  "script whose command runs a training script (pretrain_gpt.py), "
				  "a file of --flag value arguments, a log with Megatron-LM's "
				  "arguments block, a Megatron-Bridge config (run_config.yaml, its "
				  "overrides or its configuration summary) or a verl config", file);
	return rc;
}

