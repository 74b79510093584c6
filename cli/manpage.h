/* SPDX-License-Identifier: MIT */
/* manpage: manual pages in roff (man(7)) made from the command line's own help, so that
 * they say what --help says: a command's page from its spec (`megatune CMD --help=man`),
 * and the pieces cli/main.c makes megatune(1) of.  Each function writes to f and keeps
 * nothing; none fails (a write error shows in ferror(f)).
 *
 * The help's plain-text layout becomes the page's:
 *   - the usage lines that open a head (up to its first blank line) are the SYNOPSIS: an
 *     entry per "usage:" line or line indented as one, deeper-indented lines joined to it;
 *     the rest of the head is the DESCRIPTION;
 *   - a run of lines at the margin is filled; a run of indented lines (a list, a formula,
 *     an example) is kept as it is; a blank line starts a paragraph;
 *   - a line "words:" alone after a blank line, above an indented run or a blank line, is
 *     a heading: a subsection in a head, a section in a tail ("exit codes" is EXIT STATUS,
 *     as is a paragraph "exit codes: ..."); a tail's text before any heading is NOTES;
 *   - each option is a tagged paragraph, its names in bold, its value in italics, its help
 *     filled; the sections of its table are subsections.
 * Text is escaped for roff: backslashes, '-' as \-, a leading '.' or '\'', characters
 * beyond ASCII as \[uXXXX] (invalid UTF-8 as '?'), control characters dropped.
 */
#ifndef MT_CLI_MANPAGE_H
#define MT_CLI_MANPAGE_H

#include <stddef.h>
#include <stdio.h>

#include "opts.h"

/* The page megatune-CMD(1) of spec.  Its NAME line is $MEGATUNE_MAN_SUMMARY (cli/main.c
 * sets it to the command's line of `megatune --help` when it passes --help=man on), else
 * "the megatune CMD command". */
void cli_man_page(FILE *f, const struct cli_spec *spec);

/* The pieces, in the order of a page.  .TH and NAME, "name \- summary" (a '\n' in
 * summary is a space). */
void cli_man_begin(FILE *f, const char *name, const char *summary);
/* SYNOPSIS and DESCRIPTION from head[0..len). */
void cli_man_head(FILE *f, const char *head, size_t len);
/* A section heading ("COMMANDS"). */
void cli_man_section(FILE *f, const char *title);
/* A tagged paragraph: tag in bold, text filled ('\n' in it as spaces). */
void cli_man_item(FILE *f, const char *tag, const char *text);
/* The text after the options (a spec's tail), as above. */
void cli_man_tail(FILE *f, const char *tail);
/* SEE ALSO: the pages names[0..n-1], of section 1. */
void cli_man_end(FILE *f, const char *const *names, size_t n);

#endif
