/* SPDX-License-Identifier: MIT */
/* attention (library-internal): what the two halves of the CUDA attention
 * probe share: attention.cu (the ops, the reference kernels, verification)
 * and attention_graph.cu (the cuDNN backend graphs and their plans).  The
 * method and the tensors are described at the top of attention.cu. */
#ifndef MT_CUDA_ATTENTION_H
#define MT_CUDA_ATTENTION_H

#include "dl.h"

#define ATTN_MAX_DESC 1024
#define ATTN_MAX_CFG 8
#define ATTN_MAX_OPS 64
#define ATTN_TARGET_S 0.010
#define ATTN_ROWS 8
#define ATTN_COLS 4
#define ATTN_MAX_D 256

enum { U_Q = 1, U_K, U_V, U_O, U_STATS, U_SCALE, U_DO, U_DQ, U_DK, U_DV, U_NEGINF, U_ONE, U_SSUM,
       U_DQACC, U_VIRT = 1000 };

struct attn_plan {
	cudnnBackendDescriptor_t plan, pack;
	void *ws;
	int64_t ws_bytes, engine;
	int unified;          /* 1 unified SDPA node, 0 composite graph */
	int heur_fallback;    /* 1 when the FALLBACK heuristics found it */
	int unified_failed;   /* unified was tried and failed */
};

struct attn_state {
	int dev, b, h, hk, d, s, causal, bwd, ver;
	size_t nq, nk;                       /* elements of Q (= O, dO, dQ) and K (= V, dK, dV) */
	cudnnHandle_t handle;
	struct mtc_timer tm;                 /* stream, events, spin gate */
	void *q, *k, *v, *o, *stats, *dout, *dq, *dk, *dv, *dqacc, *ssum;
	float *scratch, *vout;
	size_t scratch_n;
	float scale, neginf, one;
	struct attn_plan fwd, bwdp;
	cudnnBackendDescriptor_t desc[ATTN_MAX_DESC];
	int ndesc;
	int64_t next_uid;
	double verify_worst;
	int nogate;           /* a gated trial blocked the host: time without the gate */
};

/* Fill err from a failed cuDNN call `what`; returns the status (cuDNN's
 * not-supported family is MT_EUNSUPPORTED, allocation failures MT_ENOMEM). */
int attn_dn_fail(struct mt_error *err, const char *what, cudnnStatus_t stt);
/* Build the forward (bwd 0) or backward plan of the case in s->fwd or
 * s->bwdp: the unified SDPA node where it applies, else (or when it fails)
 * the composite graph.  Descriptors go to s->desc until teardown. */
int attn_build(struct attn_state *s, int bwd, struct mt_error *err);
/* Queue one execution of plan p on the case's stream. */
int attn_exec(struct attn_state *s, struct attn_plan *p, struct mt_error *err);

#endif
