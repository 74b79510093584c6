/* SPDX-License-Identifier: MIT */
/* constants: every constant of the memory and time model, in one place.
 *
 * Each is documented in docs/MODEL.md section 6 with its source: a published
 * figure, a property of the software (Megatron-LM, Transformer Engine, NCCL,
 * PyTorch), or a calibration against the published tables in
 * tests/fixtures/published/ (say which).  Measured numbers of a cluster belong
 * in its profile, not here.
 */
#ifndef MT_CONSTANTS_H
#define MT_CONSTANTS_H

/* Share of an overlapped TP collective that stays exposed (the first chunk of a
 * split GEMM cannot be hidden). */
#define MT_TP_OVERLAP_KAPPA 0.15
/* Share of the measured STREAM-triad bandwidth that element-wise training
 * kernels (norms, activations, residual adds, casts, permutations) reach. */
#define MT_ELEM_EFFICIENCY 0.70
/* Idle GPU time between two dependent kernels on one stream (µs). */
#define MT_KERNEL_GAP_US 1.5
/* Slowdown of compute per second of communication hidden under it: the
 * communication kernels take SMs and HBM bandwidth (NCCL uses 16-32 CTAs). */
#define MT_COMM_SM_SLOWDOWN 0.15
/* GEMMs a pipelined reduce-scatter overlap runs in (Transformer Engine
 * initialize_ub: num_splits 4 for the "pipeline" method; docs/MODEL.md 5.1). */
#define MT_TP_OVERLAP_RS_SPLITS 4
/* Time added to fused attention (forward and backward) by attention dropout
 * (docs/MODEL.md 4.2): TransformerEngine issue 3312, bf16, 4096 tokens, 16
 * heads of 128, sbhd, the cuDNN backend: H200 0.594 -> 0.614 ms, B300 0.480
 * -> 0.525 ms at p = 0.1. */
#define MT_ATTN_DROPOUT_HOPPER 0.034
#define MT_ATTN_DROPOUT_BLACKWELL 0.094
/* Rate of block-scaled FP8 GEMMs over per-tensor FP8 GEMMs of the same shape
 * (docs/MODEL.md 4.9), from Transformer Engine's GEMM-profiling guide (PR
 * 2863, docs/examples/gemm_profiling: 12 GEMMs of a layer of hidden 4096,
 * FFN 16384, 15872 tokens): on B300 the pre-quantised GEMMs of a layer take
 * 7.161 ms in MXFP8 and 6.812 ms per tensor (0.951); on H200 block-wise FP8
 * takes 22.882 ms with its quantisation against 20.285 ms per tensor, whose
 * quantisation took 3.50 ms (20.285 - 16.785) for 6 bytes an element: at
 * that bandwidth block-wise's 4.06 bytes take 2.37 ms, leaving 20.51 ms of
 * GEMMs against 16.785 (0.82).  Block-wise FP8 on Blackwell runs as MXFP8. */
#define MT_GEMM_RATE_MXFP8 0.951
#define MT_GEMM_RATE_BLOCKWISE_HOPPER 0.82
/* Backward element-wise traffic relative to the forward's. */
#define MT_ELEM_BWD_FACTOR 2.0
/* Share of exposed layer communication on the forward pass. */
#define MT_COMM_FWD_SHARE 0.4

/* Rate of causal attention per executed FLOP relative to the non-causal rate a
 * profile measured (diagonal tiles are partly masked, rows do unequal work). */
#define MT_CAUSAL_ATTN_EFFICIENCY 0.80
/* Share of the EP communication the 1F1B overlap's schedule could hide that
 * concurrent kernels do hide (docs/MODEL.md 5.3): Megatron-Bridge pull
 * request 5094's Nsight Systems profiles (16 H100, Qwen3-30B-A3B BF16,
 * HybridEP, EP16, PP 1) show 0.11% of the communication hidden by compute
 * without the overlap and 36.55% with it, where every piece had compute
 * enough beside it to hide all of it. */
#define MT_EP_OVERLAP_HIDDEN 0.3655
/* The router's skew between experts (docs/MODEL.md 5.3): the coefficient of
 * variation of the experts' shares of the routed tokens, beside the chance of
 * routing itself.  An auxiliary loss trained from scratch: Wang et al.,
 * "Auxiliary-Loss-Free Load Balancing Strategy for Mixture-of-Experts"
 * (arXiv 2408.15664) Table 2, 64 experts top-6 with the auxiliary loss,
 * MaxVio_global 0.72 (1B) and 0.52 (3B): the largest of 64 shares, 2.342
 * standard deviations above the mean (mt_normal_max(64)), puts c at 0.31 and
 * 0.22, mean 0.26.  A released router (fine-tuning or continued pre-training
 * of Qwen3, trained with global-batch balancing): the Megatron-MoE-ModelZoo
 * long-context rows of Qwen3-235B-A22B on 256 H100 (forced balance against
 * dropless at 16k to 128k tokens, tests/fixtures/published/effects.json),
 * which load the released checkpoint (run_235b.sh: PRETRAIN=0): fitted to
 * those four pairs (least squares of their ratios: 1.8, each within 2%;
 * 1.0, the skew their step times imply with the real run's share of MoE
 * time, leaves them 4-9% short, megatune's attention at 16k-128k tokens being
 * slower than that run's, docs/MODEL.md 8.2), so they do not check it. */
#define MT_MOE_SKEW_AUX 0.26
#define MT_MOE_SKEW_PRETRAINED 1.8
/* The dispatcher's token buffers (docs/MODEL.md 4.8).  Dropless, they are
 * sized by the tokens routed: the allocator's peak sees the busiest of the
 * EP ranks' loads over the step's dispatches, at most
 * MT_MOE_PEAK_DRAWS of them counted (the table of mt_normal_max ends there:
 * 3.58 standard deviations; a normal's largest of a million draws would be
 * 4.9, and the normal approximation of a bounded load is not meant for
 * such tails). */
#define MT_MOE_PEAK_DRAWS 4096
/* DeepEP's normal-mode buffers, which Megatron-Core's flex dispatcher sizes
 * with the larger of Buffer.get_dispatch_config and get_combine_config's
 * size hints (megatron/core/transformer/moe/fused_a2a.py @ d98e8a6 36-68;
 * DeepEP v1.2.1 deep_ep/buffer.py:220-273, csrc/config.hpp:44-95): per
 * channel (half the SMs; Megatron-Core's default 20 SMs,
 * token_dispatcher.py:1287-1292) and NVLink peer (at most 8,
 * csrc/kernels/configs.cuh:3) a ring of received tokens of
 * MT_DEEPEP_NVL_SLOTS_8 slots up to 8 ranks, _64 up to 64, _128 at 128 and
 * _MAX beyond; per other node MT_DEEPEP_RDMA_SLOTS slots (128, aligned up to
 * the chunk sent: 140 at 16 and 64 ranks, 132 at 128 and beyond, 128 at 24
 * and 32: the largest), sent and received; each slot the token in BF16 and
 * MT_DEEPEP_SLOT_META bytes: its source (8, csrc/kernels/internode.cu:17-42),
 * room for 128 top-k indices (int64) and weights (FP32) and 128 FP32
 * scales. */
#define MT_DEEPEP_SMS 20
#define MT_DEEPEP_NVL_PEERS 8
#define MT_DEEPEP_NVL_SLOTS_8 256
#define MT_DEEPEP_NVL_SLOTS_64 288
#define MT_DEEPEP_NVL_SLOTS_128 560
#define MT_DEEPEP_NVL_SLOTS_MAX 720
#define MT_DEEPEP_RDMA_SLOTS 140
#define MT_DEEPEP_SLOT_META (8 + 128 * 8 + 128 * 4 + 128 * 4)
/* HybridEP's buffers (DeepEP hybrid-ep branch @ 94a9f8f6b1: Megatron-Core
 * passes the rank's tokens as max_num_of_tokens_per_rank, fused_a2a.py @
 * d98e8a6 281-345): inside the NVLink domain one buffer for the worst case,
 * every token of the group sent to one rank (csrc/hybrid_ep/buffer/
 * intranode.cu:126-130), shared by the dispatch and the combine
 * (use_shared_buffer, deep_ep/hybrid_ep_buffer.py:51): per token the BF16
 * token, an FP32 probability for each expert of the domain and an FP32 scale
 * per MT_HYBRIDEP_SCALE_BLOCK elements (intranode.cu:195-261); across domains
 * (internode_doca.cu:383-425, 557-585) the rank's own tokens with the
 * probability of every expert and their scales, and for each other domain
 * three BF16 copies with their probabilities (the dispatch's staging, the
 * combine's reduction and its staging) and the dispatch's scales. */
#define MT_HYBRIDEP_SCALE_BLOCK 128
/* The host timeline (docs/MODEL.md 5.8, perfmodel/host.h).  CPU time of one op
 * of each class when the profile's host section does not give it, for the
 * x86 hosts of DGX H100 and B200 (µs):
 *   an eager PyTorch op: torch.nn.Linear forward on a DGX H100 (Xeon
 *   Platinum 8480C), 13.48 µs (TransformerEngine issue #2053, 2025-08);
 *   a Transformer Engine module call: that te.Linear over
 *   torch.nn.Linear on Grace, 2.7x (GB200 99.66 against 37.08 µs, GH200
 *   90.53 against 33.17), applied to the x86 figure (derived);
 *   with a quantised recipe TE's linear modules cost twice that
 *   (TransformerEngine issue #761: an FP8 te.Linear takes "more than 2x" the
 *   BF16 scheduling time);
 *   a graphed callable replayed: MT_GRAPH_CALL_US;
 *   a device synchronisation: the copy of the counts and the wake-up of the
 *   waiting thread (megatune's estimate). */
#define MT_HOST_EAGER_US 13.5
#define MT_HOST_TE_US 36.0
#define MT_HOST_TE_FP8 2.0
#define MT_HOST_SYNC_US 20.0
/* The autograd engine runs the backward of eager ops in C++, without the
 * Python layer: a share of their forward cost.  TE modules' backward is a
 * Python autograd function and costs as much as the forward call. */
#define MT_HOST_BWD_EAGER 0.5
/* The ops the host issues per layer and micro-batch, forward, by region
 * (Megatron-Core core_v0.15.0 with Transformer Engine, read from the code:
 * transformer_layer.py, attention.py, moe_layer.py, router.py,
 * token_dispatcher.py, experts.py):
 *   attention: TE LayerNormLinear (QKV) and RowParallelLinear (projection),
 *   DotProductAttention; q and k norms where the model has them (2 TE
 *   modules); eager: rotary embedding of q and k, views and splits,
 *   bias-dropout-add (10; +4 with TP for the sequence-parallel reshapes,
 *   +4 per CP rank for the ring's steps);
 *   dense MLP: 2 TE linears, eager: activation and bias-dropout-add (3);
 *   router: the pre-MLP norm (TE), eager: gating GEMM, FP32 cast, top-k,
 *   softmax, the load-balancing loss and its scaler, token counts (16);
 *   preprocessing: the all-to-all dispatcher's sums, all-gather of the
 *   counts and copies to the host (12), the flex and allgather dispatchers'
 *   metadata (6);
 *   dispatch: permutation, the collective, the chunk sort (4);
 *   experts: 2 TE grouped linears, eager: activation, probabilities,
 *   un-padding, counts (4); per local expert and GEMM, the cuBLAS call, the
 *   quantisation of its input, its output and scale allocations and the
 *   split (TransformerEngine issue #1499: torch.split and 2 torch.empty per
 *   GEMM in the grouped GEMM's cast), counted as MT_HOST_EXPERT_GEMM_OPS
 *   eager ops; with FP8 or FP4 each expert's input is padded (Fp8Padding:
 *   2 eager ops per expert); 2 GEMMs per expert forward, 4 backward
 *   (data and weight gradients), each called from TE's Python backward;
 *   shared experts: 2 TE linears;
 *   combine: un-permutation, the collective, bias-dropout-add (5). */
#define MT_HOST_ATTN_EAGER 10
#define MT_HOST_MLP_EAGER 3
#define MT_HOST_ROUTER_EAGER 16
#define MT_HOST_PRE_A2A_EAGER 12
#define MT_HOST_PRE_FLEX_EAGER 6
#define MT_HOST_DISPATCH_EAGER 4
#define MT_HOST_EXPERTS_EAGER 4
#define MT_HOST_COMBINE_EAGER 5
#define MT_HOST_EXPERT_GEMM_OPS 5
#define MT_HOST_EXPERT_PAD_OPS 2

/* Megatron-LM's own layers as PyTorch eager kernels (docs/MODEL.md 4.11,
 * perfmodel/eager.c).  The share of the achieved HBM bandwidth (the profile's
 * STREAM triad, 2970 GB/s on an H100 80GB HBM3) each kind of eager kernel
 * reached on one H100 with PyTorch 2.11, from the campaign's torch.profiler
 * trace of a small GPT (tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2/
 * trace-kineto, scripts/gpu/tinygpt.py: 8 x 1024 tokens, d 768), bytes read
 * and written over the kernel's mean duration:
 *   VEC: GeLU's forward, bf16 [8192 x 3072] read and written, 100.7 MB in
 *   38.95 us (0.870);
 *   BCAST: the token embedding plus the positions broadcast over the batch
 *   (FP32 [8192 x 768] + [1024 x 768]), 53.5 MB in 23.95 us (0.752);
 *   STRIDED: the clone of the permuted QKV gradient, bf16 37.7 MB read and
 *   written in 59.88 us (0.425);
 *   CAT: torch.stack of the q, k, v gradients, 75.5 MB in 73.76 us (0.345);
 *   REDUCE: the bias gradients' sums over the tokens, 679 MB a step in
 *   584.6 us (0.391);
 *   NORM: LayerNorm's forward, FP32 [8192 x 768], 50.3 MB in 27.31 us (0.621);
 *   SOFTMAX_FWD, _BWD: log_softmax over [8192 x 8192] FP32, 537 MB in
 *   261.45 us (0.691) and its backward 805 MB in 266.93 us (1.016, taken as
 *   the STREAM figure). */
#define MT_EAGER_BW_VEC 0.870
#define MT_EAGER_BW_BCAST 0.752
#define MT_EAGER_BW_STRIDED 0.425
#define MT_EAGER_BW_CAT 0.345
#define MT_EAGER_BW_REDUCE 0.391
#define MT_EAGER_BW_NORM 0.621
#define MT_EAGER_BW_SOFTMAX_FWD 0.691
#define MT_EAGER_BW_SOFTMAX_BWD 1.0
/* Host time to issue one kernel of an eager layer, forward and backward
 * (µs): the campaign's PyTorch eager Llama layer (host-cost.json of the same
 * fixture, scripts/gpu/host_cost.py: h 4096, 4096 tokens, GPU kept busy),
 * 554.5 µs of CPU for the 24 kernels of its forward, 3607.0 - 554.5 µs for
 * the 62 of its backward. */
#define MT_EAGER_HOST_FWD_US 23.1
#define MT_EAGER_HOST_BWD_US 49.2
/* Megatron-LM's native fused cross-entropy (--cross-entropy-loss-fusion
 * without Transformer Engine; fusions/fused_cross_entropy.py @ d98e8a6,
 * torch.compile'd), bytes per logit: forward the FP32 copy with its maximum
 * (read 2, write 4), the shifted exponentials in place (8), their division
 * by the sum in place (8); backward the gradient in place (8) and its bf16
 * copy (2).  It keeps the FP32 softmax (4) for the backward. */
#define MT_CE_NATIVE_FWD_BYTES 22.0
#define MT_CE_NATIVE_BWD_BYTES 10.0
#define MT_CE_NATIVE_SAVED_BYTES 4.0
/* Its peak holds one FP32 copy of the logits more than the unfused loss's
 * (docs/MODEL.md 4.8): the compiled functions update their inputs in place
 * (the max subtracted, exp(out=), div_, the gradient's mul_), which
 * torch.compile's functionalisation writes to new buffers beside them.
 * Measured: 4.0 bytes a logit more in max allocated than without the fusion
 * (Megatron-LM's CI, gpt3_mcore_te_tp2_pp2_cross_entropy_loss_fusion on H100:
 * 1753 against 1362 MiB, 4096 x 25152 logits; the GPU campaign's c1 and c2,
 * 2030 and 1024 MiB over the model before it, 16384 and 8192 x 32000). */
#define MT_CE_NATIVE_COPY_BYTES 4.0

/* GPU time per offloaded layer and micro-batch for the offload context's
 * stream waits and buffer bookkeeping (µs). */
#define MT_OFFLOAD_LAYER_US 50.0

/* Host time of one training iteration outside forward and backward: the
 * optimizer's Python loop, gradient-norm and loss reductions (each a device
 * synchronisation), data-loader hand-off, logging (s). */
#define MT_STEP_OVERHEAD_S 0.025
/* Full-iteration CUDA graphs are taken where they remove more exposed host
 * time than this share of the step (docs/MODEL.md 5.10): below it the
 * flags (and the NaN check they turn off) buy nothing the model can see. */
#define MT_FULL_GRAPH_GAIN 0.005

/* Memory terms outside the PyTorch tensors of the model (bytes). */
#define MT_CUDA_CONTEXT_BYTES (0.6 * 1073741824.0)
/* GEMM workspaces, tensors of the caching allocator held from their first
 * GEMM on (docs/MODEL.md 4.8).  PyTorch keeps one cuBLAS workspace per
 * handle and stream (CUBLAS_WORKSPACE_CONFIG; default ":4096:8", 32 MiB, on
 * compute capability 9 and newer, ":4096:2:16:8" before), and a training
 * step runs GEMMs from two threads, each with its own handle: the forward's
 * and autograd's device thread (the GPU campaign's runs without Transformer
 * Engine hold 66 MiB besides their tensors, Megatron-LM's CI runs on H100
 * 96-110 MiB with Transformer Engine's).  Transformer Engine keeps one more,
 * get_cublas_workspace_size_bytes(): 32 MiB + 1 KiB from compute capability
 * 9, 4 MiB before (TransformerEngine d0067d0 pytorch/cpp_extensions/
 * gemm.py:40-67); its grouped GEMM one per compute stream,
 * nvte_get_num_compute_streams() = 4 (common/util/multi_stream.cpp:53), and
 * userbuffers' overlapped GEMMs three (_NUM_MAX_UB_STREAMS). */
#define MT_TORCH_CUBLAS_WS_BYTES (32.0 * 1048576.0)
#define MT_TORCH_CUBLAS_WS_AMPERE_BYTES (4096.0 * 1024 * 2 + 16.0 * 1024 * 8)
#define MT_TORCH_CUBLAS_HANDLES 2
#define MT_TE_CUBLAS_WS_BYTES (32.0 * 1048576.0 + 1024)
#define MT_TE_CUBLAS_WS_AMPERE_BYTES (4.0 * 1048576.0)
#define MT_TE_GROUPED_GEMM_STREAMS 4
#define MT_TE_UB_STREAMS 3
/* NCCL buffers per channel of one communicator: SIMPLE 4 MiB + LL128 ~4.6 MiB
 * + LL 256 KiB, for the send and the receive side. */
#define MT_NCCL_CHANNEL_BYTES (2 * 8.9 * 1048576.0)
#define MT_NCCL_CHANNELS_NVLINK 32
#define MT_NCCL_CHANNELS_NETWORK 16
/* Caching-allocator slack, as a share of activation-like memory. */
#define MT_FRAGMENTATION 0.05

/* Adam step: bytes moved per parameter on the GPU (fp32 grad read, fp32 master
 * read+write, two fp32 moments read+write, bf16 parameter write, grad-norm
 * read, grad zeroing). */
#define MT_ADAM_BYTES_PER_PARAM 38.0
/* The precision-aware optimizer's step (docs/MODEL.md 4.8, perfmodel/optim.h):
 * HBM bytes per parameter of Transformer Engine's FusedAdam.step()
 * (transformer_engine/pytorch/optimizers/fused_adam.py @ 04912bf024), which
 * runs the FP32 kernel on FP32 copies of every low-precision state: per
 * state, get_unscaled_state() (bf16: .float(), read 2 write 4; fp16:
 * .float().mul_(scale), 2+4 and 4+4; fp8: dequantise, 1+4), the kernel's
 * read and write (4+4), then _apply_scale() (bf16: .bfloat16() 4+2 and
 * copy_ 2+2; fp16: aminmax 4, mul_ 4+4, copy_ 4+2; fp8: aminmax 4, quantise
 * 4+1).  An FP32 state is the kernel's read and write alone. */
#define MT_ADAM_STATE_FP32 8.0
#define MT_ADAM_STATE_BF16 24.0
#define MT_ADAM_STATE_FP16 40.0
#define MT_ADAM_STATE_FP8 22.0
/* FP32 master weights kept as their low 16 bits beside the BF16 weight
 * (store_param_remainders, Megatron-Core's default with Transformer Engine
 * 2.1 or newer: optimizer_config.py @ d98e8a64dd line 192): the remainder
 * read and written and the weight read (multi_tensor_adam_param_remainder) */
#define MT_ADAM_REMAINDER 6.0
/* The gradient's passes of a step (the kernel's read, the norm's read, the
 * zeroing), and the BF16 weight written, per parameter and byte of it */
#define MT_ADAM_GRAD_PASSES 3.0
#define MT_ADAM_PARAM_WRITE 2.0

/* The optimizer step Megatron-LM d98e8a6 falls back to without Transformer
 * Engine and Apex (docs/MODEL.md 4.11, perfmodel/eager_opt.c), bytes per
 * parameter, FP32 unless said:
 *   the gradient norm (clip_grads.py get_grad_norm_fp32 through
 *   utils.py local_multi_tensor_l2_norm): one torch.norm per tensor, the
 *   gradient read (4);
 *   torch.optim.AdamW, foreach by default on CUDA (torch/optim/adam.py
 *   _multi_tensor_adam, decoupled weight decay, capturable off): the
 *   parameters' decay _foreach_mul_ (8), _foreach_lerp_ of exp_avg with the
 *   gradient (12), _foreach_mul_ of exp_avg_sq (8), _foreach_addcmul_ of
 *   it with the gradient squared (12), _foreach_sqrt into a new list (8),
 *   _foreach_div_ by the bias correction (8), _foreach_add_ of eps (8),
 *   _foreach_addcdiv_ into the parameters (16): 80;
 *   the rest of the step: the clipping (clip_grad_by_total_norm_fp32
 *   through utils.py local_multi_tensor_scale: dst.copy_(src * scale), 8
 *   and 8), the BF16 copy back (optimizer.py
 *   _copy_main_params_to_model_params: a copy_ per tensor under BF16, 6),
 *   the gradient buffer's zeroing (4): 26. */
#define MT_TORCH_ADAM_BYTES 80.0
#define MT_OPT_FALLBACK_NORM_BYTES 4.0
#define MT_OPT_FALLBACK_REST_BYTES 26.0
/* ... and the eager ops it issues per parameter tensor after the norm's:
 * the clipping's multiply and copy_, the copy back. */
#define MT_OPT_FALLBACK_OPS 3
/* Host time of one tiny PyTorch eager op (µs): the campaign's add_ on one
 * element in a Python loop (host-cost.json tiny_op_cpu_us, 8.216 µs,
 * scripts/gpu/host_cost.py, tests/fixtures/gpu/2026-11-28-nvidia-h100-80gb-hbm3-2). */
#define MT_EAGER_HOST_TINY_US 8.2

/* CUDA graphs (docs/MODEL.md 5.10): host time of one graphed callable, the
 * Python autograd function and cudaGraphLaunch (µs, megatune's estimate), and
 * the callables per layer and micro-batch (attention and MLP or router,
 * forward and backward). */
#define MT_GRAPH_CALL_US 20.0
#define MT_GRAPH_CALLS_PER_LAYER 4
/* Input gradients of per-layer graphs left alive at once: Transformer
 * Engine's make_graphed_callables releases each layer's when the next one's
 * backward is captured, and a chunk's last one when the next chunk's first
 * is (transformer_engine/pytorch/graph.py @ v2.10 567-598, with
 * _reuse_graph_input_output_buffers, which Megatron-Core sets from TE 2.7:
 * cuda_graphs.py @ d98e8a6 2684-2686).  The rest of the static buffers are
 * the formula of perfmodel/graphs.c (docs/MODEL.md 5.10). */
#define MT_GRAPH_GRAD_INPUTS 2

/* Host memory and optimizer CPU offload (docs/MODEL.md 4.10). */
/* Share of a node's memory the training ranks may use: the kernel, the page
 * cache of the dataset's memory-mapped files and the file system keep the
 * rest (megatune's allowance). */
#define MT_HOST_USABLE 0.90
/* Resident host memory of one Megatron-LM rank besides what it offloads:
 * the Python interpreter with PyTorch, CUDA and NCCL host state, the
 * dataset's index arrays and the data-loader workers (megatune's estimate). */
#define MT_HOST_RANK_BYTES (8.0 * 1073741824.0)
/* Host Adam throughput of a node when the profile does not measure it
 * (host.optimizer_gparams_per_s) nor its memory bandwidth (host.memory_gbps):
 * MT_HOST_ADAM_BYTES per parameter at ~140 GB/s of two-socket DRAM bandwidth
 * (megatune's estimate). */
#define MT_HOST_ADAM_GPARAMS 5.0
/* DRAM bytes of one host Adam update: FP32 parameter, gradient and two
 * moments read (16), parameter and moments written (12). */
#define MT_HOST_ADAM_BYTES 28.0

/* Network curves derived from the NIC description (docs/MODEL.md 3.3), for a
 * profile without network measurements.  Latencies are NCCL's own tuning
 * model (src/graph/tuning.cc @ b6475625, Simple protocol): the base latency
 * of a ring, one NVLink step of a ring, one step of a tree (NVLink or
 * network); a network step of a ring is node.nic_latency_us. */
#define MT_NCCL_BASE_US 8.4
#define MT_NCCL_NVL_STEP_US 3.4
#define MT_NCCL_TREE_STEP_US 28.0
/* node.nic_latency_us when the profile does not give it: NCCL's network
 * step of a ring (hwLat[NET][RING][SIMPLE], the same file). */
#define MT_NIC_LATENCY_US 14.0
/* NCCL's tree all-reduce reaches this share of the ring's bandwidth
 * (tuning.cc: busBw * .92). */
#define MT_NCCL_TREE_BW 0.92
/* Shares of the NIC line rate the derived curves reach, fitted on dgx-h100's
 * 10-node nccl-tests sweeps (xxrjun-10node: the 80-rank all-reduce,
 * all-gather and reduce-scatter at 4, 8 and 16 GiB against 8 NICs of 50
 * GB/s; the 80-rank all-to-all against its bound L (n-1)/(n-k); send/recv
 * against one NIC from the one-GPU-per-node run, the pattern of pipeline
 * sends).  docs/MODEL.md 3.3 gives the fit and the cross-checks. */
#define MT_NET_EFF_RING 0.81
#define MT_NET_EFF_A2A 0.92
#define MT_NET_EFF_P2P 0.50
/* Per-GPU network line rate assumed for a profile that describes no NICs
 * (nics_per_node 0), GB/s: one 100 Gb/s port. */
#define MT_NIC_GBPS_UNKNOWN 12.5
/* Bytes per parameter of the offloaded optimizer: FP32 master weight and two
 * FP32 moments (12), and the FP32 gradient copied to the host (4). */
#define MT_OPT_HOST_BYTES 16.0

/* The band of a prediction (docs/MODEL.md 8.1).  The model-wide error of its
 * kind: the root mean square of the errors of docs/MODEL.md section 8's table
 * (known gaps left out), dense rows and MoE rows (tests/unit/t-published.c
 * recomputes both and checks these). */
#define MT_BAND_BASE_DENSE 0.046
#define MT_BAND_BASE_MOE 0.100
/* Relative uncertainty of each term by where its figure comes from: a GEMM
 * curve measured for the dtype or scaled from another; attention (published
 * FlashAttention rates, the direction often unstated); element-wise traffic
 * (a share of STREAM); kernel gaps and SM sharing; exposed communication on a
 * measured or a derived curve; token dispatch (published DeepEP/HybridEP
 * tables or an all-to-all curve); offload copies; the pipeline bubble; the
 * optimizer step.  A measured GEMM curve is a burst on an idle GPU: on one
 * H100 the same GEMM ran 4.8-12.8% slower beside a copy kernel (docs/MODEL.md
 * 11.1), so it is not trusted closer than that.  Overlapped communication
 * may surface: up to MT_U_HIDDEN of what the model hides.  The host
 * timeline's per-op costs (5.8) are published figures of other hosts and
 * software releases: MT_U_HOST either way. */
#define MT_U_GEMM_MEASURED 0.13
#define MT_U_GEMM_DERIVED 0.15
#define MT_U_ATTENTION 0.15
#define MT_U_ELEMENTWISE 0.20
#define MT_U_GPU_OVERHEAD 0.50
#define MT_U_COMM_MEASURED 0.20
#define MT_U_COMM_DERIVED 0.35
#define MT_U_DISPATCH 0.35
#define MT_U_OFFLOAD 0.30
#define MT_U_BUBBLE 0.20
#define MT_U_OPTIMIZER 0.30
#define MT_U_HIDDEN 0.25
#define MT_U_HOST 0.5
/* The least uncertainty a published A/B pair leaves on the gain it backs
 * (perfmodel/effects.h): the controls of the effects table, one recipe in two
 * releases of a container, differ by up to 1.8% (DeepSeek-V3 on 256 GB200,
 * NeMo 26.02 and 26.02.01: 1028 and 1046 TFLOP/s per GPU,
 * tests/fixtures/published/effects.json). */
#define MT_EFFECT_NOISE_FLOOR 0.018

#ifdef MT_TEST_KNOB
/* The test knob (job/knobs.def, tests/cli/knob-row.sh): its slot, the last
 * (real knobs take theirs from 0; t-knobs checks each has its own), and its
 * cost, each step of its value away from the best taking this long */
#define MT_TEST_KNOB_SLOT (MT_KNOB_EXTRA - 1)
#define MT_TEST_KNOB_BEST 5
#define MT_TEST_KNOB_S 0.05
#endif

#endif
