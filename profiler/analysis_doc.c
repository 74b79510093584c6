/* SPDX-License-Identifier: MIT */
/* analysis_doc: the analysis of traces as text, as megatune.analysis/1 and as
 * megatune.facts/1 (docs/FORMATS.md sections 4 and 10). */
#include "analysis_doc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../lib/jsonw.h"
#include "../lib/table.h"
#include "../rules/facts.h"
#include "../rules/fired.h"
#include "trace.h"
#include "trace_guard.h"

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static double us(int64_t ns)
{
	return (double)ns / 1e3;
}

/* The note on how the trace ended, and what the reader left out or cut
 * (profiler/trace.h caps), never silent. */
static void rank_warnings(struct sbuf *sb, const struct mt_rank_stats *r)
{
	size_t bad = r->left_bad_time + r->left_order + r->left_long;

	if (r->note[0])
		sbuf_addf(sb, "\nwarning: %s: %s.\n", r->path, r->note);
	if (bad)
		sbuf_addf(sb, "\nwarning: %s: %zu GPU events left out for their times (%zu with ts "
			  "or dur null, not a number or out of range, %zu ending before they "
			  "start, %zu lasting over an hour).\n", r->path, bad, r->left_bad_time,
			  r->left_order, r->left_long);
	if (r->left_cap || r->other_cap)
		sbuf_addf(sb, "\nwarning: %s: past the reader's cap of %zu records of a kind, %zu "
			  "GPU events and %zu launches or ranges left out.\n", r->path,
			  (size_t)MT_TRACE_MAX_EVENTS, r->left_cap, r->other_cap);
	if (r->strings_cut || r->names_capped)
		sbuf_addf(sb, "\nwarning: %s: %zu strings cut at %zu bytes, %zu events past %zu MiB "
			  "of distinct names named as one.\n", r->path, r->strings_cut,
			  (size_t)MT_TRACE_MAX_STR, r->names_capped,
			  (size_t)(MT_TRACE_MAX_NAME_BYTES >> 20));
}

/* The counts and times of every rank summed, for the tables below the ranks'. */
struct analysis_sums {
	size_t cat_count[MT_KC_N];
	int64_t cat_time[MT_KC_N], ktime;
	int64_t coll_t[MT_TC_N], coll_x[MT_TC_N], cus_t, cus_x;
	size_t coll_k[MT_TC_N], cus_k, left;
	int any_comm;
};

/* One rank's row of the table of ranks. */
static void analysis_rank_row(struct mt_table *t, const struct mt_rank_stats *x)
{
	mt_table_cell(t, "%lld", (long long)x->rank);
	mt_table_cell(t, "%.3f", ms(x->total));
	mt_table_cell(t, "%.3f", ms(x->busy));
	mt_table_cell(t, "%.3f", ms(x->comp));
	mt_table_cell(t, "%.3f", ms(x->comm));
	mt_table_cell(t, "%.3f", ms(x->exposed_comm));
	mt_table_cell(t, "%.1f", x->overlap_pct);
	mt_table_cell(t, "%.3f", ms(x->memcpy));
	mt_table_cell(t, "%.3f", ms(x->exposed_memcpy));
	mt_table_cell(t, "%.3f", ms(x->idle));
	mt_table_cell(t, "%.3f", ms(x->idle_host_wait));
	mt_table_cell(t, "%.3f", ms(x->idle_launch));
	mt_table_cell(t, "%zu", x->nkernels);
	mt_table_cell(t, "%zu", x->nstreams);
	if (x->has_steps)
		mt_table_cell(t, "%.3f", ms(x->step_mean));
	else
		mt_table_cell(t, "-");
}

/* One rank's counts and times added to the sums over the ranks. */
static void analysis_sums_add(struct analysis_sums *s, const struct mt_rank_stats *x)
{
	int k;

	for (k = 0; k < MT_KC_N; k++) {
		s->cat_count[k] += x->cat_count[k];
		s->cat_time[k] += x->cat_time[k];
		if (k != MT_KC_MEMCPY)
			s->ktime += x->cat_time[k];
	}
	for (k = 0; k < MT_TC_N; k++) {
		s->coll_t[k] += x->coll_time[k];
		s->coll_x[k] += x->coll_exposed[k];
		s->coll_k[k] += x->coll_kernels[k];
	}
	s->cus_t += x->custom_comm;
	s->cus_x += x->custom_exposed;
	s->cus_k += x->custom_kernels;
	s->any_comm |= x->ncomm > 0;
	s->left += x->nleft_out;
}

/* The table of communication by kind, summed over the ranks. */
static void analysis_comm_text(struct sbuf *sb, const struct analysis_sums *s, int n)
{
	struct mt_table t;
	int k;

	sbuf_addf(sb, "\nCommunication by kind%s (union per rank, summed):\n",
		  n > 1 ? ", all ranks" : "");
	mt_table_init(&t);
	mt_table_col(&t, 0, "kind", "", 1);
	mt_table_col(&t, 1, "kernels", "", 0);
	mt_table_col(&t, 2, "time", "ms", 0);
	mt_table_col(&t, 3, "exposed", "ms", 0);
	for (k = 0; k < MT_TC_N; k++) {
		if (!s->coll_k[k])
			continue;
		mt_table_cell(&t, "%s", mt_tcoll_name(k));
		mt_table_cell(&t, "%zu", s->coll_k[k]);
		mt_table_cell(&t, "%.3f", ms(s->coll_t[k]));
		mt_table_cell(&t, "%.3f", ms(s->coll_x[k]));
	}
	if (s->cus_k) {
		mt_table_cell(&t, "custom (DeepEP, NVSHMEM, patterns)");
		mt_table_cell(&t, "%zu", s->cus_k);
		mt_table_cell(&t, "%.3f", ms(s->cus_t));
		mt_table_cell(&t, "%.3f", ms(s->cus_x));
	}
	mt_table_render(&t, sb, "  ", MT_TABLE_HASH);
	mt_table_release(&t);
}

/* The table of kernel categories, summed over the ranks. */
static void analysis_category_text(struct sbuf *sb, const struct analysis_sums *s, int n)
{
	struct mt_table t;
	int k;

	sbuf_addf(sb, "\nKernel categories%s (sum of durations):\n", n > 1 ? ", all ranks" : "");
	mt_table_init(&t);
	mt_table_col(&t, 0, "category", "", 1);
	mt_table_col(&t, 1, "count", "", 0);
	mt_table_col(&t, 2, "time", "ms", 0);
	mt_table_col(&t, 3, "share", "%", 0);
	for (k = 0; k < MT_KC_N; k++) {
		if (!s->cat_count[k])
			continue;
		mt_table_cell(&t, "%s", mt_kcat_name(k));
		mt_table_cell(&t, "%zu", s->cat_count[k]);
		mt_table_cell(&t, "%.3f", ms(s->cat_time[k]));
		if (k == MT_KC_MEMCPY)
			mt_table_cell(&t, "-");
		else
			mt_table_cell(&t, "%.1f", s->ktime ? 100.0 * (double)s->cat_time[k] /
							     (double)s->ktime : 0);
	}
	mt_table_render(&t, sb, "  ", MT_TABLE_HASH);
	mt_table_release(&t);
}

/* The ranks compared: the slowest, the stragglers, the idle range, the start skew. */
static void analysis_across_text(struct sbuf *sb, const struct mt_rank_stats *r,
				 const struct mt_job_stats *j)
{
	int i;

	sbuf_addf(sb, "\nAcross ranks: slowest rank %lld, computation %.3fx the median",
		  (long long)r[j->slowest].rank, j->slowest_ratio);
	if (j->nstragglers) {
		sbuf_adds(sb, "; stragglers (> 5% above the median):");
		for (i = 0; i < j->nstragglers; i++)
			sbuf_addf(sb, " %lld", (long long)r[j->stragglers[i]].rank);
	} else {
		sbuf_adds(sb, "; no straggler (> 5% above the median)");
	}
	sbuf_addf(sb, "; idle from %.3f to %.3f ms.\n", ms(j->idle_min), ms(j->idle_max));
	if (j->start_skew >= 0)
		sbuf_addf(sb, "Start skew of ProfilerStep#%lld: %.3f ms; rank %lld starts first "
			  "and waits for its peers (ranks on one clock: %s).\n",
			  (long long)j->skew_step, ms(j->start_skew),
			  (long long)r[j->wait_rank].rank, j->clock_evidence);
	else
		sbuf_adds(sb, "No start skew: the ranks are not shown to share one clock, or no "
			  "step is present in every rank.\n");
}

void mt_analysis_text(struct sbuf *sb, const struct mt_rank_stats *r, int n,
		      const struct mt_job_stats *j, const struct mt_explain *ex,
		      const struct mt_analyze_opts *ao)
{
	struct mt_table t;
	struct analysis_sums s;
	int i;

	memset(&s, 0, sizeof(s));
	sbuf_addf(sb, "megatune analyze: %d rank%s; %s%s\n", n, n == 1 ? "" : "s",
		  ao->linked_only ? "GPU events linked to a launch call" : "every GPU event",
		  ao->window == MT_WIN_STEPS ? ", inside the ProfilerStep window" :
		  ao->window == MT_WIN_HTA ? ", HTA's step window" : "");
	mt_table_init(&t);
	mt_table_col(&t, 0, "rank", "", 0);
	mt_table_col(&t, 1, "total", "ms", 0);
	mt_table_col(&t, 2, "busy", "ms", 0);
	mt_table_col(&t, 3, "compute", "ms", 0);
	mt_table_col(&t, 4, "comm", "ms", 0);
	mt_table_col(&t, 5, "exposed", "ms", 0);
	mt_table_col(&t, 6, "overlap", "%", 0);
	mt_table_col(&t, 7, "memcpy", "ms", 0);
	mt_table_col(&t, 8, "exp.copy", "ms", 0);
	mt_table_col(&t, 9, "idle", "ms", 0);
	mt_table_col(&t, 10, "host-wait", "ms", 0);
	mt_table_col(&t, 11, "launch", "ms", 0);
	mt_table_col(&t, 12, "kernels", "", 0);
	mt_table_col(&t, 13, "streams", "", 0);
	mt_table_col(&t, 14, "step", "ms", 0);
	for (i = 0; i < n; i++) {
		analysis_rank_row(&t, &r[i]);
		analysis_sums_add(&s, &r[i]);
	}
	sbuf_addc(sb, '\n');
	mt_table_render(&t, sb, "", MT_TABLE_HASH);
	mt_table_release(&t);
	if (s.left)
		sbuf_addf(sb, "(%zu GPU events left out: unlinked or outside the window)\n",
			  s.left);
	if (s.any_comm)
		analysis_comm_text(sb, &s, n);
	analysis_category_text(sb, &s, n);
	if (n > 1)
		analysis_across_text(sb, r, j);
	for (i = 0; i < n; i++)
		rank_warnings(sb, &r[i]);
	for (i = 0; i < n; i++)
		if (r[i].no_comm_multi_stream)
			sbuf_addf(sb, "\nwarning: %s: GPU work on %zu streams and no kernel recognised as "
				  "communication; if this job communicates, name its kernels with "
				  "--comm-pattern.\n", r[i].path, r[i].nstreams);
	if (ex) {
		sbuf_addf(sb, "\nFindings (%d):\n", ex->n);
		if (!ex->n)
			sbuf_adds(sb, "  none: no diagnose rule fired\n");
		mt_fired_text(sb, ex);
	}
}

#define FACTS_METHOD " Fractions are pooled over ranks: summed times over summed windows; " \
	"median_kernel_us is the median of the ranks' medians."

/* Open the document: schema, source (the traces), method. */
static void doc_head(struct jw *w, struct sbuf *sb, const char *schema,
		     const struct mt_rank_stats *r, int n, const struct mt_analyze_opts *ao, const char *more)
{
	struct sbuf tmp = SBUF_INIT;
	int i;

	jw_init(w, sb, 1);
	jw_obj(w, NULL);
	jw_str(w, "schema", schema);
	for (i = 0; i < n; i++)
		sbuf_addf(&tmp, "%s%s", i ? ", " : "", r[i].path);
	jw_str(w, "source", tmp.buf);
	sbuf_release(&tmp);
	mt_analyze_method(ao, &tmp);
	sbuf_adds(&tmp, more);
	jw_str(w, "method", tmp.buf);
	sbuf_release(&tmp);
}

void mt_analysis_json(struct sbuf *sb, const struct mt_rank_stats *r, int n,
		      const struct mt_job_stats *j, const struct mt_explain *ex,
		      const struct mt_val *facts, const unsigned char *given, const struct mt_analyze_opts *ao,
		      const struct mt_against *ag)
{
	struct jw w;
	struct sbuf tmp = SBUF_INIT;
	int i, k;

	doc_head(&w, sb, "megatune.analysis/1", r, n, ao, "");
	jw_obj(&w, "options");
	jw_bool(&w, "linked_only", ao->linked_only);
	jw_str(&w, "window", ao->window == MT_WIN_STEPS ? "steps" :
			     ao->window == MT_WIN_HTA ? "hta" : "all");
	jw_arr(&w, "comm_patterns");
	for (k = 0; k < ao->ncomm_patterns; k++)
		jw_str(&w, NULL, ao->comm_patterns[k]);
	jw_end(&w);
	jw_end(&w);
	jw_arr(&w, "ranks");
	for (i = 0; i < n; i++) {
		const struct mt_rank_stats *x = &r[i];
		jw_obj(&w, NULL);
		jw_int(&w, "rank", x->rank);
		jw_str(&w, "trace", x->path);
		if (x->gpu_name[0])
			jw_str(&w, "gpu", x->gpu_name);
		jw_fix(&w, "total_us", us(x->total), 3);
		jw_fix(&w, "busy_us", us(x->busy), 3);
		jw_fix(&w, "idle_us", us(x->idle), 3);
		jw_fix(&w, "idle_host_wait_us", us(x->idle_host_wait), 3);
		jw_fix(&w, "idle_launch_us", us(x->idle_launch), 3);
		jw_fix(&w, "idle_unattributed_us", us(x->idle_unattributed), 3);
		jw_fix(&w, "computation_us", us(x->comp), 3);
		jw_fix(&w, "comm_us", us(x->comm), 3);
		jw_fix(&w, "exposed_comm_us", us(x->exposed_comm), 3);
		jw_fix(&w, "memcpy_us", us(x->memcpy), 3);
		jw_fix(&w, "exposed_memcpy_us", us(x->exposed_memcpy), 3);
		jw_fix(&w, "overlap_pct", x->overlap_pct, 3);
		jw_obj(&w, "comm_by_kind");
		for (k = 0; k < MT_TC_N; k++) {
			if (!x->coll_kernels[k])
				continue;
			jw_obj(&w, mt_tcoll_name(k));
			jw_int(&w, "kernels", (int64_t)x->coll_kernels[k]);
			jw_fix(&w, "time_us", us(x->coll_time[k]), 3);
			jw_fix(&w, "exposed_us", us(x->coll_exposed[k]), 3);
			jw_end(&w);
		}
		if (x->custom_kernels) {
			jw_obj(&w, "custom");
			jw_int(&w, "kernels", (int64_t)x->custom_kernels);
			jw_fix(&w, "time_us", us(x->custom_comm), 3);
			jw_fix(&w, "exposed_us", us(x->custom_exposed), 3);
			jw_end(&w);
		}
		jw_end(&w);
		jw_obj(&w, "categories");
		for (k = 0; k < MT_KC_N; k++) {
			if (!x->cat_count[k])
				continue;
			jw_obj(&w, mt_kcat_name(k));
			jw_int(&w, "count", (int64_t)x->cat_count[k]);
			jw_fix(&w, "time_us", us(x->cat_time[k]), 3);
			jw_end(&w);
		}
		jw_end(&w);
		jw_obj(&w, "events");
		jw_int(&w, "gpu_events", (int64_t)x->nevents);
		jw_int(&w, "kernels", (int64_t)x->nkernels);
		jw_int(&w, "memcpy", (int64_t)x->nmemcpy);
		jw_int(&w, "memset", (int64_t)x->nmemset);
		jw_int(&w, "comm_kernels", (int64_t)x->ncomm);
		jw_int(&w, "left_out", (int64_t)x->nleft_out);
		jw_int(&w, "unlinked_left_out", (int64_t)x->nunlinked);
		jw_obj(&w, "left_out_reasons");
		jw_int(&w, "bad_time", (int64_t)x->left_bad_time);
		jw_int(&w, "end_before_start", (int64_t)x->left_order);
		jw_int(&w, "over_an_hour", (int64_t)x->left_long);
		jw_int(&w, "over_cap", (int64_t)x->left_cap);
		jw_end(&w);
		jw_int(&w, "streams", (int64_t)x->nstreams);
		jw_int(&w, "devices", (int64_t)x->ndevices);
		jw_end(&w);
		jw_fix(&w, "median_kernel_us", x->median_kernel / 1e3, 4);
		jw_obj(&w, "iterations");
		jw_int(&w, "count", (int64_t)x->nsteps);
		if (x->has_steps) {
			jw_fix(&w, "mean_us", us(x->step_mean), 3);
			jw_fix(&w, "min_us", us(x->step_min), 3);
			jw_fix(&w, "max_us", us(x->step_max), 3);
		}
		jw_end(&w);
		jw_end(&w);
	}
	jw_end(&w);
	jw_obj(&w, "job");
	jw_int(&w, "ranks", n);
	if (n > 1) {
		jw_int(&w, "slowest_rank", r[j->slowest].rank);
		jw_num(&w, "slowest_rank_ratio", j->slowest_ratio, 5);
		jw_arr(&w, "stragglers");
		for (i = 0; i < j->nstragglers; i++)
			jw_int(&w, NULL, r[j->stragglers[i]].rank);
		jw_end(&w);
		jw_bool(&w, "one_clock", j->one_clock);
		if (j->start_skew >= 0) {
			jw_fix(&w, "start_skew_us", us(j->start_skew), 3);
			jw_int(&w, "wait_rank", r[j->wait_rank].rank);
			jw_int(&w, "skew_step", j->skew_step);
		}
	}
	if (!isnan(j->step_mean_s))
		jw_num(&w, "step_mean_s", j->step_mean_s, 6);
	jw_end(&w);
	mt_facts_json(&w, facts, given);
	mt_fired_json(&w, "findings", ex, MT_FIRED_BRIEF);
	if (ag)
		mt_against_jw(&w, ag);
	jw_arr(&w, "warnings");
	for (i = 0; i < n; i++) {
		if (r[i].note[0]) {
			sbuf_addf(&tmp, "%s: %s", r[i].path, r[i].note);
			jw_str(&w, NULL, tmp.buf);
			sbuf_release(&tmp);
		}
		if (!r[i].no_comm_multi_stream)
			continue;
		sbuf_addf(&tmp, "%s: GPU work on %zu streams and no kernel recognised as "
			  "communication", r[i].path, r[i].nstreams);
		jw_str(&w, NULL, tmp.buf);
		sbuf_release(&tmp);
	}
	jw_end(&w);
	jw_end(&w);
	sbuf_addc(sb, '\n');
}

void mt_analysis_facts(struct sbuf *sb, const struct mt_rank_stats *r, int n,
		       const struct mt_val *facts, const unsigned char *given, const struct mt_analyze_opts *ao)
{
	struct jw w;

	doc_head(&w, sb, "megatune.facts/1", r, n, ao, FACTS_METHOD);
	mt_facts_json(&w, facts, given);
	jw_end(&w);
	sbuf_addc(sb, '\n');
}
