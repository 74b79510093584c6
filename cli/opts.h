/* SPDX-License-Identifier: MIT */
/* opts: a command's options declared once.  One table per command (with
 * shared groups: the job, the cluster, the output, validate's runner) gives
 * the parser, the error messages and the help text, in the manner of git's
 * parse-options and fio's option table: name, type, where the value goes
 * (offsetof into the command's argument struct), its range and its help.
 *
 * Every numeric option is read by lib/num.h: hexadecimal, octal-looking
 * prefixes, NaN, infinities and values out of range are refused with one
 * message, "megatune CMD: error: --NAME: expected WANT, got 'ARG'", exit 2.
 */
#ifndef MT_CLI_OPTS_H
#define MT_CLI_OPTS_H

#include <stddef.h>
#include <stdio.h>

enum cli_opt_type {
	CLI_END,      /* the end of a table */
	CLI_SECTION,  /* help only: a blank line and "name:" (a heading) */
	CLI_TEXT,     /* help only: the help text as it is */
	CLI_FLAG,     /* no value: the int at off set to 1 */
	CLI_STR,      /* const char * at off (the argv string, not copied) */
	CLI_INT,      /* int at off, a decimal integer in [lo, hi] */
	CLI_I64,      /* int64_t at off, a decimal integer in [lo, hi] */
	CLI_NUM,      /* double at off, a finite decimal in [lo, hi], times scale */
	CLI_ONOFF,    /* int at off: on|true|1 -> 1, off|false|0 -> 0 */
	CLI_CHOICE,   /* int at off: the index of the value among choices */
	CLI_FN,       /* fn(cmd, opt, arg, args) does it all */
	CLI_GROUP,    /* the entries of group, their offsets relative to off */
	CLI_STRS,     /* repeatable: const char *[cap] at off, its count (int) at count_off */
};

struct cli_opt;

/* A CLI_FN handler: 0, or the exit code after printing the error
 * (cli_opt_bad() gives the common wording).  `arg` is NULL for an option
 * without a value (has_arg 0).  `args` is the struct the entry's own table
 * describes: the command's arguments, or for an entry of a CLI_GROUP the
 * group's base (so o->off is an offset into args either way). */
typedef int (*cli_opt_fn)(const char *cmd, const struct cli_opt *o, const char *arg, void *args);

struct cli_opt {
	int type;                  /* enum cli_opt_type */
	const char *name;          /* the long name without "--"; a heading for CLI_SECTION */
	int short_name;            /* e.g. 'o', or 0 */
	const char *meta;          /* the value in the help: "N", "FILE", "on|off"; NULL: none */
	const char *help;          /* the help text; each '\n' starts an indented line */
	size_t off;                /* offsetof into the command's argument struct */
	double lo, hi;             /* CLI_INT, CLI_I64, CLI_NUM: the range (inclusive) */
	const char *want;          /* what the error says was expected ("a positive integer");
				    * CLI_STRS: what the values are, plural ("paths") */
	const char *const *choices; /* CLI_CHOICE: the names, NULL-terminated */
	cli_opt_fn fn;             /* CLI_FN */
	const struct cli_opt *group; /* CLI_GROUP */
	const void *data;          /* CLI_FN: whatever the handler needs */
	int has_arg;               /* CLI_FN: 1 when it takes a value (the others know) */
	double scale;              /* CLI_NUM: the value stored is the number times scale (0: 1) */
	size_t count_off;          /* CLI_STRS: offsetof the count (int) */
	int cap;                   /* CLI_STRS: at most this many values */
	void (*put)(FILE *f);      /* CLI_TEXT: writes the text (instead of help), e.g. a list
				    * known at run time */
};

/* A command: the text before the options (usage lines and what it does, no
 * trailing blank line), the table, the text after (exit codes, examples;
 * NULL for none). */
struct cli_spec {
	const char *cmd;           /* "advise" */
	const char *head;
	const struct cli_opt *opts;
	const char *tail;
	int in_order;              /* 1: the options end at the first operand (what follows is
				    * a command line or operands only), as getopt's "+" */
};

/* Parse argv[1..] (argv[0] is the command) into args.  Options and operands
 * may mix (GNU getopt_long order); afterwards argv[*first..argc-1] are the
 * operands.  -h and --help print the help to stdout.  Returns -1 to go on,
 * 0 after the help, or 2 after an error message on stderr. */
int cli_parse(const struct cli_spec *spec, int argc, char **argv, void *args, int *first);

/* cli_parse() for a command that passes what it does not know on (tune: to advise):
 * the options of spec's table are read ("--name value", "--name=value", "-x value",
 * exact names only), every other argument is appended to rest (room for argc
 * entries, the caller's) in order, *nrest counting them.  Returns as cli_parse(). */
int cli_parse_known(const struct cli_spec *spec, int argc, char **argv, void *args, char **rest,
		    int *nrest);

/* The help: head, the options with their text from column 24, tail. */
void cli_help(FILE *f, const struct cli_spec *spec);

/* The help of spec on standard output in a format (cli_parse() and cli_parse_known() read
 * --help=FORMAT; for tools, not listed in the help):
 *   NULL      the text of cli_help() (--help)
 *   man       the manual page megatune-CMD(1) in roff (cli/manpage.h)
 *   complete  the words of shell completion, one a line, four fields separated by tabs:
 *             the word ("--model" for an option; a word the usage lines name after
 *             "megatune CMD", "list" of rules, "nccl-tests" of import), the option's value
 *             as the help shows it ("NAME|FILE"; empty: a flag or a word), the values the
 *             table knows it takes (space-separated: CLI_CHOICE, CLI_ONOFF; else empty),
 *             the first line of its help
 * Returns 0, or 2 after an error message for an unknown format. */
int cli_help_as(const struct cli_spec *spec, const char *format);

/* arg is "-h", "--help" or "--help=FORMAT": cli_help_as() of it; else -1. */
int cli_help_arg(const struct cli_spec *spec, const char *arg);

/* The long names of the options of spec in table order (groups expanded),
 * help and -h included; at most cap are stored; returns how many there are. */
int cli_opt_names(const struct cli_spec *spec, const char **names, int cap);

/* "megatune CMD: error: --NAME: expected WANT, got 'ARG'" on stderr (control
 * characters and invalid UTF-8 of ARG shown escaped, never sent raw); 2. */
int cli_opt_bad(const char *cmd, const char *name, const char *want, const char *arg);

/* Options of every command at most (groups expanded). */
#define CLI_OPTS_MAX 160

/* Entry makers for the common types (designated initialisers). */
#define CLI_SEC(title) { .type = CLI_SECTION, .name = (title) }
#define CLI_OPT_END { .type = CLI_END }
/* A line of help text as it is (CLI_TEXT). */
#define CLI_TXT(text) { .type = CLI_TEXT, .help = (text) }

#endif
