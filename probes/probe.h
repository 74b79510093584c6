/* SPDX-License-Identifier: MIT */
/* probe: the probe harness shared by every probe (nccl-tests and fio are the
 * models), the static registry, and the contract a probe implements.
 *
 * A probe is an ops table per backend (CPU or CUDA).  The harness asks whether
 * it applies here, asks for its plan (the cases of its sweep), and for each
 * case: setup, warm-up runs, `repeats` timed runs (each of `case.inner`
 * operations, so one sample is the time of one operation averaged over
 * `inner`), verify, teardown.  It summarises the samples (lib/stats.h), turns
 * them into the case's rate (TFLOP/s, GB/s, bus bandwidth) and hands one
 * record to the output (a fixed-width table and `megatune.result/1` JSON Lines,
 * docs/FORMATS.md section 11).
 *
 * Timing belongs to the backend's run(): CUDA backends time with events behind
 * a spin kernel that holds the stream until all work is queued (as nvbandwidth
 * does); CPU backends time with mt_now() (CLOCK_MONOTONIC).  Every measured
 * phase is wrapped in an NVTX range named "<probe>:<case label>" when the
 * build has NVTX (the ranges cost nothing when no tool is attached).
 *
 * Multi-process runs (mpirun, srun) go through probes/mpi.h: per-device probes
 * run on every rank at once and rank 0 gathers the records; collective probes
 * run each case on all ranks of a group together.
 *
 * Besides measuring, a probe describes its cases and feeds the profile: the
 * registry entry (struct mt_probe) carries `describe` (a case -> the members
 * of the result record's "case" object) and `to_profile` (its measured
 * records -> its section of the profile, probes/calibrate.h), so that the
 * result writer and the profile builder hold no probe names.  Adding a probe
 * is its own file (probes/skeleton.c is the template to copy) and one line in
 * the registry (probes/registry.c).
 *
 * Ownership: the registry and every ops table are static; plans are heap
 * arrays the harness frees; per-case state belongs to the probe between its
 * setup() and teardown().  Errors are returned (lib/err.h); nothing here exits.
 */
#ifndef MT_PROBE_H
#define MT_PROBE_H

#include <stddef.h>
#include <stdio.h>

#include "../lib/clock.h"
#include "../lib/err.h"
#include "../lib/stats.h"

enum mt_backend { MT_BACKEND_CPU, MT_BACKEND_CUDA, MT_BACKEND_N };

/* Sweep depth: --quick (about a minute per node), default, --full. */
enum mt_depth { MT_DEPTH_QUICK, MT_DEPTH_NORMAL, MT_DEPTH_FULL, MT_DEPTH_SMOKE };

/* The harness's view of the launch: filled by mt_mpi_init() (probes/mpi.h). */
struct mt_world {
	int rank, size;             /* MPI world (0, 1 without a launcher) */
	int local_rank, local_size; /* ranks on this host */
	int node, nnodes;           /* host index (by first rank), host count */
	char host[64];
	int mpi;                    /* 1 when launched by mpirun/srun and MPI is up */
};

/* One case of a probe's sweep.  Every probe uses the fields it needs and
 * leaves the others zero; `label` is what the table shows. */
struct mt_case {
	char label[96];
	char origin[24];     /* "sweep", or the layer a model shape comes from:
			      * "qkv", "attn_out", "mlp_up", "mlp_down", "expert" */
	/* gemm: D[m x n] = A[m x k] * B[k x n]; `dtype` is enum mt_dtype */
	int dtype;
	long long m, n, k;
	/* attention (batch, heads, kv_heads, head_dim, seq, causal, bwd) */
	int batch, heads, kv_heads, head_dim, seq, causal, bwd;
	/* collectives: op (enum mt_coll), span (enum mt_span), the group */
	int op, span, ranks, per_node;
	int group;           /* which of the probe's groups runs this case */
	/* copies and collectives: bytes as nccl-tests reports them */
	double bytes;
	/* offload: enum mt_offload_dir, pinned or pageable, NUMA-local, under load */
	int dir, pinned, numa_local, under_load;
	/* host: "launch", "launch_jitter", "membw", "adam" */
	char metric[24];

	/* what one operation does, for the rate */
	double flops;        /* TFLOP/s = flops / time */
	double moved;        /* GB/s (algbw) = moved / time */
	double busbw_factor; /* busbw = algbw * factor (nccl-tests); 0 if none */
	int inner;           /* operations per timed sample, >= 1 */
};

struct mt_probe_opts {
	int backend;            /* enum mt_backend */
	int depth;              /* enum mt_depth */
	int warmup, repeats;    /* 0: the probe's defaults */
	double min_bytes, max_bytes; /* size sweep limits (0: defaults) */
	int dtypes;             /* bit set of enum mt_dtype (0: the probe's defaults) */
	const char *model;      /* gemm/attention: also a model's exact shapes */
	int tp;                 /* with `model`: tensor-parallel size */
	int single_process;     /* one process over all local GPUs */
	double timeout_s;       /* collective watchdog (default 120) */
	const char *ops;        /* collective: comma-separated op names (NULL: all) */
	int verbose;
	/* calibrate --rounds: the pass is run `rounds` times, this is round
	 * `round` (1-based); both 0 outside rounds.  Each record carries its
	 * round, so the spread between rounds is measured (compare.h). */
	int round, rounds;
};

/* One layout of collective groups: the world split into groups of `ranks`
 * ranks that run a case together, all groups of the layout at once (as the
 * TP or DP groups of a job do).  `span` says whether a group stays inside one
 * NVLink domain (on the CPU backend: one host) or crosses them. */
#define MT_GROUP_MAX_DEV 64
struct mt_group {
	int span, ranks, per_node;
	char name[32];          /* "nvlink-8", "rail-2x1", "world-16", ... */
	int member;             /* 1 when this rank is in one of the groups */
	int color, grank;       /* this rank's group and its rank in it */
	/* single-process mode: the local CUDA devices of the (only) group */
	int ndev;
	int devices[MT_GROUP_MAX_DEV];
};

/* Run-wide context handed to every op. */
struct mt_probe_ctx {
	const struct mt_probe_opts *opts;
	const struct mt_world *world;
	int device;             /* CUDA device of this rank (local rank) */
	int ndevices;           /* CUDA devices visible to this process */
	void *probe_state;      /* the probe's own, from open() */
	/* collective probes: the group layouts of the plan (probes/collective.c) */
	const struct mt_group *groups;
	int ngroups;
	/* Broadcast `len` bytes from rank 0 of this rank's group in layout
	 * `group` to the group's other members.  Every rank of the world calls
	 * it (non-members too); MPI underneath, a no-op in one process. */
	int (*group_bcast)(const struct mt_probe_ctx *ctx, int group, void *buf, int len,
			   struct mt_error *err);
	/* The same group's MPI communicator (an MPI_Comm as void *) for the CPU
	 * backend; NULL without MPI or for non-members. */
	void *(*group_comm)(const struct mt_probe_ctx *ctx, int group);
	void *priv;             /* the harness's own */
	const struct mt_probe *probe; /* the probe being run (its name, its other backends) */
};

/* The ops of one probe on one backend.  Every function returns MT_OK or a
 * negative status with the reason in `err`; MT_EUNSUPPORTED means "does not
 * apply here" (exit 77).  Optional members may be NULL. */
struct mt_probe_ops {
	/* MT_OK when this probe can run here (a GPU, a library, enough ranks) */
	int (*applicable)(const struct mt_probe_ctx *ctx, struct mt_error *err);
	/* optional: probe-wide state (handles, communicators) in ctx->probe_state */
	int (*open)(struct mt_probe_ctx *ctx, struct mt_error *err);
	void (*close)(struct mt_probe_ctx *ctx);
	/* the cases to run, a heap array the harness frees */
	int (*plan)(const struct mt_probe_ctx *ctx, struct mt_case **cases, int *n,
		    struct mt_error *err);
	int (*setup)(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state,
		     struct mt_error *err);
	/* one timed sample: c->inner operations; *seconds is their elapsed time */
	int (*run)(void *state, const struct mt_case *c, double *seconds, struct mt_error *err);
	/* MT_OK when the last run's results are correct; optional */
	int (*verify)(void *state, const struct mt_case *c, struct mt_error *err);
	void (*teardown)(void *state);
	/* optional: extra key/value facts about this case after it ran (for
	 * example the cuBLASLt algorithm or the PAPI counters), a JSON object's
	 * members without braces ("\"algo\": 3, ...") written into the record */
	void (*extra)(void *state, const struct mt_case *c, char *buf, size_t n);
};

/* Per-device probes run on every rank independently; collective probes run
 * each case on every rank of its group together (the harness barriers before
 * each case and combines times across ranks as nccl-tests does: the mean). */
enum mt_probe_kind { MT_PROBE_DEVICE, MT_PROBE_COLLECTIVE, MT_PROBE_INFO };

struct jw;
struct mt_calib;

/* One probe: defined in the probe's own file as `const struct mt_probe
 * mt_probe_<name>` and listed by one line in probes/registry.c. */
struct mt_probe {
	const char *name;
	const char *summary;
	int kind;
	const struct mt_probe_ops *ops[MT_BACKEND_N]; /* NULL: no such backend */
	/* 1: left out of the default `calibrate` list (runs when named) */
	int hidden;
	/* what an outlier of this probe is ("link of"); NULL: the device
	 * ("GPU", or "CPU" on the CPU backend) */
	const char *outlier_what;
	/* The members of the result record's "case" object for case `c`
	 * (probes/result.c opens and closes the object); NULL: none. */
	void (*describe)(const struct mt_case *c, struct jw *w);
	/* The profile from the records of group `g` (one case of this probe,
	 * every rank's usable record; probes/calibrate.h says what `b` offers),
	 * called once per group in file order; NULL: the probe adds nothing. */
	int (*to_profile)(struct mt_calib *b, int g, struct mt_error *err);
};

/* The registry: a static list in probes/registry.c, in run order. */
const struct mt_probe *mt_probe_find(const char *name);
const struct mt_probe *mt_probe_at(int i); /* NULL past the end */
/* The names of the probes that are not hidden, comma-separated ("gemm,
 * attention, ..." with `sep` between them) into buf of n bytes. */
void mt_probe_names(char *buf, size_t n, const char *sep);

/* NVTX ranges around measured phases (no-ops without NVTX). */
void mt_nvtx_push(const char *probe, const char *label);
void mt_nvtx_pop(void);

/* One measured case, summarised: what the outputs and the profile get. */
/* raw samples a result record keeps (docs/FORMATS.md, megatune.result/1) */
#define MT_MAX_SAMPLES 64

struct mt_measurement {
	const struct mt_probe *probe;
	int backend;
	int rank;               /* the rank (device) it ran on; -1: combined */
	int round;              /* opts->round: 0 outside calibrate --rounds */
	double canary_us;       /* CPU backend: the core's speed before the case
				 * (canary.h; collectives: the slowest rank's); 0 none */
	char host[64];
	int device;
	struct mt_case c;
	struct mt_stats time_us;   /* per operation */
	double tflops;             /* median rate, 0 when not a FLOP count */
	double gbps;               /* algbw, 0 when nothing moved */
	double busbw_gbps;         /* 0 when not a collective */
	struct mt_stats rate;      /* stats of the main rate (tflops, busbw or gbps) */
	int verified;              /* 1 verified, 0 not checked, -1 failed */
	char note[256];            /* extra (JSON members) or the failure */
	/* the timed samples of one operation (us), in the order measured: the
	 * first MT_MAX_SAMPLES of them (`megatune compare` tests on them) */
	int nsamples;
	float samples_us[MT_MAX_SAMPLES];
};

/* Where measurements go.  The harness calls `emit` for every measurement of
 * every rank (on rank 0 only, after gathering) and, when set, `progress`
 * before each case. */
struct mt_sink {
	void (*emit)(struct mt_sink *s, const struct mt_measurement *m);
	void (*progress)(struct mt_sink *s, const struct mt_probe *p, int done, int total,
			 const char *label);
	void *user;
};

/* Run one probe with `opts` on this rank: every case of its plan, each
 * measured and verified, measurements handed to `sink` (rank 0).  `skip`, when
 * not NULL, lists labels to leave out (a resumed pass: already measured).
 * Returns MT_OK, MT_EUNSUPPORTED (with the reason), or the first error; a
 * verification failure is recorded in the measurement and counted in
 * *failed, and the run goes on. */
int mt_probe_run(const struct mt_probe *p, const struct mt_probe_opts *opts,
		 const struct mt_world *world, struct mt_sink *sink,
		 int (*skip)(void *user, const struct mt_probe *p, const struct mt_case *c),
		 void *skip_user, int *failed, struct mt_error *err);

/* ---------------------------------------------------------------- output */

/* The first record of a result file: argv, host, GPU, driver/CUDA/NCCL
 * versions and, with the CUDA backend, the libraries of the CUDA stack as loaded
 * (mt_result_libraries()), megatune version, backend, world. */
void mt_result_head(FILE *f, int argc, char **argv, const struct mt_probe_opts *opts,
		    const struct mt_world *world);
/* One measurement as a JSON Lines record. */
void mt_result_record(FILE *f, const struct mt_measurement *m);
/* The same two records appended to `sb` (one line each, '\n' included), for
 * writers that check every write (calibrate's results stream). */
struct sbuf;
void mt_result_head_sb(struct sbuf *sb, int argc, char **argv, const struct mt_probe_opts *opts,
		       const struct mt_world *world);
void mt_result_record_sb(struct sbuf *sb, const struct mt_measurement *m);
/* The member "libraries": {"cuBLASLt": {"version", "path", "from"} | {"missing": why},
 * "cuDNN": ..., "NCCL": ...} into an open object of `w`: where the CUDA library found each
 * (probes/gpu.h, mt_cuda_libraries()); nothing when the CUDA library itself is absent. */
void mt_result_libraries(struct jw *w);
/* The fixed-width table: header and units rows (starting with '#'), then one
 * row per measurement, formatted by probe kind. */
void mt_table_header(FILE *f, const struct mt_probe *p);
void mt_table_row(FILE *f, const struct mt_measurement *m);

#endif
