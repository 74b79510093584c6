/* SPDX-License-Identifier: MIT */
/* t-dlsearch: where lib/dlsearch.h finds a library, in which order, and what it says
 * when it does not.  A small real library ($BUILD/tests/libmtfake.so, soname
 * libmtfake.so.1) is copied under a fake CUDA toolkit, a fake virtual environment's
 * site-packages and plain folders, each case under a file name of its own so that no
 * case finds another's copy already loaded. */
#define _GNU_SOURCE
#include "testutil.h"

#include <dlfcn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/dlsearch.h"

static char g_dir[] = "/tmp/t-dlsearch.XXXXXX";
static char g_lib[4096];

static void mkdirs(const char *path)
{
	char b[4096];
	size_t i;

	snprintf(b, sizeof(b), "%s", path);
	for (i = 1; b[i]; i++) {
		if (b[i] == '/') {
			b[i] = 0;
			mkdir(b, 0755);
			b[i] = '/';
		}
	}
	mkdir(b, 0755);
}

/* Copy the fake library to DIR/NAME (DIR under the case folder). */
static void place(const char *dir, const char *name)
{
	char d[4096], to[8192], buf[65536];
	FILE *in, *out;
	size_t n;

	snprintf(d, sizeof(d), "%s/%s", g_dir, dir);
	mkdirs(d);
	snprintf(to, sizeof(to), "%s/%s", d, name);
	in = fopen(g_lib, "rb");
	out = fopen(to, "wb");
	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

static void path_of(char *out, size_t n, const char *dir, const char *name)
{
	snprintf(out, n, "%s/%s/%s", g_dir, dir, name);
}

static int answers(void *h)
{
	int (*fn)(void);
	void *p = dlsym(h, "mtfake_answer");

	memcpy(&fn, &p, sizeof(p));
	return fn ? fn() : -1;
}

static int g_refuse; /* accept() refuses this many copies first */

static int accept_fake(void *h, char *why, size_t n)
{
	if (answers(h) != 42) {
		snprintf(why, n, "not the fake library");
		return -1;
	}
	if (g_refuse > 0) {
		g_refuse--;
		snprintf(why, n, "refused on purpose");
		return -1;
	}
	return 0;
}

static struct mt_dl_spec spec(const char *soname)
{
	struct mt_dl_spec s = { "Fake", soname, "MT_TEST_FAKE_PATH", "lib64:extras/lib",
				"nvidia/fake/lib:nvidia/other/lib", accept_fake };
	return s;
}

static void env_fake(void)
{
	char v[4096];

	snprintf(v, sizeof(v), "%s/venv", g_dir);
	setenv("VIRTUAL_ENV", v, 1);
	snprintf(v, sizeof(v), "%s/cuda", g_dir);
	setenv("CUDA_HOME", v, 1);
	unsetenv("CUDA_PATH");
	unsetenv("MEGATUNE_CUDA_LIBRARY_PATH");
	unsetenv("MT_TEST_FAKE_PATH");
	g_refuse = 0;
}

#define SITE "venv/lib/python3.12/site-packages"

static void test_wheel(void **state)
{
	struct mt_dl_spec s = spec("libmtfake_w.so.1");
	struct mt_dl_found f;
	char why[2048], want[4096];

	(void)state;
	env_fake();
	place(SITE "/nvidia/other/lib", "libmtfake_w.so.1");
	assert_int_equal(mt_dl_find(&s, MT_DL_TOOLKIT_FIRST, &f, why, sizeof(why)), MT_OK);
	path_of(want, sizeof(want), SITE "/nvidia/other/lib", "libmtfake_w.so.1");
	assert_string_equal(f.from, "a Python wheel");
	assert_non_null(strstr(f.path, "/nvidia/other/lib/libmtfake_w.so.1"));
	assert_int_equal(answers(f.handle), 42);
	assert_string_equal(why, "");
}

static void test_order(void **state)
{
	struct mt_dl_spec a = spec("libmtfake_o1.so.1"), b = spec("libmtfake_o2.so.1");
	struct mt_dl_found f;

	(void)state;
	env_fake();
	place("cuda/extras/lib", "libmtfake_o1.so.1");
	place(SITE "/nvidia/fake/lib", "libmtfake_o1.so.1");
	place("cuda/lib64", "libmtfake_o2.so.1");
	place(SITE "/nvidia/fake/lib", "libmtfake_o2.so.1");
	assert_int_equal(mt_dl_find(&a, MT_DL_TOOLKIT_FIRST, &f, NULL, 0), MT_OK);
	assert_string_equal(f.from, "the CUDA toolkit");
	assert_non_null(strstr(f.path, "/cuda/extras/lib/libmtfake_o1.so.1"));
	assert_int_equal(mt_dl_find(&b, MT_DL_WHEELS_FIRST, &f, NULL, 0), MT_OK);
	assert_string_equal(f.from, "a Python wheel");
	assert_non_null(strstr(f.path, "/nvidia/fake/lib/libmtfake_o2.so.1"));
}

static void test_overrides(void **state)
{
	struct mt_dl_spec a = spec("libmtfake_e.so.1"), b = spec("libmtfake_p.so.1");
	struct mt_dl_found f;
	char v[4096];

	(void)state;
	env_fake();
	/* the folder list wins over the toolkit */
	place("cuda/lib64", "libmtfake_e.so.1");
	place("mine", "libmtfake_e.so.1");
	snprintf(v, sizeof(v), "/nonexistent:%s/mine", g_dir);
	setenv("MEGATUNE_CUDA_LIBRARY_PATH", v, 1);
	assert_int_equal(mt_dl_find(&a, MT_DL_TOOLKIT_FIRST, &f, NULL, 0), MT_OK);
	assert_string_equal(f.from, "MEGATUNE_CUDA_LIBRARY_PATH");
	assert_non_null(strstr(f.path, "/mine/libmtfake_e.so.1"));
	/* the spec's own variable names the file, whatever its name */
	place("elsewhere", "renamed.so");
	path_of(v, sizeof(v), "elsewhere", "renamed.so");
	setenv("MT_TEST_FAKE_PATH", v, 1);
	assert_int_equal(mt_dl_find(&b, MT_DL_TOOLKIT_FIRST, &f, NULL, 0), MT_OK);
	assert_string_equal(f.from, "MT_TEST_FAKE_PATH");
	assert_non_null(strstr(f.path, "/elsewhere/renamed.so"));
}

static void test_refused_goes_on(void **state)
{
	struct mt_dl_spec s = spec("libmtfake_r.so.1");
	struct mt_dl_found f;
	char why[2048];

	(void)state;
	env_fake();
	place("cuda/lib64", "libmtfake_r.so.1");
	place(SITE "/nvidia/fake/lib", "libmtfake_r.so.1");
	g_refuse = 1; /* the toolkit's copy is refused: the wheel's is taken */
	assert_int_equal(mt_dl_find(&s, MT_DL_TOOLKIT_FIRST, &f, why, sizeof(why)), MT_OK);
	assert_string_equal(f.from, "a Python wheel");
	g_refuse = 5; /* every copy refused: the reason is in the message */
	s.soname = "libmtfake_r2.so.1";
	place("cuda/lib64", "libmtfake_r2.so.1");
	assert_int_equal(mt_dl_find(&s, MT_DL_TOOLKIT_FIRST, &f, why, sizeof(why)), MT_ENOLIB);
	assert_non_null(strstr(why, "/cuda/lib64/libmtfake_r2.so.1 was refused (refused on purpose)"));
	assert_null(f.handle);
}

static void test_missing_says_where(void **state)
{
	struct mt_dl_spec s = spec("libmtfake_none.so.1");
	struct mt_dl_found f;
	char why[4096], v[4096];

	(void)state;
	env_fake();
	mkdirs(g_dir);
	snprintf(v, sizeof(v), "%s/" SITE, g_dir);
	mkdirs(v);
	setenv("MEGATUNE_CUDA_LIBRARY_PATH", "/nonexistent/a:/nonexistent/b", 1);
	assert_int_equal(mt_dl_find(&s, MT_DL_TOOLKIT_FIRST, &f, why, sizeof(why)), MT_ENOLIB);
	if (mt_test_verbose())
		printf("# %s\n", why);
	assert_non_null(strstr(why, "Fake (libmtfake_none.so.1) not found; looked in: this process"));
	assert_non_null(strstr(why, "$MEGATUNE_CUDA_LIBRARY_PATH=/nonexistent/a:/nonexistent/b"));
	assert_non_null(strstr(why, "the loader's search path (LD_LIBRARY_PATH="));
	assert_non_null(strstr(why, "/cuda/{lib64:extras/lib}"));
	assert_non_null(strstr(why, SITE "/{nvidia/fake/lib:nvidia/other/lib}"));
}

static void test_broken_copy(void **state)
{
	struct mt_dl_spec s = spec("libmtfake_bad.so.1");
	struct mt_dl_found f;
	char why[4096], p[4096];
	FILE *o;

	(void)state;
	env_fake();
	place(SITE "/nvidia/fake/lib", "placeholder");
	path_of(p, sizeof(p), SITE "/nvidia/fake/lib", "libmtfake_bad.so.1");
	o = fopen(p, "w");
	assert_non_null(o);
	fputs("not an ELF file\n", o);
	fclose(o);
	assert_int_equal(mt_dl_find(&s, MT_DL_TOOLKIT_FIRST, &f, why, sizeof(why)), MT_ENOLIB);
	assert_non_null(strstr(why, "libmtfake_bad.so.1 is there but did not load ("));
}

static void test_already_loaded(void **state)
{
	struct mt_dl_spec s = spec("libmtfake.so.1"); /* the soname of every copy above */
	struct mt_dl_found f;

	(void)state;
	env_fake();
	assert_int_equal(mt_dl_find(&s, MT_DL_TOOLKIT_FIRST, &f, NULL, 0), MT_OK);
	assert_string_equal(f.from, "already loaded");
	assert_int_equal(answers(f.handle), 42);
}

static void test_nvidia_gpus(void **state)
{
	char d[4096];

	(void)state;
	snprintf(d, sizeof(d), "%s/proc/0000:01:00.0", g_dir);
	mkdirs(d);
	snprintf(d, sizeof(d), "%s/proc/0000:02:00.0", g_dir);
	mkdirs(d);
	snprintf(d, sizeof(d), "%s/proc", g_dir);
	setenv("MEGATUNE_NVIDIA_PROC", d, 1);
	assert_int_equal(mt_dl_nvidia_gpus(), 2);
	setenv("MEGATUNE_NVIDIA_PROC", "/nonexistent/proc", 1);
	assert_int_equal(mt_dl_nvidia_gpus(), 0);
	unsetenv("MEGATUNE_NVIDIA_PROC");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wheel),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_refused_goes_on),
		cmocka_unit_test(test_missing_says_where),
		cmocka_unit_test(test_broken_copy),
		cmocka_unit_test(test_already_loaded), /* after the copies above are loaded */
		cmocka_unit_test(test_nvidia_gpus),
	};
	const char *b = getenv("BUILD");
	int rc;

	snprintf(g_lib, sizeof(g_lib), "%s/tests/libmtfake.so", b && *b ? b : "build");
	if (access(g_lib, R_OK) || !mkdtemp(g_dir)) {
		fprintf(stderr, "t-dlsearch: no %s (make builds it) or no temporary folder\n", g_lib);
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "t-dlsearch: could not remove %s\n", g_dir);
	}
	return rc;
}
