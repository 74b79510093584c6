/* SPDX-License-Identifier: MIT */
/* bench-report: how fast the HTML report renders and how large it is.
 *
 * DeepSeek-V3 on 1024 H100 with the bundled dgx-h100 profile (every curve of
 * the calibration sections), the rules on, and the 64 best candidates (the
 * most `advise --top` keeps): the time to parse the advice and profile
 * documents and render the page (median of 11), and its size.  Targets (issue
 * "the HTML report"): under 200 ms and under 2 MB.  Usage: bench-report
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "../lib/bundled.h"
#include "../lib/jsonr.h"
#include "../reports/advice.h"
#include "../reports/html.h"
#include "../rules/engine.h"

#define REPS 11

int main(void)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;
	struct mt_ruleset *rs = mt_ruleset_new();
	struct mt_rules_run *run = NULL;
	struct mt_search_result *r = calloc(1, sizeof(*r));
	struct mt_explain *ex = calloc(MT_TOP_MAX, sizeof(*ex));
	const struct mt_bundled *pb = mt_bundled_find("profile", "dgx-h100");
	struct mt_advice_rules ar;
	struct mt_model m;
	struct mt_job j;
	struct sbuf json = SBUF_INIT, html = SBUF_INIT;
	double secs[REPS];
	int i, k;

	if (!rs || !r || !ex || !pb || mt_cluster_load("dgx-h100", &c, &err) ||
	    mt_model_load("deepseek-v3", &m, &err) || mt_ruleset_add_bundled(rs) ||
	    mt_ruleset_finish(rs)) {
		fprintf(stderr, "bench-report: %s\n", err.msg);
		return 1;
	}
	mt_job_init(&j);
	j.gpus = 1024;
	j.seq = 4096;
	j.gbs = 8192;
	j.top_k = MT_TOP_MAX;
	if (mt_rules_start(rs, &m, c, &j, &run, &err) || mt_search(&m, c, &j, run, r, &err)) {
		fprintf(stderr, "bench-report: %s\n", err.msg);
		return 1;
	}
	for (i = 0; i < r->ntop; i++)
		if (mt_rules_explain(run, &r->top[i], i + 1, (int)r->feasible, r->top[0].time.step, &ex[i]))
			return 1;
	ar.set = rs;
	ar.run = run;
	ar.ex = ex;
	ar.nex = r->ntop;
	mt_advice_json(&json, &m, c, &j, r, &ar);
	for (k = 0; k < REPS; k++) {
		struct mt_report_in in;
		struct mt_cluster *pc = NULL;
		cJSON *adv = NULL, *prof = NULL;
		double t0 = bench_now();

		sbuf_reset(&html);
		memset(&in, 0, sizeof(in));
		if (mt_json_parse("advice", json.buf, json.len, &adv, &err) ||
		    mt_json_parse(pb->path, pb->data, pb->len, &prof, &err) ||
		    mt_cluster_from_json(prof, pb->path, &pc, &err))
			return 1;
		in.advice = adv;
		in.cluster = pc;
		in.advice_file = "advice.json";
		in.profile_file = "dgx-h100";
		if (mt_report_check(&in, &err))
			return 1;
		mt_report_html(&html, &in);
		secs[k] = bench_now() - t0;
		cJSON_Delete(adv);
		cJSON_Delete(prof);
		mt_cluster_free(pc);
	}
	printf("# HTML report: DeepSeek-V3 on 1024 H100, dgx-h100 profile (%d curves), %d candidates "
	       "with their rules (median of %d)\n", c->ncoll, r->ntop, REPS);
	printf("  parse + render %.1f ms (target < 200 ms), %.2f MB (target < 2 MB); advice JSON %.2f MB\n",
	       1e3 * bench_median(secs, REPS), html.len / 1e6, json.len / 1e6);
	for (i = 0; i < r->ntop; i++)
		mt_explain_free(&ex[i]);
	free(ex);
	free(r);
	sbuf_release(&json);
	sbuf_release(&html);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	mt_cluster_free(c);
	return 0;
}
