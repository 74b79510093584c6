/* SPDX-License-Identifier: MIT */
/* html_advice: the report's sections of a megatune.advice/1 document: the
 * summary, the candidates, memory and time, the rules that fired, and the
 * configuration to copy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "html_parts.h"
#include "../perfmodel/recompute.h"
#include "../job/flags.h"
#include "../lib/shell.h"

/* "TP4 PP2 VPP8 CP2(p2p) EP8 DP4 MBS1" from a candidate's config */
static void label(struct sbuf *sb, const cJSON *cand)
{
	const cJSON *c = jget(cand, "config");
	double cp = jnum(c, "cp"), ep = jnum(c, "ep"), vpp = jnum(c, "vpp");

	sbuf_adds(sb, "TP");
	num(sb, jnum(c, "tp"), "%.0f");
	sbuf_adds(sb, " PP");
	num(sb, jnum(c, "pp"), "%.0f");
	if (vpp > 1)
		sbuf_addf(sb, " VPP%.0f", vpp);
	if (cp > 1) {
		sbuf_addf(sb, " CP%.0f(", cp);
		esc(sb, jstr(c, "cp_comm_type"));
		sbuf_addc(sb, ')');
	}
	if (ep > 1)
		sbuf_addf(sb, " EP%.0f ETP%.0f", ep, jnum(c, "etp"));
	sbuf_adds(sb, " DP");
	num(sb, jnum(c, "dp"), "%.0f");
	sbuf_adds(sb, " MBS");
	num(sb, jnum(c, "mbs"), "%.0f");
}

/* "#1 TP4 PP2 ..." for a bar of a chart; the caller frees it. */
static char *bar_label(const cJSON *cand)
{
	struct sbuf sb = SBUF_INIT;

	sbuf_addf(&sb, "#%.0f ", jnum(cand, "rank"));
	label(&sb, cand);
	return sbuf_detach(&sb, NULL);
}

/* ---------------------------------------------------------------- summary */

static const struct {
	const char *key, *name;
} time_parts[] = {
	{ "tp_exposed_s", "exposed TP communication" },
	{ "cp_exposed_s", "exposed CP communication" },
	{ "ep_exposed_s", "exposed EP communication" },
	{ "pp_exposed_s", "exposed pipeline send/recv" },
	{ "dp_exposed_s", "exposed DP communication" },
	{ "offload_exposed_s", "exposed activation offload" },
	{ "host_exposed_s", "host overhead" },
	{ "bubble_s", "pipeline bubble" },
	{ "optimizer_s", "optimizer step" },
	{ "recompute_s", "recomputation" },
	{ "gemm_s", "GEMM time" },
	{ "attention_s", "attention time" },
	{ "elementwise_s", "element-wise time" },
	{ "gpu_overhead_s", "kernel gaps and SM sharing" },
};

/* The strings of a JSON list, escaped, separated by commas. */
static void names(struct sbuf *sb, const cJSON *list)
{
	const cJSON *m;
	int first = 1;

	cJSON_ArrayForEach(m, list) {
		if (!first)
			sbuf_adds(sb, ",");
		esc(sb, cJSON_IsString(m) ? m->valuestring : "?");
		first = 0;
	}
}

/* What the candidate runs beyond Megatron-LM's defaults and the label:
 * offloads with the host memory they take, FSDP, CUDA graphs. */
static void extra_settings(struct sbuf *sb, const cJSON *job, const cJSON *c)
{
	const cJSON *mods = cJSON_GetObjectItemCaseSensitive(job, "offload_modules");
	double off = jnum(c, "config.offload_layers"), opt = jnum(job, "optimizer_cpu_offload");
	int first = 1;

	const char *rc = jstr(c, "config.recompute"), *impl = jstr(c, "config.fsdp_impl");

	if (rc && !strcmp(rc, "full")) {
		const char *meth = jstr(c, "config.recompute_method");

		sbuf_addf(sb, " (%s)", mt_rc_full_words(meth && mt_rc_method_parse(meth) >= 0
								? mt_rc_method_parse(meth) : MT_RC_BLOCK,
							(int)jnum(c, "config.recompute_layers"),
							(char[64]){ 0 }, 64));
	}
	/* selective recompute of modules other than core_attn alone */
	{
		const cJSON *cf = cJSON_GetObjectItemCaseSensitive(c, "config");
		const cJSON *rm = cJSON_GetObjectItemCaseSensitive(cf, "recompute_modules");

		if (cJSON_IsArray(rm) && (cJSON_GetArraySize(rm) != 1 ||
					  !cJSON_IsString(cJSON_GetArrayItem(rm, 0)) ||
					  strcmp(cJSON_GetArrayItem(rm, 0)->valuestring, "core_attn"))) {
			sbuf_adds(sb, " (modules ");
			names(sb, rm);
			sbuf_adds(sb, ")");
		}
	}
	if (off > 0)
		sbuf_addf(sb, ", <b>activations of %.0f layers offloaded to the host</b>", off);
	if (cJSON_IsArray(mods) && cJSON_GetArraySize(mods) > 0) {
		sbuf_adds(sb, ", <b>inputs of ");
		names(sb, mods);
		first = 0;
		sbuf_adds(sb, " offloaded to the host</b>");
	}
	if (opt > 0)
		sbuf_addf(sb, ", <b>%.0f%% of the optimizer states on the host</b>", 100 * opt);
	if ((off > 0 || opt > 0 || !first) && jnum(c, "memory.host_per_node_bytes") > 0)
		sbuf_addf(sb, " (%.1f GiB of pinned host memory per node)",
			  jnum(c, "memory.host_per_node_bytes") / GIB);
	if (jtrue(c, "config.fsdp"))
		sbuf_addf(sb, ", in %s", impl && !strcmp(impl, "torch") ? "PyTorch FSDP2" :
			  "Megatron-FSDP");
	if (jtrue(c, "config.cuda_graphs"))
		sbuf_adds(sb, ", CUDA graphs");
	if (jtrue(c, "config.full_iteration_graphs"))
		sbuf_adds(sb, ", <b>one CUDA graph per step</b> (full iteration)");
	if (jtrue(c, "config.moe_rank_budget"))
		sbuf_adds(sb, ", HybridEP rank budget");
}

/* Nothing fits: the closest candidate's memory, the GPUs the model states
 * need, and the changes that fit with the best each gives (advice "nofit"). */
static void nofit(struct sbuf *sb, const cJSON *nf)
{
	const cJSON *ch;

	sbuf_adds(sb, "<p class=\"none\">No configuration fits: see the pruned counts below.");
	if (jnum(nf, "min_gpus_model_states") > 0)
		sbuf_addf(sb, " The model states alone need at least %.0f GPUs.",
			  jnum(nf, "min_gpus_model_states"));
	sbuf_adds(sb, "</p>");
	if (cJSON_GetArraySize(jget(nf, "changes_that_fit")) > 0) {
		sbuf_adds(sb, "<p>Changes that fit, each searched by the model alone:</p><ul>");
		cJSON_ArrayForEach(ch, jget(nf, "changes_that_fit")) {
			const cJSON *b = cJSON_GetArrayItem(jget(ch, "best"), 0);

			sbuf_adds(sb, "<li><code>");
			esc(sb, jstr(ch, "change") ? jstr(ch, "change") : "?");
			sbuf_adds(sb, "</code>: ");
			if (b) {
				label(sb, b);
				sbuf_addf(sb, ", %.3f s per step, %.1f GiB", jnum(b, "time.step_s"),
					  jnum(b, "memory.total_bytes") / GIB);
			}
			sbuf_adds(sb, "</li>");
		}
		sbuf_adds(sb, "</ul>");
	}
	sbuf_adds(sb, "</section>");
}

static void card(struct sbuf *sb, const char *value, const char *what)
{
	sbuf_adds(sb, "<div class=\"card\"><b>");
	sbuf_adds(sb, value);
	sbuf_adds(sb, "</b><span>");
	sbuf_adds(sb, what);
	sbuf_adds(sb, "</span></div>");
}

void html_summary(struct sbuf *sb, const cJSON *adv)
{
	const cJSON *job = jget(adv, "job"), *cands = jget(adv, "candidates");
	const cJSON *best = cJSON_GetArrayItem(cands, 0), *second = cJSON_GetArrayItem(cands, 1);
	char buf[96];
	double cap = jnum(adv, "search.capacity_bytes");

	section(sb, "summary", "Summary", NULL);
	sbuf_adds(sb, "<p><b>");
	esc(sb, jstr(job, "model"));
	sbuf_adds(sb, "</b> (");
	num(sb, jnum(adv, "model.params_total") / 1e9, "%.1f");
	sbuf_adds(sb, " B parameters");
	if (jnum(adv, "model.experts") > 0) {
		sbuf_adds(sb, ", ");
		num(sb, jnum(adv, "model.params_active") / 1e9, "%.1f");
		sbuf_adds(sb, " B active");
	}
	sbuf_adds(sb, ") on <b>");
	esc(sb, jstr(job, "cluster"));
	sbuf_adds(sb, "</b> (");
	esc(sb, jstr(adv, "cluster.gpu"));
	sbuf_adds(sb, "): ");
	num(sb, jnum(job, "gpus"), "%.0f");
	sbuf_adds(sb, " GPUs, sequence ");
	num(sb, jnum(job, "seq"), "%.0f");
	sbuf_adds(sb, ", global batch ");
	num(sb, jnum(job, "gbs"), "%.0f");
	sbuf_adds(sb, ", ");
	esc(sb, jstr(job, "precision"));
	sbuf_adds(sb, ".</p>");
	if (!best) {
		nofit(sb, jget(adv, "nofit"));
		return;
	}
	sbuf_adds(sb, "<p>Recommended: <b>");
	label(sb, best);
	sbuf_adds(sb, "</b>, recompute ");
	esc(sb, jstr(best, "config.recompute"));
	extra_settings(sb, job, best);
	sbuf_addf(sb, ", distributed optimizer %s%s.</p>",
		  jtrue(best, "config.distributed_optimizer") ? "on" : "off",
		  jtrue(best, "config.precision_aware_optimizer") ? ", precision-aware optimizer" : "");
	if (jtrue(adv, "rules.constraints_relaxed")) {
		sbuf_adds(sb, "<p class=\"tag bad\">no candidate that fits satisfies every constraint "
			      "rule: ranked without ");
		esc(sb, jstr(adv, "rules.relaxed"));
		sbuf_adds(sb, "</p>");
	}
	sbuf_adds(sb, "<div class=\"cards\">");
	snprintf(buf, sizeof(buf), "%.3f s", jnum(best, "time.step_s"));
	card(sb, buf, "predicted step time");
	snprintf(buf, sizeof(buf), "%.0f", jnum(best, "throughput.tokens_per_s_per_gpu"));
	if (jnum(best, "band.tokens_per_s_per_gpu_hi") > 0) {
		char what[96];

		/* the band of the prediction (docs/MODEL.md 8.1) */
		snprintf(what, sizeof(what), "tokens/s per GPU (band %.0f to %.0f)",
			 jnum(best, "band.tokens_per_s_per_gpu_lo"),
			 jnum(best, "band.tokens_per_s_per_gpu_hi"));
		card(sb, buf, what);
	} else {
		card(sb, buf, "tokens/s per GPU");
	}
	snprintf(buf, sizeof(buf), "%.1f", jnum(best, "throughput.model_tflops_per_gpu"));
	card(sb, buf, "model TFLOP/s per GPU");
	snprintf(buf, sizeof(buf), "%.1f%%", 100 * jnum(best, "throughput.mfu"));
	card(sb, buf, "MFU");
	snprintf(buf, sizeof(buf), "%.1f GiB", jnum(best, "memory.total_bytes") / GIB);
	{
		char what[64];
		snprintf(what, sizeof(what), "peak memory of %.1f GiB usable", cap / GIB);
		card(sb, buf, what);
	}
	sbuf_adds(sb, "</div>");
	if (second) {
		double d = jnum(second, "time.step_s") / jnum(best, "time.step_s") - 1;
		double diff[sizeof(time_parts) / sizeof(time_parts[0])];
		int order[2] = { -1, -1 };
		unsigned i;

		sbuf_adds(sb, "<p>Runner-up: ");
		label(sb, second);
		if (jtrue(adv, "search.headroom_pick"))
			sbuf_addf(sb, ", %.1f%% faster but on the memory limit (%.1f of %.1f GiB usable): "
				      "ranked second for headroom (--prefer-headroom)", -100 * d,
				  jnum(second, "memory.total_bytes") / GIB, cap / GIB);
		else if (d < 0.001)
			sbuf_adds(sb, ", practically as fast (within 0.1%)");
		else
			sbuf_addf(sb, ", %.1f%% slower", 100 * d);
		for (i = 0; i < sizeof(time_parts) / sizeof(time_parts[0]); i++) {
			char key[64];
			snprintf(key, sizeof(key), "time.%s", time_parts[i].key);
			diff[i] = jnum(second, key) - jnum(best, key);
			if (!isfinite(diff[i]) || diff[i] <= 0)
				continue;
			if (order[0] < 0 || diff[i] > diff[order[0]]) {
				order[1] = order[0];
				order[0] = (int)i;
			} else if (order[1] < 0 || diff[i] > diff[order[1]]) {
				order[1] = (int)i;
			}
		}
		if (order[0] >= 0) {
			sbuf_addf(sb, ": it loses on %s (+%.3f s)", time_parts[order[0]].name,
				  diff[order[0]]);
			if (order[1] >= 0)
				sbuf_addf(sb, " and %s (+%.3f s)", time_parts[order[1]].name,
					  diff[order[1]]);
		}
		sbuf_adds(sb, ".</p>");
	}
	sbuf_adds(sb, "</section>");
}

/* ---------------------------------------------------------------- candidates */

/* The runner-up variants folded under each ranked layout (advise --top
 * counts layouts): what each changes, its step and memory */
static void html_variants(struct sbuf *sb, const cJSON *adv)
{
	const cJSON *c, *v, *d;
	int any = 0;

	cJSON_ArrayForEach(c, jget(adv, "candidates")) {
		double best = jnum(c, "time.step_s");

		cJSON_ArrayForEach(v, jget(c, "variants")) {
			int n = 0;

			if (!any++)
				sbuf_adds(sb, "<details><summary>variants folded under each layout (the "
					      "same TP, PP, CP, EP, ETP, dispatcher and FSDP)</summary>"
					      "<table class=\"sortable\"><thead><tr><th class=\"n\">#"
					      "</th><th>differs</th><th class=\"n\">step<br>(s)</th>"
					      "<th class=\"n\">against<br>the best</th><th class=\"n\">"
					      "memory<br>(GiB)</th><th>why it ranks after the "
					      "best</th></tr></thead><tbody>");
			sbuf_adds(sb, "<tr>");
			td_num(sb, jnum(c, "rank"), "%.0f");
			sbuf_adds(sb, "<td>");
			cJSON_ArrayForEach(d, jget(v, "differs")) {
				sbuf_addf(sb, "%s", n++ ? ", " : "");
				esc(sb, d->string);
				sbuf_adds(sb, " ");
				if (cJSON_IsNumber(d))
					sbuf_addf(sb, "%g", d->valuedouble);
				else if (cJSON_IsBool(d))
					sbuf_adds(sb, cJSON_IsTrue(d) ? "on" : "off");
				else if (cJSON_IsString(d))
					esc(sb, d->valuestring);
				else if (cJSON_IsArray(d)) {
					const cJSON *e;
					int m = 0;

					cJSON_ArrayForEach(e, d) {
						sbuf_adds(sb, m++ ? "," : "");
						esc(sb, cJSON_IsString(e) ? e->valuestring : "?");
					}
				}
			}
			sbuf_adds(sb, "</td>");
			td_num(sb, jnum(v, "step_s"), "%.3f");
			td_num(sb, 100 * (jnum(v, "step_s") / best - 1), "%+.2f%%");
			td_num(sb, jnum(v, "peak_bytes") / GIB, "%.1f");
			sbuf_adds(sb, "<td>");
			esc(sb, jstr(v, "why_after") ? jstr(v, "why_after") : "");
			sbuf_adds(sb, "</td></tr>");
		}
	}
	if (any)
		sbuf_adds(sb, "</tbody></table></details>");
}

/* The gains of the first candidate's settings, each with its evidence
 * (tuner/gains.h) */
static void html_gains(struct sbuf *sb, const cJSON *adv)
{
	const cJSON *c = cJSON_GetArrayItem(jget(adv, "candidates"), 0), *g, *ev;
	int any = 0;

	cJSON_ArrayForEach(g, jget(c, "gains")) {
		if (!any++)
			sbuf_adds(sb, "<h3>What each setting of the first candidate buys</h3><p>Each "
				      "setting reverted alone to Megatron-LM's default for the same layout; "
				      "the evidence is a published A/B pair in the same regime "
				      "(docs/MODEL.md 8.2).</p><table class=\"sortable\"><thead><tr>"
				      "<th>setting</th><th>from</th><th>to</th><th class=\"n\">gain</th>"
				      "<th>evidence</th></tr></thead><tbody>");
		sbuf_adds(sb, "<tr><td>");
		esc(sb, jstr(g, "setting"));
		sbuf_adds(sb, "</td><td>");
		esc(sb, jstr(g, "from"));
		sbuf_adds(sb, "</td><td>");
		esc(sb, jstr(g, "to"));
		sbuf_adds(sb, "</td>");
		if (!cJSON_IsNumber(jget(g, "gain")))
			sbuf_adds(sb, "<td class=\"n\">cannot run without it</td>");
		else if (cJSON_IsTrue(jget(g, "fits_without")))
			td_num(sb, 100 * jnum(g, "gain"), "%+.1f%%");
		else
			sbuf_adds(sb, "<td class=\"n\">needed to fit</td>");
		sbuf_adds(sb, "<td>");
		ev = jget(g, "evidence");
		if (cJSON_IsObject(ev)) {
			sbuf_addf(sb, "published %+.1f%%, megatune %+.1f%% on that pair: ",
				  100 * (jnum(ev, "published_ratio") - 1),
				  100 * (jnum(ev, "predicted_ratio") - 1));
			esc(sb, jstr(ev, "what"));
		} else {
			sbuf_adds(sb, "model only: no published pair in this regime");
		}
		sbuf_adds(sb, "</td></tr>");
	}
	if (any)
		sbuf_adds(sb, "</tbody></table>");
}

void html_candidates(struct sbuf *sb, const cJSON *adv)
{
	const cJSON *c, *p;
	int i = 0;

	section(sb, "candidates", "Candidates",
		"The fastest parallel layouts, each with its best settings, fastest first (click a "
		"column to sort); the other settings of each layout are folded below the table.");
	sbuf_adds(sb, "<div class=\"scroll\"><table class=\"sortable cands\"><thead><tr>"
		      "<th class=\"n\">#</th><th class=\"n\">TP</th><th class=\"n\">PP</th>"
		      "<th class=\"n\">VPP</th><th class=\"n\">CP</th><th>CP<br>comm</th>"
		      "<th class=\"n\">EP</th><th class=\"n\">ETP</th><th class=\"n\">DP</th>"
		      "<th class=\"n\">MBS</th><th class=\"n\">micro-<br>batches</th><th>recompute</th>"
		      "<th>dist.<br>opt.</th><th class=\"n\">memory<br>(GiB)</th><th class=\"n\">step<br>(s)</th>"
		      "<th class=\"n\">tokens/s<br>per GPU</th><th class=\"n\">TFLOP/s<br>per GPU</th>"
		      "<th class=\"n\">MFU</th></tr></thead><tbody>");
	cJSON_ArrayForEach(c, jget(adv, "candidates")) {
		const cJSON *cf = jget(c, "config");
		const char *impl;
		sbuf_addf(sb, "<tr%s>", i++ ? "" : " class=\"best\"");
		td_num(sb, jnum(c, "rank"), "%.0f");
		td_num(sb, jnum(cf, "tp"), "%.0f");
		td_num(sb, jnum(cf, "pp"), "%.0f");
		td_num(sb, jnum(cf, "vpp"), "%.0f");
		td_num(sb, jnum(cf, "cp"), "%.0f");
		td_str(sb, jnum(cf, "cp") > 1 ? jstr(cf, "cp_comm_type") : "-");
		td_num(sb, jnum(cf, "ep"), "%.0f");
		td_num(sb, jnum(cf, "etp"), "%.0f");
		td_num(sb, jnum(cf, "dp"), "%.0f");
		td_num(sb, jnum(cf, "mbs"), "%.0f");
		td_num(sb, jnum(cf, "num_microbatches"), "%.0f");
		if (jnum(cf, "offload_layers") > 0) {
			char rc[64];

			snprintf(rc, sizeof(rc), "%s +offload %.0f", jstr(cf, "recompute") ?
				 jstr(cf, "recompute") : "?",
				 jnum(cf, "offload_layers"));
			td_str(sb, rc);
		} else {
			td_str(sb, jstr(cf, "recompute"));
		}
		impl = jstr(cf, "fsdp_impl");
		td_str(sb, jtrue(cf, "fsdp") ? (impl && !strcmp(impl, "torch") ? "fsdp2" : "fsdp")
					   : jtrue(cf, "distributed_optimizer") ? "on" : "off");
		td_num(sb, jnum(c, "memory.total_bytes") / GIB, "%.1f");
		td_num(sb, jnum(c, "time.step_s"), "%.3f");
		td_num(sb, jnum(c, "throughput.tokens_per_s_per_gpu"), "%.0f");
		td_num(sb, jnum(c, "throughput.model_tflops_per_gpu"), "%.1f");
		td_num(sb, 100 * jnum(c, "throughput.mfu"), "%.1f%%");
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "</tbody></table></div>");
	html_variants(sb, adv);
	html_gains(sb, adv);
	sbuf_addf(sb, "<p>The search evaluated %.0f candidates in %.3f s; %.0f fit.</p>",
		  jnum(adv, "search.evaluated"), jnum(adv, "search.seconds"),
		  isfinite(jnum(adv, "search.feasible")) ? jnum(adv, "search.feasible")
							 : jnum(adv, "search.timed"));
	sbuf_adds(sb, "<h3>Pruned</h3><table class=\"sortable\"><thead><tr><th>reason or rule</th>"
		      "<th class=\"n\">candidates</th></tr></thead><tbody>");
	cJSON_ArrayForEach(p, jget(adv, "pruned")) {
		if (!cJSON_IsNumber(p) || p->valuedouble <= 0)
			continue;
		sbuf_adds(sb, "<tr>");
		td_str(sb, p->string);
		td_num(sb, p->valuedouble, "%.0f");
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "</tbody></table></section>");
}

/* ---------------------------------------------------------------- memory and time */

/* The best candidate's memory, stage by stage (memory.stages: absent from
 * advice written before it), with the allocator's figures. */
static void stage_table(struct sbuf *sb, const cJSON *cand)
{
	static const struct { const char *head, *key; } cols[] = {
		{ "total", "total_bytes" }, { "weights", "weights_bytes" },
		{ "gradients", "grads_bytes" }, { "optimizer", "optimizer_bytes" },
		{ "activations", "activations_bytes" }, { "logits", "logits_bytes" },
		{ "allocated", "allocated_bytes" }, { "max allocated", "max_allocated_bytes" },
		{ "reserved", "reserved_bytes" }, { "outside the allocator", "outside_allocator_bytes" },
	};
	const cJSON *st = jget(cand, "memory.stages"), *s;
	unsigned k;

	if (!cJSON_IsArray(st) || !cJSON_GetArraySize(st))
		return;
	sbuf_adds(sb, "<h3>The best candidate by pipeline stage</h3><table class=\"sortable\">"
		      "<thead><tr><th>stage</th>");
	for (k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
		sbuf_addf(sb, "<th class=\"n\">%s<br>(GiB)</th>", cols[k].head);
	sbuf_adds(sb, "</tr></thead><tbody>");
	cJSON_ArrayForEach(s, st) {
		sbuf_addf(sb, "<tr><td data-v=\"%.0f\">", jnum(s, "stage"));
		num(sb, jnum(s, "stage"), "%.0f");
		sbuf_adds(sb, jtrue(s, "peak") ? " (peak)</td>" : "</td>");
		for (k = 0; k < sizeof(cols) / sizeof(cols[0]); k++)
			td_num(sb, jnum(s, cols[k].key) / GIB, "%.2f");
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb,
		  "</tbody></table><p>Under 1F1B the first stage holds the most micro-batches in "
		  "flight and the last the output layer and the logits. Allocated is what stays "
		  "between steps, max allocated the peak inside a step, reserved adds the caching "
		  "allocator's slack; the CUDA context and NCCL's buffers lie outside it "
		  "(docs/MODEL.md 4.8).</p>");
}

void html_memory(struct sbuf *sb, const cJSON *adv)
{
	static const char *const segs[] = { "weights", "gradients", "optimizer states",
					    "activations and logits", "buffers (MoE dispatch, transient)",
					    "NCCL, CUDA context, workspaces, graphs, fragmentation" };
	static const int colors[] = { 0, 1, 2, 4, 5, 9 };
	const cJSON *c;
	int nbar = 0, i, nc = cJSON_GetArraySize(jget(adv, "candidates"));
	double *v;
	char **labels, lim[96];

	section(sb, "memory", "Memory", "Per GPU, on the most loaded pipeline stage, against the "
		"usable memory (GiB).");
	if (!nc) {
		sbuf_adds(sb, "<p class=\"none\">no candidate fits</p></section>");
		return;
	}
	v = calloc((size_t)nc * 6, sizeof(double));
	labels = calloc((size_t)nc, sizeof(char *));
	if (!v || !labels) {
		free(v);
		free(labels);
		sbuf_adds(sb, "</section>");
		return;
	}
	cJSON_ArrayForEach(c, jget(adv, "candidates")) {
		const cJSON *m = jget(c, "memory");
		double *r = v + nbar * 6;

		labels[nbar] = bar_label(c);
		r[0] = jnum(m, "weights_bytes") / GIB;
		r[1] = jnum(m, "grads_bytes") / GIB;
		r[2] = jnum(m, "optimizer_bytes") / GIB;
		r[3] = (jnum(m, "activations_bytes") + jnum(m, "logits_bytes")) / GIB;
		r[4] = (jnum(m, "moe_dispatch_bytes") + jnum(m, "transient_bytes")) / GIB;
		r[5] = (jnum(m, "nccl_bytes") + jnum(m, "cuda_context_bytes") + jnum(m, "workspace_bytes") +
			jnum(m, "cuda_graphs_bytes") + jnum(m, "fragmentation_bytes")) / GIB;
		for (i = 0; i < 6; i++)
			if (!isfinite(r[i]))
				r[i] = 0;
		nbar++;
	}
	snprintf(lim, sizeof(lim), "usable: %.1f GiB less %.0f%% headroom",
		 jnum(adv, "cluster.memory_bytes") / GIB, 100 * jnum(adv, "job.mem_headroom"));
	bars(sb, "wide", &(struct svg_stacked){
		.unit = "GiB", .bars = (const char *const *)labels, .segments = segs,
		.colors = colors, .values = v, .nbar = nbar, .nseg = 6,
		.limit = jnum(adv, "search.capacity_bytes") / GIB, .limit_label = lim,
		.width = 900 });
	for (i = 0; i < nbar; i++)
		free(labels[i]);
	free(labels);
	free(v);
	stage_table(sb, cJSON_GetArrayItem(jget(adv, "candidates"), 0));
	sbuf_adds(sb, "</section>");
}

void html_timebars(struct sbuf *sb, const cJSON *adv)
{
	static const char *const segs[] = { "compute", "recompute", "exposed TP", "exposed CP",
					    "exposed EP", "exposed PP", "exposed DP", "exposed offload",
					    "host", "bubble", "optimizer" };
	static const char *const keys[] = { NULL, "recompute_s", "tp_exposed_s", "cp_exposed_s",
					    "ep_exposed_s", "pp_exposed_s", "dp_exposed_s",
					    "offload_exposed_s", "host_exposed_s", "bubble_s",
					    "optimizer_s" };
	static const int colors[] = { 0, 10, 1, 6, 3, 7, 2, 8, 9, 5, 11 };
	enum { NS = 11, TOP = 10 };
	const cJSON *c;
	double v[TOP * NS];
	char *labels[TOP];
	int nbar = 0, i, k;
	struct svg_stacked s;

	section(sb, "time", "Time", "Step time of the top candidates: compute, then what is not "
		"hidden behind it (seconds).");
	cJSON_ArrayForEach(c, jget(adv, "candidates")) {
		const cJSON *t = jget(c, "time");

		if (nbar == TOP)
			break;
		labels[nbar] = bar_label(c);
		v[nbar * NS] = jnum(t, "compute_s") - jnum(t, "recompute_s");
		for (k = 1; k < NS; k++)
			v[nbar * NS + k] = jnum(t, keys[k]);
		for (k = 0; k < NS; k++)
			if (!isfinite(v[nbar * NS + k]))
				v[nbar * NS + k] = 0;
		nbar++;
	}
	if (!nbar) {
		sbuf_adds(sb, "<p class=\"none\">no candidate fits</p></section>");
		return;
	}
	s = (struct svg_stacked){ .unit = "s", .bars = (const char *const *)labels,
				  .segments = segs, .colors = colors, .values = v, .nbar = nbar,
				  .nseg = NS, .width = 900 };
	bars(sb, "wide", &s);
	/* the part that is not compute, on its own scale */
	{
		double rest[TOP * (NS - 1)];
		for (i = 0; i < nbar; i++)
			for (k = 1; k < NS; k++)
				rest[i * (NS - 1) + k - 1] = v[i * NS + k];
		s.title = "What is not compute";
		s.segments = segs + 1;
		s.colors = colors + 1;
		s.values = rest;
		s.nseg = NS - 1;
		bars(sb, "wide", &s);
	}
	for (i = 0; i < nbar; i++)
		free(labels[i]);
	/* the best candidate's breakdown, as numbers */
	c = cJSON_GetArrayItem(jget(adv, "candidates"), 0);
	sbuf_adds(sb, "<details><summary>the best candidate's step, part by part</summary><table>"
		      "<thead><tr><th>part</th><th class=\"n\">exposed (s)</th>"
		      "<th class=\"n\">hidden (s)</th><th class=\"n\">share</th></tr></thead><tbody>");
	{
		static const struct { const char *name, *exp, *hid; } rows[] = {
			{ "GEMM", "gemm_s", NULL }, { "attention", "attention_s", NULL },
			{ "element-wise", "elementwise_s", NULL }, { "recompute", "recompute_s", NULL },
			{ "kernel gaps, SM sharing", "gpu_overhead_s", NULL },
			{ "TP communication", "tp_exposed_s", "tp_hidden_s" },
			{ "CP communication", "cp_exposed_s", "cp_hidden_s" },
			{ "EP communication", "ep_exposed_s", "ep_hidden_s" },
			{ "PP send/recv", "pp_exposed_s", "pp_hidden_s" },
			{ "DP communication", "dp_exposed_s", "dp_hidden_s" },
			{ "activation offload", "offload_exposed_s", "offload_hidden_s" },
			{ "host overhead", "host_exposed_s", NULL },
			{ "pipeline bubble", "bubble_s", NULL }, { "optimizer step", "optimizer_s", NULL },
			{ "step", "step_s", NULL },
		};
		const cJSON *t = jget(c, "time");
		double step = jnum(t, "step_s");
		unsigned r;
		for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
			double e = jnum(t, rows[r].exp);
			sbuf_adds(sb, "<tr>");
			td_str(sb, rows[r].name);
			td_num(sb, e, "%.4f");
			if (rows[r].hid)
				td_num(sb, jnum(t, rows[r].hid), "%.4f");
			else
				sbuf_adds(sb, "<td class=\"n\">-</td>");
			td_num(sb, 100 * e / step, "%.1f%%");
			sbuf_adds(sb, "</tr>");
		}
	}
	sbuf_adds(sb, "</tbody></table></details></section>");
}

/* ---------------------------------------------------------------- why */

static void html_advice_evidence(struct sbuf *sb, const cJSON *ev)
{
	const cJSON *e;

	if (!cJSON_GetArraySize(ev))
		return;
	sbuf_adds(sb, "<details><summary>evidence: the facts it read</summary><table><tbody>");
	cJSON_ArrayForEach(e, ev) {
		sbuf_adds(sb, "<tr><td><code>");
		esc(sb, e->string);
		sbuf_adds(sb, "</code></td>");
		if (cJSON_IsNumber(e)) {
			td_num(sb, e->valuedouble, "%.6g");
		} else if (cJSON_IsBool(e)) {
			td_str(sb, cJSON_IsTrue(e) ? "on" : "off");
		} else if (cJSON_IsString(e)) {
			td_str(sb, e->valuestring);
		} else {
			td_str(sb, "n/a");
		}
		sbuf_adds(sb, "</tr>");
	}
	sbuf_adds(sb, "</tbody></table></details>");
}

/* The group of a fired rule as the terminal shows it (reports/advice.h): a
 * set rule chose a knob when its effect names the configuration. */
/* A fired rule (advice) or a finding (analysis) as a card: title and id,
 * status when it is not plain, effect, message, evidence, sources. */
void html_rule_card(struct sbuf *sb, const cJSON *r)
{
	const char *st = jstr(r, "status"), *src = jstr(r, "source");
	const cJSON *ci;

	sbuf_addf(sb, "<div class=\"rule %s\"><h4>",
		  !st ? "" : !strcmp(st, "violated") ? "violated"
		  : !strcmp(st, "overridden") ? "overridden" : "");
	esc(sb, jstr(r, "title") ? jstr(r, "title") : jstr(r, "id"));
	sbuf_adds(sb, " <span class=\"tag\">");
	esc(sb, jstr(r, "id"));
	sbuf_adds(sb, "</span>");
	if (st && strcmp(st, "note") && strcmp(st, "applied")) {
		sbuf_addf(sb, "<span class=\"tag %s\">", !strcmp(st, "violated") ? "bad" : "warn");
		esc(sb, st);
		sbuf_adds(sb, "</span>");
	}
	sbuf_adds(sb, "</h4>");
	if (jstr(r, "effect")) {
		sbuf_adds(sb, "<div class=\"eff\">");
		esc(sb, jstr(r, "effect"));
		sbuf_adds(sb, "</div>");
	}
	sbuf_adds(sb, "<div>");
	esc(sb, jstr(r, "message"));
	sbuf_adds(sb, "</div>");
	html_advice_evidence(sb, jget(r, "evidence"));
	if (cJSON_GetArraySize(jget(r, "cite")) || src) {
		sbuf_adds(sb, "<div class=\"cite\">");
		cJSON_ArrayForEach(ci, jget(r, "cite")) {
			sbuf_adds(sb, "source: ");
			esc(sb, cJSON_IsString(ci) ? ci->valuestring : NULL);
			sbuf_adds(sb, "<br>");
		}
		if (src) {
			sbuf_adds(sb, "rule: ");
			esc(sb, src);
		}
		sbuf_adds(sb, "</div>");
	}
	sbuf_adds(sb, "</div>");
}

static int rule_group(const cJSON *r)
{
	const char *st = jstr(r, "status"), *kind = jstr(r, "kind"), *eff = jstr(r, "effect");

	return mt_rule_group(jstr(r, "id"), st && !strcmp(st, "violated"),
			     kind && !strcmp(kind, "set"), eff && !strncmp(eff, "config.", 7));
}

void html_why(struct sbuf *sb, const cJSON *adv)
{
	static const char *const heads[MT_RG_N] = {
		"Constraints the recommendation breaks", "Why this configuration", "Chosen by rules",
		"Advice", "Flags and variables from rules"
	};
	const cJSON *best = cJSON_GetArrayItem(jget(adv, "candidates"), 0), *r;
	int g, any;

	section(sb, "why", "Why",
		"The rules that fired for the recommended configuration, with the numbers they used "
		"and their sources (docs/RULES.md).");
	if (!jtrue(adv, "rules.enabled")) {
		sbuf_adds(sb, "<p class=\"none\">rules were off (--no-rules)</p></section>");
		return;
	}
	if (!best) {
		sbuf_adds(sb, "<p class=\"none\">no candidate fits</p></section>");
		return;
	}
	for (g = 0; g < MT_RG_N; g++) {
		int pass, passes = g == MT_RG_WHY ? MT_WHY_RANKS : 1;
		any = 0;
		for (pass = 0; pass < passes; pass++)
		cJSON_ArrayForEach(r, jget(best, "rules")) {
			if (rule_group(r) != g || (g == MT_RG_WHY && mt_why_rank(jstr(r, "id")) != pass))
				continue;
			if (!any)
				sbuf_addf(sb, "<h3>%s</h3>", heads[g]);
			any = 1;
			html_rule_card(sb, r);
		}
	}
	sbuf_adds(sb, "</section>");
}

/* ---------------------------------------------------------------- configuration */

static void copy_block(struct sbuf *sb, const char *id, const char *title)
{
	sbuf_addf(sb, "<h3>%s <button class=\"copy\" data-for=\"%s\">copy</button></h3>"
		      "<pre id=\"%s\">", title, id, id);
}

/* One shell word of a copy block: quoted by the one quoter (lib/shell.h),
 * then escaped for the page, so the text the browser shows is what a shell
 * reads back. */
static void shell_word(struct sbuf *sb, const char *s)
{
	struct sbuf w = SBUF_INIT;

	mt_shell_word(&w, s ? s : "");
	esc(sb, w.failed ? "" : w.buf);
	sbuf_release(&w);
}

void html_configuration(struct sbuf *sb, const cJSON *adv)
{
	const cJSON *best = cJSON_GetArrayItem(jget(adv, "candidates"), 0), *a;
	int first = 1;

	section(sb, "configuration", "Configuration",
		"The recommended configuration, ready to paste.");
	if (!best) {
		sbuf_adds(sb, "<p class=\"none\">no candidate fits</p></section>");
		return;
	}
	copy_block(sb, "cfg-megatron", "Megatron-LM arguments");
	cJSON_ArrayForEach(a, jget(best, "megatron_args")) {
		const char *t = cJSON_IsString(a) ? a->valuestring : "";
		/* one flag per line: a token starting with -- opens a line */
		if (!strncmp(t, "--", 2)) {
			if (!first)
				sbuf_adds(sb, " \\\n");
			first = 0;
		} else {
			sbuf_addc(sb, ' ');
		}
		shell_word(sb, t);
	}
	sbuf_adds(sb, "</pre>");
	copy_block(sb, "cfg-bridge", "Megatron-Bridge overrides");
	first = 1;
	cJSON_ArrayForEach(a, jget(best, "bridge_notes")) {
		sbuf_adds(sb, "# ");
		esc(sb, cJSON_IsString(a) ? a->valuestring : "");
		sbuf_addc(sb, '\n');
	}
	cJSON_ArrayForEach(a, jget(best, "bridge_overrides")) {
		if (!first)
			sbuf_adds(sb, " \\\n");
		first = 0;
		shell_word(sb, cJSON_IsString(a) ? a->valuestring : "");
	}
	sbuf_adds(sb, "</pre>");
	copy_block(sb, "cfg-env", "Environment");
	first = 1;
	cJSON_ArrayForEach(a, jget(best, "env")) {
		struct sbuf kv = SBUF_INIT;

		if (!first)
			sbuf_addc(sb, '\n');
		first = 0;
		sbuf_addf(&kv, "%s=%s", a->string ? a->string : "",
			  cJSON_IsString(a) ? a->valuestring : "");
		sbuf_adds(sb, "export ");
		shell_word(sb, kv.failed ? "" : kv.buf);
		sbuf_release(&kv);
	}
	if (first)
		sbuf_adds(sb, "# none");
	sbuf_adds(sb, "</pre></section>");
}
