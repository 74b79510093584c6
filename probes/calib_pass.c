/* SPDX-License-Identifier: MIT */
/* calib_pass: one pass of `megatune calibrate` (calib_pass.h). */
#include "calib_pass.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/jsonr.h"
#include "../lib/sbuf.h"
#include "../perfmodel/profile.h"
#include "calibrate.h"

void mt_calib_pass_init(struct mt_calib_pass *p, volatile sig_atomic_t *stop)
{
	memset(p, 0, sizeof(*p));
	p->results.fd = -1;
	p->stop_after = -1;
	p->t0 = mt_now();
	p->stop = stop;
}

static void pass_say(struct mt_calib_pass *p, int kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void pass_say(struct mt_calib_pass *p, int kind, const char *fmt, ...)
{
	struct sbuf sb = SBUF_INIT;
	va_list ap;

	if (!p->say)
		return;
	va_start(ap, fmt);
	sbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	p->say(p, kind, sb.failed ? "out of memory" : sb.buf);
	sbuf_release(&sb);
}

void mt_calib_keep(struct mt_calib_pass *p, const struct mt_measurement *m)
{
	struct sbuf sb = SBUF_INIT;

	if (!p->write_failed) {
		mt_result_record_sb(&sb, m);
		if (sb.failed)
			mt_error_set(&p->werr, MT_ENOMEM, "out of memory");
		if (sb.failed || mt_stream_write(&p->results, sb.buf, sb.len, &p->werr)) {
			p->write_failed = 1;
			*p->stop = 1; /* nothing more is measured that could not be kept */
		} else {
			p->written++;
		}
		sbuf_release(&sb);
	}
	if (p->stop_after >= 0 && ++p->emitted >= p->stop_after)
		*p->stop = 1;
}

static int pass_skip_case(void *user, const struct mt_probe *pr, const struct mt_case *c)
{
	struct mt_calib_pass *p = user;

	if (*p->stop)
		return 1;
	return p->done && mt_results_has(p->done, pr->name, c->label, p->round);
}

static int pass_listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return 1;
		p += n;
	}
	return 0;
}

/* A refusal of the pass as it was started: MT_EUSAGE, p->refused. */
static int pass_refuse(struct mt_calib_pass *p, struct mt_error *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int pass_refuse(struct mt_calib_pass *p, struct mt_error *err, const char *fmt, ...)
{
	char msg[MT_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->refused = 1;
	return mt_error_set(err, MT_EUSAGE, "%s", msg);
}

/* --resume --repair: the file rewritten with its valid records only (through
 * a temporary file), then reopened and locked again. */
static int pass_rewrite(struct mt_calib_pass *p, const struct mt_calib_opts *a,
			const struct mt_results_damage *d, const struct sbuf *kept,
			struct mt_error *err)
{
	pass_say(p, MT_CALIB_NOTE, "%s: --repair: dropped %d damaged line%s (the first at line "
		 "%d, byte offset %lld%s); kept %d records", a->results, d->dropped,
		 d->dropped == 1 ? "" : "s", d->first_line, d->first_off,
		 d->nul ? ", NUL bytes" : "", d->records);
	if (kept->failed)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	if (mt_write_atomic(a->results, kept->buf, kept->len, err) ||
	    mt_stream_close(&p->results, err) ||
	    mt_stream_open(&p->results, a->results, 0, err))
		return err->code;
	return MT_OK;
}

/* --resume: the results file locked, validated and checked against this
 * run. */
static int pass_resume(struct mt_calib_pass *p, const struct mt_calib_opts *a,
		       const struct mt_world *w, cJSON **head, cJSON **records,
		       struct mt_error *err)
{
	struct mt_results_damage d;
	struct sbuf kept = SBUF_INIT;
	const char *b;
	int ranks, rc;

	if (access(a->results, F_OK) != 0)
		return pass_refuse(p, err, "--resume: %s does not exist (nothing to resume)",
				   a->results);
	if ((rc = mt_stream_open(&p->results, a->results, 0, err)))
		return rc;
	if ((rc = mt_results_load(a->results, a->repair, head, records, &d,
				  a->repair ? &kept : NULL, err)))
		goto out;
	b = mt_jget_strd(*head, "backend", NULL);
	ranks = (int)mt_jget_num(*head, "world.ranks", 0);
	if (!b || strcmp(b, a->o.backend == MT_BACKEND_CUDA ? "cuda" : "cpu")) {
		rc = pass_refuse(p, err, "%s: field 'backend': the pass was started with --backend "
				 "%s; resume it with the same", a->results, b ? b : "?");
		goto out;
	}
	if (ranks != w->size) {
		rc = pass_refuse(p, err, "%s: field 'world.ranks': the pass was started on %d ranks, "
				 "this run has %d", a->results, ranks, w->size);
		goto out;
	}
	if (d.valid_after) {
		if ((rc = pass_rewrite(p, a, &d, &kept, err)))
			goto out;
	} else if (d.first_off >= 0) {
		/* damage only after the last record: cut back to it */
		pass_say(p, MT_CALIB_NOTE, "%s: byte offset %lld (line %d): dropped %s after the "
			 "last whole record", a->results, d.first_off, d.first_line,
			 d.nul ? "NUL bytes a crash left" : "a last line cut short");
		if ((rc = mt_stream_truncate(&p->results, d.good_len, err)))
			goto out;
	}
	if (a->lround <= 1) /* a later round of --launcher adds its own */
		pass_say(p, MT_CALIB_LINE, "resuming: %d results already in %s",
			 cJSON_GetArraySize(*records), a->results);
	p->done = *records;
out:
	sbuf_release(&kept);
	return rc;
}

/* 1 when the file exists and holds no whole line (a pass killed while it
 * wrote its head record): nothing to resume. */
static int pass_cut_head(const char *path)
{
	FILE *f = fopen(path, "rb");
	int ch, whole = 0;

	if (!f)
		return 0;
	while ((ch = getc(f)) != EOF && !(whole = ch == '\n'))
		;
	fclose(f);
	return !whole;
}

int mt_calib_open(struct mt_calib_pass *p, const struct mt_calib_opts *a, int argc,
		  char **argv, const struct mt_world *w, cJSON **head, cJSON **records,
		  struct mt_error *err)
{
	struct sbuf sb = SBUF_INIT;
	int rc;

	p->refused = 0;
	if (a->resume && !pass_cut_head(a->results))
		return pass_resume(p, a, w, head, records, err);
	if (a->resume)
		pass_say(p, MT_CALIB_NOTE, "%s: no whole record (the pass was stopped before its "
			 "first): starting it", a->results);
	else if (access(a->results, F_OK) == 0 && !a->fresh)
		return pass_refuse(p, err, "%s exists (an earlier pass): --resume continues it, "
				   "--fresh starts over", a->results);
	/* locked before it is emptied: a --fresh beside a running pass is refused */
	if ((rc = mt_stream_open(&p->results, a->results, 1, err)))
		return rc;
	mt_result_head_sb(&sb, argc + 1, argv - 1, &a->o, w);
	if (sb.failed)
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
	else
		rc = mt_stream_write(&p->results, sb.buf, sb.len, err);
	sbuf_release(&sb);
	return rc;
}

/* Every probe of the list (default: those not hidden) in registry order, with
 * the options o of the round; returns the count of failed results and
 * errors. */
static int pass_probes(struct mt_calib_pass *p, const struct mt_calib_opts *a,
		       const struct mt_probe_opts *o, const struct mt_world *w)
{
	struct mt_error err = MT_ERROR_INIT;
	const struct mt_probe *pr;
	int i, rc, failed = 0;

	for (i = 0; (pr = mt_probe_at(i)); i++) {
		if (a->probes ? !pass_listed(a->probes, pr->name) : pr->hidden)
			continue;
		if (pr->kind == MT_PROBE_INFO)
			continue;
		rc = mt_probe_run(pr, o, w, &p->s, pass_skip_case, p, &failed, &err);
		if (rc == MT_EUNSUPPORTED) {
			if (w->rank == 0)
				pass_say(p, MT_CALIB_LINE, "%-11s skipped: %s", pr->name, err.msg);
		} else if (rc == MT_ENOLIB) {
			/* not a skip: the pass would miss what this machine can measure */
			if (w->rank == 0)
				pass_say(p, MT_CALIB_NOTE, "error: %s: %s", pr->name, err.msg);
			p->nolib = 1;
			break;
		} else if (rc) {
			if (w->rank == 0)
				pass_say(p, MT_CALIB_NOTE, "%s: %s", pr->name, err.msg);
			failed++;
		}
		if (*p->stop)
			break;
	}
	return failed;
}

int mt_calib_rounds(struct mt_calib_pass *p, const struct mt_calib_opts *a,
		    const struct mt_world *w)
{
	struct mt_probe_opts o = a->o;
	int round, failed = 0;

	for (round = a->lround ? a->lround : 1;
	     round <= (a->lround ? a->lround : a->rounds) && !*p->stop && !p->write_failed &&
	     !p->nolib;
	     round++) {
		o.round = p->round = a->rounds > 1 ? round : 0;
		if (w->rank == 0 && a->rounds > 1 && !a->lround) /* else the launcher said it */
			pass_say(p, MT_CALIB_LINE, "round %d of %d", round, a->rounds);
		failed += pass_probes(p, a, &o, w);
	}
	return failed;
}

int mt_calib_env_gather(struct mt_calib_env *e, const struct mt_calib_opts *a,
			const struct mt_world *w, struct mt_error *err)
{
	time_t now = time(NULL);
	struct tm tmv;
	int rc;

	strftime(e->when, sizeof(e->when), "%Y-%m-%d", gmtime_r(&now, &tmv));
	snprintf(e->name, sizeof(e->name), "calibrated-%s", w->host);
	if ((rc = mt_hosts_gather(w, &e->hosts, &e->nhosts, err)))
		return rc;
	if (a->o.backend == MT_BACKEND_CUDA) {
		e->topo = calloc(1, sizeof(*e->topo));
		if (e->topo && mt_gpu_topology(e->topo, err)) {
			free(e->topo);
			e->topo = NULL;
		}
		mt_cuda_versions(e->nccl, e->cuda, e->drv, sizeof(e->nccl));
	}
	return MT_OK;
}

void mt_calib_env_free(struct mt_calib_env *e)
{
	free(e->hosts);
	free(e->topo);
	e->hosts = NULL;
	e->topo = NULL;
}

int mt_calib_records(const struct mt_calib_opts *a, cJSON **records, int *failed,
		     struct mt_error *err)
{
	cJSON *head = NULL, *all = NULL;
	int rc, truncated = 0;

	*records = NULL;
	if ((rc = mt_results_read(a->results, &head, &all, &truncated, err)))
		return rc;
	cJSON_Delete(head);
	if (a->lround) { /* --launcher: the failed results of every round's launch */
		const cJSON *r;

		*failed = 0;
		cJSON_ArrayForEach(r, all) {
			const char *v = mt_jget_strd(r, "verified", NULL);

			*failed += v && !strcmp(v, "FAILED");
		}
	}
	/* rounds: one record per measurement, the median round's */
	*records = mt_results_one_round(all);
	cJSON_Delete(all);
	if (!*records)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	return MT_OK;
}

int mt_calib_write(const struct mt_calib_opts *a, const struct mt_world *w,
		   const struct mt_calib_env *e, const cJSON *records, cJSON **doc,
		   struct mt_error *err)
{
	struct mt_calib_info info;
	int rc;

	memset(&info, 0, sizeof(info));
	info.backend = a->o.backend;
	info.hosts = e->hosts;
	info.nhosts = e->nhosts;
	info.ranks = w->size;
	info.ranks_per_node = w->local_size;
	info.topo = e->topo;
	info.name = a->name ? a->name : e->name;
	info.nccl = e->nccl[0] ? e->nccl : NULL;
	info.cuda = e->cuda[0] ? e->cuda : NULL;
	info.margin_pct = a->margin;
	info.when = e->when;
	if ((rc = mt_calibrate_profile(records, &info, doc, err)))
		return rc;
	return mt_profile_write(*doc, a->out, err);
}
