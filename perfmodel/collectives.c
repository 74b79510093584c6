/* SPDX-License-Identifier: MIT */
/* collectives: the collective look-ups of a cluster profile (docs/MODEL.md
 * 3.3).  The measured curve nearest the group's shape on its span, stretched
 * to other shapes within the links it stretches over; the curves derived
 * from the NIC description for a profile without network measurements; the
 * line rates of the described hardware that bound every figure, measured ones
 * included; and the notes naming the measurements those bounds cap. */
#include "cluster.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "constants.h"

/* The curve for (op, span) nearest in group shape; NULL when there is none. */
static const struct mt_coll_curve *find_curve(const struct mt_cluster *c, int op, int span,
					      int nranks, int per_domain)
{
	const struct mt_coll_curve *best = NULL;
	double bd = 1e300;
	int i;

	for (i = 0; i < c->ncoll; i++) {
		const struct mt_coll_curve *cv = &c->coll[i];
		double d;

		if (cv->op != op || cv->span != span)
			continue;
		d = fabs(log((double)cv->ranks / nranks));
		if (span == MT_SPAN_NETWORK)
			d += 4 * fabs(log((double)cv->per_node / per_domain));
		d -= 1e-3 * cv->npts; /* prefer fuller sweeps on ties */
		if (d < bd) {
			bd = d;
			best = cv;
		}
	}
	return best;
}

/* Substitutes when a profile lacks an operation (docs/MODEL.md 3.3): the
 * closest relative first, then any operation measured on that span.  Across
 * NVLink domains only the rings stand for each other: an all-to-all or a
 * send the profile did not measure there is derived from the NICs, whose
 * traffic model knows what crosses them, rather than read off a ring's
 * curve. */
static const struct mt_coll_curve *find_curve_any(const struct mt_cluster *c, int op, int span,
						  int nranks, int per_domain)
{
	static const int fallback[MT_COLL_N][MT_COLL_N - 1] = {
		[MT_COLL_ALL_REDUCE] = { MT_COLL_REDUCE_SCATTER, MT_COLL_ALL_GATHER, MT_COLL_ALL_TO_ALL,
					 MT_COLL_SEND_RECV, MT_COLL_BROADCAST },
		[MT_COLL_ALL_GATHER] = { MT_COLL_REDUCE_SCATTER, MT_COLL_ALL_REDUCE, MT_COLL_ALL_TO_ALL,
					 MT_COLL_SEND_RECV, MT_COLL_BROADCAST },
		[MT_COLL_REDUCE_SCATTER] = { MT_COLL_ALL_GATHER, MT_COLL_ALL_REDUCE, MT_COLL_ALL_TO_ALL,
					     MT_COLL_SEND_RECV, MT_COLL_BROADCAST },
		[MT_COLL_ALL_TO_ALL] = { MT_COLL_ALL_GATHER, MT_COLL_REDUCE_SCATTER, MT_COLL_ALL_REDUCE,
					 MT_COLL_SEND_RECV, MT_COLL_BROADCAST },
		[MT_COLL_SEND_RECV] = { MT_COLL_ALL_GATHER, MT_COLL_REDUCE_SCATTER, MT_COLL_ALL_REDUCE,
					MT_COLL_ALL_TO_ALL, MT_COLL_BROADCAST },
		[MT_COLL_BROADCAST] = { MT_COLL_ALL_GATHER, MT_COLL_ALL_REDUCE, MT_COLL_REDUCE_SCATTER,
					MT_COLL_ALL_TO_ALL, MT_COLL_SEND_RECV },
	};
	const struct mt_coll_curve *cv = find_curve(c, op, span, nranks, per_domain);
	int net = span == MT_SPAN_NETWORK, i, f;

	if (net && (op == MT_COLL_ALL_TO_ALL || op == MT_COLL_SEND_RECV))
		return cv;
	for (i = 0; !cv && i < MT_COLL_N - 1; i++) {
		f = fallback[op][i];
		if (!net || (f != MT_COLL_ALL_TO_ALL && f != MT_COLL_SEND_RECV))
			cv = find_curve(c, f, span, nranks, per_domain);
	}
	return cv;
}

/* The span of a group of nranks of which *per_domain (clamped to [1, nranks])
 * share an NVLink domain. */
static int span_of(const struct mt_cluster *c, int nranks, int *per_domain)
{
	if (*per_domain < 1)
		*per_domain = 1;
	if (*per_domain > nranks)
		*per_domain = nranks;
	return *per_domain == nranks && nranks <= c->nvlink_domain ? MT_SPAN_NVLINK
								   : MT_SPAN_NETWORK;
}

/* The NICs' line rate per GPU, per direction (GB/s); 0 without NICs. */
static double nic_per_gpu(const struct mt_cluster *c)
{
	return c->nics_per_node > 0 && c->nic_gbps > 0 && c->gpus_per_node > 0
		       ? c->nic_gbps * c->nics_per_node / c->gpus_per_node
		       : 0;
}

/* The most a group of n ranks, k in each NVLink domain (m = n/k domains), can
 * reach over the NICs of its members, whatever the algorithm: a domain's k
 * members send and receive over k NICs' worth (k L).  All-gather and
 * reduce-scatter must move (m-1)/m of the buffer across each domain's NICs,
 * all-reduce twice that (without in-network reduction), so their bus
 * bandwidth is at most k L m (n-1) / (n (m-1)); all-to-all moves (n-k)/n of
 * each rank's buffer over its own NIC: L (n-1) / (n-k); send/recv and
 * broadcast k L.  0 without NICs. */
static double nic_line(const struct mt_cluster *c, int op, int n, int k)
{
	double L = nic_per_gpu(c), m;

	if (L <= 0)
		return 0;
	if (k < 1)
		k = 1;
	if (k >= n)
		return k * L;
	m = (double)n / k;
	switch (op) {
	case MT_COLL_ALL_TO_ALL:
		return L * (n - 1) / (n - k);
	case MT_COLL_ALL_REDUCE:
	case MT_COLL_ALL_GATHER:
	case MT_COLL_REDUCE_SCATTER:
		return k * L * m * (n - 1) / (n * (m - 1));
	default:
		return k * L;
	}
}

/* The most n ranks inside one NVLink domain can reach: every rank sends or
 * receives (n-1)/n of the buffer over its own links, so the bus bandwidth is
 * at most node.nvlink_gbps; all-reduce with the reduction in the switch
 * (NVLS) sends and receives the buffer once, 2 (n-1)/n of it.  0 when the
 * profile gives no NVLink rate. */
static double nvl_line(const struct mt_cluster *c, int op, int n)
{
	if (c->nvlink_gbps <= 0 || n < 2)
		return 0;
	return op == MT_COLL_ALL_REDUCE ? c->nvlink_gbps * 2.0 * (n - 1) / n : c->nvlink_gbps;
}


/* A network curve derived from the NIC description (docs/MODEL.md 3.3):
 * t = alpha + S f / B, f the nccl-tests bus factor.  B is a share of the line
 * rate (MT_NET_EFF_*, fitted on dgx-h100's measurements): k L for the rings,
 * L (n-1)/(n-k) for all-to-all, L for a send.  alpha counts NCCL's steps: a
 * ring crosses the network at m-1 of its n-1 steps (twice round for
 * all-reduce), each network step node.nic_latency_us and each NVLink step
 * MT_NCCL_NVL_STEP_US; an all-to-all takes one network step per other domain
 * and one NVLink step per other member of its own; a send one network step.
 * All-reduce takes the faster of the ring and NCCL's tree (2 (k-1) NVLink
 * and 2 floor(log2 m) network steps of MT_NCCL_TREE_STEP_US, the network
 * ones scaled with nic_latency_us, at MT_NCCL_TREE_BW of the ring's rate). */
static double derived_busbw(const struct mt_cluster *c, int op, int n, int k, double bytes)
{
	double L = nic_per_gpu(c), f = mt_coll_busbw_factor(op, n), lat = c->nic_latency_us;
	double m, B, alpha, t, s;

	if (L <= 0)
		L = MT_NIC_GBPS_UNKNOWN;
	if (k >= n)
		k = n > 1 ? n - 1 : 1;
	m = (double)n / k;
	switch (op) {
	case MT_COLL_ALL_TO_ALL:
		B = MT_NET_EFF_A2A * L * (n - 1) / (n - k);
		alpha = MT_NCCL_BASE_US + (k - 1) * MT_NCCL_NVL_STEP_US + (m - 1) * lat;
		break;
	case MT_COLL_SEND_RECV:
		B = MT_NET_EFF_P2P * L;
		alpha = MT_NCCL_BASE_US + lat;
		break;
	default: /* rings: all-reduce (twice round), all-gather, reduce-scatter, broadcast */
		s = op == MT_COLL_ALL_REDUCE ? 2 : 1;
		B = MT_NET_EFF_RING * k * L;
		alpha = MT_NCCL_BASE_US + s * ((n - m) * MT_NCCL_NVL_STEP_US + (m - 1) * lat);
	}
	t = alpha + f * bytes / (B * 1e3);
	if (op == MT_COLL_ALL_REDUCE) {
		double hops = floor(log2(m)), tree;

		tree = 2 * ((k - 1) * MT_NCCL_TREE_STEP_US +
			    (hops < 1 ? 1 : hops) * MT_NCCL_TREE_STEP_US * lat / MT_NIC_LATENCY_US) +
		       f * bytes / (MT_NCCL_TREE_BW * B * 1e3);
		if (tree < t)
			t = tree;
	}
	return f * bytes / (t * 1e3);
}

/* The links a network group stretches over when no measurement covers its
 * shape (docs/MODEL.md 3.3): the n ranks, k of them in each domain, send
 * over their own NICs, and each member also moves the data over NVLink
 * inside its domain, so the group is at most what k ranks of one domain
 * reach there: a group cannot beat its slowest link. */
static double network_bound(const struct mt_cluster *c, int op, int n, int k, double bytes,
			    double bw)
{
	double nic = nic_line(c, op, n, k);

	if (nic > 0 && bw > nic)
		bw = nic;
	if (k > 1 && k <= c->nvlink_domain) {
		double nv = mt_coll_busbw(c, op, k, k, bytes);

		if (nv > 0 && bw > nv)
			bw = nv;
	}
	return bw;
}

/* The bus bandwidth of curve cv for the group (derived from the NICs when
 * the profile has no curve of the span), before the span's line rate bounds
 * it. */
static double curve_or_derived(const struct mt_cluster *c, const struct mt_coll_curve *cv, int op,
			       int nranks, int per_domain, int span, double bytes)
{
	if (!cv && span == MT_SPAN_NETWORK)
		return network_bound(c, op, nranks, per_domain, bytes,
				     derived_busbw(c, op, nranks, per_domain, bytes));
	if (!cv) /* no NVLink curve at all: 80% of the NVLink line rate */
		return 0.8 * (c->nvlink_gbps > 0 ? c->nvlink_gbps : 25);
	if (span == MT_SPAN_NETWORK && op == MT_COLL_ALL_TO_ALL &&
	    (cv->ranks != nranks || cv->per_node != per_domain) && cv->ranks > cv->per_node &&
	    nranks > per_domain) {
		/* an all-to-all moves (n-k)/n of each rank's buffer over its own
		 * NIC: its bus bandwidth at the NICs is L (n-1)/(n-k) (nic_line),
		 * so a curve of nc ranks, kc per domain, stretches to n and k by
		 * the ratio of the two bounds, at the same bytes per NIC */
		double nc = cv->ranks, kc = cv->per_node, n = nranks, k = per_domain;
		double r = ((n - 1) / (n - k)) / ((nc - 1) / (nc - kc));
		double bw = mt_coll_curve_busbw(cv, bytes * ((n - k) / n) / ((nc - kc) / nc)) * r;

		return r > 1 ? network_bound(c, op, nranks, per_domain, bytes, bw) : bw;
	}
	if (span == MT_SPAN_NETWORK && cv->per_node != per_domain) {
		/* k members per domain drive k NICs: at the same total size each NIC
		 * carries size/k, so busbw(k) = busbw_curve(size * kc / k) * k / kc,
		 * within the bounds of the links it stretches over */
		double kc = cv->per_node, k = per_domain;
		double bw = mt_coll_curve_busbw(cv, bytes * kc / k) * k / kc;

		/* scaled down, a curve stays within what was measured */
		return k > kc ? network_bound(c, op, nranks, per_domain, bytes, bw) : bw;
	}
	return mt_coll_curve_busbw(cv, bytes);
}

/* The highest bus bandwidth curve cv gives the group at its measured sizes
 * when that is above `line`, else 0 (the common case, told by the prepared
 * peak alone). */
static double peak_above(const struct mt_cluster *c, const struct mt_coll_curve *cv, int op,
			 int nranks, int per_domain, int span, double line)
{
	double stretch, p = 0, bw;
	int j;

	if (!cv || line <= 0)
		return 0;
	stretch = span == MT_SPAN_NETWORK ? (double)per_domain / cv->per_node : 1;
	if (cv->peak_gbps * stretch <= line)
		return 0;
	for (j = 0; j < cv->npts; j++) {
		bw = curve_or_derived(c, cv, op, nranks, per_domain, span, cv->pts[j].bytes * stretch);
		if (bw > p)
			p = bw;
	}
	return p > line ? p : 0;
}

/* The line rate of the span (nvl_line, nic_line). */
static double span_line(const struct mt_cluster *c, int op, int nranks, int per_domain, int span)
{
	return span == MT_SPAN_NVLINK ? nvl_line(c, op, nranks)
				      : nic_line(c, op, nranks, per_domain);
}

double mt_coll_busbw(const struct mt_cluster *c, int op, int nranks, int per_domain,
		     double bytes)
{
	const struct mt_coll_curve *cv;
	double bw, line, peak;
	int span;

	if (nranks <= 1 || bytes <= 0)
		return 0;
	span = span_of(c, nranks, &per_domain);
	cv = find_curve_any(c, op, span, nranks, per_domain);
	bw = curve_or_derived(c, cv, op, nranks, per_domain, span, bytes);
	/* The hardware the profile describes bounds every figure, measured ones
	 * included: a curve whose peak P is above the line rate R was measured
	 * on faster links than these.  Each byte then takes the time the
	 * described links give it, the rest (latency) stays as measured:
	 * 1/bw' = 1/bw + 1/R - 1/P, which is R at the peak. */
	line = span_line(c, op, nranks, per_domain, span);
	peak = peak_above(c, cv, op, nranks, per_domain, span, line);
	return peak > 0 ? 1 / (1 / bw + 1 / line - 1 / peak) : bw;
}

const char *mt_coll_provenance(const struct mt_cluster *c, int op, int nranks, int per_domain)
{
	/* [kind][capped]: kind measured, published, derived, each then "from
	 * another collective's curve"; capped no, at the NICs, at NVLink */
	static const char *const words[6][3] = {
		{ "measured", "measured, bounded by the NICs' line rate",
		  "measured, bounded by the NVLink line rate" },
		{ "measured, from another collective's curve",
		  "measured, from another collective's curve, bounded by the NICs' line rate",
		  "measured, from another collective's curve, bounded by the NVLink line rate" },
		{ "published measurement", "published measurement, bounded by the NICs' line rate",
		  "published measurement, bounded by the NVLink line rate" },
		{ "published, from another collective's curve",
		  "published, from another collective's curve, bounded by the NICs' line rate",
		  "published, from another collective's curve, bounded by the NVLink line rate" },
		{ "derived, not measured", "derived, not measured, bounded by the NICs' line rate",
		  "derived, not measured, bounded by the NVLink line rate" },
		{ "derived, from another collective's curve",
		  "derived, from another collective's curve, bounded by the NICs' line rate",
		  "derived, from another collective's curve, bounded by the NVLink line rate" },
	};
	const struct mt_coll_curve *cv;
	const struct mt_source *src;
	double line;
	int span, sub = 0, kind = 4;

	if (nranks <= 1)
		return "no communication";
	span = span_of(c, nranks, &per_domain);
	cv = find_curve(c, op, span, nranks, per_domain);
	if (!cv) {
		cv = find_curve_any(c, op, span, nranks, per_domain);
		sub = cv != NULL;
	}
	if (!cv && span == MT_SPAN_NETWORK)
		return nic_per_gpu(c) > 0 ? "derived from the NIC description"
					  : "estimated, the profile describes no NICs";
	if (!cv)
		return "estimated from the NVLink line rate";
	src = mt_cluster_source(c, cv->src);
	if (src && (!strcmp(src->kind, "measured") || !strcmp(src->kind, "imported")))
		kind = 0;
	else if (src && !strcmp(src->kind, "published"))
		kind = 2;
	line = span_line(c, op, nranks, per_domain, span);
	return words[kind + sub][!peak_above(c, cv, op, nranks, per_domain, span, line)
					 ? 0
					 : span == MT_SPAN_NETWORK ? 1 : 2];
}

int mt_group_per_domain(const struct mt_cluster *c, int n, int stride)
{
	int d = c->nvlink_domain;

	if (n <= 1)
		return 1;
	if (stride >= d)
		return 1;
	if ((long)n * stride <= d)
		return n;
	return d / stride;
}

double mt_coll_time(const struct mt_cluster *c, int op, int nranks, int per_domain,
		    double bytes)
{
	double bw;

	if (nranks <= 1 || bytes <= 0)
		return 0;
	bw = mt_coll_busbw(c, op, nranks, per_domain, bytes);
	if (bw <= 0)
		return 0;
	return bytes * mt_coll_busbw_factor(op, nranks) / (bw * 1e9) *
	       mt_corr_coll(&c->corr, op, nranks, per_domain);
}

/* ------------------------------------------------------------------ notes */

/* The line rate of collectives[i] at its own shape, and its peak above it:
 * 1 when the peak is above, else 0. */
static int coll_above(const struct mt_cluster *c, int i, double *peak, double *line)
{
	const struct mt_coll_curve *cv = &c->coll[i];

	*peak = cv->peak_gbps;
	*line = cv->span == MT_SPAN_NVLINK ? nvl_line(c, cv->op, cv->ranks)
					   : nic_line(c, cv->op, cv->ranks, cv->per_node);
	return *line > 0 && *peak > *line * (1 + 1e-9);
}

/* One sentence for the curves of a span above the line rate of the links
 * the profile describes: 0 when there is none. */
static int span_note(const struct mt_cluster *c, int span, char *buf, size_t cap)
{
	double peak, line, worst = 0, wp = 0, wl = 0;
	char list[160] = "", links[160];
	int i, n = 0, w = -1;
	size_t len;

	for (i = 0; i < c->ncoll; i++) {
		if (c->coll[i].span != span || !coll_above(c, i, &peak, &line))
			continue;
		len = strlen(list);
		if (n < 6)
			snprintf(list + len, sizeof(list) - len, "%s[%d]", n ? ", " : "", i);
		else if (n == 6)
			snprintf(list + len, sizeof(list) - len, ", ...");
		if (peak / line > worst) {
			worst = peak / line;
			w = i;
			wp = peak;
			wl = line;
		}
		n++;
	}
	if (!n)
		return 0;
	if (span == MT_SPAN_NVLINK)
		snprintf(links, sizeof(links), "node.nvlink_gbps %g", c->nvlink_gbps);
	else
		snprintf(links, sizeof(links), "node.nics_per_node %d x node.nic_gbps %g for "
			 "node.gpus_per_node %d", c->nics_per_node, c->nic_gbps, c->gpus_per_node);
	snprintf(buf, cap, "%s: %d %s curve%s (collectives%s) %s faster than the %s the profile "
		 "describes (%s): the model bounds %s by their line rate; the furthest above, "
		 "collectives[%d] (%s, %d ranks, %d per domain), reaches %.1f GB/s against %.1f GB/s",
		 c->file, n, span == MT_SPAN_NVLINK ? "NVLink" : "network", n == 1 ? "" : "s",
		 list, n == 1 ? "is" : "are", span == MT_SPAN_NVLINK ? "NVLink" : "NICs", links,
		 n == 1 ? "it" : "them", w, mt_coll_name(c->coll[w].op), c->coll[w].ranks,
		 c->coll[w].per_node, wp, wl);
	return 1;
}

int mt_cluster_note(const struct mt_cluster *c, int i, char *buf, size_t cap)
{
	int n = 0, j;

	if (c->hbm_measured_gbps > c->hbm_spec_gbps && n++ == i) {
		snprintf(buf, cap, "%s: memory_bandwidth.gbps %g is above the datasheet's "
			 "gpu.hbm_gbps %g: the model caps it there", c->file, c->hbm_measured_gbps,
			 c->hbm_spec_gbps);
		return 1;
	}
	for (j = 0; j < c->noffload; j++) {
		const struct mt_offload_pt *o = &c->offload[j];
		double lim = o->dir == MT_OFF_BIDIR ? 2 * c->pcie_gbps : c->pcie_gbps;

		/* only the measurements the model uses (mt_offload_gbps) */
		if (!o->pinned || !o->numa_local || o->under_load || lim <= 0 || o->gbps <= lim)
			continue;
		if (n++ == i) {
			snprintf(buf, cap, "%s: offload[%d].gbps %g (%s) is above node.pcie_gbps %g%s: "
				 "the model caps it there", c->file, j, o->gbps,
				 mt_offload_dir_name(o->dir), c->pcie_gbps,
				 o->dir == MT_OFF_BIDIR ? " in each direction" : "");
			return 1;
		}
	}
	if (span_note(c, MT_SPAN_NETWORK, buf, cap) && n++ == i)
		return 1;
	if (span_note(c, MT_SPAN_NVLINK, buf, cap) && n++ == i)
		return 1;
	return 0;
}

double mt_coll_line_gbps(const struct mt_cluster *c, int op, int nranks, int per_domain)
{
	if (nranks <= 1)
		return 0;
	return span_line(c, op, nranks, per_domain, span_of(c, nranks, &per_domain));
}
