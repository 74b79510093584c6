/* SPDX-License-Identifier: MIT */
/* result: `megatune.result/1` JSON Lines and the fixed-width table; the
 * members of a record's "case" come from its probe (describe). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "../lib/jsonw.h"
#include "../lib/sbuf.h"
#include "../lib/stats_json.h"
#include "../lib/version.h"
#include "gpu.h"
#include "probe.h"

static const char *backend_name(int b)
{
	return b == MT_BACKEND_CUDA ? "cuda" : "cpu";
}

static const char *depth_name(int d)
{
	static const char *const n[] = { "quick", "normal", "full", "smoke" };
	return d >= 0 && d <= MT_DEPTH_SMOKE ? n[d] : "?";
}

static void version(char *buf, size_t n, int v, int div_major, int div_minor)
{
	if (v <= 0)
		buf[0] = 0;
	else
		snprintf(buf, n, "%d.%d.%d", v / div_major, v % div_major / div_minor,
			 v % div_minor);
}

void mt_cuda_versions(char *nccl, char *cuda, char *driver, size_t n)
{
	struct mt_cuda_env env;

	nccl[0] = cuda[0] = driver[0] = 0;
	if (mt_cuda_load(NULL, &env, NULL))
		return;
	/* NCCL codes are major*10000 + minor*100 + patch since 2.9 */
	version(nccl, n, env.libs[MT_LIB_NCCL].version, 10000, 100);
	snprintf(cuda, n, "%d.%d", env.runtime_version / 1000, env.runtime_version % 1000 / 10);
	snprintf(driver, n, "%d.%d", env.driver_version / 1000, env.driver_version % 1000 / 10);
}

void mt_result_libraries(struct jw *w)
{
	struct mt_cuda_lib libs[MT_CUDA_NLIBS];
	int i;

	if (mt_cuda_libraries(libs, NULL))
		return;
	jw_obj(w, "libraries");
	for (i = 0; i < MT_CUDA_NLIBS; i++) {
		jw_obj(w, libs[i].name);
		if (libs[i].version) {
			jw_int(w, "version", libs[i].version);
			jw_str(w, "path", libs[i].path);
			jw_str(w, "from", libs[i].from);
		} else {
			jw_str(w, "missing", libs[i].why);
		}
		jw_end(w);
	}
	jw_end(w);
}

void mt_result_head(FILE *f, int argc, char **argv, const struct mt_probe_opts *opts,
		    const struct mt_world *world)
{
	struct sbuf sb = SBUF_INIT;

	mt_result_head_sb(&sb, argc, argv, opts, world);
	fwrite(sb.buf, 1, sb.len, f);
	fflush(f);
	sbuf_release(&sb);
}

void mt_result_head_sb(struct sbuf *out, int argc, char **argv, const struct mt_probe_opts *opts,
		       const struct mt_world *world)
{
	struct sbuf sb = SBUF_INIT;
	struct utsname u;
	struct jw w;
	char nccl[32], cuda[32], driver[32], when[32];
	time_t now = time(NULL);
	struct tm tmv;
	int i;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tmv));
	jw_init(&w, &sb, 0);
	jw_obj(&w, NULL);
	jw_str(&w, "schema", "megatune.result/1");
	jw_str(&w, "kind", "run");
	jw_str(&w, "megatune", MEGATUNE_VERSION);
	jw_str(&w, "started", when);
	jw_arr(&w, "argv");
	for (i = 0; i < argc; i++)
		jw_str(&w, NULL, argv[i]);
	jw_end(&w);
	jw_str(&w, "host", world->host);
	if (!uname(&u)) {
		char os[200];

		snprintf(os, sizeof(os), "%s %s %s", u.sysname, u.release, u.machine);
		jw_str(&w, "os", os);
	}
	jw_str(&w, "backend", backend_name(opts->backend));
	jw_str(&w, "depth", depth_name(opts->depth));
	if (opts->rounds > 1)
		jw_int(&w, "rounds", opts->rounds);
	jw_obj(&w, "world");
	jw_int(&w, "ranks", world->size);
	jw_int(&w, "nodes", world->nnodes);
	jw_int(&w, "ranks_per_node", world->local_size);
	jw_bool(&w, "mpi", world->mpi);
	jw_end(&w);
	if (opts->backend == MT_BACKEND_CUDA) {
		const struct mt_cuda_api *api = NULL;
		struct mt_cuda_env env;
		struct mt_topo *t;

		/* the GPU's name, for a history to tell runs apart (megatune compare) */
		if (!mt_cuda_load(&api, &env, NULL) && api && api->topology &&
		    (t = calloc(1, sizeof(*t)))) {
			if (!api->topology(t, NULL) && t->ngpus > 0 && t->gpu[0].name[0])
				jw_str(&w, "gpu", t->gpu[0].name);
			free(t);
		}
		mt_cuda_versions(nccl, cuda, driver, sizeof(nccl));
		jw_obj(&w, "versions");
		jw_str(&w, "driver", driver);
		jw_str(&w, "cuda", cuda);
		jw_str(&w, "nccl", nccl);
		jw_end(&w);
		mt_result_libraries(&w);
	}
	jw_end(&w);
	sbuf_add(out, sb.buf, sb.len);
	sbuf_addc(out, '\n');
	sbuf_release(&sb);
}

void mt_result_record(FILE *f, const struct mt_measurement *m)
{
	struct sbuf sb = SBUF_INIT;

	mt_result_record_sb(&sb, m);
	fwrite(sb.buf, 1, sb.len, f);
	fflush(f);
	sbuf_release(&sb);
}

void mt_result_record_sb(struct sbuf *out, const struct mt_measurement *m)
{
	const struct mt_case *c = &m->c;
	struct sbuf sb = SBUF_INIT;
	struct jw w;

	jw_init(&w, &sb, 0);
	jw_obj(&w, NULL);
	jw_str(&w, "probe", m->probe->name);
	jw_str(&w, "backend", backend_name(m->backend));
	jw_str(&w, "label", c->label);
	jw_str(&w, "origin", c->origin);
	jw_int(&w, "rank", m->rank);
	if (m->round > 0)
		jw_int(&w, "round", m->round);
	if (m->canary_us > 0)
		jw_num(&w, "canary_us", m->canary_us, 4);
	jw_str(&w, "host", m->host);
	jw_int(&w, "device", m->device);
	jw_obj(&w, "case");
	if (m->probe->describe)
		m->probe->describe(c, &w);
	jw_int(&w, "inner", c->inner);
	jw_end(&w);
	if (m->time_us.n > 0) {
		mt_stats_jw(&w, "time_us", &m->time_us);
		if (m->tflops > 0)
			jw_num(&w, "tflops", m->tflops, 6);
		if (m->gbps > 0)
			jw_num(&w, c->busbw_factor > 0 ? "algbw_gbps" : "gbps", m->gbps, 6);
		if (m->busbw_gbps > 0)
			jw_num(&w, "busbw_gbps", m->busbw_gbps, 6);
		if (m->rate.n > 0)
			mt_stats_jw(&w, "rate", &m->rate);
		if (m->nsamples > 0) {
			int i;

			jw_arr(&w, "samples_us");
			for (i = 0; i < m->nsamples && i < MT_MAX_SAMPLES; i++)
				jw_num(&w, NULL, m->samples_us[i], 6);
			jw_end(&w);
		}
	}
	jw_str(&w, "verified", m->verified > 0 ? "yes" : m->verified < 0 ? "FAILED" : "no");
	if (m->note[0]) {
		if (m->verified < 0 || m->time_us.n == 0) {
			jw_str(&w, "error", m->note);
		} else {
			/* extra: JSON members from the probe, kept as they are */
			sbuf_adds(&sb, ", \"extra\": {");
			sbuf_adds(&sb, m->note);
			sbuf_adds(&sb, "}");
		}
	}
	jw_end(&w);
	sbuf_add(out, sb.buf, sb.len);
	sbuf_addc(out, '\n');
	sbuf_release(&sb);
}

/* ---------------------------------------------------------------- table */

void mt_table_header(FILE *f, const struct mt_probe *p)
{
	fprintf(f, "# %-36s %5s %-14s %10s %10s %10s %10s %6s %11s  %s\n", "case", "rank",
		"host", "median", "min", "max", "p95", "cv%",
		p->kind == MT_PROBE_COLLECTIVE ? "algbw" : "rate", p->kind == MT_PROBE_COLLECTIVE ? "busbw  check" : "check");
	fprintf(f, "# %-36s %5s %-14s %10s %10s %10s %10s %6s %11s  %s\n", "", "", "", "(us)",
		"(us)", "(us)", "(us)", "", p->kind == MT_PROBE_COLLECTIVE ? "(GB/s)" : "", p->kind == MT_PROBE_COLLECTIVE ? "(GB/s)" : "");
}

void mt_table_row(FILE *f, const struct mt_measurement *m)
{
	const struct mt_case *c = &m->c;
	char rank[16], rate[32];

	snprintf(rank, sizeof(rank), m->rank < 0 ? "all" : "%d", m->rank);
	if (m->time_us.n == 0) {
		fprintf(f, "  %-36s %5s %-14.14s %s\n", c->label, rank, m->host, m->note);
		return;
	}
	if (m->busbw_gbps > 0)
		snprintf(rate, sizeof(rate), "%11.2f  %7.2f", m->gbps, m->busbw_gbps);
	else if (m->tflops > 0)
		snprintf(rate, sizeof(rate), "%7.2f TF/s", m->tflops);
	else if (m->gbps > 0)
		snprintf(rate, sizeof(rate), "%7.2f GB/s", m->gbps);
	else
		snprintf(rate, sizeof(rate), "%11s", "");
	fprintf(f, "  %-36s %5s %-14.14s %10.2f %10.2f %10.2f %10.2f %6.1f %s  %s\n", c->label,
		rank, m->host, m->time_us.median, m->time_us.min, m->time_us.max, m->time_us.p95,
		m->time_us.cv * 100, rate,
		m->verified > 0 ? "ok" : m->verified < 0 ? "FAILED" : "-");
}
