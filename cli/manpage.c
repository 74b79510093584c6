/* SPDX-License-Identifier: MIT */
/* manpage: manual pages in roff from the help (the contract is in manpage.h). */
#include "manpage.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/text.h"
#include "../lib/version.h"

/* Where a page is: in a no-fill block, after a blank line, with text since its heading. */
struct page {
	FILE *f;
	int nofill; /* inside .nf */
	int gap;    /* a blank line since the last text: the next starts a paragraph */
	int body;   /* text since the last heading */
	int tail;   /* rendering a tail: headings are sections */
	int in_sec; /* a tail: a section of it has begun */
};

/* s[0..n) as roff text: bol, at the beginning of an input line (a leading '.' or '\''
 * escaped); quoted, inside a macro's quoted argument ('"' escaped). */
static void esc(FILE *f, const char *s, size_t n, int bol, int quoted)
{
	size_t i;

	if (n && bol && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", f);
	for (i = 0; i < n; i++) {
		const unsigned char *u = (const unsigned char *)s + i;
		unsigned long cp;
		int k, j;

		if (u[0] == '\\')
			fputs("\\e", f);
		else if (u[0] == '-')
			fputs("\\-", f);
		else if (u[0] == '"' && quoted)
			fputs("\\(dq", f);
		else if (u[0] == '\t')
			fputc(' ', f);
		else if (u[0] >= 0x20 && u[0] < 0x7f)
			fputc(u[0], f);
		else if (u[0] < 0x80)
			continue; /* a control character */
		else if (!(k = mt_utf8_len(u, n - i)))
			fputc('?', f);
		else {
			cp = u[0] & (0x7f >> k);
			for (j = 1; j < k; j++)
				cp = cp << 6 | (u[j] & 0x3f);
			fprintf(f, "\\[u%04lX]", cp);
			i += (size_t)k - 1;
		}
	}
}

static void escs(FILE *f, const char *s)
{
	esc(f, s, strlen(s), 0, 0);
}

/* The line at p (up to '\n' or end): its length in *n; returns where the next begins. */
static const char *line_at(const char *p, const char *end, size_t *n)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	*n = (size_t)((nl ? nl : end) - p);
	return nl ? nl + 1 : end;
}

static int blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != ' ')
			return 0;
	return 1;
}

static int starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !strncmp(s, prefix, k);
}

static void fill(struct page *pg)
{
	if (pg->nofill)
		fputs(".fi\n", pg->f);
	pg->nofill = 0;
}

/* title[0..n) as the string of a macro: upper-cased when up */
static void title_arg(FILE *f, const char *title, size_t n, int up)
{
	char buf[256];
	size_t i;

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	for (i = 0; i < n; i++)
		buf[i] = up && title[i] >= 'a' && title[i] <= 'z' ? (char)(title[i] - 32) : title[i];
	fputc('"', f);
	esc(f, buf, n, 0, 1);
	fputc('"', f);
}

/* A section (sh: .SH, upper-cased) or a subsection (.SS) called title[0..n). */
static void heading(struct page *pg, int sh, const char *title, size_t n)
{
	fill(pg);
	fputs(sh ? ".SH " : ".SS ", pg->f);
	title_arg(pg->f, title, n, sh);
	fputc('\n', pg->f);
	pg->gap = pg->body = 0;
	pg->in_sec = 1;
}


/* A tail's heading: "exit codes" is EXIT STATUS, "example" EXAMPLES. */
static void tail_heading(struct page *pg, const char *title, size_t n)
{
	if (starts(title, n, "exit code"))
		heading(pg, 1, "EXIT STATUS", 11);
	else if (starts(title, n, "example"))
		heading(pg, 1, "EXAMPLES", 8);
	else
		heading(pg, 1, title, n);
}

/* One line of text: filled, or kept as it is (indented) in a no-fill block. */
static void text(struct page *pg, const char *s, size_t n, int keep)
{
	if (pg->tail && !pg->in_sec)
		heading(pg, 1, "NOTES", 5);
	if (!keep)
		fill(pg);
	if (pg->gap && pg->body && !pg->nofill)
		fputs(".PP\n", pg->f);
	if (keep && !pg->nofill)
		fputs(".nf\n", pg->f);
	pg->nofill = keep;
	pg->gap = 0;
	pg->body = 1;
	for (; !keep && n && *s == ' '; s++, n--)
		;
	esc(pg->f, s, n, 1, 0);
	fputc('\n', pg->f);
}

/* Paragraphs, kept blocks and headings of text[0..len) (manpage.h). */
static void manpage_render(struct page *pg, const char *txt, size_t len)
{
	const char *p = txt, *end = txt + len;
	int after_blank = 1;

	while (p < end) {
		size_t n, m = 0;
		const char *next = line_at(p, end, &n);
		int indented = n && p[0] == ' ', below;

		if (blank(p, n)) {
			fill(pg);
			pg->gap = after_blank = 1;
			p = next;
			continue;
		}
		if (next < end)
			line_at(next, end, &m);
		below = next >= end || blank(next, m) || next[0] == ' ';
		if (!indented && after_blank && below && n > 1 && n < 60 && p[n - 1] == ':' &&
		    !memchr(p, '.', n)) {
			if (pg->tail)
				tail_heading(pg, p, n - 1);
			else
				heading(pg, 0, p, n - 1);
		} else if (pg->tail && after_blank && starts(p, n, "exit codes: ")) {
			tail_heading(pg, p, 10);
			text(pg, p + 12, n - 12, 0);
		} else {
			text(pg, p, n, indented);
		}
		after_blank = 0;
		p = next;
	}
	fill(pg);
}

void cli_man_begin(FILE *f, const char *name, const char *summary)
{
	fputs(".\\\" generated from the program's help (megatune --help=man): do not edit\n", f);
	fputs(".TH ", f);
	title_arg(f, name, strlen(name), 1);
	fputs(" 1 \"\" \"megatune " MEGATUNE_VERSION "\" \"megatune manual\"\n", f);
	fputs(".nh\n.ad l\n.SH NAME\n", f);
	escs(f, name);
	fputs(" \\- ", f);
	for (; *summary; summary++) {
		size_t k = strcspn(summary, "\n");

		esc(f, summary, k, 0, 0);
		summary += k;
		if (!*summary)
			break;
		fputc(' ', f);
	}
	fputc('\n', f);
}

void cli_man_head(FILE *f, const char *head, size_t len)
{
	struct page pg = { .f = f };
	const char *p = head, *end = head + len;
	int entries = 0;

	fputs(".SH SYNOPSIS\n", f);
	while (p < end) {
		size_t n, ind;
		const char *next = line_at(p, end, &n);

		if (blank(p, n))
			break;
		ind = starts(p, n, "usage: ") ? 7 : strspn(p, " ");
		if (ind > n)
			ind = n;
		if (ind <= 7 && entries++)
			fputs(".br\n", f);
		esc(f, p + ind, n - ind, 1, 0);
		fputc('\n', f);
		p = next;
	}
	fputs(".SH DESCRIPTION\n", f);
	manpage_render(&pg, p, (size_t)(end - p));
}

void cli_man_section(FILE *f, const char *title)
{
	struct page pg = { .f = f };

	heading(&pg, 1, title, strlen(title));
}

/* .TP with the tag already written by the caller's tag(); text filled */
static void item_text(FILE *f, const char *txt)
{
	while (*txt) {
		size_t k = strcspn(txt, "\n");

		for (; k && *txt == ' '; txt++, k--)
			;
		if (k) {
			esc(f, txt, k, 1, 0);
			fputc('\n', f);
		}
		txt += k;
		if (*txt)
			txt++;
	}
}

void cli_man_item(FILE *f, const char *tag, const char *txt)
{
	fputs(".TP\n\\fB", f);
	escs(f, tag);
	fputs("\\fR\n", f);
	item_text(f, txt);
}

/* An option of a table: .TP, -x, --name VALUE, its help. */
static void option(struct page *pg, const struct cli_opt *o)
{
	FILE *f = pg->f;

	fill(pg);
	fputs(".TP\n", f);
	if (o->short_name)
		fprintf(f, "\\fB\\-%c\\fR, ", o->short_name);
	fputs("\\fB\\-\\-", f);
	escs(f, o->name);
	fputs("\\fR", f);
	if (o->meta) {
		fputs(" \\fI", f);
		escs(f, o->meta);
		fputs("\\fR", f);
	}
	fputc('\n', f);
	item_text(f, o->help ? o->help : "");
	pg->body = 1;
	pg->gap = 0;
}

/* A CLI_TEXT entry: its text, or what its put() writes. */
static void table_text(struct page *pg, const struct cli_opt *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	pg->gap = 1;
	if (!o->put) {
		manpage_render(pg, o->help, strlen(o->help));
		return;
	}
	if (!(m = open_memstream(&buf, &len)))
		return;
	o->put(m);
	if (!fclose(m) && buf)
		manpage_render(pg, buf, len);
	free(buf);
}

static void options(struct page *pg, const struct cli_opt *tab)
{
	for (; tab && tab->type != CLI_END; tab++) {
		if (tab->type == CLI_GROUP)
			options(pg, tab->group);
		else if (tab->type == CLI_SECTION)
			heading(pg, 0, tab->name, strlen(tab->name));
		else if (tab->type == CLI_TEXT)
			table_text(pg, tab);
		else
			option(pg, tab);
	}
}

void cli_man_tail(FILE *f, const char *tail)
{
	struct page pg = { .f = f, .tail = 1 };

	manpage_render(&pg, tail, strlen(tail));
}

void cli_man_end(FILE *f, const char *const *names, size_t n)
{
	size_t i;

	fputs(".SH \"SEE ALSO\"\n", f);
	for (i = 0; i < n; i++) {
		fputs("\\fB", f);
		escs(f, names[i]);
		fprintf(f, "\\fR(1)%s\n", i + 1 < n ? "," : "");
	}
}

void cli_man_page(FILE *f, const struct cli_spec *spec)
{
	const char *summary = getenv("MEGATUNE_MAN_SUMMARY");
	const char *const see[] = { "megatune" };
	char name[128], dflt[160];
	struct page pg = { .f = f };

	snprintf(name, sizeof(name), "megatune-%s", spec->cmd);
	if (!summary || !*summary) {
		snprintf(dflt, sizeof(dflt), "the megatune %s command", spec->cmd);
		summary = dflt;
	}
	cli_man_begin(f, name, summary);
	cli_man_head(f, spec->head, strlen(spec->head));
	cli_man_section(f, "OPTIONS");
	options(&pg, spec->opts);
	fill(&pg);
	cli_man_item(f, "-h, --help", "this help");
	if (spec->tail)
		cli_man_tail(f, spec->tail);
	cli_man_end(f, see, 1);
}
