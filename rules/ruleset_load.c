/* SPDX-License-Identifier: MIT */
/* ruleset_load: rule sets made and freed, filled from rule files, folders
 * of them and the bundled rules (each text read by ruleset.c's parser),
 * then finished with the checks across files (duplicate ids, DISABLE
 * targets); the first problem as an error; a rule by id. */
#include "ruleset.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../lib/bundled.h"
#include "../lib/fsutil.h"
#include "ruleset_int.h"

#define RULE_FILE_MAX (4u << 20)

struct mt_ruleset *mt_ruleset_new(void)
{
	return calloc(1, sizeof(struct mt_ruleset));
}

void mt_ruleset_free(struct mt_ruleset *rs)
{
	int i;

	if (!rs)
		return;
	for (i = 0; i < rs->n; i++)
		mt_rule_clear(&rs->rules[i]);
	free(rs->rules);
	for (i = 0; i < rs->nfiles; i++)
		free(rs->files[i]);
	free(rs->files);
	free(rs->problems);
	free(rs->disables);
	free(rs);
}

static int ruleset_ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);
	return n >= k && !strcmp(s + n - k, suf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_file(struct mt_ruleset *rs, const char *path, int user)
{
	struct mt_error err = MT_ERROR_INIT;
	char *data;
	size_t len;
	int rc;

	if (mt_read_file(path, RULE_FILE_MAX, &data, &len, &err)) {
		char *f = mt_ruleset_keep_file(rs, path);
		if (!f)
			return MT_ENOMEM;
		mt_ruleset_problem(rs, f, 0, "%s", err.msg);
		return 1;
	}
	rc = mt_ruleset_add_text(rs, path, data, len, user);
	free(data);
	return rc;
}

int mt_ruleset_add_path(struct mt_ruleset *rs, const char *path, int user)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	int n = 0, cap = 0, i, total = 0, rc;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return add_file(rs, path, user);
	d = opendir(path);
	if (!d)
		return add_file(rs, path, user);
	while ((de = readdir(d))) {
		char *full;
		size_t len;
		if (de->d_name[0] == '.' || !ruleset_ends_with(de->d_name, ".rules"))
			continue;
		len = strlen(path) + strlen(de->d_name) + 2;
		full = malloc(len);
		if (!full || mt_ruleset_grow((void **)&names, &cap, n + 1, sizeof(*names))) {
			free(full);
			total = MT_ENOMEM;
			break;
		}
		snprintf(full, len, "%s%s%s", path, ruleset_ends_with(path, "/") ? "" : "/", de->d_name);
		names[n++] = full;
	}
	closedir(d);
	if (total == 0 && n == 0) {
		char *f = mt_ruleset_keep_file(rs, path);
		if (!f)
			total = MT_ENOMEM;
		else {
			mt_ruleset_problem(rs, f, 0, "no *.rules file in this folder");
			total = 1;
		}
	}
	if (total >= 0 && n > 0) {
		qsort(names, (size_t)n, sizeof(*names), cmp_str);
		for (i = 0; i < n; i++) {
			rc = add_file(rs, names[i], user);
			if (rc < 0) {
				total = rc;
				break;
			}
			total += rc;
		}
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return total;
}

int mt_ruleset_add_bundled(struct mt_ruleset *rs)
{
	const struct mt_bundled *b;
	int total = 0, rc;

	for (b = mt_bundled_files; b->name; b++) {
		if (strcmp(b->kind, "rules"))
			continue;
		rc = mt_ruleset_add_text(rs, b->path, b->data, b->len, 0);
		if (rc < 0)
			return rc;
		total += rc;
	}
	return total;
}

int mt_ruleset_finish(struct mt_ruleset *rs)
{
	int i, j, keep = 0;

	/* duplicate ids: reported at the user's file when one of the two is
	 * bundled, else at the later one, which is dropped */
	for (i = 0; i < rs->n; i++) {
		for (j = 0; j < i; j++)
			if (!rs->rules[j].disabled && !strcmp(rs->rules[i].id, rs->rules[j].id))
				break;
		if (j < i) {
			int bad = rs->rules[j].user && !rs->rules[i].user ? j : i, other = bad == i ? j : i;
			mt_ruleset_problem(rs, rs->rules[bad].file, rs->rules[bad].line,
				"duplicate rule id '%s', also defined at %s:%d (to replace a rule, "
				"DISABLE it and give yours another id)", rs->rules[bad].id,
				rs->rules[other].file, rs->rules[other].line);
			rs->rules[bad].disabled = 2; /* dropped below */
		}
	}
	for (i = 0; i < rs->ndisables; i++) {
		int found = 0;
		for (j = 0; j < rs->n; j++)
			if (rs->rules[j].disabled != 2 && !strcmp(rs->rules[j].id, rs->disables[i].id)) {
				rs->rules[j].disabled = 1;
				found = 1;
			}
		if (!found)
			mt_ruleset_problem(rs, rs->disables[i].file, rs->disables[i].line,
				"DISABLE %s: no such rule", rs->disables[i].id);
	}
	for (i = 0; i < rs->n; i++) {
		if (rs->rules[i].disabled == 2) {
			mt_rule_clear(&rs->rules[i]);
			continue;
		}
		rs->rules[keep++] = rs->rules[i];
	}
	rs->n = keep;
	rs->finished = 1;
	return rs->nproblems;
}

int mt_ruleset_error(const struct mt_ruleset *rs, struct mt_error *err)
{
	const struct mt_problem *p;

	if (!rs->nproblems)
		return MT_OK;
	p = &rs->problems[0];
	if (p->line > 0)
		return mt_error_set(err, MT_EINVAL, "%s:%d: %s%s", p->file, p->line, p->msg,
				    rs->nproblems > 1 ? " (and more: megatune rules lint lists them)" : "");
	return mt_error_set(err, MT_EINVAL, "%s: %s", p->file, p->msg);
}

int mt_ruleset_load_files(const char *const *paths, int npaths, int bundled,
			  struct mt_ruleset **out, struct mt_error *err)
{
	struct mt_ruleset *rs = mt_ruleset_new();
	int i, rc;

	*out = NULL;
	if (!rs)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	/* the user's files first: their set rules take precedence */
	for (i = 0; i < npaths; i++) {
		rc = mt_ruleset_add_path(rs, paths[i], 1);
		if (rc < 0)
			goto nomem;
	}
	if (bundled && mt_ruleset_add_bundled(rs) < 0)
		goto nomem;
	mt_ruleset_finish(rs);
	if (mt_ruleset_error(rs, err)) {
		mt_ruleset_free(rs);
		return MT_EINVAL;
	}
	*out = rs;
	return MT_OK;
nomem:
	mt_ruleset_free(rs);
	return mt_error_set(err, MT_ENOMEM, "out of memory");
}

const struct mt_rule *mt_ruleset_find(const struct mt_ruleset *rs, const char *id)
{
	int i;

	for (i = 0; i < rs->n; i++)
		if (!strcmp(rs->rules[i].id, id))
			return &rs->rules[i];
	return NULL;
}
