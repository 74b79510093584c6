/* SPDX-License-Identifier: MIT */
/* import: nvbandwidth output, text and -j JSON: the matrices, their SUM
 * lines (checked) and the devices. */
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/jsonr.h"

/* ------------------------------------------------------------------ */
/* nvbandwidth */

static struct mt_nvb_test *new_matrix(struct mt_import *im, const char *name, int line)
{
	struct mt_nvb_test *a, *m;

	if (im->nnvb >= 4096)
		return NULL;
	a = realloc(im->nvb, (size_t)(im->nnvb + 1) * sizeof(*a));
	if (!a)
		return NULL;
	im->nvb = a;
	m = &a[im->nnvb++];
	memset(m, 0, sizeof(*m));
	copys(m->name, sizeof(m->name), name);
	copys(m->status, sizeof(m->status), "Passed");
	m->line = line;
	m->sum_ok = -1;
	m->sum.v = NAN;
	return m;
}

static int matrix_row(struct mt_nvb_test *m)
{
	double *v;

	if (m->ncols <= 0 || m->nrows >= 4096)
		return -1;
	v = realloc(m->v, (size_t)(m->nrows + 1) * (size_t)m->ncols * sizeof(double));
	if (!v)
		return -1;
	m->v = v;
	m->nrows++;
	return 0;
}

static int set_gpu(struct mt_import *im, int idx, const char *name)
{
	char buf[96];
	size_t n;

	if (idx < 0 || idx >= 4096)
		return MT_OK;
	if (idx >= im->ngpu) {
		char (*g)[96] = realloc(im->gpu, (size_t)(idx + 1) * sizeof(*g));
		if (!g)
			return MT_ENOMEM;
		memset(g + im->ngpu, 0, (size_t)(idx + 1 - im->ngpu) * sizeof(*g));
		im->gpu = g;
		im->ngpu = idx + 1;
	}
	/* drop the " (00000000:1b:00)" PCI address */
	copys(buf, sizeof(buf), skipws(name));
	rtrim(buf);
	n = strlen(buf);
	if (n && buf[n - 1] == ')') {
		char *open = strrchr(buf, '(');
		if (open && open > buf && strchr(open, ':') && open[-1] == ' ')
			open[-1] = 0;
	}
	copys(im->gpu[idx], sizeof(im->gpu[0]), buf);
	return MT_OK;
}

static void nvb_sum(struct mt_nvb_test *m, const char *tok, int len)
{
	struct mt_imp_num x;

	if (imp_parse_num(tok, len, &x) == 0) {
		m->has_sum = 1;
		m->sum = x;
	}
}

static void nvb_check(struct mt_import *im, const struct mt_import_opts *o, int *failed,
		      char *first, size_t cap)
{
	int i, k;

	for (i = 0; i < im->nnvb; i++) {
		struct mt_nvb_test *m = &im->nvb[i];
		double sum = 0;
		if (!m->nrows)
			continue;
		for (k = 0; k < m->nrows * m->ncols; k++)
			if (isfinite(m->v[k]))
				sum += m->v[k];
		m->sum_values = sum;
		if (m->has_sum) {
			double tol = m->sum_half + (im->json ? 0 : imp_half_unit(m->sum.s)) + 1e-9 * (1 + sum);
			m->sum_ok = fabs(sum - m->sum.v) <= tol;
			if (!m->sum_ok) {
				char msg[1200];
				snprintf(msg, sizeof(msg), "%s:%d: %s: 'SUM %s' is not the sum of the "
					 "matrix above it (%.6g)", im->path, m->line, m->name, m->sum.s, sum);
				imp_warnf(im, "%s", msg);
				if (!(*failed)++)
					copy(first, cap, msg, strlen(msg));
			}
		}
	}
	(void)o;
}

/* The state of the text reader between lines. */
struct nvbp {
	struct mt_import *im;
	struct mt_error *err;
	struct mt_nvb_test *m;  /* the matrix being read, NULL none */
	char running[96];       /* the test of the last "Running" line */
	char single[128];       /* the last line of a single word (the host) */
	int lineno;
	int state;              /* 0 outside a matrix, 1 its column line next, 2 its rows */
	int markers;            /* lines only nvbandwidth prints */
	int nt_lines;           /* lines only nccl-tests prints */
};

static int nvb_oom(struct nvbp *s)
{
	return mt_error_set(s->err, MT_ENOMEM, "%s: out of memory", s->im->path);
}

/* The lines about the run: versions and devices.  1: one of them (read);
 * 0: another line; <0: an error. */
static int nvb_info_line(struct nvbp *s, const char *q, const struct toks *tk)
{
	struct mt_import *im = s->im;

	if (starts(q, "nvbandwidth Version:")) {
		s->markers++;
		if (tk->n >= 3)
			tok_copy(im->nvb_version, sizeof(im->nvb_version), tk, 2);
		return 1;
	}
	if (starts(q, "Built from Git version:")) {
		if (tk->n >= 5)
			tok_copy(im->nvb_git, sizeof(im->nvb_git), tk, 4);
		return 1;
	}
	if (starts(q, "CUDA Runtime Version:")) {
		if (tk->n >= 4)
			tok_copy(im->cuda_runtime, sizeof(im->cuda_runtime), tk, 3);
		return 1;
	}
	if (starts(q, "Driver Version:")) {
		if (tk->n >= 3)
			tok_copy(im->driver, sizeof(im->driver), tk, 2);
		return 1;
	}
	if (starts(q, "Device ") && tk->n >= 3 && tk->len[1] >= 2 &&
	    tk->p[1][tk->len[1] - 1] == ':' && imp_all_digits(tk->p[1], tk->len[1] - 1)) {
		s->markers++;
		if (!im->host[0] && s->single[0])
			copys(im->host, sizeof(im->host), s->single);
		if (set_gpu(im, toint(tk->p[1]), tk->p[2]))
			return nvb_oom(s);
		return 1;
	}
	if (starts(q, "Process ") && strstr(q, "device")) {
		/* multinode: "Process 0 (host): device 0: NAME (pci)" */
		const char *open = strchr(q, '('), *close = open ? strchr(open, ')') : NULL;
		const char *dev = strstr(q, "device");
		const char *colon = dev ? strchr(dev, ':') : NULL;
		s->markers++;
		if (open && close && !im->host[0])
			copy(im->host, sizeof(im->host), open + 1, (size_t)(close - open - 1));
		if (colon && tk->n >= 2 && imp_all_digits(tk->p[1], tk->len[1]) &&
		    set_gpu(im, toint(tk->p[1]), colon + 1))
			return nvb_oom(s);
		return 1;
	}
	return 0;
}

/* A "SUM test value" or "&&&& PERF test value" line. */
static int nvb_sum_line(struct nvbp *s, const char *q, const struct toks *tk)
{
	struct mt_import *im = s->im;
	int k = starts(q, "SUM ") ? 1 : 2;
	char key[96] = "";

	s->markers++;
	if (tk->n < k + 2)
		return MT_OK;
	tok_copy(key, sizeof(key), tk, k);
	/* the last matrix without its sum, else a SUM line alone */
	if (!s->m || s->m->has_sum) {
		if (!(s->m = new_matrix(im, key, s->lineno)))
			return nvb_oom(s);
	}
	copys(s->m->name, sizeof(s->m->name), key);
	nvb_sum(s->m, tk->p[k + 1], tk->len[k + 1]);
	if (!s->m->has_sum)
		return mt_error_set(s->err, MT_EPARSE, "%s:%d: 'SUM %s': expected a number of GB/s, "
				    "got '%.*s'", im->path, s->lineno, key,
				    tk->len[k + 1] > 40 ? 40 : tk->len[k + 1], tk->p[k + 1]);
	s->state = 0;
	return MT_OK;
}

/* A row of the current matrix: a label and one value per column. */
static int nvb_matrix_row(struct nvbp *s, const struct toks *tk)
{
	struct mt_nvb_test *m = s->m;
	int c;

	if (tk->n != m->ncols + 1)
		return mt_error_set(s->err, MT_EPARSE, "%s:%d: a row of the %s matrix: expected a "
				    "label and %d value%s, got %d field%s", s->im->path, s->lineno,
				    m->name, m->ncols, m->ncols == 1 ? "" : "s", tk->n,
				    tk->n == 1 ? "" : "s");
	if (matrix_row(m))
		return nvb_oom(s);
	for (c = 0; c < m->ncols; c++) {
		struct mt_imp_num x;
		int pr = imp_parse_num(tk->p[c + 1], tk->len[c + 1], &x);
		if (pr < 0)
			return mt_error_set(s->err, MT_EPARSE, "%s:%d: column %d of the %s matrix: "
					    "expected a number or N/A, got '%.*s'", s->im->path,
					    s->lineno, c + 1, m->name,
					    tk->len[c + 1] > 40 ? 40 : tk->len[c + 1], tk->p[c + 1]);
		m->v[(m->nrows - 1) * m->ncols + c] = x.v;
		if (pr == 0)
			m->sum_half += imp_half_unit(x.s);
	}
	return MT_OK;
}

static int nvb_line(struct nvbp *s, char *buf)
{
	struct mt_import *im = s->im;
	const char *q;
	struct toks tk;
	int rc;

	imp_strip_tags(buf);
	rtrim(buf);
	q = skipws(buf);
	if (!*q) {
		if (s->state == 2)
			s->state = 0;
		return MT_OK;
	}
	if (*q == '#' && (strstr(q, "busbw") || strstr(q, "nccl-tests") || strstr(q, "Rank ")))
		s->nt_lines++;
	imp_tokenize(q, &tk);
	if (tk.n > MAXTOK)
		tk.n = MAXTOK;
	if ((rc = nvb_info_line(s, q, &tk)))
		return rc < 0 ? rc : MT_OK;
	if (starts(q, "Running ")) {
		s->markers++;
		s->state = 0;
		tok_copy(s->running, sizeof(s->running), &tk, 1);
		if (s->running[0] && s->running[strlen(s->running) - 1] == '.')
			s->running[strlen(s->running) - 1] = 0;
		s->m = NULL;
		return MT_OK;
	}
	/* a waived test prints no "Running" line: only a status right after
	 * a Running line belongs to it */
	if ((starts(q, "Waived") || starts(q, "ERROR") || starts(q, "Error")) && s->running[0] &&
	    (starts(q, "E") || !s->m)) {
		if (!s->m || strcmp(s->m->name, s->running)) {
			if (!(s->m = new_matrix(im, s->running, s->lineno)))
				return nvb_oom(s);
		}
		copy(s->m->status, sizeof(s->m->status), q, strlen(q));
		s->state = 0;
		return MT_OK;
	}
	if (starts(q, "SUM ") || starts(q, "&&&& PERF "))
		return nvb_sum_line(s, q, &tk);
	if (s->state == 0 && (strstr(q, "bandwidth (GB/s)") || strstr(q, "(ns)") ||
			      starts(q, "memcpy ") || starts(q, "memory latency"))) {
		s->markers++;
		if (!(s->m = new_matrix(im, s->running[0] ? s->running : "?", s->lineno)))
			return nvb_oom(s);
		copys(s->m->desc, sizeof(s->m->desc), q);
		s->state = 1;
		return MT_OK;
	}
	if (s->state == 1) {
		s->m->ncols = tk.n;
		s->state = 2;
		return MT_OK;
	}
	if (s->state == 2)
		return nvb_matrix_row(s, &tk);
	if (tk.n == 1 && !strchr(q, ':'))
		tok_copy(s->single, sizeof(s->single), &tk, 0);
	return MT_OK;
}

static int nvb_line_cb(void *s, char *line)
{
	return nvb_line(s, line);
}

int imp_parse_nvb_text(struct mt_import *im, const char *text, size_t len,
		       const struct mt_import_opts *o, struct mt_error *err)
{
	char first[MT_ERROR_MSG_MAX] = "";
	int rc = MT_OK, failed = 0, i;
	struct nvbp s;

	memset(&s, 0, sizeof(s));
	s.im = im;
	s.err = err;
	if ((rc = imp_each_line(im, text, len, &s.lineno, nvb_line_cb, &s, err)))
		goto out;
	if (!s.markers) {
		if (!len)
			rc = mt_error_set(err, MT_EPARSE, "%s: empty file", im->path);
		else if (s.nt_lines)
			rc = mt_error_set(err, MT_EPARSE, "%s: this is nccl-tests output, not nvbandwidth: "
					  "use 'megatune import nccl-tests'", im->path);
		else
			rc = mt_error_set(err, MT_EPARSE, "%s: not nvbandwidth output: no 'nvbandwidth "
					  "Version', 'Running <test>' or bandwidth matrix in %d line%s",
					  im->path, s.lineno, s.lineno == 1 ? "" : "s");
		goto out;
	}
	if (!im->nnvb) {
		rc = mt_error_set(err, MT_EPARSE, "%s: nvbandwidth output with no results (no bandwidth "
				  "matrix and no SUM line)", im->path);
		goto out;
	}
	for (i = 0; i < im->nnvb; i++)
		if (im->nvb[i].ncols && !im->nvb[i].nrows) {
			rc = mt_error_set(err, MT_EPARSE, "%s:%d: the %s matrix has a header and no "
					  "rows", im->path, im->nvb[i].line, im->nvb[i].name);
			goto out;
		}
	nvb_check(im, o, &failed, first, sizeof(first));
	if (failed && o->strict)
		rc = mt_error_set(err, MT_EINFEASIBLE, "%s (--strict)", first);
out:
	return rc;
}

int imp_parse_nvb_json(struct mt_import *im, const cJSON *root, const struct mt_import_opts *o,
			  struct mt_error *err)
{
	const cJSON *nb = mt_jget(root, "nvbandwidth"), *tc, *e, *v;
	char first[MT_ERROR_MSG_MAX] = "";
	int i = 0, failed = 0;

	if (!cJSON_IsObject(nb))
		return imp_jtype_error(err, im->path, "nvbandwidth", "an object", nb);
	imp_jstring(nb, "version", im->nvb_version, sizeof(im->nvb_version));
	imp_jstring(nb, "git_version", im->nvb_git, sizeof(im->nvb_git));
	imp_jstring(nb, "Driver Version", im->driver, sizeof(im->driver));
	if (cJSON_IsNumber(v = mt_jget(nb, "CUDA Runtime Version")))
		snprintf(im->cuda_runtime, sizeof(im->cuda_runtime), "%.0f", v->valuedouble);
	if (cJSON_IsString(v = mt_jget(nb, "error")) && v->valuestring[0])
		imp_warnf(im, "%s: nvbandwidth reported an error: %.300s", im->path, v->valuestring);
	if (cJSON_IsString(v = mt_jget(nb, "warning")) && v->valuestring[0])
		imp_warnf(im, "%s: nvbandwidth warned: %.300s", im->path, v->valuestring);
	/* "0: NVIDIA H100 80GB HBM3 (00000000:1b:00): (host)" */
	if (cJSON_IsArray(v = mt_jget(nb, "GPU Device list")))
		cJSON_ArrayForEach(e, v) {
			const char *s = cJSON_IsString(e) ? e->valuestring : "";
			const char *c = strchr(s, ':');
			char name[160];
			char *h;
			if (!c || !isdigit((unsigned char)s[0]))
				continue;
			copys(name, sizeof(name), c + 1);
			h = strstr(name, "): (");
			if (h) {
				char *hc = strrchr(h + 4, ')');
				if (!im->host[0])
					copy(im->host, sizeof(im->host), h + 4,
					     hc ? (size_t)(hc - h - 4) : strlen(h + 4));
				h[1] = 0;
			}
			if (set_gpu(im, toint(s), name))
				return mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
		}
	tc = mt_jget(nb, "testcases");
	if (!cJSON_IsArray(tc))
		return imp_jtype_error(err, im->path, "nvbandwidth.testcases", "an array of tests", tc);
	cJSON_ArrayForEach(e, tc) {
		struct mt_nvb_test *m;
		const cJSON *mat, *row, *val;
		char w[80], name[96] = "?";
		snprintf(w, sizeof(w), "nvbandwidth.testcases[%d]", i++);
		if (!cJSON_IsObject(e))
			return imp_jtype_error(err, im->path, w, "an object", e);
		imp_jstring(e, "name", name, sizeof(name));
		if (!(m = new_matrix(im, name, 0)))
			return mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
		imp_jstring(e, "status", m->status, sizeof(m->status));
		imp_jstring(e, "bandwidth_description", m->desc, sizeof(m->desc));
		if (cJSON_IsNumber(v = mt_jget(e, "sum"))) {
			m->has_sum = 1;
			imp_num_set(&m->sum, v->valuedouble, "%.10g");
		}
		mat = mt_jget(e, "bandwidth_matrix");
		if (!mat)
			continue;
		if (!cJSON_IsArray(mat))
			return imp_jtype_error(err, im->path, w, "a 'bandwidth_matrix' array", mat);
		cJSON_ArrayForEach(row, mat) {
			int c = 0;
			if (!cJSON_IsArray(row) || !cJSON_GetArraySize(row))
				return imp_jtype_error(err, im->path, w, "rows of values in 'bandwidth_matrix'", row);
			if (!m->ncols)
				m->ncols = cJSON_GetArraySize(row);
			if (cJSON_GetArraySize(row) != m->ncols)
				return mt_error_set(err, MT_EINVAL, "%s: field '%s.bandwidth_matrix': rows of "
						    "different lengths (%d and %d)", im->path, w, m->ncols,
						    cJSON_GetArraySize(row));
			if (matrix_row(m))
				return mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
			cJSON_ArrayForEach(val, row) {
				struct mt_imp_num x;
				int pr = -1;
				if (cJSON_IsString(val))
					pr = imp_parse_num(val->valuestring, (int)strlen(val->valuestring), &x);
				else if (cJSON_IsNumber(val)) {
					pr = 0;
					imp_num_set(&x, val->valuedouble, "%.10g");
				}
				if (pr < 0)
					return mt_error_set(err, MT_EINVAL, "%s: field '%s.bandwidth_matrix[%d][%d]': "
							    "expected a number or \"N/A\", got %s", im->path, w,
							    m->nrows - 1, c, mt_json_type(val));
				m->v[(m->nrows - 1) * m->ncols + c] = x.v;
				if (pr == 0 && cJSON_IsString(val))
					m->sum_half += imp_half_unit(x.s);
				c++;
			}
		}
	}
	if (!im->nnvb)
		return mt_error_set(err, MT_EINVAL, "%s: field 'nvbandwidth.testcases': no tests",
				    im->path);
	nvb_check(im, o, &failed, first, sizeof(first));
	if (failed && o->strict)
		return mt_error_set(err, MT_EINFEASIBLE, "%s (--strict)", first);
	return MT_OK;
}
