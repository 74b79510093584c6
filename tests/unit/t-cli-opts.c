/* SPDX-License-Identifier: MIT */
/* cli options: every command's --help lists exactly the options of its table
 * (cli/opts.h), each once; every numeric option of a table refuses hexadecimal,
 * NaN, infinities, overflow and junk with exit 2; the repeatable and the
 * pass-through parsers. */
#include "testutil.h"

#include <stdio.h>
#include <unistd.h>

#include "../../cli/cli.h"
#include "../../cli/opts.h"

/* Every command's spec. */
static const struct cli_spec *const specs[] = {
	&cli_spec_rules,
	&cli_spec_report,
	&cli_spec_analyze,
	&cli_spec_calibrate,
	&cli_spec_probe,
	&cli_spec_import,
	&cli_spec_profile,
	&cli_spec_compare,
	&cli_spec_history,
	&cli_spec_validate,
	&cli_spec_tune,
	&cli_spec_proxy,
	&cli_spec_advise,
	&cli_spec_estimate,
	&cli_spec_check,
	NULL
};

#define MAXN (CLI_OPTS_MAX + 1)

/* The option names of the help's option lines: "  --NAME ..." and
 * "  -x, --NAME ...".  Returns how many (at most cap stored, copied into
 * store). */
static int help_names(const char *help, char store[][64], int cap)
{
	const char *line = help;
	int n = 0;

	while (line && *line) {
		const char *p = NULL, *end = strchr(line, '\n');

		if (!strncmp(line, "  --", 4))
			p = line + 4;
		else if (line[0] == ' ' && line[1] == ' ' && line[2] == '-' && line[3] != '-' &&
			 line[3] != ' ' && !strncmp(line + 4, ", --", 4))
			p = line + 8;
		if (p) {
			size_t k = strcspn(p, " \n");

			if (n < cap)
				snprintf(store[n], 64, "%.*s", (int)k, p);
			n++;
		}
		line = end ? end + 1 : NULL;
	}
	return n;
}

static char *render(const struct cli_spec *spec)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cli_help(f, spec);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_help_lists_the_table(void **state)
{
	static char listed[MAXN][64];
	const char *names[MAXN];
	int s, i, j, nl, nt;

	(void)state;
	for (s = 0; specs[s]; s++) {
		const struct cli_spec *sp = specs[s];
		char *help = render(sp);

		nl = help_names(help, listed, MAXN);
		nt = cli_opt_names(sp, names, MAXN);
		assert_true(nl <= MAXN && nt <= MAXN);
		for (i = 0; i < nt; i++)
			for (j = 0; j < i; j++)
				if (!strcmp(names[i], names[j]))
					fail_msg("%s: --%s is twice in the table", sp->cmd,
						 names[i]);
		for (i = 0; i < nl; i++)
			for (j = 0; j < i; j++)
				if (!strcmp(listed[i], listed[j]))
					fail_msg("%s: --help lists --%s twice", sp->cmd, listed[i]);
		for (i = 0; i < nt; i++) {
			for (j = 0; j < nl && strcmp(names[i], listed[j]); j++)
				;
			if (j == nl)
				fail_msg("%s: --%s is in the table, not in --help", sp->cmd,
					 names[i]);
		}
		for (j = 0; j < nl; j++) {
			for (i = 0; i < nt && strcmp(names[i], listed[j]); i++)
				;
			if (i == nt)
				fail_msg("%s: --help lists --%s, the table has no such option",
					 sp->cmd, listed[j]);
		}
		if (mt_test_verbose())
			printf("# %s: %d options\n", sp->cmd, nt);
		free(help);
	}
}

/* Parse "CMD --NAME VALUE" into a zeroed buffer larger than any command's
 * arguments, standard error silenced; the return of cli_parse(). */
static int parse_one(const struct cli_spec *spec, const char *name, const char *value)
{
	static char args[1 << 16];
	char opt[80], *argv[4];
	int first = 0, rc, saved = dup(2);
	FILE *null = fopen("/dev/null", "w");

	snprintf(opt, sizeof(opt), "--%s", name);
	argv[0] = (char *)spec->cmd;
	argv[1] = opt;
	argv[2] = (char *)value;
	argv[3] = NULL;
	memset(args, 0, sizeof(args));
	fflush(stderr);
	if (null)
		dup2(fileno(null), 2);
	rc = cli_parse(spec, 3, argv, args, &first);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	if (null)
		fclose(null);
	return rc;
}

/* Every CLI_INT, CLI_I64 and CLI_NUM entry of tab (groups walked). */
static int check_numbers(const struct cli_spec *spec, const struct cli_opt *tab)
{
	static const char *const bad[] = { "0x10", "0x0.8", "nan", "NaN", "inf", "-inf", "1e400",
					   "12abc", "", " 1", "1e", NULL };
	int n = 0, i;

	for (; tab && tab->type != CLI_END; tab++) {
		if (tab->type == CLI_GROUP) {
			n += check_numbers(spec, tab->group);
			continue;
		}
		if (tab->type != CLI_INT && tab->type != CLI_I64 && tab->type != CLI_NUM)
			continue;
		for (i = 0; bad[i]; i++)
			if (parse_one(spec, tab->name, bad[i]) != 2)
				fail_msg("%s --%s '%s' was not refused", spec->cmd, tab->name,
					 bad[i]);
		if (tab->type != CLI_NUM && parse_one(spec, tab->name, "1.5") != 2)
			fail_msg("%s --%s 1.5 was not refused (an integer)", spec->cmd, tab->name);
		if (parse_one(spec, tab->name, "1e30") != 2)
			fail_msg("%s --%s 1e30 was not refused (out of range)", spec->cmd,
				 tab->name);
		n++;
	}
	return n;
}

static void test_numbers_refused(void **state)
{
	int s, n = 0;

	(void)state;
	for (s = 0; specs[s]; s++)
		n += check_numbers(specs[s], specs[s]->opts);
	assert_true(n >= 20);
}

/* a string of the test's argv (getopt wants them writable, and leaves them so) */
#define S(x) ((char *)(x))

struct targs {
	const char *list[3];
	int nlist, flag, num;
	const char *str;
};

static const struct cli_opt t_opts[] = {
	{ .type = CLI_STRS, .name = "add", .meta = "X", .off = offsetof(struct targs, list),
	  .count_off = offsetof(struct targs, nlist), .cap = 3, .want = "things", .help = "x" },
	{ .type = CLI_FLAG, .name = "flag", .off = offsetof(struct targs, flag), .help = "f" },
	{ .type = CLI_INT, .name = "num", .off = offsetof(struct targs, num), .lo = 1, .hi = 9,
	  .help = "n" },
	{ .type = CLI_STR, .name = "str", .short_name = 's', .off = offsetof(struct targs, str),
	  .help = "s" },
	CLI_OPT_END
};

static const struct cli_spec t_spec = { .cmd = "test", .head = "usage: test\n", .opts = t_opts };

static void test_repeatable_and_known(void **state)
{
	char *argv1[] = { S("test"), S("--add"), S("a"), S("op"), S("--add=b"), S("--flag"), NULL };
	char *argv2[] = { S("test"), S("--model"), S("m"), S("--num"), S("3"), S("-s"), S("v"),
			  S("--num=4"), S("--add"), S("z"), S("--gpus=8"), S("--flag"), S("--"),
			  NULL };
	char *argv3[] = { S("test"), S("--add"), S("1"), S("--add"), S("2"), S("--add"), S("3"),
			  S("--add"), S("4"), NULL };
	char *rest[16];
	struct targs a;
	int first = 0, nrest = 0;

	(void)state;
	memset(&a, 0, sizeof(a));
	assert_int_equal(cli_parse(&t_spec, 6, argv1, &a, &first), -1);
	assert_int_equal(a.nlist, 2);
	assert_string_equal(a.list[0], "a");
	assert_string_equal(a.list[1], "b");
	assert_int_equal(a.flag, 1);
	assert_int_equal(first, 5);
	assert_string_equal(argv1[first], "op");

	memset(&a, 0, sizeof(a));
	assert_int_equal(cli_parse_known(&t_spec, 13, argv2, &a, rest, &nrest), -1);
	assert_int_equal(a.num, 4);
	assert_string_equal(a.str, "v");
	assert_int_equal(a.nlist, 1);
	assert_int_equal(a.flag, 1);
	assert_int_equal(nrest, 4);
	assert_string_equal(rest[0], "--model");
	assert_string_equal(rest[1], "m");
	assert_string_equal(rest[2], "--gpus=8");
	assert_string_equal(rest[3], "--");

	memset(&a, 0, sizeof(a));
	assert_int_equal(parse_one(&t_spec, "num", "0x3"), 2);
	memset(&a, 0, sizeof(a));
	{
		int saved = dup(2);
		FILE *null = fopen("/dev/null", "w");

		if (null)
			dup2(fileno(null), 2);
		assert_int_equal(cli_parse(&t_spec, 9, argv3, &a, &first), 2); /* a 4th --add */
		dup2(saved, 2);
		close(saved);
		if (null)
			fclose(null);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_lists_the_table),
		cmocka_unit_test(test_numbers_refused),
		cmocka_unit_test(test_repeatable_and_known),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
