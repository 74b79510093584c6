/* SPDX-License-Identifier: MIT */
/* skeleton: the smallest complete probe, the template to copy for a new one.
 *
 * It copies a small host buffer with memcpy() and checks the copy: real work,
 * a rate (GB/s) and a verify step, on the CPU backend only.  It is registered
 * (one line in probes/registry.c) but hidden: `megatune calibrate` runs it
 * only when named (`--probes skeleton`), `megatune probe skeleton` always.
 *
 * A new probe copies this file to probes/<name>.c, renames `skeleton`, and
 * adds `X(<name>)` to the registry list; nothing else changes:
 *   plan()        the cases of the sweep (a heap array the harness frees),
 *                 each with a unique label and what one operation does
 *                 (`moved` bytes for GB/s, `flops` for TFLOP/s);
 *   setup()       per-case state: buffers filled, c->inner raised so that
 *                 one timed sample lasts long enough to time;
 *   run()         one timed sample of c->inner operations;
 *   verify()      the results of the last run checked (MT_EINVAL if wrong);
 *   teardown()    frees the state;
 *   describe()    the members of the result record's "case" object;
 *   to_profile()  the profile from the probe's records (probes/calibrate.h).
 * A CUDA backend is a probes/cuda/<name>.cu defining `mtc_<name>_ops`, one
 * line in probes/cuda/common.cu, and `&mt_cuda_forward` in ops[] below.
 *
 * Profile: {"skeleton": {"copy_gbps": <median GB/s of the largest copy>,
 * "bytes": <its size>, "source": "measured"}}, a section the advisor ignores.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/jsonr.h"
#include "../lib/jsonw.h"
#include "calibrate.h"
#include "probe.h"
#include "../perfmodel/profile.h"

/* ------------------------------------------------------------------ plan */

static int skeleton_plan(const struct mt_probe_ctx *ctx, struct mt_case **cases, int *n,
			 struct mt_error *err)
{
	static const double sizes[] = { 4096, 65536 };
	int i, k = ctx->opts->depth == MT_DEPTH_SMOKE ? 1 : 2;

	*cases = calloc((size_t)k, sizeof(**cases));
	if (!*cases)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	for (i = 0; i < k; i++) {
		struct mt_case *c = &(*cases)[i];

		snprintf(c->label, sizeof(c->label), "memcpy %.0fKiB", sizes[i] / 1024);
		snprintf(c->origin, sizeof(c->origin), "sweep");
		c->bytes = sizes[i];
		c->moved = 2 * sizes[i]; /* read and written */
		c->inner = 1;
	}
	*n = k;
	return MT_OK;
}

/* ------------------------------------------------------------ CPU backend */

struct skeleton_state {
	unsigned char *src, *dst;
	size_t bytes;
};

static int skeleton_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	(void)ctx;
	(void)err;
	return MT_OK;
}

static void skeleton_copy(struct skeleton_state *s, int count)
{
	int i;

	for (i = 0; i < count; i++) {
		s->src[0] = (unsigned char)i; /* a different copy each time */
		memcpy(s->dst, s->src, s->bytes);
	}
}

static int skeleton_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state,
			  struct mt_error *err)
{
	double target = ctx->opts->depth == MT_DEPTH_SMOKE ? 1e-3 : 10e-3, t0, t;
	struct skeleton_state *s = calloc(1, sizeof(*s));
	size_t i;
	int k = 1;

	*state = NULL;
	if (!s)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	s->bytes = (size_t)c->bytes;
	s->src = malloc(s->bytes);
	s->dst = malloc(s->bytes);
	if (!s->src || !s->dst) {
		free(s->src);
		free(s->dst);
		free(s);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	for (i = 0; i < s->bytes; i++)
		s->src[i] = (unsigned char)(i * 131 + 7);
	/* enough copies per sample that one sample lasts about `target` */
	for (;;) {
		t0 = mt_now();
		skeleton_copy(s, k);
		t = mt_now() - t0;
		if (t >= target || k >= (1 << 24))
			break;
		k *= 2;
	}
	c->inner = k;
	*state = s;
	return MT_OK;
}

static int skeleton_run(void *state, const struct mt_case *c, double *seconds,
			struct mt_error *err)
{
	double t0 = mt_now();

	(void)err;
	skeleton_copy(state, c->inner);
	*seconds = mt_now() - t0;
	return MT_OK;
}

static int skeleton_verify(void *state, const struct mt_case *c, struct mt_error *err)
{
	const struct skeleton_state *s = state;

	if (memcmp(s->dst, s->src, s->bytes))
		return mt_error_set(err, MT_EINVAL, "%s: the copy differs from its source",
				    c->label);
	return MT_OK;
}

static void skeleton_teardown(void *state)
{
	struct skeleton_state *s = state;

	if (!s)
		return;
	free(s->src);
	free(s->dst);
	free(s);
}

static const struct mt_probe_ops skeleton_cpu = {
	.applicable = skeleton_applicable,
	.plan = skeleton_plan,
	.setup = skeleton_setup,
	.run = skeleton_run,
	.verify = skeleton_verify,
	.teardown = skeleton_teardown,
};

/* ------------------------------------------------------- record, profile */

static void skeleton_describe(const struct mt_case *c, struct jw *w)
{
	jw_int(w, "bytes", (int64_t)c->bytes);
}

/* The largest copy measured (across ranks: the median of their medians). */
static int skeleton_to_profile(struct mt_calib *b, int g, struct mt_error *err)
{
	const cJSON *c = mt_calib_case(b, g);
	cJSON *o = mt_profile_object(b->doc, "skeleton");
	struct mt_stats st;
	double tmed;
	int rc;

	if (mt_jget_num(c, "bytes", 0) < mt_jget_num(o, "bytes", 0))
		return MT_OK;
	if ((rc = mt_calib_aggregate(b, g, &st, &tmed, err)))
		return rc;
	cJSON_DeleteItemFromObjectCaseSensitive(o, "copy_gbps");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "bytes");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "source");
	cJSON_AddNumberToObject(o, "copy_gbps", st.median);
	cJSON_AddNumberToObject(o, "bytes", mt_jget_num(c, "bytes", 0));
	cJSON_AddStringToObject(o, "source", b->src);
	return MT_OK;
}

const struct mt_probe mt_probe_skeleton = {
	.name = "skeleton",
	.summary = "the template probe: memcpy of a small buffer, verified (runs when named)",
	.kind = MT_PROBE_DEVICE,
	.ops = { &skeleton_cpu, NULL },
	.hidden = 1,
	.describe = skeleton_describe,
	.to_profile = skeleton_to_profile,
};
