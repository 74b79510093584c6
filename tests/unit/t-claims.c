/* SPDX-License-Identifier: MIT */
/* Claims: what a rule's message states of its candidate is true of it.
 *
 * Each row of claims[] names a rule, the words of one of its messages that
 * state a fact (fits or does not fit, fewer or more, divides or does not, on
 * or off, larger or smaller) as an extended regular expression, and that fact
 * in the rule language, with $1, $2, ... standing for the numbers the message
 * printed.  Each job of jobs[] is explained as `advise` explains its best
 * candidate, as `estimate` explains its pinned configuration, or as `rules
 * check` reads a facts file; wherever a message matches a row, the row's fact
 * must hold on that candidate's facts (and best() and least_mem() of its
 * search).  Every row must match some message: a row no job exercises fails
 * too, so each fact a message states is checked on a candidate that states it. */
#include <math.h>
#include <regex.h>
#include <stdio.h>

#include "testutil.h"

#include "../../job/knobs.h"
#include "../../lib/sbuf.h"
#include "../../rules/engine.h"
#include "../../tuner/search.h"
#include "../../perfmodel/layout.h"

struct claim {
	const char *rule;  /* NULL: any rule */
	const char *says;  /* ERE on the message; its groups are $1, $2, ... */
	const char *holds; /* the fact, an expression on the candidate */
};

#define GIB_AGAINST(what) \
	what " does not fit: at least ([0-9.]+) GiB per GPU against ([0-9.]+) GiB usable"

static const struct claim claims[] = {
	/* ---- tensor and sequence parallelism */
	{ "tp-nvlink", "TP ([0-9]+) would span ([0-9]+) NVLink domains of ([0-9]+) GPUs",
	  "$1 == config.tp && $3 == cluster.nvlink_domain && $2 == ceil($1 / $3) && $2 > 1" },
	{ "sp-with-tp", "^Sequence parallelism splits the norms",
	  "config.sp && divides(config.tp, job.seq / config.cp)" },
	{ "sp-with-tp", "the ([0-9]+) tokens per CP rank do not split evenly over TP ([0-9]+)",
	  "!config.sp && $1 == job.seq / config.cp && $2 == config.tp && !divides($2, $1)" },
	{ "sp-with-tp",
	  "leaves it off .* the ([0-9]+) tokens per CP rank split evenly over TP ([0-9]+)",
	  "!config.sp && $1 == job.seq / config.cp && $2 == config.tp && divides($2, $1)" },
	{ "tp-comm-overlap", "userbuffers pipeline each TP", "config.tp_overlap" },
	{ "tp-comm-overlap", "this candidate runs without the overlap", "!config.tp_overlap" },
	{ "tp-comm-overlap-nvfp4", "stay exposed", "!config.tp_overlap" },
	{ "tp-comm-overlap-nvfp4", "runs it all the same", "config.tp_overlap" },
	{ "tp-small-hidden", "TP ([0-9]+) leaves ([0-9]+) hidden columns per GPU",
	  "$1 == config.tp && $2 == model.hidden / $1 && ($2 <= 1024 || $1 > 8) && "
	  "!config.full_graph" },
	{ "tp-small-hidden", "\\(([0-9.]+)% of it\\)",
	  "!config.cuda_graph && abs($1 - 100 * shape.host_layer_s / shape.layer_s) < 0.051" },
	{ "tp-small-hidden", "\\(([0-9.]+)% of it, with per-layer CUDA graphs\\)",
	  "config.cuda_graph && "
	  "abs($1 - 100 * shape.host_layer_graphed_s / shape.layer_s) < 0.051" },
	{ "tp-exposed-comm", "Turn on the TP communication overlap", "!config.tp_overlap" },
	{ "tp8-vs-tp4-pp2", "for TP ([0-9]+) x PP ([0-9]+) here",
	  "$1 == config.tp && $2 == config.pp" },
	{ "max-connections-blackwell",
	  "^Compute capability ([0-9.]+):", "$1 >= 10 && $1 == cluster.cc" },
	{ "why-tp", "TP 1: each layer stays whole; the candidate fits with ([0-9.]+) GiB to spare",
	  "config.tp == 1 && memory.headroom_bytes >= 0 && "
	  "abs($1 - memory.headroom_bytes / 1Gi) < 0.051" },
	{ "why-tp", GIB_AGAINST("TP ([0-9]+)"),
	  "least_mem(\"tp\", $1) > memory.capacity_bytes && $2 > $3" },
	{ "why-tp", "inside one NVLink domain", "shape.tp_per_domain == config.tp" },
	{ "why-tp", "across NVLink domains", "shape.tp_per_domain < config.tp" },
	{ NULL, "The best TP ([0-9]+) candidate is [0-9.]+% faster",
	  "best(\"tp\", $1) < time.step_s" },
	{ NULL, "The best TP ([0-9]+) candidate is [0-9.]+% slower",
	  "best(\"tp\", $1) > time.step_s" },

	/* ---- data parallelism */
	{ "dp-world", "= ([0-9]+) GPUs, not the job's ([0-9]+)",
	  "$1 != $2 && $1 == config.dp * config.tp * config.cp * config.pp && $2 == job.gpus" },
	{ "dist-opt", "The distributed optimizer shards", "config.dist_opt" },
	{ "dist-opt", "The distributed optimizer would shard", "!config.dist_opt" },
	{ "dp-first", "Pure data parallelism \\(TP = CP = PP = 1\\) fits too",
	  "has(best(\"tp\", 1, \"pp\", 1, \"cp\", 1)) && config.tp * config.cp * config.pp > 1" },
	{ "dp-first", "[0-9.]+% faster than this one",
	  "best(\"tp\", 1, \"pp\", 1, \"cp\", 1) < time.step_s" },
	{ "dp-first", "[0-9.]+% slower than this one",
	  "best(\"tp\", 1, \"pp\", 1, \"cp\", 1) > time.step_s" },
	{ "dp-first", "Sharding wins here", "best(\"tp\", 1, \"pp\", 1, \"cp\", 1) > time.step_s" },
	{ "dp-overlap", "first forward run under compute",
	  "config.overlap_grad && config.overlap_param" },
	{ "dp-overlap", "first forward would run under compute",
	  "!(config.overlap_grad && config.overlap_param)" },
	{ "dp-grad-reduce-dtype",
	  "in BF16 over the ([0-9]+) ranks: half the bytes of FP32, numerically safe",
	  "!config.grad_fp32 && $1 == dp.group && $1 < 128" },
	{ "dp-grad-reduce-dtype", "in BF16 over the ([0-9]+) ranks: half the bytes of FP32, but",
	  "!config.grad_fp32 && $1 == dp.group && $1 >= 128" },
	{ "dp-grad-reduce-dtype", "Gradients are reduced in FP32: a ring over ([0-9]+) ranks",
	  "config.grad_fp32 && job.grad_reduce_bf16 && $1 == dp.group" },
	{ "dp-bucket-knee", "at least Megatron's default",
	  "config.bucket_params >= max(40M, dp.group * 1M)" },
	{ "dp-optimizer-instances", "over ([0-9]+) ranks in ([0-9]+) NVLink domains",
	  "$1 == dp.group && $2 > 1 && dp.per_domain < dp.group" },

	/* ---- context parallelism */
	{ "cp-short-chunks", "CP ([0-9]+) would leave ([0-9]+) tokens per rank",
	  "$1 == config.cp && $2 == job.seq / $1 && $2 < 4096" },
	{ "cp-skinny", "holds ([0-9]+) tokens, fewer than the hidden size ([0-9]+)",
	  "$1 < $2 && $1 == cp.chunk && $2 == model.hidden" },
	{ "cp-seq-divisible",
	  "sequence of ([0-9]+) tokens does not split into 2 x CP = ([0-9]+) equal chunks",
	  "$1 == job.seq && $2 == 2 * config.cp && !divides($2, $1)" },
	{ "cp-ulysses-size",
	  "would span ([0-9]+) ranks: no more than a node's ([0-9]+) GPUs over TP ([0-9]+), and no "
	  "more than the ([0-9]+) KV heads",
	  "$1 == config.cp_a2a && $1 <= $2 / $3 && $1 <= $4 && $4 == model.kv_heads" },
	{ "cp-ulysses-size", "the group is not used", "config.cp_comm != \"a2a+p2p\"" },
	{ "cp-comm-hierarchical",
	  "CP ([0-9]+) crosses NVLink domains \\(([0-9]+) ranks per domain\\)",
	  "$2 < $1 && $1 == config.cp && $2 == cp.per_domain" },
	{ "cp-comm-hierarchical", "domain\\): a2a inside groups of ([0-9]+), p2p across them",
	  "config.cp_comm == \"a2a+p2p\" && $1 == config.cp_a2a" },
	{ "cp-comm-hierarchical", "a2a\\+p2p would run a2a", "config.cp_comm != \"a2a+p2p\"" },
	{ "cp-comm-hierarchical", "too short to hide it", "cp.ring_step_s > cp.attn_step_s" },
	{ "cp-comm-p2p", "exchanges K and V in a ring", "config.cp_comm == \"p2p\"" },
	{ "cp-comm-p2p", "so the exchange hides", "cp.ring_step_s <= cp.attn_step_s" },
	{ "cp-comm-p2p", "so part of it shows", "cp.ring_step_s > cp.attn_step_s" },
	{ "cp-comm-p2p", "short enough to hide; this candidate runs",
	  "config.cp_comm != \"p2p\" && cp.ring_step_s <= cp.attn_step_s" },
	{ "cp-comm-p2p", "too long to hide all of it; this candidate runs",
	  "config.cp_comm != \"p2p\" && cp.ring_step_s > cp.attn_step_s" },
	{ "cp-all-gather-mha", "where ([0-9]+) KV heads make it large",
	  "!model.gqa && $1 == model.kv_heads && $1 == model.heads" },
	{ "cp-a2a-heads",
	  "scatters the ([0-9]+) heads of a TP rank over CP ([0-9]+): they must divide",
	  "!divides($2, $1) && $1 == model.heads / config.tp" },
	{ "why-cp", "CP 1: the ([0-9]+)-token sequence is not split",
	  "config.cp == 1 && $1 == job.seq" },
	{ "why-cp",
	  "Without CP nothing fits: at least ([0-9.]+) GiB per GPU against ([0-9.]+) GiB usable",
	  "least_mem(\"cp\", 1) > memory.capacity_bytes && $1 > $2" },
	{ NULL, "The best CP ([0-9]+) candidate is [0-9.]+% faster",
	  "best(\"cp\", $1) < time.step_s" },
	{ NULL, "The best CP ([0-9]+) candidate is [0-9.]+% slower",
	  "best(\"cp\", $1) > time.step_s" },
	{ NULL, "The best candidate without CP is [0-9.]+% faster",
	  "best(\"cp\", 1) < time.step_s" },
	{ NULL, "The best candidate without CP is [0-9.]+% slower",
	  "best(\"cp\", 1) > time.step_s" },

	/* ---- mixture of experts */
	{ "moe-etp-1", "^ETP 1: each expert's GEMMs stay whole", "config.etp == 1" },
	{ "moe-etp-1", "this candidate runs ETP ([0-9]+)", "config.etp == $1 && $1 != 1" },
	{ "moe-experts-divisible", "EP ([0-9]+) does not divide the ([0-9]+) experts",
	  "!divides($1, $2) && $2 == model.experts" },
	{ "moe-ep-nvlink",
	  "EP ([0-9]+) would cross NVLink domains \\(([0-9]+) of its ranks share one\\)",
	  "$2 < $1 && $1 == config.ep" },
	{ "moe-flex-cross-domain", "EP ([0-9]+) spans ([0-9]+) NVLink domains",
	  "$2 > 1 && $2 == shape.ep_domains" },
	{ "moe-ep-exposed", "The 1F1B EP overlap \\(--ep-overlap on", "!config.ep_overlap" },
	{ "moe-grouped-gemm", "^([0-9]+) experts per GPU: grouped GEMM",
	  "$1 > 1 && $1 == shape.experts_per_gpu" },
	{ "why-ep", GIB_AGAINST("EP ([0-9]+)"),
	  "least_mem(\"ep\", $1) > memory.capacity_bytes && $2 > $3" },
	{ "why-ep", "GPUs in 1 NVLink domain;", "shape.ep_domains == 1" },
	{ "why-ep", "GPUs in ([0-9]+) NVLink domains;", "$1 > 1 && $1 == shape.ep_domains" },
	{ NULL, "The best EP ([0-9]+) candidate is [0-9.]+% faster",
	  "best(\"ep\", $1) < time.step_s" },
	{ NULL, "The best EP ([0-9]+) candidate is [0-9.]+% slower",
	  "best(\"ep\", $1) > time.step_s" },

	/* ---- pipeline parallelism */
	{ "pp-microbatches",
	  "^([0-9]+) micro-batches for PP ([0-9]+):.* 4 x PP = ([0-9]+) keeps it small",
	  "$1 < $3 && $3 == 4 * $2 && $1 == config.num_mb" },
	{ "pp-vpp", "PP ([0-9]+) without interleaving", "config.vpp == 1 && pipe.interleavable" },
	{ "pp-vpp-many-microbatches",
	  "^([0-9]+) micro-batches over PP ([0-9]+): the bubble is already", "$1 >= 8 * $2" },
	{ "pp-only-when-needed", "A candidate without a pipeline fits too",
	  "has(best(\"pp\", 1)) && config.pp > 1" },
	{ "pp-only-when-needed", "its best takes .*, [0-9.]+% faster",
	  "best(\"pp\", 1) < time.step_s" },
	{ "pp-only-when-needed", "its best takes .*, [0-9.]+% slower",
	  "best(\"pp\", 1) > time.step_s" },
	{ "pp-only-when-needed", "is kept because the model predicts it faster",
	  "best(\"pp\", 1) > time.step_s" },
	{ "pp-account-embedding", "gives the end stages fewer layers",
	  "pipe.first_stage_layers < pipe.middle_stage_layers && "
	  "pipe.last_stage_layers < pipe.middle_stage_layers" },
	{ "pp-account-embedding", "makes the embedding ([0-9.]+)x a layer's parameters",
	  "$1 >= 0.5 && abs($1 - model.embedding_ratio) < 0.0051" },
	{ "pp-account-embedding",
	  "both stages are end stages: the first holds ([0-9]+) layers beside the embedding, the "
	  "last ([0-9]+)",
	  "config.pp == 2 && $1 == pipe.first_stage_layers && $2 == pipe.last_stage_layers" },
	{ "pp-account-embedding",
	  "gives the end stages fewer layers: ([0-9]+) on the first and ([0-9]+) on the last, "
	  "against up to ([0-9]+)",
	  "$1 < $3 && $2 < $3 && $1 == pipe.first_stage_layers && $2 == pipe.last_stage_layers && "
	  "$3 == pipe.middle_stage_layers" },
	{ "pp-account-embedding",
	  "do not both get fewer layers: the first holds ([0-9]+) and the last ([0-9]+), "
	  "against up to ([0-9]+)",
	  "!($1 < $3 && $2 < $3) && $1 == pipe.first_stage_layers && "
	  "$2 == pipe.last_stage_layers && $3 == pipe.middle_stage_layers" },
	{ "pp-account-embedding",
	  "The layers split evenly \\(([0-9]+) per stage, ([0-9]+) per model chunk\\): "
	  ".* would give each end stage one layer fewer",
	  "config.split == \"even\" && config.pp > 2 && $1 == pipe.first_stage_layers && "
	  "$1 == pipe.last_stage_layers && $1 == pipe.middle_stage_layers && "
	  "$2 == pipe.chunk_layers && "
	  "$1 == $2 * config.vpp" },
	{ "why-pp",
	  "Without a pipeline nothing fits: at least ([0-9.]+) GiB per GPU against "
	  "([0-9.]+) GiB usable",
	  "least_mem(\"pp\", 1) > memory.capacity_bytes && $1 > $2" },
	{ NULL, "The best PP ([0-9]+) candidate is [0-9.]+% faster",
	  "best(\"pp\", $1) < time.step_s" },
	{ NULL, "The best PP ([0-9]+) candidate is [0-9.]+% slower",
	  "best(\"pp\", $1) > time.step_s" },
	{ NULL, "The best VPP ([0-9]+) candidate is [0-9.]+% faster",
	  "best(\"vpp\", $1) < time.step_s" },
	{ NULL, "The best VPP ([0-9]+) candidate is [0-9.]+% slower",
	  "best(\"vpp\", $1) > time.step_s" },

	/* ---- memory */
	{ "recompute-full-cost", "^Full recomputation of ([0-9]+) layer",
	  "config.recompute == \"full\" && $1 == config.recompute_layers" },
	{ "recompute-full-cost",
	  "Selective recomputation alone needs at least ([0-9.]+) GiB per GPU here, more than the "
	  "([0-9.]+) GiB usable",
	  "least_mem(\"recompute\", \"selective\") > memory.capacity_bytes && $1 > $2" },
	{ "recompute-modules-moe", "For MoE layers, recomputing only",
	  "!(least_mem(\"recompute\", \"selective\") > memory.capacity_bytes)" },
	{ "recompute-modules-moe",
	  "Selective recomputation does not fit here.* the lightest needs ([0-9.]+) GiB per GPU "
	  "against ([0-9.]+) GiB usable",
	  "least_mem(\"recompute\", \"selective\") > memory.capacity_bytes && $1 > $2" },
	{ "offload-bandwidth", "longer than the", "shape.offload_layer_s > shape.layer_s / 3" },
	{ "offload-nccl-gdr-level", "\\(before 2.26\\)", "cluster.nccl < version(\"2.26\")" },
	{ "offload-nccl-gdr-c2c", "\\(2.26 or newer\\)", "cluster.nccl >= version(\"2.26\")" },
	{ "offload-nccl-unknown", "the profile does not record the NCCL version",
	  "!has(cluster.nccl)" },
	{ "precision-aware-optimizer", "Memory is tight",
	  "memory.headroom_bytes < 0.1 * memory.capacity_bytes" },
	{ "precision-aware-optimizer", "--precision-aware-optimizer on",
	  "!config.precision_aware_optimizer && config.dist_opt" },
	{ "mem-expandable-segments", "uses ([0-9.]+)% of the usable memory",
	  "$1 > 75 && memory.total_bytes > 0.75 * memory.capacity_bytes" },
	{ "mem-nvls-off", "^Only ([0-9.]+) GiB is left",
	  "memory.headroom_bytes < 0.05 * memory.capacity_bytes" },
	{ "mem-headroom", "^Only ([0-9.]+) GiB is left beyond", "memory.headroom_bytes < 2Gi" },

	/* ---- host */
	{ "host-bound", "^Launching one layer's kernels takes", "!config.full_graph" },
	{ "host-bound", "on the host with per-layer CUDA graphs against",
	  "config.cuda_graph && !config.full_graph" },
	{ "host-bound", "on the host without CUDA graphs against",
	  "!config.cuda_graph && !config.full_graph" },
	{ "cuda-graphs-host-bound", "per-layer graphs replay the attention", "config.cuda_graph" },
	{ "cuda-graphs-host-bound", "this candidate runs without them", "!config.cuda_graph" },
	{ "cuda-graphs-host-bound", "one CUDA graph covering the step", "config.full_graph" },
	{ "cuda-graphs", "Kernel launches are ([0-9.]+)% of the GPU time",
	  "$1 > 25 && !config.cuda_graph && !config.full_graph" },
	{ "numa-binding", "hang off ([0-9]+) NUMA nodes", "$1 > 1 && $1 == cluster.numa_nodes" },
	{ "nvl72-placement",
	  "= ([0-9]+) GPUs per pipeline stage neither divides nor is a multiple of the "
	  "([0-9]+)-GPU NVLink domain, nor of the ([0-9]+)",
	  "!divides($1, $2) && !divides($2, $1) && !divides($1, $3) && !divides($3, $1)" },

	/* ---- precision and fusions */
	{ "fp8-speedup", "MLP GEMM ([0-9.]+)x faster than BF16",
	  "$1 > 1 && shape.fp8_gemm_ratio > 1" },
	{ "ce-fusion", "is fused with its softmax", "config.fused_ce" },
	{ "ce-fusion", "this candidate runs it unfused", "!config.fused_ce" },
	{ "grad-accum-fusion", "\\(FP32\\)", "config.grad_fp32" },
	{ "grad-accum-fusion", "\\(BF16, as", "!config.grad_fp32" },
	{ "grad-accum-unfused", "The job turns gradient accumulation fusion off",
	  "!job.grad_accum_fusion" },
	{ "unfused-attention", "Attention runs unfused", "job.attention == \"unfused\"" },
	{ "bias-fusions", "biases on its linear layers", "model.linear_bias" },
	{ "bias-fusions", "no linear biases", "!model.linear_bias" },

	/* ---- diagnose */
	{ "diag-idle-gpu", "Kernels are short \\(median ([0-9.]+) us\\)",
	  "$1 < 20 && finding.median_kernel_us < 20" },
	{ "diag-slow-rank", "computes ([0-9.]+)x the median", "finding.slowest_rank_ratio > 1.05" },
};

#define NCLAIMS ((int)(sizeof(claims) / sizeof(claims[0])))

/* A job: "advise ARGS" (the best candidate), "estimate ARGS" (the pinned
 * configuration) or "facts FILE" (megatune.facts/1), the arguments as the
 * command takes them (--model, --cluster, --gpus, --seq, --gbs,
 * --precision, --attention, --grad-accum-fusion, --pp-layout and the knobs). */
static const char *const jobs[] = {
	/* tensor and sequence parallelism */
	"estimate --model gpt3-175b --gpus 64 --seq 2048 --gbs 64 --tp 16 --pp 4",
	"estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4",
	"estimate --model llama3-8b --gpus 8 --seq 4098 --gbs 16 --tp 4",
	"estimate --model llama3-8b --gpus 8 --seq 16384 --gbs 16 --tp 2 --cp 2 "
	"--sequence-parallel off",
	"estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4 "
	"--tp-comm-overlap off",
	"estimate --model llama3-70b --cluster gb200-nvl72 --gpus 64 --seq 8192 --gbs 256 --mbs 1 "
	"--tp 2 --pp 4 --vpp 5 --precision nvfp4",
	"estimate --model llama3-70b --cluster gb200-nvl72 --gpus 64 --seq 8192 --gbs 256 --mbs 1 "
	"--tp 2 --pp 4 --vpp 5 --precision nvfp4 --tp-comm-overlap on",
	"estimate --model llama3-8b --gpus 8 --seq 2048 --gbs 64 --tp 8",
	"estimate --model llama3-8b --gpus 8 --seq 2048 --gbs 64 --tp 8 --cuda-graphs off",
	"estimate --model llama3-8b --gpus 8 --seq 2048 --gbs 64 --tp 8 --full-iteration-graphs on",
	"estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 2 "
	"--tp-comm-overlap off",
	"advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128",
	/* without the precision-aware optimizer no candidate without CP fits
	 * ahead of the CP 2 pick: the one that fits is slower */
	"advise --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --precision-aware-optimizer off",
	"advise --model llama3-8b --gpus 8 --seq 8192 --gbs 128",
	"advise --model gpt3-175b --gpus 64 --seq 2048 --gbs 64 --tp 16",
	"advise --model llama3-70b --gpus 64 --seq 65536 --gbs 64 --recompute none "
	"--offload-layers 0 --fsdp off",
	/* data parallelism */
	"facts tests/fixtures/rules/run-dp-mismatch.json",
	"advise --model llama3-8b --gpus 64 --seq 4096 --gbs 512",
	"estimate --model llama3-8b --gpus 64 --seq 4096 --gbs 512 --dist-opt off",
	"estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --fsdp torch",
	"estimate --model llama3-8b --gpus 64 --seq 4096 --gbs 512 --overlap-grad-reduce off "
	"--overlap-param-gather off",
	"advise --model llama3-8b --gpus 1024 --seq 2048 --gbs 1024",
	"estimate --model llama3-8b --gpus 256 --seq 4096 --gbs 512 --grad-reduce bf16",
	"advise --model llama3-8b --gpus 64 --seq 4096 --gbs 512 --pp 1",
	/* context parallelism */
	"estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --cp 2",
	"estimate --model llama3-8b --gpus 8 --seq 2048 --gbs 64 --cp 2",
	"estimate --model llama3-8b --gpus 64 --seq 32768 --gbs 64 --tp 1 --cp 16",
	"estimate --model llama3-70b --gpus 16 --seq 8192 --gbs 32 --tp 8 --cp 2",
	"facts tests/fixtures/rules/run-cp-odd-seq.json",
	"estimate --model llama3-8b --gpus 64 --seq 131072 --gbs 64 --tp 2 --cp 16",
	"estimate --model llama3-8b --gpus 64 --seq 131072 --gbs 64 --tp 2 --cp 16 --cp-comm p2p",
	"estimate --model llama3-8b --gpus 16 --seq 16384 --gbs 32 --tp 4 --cp 2",
	"estimate --model llama3-8b --gpus 16 --seq 16384 --gbs 32 --tp 4 --cp 2 --cp-comm a2a",
	"estimate --model llama3-8b --gpus 8 --seq 2048 --gbs 64 --cp 2 --cp-comm a2a",
	"estimate --model gpt3-175b --gpus 128 --seq 2048 --gbs 64 --tp 8 --pp 8 --cp 2 "
	"--cp-comm all_gather",
	"facts tests/fixtures/rules/run-cp-a2a-heads.json",
	"advise --model llama3-70b --gpus 64 --seq 65536 --gbs 64",
	/* mixture of experts */
	"advise --model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256",
	"advise --model mixtral-8x22b --gpus 32 --seq 4096 --gbs 256 --fsdp off",
	"estimate --model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256 --tp 2 --pp 4 --etp 2",
	"facts tests/fixtures/rules/run-ep-experts.json",
	"estimate --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 1024 --tp 1 --pp 4 --vpp 1 "
	"--ep 16 --moe-dispatcher alltoall",
	"advise --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048",
	"estimate --model qwen3-235b-a22b --gpus 256 --seq 4096 --gbs 2048 --tp 2 --pp 8 --vpp 4 "
	"--ep 32 --moe-dispatcher flex --ep-overlap off",
	/* pipeline parallelism */
	"estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 32 --tp 4 --pp 4 --vpp 1",
	"estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4 --vpp 5",
	"estimate --model llama3-8b --gpus 24 --seq 4096 --gbs 48 --tp 8 --pp 3 --vpp 1",
	"advise --model llama3-70b --gpus 256 --seq 4096 --gbs 1024",
	"estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4 --vpp 2",
	"estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 8 --pp 2",
	"advise --model llama3.1-405b --gpus 256 --seq 4096 --gbs 1024",
	"advise --model gpt3-175b --gpus 64 --seq 2048 --gbs 64 --recompute none --fsdp off",
	/* memory */
	"advise --model mixtral-8x22b --cluster gb200-nvl72 --gpus 16 --seq 65536 --gbs 64",
	"estimate --model mixtral-8x7b --gpus 64 --seq 4096 --gbs 256 --tp 2 --pp 4 "
	"--recompute full",
	"estimate --model llama3-8b --gpus 8 --seq 8192 --gbs 64 --tp 2 --offload-layers 8",
	"estimate --model llama3-8b --cluster tests/fixtures/rules/gb200-nccl2.21.json --gpus 8 "
	"--seq 8192 --gbs 64 --tp 2 --offload-layers 8",
	"estimate --model llama3-8b --cluster tests/fixtures/rules/h100-1numa-nccl2.27.json "
	"--gpus 8 --seq 8192 --gbs 64 --tp 2 --offload-layers 8",
	"estimate --model llama3-8b --cluster gb200-nvl72 --gpus 8 --seq 8192 --gbs 64 --tp 2 "
	"--offload-layers 8",
	"estimate --model deepseek-v3 --gpus 1024 --seq 4096 --gbs 8192 --tp 2 --pp 16 --ep 8 "
	"--mbs 1 --pp-layout Et*2|(t*4|)*14t*3mL --recompute full --recompute-layers 1",
	/* host */
	"advise --model llama3-8b --gpus 8 --seq 4096 --gbs 64",
	"estimate --model qwen3-30b-a3b --gpus 8 --seq 4096 --gbs 64",
	"estimate --model qwen3-30b-a3b --gpus 8 --seq 4096 --gbs 64 --ep 8 --cuda-graphs on",
	"estimate --model llama3-70b --cluster gb200-nvl72 --gpus 192 --seq 8192 --gbs 192 --tp 4 "
	"--pp 4",
	/* precision and fusions */
	"estimate --model llama3-8b --gpus 8 --seq 4096 --gbs 64 --ce-fusion off",
	"estimate --model llama3-70b --gpus 64 --seq 8192 --gbs 128 --tp 4 --pp 4 "
	"--grad-accum-fusion off",
	"estimate --model gpt3-175b --gpus 512 --seq 2048 --gbs 1536 --tp 8 --pp 8 "
	"--attention unfused",
	"estimate --model tests/fixtures/models/mlm-gpt-nobias.json --gpus 8 --seq 2048 --gbs 64",
	/* diagnose */
	"facts tests/fixtures/findings/tracelens-bert-h100.json",
	"facts tests/fixtures/findings/dlrm-8rank.json",
};

#define NJOBS ((int)(sizeof(jobs) / sizeof(jobs[0])))

static struct mt_ruleset *bundled;
static int used[NCLAIMS];
static int lies; /* messages whose stated fact does not hold */

static int setup(void **state)
{
	(void)state;
	bundled = mt_ruleset_new();
	if (!bundled || mt_ruleset_add_bundled(bundled) || mt_ruleset_finish(bundled))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	mt_ruleset_free(bundled);
	return 0;
}

/* The fact of row c with $N replaced by the N-th group of the match. */
static struct mt_expr *fact_of(const struct claim *c, const char *msg, const regmatch_t *g, int ng,
			       struct sbuf *src)
{
	struct mt_cerr ce;
	struct mt_expr *e;
	const char *p;

	sbuf_reset(src);
	for (p = c->holds; *p; p++) {
		int n = p[0] == '$' && p[1] >= '1' && p[1] <= '9' ? p[1] - '0' : 0;

		if (!n) {
			sbuf_addc(src, *p);
			continue;
		}
		if (n >= ng || g[n].rm_so < 0)
			fail_msg("%s: '%s' has no group %d", c->rule, c->says, n);
		sbuf_add(src, msg + g[n].rm_so, (size_t)(g[n].rm_eo - g[n].rm_so));
		p++;
	}
	e = mt_expr_compile(src->buf, src->len, &ce);
	if (!e)
		fail_msg("%s: '%s': %s at column %d", c->rule, src->buf, ce.msg, ce.col);
	return e;
}

/* Every row that a fired rule's message matches holds on the candidate. */
static void check_fired(const char *job, const struct mt_explain *x, const struct mt_env *env)
{
	struct sbuf src = SBUF_INIT;
	regmatch_t g[10];
	int i, k;

	for (i = 0; i < x->n; i++) {
		const struct mt_fired *f = &x->v[i];

		if (mt_test_verbose())
			print_message("  %s: %s\n", f->rule->id, f->message);
		for (k = 0; k < NCLAIMS; k++) {
			const struct claim *c = &claims[k];
			struct mt_expr *e;
			regex_t re;
			int hit;

			if (c->rule && strcmp(c->rule, f->rule->id))
				continue;
			if (regcomp(&re, c->says, REG_EXTENDED))
				fail_msg("row %d: bad pattern '%s'", k, c->says);
			hit = !regexec(&re, f->message, 10, g, 0);
			if (hit) {
				e = fact_of(c, f->message, g, (int)re.re_nsub + 1, &src);
				if (!mt_expr_true(e, env)) {
					print_message(
						"%s\n  %s says \"%s\"\n  which is not true of "
						"this candidate: %s\n",
						job, f->rule->id, f->message, src.buf);
					lies++;
				}
				mt_expr_free(e);
				used[k]++;
			}
			regfree(&re);
		}
	}
	sbuf_release(&src);
}

/* Read the job's words into j (and the model and cluster names). */
static void parse_job(char *words, struct mt_job *j, struct mt_layout *layout, const char **model,
		      const char **cluster)
{
	char *w, *v, *save = NULL, want[128];
	int k, n;

	mt_job_init(j);
	j->top_k = 1;
	*cluster = "dgx-h100";
	for (w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		v = strtok_r(NULL, " ", &save);
		if (!v || strncmp(w, "--", 2))
			fail_msg("'%s': an option and its value expected", w);
		w += 2;
		if (!strcmp(w, "model")) {
			*model = v;
		} else if (!strcmp(w, "cluster")) {
			*cluster = v;
		} else if (!strcmp(w, "gpus")) {
			j->gpus = atoi(v);
		} else if (!strcmp(w, "seq")) {
			j->seq = atoi(v);
		} else if (!strcmp(w, "gbs")) {
			j->gbs = atoll(v);
		} else if (!strcmp(w, "precision")) {
			assert_true((j->precision = mt_precision_parse(v)) >= 0);
		} else if (!strcmp(w, "attention")) {
			j->attn_impl = strcmp(v, "unfused") ? MT_ATTN_FLASH : MT_ATTN_UNFUSED;
		} else if (!strcmp(w, "grad-accum-fusion")) {
			j->grad_accum_fusion = !strcmp(v, "on");
		} else if (!strcmp(w, "pp-layout")) {
			struct mt_error err = MT_ERROR_INIT;

			if (mt_layout_parse(v, layout, &err))
				fail_msg("%s", err.msg);
			j->pins.layout = layout;
		} else if ((k = mt_knob_by_cli(w)) >= 0) {
			if (mt_knob_parse(k, v, &n, want, sizeof(want)))
				fail_msg("--%s %s: %s expected", w, v, want);
			mt_knob_set_pin(j, k, n);
		} else {
			fail_msg("--%s: not an option this test reads", w);
		}
	}
}

/* One job: explain its candidate and check every claim its rules make. */
static void run_job(const char *spec)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_rules_run *run = NULL;
	struct mt_search_result *res;
	struct mt_cluster *c = NULL;
	struct mt_layout layout;
	struct mt_explain x;
	struct mt_model m;
	struct mt_job j;
	struct mt_eval e;
	struct mt_config cfg;
	const char *model = NULL, *cluster = NULL;
	char words[512];
	int advise = !strncmp(spec, "advise ", 7);

	if (mt_test_verbose())
		print_message("%s\n", spec);
	assert_true(strlen(spec) < sizeof(words));
	snprintf(words, sizeof(words), "%s", strchr(spec, ' ') + 1);
	parse_job(words, &j, &layout, &model, &cluster);
	if (!model || !j.gpus || !j.seq || !j.gbs)
		fail_msg("%s: --model, --gpus, --seq and --gbs expected", spec);
	if (mt_model_load(model, &m, &err) || mt_cluster_load(cluster, &c, &err))
		fail_msg("%s: %s", spec, err.msg);
	if (mt_rules_start(bundled, &m, c, &j, &run, &err))
		fail_msg("%s: %s", spec, err.msg);
	if (advise) {
		res = calloc(1, sizeof(*res));
		assert_non_null(res);
		if (mt_search(&m, c, &j, run, res, &err))
			fail_msg("%s: %s", spec, err.msg);
		if (!res->ntop)
			fail_msg("%s: nothing fits", spec);
		assert_int_equal(mt_rules_explain(run, &res->top[0], 1, (int)res->feasible,
						  res->top[0].time.step, &x),
				 0);
		free(res);
	} else {
		mt_knobs_estimate_config(&j, &cfg);
		if (mt_evaluate(&m, c, &j, run, &cfg, &e, &err))
			fail_msg("%s: %s", spec, err.msg);
		assert_int_equal(mt_rules_explain(run, &e, 0, -1, 0, &x), 0);
	}
	check_fired(spec, &x, mt_rules_env(run));
	mt_explain_free(&x);
	mt_rules_end(run);
	mt_cluster_free(c);
}

/* A facts file, as `rules check --facts` reads it. */
static void run_facts(const char *spec)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_val facts[MT_F_N];
	unsigned char given[MT_F_N];
	char *strings = NULL;
	struct mt_explain x;
	struct mt_env env;
	int skipped;

	if (mt_facts_read(strchr(spec, ' ') + 1, facts, given, &strings, &err))
		fail_msg("%s: %s", spec, err.msg);
	assert_int_equal(mt_rules_on_facts(bundled, facts, given, NULL, &x, &skipped), 0);
	memset(&env, 0, sizeof(env));
	env.facts = facts;
	check_fired(spec, &x, &env);
	mt_explain_free(&x);
	free(strings);
}

static void every_stated_fact_holds(void **state)
{
	int i, k, missing = 0;

	(void)state;
	for (i = 0; i < NJOBS; i++) {
		if (!strncmp(jobs[i], "facts ", 6))
			run_facts(jobs[i]);
		else
			run_job(jobs[i]);
	}
	for (k = 0; k < NCLAIMS; k++)
		if (!used[k]) {
			print_message("no job's %s message says '%s'\n",
				      claims[k].rule ? claims[k].rule : "rule", claims[k].says);
			missing++;
		}
	assert_int_equal(lies, 0);
	assert_int_equal(missing, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_stated_fact_holds),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
