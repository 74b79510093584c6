/* SPDX-License-Identifier: MIT */
/* advise: a search or an estimate as advise and estimate run it, and a
 * candidate in the forms of --format (advise.h). */
#include "advise.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../job/flags.h"
#include "../job/flagtable.h"
#include "../job/knobs.h"
#include "../job/launch.h"
#include "gains.h"
#include "suggest.h"

/* Explain the ranked candidates: the rules that fired for each. */
static int advise_explain(struct mt_rules_run *run, const struct mt_search_result *res,
			  struct mt_explain *ex, struct mt_error *err)
{
	int i;

	for (i = 0; i < res->ntop; i++)
		if (mt_rules_explain(run, &res->top[i], i + 1, (int)res->feasible,
				     res->top[0].time.step, &ex[i]))
			return mt_error_set(err, MT_ENOMEM, "out of memory");
	return MT_OK;
}

int mt_advise(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
	      const struct mt_ruleset *rs, struct mt_advised *out, struct mt_error *err)
{
	struct mt_search_result *res;
	int rc;

	memset(out, 0, sizeof(*out));
	res = out->res = calloc(1, sizeof(*res));
	if (!res)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	if (rs && (rc = mt_rules_start(rs, m, c, j, &out->run, err)))
		return rc;
	if ((rc = mt_search(m, c, j, out->run, res, err)))
		return rc;
	/* what each setting of the pick buys, with its evidence */
	if (res->ntop)
		res->ngains = mt_gains(m, c, j, &res->top[0], NULL, res->gains, MT_GAINS_MAX);
	/* nothing fits: the changes that would, each searched */
	if (!res->ntop && mt_suggest_fits(m, c, j, res) < 0)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	if (out->run) {
		out->ex = calloc((size_t)(res->ntop ? res->ntop : 1), sizeof(*out->ex));
		if (!out->ex || advise_explain(out->run, res, out->ex, err))
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		out->ar.set = rs;
		out->ar.run = out->run;
		out->ar.ex = out->ex;
		out->ar.nex = res->ntop;
	}
	return MT_OK;
}

void mt_advised_free(struct mt_advised *a)
{
	int i;

	if (a->ex)
		for (i = 0; i < (a->res && a->res->ntop ? a->res->ntop : 1); i++)
			mt_explain_free(&a->ex[i]);
	free(a->ex);
	free(a->res);
	mt_rules_end(a->run);
	memset(a, 0, sizeof(*a));
}

int mt_estimate(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
		const struct mt_ruleset *rs, struct mt_estimated *out, struct mt_error *err)
{
	struct mt_config cfg;
	int rc;

	memset(out, 0, sizeof(*out));
	if (rs && (rc = mt_rules_start(rs, m, c, j, &out->run, err)))
		return rc;
	memset(&cfg, 0, sizeof(cfg));
	mt_knobs_estimate_config(j, &cfg);
	return mt_evaluate(m, c, j, out->run, &cfg, &out->e, err);
}

int mt_estimate_explain(struct mt_estimated *est, const struct mt_ruleset *rs,
			struct mt_error *err)
{
	if (!est->run)
		return MT_OK;
	if (mt_rules_explain(est->run, &est->e, 0, -1, 0, &est->ex))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	est->ar.set = rs;
	est->ar.run = est->run;
	est->ar.ex = &est->ex;
	est->ar.nex = 1;
	return MT_OK;
}

void mt_estimated_free(struct mt_estimated *est)
{
	mt_explain_free(&est->ex);
	mt_rules_end(est->run);
	memset(est, 0, sizeof(*est));
}

/* --format torchrun|slurm: the script that runs the candidate (job/launch.h). */
static int candidate_launch(struct sbuf *sb, const struct mt_model *m,
			    const struct mt_cluster *cl, const struct mt_job *j,
			    const struct mt_config *c, const struct mt_explain *ex, int form,
			    struct mt_error *err)
{
	struct mt_kv args[MT_FLAGS_MAX], env[MT_FLAGS_MAX];
	struct mt_launch l;
	char label[128], title[400];
	int rc;

	memset(&l, 0, sizeof(l));
	l.kind = form == MT_FORM_SLURM ? MT_LAUNCH_SLURM : MT_LAUNCH_TORCHRUN;
	l.gpus = (int)j->gpus;
	l.gpus_per_node = cl->gpus_per_node;
	l.args = args;
	l.nargs = mt_candidate_args(m, j, c, ex, args);
	l.env = env;
	l.nenv = mt_candidate_env(ex, env);
	snprintf(title, sizeof(title), "megatune: %s on %d GPUs of %s, %s; a benchmark on mock data",
		 m->name, l.gpus, cl->name, mt_config_label(label, sizeof(label), m, c));
	l.title = title;
	l.loongforge = mt_job_loongforge(j);
	if ((rc = mt_launch_script(sb, &l, err)))
		return rc;
	if (sb->failed)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	return MT_OK;
}

int mt_candidate_flags(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *cl,
		       const struct mt_job *j, const struct mt_config *c,
		       const struct mt_explain *ex, int form, struct mt_error *err)
{
	struct mt_kv kv[MT_FLAGS_MAX];
	int n;

	if (form == MT_FORM_TORCHRUN || form == MT_FORM_SLURM)
		return candidate_launch(sb, m, cl, j, c, ex, form, err);
	if (form == MT_FORM_MEGATRON) {
		n = mt_candidate_args(m, j, c, ex, kv);
		mt_kv_render(sb, kv, n, MT_KV_ARGS, " \\\n  ");
	} else if (form == MT_FORM_BRIDGE) {
		n = mt_candidate_bridge(m, j, c, ex, kv);
		mt_kv_render(sb, kv, n, MT_KV_ASSIGN, " \\\n  ");
	} else if (form == MT_FORM_VERL) {
		n = mt_candidate_verl(m, j, c, ex, kv);
		mt_kv_render(sb, kv, n, MT_KV_ASSIGN, " \\\n  ");
	} else {
		n = mt_candidate_env(ex, kv);
		mt_kv_render(sb, kv, n, MT_KV_EXPORT, "\n");
	}
	if (n)
		sbuf_addc(sb, '\n');
	return MT_OK;
}
