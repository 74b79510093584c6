/* SPDX-License-Identifier: MIT */
/* offload: the host<->device copy probe's plan (both backends) and its CPU
 * backend (probes/backends.h).
 *
 * CUDA cases: host-to-device, device-to-host and bidirectional copies of
 * pinned and pageable host buffers, and pinned copies while a GEMM loads the
 * GPU (`under_load`); `moved` is the copy size, so GB/s is one direction's
 * bandwidth (bidirectional: the measured direction while the other runs, as
 * nvbandwidth reports it).
 *
 * The CPU backend has no device: a case is memcpy() between two host
 * buffers ("memcpy" cases, direction h2d only), `moved` the bytes copied
 * (memcpy reads and writes each byte once; the figure counts it once, as a
 * copy bandwidth).  "pinned" buffers are locked with mlock(); when the
 * memlock limit refuses, the case runs pageable (c->pinned = 0) and says why
 * in its extra facts.  "loaded" cases copy while another thread runs an
 * sgemm loop.
 */
#include "backends.h"

#include <cblas.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "../perfmodel/cluster.h"
#include "../lib/jsonr.h"
#include "../lib/jsonw.h"
#include "calibrate.h"
#include "gpu.h"
#include "../perfmodel/profile.h"

#define MIB (1024.0 * 1024.0)
#define LOAD_N 256 /* the load thread's sgemm: 256^3 */

/* ------------------------------------------------------------------ plan */

static const char *const dir_label[] = { "h2d", "d2h", "bidir" };

static struct mt_case *offload_add(struct mt_plan_buf *p, int cuda, int dir, int pinned, int loaded,
			   double bytes)
{
	struct mt_case *c = mt_plan_push(p);
	char sz[32];

	if (!c)
		return NULL;
	c->dir = dir;
	c->pinned = pinned;
	c->numa_local = 1;
	c->under_load = loaded;
	c->bytes = bytes;
	c->moved = bytes;
	snprintf(c->origin, sizeof(c->origin), "sweep");
	snprintf(c->label, sizeof(c->label), "%s %s %s%s", cuda ? dir_label[dir] : "memcpy",
		 pinned ? "pinned" : "pageable", mt_fmt_size(sz, sizeof(sz), bytes),
		 loaded ? " loaded" : "");
	return c;
}

int mt_plan_offload(const struct mt_probe_ctx *ctx, struct mt_case **cases, int *n,
		    struct mt_error *err)
{
	static const int cuda_smoke[] = { 64 }, cuda_quick[] = { 256 };
	static const int cuda_normal[] = { 64, 256, 1024 };
	static const int cuda_full[] = { 64, 128, 256, 512, 1024 };
	static const int cpu_smoke[] = { 4 }, cpu_quick[] = { 256 };
	static const int cpu_normal[] = { 64, 256 };
	static const int cpu_full[] = { 64, 128, 256, 512, 1024 };
	const struct mt_probe_opts *o = ctx ? ctx->opts : NULL;
	struct mt_plan_buf p = { 0 };
	const int *mib;
	int nsz, cuda, i, dir, ndir, pinned, loaded;

	*cases = NULL;
	*n = 0;
	if (!o)
		return mt_error_set(err, MT_EINVAL, "offload plan: no options");
	cuda = o->backend == MT_BACKEND_CUDA;
	switch (o->depth) {
	case MT_DEPTH_SMOKE: mib = cuda ? cuda_smoke : cpu_smoke; nsz = 1; break;
	case MT_DEPTH_QUICK: mib = cuda ? cuda_quick : cpu_quick; nsz = 1; break;
	case MT_DEPTH_FULL: mib = cuda ? cuda_full : cpu_full; nsz = 5; break;
	default: mib = cuda ? cuda_normal : cpu_normal; nsz = cuda ? 3 : 2; break;
	}
	ndir = cuda ? MT_OFF_N : 1;
	for (i = 0; i < nsz; i++) {
		double bytes = mib[i] * MIB;

		if (!mt_plan_in_limits(o, bytes))
			continue;
		for (dir = 0; dir < ndir; dir++)
			for (pinned = 1; pinned >= 0; pinned--)
				for (loaded = 0; loaded <= pinned; loaded++)
					offload_add(&p, cuda, dir, pinned, loaded, bytes);
	}
	return mt_plan_finish(&p, "offload", o, cases, n, err);
}

/* ------------------------------------------------------------ CPU backend */

struct off_state {
	size_t bytes, alloc;
	unsigned char *src, *dst;
	int locked;               /* both buffers mlock()ed */
	char lock_why[96];        /* why not, for a pinned case */
	/* load thread */
	int loaded;
	pthread_t tid;
	atomic_int stop;
	atomic_llong load_ops;
	double load_t0;
	float *la, *lb, *lc;
};

static int offload_cpu_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	(void)ctx;
	(void)err;
	return MT_OK;
}

static void *load_main(void *arg)
{
	struct off_state *s = arg;

	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, LOAD_N, LOAD_N, LOAD_N, 1.0f,
			    s->la, LOAD_N, s->lb, LOAD_N, 0.0f, s->lc, LOAD_N);
		atomic_fetch_add_explicit(&s->load_ops, 1, memory_order_relaxed);
	}
	return NULL;
}

static void off_teardown(void *state)
{
	struct off_state *s = state;

	if (!s)
		return;
	if (s->loaded) {
		atomic_store(&s->stop, 1);
		pthread_join(s->tid, NULL);
	}
	if (s->locked) {
		munlock(s->src, s->alloc);
		munlock(s->dst, s->alloc);
	}
	free(s->src);
	free(s->dst);
	free(s->la);
	free(s->lb);
	free(s->lc);
	free(s);
}

static void fill_bytes(unsigned char *p, size_t n, uint64_t seed)
{
	uint64_t r = seed, x;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		x = mt_rng_next(&r);
		memcpy(p + i, &x, 8);
	}
	for (; i < n; i++)
		p[i] = (unsigned char)mt_rng_next(&r);
}

static void copy_ops(void *state, int count)
{
	struct off_state *s = state;
	int i;

	for (i = 0; i < count; i++)
		memcpy(s->dst, s->src, s->bytes);
}

static int off_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state,
		     struct mt_error *err)
{
	struct off_state *s;
	int rc;

	*state = NULL;
	if (c->bytes < 1 || c->bytes > 1e12)
		return mt_error_set(err, MT_EINVAL, "offload %s: bytes must be 1..1e12", c->label);
	if (!(s = calloc(1, sizeof(*s))))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	atomic_init(&s->stop, 0);
	atomic_init(&s->load_ops, 0);
	s->bytes = (size_t)c->bytes;
	s->alloc = (s->bytes + 4095) / 4096 * 4096;
	s->src = aligned_alloc(4096, s->alloc);
	s->dst = aligned_alloc(4096, s->alloc);
	if (!s->src || !s->dst) {
		off_teardown(s);
		return mt_error_set(err, MT_ENOMEM, "offload %s: out of memory", c->label);
	}
	fill_bytes(s->src, s->alloc, 21);
	fill_bytes(s->dst, s->alloc, 22);
	if (c->pinned) {
		if (mlock(s->src, s->alloc) == 0 && mlock(s->dst, s->alloc) == 0) {
			s->locked = 1;
		} else {
			struct rlimit rl;
			int e = errno;

			munlock(s->src, s->alloc);
			if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
				snprintf(s->lock_why, sizeof(s->lock_why),
					 "mlock: %s (memlock limit %.0f MiB)", strerror(e),
					 (double)rl.rlim_cur / MIB);
			else
				snprintf(s->lock_why, sizeof(s->lock_why), "mlock: %s", strerror(e));
			c->pinned = 0; /* measured pageable; extra says why */
		}
	}
	if (c->under_load) {
		size_t nn = (size_t)LOAD_N * LOAD_N;

		s->la = malloc(nn * sizeof(float));
		s->lb = malloc(nn * sizeof(float));
		s->lc = malloc(nn * sizeof(float));
		if (!s->la || !s->lb || !s->lc) {
			off_teardown(s);
			return mt_error_set(err, MT_ENOMEM, "offload %s: out of memory", c->label);
		}
		mt_fill_float(s->la, nn, 23);
		mt_fill_float(s->lb, nn, 24);
		s->load_t0 = mt_now();
		if ((rc = pthread_create(&s->tid, NULL, load_main, s))) {
			off_teardown(s);
			return mt_error_set(err, MT_EIO, "offload %s: cannot start the load thread: %s",
					    c->label, strerror(rc));
		}
		s->loaded = 1;
		/* the load is on before anything is timed: wait (at most 2 s)
		 * for its first sgemm */
		while (!atomic_load(&s->load_ops) && mt_now() - s->load_t0 < 2.0) {
			struct timespec ts = { 0, 100000 };

			nanosleep(&ts, NULL);
		}
	}
	c->inner = mt_cpu_calibrate(ctx, copy_ops, s);
	memset(s->dst, 0x5a, s->bytes); /* a run that copies nothing fails verify */
	*state = s;
	return MT_OK;
}

static int off_run(void *state, const struct mt_case *c, double *seconds, struct mt_error *err)
{
	struct off_state *s = state;
	double t0;
	int i;

	(void)err;
	t0 = mt_now();
	for (i = 0; i < c->inner; i++)
		memcpy(s->dst, s->src, s->bytes);
	*seconds = mt_now() - t0;
	return MT_OK;
}

static int off_verify(void *state, const struct mt_case *c, struct mt_error *err)
{
	const struct off_state *s = state;
	size_t i;

	if (!memcmp(s->dst, s->src, s->bytes))
		return MT_OK;
	for (i = 0; i < s->bytes && s->dst[i] == s->src[i]; i++)
		;
	return mt_error_set(err, MT_EINVAL,
			    "offload %s: the destination differs from the source at byte %zu "
			    "(0x%02x, expected 0x%02x)",
			    c->label, i, s->dst[i], s->src[i]);
}

static void off_extra(void *state, const struct mt_case *c, char *buf, size_t n)
{
	const struct off_state *s = state;
	size_t len;

	snprintf(buf, n, "\"copy\": \"memcpy\", \"locked\": %s", s->locked ? "true" : "false");
	len = strlen(buf);
	if (s->lock_why[0] && len < n)
		snprintf(buf + len, n - len, ", \"pinned_unavailable\": \"%s\"", s->lock_why);
	len = strlen(buf);
	if (c->under_load && len < n) {
		double el = mt_now() - s->load_t0;
		long long ops = atomic_load(&s->load_ops);

		snprintf(buf + len, n - len, ", \"load\": \"sgemm %d^3 loop\", \"load_gflops\": %.1f",
			 LOAD_N, el > 0 ? ops * 2.0 * LOAD_N * LOAD_N * LOAD_N / el / 1e9 : 0.0);
	}
}

void mt_offload_cpu_damage(void *state)
{
	struct off_state *s = state;

	s->dst[s->bytes / 2] ^= 0xff;
}

const struct mt_probe_ops mt_offload_cpu = {
	.applicable = offload_cpu_applicable,
	.plan = mt_plan_offload,
	.setup = off_setup,
	.run = off_run,
	.verify = off_verify,
	.teardown = off_teardown,
	.extra = off_extra,
};

/* ------------------------------------------------------- record, profile */

static const char *const dirs[] = { "h2d", "d2h", "bidirectional" };

static void offload_describe(const struct mt_case *c, struct jw *w)
{
	jw_str(w, "direction", c->dir >= 0 && c->dir < 3 ? dirs[c->dir] : "?");
	jw_str(w, "memory", c->pinned ? "pinned" : "pageable");
	jw_bool(w, "numa_local", c->numa_local);
	jw_bool(w, "under_load", c->under_load);
	jw_int(w, "bytes", (int64_t)c->bytes);
}

/* The profile's kind of copy: direction x memory, or under load x memory;
 * -1 for an unknown direction. */
static int copy_kind(const cJSON *c)
{
	int di, key;

	for (di = 0; di < 3 && strcmp(dirs[di], mt_jget_str(c, "direction")); di++)
		;
	if (di == 3)
		return -1;
	key = di * 2 + !strcmp(mt_jget_str(c, "memory"), "pinned");
	return mt_jget_bool(c, "under_load", 0) ? 6 + (key & 1) : key;
}

/* The largest copy of each kind: the asymptotic bandwidth.  A case is
 * written when no earlier case of its kind was larger (so the last of the
 * largest stands). */
static int offload_to_profile(struct mt_calib *b, int g, struct mt_error *err)
{
	const cJSON *c = mt_calib_case(b, g);
	int key = copy_kind(c), di, h, rc;
	struct mt_stats st;
	double tmed;

	if (key < 0)
		return MT_OK;
	for (h = 0; h < g; h++) {
		const cJSON *x = mt_calib_case(b, h);

		if (!strcmp(mt_jget_str(mt_calib_record(b, h, 0), "probe"), "offload") &&
		    copy_kind(x) == key && mt_jget_num(x, "bytes", 0) > mt_jget_num(c, "bytes", 0))
			return MT_OK;
	}
	if ((rc = mt_calib_aggregate(b, g, &st, &tmed, err)))
		return rc;
	for (di = 0; strcmp(dirs[di], mt_jget_str(c, "direction")); di++)
		;
	mt_profile_offload(b->doc, dirs[di], !strcmp(mt_jget_str(c, "memory"), "pinned"),
			   !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(c, "numa_local")),
			   mt_jget_bool(c, "under_load", 0), st.median, &st, b->src);
	return MT_OK;
}

const struct mt_probe mt_probe_offload = {
	.name = "offload",
	.summary = "host<->device copies, pinned and pageable, idle and under a GEMM "
		   "(CPU: memcpy)",
	.kind = MT_PROBE_DEVICE,
	.ops = { &mt_offload_cpu, &mt_cuda_forward },
	.outlier_what = "link of",
	.describe = offload_describe,
	.to_profile = offload_to_profile,
};
