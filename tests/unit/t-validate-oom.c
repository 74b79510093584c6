/* SPDX-License-Identifier: MIT */
/* validate/ when memory runs out.  malloc, calloc, realloc and strdup are
 * wrapped at link time (-Wl,--wrap, the Makefile), so that every allocation
 * the library makes can be made to fail: each entry point of validate/ runs
 * once with none failing (its result is the reference), then again and
 * again, its first allocation failing, then its second, ... up to its last.
 * Each time it must either return MT_ENOMEM (with "out of memory" in the
 * message where it takes a struct mt_error), or, where the code below
 * tolerates the failure (a directory not synced after a write), succeed with
 * the reference's result: never abort, never a silently different result,
 * and nothing left behind that its documented cleanup does not free (under
 * `make check` ASan reports any leak).  The allocations of the test itself
 * and of cJSON (a shared library, not wrapped) never fail. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/jsonr.h"
#include "../../validate/logparse.h"
#include "../../validate/tune.h"
#include "../../validate/validate.h"
#include "../../validate/validation.h"

/* --- the allocator: the fail_at-th allocation counted fails */
void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

static long n_alloc, fail_at; /* fail_at 0: not counting; -1: counting, none fails */
static int n_failed;

static int fail_now(void)
{
	if (!fail_at || ++n_alloc != fail_at)
		return 0;
	n_failed = 1;
	errno = ENOMEM; /* as malloc sets it */
	return 1;
}

void *__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t a, size_t b)
{
	return fail_now() ? NULL : __real_calloc(a, b);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

/* --- the cases: set up (nothing fails), call (one allocation fails),
 * clean up; with_err: call fills err */
struct fix {
	cJSON *advice;
	struct mt_validate_opts o;
	struct mt_validation v, prev;
	struct mt_logparse *p;
	struct sbuf sb;
	char dir[64], path[128];
	volatile sig_atomic_t stop;
};

struct oom_case {
	const char *name;
	void (*setup)(struct fix *f);
	int (*call)(struct fix *f, struct mt_error *err);
	void (*result)(struct fix *f, struct sbuf *out); /* what a success made */
	void (*cleanup)(struct fix *f);
	int with_err;
};

#define ADVICE "tests/fixtures/validate/advice-llama3-8b-16.json"
#define STANDIN "tests/fixtures/validate/validation-standin.json"
#define MEMLOG "tests/fixtures/megatron-logs/mlm_core_2025_fp8_memreport_mb_4ranks_unordered.log"

static void opts(struct fix *f, int top)
{
	mt_validate_opts_init(&f->o, f->dir);
	f->o.advice_path = ADVICE;
	f->o.top = top;
	f->o.launch = "cat " MEMLOG " # {megatron_args} {bridge_overrides} {env} {name} {dir} "
		      "{log} {gpus} {nodes} {gpus_per_node} {iters} {warmup} {rank} {advice}";
	f->o.warmup = 1;
	f->o.timeout_s = 60;
}

static void init_v(struct fix *f, int top)
{
	struct mt_error err = MT_ERROR_INIT;

	opts(f, top);
	assert_int_equal(mt_validate_init(&f->v, f->advice, &f->o, &err), MT_OK);
}

/* the stand-in's record (every status, runs to resume) and more: memory
 * reports, a tune's run and summary */
static void rich_v(struct fix *f)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_vtune *t = &f->v.tune;
	int i;

	assert_int_equal(mt_validation_load(STANDIN, "--validation", &f->v, &err), MT_OK);
	f->v.cand[0].nmemr = 2;
	f->v.cand[0].memr = calloc(2, sizeof(*f->v.cand[0].memr));
	assert_non_null(f->v.cand[0].memr);
	f->v.cand[0].memr[0] = (struct mt_vmemrank){ 0, 0, 17, 1e9, 2e9, 3e9, 4e9, { 1e9, 2e9, 3e9 } };
	f->v.cand[0].memr[1] = (struct mt_vmemrank){ 1, 0, 18, 1e9, 2e9, NAN, NAN,
						     { NAN, NAN, NAN } };
	f->v.cand[0].tune_run = 1;
	f->v.cand[0].tune_corrected_s = 2.5;
	t->on = 1;
	t->runs = f->v.ncand;
	t->best_run = 1;
	t->order = calloc((size_t)f->v.ncand, sizeof(int));
	t->corrected_s = calloc((size_t)f->v.ncand, sizeof(double));
	assert_true(t->order && t->corrected_s);
	for (i = 0; i < f->v.ncand; i++) {
		t->order[i] = f->v.ncand - 1 - i;
		t->corrected_s[i] = 1 + i;
	}
}

static void no_setup(struct fix *f)
{
	(void)f;
}

/* the results: v as its document (the time of day and the runs' wall time
 * left out), the text, the file written */
static void the_v(struct fix *f, struct sbuf *out)
{
	int i;

	free(f->v.created);
	f->v.created = NULL;
	for (i = 0; i < f->v.ncand; i++)
		f->v.cand[i].wall_s = NAN;
	assert_int_equal(mt_validation_json(out, &f->v), MT_OK);
}

static void the_text(struct fix *f, struct sbuf *out)
{
	sbuf_add(out, f->sb.buf, f->sb.len);
}

static void the_file(struct fix *f, struct sbuf *out)
{
	FILE *in = fopen(f->path, "r");
	char buf[4096];
	size_t n;

	assert_non_null(in);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		sbuf_add(out, buf, n);
	fclose(in);
}

static void free_v(struct fix *f)
{
	mt_validation_free(&f->v);
}

static void free_all(struct fix *f)
{
	mt_validation_free(&f->v);
	mt_validation_free(&f->prev);
	sbuf_release(&f->sb);
	unlink(f->path);
}

static int call_init(struct fix *f, struct mt_error *err)
{
	opts(f, 0);
	return mt_validate_init(&f->v, f->advice, &f->o, err);
}

static int call_load(struct fix *f, struct mt_error *err)
{
	return mt_validation_load(f->path, "--validation", &f->v, err);
}

static void setup_load(struct fix *f)
{
	struct mt_error err = MT_ERROR_INIT;

	rich_v(f);
	assert_int_equal(mt_validation_write(f->path, &f->v, &err), MT_OK);
	mt_validation_free(&f->v);
}

static int call_write(struct fix *f, struct mt_error *err)
{
	return mt_validation_write(f->path, &f->v, err);
}

static int call_summarize(struct fix *f, struct mt_error *err)
{
	(void)err;
	return mt_validation_summarize(&f->v);
}

static int call_text(struct fix *f, struct mt_error *err)
{
	(void)err;
	return mt_validation_text(&f->sb, &f->v);
}

static int call_tune_text(struct fix *f, struct mt_error *err)
{
	(void)err;
	return mt_tune_text(&f->sb, &f->v);
}

static void setup_resume(struct fix *f)
{
	struct mt_error err = MT_ERROR_INIT;

	init_v(f, 0);
	assert_int_equal(mt_validation_load(STANDIN, "--resume", &f->prev, &err), MT_OK);
	f->prev.cand[0].nmemr = 1;
	f->prev.cand[0].memr = calloc(1, sizeof(*f->prev.cand[0].memr));
	assert_non_null(f->prev.cand[0].memr);
}

static int call_resume(struct fix *f, struct mt_error *err)
{
	(void)err;
	return mt_validate_resume(&f->v, &f->prev);
}

/* a log with memory reports, a cut last line */
static void setup_from_log(struct fix *f)
{
	static const char cut[] = " [2025-08-28 16:31:53] iteration 9/ 128 | elapsed time per "
				  "iteration (ms): 5";
	FILE *in = fopen(MEMLOG, "r");
	char buf[4096];
	size_t n;

	assert_non_null(in);
	init_v(f, 1);
	f->p = malloc(sizeof(*f->p));
	assert_non_null(f->p);
	mt_logparse_init(f->p);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		mt_logparse_feed(f->p, buf, n);
	fclose(in);
	mt_logparse_feed(f->p, cut, sizeof(cut) - 1);
	mt_logparse_finish(f->p);
	assert_true(f->p->nmemr > 0);
	assert_true(f->p->cut_lineno > 0);
}

static int call_from_log(struct fix *f, struct mt_error *err)
{
	(void)err;
	return mt_validate_from_log(&f->v, 0, f->p, 1e15, 1, MEMLOG);
}

static void free_from_log(struct fix *f)
{
	mt_validation_free(&f->v);
	free(f->p);
	f->p = NULL;
}

static void setup_one(struct fix *f)
{
	init_v(f, 1);
}

static int call_command(struct fix *f, struct mt_error *err)
{
	return mt_validate_command(&f->v, f->advice, 0, &f->o, &f->sb, err);
}

static int call_one(struct fix *f, struct mt_error *err)
{
	f->o.out = f->path;
	return mt_validate_one(&f->v, f->advice, 0, &f->o, err);
}

static int call_all_stopped(struct fix *f, struct mt_error *err)
{
	f->stop = 1;
	f->o.stop = &f->stop;
	return mt_validate_all(&f->v, f->advice, &f->o, err);
}

/* tune over the first 9 candidates, the stand-in's 8 runs resumed, its one
 * run more (chosen by the correction the 2 ok runs give) a command that
 * prints no iteration */
static void setup_tune(struct fix *f)
{
	struct mt_error err = MT_ERROR_INIT;

	init_v(f, 9);
	assert_int_equal(mt_validation_load(STANDIN, "--resume", &f->prev, &err), MT_OK);
	assert_int_equal(mt_validate_resume(&f->v, &f->prev), MT_OK);
	f->o.launch = "true";
	f->o.out = f->path;
	f->o.progress = fopen("/dev/null", "w");
	assert_non_null(f->o.progress);
}

static int call_tune(struct fix *f, struct mt_error *err)
{
	struct mt_tune_opts t;
	struct mt_tune_result r;

	memset(&t, 0, sizeof(t));
	t.v = f->o;
	t.per_round = 1;
	t.runs = f->prev.ncand + 1;
	return mt_tune(&f->v, f->advice, &t, &r, err);
}

/* the tune ran c9, predicted by the correction the ok runs gave */
static void the_tune(struct fix *f, struct sbuf *out)
{
	assert_int_equal(f->v.cand[8].tune_run, 1); /* the stand-in's runs were not tune's */
	assert_int_equal(f->v.cand[8].tune_fitted_from, 2);
	assert_int_equal(f->v.cand[8].status, MT_VS_NO_ITERATIONS);
	assert_true(f->v.tune.on);
	the_v(f, out);
}

static void free_tune(struct fix *f)
{
	fclose(f->o.progress);
	f->o.progress = NULL;
	free_all(f);
}

static const struct oom_case cases[] = {
	{ "mt_validate_init", no_setup, call_init, the_v, free_v, 1 },
	{ "mt_validation_load", setup_load, call_load, the_v, free_v, 1 },
	{ "mt_validation_write", rich_v, call_write, the_file, free_all, 1 },
	{ "mt_validation_summarize", rich_v, call_summarize, the_v, free_v, 0 },
	{ "mt_validation_text", rich_v, call_text, the_text, free_all, 0 },
	{ "mt_tune_text", rich_v, call_tune_text, the_text, free_all, 0 },
	{ "mt_validate_resume", setup_resume, call_resume, the_v, free_all, 0 },
	{ "mt_validate_from_log", setup_from_log, call_from_log, the_v, free_from_log, 0 },
	{ "mt_validate_command", setup_one, call_command, the_text, free_all, 1 },
	{ "mt_validate_one", setup_one, call_one, the_v, free_all, 1 },
	{ "mt_validate_all", setup_one, call_all_stopped, the_v, free_all, 1 },
	{ "mt_tune", setup_tune, call_tune, the_tune, free_tune, 1 },
};

/* One case, its k-th allocation failing (0: none, the reference: ref is
 * filled); returns how many allocations it made, and counts in *tolerated
 * the failures it succeeded despite. */
static long fail_one(struct fix *f, const struct oom_case *c, long k, struct sbuf *ref,
		     long *tolerated)
{
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf got = SBUF_INIT;
	long made;
	int rc;

	c->setup(f);
	n_alloc = 0;
	n_failed = 0;
	fail_at = k > 0 ? k : -1;
	rc = c->call(f, &err);
	fail_at = 0;
	made = n_alloc;
	if (!n_failed && rc != MT_OK)
		fail_msg("%s: no allocation failed, yet it returned %d (%s)", c->name, rc, err.msg);
	if (n_failed && rc != MT_ENOMEM && rc != MT_OK)
		fail_msg("%s: allocation %ld of %ld failed: returned %d (%s), expected MT_ENOMEM",
			 c->name, k, made, rc, err.msg);
	if (rc == MT_ENOMEM && c->with_err &&
	    (err.code != MT_ENOMEM || !strstr(err.msg, "out of memory")))
		fail_msg("%s: allocation %ld failed: the message is \"%s\" (code %d)", c->name, k,
			 err.msg, err.code);
	if (rc == MT_OK) {
		c->result(f, k ? &got : ref);
		if (k && (got.len != ref->len || memcmp(got.buf, ref->buf, got.len)))
			fail_msg("%s: allocation %ld failed, it returned MT_OK, and its result "
				 "differs:\n%s\nexpected:\n%s", c->name, k, got.buf, ref->buf);
		*tolerated += k > 0;
	}
	sbuf_release(&got);
	c->cleanup(f);
	return made;
}

static void every_allocation_can_fail(void **state)
{
	struct fix f;
	size_t i;

	(void)state;
	memset(&f, 0, sizeof(f));
	assert_int_equal(mt_json_load(ADVICE, &f.advice, &(struct mt_error)MT_ERROR_INIT), MT_OK);
	snprintf(f.dir, sizeof(f.dir), "/tmp/t-validate-oom-XXXXXX");
	assert_non_null(mkdtemp(f.dir));
	snprintf(f.path, sizeof(f.path), "%s/validation.json", f.dir);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sbuf ref = SBUF_INIT;
		long k, n, tolerated = 0;

		n = fail_one(&f, &cases[i], 0, &ref, &tolerated);
		if (n < 1)
			fail_msg("%s: allocates nothing; the case proves nothing", cases[i].name);
		for (k = 1; k <= n; k++)
			fail_one(&f, &cases[i], k, &ref, &tolerated);
		if (tolerated * 2 > n)
			fail_msg("%s: %ld of its %ld allocations can fail unnoticed", cases[i].name,
				 tolerated, n);
		if (mt_test_verbose())
			fprintf(stderr, "%s: each of %ld allocations failed in turn (%ld tolerated)\n",
				cases[i].name, n, tolerated);
		sbuf_release(&ref);
	}
	cJSON_Delete(f.advice);
	{
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f.dir);
		assert_int_equal(system(cmd), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_allocation_can_fail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
