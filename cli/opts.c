/* SPDX-License-Identifier: MIT */
/* opts: parse and describe a command's options from its table (opts.h). */
#include "opts.h"

#include <getopt.h>
#include <stdint.h>
#include <string.h>

#include "../lib/num.h"
#include "../lib/sbuf.h"
#include "../lib/text.h"
#include "common.h"
#include "manpage.h"

/* getopt_long's value for --help[=FORMAT] (-h is 'h'; the options are 256 and up) */
#define HELP_LONG 255

/* One option of a flattened table: the entry and its offset in args. */
struct flat {
	const struct cli_opt *o;
	size_t off;
};

static int flatten(const struct cli_opt *tab, size_t base, struct flat *out, int n, int cap)
{
	for (; tab && tab->type != CLI_END; tab++) {
		if (tab->type == CLI_GROUP) {
			n = flatten(tab->group, base + tab->off, out, n, cap);
			continue;
		}
		if (n < cap) {
			out[n].o = tab;
			out[n].off = base + tab->off;
		}
		n++;
	}
	return n;
}

static int is_option(const struct cli_opt *o)
{
	return o->type != CLI_SECTION && o->type != CLI_TEXT;
}

static int takes_arg(const struct cli_opt *o)
{
	return o->type == CLI_FN ? o->has_arg : o->type != CLI_FLAG;
}

int cli_opt_bad(const char *cmd, const char *name, const char *want, const char *arg)
{
	struct sbuf sb = SBUF_INIT;

	/* the argument as typed, with escape sequences and bad UTF-8 made visible */
	mt_term_clean(&sb, arg, strlen(arg), 0);
	fprintf(stderr, "megatune %s: error: --%s: expected %s, got '%s'\n", cmd, name, want,
		sb.failed ? "?" : sb.buf ? sb.buf : "");
	sbuf_release(&sb);
	return 2;
}

/* The default wording of what an option expects. */
static const char *want_of(const struct cli_opt *o, char *buf, size_t cap)
{
	size_t len = 0;
	int i;

	if (o->want)
		return o->want;
	switch (o->type) {
	case CLI_ONOFF:
		return "on or off";
	case CLI_INT:
	case CLI_I64:
		snprintf(buf, cap, "an integer from %.0f to %.0f", o->lo, o->hi);
		return buf;
	case CLI_NUM:
		snprintf(buf, cap, "a number from %.15g to %.15g", o->lo, o->hi);
		return buf;
	case CLI_CHOICE:
		buf[0] = 0;
		for (i = 0; o->choices[i] && len < cap; i++) {
			const char *sep = !i ? "" : o->choices[i + 1] ? ", " : " or ";
			int k = snprintf(buf + len, cap - len, "%s%s", sep, o->choices[i]);
			if (k < 0)
				break;
			len += (size_t)k;
		}
		return buf;
	default:
		return "a value";
	}
}

static int opts_set_value(const char *cmd, const struct flat *f, const char *arg, void *args)
{
	const struct cli_opt *o = f->o;
	char *dst = (char *)args + f->off, want[256];
	long long iv;
	double dv;
	int i;

	switch (o->type) {
	case CLI_FLAG:
		*(int *)dst = 1;
		return 0;
	case CLI_STR:
		*(const char **)dst = arg;
		return 0;
	case CLI_INT:
	case CLI_I64:
		if (mt_parse_int(arg, (long long)o->lo, (long long)o->hi, &iv))
			return cli_opt_bad(cmd, o->name, want_of(o, want, sizeof(want)), arg);
		if (o->type == CLI_INT)
			*(int *)dst = (int)iv;
		else
			*(int64_t *)dst = iv;
		return 0;
	case CLI_NUM:
		if (mt_parse_num_range(arg, o->lo, o->hi, &dv))
			return cli_opt_bad(cmd, o->name, want_of(o, want, sizeof(want)), arg);
		*(double *)dst = dv * (o->scale ? o->scale : 1);
		return 0;
	case CLI_ONOFF:
		if ((i = mt_parse_onoff(arg)) < 0)
			return cli_opt_bad(cmd, o->name, want_of(o, want, sizeof(want)), arg);
		*(int *)dst = i;
		return 0;
	case CLI_CHOICE:
		for (i = 0; o->choices[i]; i++)
			if (!strcmp(arg, o->choices[i])) {
				*(int *)dst = i;
				return 0;
			}
		return cli_opt_bad(cmd, o->name, want_of(o, want, sizeof(want)), arg);
	case CLI_FN: /* args: the base of the entry's own table (its group's) */
		return o->fn(cmd, o, arg, (char *)args + (f->off - o->off));
	case CLI_STRS: {
		int *count = (int *)((char *)args + f->off - o->off + o->count_off);

		if (*count >= o->cap)
			return cli_usage_error(cmd, "--%s: at most %d %s", o->name, o->cap,
					       o->want ? o->want : "values");
		((const char **)dst)[(*count)++] = arg;
		return 0;
	}
	default:
		return 0;
	}
}

int cli_parse(const struct cli_spec *spec, int argc, char **argv, void *args, int *first)
{
	struct flat flat[CLI_OPTS_MAX];
	struct option lo[CLI_OPTS_MAX + 2];
	char shorts[2 * CLI_OPTS_MAX + 5];
	int n, i, nlo = 0, ns = 0, c, rc;

	n = flatten(spec->opts, 0, flat, 0, CLI_OPTS_MAX);
	if (n > CLI_OPTS_MAX) {
		fprintf(stderr, "megatune %s: error: more than %d options\n", spec->cmd,
			CLI_OPTS_MAX);
		return 2;
	}
	if (spec->in_order)
		shorts[ns++] = '+'; /* the options end at the first operand */
	shorts[ns++] = ':'; /* a missing value is ':' rather than '?' */
	shorts[ns++] = 'h';
	for (i = 0; i < n; i++) {
		const struct cli_opt *o = flat[i].o;

		if (!is_option(o))
			continue;
		lo[nlo].name = o->name;
		lo[nlo].has_arg = takes_arg(o) ? required_argument : no_argument;
		lo[nlo].flag = NULL;
		lo[nlo].val = 256 + i;
		nlo++;
		if (o->short_name) {
			shorts[ns++] = (char)o->short_name;
			if (takes_arg(o))
				shorts[ns++] = ':';
		}
	}
	shorts[ns] = 0;
	lo[nlo++] = (struct option){ "help", optional_argument, NULL, HELP_LONG };
	lo[nlo] = (struct option){ NULL, 0, NULL, 0 };
	opterr = 0;
	optind = 0; /* 0, not 1: getopt starts afresh (glibc, musl), its "+" read again */
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		const struct flat *f = NULL;

		if (c == 'h' || c == HELP_LONG)
			return cli_help_as(spec, c == HELP_LONG ? optarg : NULL);
		if (c == '?')
			return cli_usage_error(spec->cmd, "unknown option '%s'", argv[optind - 1]);
		if (c == ':')
			return cli_usage_error(spec->cmd, "option '%s' needs a value",
					       argv[optind - 1]);
		if (c >= 256 && c - 256 < n) {
			f = &flat[c - 256];
		} else {
			for (i = 0; i < n && !f; i++)
				if (is_option(flat[i].o) && flat[i].o->short_name == c)
					f = &flat[i];
		}
		if (!f)
			return cli_usage_error(spec->cmd, "unknown option '%s'", argv[optind - 1]);
		if ((rc = opts_set_value(spec->cmd, f, optarg, args)))
			return rc;
	}
	*first = optind;
	return -1;
}

/* The option of flat[0..n-1] called `name` (len bytes; a short name when len is 0). */
static const struct flat *find_opt(const struct flat *flat, int n, const char *name, size_t len)
{
	int i;

	for (i = 0; i < n; i++) {
		const struct cli_opt *o = flat[i].o;

		if (!is_option(o))
			continue;
		if (len ? strlen(o->name) == len && !strncmp(o->name, name, len)
			: o->short_name && o->short_name == name[0])
			return &flat[i];
	}
	return NULL;
}

int cli_parse_known(const struct cli_spec *spec, int argc, char **argv, void *args, char **rest,
		    int *nrest)
{
	struct flat flat[CLI_OPTS_MAX];
	int n = flatten(spec->opts, 0, flat, 0, CLI_OPTS_MAX), i, rc;

	*nrest = 0;
	if (n > CLI_OPTS_MAX) {
		fprintf(stderr, "megatune %s: error: more than %d options\n", spec->cmd,
			CLI_OPTS_MAX);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL, *eq = NULL;
		const struct flat *f = NULL;

		if ((rc = cli_help_arg(spec, a)) >= 0)
			return rc;
		if (a[0] == '-' && a[1] == '-' && a[2]) {
			eq = strchr(a + 2, '=');
			f = find_opt(flat, n, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
		} else if (a[0] == '-' && a[1] && a[1] != '-' && !a[2]) {
			f = find_opt(flat, n, a + 1, 0);
		}
		if (!f) {
			rest[(*nrest)++] = argv[i];
			continue;
		}
		if (eq && !takes_arg(f->o))
			return cli_usage_error(spec->cmd, "option '--%s' takes no value",
					       f->o->name);
		if (eq) {
			val = eq + 1;
		} else if (takes_arg(f->o)) {
			if (i + 1 >= argc)
				return cli_usage_error(spec->cmd, "option '%s' needs a value", a);
			val = argv[++i];
		}
		if ((rc = opts_set_value(spec->cmd, f, val, args)))
			return rc;
	}
	return -1;
}

/* A help text from column `col`, '\n' starting a new indented line. */
static void opts_put_text(FILE *f, const char *text, int col)
{
	const char *p = text, *nl;

	while (*p) {
		nl = strchr(p, '\n');
		if (!nl) {
			fprintf(f, "%s\n", p);
			return;
		}
		fprintf(f, "%.*s\n", (int)(nl - p), p);
		p = nl + 1;
		if (*p)
			fprintf(f, "%*s", col, "");
	}
}

void cli_help(FILE *f, const struct cli_spec *spec)
{
	struct flat flat[CLI_OPTS_MAX];
	int n = flatten(spec->opts, 0, flat, 0, CLI_OPTS_MAX), i;

	fputs(spec->head, f);
	for (i = 0; i < n && i < CLI_OPTS_MAX; i++) {
		const struct cli_opt *o = flat[i].o;
		char lead[128];
		int len;

		if (o->type == CLI_SECTION) {
			fprintf(f, "\n%s:\n", o->name);
			continue;
		}
		if (o->type == CLI_TEXT) {
			if (o->put)
				o->put(f);
			else
				fputs(o->help, f);
			continue;
		}
		if (o->short_name)
			len = snprintf(lead, sizeof(lead), "  -%c, --%s%s%s", o->short_name, o->name,
				       o->meta ? " " : "", o->meta ? o->meta : "");
		else
			len = snprintf(lead, sizeof(lead), "  --%s%s%s", o->name, o->meta ? " " : "",
				       o->meta ? o->meta : "");
		if (!o->help || !*o->help) {
			fprintf(f, "%s\n", lead);
			continue;
		}
		if (len <= 22)
			fprintf(f, "%-24s", lead);
		else
			fprintf(f, "%s\n%24s", lead, "");
		opts_put_text(f, o->help, 24);
	}
	fprintf(f, "  -h, --help            this help\n");
	if (spec->tail)
		fprintf(f, "\n%s", spec->tail);
}

int cli_opt_names(const struct cli_spec *spec, const char **names, int cap)
{
	struct flat flat[CLI_OPTS_MAX];
	int n = flatten(spec->opts, 0, flat, 0, CLI_OPTS_MAX), i, k = 0;

	for (i = 0; i < n && i < CLI_OPTS_MAX; i++)
		if (is_option(flat[i].o)) {
			if (k < cap)
				names[k] = flat[i].o->name;
			k++;
		}
	if (k < cap)
		names[k] = "help";
	return k + 1;
}

/* The words the usage lines name after "megatune CMD ": lower-case words, '|' between
 * alternatives ("rules list", "import nccl-tests|nvbandwidth"), each once. */
static void put_usage_words(FILE *f, const struct cli_spec *spec)
{
	const char *p = spec->head, *end = strstr(p, "\n\n"), *seen[16];
	size_t seen_len[16];
	char key[64];
	int nseen = 0, i;

	snprintf(key, sizeof(key), "megatune %s ", spec->cmd);
	if (!end)
		end = p + strlen(p);
	while ((p = strstr(p, key)) && p < end) {
		const char *w = p + strlen(key), *stop = w + strcspn(w, " \n");
		size_t k;

		for (; w < stop; w += k + 1) {
			k = strcspn(w, "|");
			if (w + k > stop)
				k = (size_t)(stop - w);
			if (!k || w[0] < 'a' || w[0] > 'z' || strspn(w, "abcdefghijklmnopqrstuvwxyz"
							   "0123456789-") < k)
				continue;
			for (i = 0; i < nseen; i++)
				if (seen_len[i] == k && !strncmp(seen[i], w, k))
					break;
			if (i < nseen)
				continue;
			if (nseen < 16) {
				seen[nseen] = w;
				seen_len[nseen++] = k;
			}
			fprintf(f, "%.*s\t\t\t\n", (int)k, w);
		}
		p = stop;
	}
}

/* cli_help_as(spec, "complete") */
static void put_complete(FILE *f, const struct cli_spec *spec)
{
	struct flat flat[CLI_OPTS_MAX];
	int n = flatten(spec->opts, 0, flat, 0, CLI_OPTS_MAX), i, j;

	for (i = 0; i < n && i < CLI_OPTS_MAX; i++) {
		const struct cli_opt *o = flat[i].o;
		const char *h = o->help ? o->help : "";

		if (!is_option(o))
			continue;
		fprintf(f, "--%s\t%s\t", o->name, takes_arg(o) && o->meta ? o->meta : "");
		if (o->type == CLI_ONOFF)
			fputs("on off", f);
		for (j = 0; o->type == CLI_CHOICE && o->choices[j]; j++)
			fprintf(f, "%s%s", j ? " " : "", o->choices[j]);
		fprintf(f, "\t%.*s\n", (int)strcspn(h, "\n"), h);
	}
	fputs("--help\t\t\tthis help\n", f);
	put_usage_words(f, spec);
}

int cli_help_as(const struct cli_spec *spec, const char *format)
{
	if (!format)
		cli_help(stdout, spec);
	else if (!strcmp(format, "man"))
		cli_man_page(stdout, spec);
	else if (!strcmp(format, "complete"))
		put_complete(stdout, spec);
	else
		return cli_opt_bad(spec->cmd, "help", "man or complete", format);
	return 0;
}

int cli_help_arg(const struct cli_spec *spec, const char *arg)
{
	if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
		return cli_help_as(spec, NULL);
	if (!strncmp(arg, "--help=", 7))
		return cli_help_as(spec, arg + 7);
	return -1;
}
