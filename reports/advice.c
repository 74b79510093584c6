/* SPDX-License-Identifier: MIT */
/* advice: the text a person reads in a terminal from the advisor's results
 * (the JSON document is tuner/advice.c's). */
#include "advice.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../perfmodel/band.h"
#include "../lib/shell.h"
#include "../lib/table.h"
#include "../lib/units.h"
#include "../rules/engine.h"
#include "../job/flags.h"
#include "../job/knobs.h"
#include "../perfmodel/hostmem.h"
#include "../perfmodel/optim.h"
#include "../perfmodel/precision.h"
#include "../perfmodel/layout.h"
#include "../perfmodel/recompute.h"

/* ---------------------------------------------------------------- text */

static double gib(double b)
{
	return b / MT_GIB;
}

static void job_line(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		     const struct mt_job *j)
{
	char p1[32], p2[32];

	sbuf_addf(sb, "%s (%s parameters", m->name, mt_fmt_count(p1, sizeof(p1), (double)m->params_total));
	if (m->experts)
		sbuf_addf(sb, ", %s active", mt_fmt_count(p2, sizeof(p2), (double)m->params_active));
	sbuf_addf(sb, ") on %s (%s, %.0f GiB), %d GPU%s, sequence %d, global batch %lld, %s",
		  c->name, c->gpu_name, gib(c->memory_bytes), j->gpus, j->gpus == 1 ? "" : "s",
		  j->seq, (long long)j->gbs,
		  mt_precision_name(j->precision));
	if (j->precision == MT_PREC_FP8)
		sbuf_addf(sb, " (%s scaling)", mt_fp8_recipe_name(j->fp8_recipe));
	sbuf_addc(sb, '\n');
	mt_corr_text(sb, &c->corr);
}

/* How the optimizer states are sharded, after "distributed optimizer ". */
static const char *dist_opt_words(const struct mt_config *c)
{
	if (c->fsdp == MT_FSDP_TORCH)
		return "off, in PyTorch FSDP2 (weights, gradients and optimizer states sharded over DP)";
	if (c->fsdp)
		return "on, in Megatron-FSDP (weights, gradients and optimizer states sharded over DP)";
	return c->dist_opt ? "on" : "off";
}

/* The precision-aware optimizer's dtypes, after the distributed optimizer */
static void prec_opt_words(struct sbuf *sb, const struct mt_config *c)
{
	if (c->prec_opt)
		sbuf_addf(sb, ", precision-aware optimizer (moments %s/%s, master weights %s)",
			  mt_opt_dtype_name(c->exp_avg), mt_opt_dtype_name(c->exp_avg_sq),
			  mt_opt_dtype_name(c->main_params));
}

/* The token dispatcher and the EP overlaps of a MoE candidate with EP. */
static void moe_words(struct sbuf *sb, const struct mt_model *m, const struct mt_config *cfg)
{
	if (!m->experts || (cfg->ep <= 1 && cfg->etp <= 1))
		return;
	sbuf_addf(sb, ", dispatcher %s", mt_dispatcher_name(cfg->dispatcher));
	if (cfg->dispatcher == MT_DISPATCH_FLEX)
		sbuf_addf(sb, " (%s%s)", mt_flex_backend_name(cfg->flex_backend),
			  cfg->rank_budget ? ", rank budget" : "");
	sbuf_addf(sb, ", EP overlap %s%s", cfg->ep_overlap ? "1F1B" : "off",
		  cfg->shared_overlap ? ", shared experts overlapped" : "");
}

/* The CUDA graphs of a candidate: per layer (5.10) or one per step */
static void graph_words(struct sbuf *sb, const struct mt_config *cfg)
{
	if (cfg->cuda_graph)
		sbuf_adds(sb, ", per-layer CUDA graphs");
	if (cfg->full_graph)
		sbuf_adds(sb, ", one CUDA graph per step (full iteration)");
}

/* The recompute mode in words: "selective (moe_act,layernorm)" where the
 * modules are not Megatron-LM's default core_attn alone. */
#define RCW_MAX (MT_KNOB_FMT_MAX + 16)
static const char *rc_words(const struct mt_config *c, char *buf, size_t cap)
{
	char l[MT_KNOB_FMT_MAX];

	if (c->recompute != MT_RC_SELECTIVE || c->recompute_modules <= 0 ||
	    c->recompute_modules == MT_RCM_DEFAULT)
		return mt_recompute_name(c->recompute);
	snprintf(buf, cap, "selective (%s)",
		 mt_rc_modules_format((unsigned)c->recompute_modules, ',', l, sizeof(l)));
	return buf;
}

/* How candidate a differs from b, knob by knob (job/knobs.def): " (mbs 2
 * against 1, recompute selective against none)", nothing when they agree;
 * or as advise's options "--vpp 8 --mbs 2" (as_flags).  Returns the count. */
static int knob_diffs(struct sbuf *sb, const struct mt_config *a, const struct mt_config *b,
		      int as_flags)
{
	char x[MT_KNOB_FMT_MAX], y[MT_KNOB_FMT_MAX];
	int k, n = 0;

	for (k = 0; k < MT_KNOB_N; k++) {
		long long va = mt_knob_cfg(a, k), vb = mt_knob_cfg(b, k);

		/* as options, a's recompute whole (its modules, its uniform
		 * method) beside the granularity that turns them on */
		if (as_flags ? !mt_knob_shows(a, b, k) : !mt_knob_differs(a, b, k))
			continue;
		if (as_flags) {
			sbuf_addf(sb, "%s--%s ", n++ ? " " : "", mt_knobs[k].cli);
			mt_shell_word(sb, mt_knob_format(k, va, x, sizeof(x)));
		} else
			sbuf_addf(sb, "%s%s %s against %s", n++ ? ", " : " (", mt_knobs[k].cli,
				  mt_knob_format(k, va, x, sizeof(x)),
				  mt_knob_format(k, vb, y, sizeof(y)));
	}
	if (n && !as_flags)
		sbuf_addc(sb, ')');
	return n;
}

/* the first form */
static void differences(struct sbuf *sb, const struct mt_config *a, const struct mt_config *b)
{
	knob_diffs(sb, a, b, 0);
}

/* What a folded variant changes against its layout's best: "--vpp 8 --mbs 2" */
static void variant_words(struct sbuf *sb, const struct mt_config *v, const struct mt_config *best)
{
	if (!knob_diffs(sb, v, best, 1))
		sbuf_adds(sb, "the same knobs (another setting the search chose)");
}

/* The runner-up variants folded under each ranked layout */
static void variants_lines(struct sbuf *sb, const struct mt_search_result *r)
{
	char why[320];
	int i, v, any = 0;

	for (i = 0; i < r->ntop; i++) {
		if (!r->nvar[i])
			continue;
		if (!any++)
			sbuf_adds(sb, "\nvariants folded under each layout (in the ranking's order; --top counts "
				      "layouts):\n");
		sbuf_addf(sb, "  %d: %lld other setting%s of this layout ranked; the first:\n", i + 1,
			  r->folded[i], r->folded[i] == 1 ? "" : "s");
		for (v = 0; v < r->nvar[i]; v++) {
			const struct mt_variant *x = &r->var[i][v];

			sbuf_adds(sb, "       ");
			variant_words(sb, &x->cfg, &r->top[i].cfg);
			sbuf_addf(sb, ": %.3f s (%+.2f%%), %.1f GiB", x->step,
				  100 * (x->step / r->top[i].time.step - 1), gib(x->mem));
			if (mt_variant_why(x, &r->top[i], r->capacity_bytes, why, sizeof(why)))
				sbuf_addf(sb, "; %s", why);
			sbuf_addc(sb, '\n');
		}
	}
}

void mt_gains_text(struct sbuf *sb, const struct mt_gain *gains, int n, const char *ind,
		   const char *head)
{
	int i;

	if (!n)
		return;
	sbuf_addf(sb, "%s%s (each reverted alone; evidence: docs/MODEL.md 8.2):\n", ind, head);
	for (i = 0; i < n; i++) {
		const struct mt_gain *g = &gains[i];
		char what[200];

		snprintf(what, sizeof(what), "%s %s -> %s", g->setting, g->from, g->to);
		sbuf_addf(sb, "%s  %-58s ", ind, what);
		if (isnan(g->gain))
			sbuf_addf(sb, "(%s)", g->with);
		else if (!g->fits)
			sbuf_addf(sb, "needed to fit: %.1f GiB without it", gib(g->mem_bytes));
		else
			sbuf_addf(sb, "%+6.1f%%", 100 * g->gain);
		if (*g->with && !isnan(g->gain))
			sbuf_addf(sb, " (reverted with %s)", g->with);
		if (g->ev)
			sbuf_addf(sb, "; published %+.1f%%, megatune %+.1f%% on the same pair: %s [%s]",
				  100 * (g->ev->published - 1), 100 * (g->ev->predicted - 1),
				  g->ev->what, g->ev->id);
		else
			sbuf_adds(sb, "; model only: no published pair in this regime");
		sbuf_addc(sb, '\n');
	}
}

/* The knobs of a candidate that Megatron-LM would not run without a flag and
 * that the label and the words above leave out: offloads, CUDA graphs,
 * blocking pipeline sends, full recompute's layers. */
static void extra_words(struct sbuf *sb, const struct mt_job *j, const struct mt_config *cfg)
{
	int i, first = 1;

	if (cfg->recompute == MT_RC_FULL)
		sbuf_addf(sb, " (%s)", mt_rc_full_words(cfg->recompute_method, cfg->recompute_layers,
							(char[64]){ 0 }, 64));
	if (cfg->offload_layers > 0)
		sbuf_addf(sb, ", activations of %d layers offloaded to the host", cfg->offload_layers);
	if (j->offload_modules) {
		sbuf_adds(sb, ", inputs of ");
		for (i = 0; i < MT_OM_N; i++)
			if (j->offload_modules & (1u << i)) {
				sbuf_addf(sb, "%s%s", first ? "" : ",", mt_offload_module_name(i));
				first = 0;
			}
		sbuf_adds(sb, " offloaded to the host");
	}
	if (j->opt_offload > 0)
		sbuf_addf(sb, ", %.0f%% of the optimizer states on the host", 100 * j->opt_offload);
	graph_words(sb, cfg);
	if (mt_p2p_blocks(cfg))
		sbuf_adds(sb, ", blocking pipeline sends");
}

/* The peak MFU counts against, in words, and the line's end: "989 TFLOP/s
 * bf16"; a peak under 10 TFLOP/s (a CPU profile's) with 3 significant digits,
 * and the dtype whose peak it is when the profile lacks the job's. */
static void peak_words(struct sbuf *sb, const struct mt_cluster *c, const struct mt_job *j)
{
	int want = mt_recipe(mt_recipe_of(j))->gemm_dtype, used;
	double peak = mt_cluster_mfu_peak(c, want, &used);

	sbuf_addf(sb, peak >= 10 ? "%.0f TFLOP/s " : "%.3g TFLOP/s ", peak);
	if (used == want)
		sbuf_addf(sb, "%s\n", mt_precision_name(j->precision));
	else
		sbuf_addf(sb, "%s (the profile gives no %s peak)\n", mt_dtype_name(used),
			  mt_dtype_name(want));
}

/* Host memory per node (docs/MODEL.md 4.10); "" when the profile lacks it. */
static void host_line(struct sbuf *sb, const struct mt_cluster *c, const struct mt_mem *m,
		      const char *ind)
{
	double cap = mt_host_capacity(c);

	if (cap > 0)
		sbuf_addf(sb, "%shost memory per node: %.1f GiB of %.1f GiB usable (%.1f GiB per GPU: "
			      "offloaded activations and optimizer states, pinned, and the process)\n",
			  ind, gib(m->host_per_node), gib(cap), gib(m->host_per_gpu));
	else
		sbuf_addf(sb, "%shost memory per node: %.1f GiB (%.1f GiB per GPU; the profile gives "
			      "no node.host_memory_bytes to check it against)\n", ind,
			  gib(m->host_per_node), gib(m->host_per_gpu));
}

/* The pipeline layout of a candidate whose split is one (docs/MODEL.md 4.6). */
static void layout_line(struct sbuf *sb, const struct mt_model *m, const struct mt_job *j,
			const struct mt_config *cfg, const char *indent)
{
	struct mt_layout l;
	char lay[MT_LAYOUT_STR_MAX * 2];
	int c, hi = 0;

	if (cfg->split != MT_SPLIT_LAYOUT || mt_layout_of(m, j, cfg->pp, cfg->vpp, &l) ||
	    mt_layout_format(&l, lay, sizeof(lay)) < 0)
		return;
	for (c = 0; c < l.n; c++)
		hi = l.t[c] > hi ? l.t[c] : hi;
	sbuf_addf(sb, "%spipeline layout %s%s (--pipeline-model-parallel-layout): %d layers", indent,
		  lay, j->pins.layout ? ", pinned" : "", l.layers);
	if (l.mtp)
		sbuf_addf(sb, " and %d MTP layer%s", l.mtp, l.mtp > 1 ? "s" : "");
	sbuf_addf(sb, " over %d chunks (PP %d x VPP %d), at most %d layer%s per chunk\n", l.n,
		  cfg->pp, cfg->vpp, hi, hi == 1 ? "" : "s");
}

/* Every pipeline stage's memory of e, evaluated under j (docs/MODEL.md 4.8),
 * or NULL with one stage or when they cannot be evaluated again; the caller
 * frees it. */
static struct mt_mem *stages_of(const struct mt_model *m, const struct mt_cluster *c,
				const struct mt_job *j, const struct mt_eval *e)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_mem *st;

	if (e->cfg.pp < 2 || !(st = calloc((size_t)e->cfg.pp, sizeof(*st))))
		return NULL;
	if (mt_eval_stages(m, c, j, &e->cfg, st, &err)) {
		free(st);
		return NULL;
	}
	return st;
}

/* The four figures of PyTorch's caching allocator for one stage. */
static void allocator_line(struct sbuf *sb, const struct mt_mem *m, const char *ind)
{
	double disp = m->outside - m->nccl - m->cuda_context;

	sbuf_addf(sb,
		  "%sallocator, stage %d: allocated %.1f, max allocated %.1f, reserved %.1f; "
		  "outside it %.1f (CUDA context, NCCL%s) (GiB)\n",
		  ind, m->stage, gib(m->allocated), gib(m->max_allocated), gib(m->reserved),
		  gib(m->outside), disp > 1048576 ? ", the flex dispatcher's buffers" : "");
}

/* A line per pipeline stage (st: n of them), saying which one peaks. */
static void stage_lines(struct sbuf *sb, const struct mt_mem *st, int n, int peak, const char *ind)
{
	int i, w = snprintf(NULL, 0, "%d", n - 1);

	sbuf_addf(sb,
		  "%smemory by stage (GiB; states: weights, gradients and optimizer), stage %d "
		  "peaks:\n",
		  ind, peak);
	for (i = 0; i < n; i++) {
		double states = st[i].weights + st[i].grads + st[i].optimizer;

		sbuf_addf(sb,
			  "%s  stage %-*d %5.1f %-4s  states %.1f, activations %.1f, logits %.2f, "
			  "the rest %.1f; max allocated %.1f\n",
			  ind, w, i, gib(st[i].total), i == peak ? "peak" : "", gib(states),
			  gib(st[i].activations), gib(st[i].logits),
			  gib(st[i].total - states - st[i].activations - st[i].logits),
			  gib(st[i].max_allocated));
	}
}

static void memory_lines(struct sbuf *sb, const struct mt_model *mo, const struct mt_cluster *c,
			 const struct mt_job *j, const struct mt_eval *e, double cap,
			 const char *ind)
{
	const struct mt_mem *m = &e->mem;
	struct mt_mem *st = stages_of(mo, c, j, e);

	sbuf_addf(sb, "%smemory, stage %d: %.1f GiB of %.1f GiB usable\n", ind, m->stage,
		  gib(m->total), gib(cap));
	sbuf_addf(sb, "%s  weights %.1f, gradients %.1f, optimizer %.1f, activations %.1f, "
		      "logits %.1f, MoE dispatch %.1f, transient %.1f,\n", ind, gib(m->weights),
		  gib(m->grads), gib(m->optimizer), gib(m->activations), gib(m->logits),
		  gib(m->moe_dispatch), gib(m->transient));
	sbuf_addf(sb, "%s  NCCL %.1f, CUDA context %.1f, workspaces %.2f, fragmentation %.1f (GiB)\n",
		  ind, gib(m->nccl), gib(m->cuda_context), gib(m->workspace), gib(m->fragmentation));
	allocator_line(sb, m, ind);
	if (st)
		stage_lines(sb, st, e->cfg.pp, m->stage, ind);
	free(st);
}

/* The host timeline of the estimate (docs/MODEL.md 5.8): where the host
 * waits for the GPU, CPU and GPU time between the waits, and what removes
 * each wait.  Printed where the MoE layers wait or the host is exposed. */
static void host_timeline_lines(struct sbuf *sb, const struct mt_eval *e)
{
	const struct mt_time *tt = &e->time;
	const struct mt_host_tl *h = &tt->host_tl;
	double mb = e->cfg.num_mb, exposed = tt->host_exposed;

	if (!h->syncs && h->cpu < 0.5 * h->gpu)
		return;
	sbuf_addf(sb, "\nhost timeline (one micro-batch of the slowest stage, %.0f per step):\n", mb);
	if (h->syncs) {
		sbuf_addf(sb, "  the host waits for the GPU %d times, %s, once per MoE layer forward\n",
			  h->syncs, mt_hsync_name(h->sync));
		sbuf_addf(sb, "  between two waits:  CPU %7.3f ms, GPU %7.3f ms: %7.3f ms\n",
			  1e3 * h->seg_cpu, 1e3 * h->seg_gpu, 1e3 * h->seg_t);
		sbuf_addf(sb, "  across the backward: CPU %7.3f ms, GPU %7.3f ms: %7.3f ms\n",
			  1e3 * h->cyc_cpu, 1e3 * h->cyc_gpu, 1e3 * h->cyc_t);
	}
	sbuf_addf(sb, "  micro-batch: CPU %.3f ms, GPU %.3f ms, with the waits %.3f ms; host exposed "
		      "%.3f s per step (%.1f%%)\n",
		  1e3 * h->cpu, 1e3 * h->gpu, 1e3 * h->t, exposed, 100 * exposed / tt->step);
	if (h->sync == MT_HS_BEFORE_DISPATCH && e->cfg.dispatcher == MT_DISPATCH_FLEX)
		sbuf_addf(sb, "  what removes the wait: %s, or padded token drop (--moe-balance "
			      "drop:1)\n",
			  e->cfg.flex_backend == MT_FLEX_HYBRIDEP
				  ? "a HybridEP rank budget (--moe-rank-budget on: "
				    "--moe-expert-rank-capacity-factor, Megatron-Core 0.18)"
				  : "HybridEP with a rank budget (--moe-flex-backend hybridep "
				    "--moe-rank-budget on)");
	else if (h->sync == MT_HS_BEFORE_DISPATCH)
		sbuf_addf(sb, "  what removes the wait: padded token drop (--moe-balance drop:1: "
			      "--moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity; "
			      "then whole layers graph), or the flex dispatcher with HybridEP and a "
			      "rank budget (--moe-dispatcher flex --moe-rank-budget on: "
			      "--moe-expert-rank-capacity-factor, Megatron-Core 0.18)\n");
	else if (h->sync == MT_HS_DISPATCH)
		sbuf_addf(sb, "  what removes the wait: padded token drop (--moe-balance drop:1), or "
			      "the all-to-all or flex dispatcher, which wait for the counts alone\n");
	else if (h->cpu > h->gpu && !e->cfg.cuda_graph && !e->cfg.full_graph)
		sbuf_addf(sb, "  what hides it: CUDA graphs (--cuda-graphs on)\n");
}

/* The band of a prediction as a line (perfmodel/band.h): the throughput's range
 * and the terms that widen it. */
static void band_line(struct sbuf *sb, const struct mt_eval *e, const char *ind)
{
	const struct mt_band *b = &e->band;
	double tok = e->tput.tokens_per_s_per_gpu;
	int i, n = 0;

	if (b->hi <= 0 || b->lo <= 0)
		return;
	sbuf_addf(sb, "%sband: %.0f to %.0f tokens/s per GPU (%+.0f%%/%+.0f%%: the model's %.0f%% "
		      "error on published runs", ind, tok * e->time.step / b->hi,
		  tok * e->time.step / b->lo, 100 * (e->time.step / b->hi - 1),
		  100 * (e->time.step / b->lo - 1), 100 * b->base);
	for (i = 0; i < MT_BT_N; i++)
		if (b->terms & (1u << i))
			sbuf_addf(sb, "%s%s", n++ ? ", " : "; uncertain here: ", mt_band_term_name(i));
	sbuf_adds(sb, ")\n");
}

static void time_lines(struct sbuf *sb, const struct mt_eval *e, const char *ind)
{
	const struct mt_time *t = &e->time;

	sbuf_addf(sb, "%sstep %.3f s: compute %.3f (GEMM %.3f, attention %.3f, element-wise %.3f, "
		      "recompute %.3f, kernel gaps and SM sharing %.3f)\n", ind, t->step, t->compute,
		  t->gemm, t->attention, t->elementwise, t->recompute, t->gpu_overhead);
	sbuf_addf(sb, "%s  exposed: TP %.3f, CP %.3f, EP %.3f, PP %.3f, DP %.3f, offload %.3f, "
		      "host %.3f; bubble %.3f, optimizer %.3f (s)\n", ind, t->tp_exposed,
		  t->cp_exposed, t->ep_exposed, t->pp_exposed, t->dp_exposed, t->offload_exposed,
		  t->host_exposed, t->bubble, t->optimizer);
	sbuf_addf(sb, "%s  hidden behind compute: TP %.3f, CP %.3f, PP %.3f, DP %.3f (s)\n", ind,
		  t->tp_hidden, t->cp_hidden, t->pp_hidden, t->dp_hidden);
}

static void flags_lines(struct sbuf *sb, const struct mt_model *m, const struct mt_job *j,
			const struct mt_config *cfg, const struct mt_explain *ex)
{
	struct mt_kv kv[MT_FLAGS_MAX];
	int n, i, k;

	n = mt_candidate_args(m, j, cfg, ex, kv);
	sbuf_adds(sb, "  Megatron-LM:\n");
	/* the notes (flags the release lacks) as indented comment lines */
	for (i = k = 0; i < n; i++) {
		if (mt_kv_is_note(&kv[i]))
			sbuf_addf(sb, "    # %s\n", kv[i].val);
		else
			kv[k++] = kv[i];
	}
	sbuf_adds(sb, "    ");
	mt_kv_render(sb, kv, k, MT_KV_ARGS, " \\\n    ");
	n = mt_candidate_env(ex, kv);
	if (n) {
		sbuf_adds(sb, "\n  environment:\n    ");
		mt_kv_render(sb, kv, n, MT_KV_ASSIGN, " \\\n    ");
	}
	sbuf_addc(sb, '\n');
	if (ex && ex->dropped)
		sbuf_addf(sb, "  (%d more flags from rules left out: at most %d of each kind)\n",
			  ex->dropped, MT_RULE_KV_MAX);
}

/* Append `text` wrapped at `width` columns; continuation lines start with
 * `ind` spaces. */
static void wrap(struct sbuf *sb, const char *text, size_t col, size_t ind, size_t width)
{
	const char *p = text;

	while (*p) {
		size_t n = strcspn(p, " ");
		if (col > ind && col + 1 + n > width) {
			sbuf_addc(sb, '\n');
			sbuf_pad(sb, ' ', ind);
			col = ind;
		} else if (p != text) {
			sbuf_addc(sb, ' ');
			col++;
		}
		sbuf_add(sb, p, n);
		col += n;
		p += n;
		while (*p == ' ')
			p++;
	}
}

enum mt_rule_group mt_rule_group(const char *id, int violated, int is_set, int sets_knob)
{
	if (violated)
		return MT_RG_VIOLATED;
	if (id && !strncmp(id, "why-", 4))
		return MT_RG_WHY;
	if (is_set)
		return sets_knob ? MT_RG_CHOSEN : MT_RG_FLAGS;
	return MT_RG_ADVICE;
}

int mt_why_rank(const char *id)
{
	static const char *const order[] = { "why-tp", "why-pp", "why-cp", "why-ep", "why-bucket" };
	int i;

	for (i = 0; id && i < MT_WHY_RANKS - 1; i++)
		if (!strcmp(id, order[i]))
			return i;
	return MT_WHY_RANKS - 1;
}

static int group_of(const struct mt_fired *f)
{
	return mt_rule_group(f->rule->id, f->status == MT_FIRE_VIOLATED,
			     f->rule->kind == MT_RK_SET, f->rule->nsets > 0);
}

static void rules_lines(struct sbuf *sb, const struct mt_explain *ex, const char *ind)
{
	static const char *const heads[MT_RG_N] = {
		"constraint rules this candidate breaks:",
		"why (megatune rules show ID for a rule's condition and source):",
		"chosen by rules:",
		"advice:",
		"flags and variables from rules:",
	};
	size_t w = 0, in = strlen(ind);
	int g, i, any;

	if (!ex || !ex->n)
		return;
	for (i = 0; i < ex->n; i++)
		if (group_of(&ex->v[i]) != MT_RG_FLAGS && strlen(ex->v[i].rule->id) > w)
			w = strlen(ex->v[i].rule->id);
	if (w > 26)
		w = 26;
	for (g = 0; g < MT_RG_N; g++) {
		int pass, passes = g == MT_RG_WHY ? MT_WHY_RANKS : 1;

		any = 0;
		for (pass = 0; pass < passes; pass++)
		for (i = 0; i < ex->n; i++) {
			const struct mt_fired *f = &ex->v[i];
			struct sbuf line = SBUF_INIT;
			size_t n;

			if (group_of(f) != g || (g == MT_RG_WHY && mt_why_rank(f->rule->id) != pass))
				continue;
			if (!any)
				sbuf_addf(sb, "%s%s", ind, heads[g]);
			if (g == MT_RG_FLAGS) {
				size_t col = 0;
				while (col < sb->len && sb->buf[sb->len - col - 1] != '\n')
					col++;
				if (col + 1 + strlen(f->rule->id) > 110) {
					sbuf_addc(sb, '\n');
					sbuf_pad(sb, ' ', in + 4);
				} else {
					sbuf_addc(sb, ' ');
				}
				sbuf_adds(sb, f->rule->id);
				any = 1;
				continue;
			}
			any = 1;
			sbuf_addf(sb, "\n%s  %s", ind, f->rule->id);
			n = strlen(f->rule->id);
			sbuf_pad(sb, ' ', n < w ? w - n + 2 : 2);
			if (f->status == MT_FIRE_OVERRIDDEN)
				sbuf_adds(&line, "(overridden) ");
			if (f->effect)
				sbuf_addf(&line, "[%s] ", f->effect);
			sbuf_adds(&line, f->message);
			wrap(sb, line.buf, in + 2 + (n < w ? w : n) + 2, in + 4, 110);
			sbuf_release(&line);
		}
		if (any)
			sbuf_addc(sb, '\n');
	}
}

/* Candidates the constraint rules pruned, by rule, and whether the ranking
 * had to do without them. */
static void rule_prune_line(struct sbuf *sb, const struct mt_advice_rules *ar,
			    const struct mt_search_result *r)
{
	int i, any = 0;

	if (!ar || !ar->set) {
		sbuf_adds(sb, "rules: off (--no-rules): the model alone\n");
		return;
	}
	for (i = 0; ar->run && i < ar->set->n; i++) {
		long long n = mt_rules_pruned(ar->run, i);
		if (!n)
			continue;
		sbuf_addf(sb, "%s %s %lld", any ? "," : "pruned by rules:", ar->set->rules[i].id, n);
		any = 1;
	}
	if (any)
		sbuf_addc(sb, '\n');
	if (r->relaxed && r->relaxed_rule >= 0 && r->relaxed_rule < ar->set->n)
		sbuf_addf(sb, "NOTE: no candidate that fits satisfies every constraint rule; ranked "
			      "without rule %s, the one whose absence gives the fastest candidate\n",
			  ar->set->rules[r->relaxed_rule].id);
	else if (r->relaxed)
		sbuf_adds(sb, "NOTE: no candidate that fits satisfies every constraint rule, nor all "
			      "but one; ranked without constraint rules (each candidate lists those it "
			      "breaks)\n");
}

void mt_advice_text(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		    const struct mt_job *j, const struct mt_search_result *r,
		    const struct mt_advice_rules *ar)
{
	struct mt_table t;
	char lbl[160];
	int i, any = 0;

	job_line(sb, m, c, j);
	sbuf_addf(sb, "searched %lld candidates in %.2f s: %lld fit in %.1f GiB usable per GPU",
		  r->evaluated, r->seconds, r->timed, gib(r->capacity_bytes));
	if (r->relaxed)
		sbuf_addf(sb, " (and %lld in the passes with more constraints)", r->strict_evaluated);
	sbuf_addc(sb, '\n');
	sbuf_adds(sb, "pruned:");
	for (i = 0; i < MT_PRUNE_N; i++)
		if (r->pruned[i]) {
			sbuf_addf(sb, "%s %s %lld", any ? "," : "", mt_prune_id(i), r->pruned[i]);
			any = 1;
		}
	sbuf_adds(sb, any ? "\n" : " none\n");
	rule_prune_line(sb, ar, r);
	sbuf_addc(sb, '\n');

	mt_table_init(&t);
	mt_table_col(&t, 0, "#", NULL, 0);
	mt_table_col(&t, 1, "TP", NULL, 0);
	mt_table_col(&t, 2, "PP", NULL, 0);
	mt_table_col(&t, 3, "VPP", NULL, 0);
	mt_table_col(&t, 4, "CP", NULL, 0);
	mt_table_col(&t, 5, "EP", NULL, 0);
	mt_table_col(&t, 6, "ETP", NULL, 0);
	mt_table_col(&t, 7, "DP", NULL, 0);
	mt_table_col(&t, 8, "MBS", NULL, 0);
	mt_table_col(&t, 9, "micro", "batches", 0);
	mt_table_col(&t, 10, "recompute", NULL, 1);
	mt_table_col(&t, 11, "dist", "opt", 1);
	mt_table_col(&t, 12, "memory", "(GiB)", 0);
	mt_table_col(&t, 13, "step", "(s)", 0);
	mt_table_col(&t, 14, "tokens/s", "per GPU", 0);
	mt_table_col(&t, 15, "TFLOP/s", "per GPU", 0);
	mt_table_col(&t, 16, "MFU", NULL, 0);
	for (i = 0; i < r->ntop; i++) {
		const struct mt_eval *e = &r->top[i];
		const struct mt_config *cf = &e->cfg;

		mt_table_cell(&t, "%d", i + 1);
		mt_table_cell(&t, "%d", cf->tp);
		mt_table_cell(&t, "%d", cf->pp);
		mt_table_cell(&t, "%d", cf->vpp);
		if (cf->cp > 1)
			mt_table_cell(&t, "%d %s", cf->cp, mt_cp_comm_name(cf->cp_comm));
		else
			mt_table_cell(&t, "1");
		mt_table_cell(&t, "%d", cf->ep);
		mt_table_cell(&t, "%d", cf->etp);
		mt_table_cell(&t, "%d", cf->dp);
		mt_table_cell(&t, "%d", cf->mbs);
		mt_table_cell(&t, "%d", cf->num_mb);
		if (cf->recompute == MT_RC_FULL)
			mt_table_cell(&t, "%s %d%s",
				      cf->recompute_method == MT_RC_UNIFORM ? "uniform" : "full",
				      cf->recompute_layers, cf->offload_layers ? " +off" : "");
		else if (cf->offload_layers)
			mt_table_cell(&t, "%s +offload %d", rc_words(cf, (char[RCW_MAX]){ 0 }, RCW_MAX),
				      cf->offload_layers);
		else
			mt_table_cell(&t, "%s", rc_words(cf, (char[RCW_MAX]){ 0 }, RCW_MAX));
		mt_table_cell(&t, "%s", cf->fsdp == MT_FSDP_TORCH ? "fsdp2"
					: cf->fsdp ? "fsdp" : cf->prec_opt ? "on+pa"
					: cf->dist_opt ? "on" : "off");
		mt_table_cell(&t, "%.1f", gib(e->mem.total));
		mt_table_cell(&t, "%.3f", e->time.step);
		mt_table_cell(&t, "%.0f", e->tput.tokens_per_s_per_gpu);
		mt_table_cell(&t, "%.1f", e->tput.model_tflops_per_gpu);
		mt_table_cell(&t, "%.1f%%", 100 * e->tput.mfu);
	}
	mt_table_render(&t, sb, "", MT_TABLE_RULE);
	mt_table_release(&t);
	if (!r->ntop)
		return;
	sbuf_adds(sb, "order: the step plus each candidate's own uncertainty (docs/MODEL.md 8.1), "
		      "so a lead resting\non uncertain terms ranks after a sure one");
	if (!j->no_fold)
		sbuf_adds(sb, "; one row per parallel layout, its other settings folded under it");
	if (r->roomy_pick)
		sbuf_addf(sb, "\n#1 goes first for headroom: #2, %s, uses more than 95%% of the "
			  "usable memory\nand #1 is within its band (7.1)",
			  r->ntop > 1 && r->top[1].time.step < r->top[0].time.step
				  ? "the fastest" : "first by its own terms");
	sbuf_addc(sb, '\n');
	variants_lines(sb, r);
	sbuf_addf(sb, "\nbest: %s, recompute %s",
		  mt_config_label(lbl, sizeof(lbl), m, &r->top[0].cfg),
		  rc_words(&r->top[0].cfg, (char[RCW_MAX]){ 0 }, RCW_MAX));
	extra_words(sb, j, &r->top[0].cfg);
	sbuf_addf(sb, ", distributed optimizer %s", dist_opt_words(&r->top[0].cfg));
	prec_opt_words(sb, &r->top[0].cfg);
	moe_words(sb, m, &r->top[0].cfg);
	sbuf_addf(sb, "\n");
	layout_line(sb, m, j, &r->top[0].cfg, "  ");
	memory_lines(sb, m, c, j, &r->top[0], r->capacity_bytes, "  ");
	if (r->top[0].cfg.offload_layers > 0 || j->opt_offload > 0 || j->offload_modules)
		host_line(sb, c, &r->top[0].mem, "  ");
	time_lines(sb, &r->top[0], "  ");
	sbuf_addf(sb, "  throughput: %.0f tokens/s per GPU, %.1f model TFLOP/s per GPU "
		      "(%.1f executed), MFU %.1f%% of ",
		  r->top[0].tput.tokens_per_s_per_gpu, r->top[0].tput.model_tflops_per_gpu,
		  r->top[0].tput.hw_tflops_per_gpu, 100 * r->top[0].tput.mfu);
	peak_words(sb, c, j);
	band_line(sb, &r->top[0], "  ");
	if (r->ntop > 1) {
		double d = r->top[1].time.step / r->top[0].time.step - 1;

		if (!r->roomy_pick && fabs(d) < 0.001)
			sbuf_addf(sb, "  runner-up: %s, as fast (within 0.1%%)",
				  mt_config_label(lbl, sizeof(lbl), m, &r->top[1].cfg));
		else if (!r->roomy_pick && d < 0)
			sbuf_addf(sb, "  runner-up: %s, %.1f%% faster as predicted, but less surely: its "
				      "own terms reach +%.1f%% against +%.1f%% (docs/MODEL.md 8.1)",
				  mt_config_label(lbl, sizeof(lbl), m, &r->top[1].cfg), -100 * d,
				  100 * r->top[1].band.spec_hi / r->top[1].time.step,
				  100 * r->top[0].band.spec_hi / r->top[0].time.step);
		else if (r->roomy_pick)
			sbuf_addf(sb, "  runner-up: %s, %.1f%% %s but %s (%.1f of %.1f GiB usable%s): "
				      "ranked second for headroom, see --prefer-headroom",
				  mt_config_label(lbl, sizeof(lbl), m, &r->top[1].cfg), 100 * fabs(d),
				  d < 0 ? "faster" : "slower, ranked first by its own terms,",
				  r->top[1].cfg.offload_layers > 0 &&
					  r->top[1].mem.total <= MT_ROOMY_USE * r->capacity_bytes
				  ? "resting on activation offload" : "on the memory limit",
				  gib(r->top[1].mem.total), gib(r->capacity_bytes),
				  r->top[1].cfg.offload_layers > 0 ? ", activations offloaded" : "");
		else
			sbuf_addf(sb, "  runner-up: %s, %.1f%% slower",
				  mt_config_label(lbl, sizeof(lbl), m, &r->top[1].cfg), 100 * d);
		differences(sb, &r->top[1].cfg, &r->top[0].cfg);
		sbuf_addc(sb, '\n');
	}
	mt_gains_text(sb, r->gains, r->ngains, "  ",
		      "gains of its settings over Megatron-LM's defaults for this layout");
	rules_lines(sb, mt_advice_explain(ar, 0), "  ");
	flags_lines(sb, m, j, &r->top[0].cfg, mt_advice_explain(ar, 0));
}

void mt_infeasible_text(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
			const struct mt_job *j, const struct mt_search_result *r,
			const struct mt_advice_rules *ar)
{
	char lbl[160];
	int i;

	job_line(sb, m, c, j);
	sbuf_addf(sb, "nothing feasible: %lld candidates evaluated, none fits in %.1f GiB usable "
		      "per GPU\n", r->evaluated, gib(r->capacity_bytes));
	for (i = 0; i < MT_PRUNE_N; i++)
		if (r->pruned[i])
			sbuf_addf(sb, "  %-12s %8lld  %s\n", mt_prune_id(i), r->pruned[i],
				  mt_prune_text(i));
	rule_prune_line(sb, ar, r);
	if (r->has_closest) {
		sbuf_addf(sb, "closest: %s, recompute %s%s, needs %.1f GiB\n",
			  mt_config_label(lbl, sizeof(lbl), m, &r->closest.cfg),
			  rc_words(&r->closest.cfg, (char[RCW_MAX]){ 0 }, RCW_MAX),
			  r->closest.cfg.fsdp == MT_FSDP_TORCH ? ", in PyTorch FSDP2" :
			  r->closest.cfg.fsdp ? ", in Megatron-FSDP" : "", gib(r->closest.mem.total));
		memory_lines(sb, m, c, j, &r->closest, r->capacity_bytes, "  ");
	}
	sbuf_addf(sb, "the model states alone (18 bytes per parameter: bf16 weights, fp32 "
		      "gradients and Adam states) need at least %ld GPUs of %.1f GiB\n", r->min_gpus,
		  gib(r->capacity_bytes));
	if (!r->nsugg) {
		sbuf_adds(sb, "try more GPUs, a smaller micro-batch or sequence, or a cluster with more "
			      "memory per GPU\n");
		return;
	}
	sbuf_adds(sb, "changes that fit (each searched by the model alone; run with the change for "
		      "the rules' answer):\n");
	for (i = 0; i < r->nsugg; i++) {
		const struct mt_eval *e = &r->sugg[i].best;

		sbuf_addf(sb, "  %-28s %s, recompute %s", r->sugg[i].change,
			  mt_config_label(lbl, sizeof(lbl), m, &e->cfg),
			  rc_words(&e->cfg, (char[RCW_MAX]){ 0 }, RCW_MAX));
		sbuf_addf(sb, "%s: %.3f s per step, %.0f tokens/s per GPU, %.1f GiB\n",
			  e->cfg.fsdp == MT_FSDP_TORCH ? ", in PyTorch FSDP2" :
			  e->cfg.fsdp ? ", in Megatron-FSDP" : "", e->time.step,
			  e->tput.tokens_per_s_per_gpu, gib(e->mem.total));
	}
}

void mt_estimate_text(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		      const struct mt_job *j, const struct mt_eval *e, int stage,
		      const struct mt_advice_rules *ar)
{
	struct mt_table t;
	struct mt_mem *st = stages_of(m, c, j, e);
	const struct mt_mem *mm = st && stage >= 0 && stage < e->cfg.pp ? &st[stage] : &e->mem;
	const struct mt_time *tt = &e->time;
	double cap = c->memory_bytes * (1 - j->mem_headroom);
	char lbl[160];

	job_line(sb, m, c, j);
	sbuf_addf(sb, "configuration: %s, recompute %s", mt_config_label(lbl, sizeof(lbl), m, &e->cfg),
		  rc_words(&e->cfg, (char[RCW_MAX]){ 0 }, RCW_MAX));
	if (e->cfg.recompute == MT_RC_FULL)
		sbuf_addf(sb, " (%s)", mt_rc_full_words(e->cfg.recompute_method,
							  e->cfg.recompute_layers, (char[64]){ 0 }, 64));
	sbuf_addf(sb, ", distributed optimizer %s", dist_opt_words(&e->cfg));
	prec_opt_words(sb, &e->cfg);
	sbuf_addf(sb, ", %d micro-batch%s", e->cfg.num_mb, e->cfg.num_mb == 1 ? "" : "es");
	moe_words(sb, m, &e->cfg);
	graph_words(sb, &e->cfg);
	if (mt_p2p_blocks(&e->cfg))
		sbuf_addf(sb, ", pipeline sends blocking (P2P overlap off)");
	sbuf_addf(sb, "\n");
	layout_line(sb, m, j, &e->cfg, "");
	sbuf_addf(sb, "verdict: %s\n\n",
		  e->feasible	      ? "fits in memory" :
		  e->mem.total <= cap ? "DOES NOT FIT in host memory" :
					"DOES NOT FIT in memory");

	mt_table_init(&t);
	mt_table_col(&t, 0, "memory (stage)", NULL, 1);
	mt_table_col(&t, 1, "GiB", NULL, 0);
	mt_table_col(&t, 2, "share", NULL, 0);
#define ROW(name, v) do { mt_table_cell(&t, "%s", name); mt_table_cell(&t, "%.2f", gib(v)); \
		mt_table_cell(&t, "%.1f%%", 100 * (v) / mm->total); } while (0)
	ROW("weights", mm->weights);
	ROW("gradients", mm->grads);
	ROW("optimizer states", mm->optimizer);
	ROW("activations", mm->activations);
	ROW("logits and loss", mm->logits);
	ROW("MoE dispatch buffers", mm->moe_dispatch);
	ROW("largest transient", mm->transient);
	ROW("NCCL buffers", mm->nccl);
	ROW("CUDA context", mm->cuda_context);
	ROW("workspaces", mm->workspace);
	ROW("CUDA graphs", mm->cuda_graphs);
	ROW("allocator fragmentation", mm->fragmentation);
	ROW("total", mm->total);
#undef ROW
	mt_table_render(&t, sb, "", MT_TABLE_RULE);
	mt_table_release(&t);
	if (mm == &e->mem)
		sbuf_addf(sb, "(stage %d is the most loaded; %.1f GiB usable of %.1f GiB)\n",
			  mm->stage, gib(cap), gib(c->memory_bytes));
	else
		sbuf_addf(
			sb,
			"(stage %d of %d, --stage; stage %d is the most loaded, %.1f GiB; %.1f GiB "
			"usable of %.1f GiB)\n",
			mm->stage, e->cfg.pp, e->mem.stage, gib(e->mem.total), gib(cap),
			gib(c->memory_bytes));
	host_line(sb, c, mm, "");
	allocator_line(sb, mm, "");
	if (st)
		stage_lines(sb, st, e->cfg.pp, e->mem.stage, "");
	free(st);
	sbuf_addc(sb, '\n');

	mt_table_init(&t);
	mt_table_col(&t, 0, "time per step", NULL, 1);
	mt_table_col(&t, 1, "exposed (s)", NULL, 0);
	mt_table_col(&t, 2, "hidden (s)", NULL, 0);
	mt_table_col(&t, 3, "share", NULL, 0);
#define ROW(name, v, hid) do { mt_table_cell(&t, "%s", name); mt_table_cell(&t, "%.4f", v); \
		if ((hid) >= 0) mt_table_cell(&t, "%.4f", (double)(hid)); else mt_table_cell(&t, "-"); \
		mt_table_cell(&t, "%.1f%%", 100 * (v) / tt->step); } while (0)
	ROW("GEMM", tt->gemm, -1);
	ROW("attention", tt->attention, -1);
	ROW("element-wise", tt->elementwise, -1);
	ROW("recompute", tt->recompute, -1);
	ROW("kernel gaps, SM sharing", tt->gpu_overhead, -1);
	ROW("TP communication", tt->tp_exposed, tt->tp_hidden);
	ROW("CP communication", tt->cp_exposed, tt->cp_hidden);
	ROW("EP communication", tt->ep_exposed, tt->ep_hidden);
	ROW("PP send/recv", tt->pp_exposed, tt->pp_hidden);
	ROW("DP communication", tt->dp_exposed, tt->dp_hidden);
	ROW("activation offload", tt->offload_exposed, tt->offload_hidden);
	ROW("host overhead", tt->host_exposed, -1);
	ROW("pipeline bubble", tt->bubble, -1);
	ROW("optimizer step", tt->optimizer, -1);
	ROW("step", tt->step, -1);
#undef ROW
	mt_table_render(&t, sb, "", MT_TABLE_RULE);
	mt_table_release(&t);
	sbuf_addf(sb, "\nthroughput: %.0f tokens/s per GPU, %.1f model TFLOP/s per GPU, %.1f "
		      "executed TFLOP/s per GPU, MFU %.1f%%\n", e->tput.tokens_per_s_per_gpu,
		  e->tput.model_tflops_per_gpu, e->tput.hw_tflops_per_gpu, 100 * e->tput.mfu);
	band_line(sb, e, "");
	host_timeline_lines(sb, e);
	sbuf_addc(sb, '\n');
	rules_lines(sb, mt_advice_explain(ar, 0), "");
	if (mt_advice_explain(ar, 0) && mt_advice_explain(ar, 0)->n)
		sbuf_addc(sb, '\n');
	flags_lines(sb, m, j, &e->cfg, mt_advice_explain(ar, 0));
}
