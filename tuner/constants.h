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

/* CPU time to issue one kernel from PyTorch eager mode when the profile has no
 * host measurement (µs). */
#define MT_HOST_OP_US_DEFAULT 9.0
/* Share of an overlapped TP collective that stays exposed (the first chunk of a
 * split GEMM cannot be hidden). */
#define MT_TP_OVERLAP_KAPPA 0.15
/* Slowdown of GEMMs per second of TP traffic hidden under them (the
 * communication kernels take SMs). */
#define MT_TP_OVERLAP_SLOWDOWN 0.10
/* Backward element-wise traffic relative to the forward's. */
#define MT_ELEM_BWD_FACTOR 2.0
/* Share of exposed layer communication on the forward pass. */
#define MT_COMM_FWD_SHARE 0.4

/* Memory terms outside the PyTorch tensors of the model (bytes). */
#define MT_CUDA_CONTEXT_BYTES (0.6 * 1073741824.0)
#define MT_WORKSPACE_BYTES (0.25 * 1073741824.0)
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

#endif
