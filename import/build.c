/* SPDX-License-Identifier: MIT */
/* import: parsed files into a megatune.profile/1 (perfmodel/profile.h): one
 * source per file, a collective curve per nccl-tests test, offload records and
 * outliers from nvbandwidth, software versions. */
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/jsonr.h"
#include "../lib/sbuf.h"
#include "../lib/stats.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/profile.h"

/* ------------------------------------------------------------------ */
/* into a profile */

const char *mt_import_base_for_gpu(const char *gpu)
{
	char u[128];
	size_t i;

	if (!gpu || !gpu[0])
		return NULL;
	copys(u, sizeof(u), gpu);
	for (i = 0; u[i]; i++)
		u[i] = (char)toupper((unsigned char)u[i]);
	if (strstr(u, "GB200"))
		return "gb200-nvl72";
	if (strstr(u, "B200"))
		return "dgx-b200";
	if (strstr(u, "H200"))
		return "dgx-h200";
	if (strstr(u, "H100"))
		return "dgx-h100";
	if (strstr(u, "A100"))
		return "dgx-a100-80g";
	return NULL;
}

const char *mt_import_gpu(struct mt_import *const *ims, int n)
{
	int i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < ims[i]->nnt; j++)
			if (ims[i]->nt[j].gpu[0])
				return ims[i]->nt[j].gpu;
		for (j = 0; j < ims[i]->ngpu; j++)
			if (ims[i]->gpu[j][0])
				return ims[i]->gpu[j];
	}
	return NULL;
}

static void __attribute__((format(printf, 3, 4))) gwarn(char ***w, int *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	imp_vwarn(w, n, fmt, ap);
	va_end(ap);
}

/* "NVIDIA H100 80GB HBM3" and "H100 80GB HBM3" name the same GPU */
static int same_gpu(const char *a, const char *b)
{
	if (starts(a, "NVIDIA "))
		a += 7;
	if (starts(b, "NVIDIA "))
		b += 7;
	for (; *a && *b; a++, b++)
		if (toupper((unsigned char)*a) != toupper((unsigned char)*b))
			return 0;
	return !*a && !*b;
}



static int source_exists(const cJSON *doc, const char *id)
{
	const cJSON *e, *a = mt_jget(doc, "sources");

	cJSON_ArrayForEach(e, a)
		if (!strcmp(mt_jget_str(e, "id"), id))
			return 1;
	return 0;
}

static void make_source_id(const cJSON *doc, const struct mt_import *im, char *id, size_t cap)
{
	char stem[40];
	size_t i, n;
	int k;

	copys(stem, sizeof(stem), im->base_name);
	if (strrchr(stem, '.') && strrchr(stem, '.') != stem)
		*strrchr(stem, '.') = 0;
	for (i = 0; stem[i]; i++)
		if (!isalnum((unsigned char)stem[i]) && stem[i] != '.' && stem[i] != '_' && stem[i] != '-')
			stem[i] = '-';
	snprintf(id, cap, "import-%s", stem[0] ? stem : "file");
	n = strlen(id);
	for (k = 2; source_exists(doc, id) && k < 10000; k++)
		snprintf(id + (n > cap - 8 ? cap - 8 : n), cap - (n > cap - 8 ? cap - 8 : n), "-%d", k);
}

static void nt_citation(struct mt_import *im)
{
	struct sbuf sb = SBUF_INIT;
	const struct mt_nt_test *t0 = im->nnt ? &im->nt[0] : NULL;
	int i, minr = 0, maxr = 0, hosts = -1;

	sbuf_adds(&sb, "nccl-tests ");
	sbuf_adds(&sb, t0 && t0->nt_version[0] ? t0->nt_version : "(version not printed)");
	for (i = 0; i < im->nnt; i++) {
		const struct mt_nt_test *t = &im->nt[i];
		if (i < 5 && t->name[0])
			sbuf_addf(&sb, "%s %s", i ? "," : "", t->name);
		else if (i < 5)
			sbuf_addf(&sb, "%s %s_perf", i ? "," : "", t->op >= 0 ? mt_coll_name(t->op) : "?");
		if (!minr || t->ranks < minr)
			minr = t->ranks;
		if (t->ranks > maxr)
			maxr = t->ranks;
		if (hosts == -1)
			hosts = t->hosts;
		else if (hosts != t->hosts)
			hosts = 0;
	}
	if (im->nnt > 5)
		sbuf_addf(&sb, " and %d more", im->nnt - 5);
	sbuf_addf(&sb, ", NCCL %s", t0 && t0->nccl[0] ? t0->nccl : "version not printed");
	if (minr == maxr)
		sbuf_addf(&sb, ", %d ranks", minr);
	else
		sbuf_addf(&sb, ", %d to %d ranks", minr, maxr);
	if (hosts > 0)
		sbuf_addf(&sb, " on %d host%s", hosts, hosts == 1 ? "" : "s");
	else
		sbuf_adds(&sb, " (hosts not listed)");
	sbuf_addf(&sb, ", %s: %s", t0 && t0->gpu[0] ? t0->gpu : "GPU not named", im->base_name);
	copys(im->citation, sizeof(im->citation), sb.failed ? im->base_name : sb.buf);
	sbuf_release(&sb);
}

static void nvb_citation(struct mt_import *im)
{
	struct sbuf sb = SBUF_INIT;
	int i, k = 0;

	sbuf_adds(&sb, "nvbandwidth ");
	sbuf_adds(&sb, im->nvb_version[0] ? im->nvb_version : "(version not printed)");
	for (i = 0; i < im->nnvb; i++)
		if (im->nvb[i].used) {
			if (k < 5)
				sbuf_addf(&sb, "%s %s", k ? "," : "", im->nvb[i].name);
			k++;
		}
	if (k > 5)
		sbuf_addf(&sb, " and %d more", k - 5);
	if (im->driver[0])
		sbuf_addf(&sb, ", driver %s", im->driver);
	if (im->ngpu)
		sbuf_addf(&sb, ", %d GPU%s", im->ngpu, im->ngpu == 1 ? "" : "s");
	if (im->host[0])
		sbuf_addf(&sb, " on %s", im->host);
	sbuf_addf(&sb, ", %s: %s", im->ngpu && im->gpu[0][0] ? im->gpu[0] : "GPU not named",
		  im->base_name);
	copys(im->citation, sizeof(im->citation), sb.failed ? im->base_name : sb.buf);
	sbuf_release(&sb);
}

static int add_nt(cJSON *doc, struct mt_import *im, struct mt_import *const *ims, int nims,
		  const struct mt_import_build_opts *o, int domain, int gpn)
{
	int i, k, added = 0;

	for (i = 0; i < im->nnt; i++) {
		struct mt_nt_test *t = &im->nt[i];
		const char *name = t->name[0] ? t->name : t->op >= 0 ? mt_coll_name(t->op) : "test";
		double f;
		cJSON *curve, *e;
		int per_node, span;

		t->span = -1;
		if (t->op < 0)
			continue;
		if (t->ranks < 2) {
			imp_warnf(im, "%s: %s ran on %d rank: no collective curve", im->path, name, t->ranks);
			continue;
		}
		if (o->span >= 0) {
			span = o->span;
		} else if (!t->hosts) {
			span = MT_SPAN_NETWORK;
			imp_warnf(im, "%s: %s: the log does not list the hosts: taken to span the network with "
				  "%d ranks per node (give --span nvlink if one NVLink domain held them all)",
				  im->path, name, t->ranks < gpn ? t->ranks : gpn);
		} else {
			span = t->hosts == 1 && t->ranks <= domain ? MT_SPAN_NVLINK : MT_SPAN_NETWORK;
		}
		if (t->hosts == 1)
			per_node = t->ranks;
		else if (t->hosts > 1)
			per_node = t->per_node ? t->per_node : (t->ranks + t->hosts - 1) / t->hosts;
		else
			per_node = t->ranks < gpn ? t->ranks : gpn;
		if (per_node > t->ranks)
			per_node = t->ranks;
		/* what the profile had for this group */
		t->replaced[0] = 0;
		cJSON_ArrayForEach(e, mt_jget(doc, "collectives")) {
			if (!strcmp(mt_jget_str(e, "op"), mt_coll_name(t->op)) &&
			    !strcmp(mt_jget_str(e, "span"), mt_span_name(span)) &&
			    dtoi(mt_jget_num(e, "ranks", 0)) == t->ranks &&
			    dtoi(mt_jget_num(e, "ranks_per_node", t->ranks)) == per_node) {
				const char *src = mt_jget_str(e, "source");
				int j, ours = 0;
				for (j = 0; j < nims; j++)
					if (ims[j]->source_id[0] && !strcmp(ims[j]->source_id, src))
						ours = 1;
				copys(t->replaced, sizeof(t->replaced), ours ? src : "base profile");
				if (ours)
					imp_warnf(im, "%s: %s (%s, %s, %d ranks, %d per node) replaces the same curve "
						  "imported from %s", im->path, name, mt_coll_name(t->op),
						  mt_span_name(span), t->ranks, per_node, src);
			}
		}
		curve = NULL;
		f = mt_coll_busbw_factor(t->op, t->ranks);
		t->npoints = t->nskipped = 0;
		for (k = 0; k < t->nrows; k++) {
			const struct mt_nt_row *r = &t->rows[k];
			const struct mt_nt_half *x = &r->h[0];
			double b, tm;
			if (!(r->size.v > 0))
				continue;
			if (!x->present || !isfinite(x->busbw.v)) {
				t->nskipped++;
				continue;
			}
			tm = t->cputime || !isfinite(x->time.v) ? 0 : x->time.v * (t->time_ms ? 1e3 : 1);
			b = x->busbw.v;
			if (!(b > 0) && tm > 0)
				b = r->size.v / (tm * 1e3) * f;  /* printed as 0.00 */
			if (!(b >= 1e-6) || b > 1e6 || r->size.v > 1e15) {
				t->nskipped++;
				continue;
			}
			if (!curve)
				curve = mt_profile_coll_curve(doc, mt_coll_name(t->op), mt_span_name(span),
							      t->ranks, per_node, im->source_id);
			if (!curve)
				return MT_ENOMEM;
			mt_profile_coll_point(curve, r->size.v, b, tm >= 1e-3 ? tm : 0, NULL);
			t->npoints++;
		}
		if (!curve) {
			imp_warnf(im, "%s: %s: no row with a size above 0 and a bus bandwidth: no curve",
				  im->path, name);
			continue;
		}
		t->span = span;
		t->curve_per_node = per_node;
		added++;
	}
	return added;
}

enum { NVB_H2D, NVB_D2H, NVB_BI_H2D, NVB_BI_D2H, NVB_KINDS };

/* What an nvbandwidth test measured: its kind and copy engine (1 CE,
 * 2 SM), or the reason it has no profile field. */
static int nvb_kind(const char *name, int *engine, const char **why)
{
	static const char *const names[NVB_KINDS] = {
		"host_to_device_memcpy", "device_to_host_memcpy",
		"host_to_device_bidirectional_memcpy", "device_to_host_bidirectional_memcpy"
	};
	int k;

	*engine = 0;
	*why = NULL;
	for (k = 0; k < NVB_KINDS; k++) {
		size_t n = strlen(names[k]);
		if (!strncmp(name, names[k], n) && (!strcmp(name + n, "_ce") || !strcmp(name + n, "_sm"))) {
			*engine = !strcmp(name + n, "_ce") ? 1 : 2;
			return k;
		}
	}
	if (strstr(name, "latency"))
		*why = "latencies, not bandwidths";
	else if (starts(name, "all_to_host") || starts(name, "host_to_all"))
		*why = "every GPU copying to or from the host at once";
	else if (starts(name, "device_local_copy"))
		*why = "copies inside one GPU's memory";
	else if (strstr(name, "device_to_device") || starts(name, "all_to_one") ||
		 starts(name, "one_to_all") || starts(name, "multinode"))
		*why = "GPU-to-GPU copies (nccl-tests measures the links the profile uses)";
	else
		*why = "a test megatune does not know";
	return -1;
}

static int nvb_values(const struct mt_import *im, const struct mt_nvb_test *m, double *x, int cap)
{
	int i, n = 0;

	for (i = 0; i < m->nrows * m->ncols && n < cap; i++)
		if (isfinite(m->v[i]) && m->v[i] > 0)
			x[n++] = m->v[i];
	if (!n && m->has_sum && m->sum.v > 0 && im->ngpu > 0)
		x[n++] = m->sum.v / im->ngpu;
	return n;
}

static int add_nvb(cJSON *doc, struct mt_import *im)
{
	static const char *const dir[NVB_KINDS] = { "h2d", "d2h", "bidirectional", "bidirectional" };
	static const char *const why_list[] = {
		"latencies, not bandwidths", "every GPU copying to or from the host at once",
		"copies inside one GPU's memory",
		"GPU-to-GPU copies (nccl-tests measures the links the profile uses)",
		"a test megatune does not know"
	};
	int pick[NVB_KINDS], i, k, added = 0, w;
	double med[NVB_KINDS];

	for (k = 0; k < NVB_KINDS; k++)
		pick[k] = -1;
	for (i = 0; i < im->nnvb; i++) {
		const struct mt_nvb_test *m = &im->nvb[i];
		const char *why;
		int engine, kind = nvb_kind(m->name, &engine, &why);
		if (kind < 0 || (!m->nrows && !m->has_sum))
			continue;
		/* the copy engine is what cudaMemcpyAsync offloading uses: CE first */
		if (pick[kind] < 0)
			pick[kind] = i;
		else {
			int e0;
			const char *w0;
			nvb_kind(im->nvb[pick[kind]].name, &e0, &w0);
			if (engine < e0)
				pick[kind] = i;
		}
	}
	for (k = 0; k < NVB_KINDS; k++) {
		double x[4096];
		int n;
		med[k] = 0;
		if (pick[k] < 0)
			continue;
		n = nvb_values(im, &im->nvb[pick[k]], x, 4096);
		if (n)
			med[k] = mt_median(x, (size_t)n);
		im->nvb[pick[k]].gbps = med[k];
	}
	for (k = 0; k < NVB_KINDS; k++) {
		struct mt_nvb_test *m;
		double gbps = med[k];
		if (pick[k] < 0 || !(med[k] > 0))
			continue;
		/* bidirectional: the slower of the two directions under two-way traffic */
		if (k == NVB_BI_D2H && pick[NVB_BI_H2D] >= 0 && med[NVB_BI_H2D] > 0)
			continue;
		if (k == NVB_BI_H2D && pick[NVB_BI_D2H] >= 0 && med[NVB_BI_D2H] > 0 &&
		    med[NVB_BI_D2H] < gbps)
			gbps = med[NVB_BI_D2H];
		m = &im->nvb[pick[k]];
		if (gbps < 1e-3 || gbps > 1e6)
			continue;
		mt_profile_offload(doc, dir[k], 1, 1, 0, gbps, NULL, im->source_id);
		copys(m->direction, sizeof(m->direction), dir[k]);
		m->used = 1;
		if (k == NVB_BI_H2D && pick[NVB_BI_D2H] >= 0 && med[NVB_BI_D2H] > 0) {
			copys(im->nvb[pick[NVB_BI_D2H]].direction, 16, dir[k]);
			im->nvb[pick[NVB_BI_D2H]].used = 1;
		}
		added++;
	}
	/* slow GPUs, per test used */
	for (k = 0; k < NVB_KINDS; k++) {
		const struct mt_nvb_test *m;
		int c, g;
		if (pick[k] < 0 || !im->nvb[pick[k]].used || !(med[k] > 0))
			continue;
		m = &im->nvb[pick[k]];
		for (i = 0; i < m->nrows; i++)
			for (c = 0; c < m->ncols; c++) {
				double v = m->v[i * m->ncols + c], pct;
				char what[256], metric[48];
				if (!isfinite(v) || v <= 0)
					continue;
				pct = 100 * (med[k] - v) / med[k];
				if (pct <= MT_IMPORT_OUTLIER_PCT)
					continue;
				g = m->nrows == 1 ? c : i;
				snprintf(what, sizeof(what), "GPU %d%s%s%s: %s", g,
					 g < im->ngpu && im->gpu[g][0] ? " (" : "",
					 g < im->ngpu ? im->gpu[g] : "", g < im->ngpu && im->gpu[g][0] ? ")" : "",
					 m->name);
				snprintf(metric, sizeof(metric), "%s_gbps", k == NVB_H2D ? "h2d" : k == NVB_D2H ? "d2h"
						 : k == NVB_BI_H2D ? "bidirectional_h2d" : "bidirectional_d2h");
				mt_profile_outlier(doc, what, metric, v, med[k], pct);
				imp_warnf(im, "%s: %s at %.4g GB/s is %.0f%% below the median %.4g GB/s",
					  im->path, what, v, pct, med[k]);
			}
	}
	/* what has no profile field, said once per reason */
	for (w = 0; w < (int)(sizeof(why_list) / sizeof(why_list[0])); w++) {
		struct sbuf sb = SBUF_INIT;
		int count = 0;
		for (i = 0; i < im->nnvb; i++) {
			const char *why;
			int engine;
			nvb_kind(im->nvb[i].name, &engine, &why);
			if (why && !strcmp(why, why_list[w])) {
				if (count < 8)
					sbuf_addf(&sb, "%s%s", count ? ", " : "", im->nvb[i].name);
				count++;
			}
		}
		if (count > 8)
			sbuf_addf(&sb, " and %d more", count - 8);
		if (count)
			imp_warnf(im, "%s: not imported, no profile field holds %s: %s", im->path, why_list[w],
				  sb.failed ? "" : sb.buf);
		sbuf_release(&sb);
	}
	for (k = 0; k < NVB_KINDS; k++)
		if (pick[k] >= 0 && !(med[k] > 0))
			imp_warnf(im, "%s: %s: no bandwidth value to import", im->path, im->nvb[pick[k]].name);
	return added;
}

int mt_import_build(cJSON *doc, struct mt_import *const *ims, int n,
		    const struct mt_import_build_opts *o, char ***warn, int *nwarn,
		    struct mt_error *err)
{
	static const struct mt_import_build_opts dflt = { -1 };
	const cJSON *node = mt_jget(doc, "node"), *gpu = mt_jget(doc, "gpu");
	int domain = dtoi(mt_jget_num(node, "nvlink_domain", 8)), gpn = dtoi(mt_jget_num(node, "gpus_per_node", 8));
	const char *base_gpu = mt_jget_str(gpu, "name"), *first_gpu = NULL;
	const char *nccl = NULL, *cuda = NULL, *nccl_from = NULL;
	int i, j, total = 0;

	if (!o)
		o = &dflt;
	if (domain < 1)
		domain = 8;
	if (gpn < 1)
		gpn = 8;
	for (i = 0; i < n; i++) {
		struct mt_import *im = ims[i];
		int added;
		make_source_id(doc, im, im->source_id, sizeof(im->source_id));
		/* the source first: curves refer to it */
		if (im->tool == MT_IMP_NCCL_TESTS)
			nt_citation(im);
		else
			copys(im->citation, sizeof(im->citation), im->base_name);
		if (mt_profile_add_source(doc, im->source_id, "imported", im->citation))
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		if (im->tool == MT_IMP_NCCL_TESTS)
			added = add_nt(doc, im, ims, n, o, domain, gpn);
		else
			added = add_nvb(doc, im);
		if (added < 0)
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		if (im->tool == MT_IMP_NVBANDWIDTH) {
			nvb_citation(im);
			mt_profile_add_source(doc, im->source_id, "imported", im->citation);
		}
		if (!added) {
			/* a source nothing refers to is noise */
			cJSON *a = cJSON_GetObjectItemCaseSensitive(doc, "sources"), *e;
			int k = 0;
			cJSON_ArrayForEach(e, a) {
				if (!strcmp(mt_jget_str(e, "id"), im->source_id)) {
					cJSON_DeleteItemFromArray(a, k);
					break;
				}
				k++;
			}
			imp_warnf(im, "%s: nothing in this file could be imported", im->path);
			im->source_id[0] = 0;
		}
		total += added;
		for (j = 0; j < im->nnt; j++) {
			const struct mt_nt_test *t = &im->nt[j];
			if (t->gpu[0] && !first_gpu)
				first_gpu = t->gpu;
			else if (t->gpu[0] && !same_gpu(t->gpu, first_gpu))
				gwarn(warn, nwarn, "%s ran on %s, another file on %s: they are imported into "
				      "one profile", im->path, t->gpu, first_gpu);
			if (t->nccl[0] && t->span >= 0) {
				if (!nccl) {
					nccl = t->nccl;
					cuda = t->cuda[0] ? t->cuda : NULL;
					nccl_from = im->path;
				} else if (strcmp(nccl, t->nccl)) {
					gwarn(warn, nwarn, "%s ran NCCL %s, %s ran NCCL %s: software.nccl says %s",
					      im->path, t->nccl, nccl_from, nccl, nccl);
				}
			}
		}
		for (j = 0; j < im->ngpu; j++)
			if (im->gpu[j][0] && !first_gpu)
				first_gpu = im->gpu[j];
	}
	if (first_gpu && base_gpu[0] && !same_gpu(first_gpu, base_gpu))
		gwarn(warn, nwarn, "the logs ran on %s, the base profile describes %s: its GPU and node "
		      "sections (memory, peak FLOP/s, NVLink domain) are kept", first_gpu, base_gpu);
	if (nccl)
		mt_profile_software(doc, nccl, cuda);
	if (!total)
		return mt_error_set(err, MT_EINVAL, "nothing to import: no collective curve and no "
				    "host<->device bandwidth in %d file%s (see the warnings)", n,
				    n == 1 ? "" : "s");
	return MT_OK;
}
