/* SPDX-License-Identifier: MIT */
/* The HTML report: every section present for its input and absent without
 * it, nothing fetched, every input string escaped, schema errors named, and
 * the SVG writer's ticks and escaping. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

#include "../../lib/bundled.h"
#include "../../compare/comparison.h"
#include "../../lib/jsonr.h"
#include "../../reports/advice.h"
#include "../../reports/html.h"
#include "../../reports/svg.h"
#include "../../rules/engine.h"

static cJSON *advice, *profile, *analysis, *compare;
static struct mt_cluster *cluster;  /* the profile, parsed */

/* The advice document of a real search (Llama 3 70B on 64 H100, rules on). */
static cJSON *advice_of(const char *model_name)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;
	struct mt_ruleset *rs = mt_ruleset_new();
	struct mt_rules_run *run = NULL;
	struct mt_search_result *r = calloc(1, sizeof(*r));
	struct mt_explain ex[5];
	struct mt_advice_rules ar;
	struct mt_model m;
	struct mt_job j;
	struct sbuf sb = SBUF_INIT;
	cJSON *doc = NULL;
	int i;

	memset(ex, 0, sizeof(ex));
	if (!r || !rs || mt_cluster_load("dgx-h100", &c, &err) || mt_model_load("llama3-70b", &m, &err) ||
	    mt_ruleset_add_bundled(rs) || mt_ruleset_finish(rs))
		fail_msg("set-up: %s", err.msg);
	if (model_name)
		snprintf(m.name, sizeof(m.name), "%s", model_name);
	mt_job_init(&j);
	j.gpus = 64;
	j.seq = 8192;
	j.gbs = 128;
	if (mt_rules_start(rs, &m, c, &j, &run, &err) || mt_search(&m, c, &j, run, r, &err))
		fail_msg("search: %s", err.msg);
	for (i = 0; i < r->ntop; i++)
		assert_int_equal(mt_rules_explain(run, &r->top[i], i + 1, (int)r->feasible,
						  r->top[0].time.step, &ex[i]), 0);
	ar.set = rs;
	ar.run = run;
	ar.ex = ex;
	ar.nex = r->ntop;
	mt_advice_json(&sb, &m, c, &j, r, &ar);
	assert_int_equal(mt_json_parse("advice", sb.buf, sb.len, &doc, &err), 0);
	for (i = 0; i < r->ntop; i++)
		mt_explain_free(&ex[i]);
	sbuf_release(&sb);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	mt_cluster_free(c);
	free(r);
	return doc;
}

static int setup(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	const struct mt_bundled *b = mt_bundled_find("profile", "dgx-h100");

	(void)state;
	advice = advice_of(NULL);
	if (!b || mt_json_parse(b->path, b->data, b->len, &profile, &err) ||
	    mt_cluster_load("dgx-h100", &cluster, &err) ||
	    mt_json_load("tests/fixtures/report/analysis-dlrm-8rank.json", &analysis, &err) ||
	    mt_json_load("tests/fixtures/report/comparison-efa-tuner.json", &compare, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	cJSON_Delete(advice);
	cJSON_Delete(profile);
	mt_cluster_free(cluster);
	cJSON_Delete(analysis);
	cJSON_Delete(compare);
	return 0;
}

static char *render(const cJSON *a, const struct mt_cluster *p, const cJSON *n, const cJSON *c)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_report_in in = { .advice = a, .cluster = p, .analysis = n, .compare = c,
				   .advice_file = "advice.json", .profile_file = "dgx-h100",
				   .analysis_file = "analysis.json", .compare_file = "cmp.json" };
	struct sbuf sb = SBUF_INIT;

	if (mt_report_check(&in, &err))
		fail_msg("%s", err.msg);
	mt_report_html(&sb, &in);
	assert_false(sb.failed);
	return sbuf_detach(&sb, NULL);
}

static const char *const all_sections[] = {
	"id=\"summary\"", "id=\"cluster\"", "id=\"candidates\"", "id=\"memory\"", "id=\"time\"",
	"id=\"why\"", "id=\"configuration\"", "id=\"findings\"", "id=\"regressions\"",
};

static void every_section_for_its_input(void **state)
{
	char *html = render(advice, cluster, analysis, compare);
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(all_sections) / sizeof(all_sections[0]); i++)
		if (!strstr(html, all_sections[i]))
			fail_msg("missing %s", all_sections[i]);
	/* the content of each, from its input */
	assert_non_null(strstr(html, "<title>megatune report: llama3-70b on dgx-h100</title>"));
	assert_non_null(strstr(html, "predicted step time"));
	assert_non_null(strstr(html, "all_reduce bus bandwidth"));
	assert_non_null(strstr(html, "GEMM rate against size"));
	assert_non_null(strstr(html, "usable memory"));
	assert_non_null(strstr(html, "What is not compute"));
	assert_non_null(strstr(html, "Why this TP size"));
	{	/* the rules in the terminal's groups and order (reports/advice.h) */
		const char *why = strstr(html, "<h3>Why this configuration</h3>");
		const char *chosen = strstr(html, "<h3>Chosen by rules</h3>");
		const char *flags = strstr(html, "<h3>Flags and variables from rules</h3>");
		const char *tp = strstr(html, "<span class=\"tag\">why-tp</span>");
		const char *pp = strstr(html, "<span class=\"tag\">why-pp</span>");
		const char *dist = strstr(html, "<span class=\"tag\">dist-opt</span>");
		const char *gc = strstr(html, "<span class=\"tag\">manual-gc</span>");

		assert_true(why && chosen && flags && tp && pp && dist && gc);
		assert_true(why < tp && tp < pp && pp < chosen);
		assert_true(chosen < dist && dist < flags && flags < gc);
	}
	assert_non_null(strstr(html, "--tensor-model-parallel-size 4"));
	assert_non_null(strstr(html, "export CUDA_DEVICE_MAX_CONNECTIONS=1"));
	assert_non_null(strstr(html, "rank 7"));                  /* the 8 DLRM ranks */
	assert_non_null(strstr(html, "all_reduce time, 16 ranks, 64 KiB"));
	assert_non_null(strstr(html, "verdict-regressed"));
	/* self-contained: nothing fetched */
	assert_null(strstr(html, "src="));
	assert_null(strstr(html, "<link"));
	assert_null(strstr(html, "@import"));
	assert_null(strstr(html, "url("));
	assert_null(strstr(html, "http://"));
	assert_null(strstr(html, "https://"));
	free(html);
	/* each section only with its input */
	html = render(NULL, cluster, NULL, NULL);
	assert_non_null(strstr(html, "id=\"cluster\""));
	assert_null(strstr(html, "id=\"summary\""));
	assert_null(strstr(html, "id=\"why\""));
	assert_null(strstr(html, "id=\"findings\""));
	free(html);
	html = render(advice, NULL, NULL, NULL);
	assert_null(strstr(html, "id=\"cluster\""));
	assert_non_null(strstr(html, "id=\"configuration\""));
	free(html);
}

static void input_strings_are_escaped(void **state)
{
	cJSON *evil = advice_of("<script>alert(1)</script>\"><img src=x onerror=alert(2)>");
	char *html = render(evil, cluster, NULL, NULL);
	const char *p = html;
	int scripts = 0;

	(void)state;
	while ((p = strstr(p, "<script"))) {
		scripts++;
		p++;
	}
	assert_int_equal(scripts, 1); /* ours, at the end */
	assert_null(strstr(html, "<img"));
	assert_non_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img"));
	free(html);
	cJSON_Delete(evil);
}

static void schemas_are_checked(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_report_in in;

	(void)state;
	memset(&in, 0, sizeof(in));
	assert_int_equal(mt_report_check(&in, &err), MT_EUSAGE);
	assert_non_null(strstr(err.msg, "nothing to report"));
	in.advice = profile;
	in.advice_file = "wrong.json";
	assert_int_equal(mt_report_check(&in, &err), MT_EINVAL);
	assert_string_equal(err.msg, "wrong.json: field 'schema': --advice expects "
				     "\"megatune.advice/1\", got \"megatune.profile/1\"");
	in.advice = NULL;
	in.compare = analysis;
	in.compare_file = "a.json";
	assert_int_equal(mt_report_check(&in, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "--compare expects \"megatune.comparison/1\""));
}

/* compare/comparison.h: the typed reader of megatune.comparison/1 */
static void comparison_document_is_read(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_comparison c;
	cJSON *doc;
	(void)state;

	doc = cJSON_Parse("{\"schema\": \"megatune.comparison/1\", \"verdict\": \"regressed\", "
			  "\"metrics\": [{\"name\": \"all_reduce busbw\", \"unit\": \"GB/s\", "
			  "\"baseline\": 100, \"current\": 90, \"change_pct\": -10, "
			  "\"noise_pct\": 2, \"verdict\": \"regressed\"}, {\"name\": \"x\"}]}");
	assert_int_equal(mt_comparison_read(doc, "c.json", "--compare", &c, &err), MT_OK);
	assert_string_equal(c.verdict, "regressed");
	assert_int_equal(c.nmetrics, 2);
	assert_string_equal(c.metrics[0].name, "all_reduce busbw");
	assert_true(c.metrics[0].current == 90 && c.metrics[0].change_pct == -10);
	assert_true(isnan(c.metrics[1].baseline) && c.metrics[1].verdict == NULL);
	mt_comparison_free(&c);
	cJSON_Delete(doc);

	doc = cJSON_Parse("{\"schema\": \"megatune.profile/1\"}");
	assert_int_equal(mt_comparison_read(doc, "c.json", "--compare", &c, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "expects \"megatune.comparison/1\""));
	cJSON_Delete(doc);
	doc = cJSON_Parse("{\"schema\": \"megatune.comparison/1\", \"metrics\": [1]}");
	assert_int_equal(mt_comparison_read(doc, "c.json", "--compare", &c, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "c.json: field 'metrics[0]': expected an object"));
	assert_int_equal(c.nmetrics, 0);
	cJSON_Delete(doc);
}

static void svg_ticks_and_text(void **state)
{
	double t[64];
	int n;
	struct sbuf sb = SBUF_INIT;

	(void)state;
	n = svg_ticks(0, 1000, 0, t, 64);
	assert_int_equal(n, 6);
	assert_true(t[0] == 0 && t[1] == 200 && t[5] == 1000);
	n = svg_ticks(0.07, 500, 1, t, 64);        /* four decades: decades only */
	assert_int_equal(n, 4);
	assert_true(t[0] == 0.1 && t[3] == 100);
	n = svg_ticks(1000, 30000, 1, t, 64);      /* narrow: 1, 2, 5 within */
	assert_int_equal(n, 5);
	assert_true(t[0] == 1000 && t[1] == 2000 && t[2] == 5000 && t[4] == 20000);
	assert_int_equal(svg_ticks(5, 5, 0, t, 64), 0);
	svg_escape(&sb, "a<b>&\"c'\x01");
	assert_string_equal(sb.buf, "a&lt;b&gt;&amp;&quot;c&#39;");
	sbuf_reset(&sb);
	svg_size(&sb, 64 * 1048576.0);
	sbuf_adds(&sb, " ");
	svg_size(&sb, 1536);
	assert_string_equal(sb.buf, "64M 1.5K");
	sbuf_release(&sb);
}

static void charts_have_their_numbers(void **state)
{
	double x[3] = { 1024, 1048576, 1073741824 }, y[3] = { 1.5, 120, 450 };
	struct svg_series s = { "nvlink <8>", x, y, 3, 0, 0, 1 };
	struct svg_refline ref = { "NVLink", 450, 3 };
	struct svg_line_chart c;
	struct sbuf sb = SBUF_INIT;
	const char *bars[2] = { "#1", "#2" }, *segs[2] = { "a", "b" };
	int colors[2] = { 0, 1 };
	double v[4] = { 1, 2, 3, 4 };
	struct svg_stacked st;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.xlabel = "size";
	c.ylabel = "GB/s";
	c.yunit = "GB/s";
	c.logx = c.logy = 1;
	c.xbytes = 1;
	c.series = &s;
	c.nseries = 1;
	c.refs = &ref;
	c.nrefs = 1;
	svg_line_chart(&sb, &c);
	assert_non_null(strstr(sb.buf, "<title>nvlink &lt;8&gt;: 1M \xe2\x86\x92 120 GB/s</title>"));
	assert_non_null(strstr(sb.buf, "<title>NVLink: 450 GB/s</title>"));
	sbuf_reset(&sb);
	memset(&st, 0, sizeof(st));
	st.unit = "GiB";
	st.bars = bars;
	st.segments = segs;
	st.colors = colors;
	st.values = v;
	st.nbar = 2;
	st.nseg = 2;
	st.limit = 5;
	st.limit_label = "usable";
	svg_stacked_bars(&sb, &st);
	assert_non_null(strstr(sb.buf, "<title>#2 \xe2\x80\x94 b: 4 GiB</title>"));
	assert_non_null(strstr(sb.buf, ">7</text>"));            /* the total of #2 */
	assert_non_null(strstr(sb.buf, "<title>usable: 5 GiB</title>"));
	sbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_section_for_its_input),
		cmocka_unit_test(input_strings_are_escaped),
		cmocka_unit_test(schemas_are_checked),
		cmocka_unit_test(comparison_document_is_read),
		cmocka_unit_test(svg_ticks_and_text),
		cmocka_unit_test(charts_have_their_numbers),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
