/* SPDX-License-Identifier: MIT */
/* fsutil: the output layer (atomic writes, transactions, identities of
 * files, locked streams). */
#include "testutil.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/fsutil.h"

static char g_dir[256];

static void path_in(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", g_dir, name);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void expect(const char *path, const char *text)
{
	char *data = NULL;
	size_t len = 0;

	assert_int_equal(mt_read_file(path, 1 << 20, &data, &len, NULL), MT_OK);
	assert_string_equal(data, text);
	free(data);
}

static int count_tmp(void)
{
	char cmd[512];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls %s | grep -c '\\.tmp\\.'", g_dir);
	p = popen(cmd, "r");
	if (p && fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

static void test_write_atomic(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	char a[512];
	struct stat st;

	(void)state;
	path_in(a, sizeof(a), "a.txt");
	put(a, "old");
	chmod(a, 0640);
	assert_int_equal(mt_write_atomic(a, "new", 3, &err), MT_OK);
	expect(a, "new");
	assert_int_equal(stat(a, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640); /* mode kept */
	assert_int_equal(count_tmp(), 0);
	/* a missing directory: an error naming the file, nothing left */
	path_in(a, sizeof(a), "nodir/b.txt");
	assert_int_not_equal(mt_write_atomic(a, "x", 1, &err), MT_OK);
	assert_non_null(strstr(err.msg, "nodir/b.txt"));
}

static void test_outset(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_outset os;
	char a[512], b[512], bad[512];

	(void)state;
	path_in(a, sizeof(a), "t1.txt");
	path_in(b, sizeof(b), "t2.txt");
	path_in(bad, sizeof(bad), "nodir/t3.txt");
	put(a, "A0");
	/* one output cannot be written: the other is not replaced */
	mt_outset_begin(&os);
	assert_int_equal(mt_write_atomic(a, "A1", 2, &err), MT_OK);
	expect(a, "A0"); /* staged, not yet renamed */
	assert_int_not_equal(mt_write_atomic(bad, "C", 1, &err), MT_OK);
	mt_outset_abort(&os);
	expect(a, "A0");
	assert_int_equal(count_tmp(), 0);
	/* both staged: both committed */
	mt_outset_begin(&os);
	assert_int_equal(mt_write_atomic(a, "A2", 2, &err), MT_OK);
	assert_int_equal(mt_write_atomic(b, "B2", 2, &err), MT_OK);
	assert_int_equal(mt_outset_commit(&os, &err), MT_OK);
	expect(a, "A2");
	expect(b, "B2");
	/* two outputs naming one file */
	mt_outset_begin(&os);
	assert_int_equal(mt_write_atomic(a, "A3", 2, &err), MT_OK);
	assert_int_not_equal(mt_write_atomic(a, "A4", 2, &err), MT_OK);
	assert_non_null(strstr(err.msg, "two outputs name one file"));
	mt_outset_abort(&os);
	expect(a, "A2");
	/* after the transaction, writes are immediate again */
	assert_int_equal(mt_write_atomic(a, "A5", 2, &err), MT_OK);
	expect(a, "A5");
}

static void test_file_id(void **state)
{
	char a[512], l[512], d[512], n1[512], n2[512];

	(void)state;
	path_in(a, sizeof(a), "id.txt");
	path_in(l, sizeof(l), "id-link.txt");
	path_in(d, sizeof(d), "./id.txt");
	put(a, "x");
	assert_int_equal(symlink("id.txt", l), 0);
	assert_int_equal(mt_same_file(a, l), 1);
	assert_int_equal(mt_same_file(a, d), 1);
	assert_int_equal(mt_same_file(a, "-"), 0);
	/* not yet existing: the same directory and name */
	path_in(n1, sizeof(n1), "new.txt");
	snprintf(n2, sizeof(n2), "%s/../%s/new.txt", g_dir, strrchr(g_dir, '/') + 1);
	assert_int_equal(mt_same_file(n1, n2), 1);
	path_in(n2, sizeof(n2), "new2.txt");
	assert_int_equal(mt_same_file(n1, n2), 0);
	assert_int_equal(mt_same_file(n1, a), 0);
}

static void test_stream_lock(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_stream s1, s2;
	char a[512];

	(void)state;
	path_in(a, sizeof(a), "res.jsonl");
	assert_int_equal(mt_stream_open(&s1, a, 1, &err), MT_OK);
	assert_int_equal(mt_stream_write(&s1, "one\n", 4, &err), MT_OK);
	/* a second opener (another pass) is refused while the first holds it,
	 * and does not truncate it */
	assert_int_equal(mt_stream_open(&s2, a, 1, &err), MT_EUSAGE);
	assert_non_null(strstr(err.msg, "locked"));
	expect(a, "one\n");
	assert_int_equal(mt_stream_truncate(&s1, 2, &err), MT_OK);
	assert_int_equal(mt_stream_close(&s1, &err), MT_OK);
	expect(a, "on");
	assert_int_equal(mt_stream_open(&s2, a, 0, &err), MT_OK);
	assert_int_equal(mt_stream_close(&s2, &err), MT_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_atomic),
		cmocka_unit_test(test_outset),
		cmocka_unit_test(test_file_id),
		cmocka_unit_test(test_stream_lock),
	};
	int rc;

	snprintf(g_dir, sizeof(g_dir), "%s/t-fsutil.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(g_dir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	{
		char cmd[512];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_dir);
		if (system(cmd))
			rc = rc ? rc : 1;
	}
	return rc;
}
