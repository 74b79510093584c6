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

int imp_parse_nvb_text(struct mt_import *im, const char *text, size_t len,
			  const struct mt_import_opts *o, struct mt_error *err)
{
	const char *p = text, *end = text + len;
	char *buf = NULL, running[96] = "", single[128] = "", first[MT_ERROR_MSG_MAX] = "";
	size_t cap = 0;
	int lineno = 0, state = 0, markers = 0, nt_lines = 0, rc = MT_OK, failed = 0;
	struct mt_nvb_test *m = NULL;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *q;
		struct toks tk;

		if (l + 1 > cap) {
			char *b = realloc(buf, l + 1);
			if (!b) {
				rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
				goto out;
			}
			buf = b;
			cap = l + 1;
		}
		memcpy(buf, p, l);
		buf[l] = 0;
		lineno++;
		p = nl ? nl + 1 : end;
		imp_strip_tags(buf);
		rtrim(buf);
		q = skipws(buf);
		if (!*q) {
			if (state == 2)
				state = 0;
			continue;
		}
		if (*q == '#' && (strstr(q, "busbw") || strstr(q, "nccl-tests") || strstr(q, "Rank ")))
			nt_lines++;
		imp_tokenize(q, &tk);
		if (tk.n > MAXTOK)
			tk.n = MAXTOK;
		if (starts(q, "nvbandwidth Version:")) {
			markers++;
			if (tk.n >= 3)
				tok_copy(im->nvb_version, sizeof(im->nvb_version), &tk, 2);
			continue;
		}
		if (starts(q, "Built from Git version:")) {
			if (tk.n >= 5)
				tok_copy(im->nvb_git, sizeof(im->nvb_git), &tk, 4);
			continue;
		}
		if (starts(q, "CUDA Runtime Version:")) {
			if (tk.n >= 4)
				tok_copy(im->cuda_runtime, sizeof(im->cuda_runtime), &tk, 3);
			continue;
		}
		if (starts(q, "Driver Version:")) {
			if (tk.n >= 3)
				tok_copy(im->driver, sizeof(im->driver), &tk, 2);
			continue;
		}
		if (starts(q, "Device ") && tk.n >= 3 && tk.len[1] >= 2 && tk.p[1][tk.len[1] - 1] == ':' &&
		    imp_all_digits(tk.p[1], tk.len[1] - 1)) {
			markers++;
			if (!im->host[0] && single[0])
				copys(im->host, sizeof(im->host), single);
			if (set_gpu(im, toint(tk.p[1]), tk.p[2])) {
				rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
				goto out;
			}
			continue;
		}
		if (starts(q, "Process ") && strstr(q, "device")) {
			/* multinode: "Process 0 (host): device 0: NAME (pci)" */
			const char *open = strchr(q, '('), *close = open ? strchr(open, ')') : NULL;
			const char *dev = strstr(q, "device");
			const char *colon = dev ? strchr(dev, ':') : NULL;
			markers++;
			if (open && close && !im->host[0])
				copy(im->host, sizeof(im->host), open + 1, (size_t)(close - open - 1));
			if (colon && tk.n >= 2 && imp_all_digits(tk.p[1], tk.len[1]) &&
			    set_gpu(im, toint(tk.p[1]), colon + 1)) {
				rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
				goto out;
			}
			continue;
		}
		if (starts(q, "Running ")) {
			markers++;
			state = 0;
			tok_copy(running, sizeof(running), &tk, 1);
			if (running[0] && running[strlen(running) - 1] == '.')
				running[strlen(running) - 1] = 0;
			m = NULL;
			continue;
		}
		/* a waived test prints no "Running" line: only a status right after
		 * a Running line belongs to it */
		if ((starts(q, "Waived") || starts(q, "ERROR") || starts(q, "Error")) && running[0] &&
		    (starts(q, "E") || !m)) {
			if (!m || strcmp(m->name, running)) {
				if (!(m = new_matrix(im, running, lineno))) {
					rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
					goto out;
				}
			}
			copy(m->status, sizeof(m->status), q, strlen(q));
			state = 0;
			continue;
		}
		if (starts(q, "SUM ") || starts(q, "&&&& PERF ")) {
			int k = starts(q, "SUM ") ? 1 : 2;
			char key[96] = "";
			markers++;
			if (tk.n < k + 2)
				continue;
			tok_copy(key, sizeof(key), &tk, k);
			/* the last matrix without its sum, else a SUM line alone */
			if (!m || m->has_sum) {
				if (!(m = new_matrix(im, key, lineno))) {
					rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
					goto out;
				}
			}
			copys(m->name, sizeof(m->name), key);
			nvb_sum(m, tk.p[k + 1], tk.len[k + 1]);
			if (!m->has_sum) {
				rc = mt_error_set(err, MT_EPARSE, "%s:%d: 'SUM %s': expected a number of GB/s, "
						  "got '%.*s'", im->path, lineno, key,
						  tk.len[k + 1] > 40 ? 40 : tk.len[k + 1], tk.p[k + 1]);
				goto out;
			}
			state = 0;
			continue;
		}
		if (state == 0 && (strstr(q, "bandwidth (GB/s)") || strstr(q, "(ns)") ||
				   starts(q, "memcpy ") || starts(q, "memory latency"))) {
			markers++;
			if (!(m = new_matrix(im, running[0] ? running : "?", lineno))) {
				rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
				goto out;
			}
			copys(m->desc, sizeof(m->desc), q);
			state = 1;
			continue;
		}
		if (state == 1) {
			m->ncols = tk.n;
			state = 2;
			continue;
		}
		if (state == 2) {
			int c;
			if (tk.n != m->ncols + 1) {
				rc = mt_error_set(err, MT_EPARSE, "%s:%d: a row of the %s matrix: expected a "
						  "label and %d value%s, got %d field%s", im->path, lineno,
						  m->name, m->ncols, m->ncols == 1 ? "" : "s", tk.n,
						  tk.n == 1 ? "" : "s");
				goto out;
			}
			if (matrix_row(m)) {
				rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
				goto out;
			}
			for (c = 0; c < m->ncols; c++) {
				struct mt_imp_num x;
				int pr = imp_parse_num(tk.p[c + 1], tk.len[c + 1], &x);
				if (pr < 0) {
					rc = mt_error_set(err, MT_EPARSE, "%s:%d: column %d of the %s matrix: "
							  "expected a number or N/A, got '%.*s'", im->path,
							  lineno, c + 1, m->name,
							  tk.len[c + 1] > 40 ? 40 : tk.len[c + 1], tk.p[c + 1]);
					goto out;
				}
				m->v[(m->nrows - 1) * m->ncols + c] = x.v;
				if (pr == 0)
					m->sum_half += imp_half_unit(x.s);
			}
			continue;
		}
		if (tk.n == 1 && !strchr(q, ':'))
			tok_copy(single, sizeof(single), &tk, 0);
	}
	if (!markers) {
		if (!len)
			rc = mt_error_set(err, MT_EPARSE, "%s: empty file", im->path);
		else if (nt_lines)
			rc = mt_error_set(err, MT_EPARSE, "%s: this is nccl-tests output, not nvbandwidth: "
					  "use 'megatune import nccl-tests'", im->path);
		else
			rc = mt_error_set(err, MT_EPARSE, "%s: not nvbandwidth output: no 'nvbandwidth "
					  "Version', 'Running <test>' or bandwidth matrix in %d line%s",
					  im->path, lineno, lineno == 1 ? "" : "s");
		goto out;
	}
	if (!im->nnvb) {
		rc = mt_error_set(err, MT_EPARSE, "%s: nvbandwidth output with no results (no bandwidth "
				  "matrix and no SUM line)", im->path);
		goto out;
	}
	{
		int i;
		for (i = 0; i < im->nnvb; i++)
			if (im->nvb[i].ncols && !im->nvb[i].nrows) {
				rc = mt_error_set(err, MT_EPARSE, "%s:%d: the %s matrix has a header and no "
						  "rows", im->path, im->nvb[i].line, im->nvb[i].name);
				goto out;
			}
	}
	nvb_check(im, o, &failed, first, sizeof(first));
	if (failed && o->strict)
		rc = mt_error_set(err, MT_EINFEASIBLE, "%s (--strict)", first);
out:
	free(buf);
	return rc;
}

int imp_parse_nvb_json(struct mt_import *im, const cJSON *root, const struct mt_import_opts *o,
			  struct mt_error *err)
{
	const cJSON *nb = jget(root, "nvbandwidth"), *tc, *e, *v;
	char first[MT_ERROR_MSG_MAX] = "";
	int i = 0, failed = 0;

	if (!cJSON_IsObject(nb))
		return imp_jtype_error(err, im->path, "nvbandwidth", "an object", nb);
	imp_jstring(nb, "version", im->nvb_version, sizeof(im->nvb_version));
	imp_jstring(nb, "git_version", im->nvb_git, sizeof(im->nvb_git));
	imp_jstring(nb, "Driver Version", im->driver, sizeof(im->driver));
	if (cJSON_IsNumber(v = jget(nb, "CUDA Runtime Version")))
		snprintf(im->cuda_runtime, sizeof(im->cuda_runtime), "%.0f", v->valuedouble);
	if (cJSON_IsString(v = jget(nb, "error")) && v->valuestring[0])
		imp_warnf(im, "%s: nvbandwidth reported an error: %.300s", im->path, v->valuestring);
	if (cJSON_IsString(v = jget(nb, "warning")) && v->valuestring[0])
		imp_warnf(im, "%s: nvbandwidth warned: %.300s", im->path, v->valuestring);
	/* "0: NVIDIA H100 80GB HBM3 (00000000:1b:00): (host)" */
	if (cJSON_IsArray(v = jget(nb, "GPU Device list")))
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
	tc = jget(nb, "testcases");
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
		if (cJSON_IsNumber(v = jget(e, "sum"))) {
			m->has_sum = 1;
			imp_num_set(&m->sum, v->valuedouble, "%.10g");
		}
		mat = jget(e, "bandwidth_matrix");
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
