/* SPDX-License-Identifier: MIT */
#include "common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../lib/fsutil.h"
#include "../lib/sbuf.h"
#include "../lib/text.h"
#include "../job/script.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/model.h"

void cli_usage_hint(const char *cmd)
{
	fprintf(stderr, "run 'megatune %s --help' for the options\n", cmd);
}

/* A message to stderr with control characters and invalid UTF-8 from inputs
 * (keys, names, arguments) made visible, never sent to the terminal raw. */
static void put_clean(const char *msg)
{
	struct sbuf sb = SBUF_INIT;

	mt_term_clean(&sb, msg, strlen(msg), 1);
	fputs(sb.failed ? "(out of memory)" : sb.buf, stderr);
	sbuf_release(&sb);
}

void cli_warning(const char *cmd, const char *msg)
{
	fprintf(stderr, "megatune %s: warning: ", cmd);
	put_clean(msg);
	fputc('\n', stderr);
}

void cli_cluster_warnings(const char *cmd, const struct mt_cluster *c)
{
	char note[1024];
	int i;

	for (i = 0; c && mt_cluster_note(c, i, note, sizeof(note)); i++)
		cli_warning(cmd, note);
}

static int typo(const char *cmd, const char *msg, int strict)
{
	fprintf(stderr, "megatune %s: %s: ", cmd, strict ? "error" : "warning");
	put_clean(msg);
	fputc('\n', stderr);
	return 1;
}

int cli_typos(const char *cmd, const struct mt_jobsrc *src, const struct mt_model *m, int strict,
	      struct mt_error *err)
{
	int i, n = 0;

	for (i = 0; src && i < src->ntypo; i++)
		n += typo(cmd, src->typo[i], strict);
	for (i = 0; m && i < m->ntypo; i++)
		n += typo(cmd, m->typo[i], strict);
	if (!n || !strict)
		return MT_OK;
	return mt_error_set(err, MT_EINVAL, "--strict: %d key%s megatune does not read resemble%s "
			    "one it reads (above); correct %s, or read on without %s by leaving "
			    "--strict out", n, n > 1 ? "s" : "", n > 1 ? "" : "s", n > 1 ? "them" : "it",
			    n > 1 ? "them" : "it");
}

void cli_profile_warnings(const char *cmd, const cJSON *doc, const char *file)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;

	if (!mt_cluster_from_json(doc, file, &c, &err))
		cli_cluster_warnings(cmd, c);
	mt_cluster_free(c);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	struct sbuf sb = SBUF_INIT;
	va_list ap;

	fprintf(stderr, "megatune %s: error: ", cmd);
	va_start(ap, fmt);
	sbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	put_clean(sb.failed ? "out of memory" : sb.buf);
	sbuf_release(&sb);
	fputc('\n', stderr);
	cli_usage_hint(cmd);
	return 2;
}

void cli_sibling_exe(const char *name, char *buf, size_t cap)
{
	char exe[3072];
	char *slash = mt_self_exe(exe, sizeof(exe)) ? NULL : strrchr(exe, '/');

	if (!slash) {
		snprintf(buf, cap, "%s", name);
		return;
	}
	*slash = 0;
	snprintf(buf, cap, "%s/%s", exe, name);
}

int cli_installed_file(const char *name, char *buf, size_t cap)
{
	char installed[512];

	snprintf(installed, sizeof(installed), "../lib/megatune/%s", name);
	cli_sibling_exe(name, buf, cap);
	if (buf[0] == '/' && !access(buf, R_OK))
		return 0;
	cli_sibling_exe(installed, buf, cap);
	if (buf[0] == '/' && !access(buf, R_OK))
		return 0;
	cli_sibling_exe(name, buf, cap);
	return -1;
}

int cli_fail(const char *cmd, const struct mt_error *err)
{
	fprintf(stderr, "megatune %s: error: ", cmd);
	put_clean(err->msg);
	fputc('\n', stderr);
	return mt_exit_code(err->code);
}

void cli_check_stdout(void)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "megatune: error: cannot write to standard output: %s\n",
			strerror(errno));
		_exit(2);
	}
}

static int skip_path(const char *p)
{
	return !p || !strcmp(p, "-");
}

/* an input that names no file (a bundled name) cannot be overwritten */
static int input_exists(const char *p)
{
	struct mt_file_id id;

	return !mt_file_id_get(p, &id) && id.exists;
}

int cli_check_io(const char *cmd, const char *const *in, int nin, const char *const *out,
		 int nout)
{
	int i, j;

	for (i = 0; i < nout; i++) {
		if (skip_path(out[i]))
			continue;
		for (j = 0; j < nin; j++)
			if (!skip_path(in[j]) && input_exists(in[j]) && mt_same_file(out[i], in[j])) {
				fprintf(stderr, "megatune %s: error: output '%s' is the same file "
					"as input '%s': refusing to overwrite an input\n", cmd,
					out[i], in[j]);
				return 2;
			}
		for (j = 0; j < i; j++)
			if (!skip_path(out[j]) && mt_same_file(out[i], out[j])) {
				fprintf(stderr, "megatune %s: error: outputs '%s' and '%s' are the "
					"same file: give each output its own path\n", cmd,
					out[j], out[i]);
				return 2;
			}
	}
	return 0;
}

int cli_check_io1(const char *cmd, const char *in, const char *out)
{
	return cli_check_io(cmd, &in, 1, &out, 1);
}
