/* SPDX-License-Identifier: MIT */
/* loongforge: LoongForge's flags as Megatron-LM's (job/loongforge.h). */
#include "loongforge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/num.h"

#define MAX_STAGES 512

/* "8,7,8" into counts; -1 when it is not a list of counts */
static int splits(const char *v, int *out, int cap)
{
	int n = 0;
	char *e;

	while (*v) {
		long x = strtol(v, &e, 10);

		if (e == v || x < 0 || x > 100000 || n >= cap)
			return -1;
		out[n++] = (int)x;
		v = e;
		while (*v == ',' || *v == ' ')
			v++;
	}
	return n;
}

static int int_arg(const struct mt_jobsrc *s, const char *flag, int dflt)
{
	int i = mt_jobsrc_find(s, flag);
	long long v;

	return i < 0 || mt_parse_int(s->arg[i].val, 1, 1 << 20, &v) ? dflt : (int)v;
}

/* The layout of convert_custom_pipeline_to_layout */
static int loongforge_layout(struct mt_jobsrc *s, int at, int virt, struct mt_error *err)
{
	int sp[MAX_STAGES], n, vp = int_arg(s, "num-virtual-stages-per-pipeline-rank", 1);
	int mtp = int_arg(s, "mtp-num-layers", 0), pp, v, p, k, line = s->line[at];
	char out[sizeof(s->arg[0].val)], flag[96];
	size_t o = 0;

	snprintf(flag, sizeof(flag), "%s", s->arg[at].key);
	if (vp < 1)
		vp = 1;
	if ((n = splits(s->arg[at].val, sp, MAX_STAGES)) < 1 || (virt && n % vp))
		return mt_error_set(err, MT_EINVAL, "%s:%d: --%s: expected comma-separated layer "
				    "counts%s, got '%s'", s->file, line, flag,
				    virt ? " (pipeline size x virtual stages of them)" : "",
				    s->arg[at].val);
	pp = virt ? n / vp : n;
	for (v = 0; v < vp; v++)
		for (p = 0; p < pp; p++) {
			int layers;

			if (virt) {
				layers = sp[v * pp + p];
			} else {
				int q = sp[p] / vp, r = sp[p] % vp;

				layers = v < vp - r ? q : q + 1;
			}
			if (o + (size_t)layers + (size_t)mtp + 4 >= sizeof(out))
				return mt_error_set(err, MT_EINVAL, "%s:%d: --%s: a layout of more than "
						    "%zu characters", s->file, line, flag, sizeof(out) - 1);
			if (v || p)
				out[o++] = '|';
			if (!v && !p)
				out[o++] = 'E';
			for (k = 0; k < layers; k++)
				out[o++] = 't';
			if (v == vp - 1 && p == pp - 1) {
				for (k = 0; k < mtp; k++)
					out[o++] = 'm';
				out[o++] = 'L';
			}
		}
	out[o] = '\0';
	s->layout_mtp_last = mt_jobsrc_find(s, "mtp-num-layers") < 0;
	mt_jobsrc_drop(s, "num-virtual-stages-per-pipeline-rank");
	mt_jobsrc_drop(s, flag);
	if (s->n >= MT_JOBSRC_ARGS)
		return mt_error_set(err, MT_EINVAL, "%s: more than %d arguments", s->file, MT_JOBSRC_ARGS);
	snprintf(s->arg[s->n].key, sizeof(s->arg[0].key), "pipeline-model-parallel-layout");
	snprintf(s->arg[s->n].val, sizeof(s->arg[0].val), "%s", out);
	s->line[s->n] = line;
	s->orig[s->n] = 0;
	s->n++;
	mt_jobsrc_note(s, "line %d: --%s read as --pipeline-model-parallel-layout '%.120s', as "
		       "LoongForge converts it", line, flag, out);
	return MT_OK;
}

int mt_loongforge_read(struct mt_jobsrc *s, struct mt_error *err)
{
	int i, rc;

	if ((i = mt_jobsrc_find(s, "custom-pipeline-layers")) >= 0 && (rc = loongforge_layout(s, i, 0, err)))
		return rc;
	if ((i = mt_jobsrc_find(s, "custom-virtual-pipeline-layers")) >= 0 &&
	    (rc = loongforge_layout(s, i, 1, err)))
		return rc;
	if ((i = mt_jobsrc_find(s, "model-name")) >= 0 && mt_jobsrc_find(s, "num-layers") < 0) {
		snprintf(s->model_path, sizeof(s->model_path), "%s", s->arg[i].val);
		s->model_path_line = s->line[i];
	}
	return MT_OK;
}
