/* SPDX-License-Identifier: MIT */
/* profile: run a command with the CUPTI tracer injected, then list (and
 * optionally convert) the traces it wrote. */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/dlsearch.h"
#include "../lib/fsutil.h"
#include "../lib/jsonr.h"
#include "../profiler/trace.h"
#include "cli.h"
#include "common.h"

static const char profile_head[] =
	"usage: megatune profile -o DIR [--chrome] [--flush-ms N] [--lib PATH] [--no-nvtx]\n"
	"                        -- COMMAND [ARGS...]\n"
	"\n"
	"Runs COMMAND (any CUDA program, PyTorch included, unmodified) with the\n"
	"CUPTI tracer libmegatune_trace.so injected through CUDA_INJECTION64_PATH, and\n"
	"NVTX ranges captured through NVTX_INJECTION64_PATH (the same library, which\n"
	"hands them to its CUPTI).  The tracer finds CUPTI at run time: the copy the\n"
	"process already loaded (PyTorch's), $MEGATUNE_CUPTI_PATH, the folders of\n"
	"$MEGATUNE_CUDA_LIBRARY_PATH, LD_LIBRARY_PATH, the pip wheels, then the CUDA\n"
	"toolkit; each trace's first line says which file.  Every process that\n"
	"starts CUDA writes DIR/megatune-trace.rank<RANK>.jsonl (or .local<LOCAL_RANK>\n"
	"or .pid<PID> when RANK is unset): kernels, memcpys, memsets, synchronisation,\n"
	"CUDA API calls and NVTX ranges, streamed with bounded memory, flushed every\n"
	"second, on exit and on SIGTERM.  Analyse them with `megatune analyze DIR/*.jsonl`.\n"
	"Under torchrun, srun or mpirun, put `megatune profile -o DIR --` before the\n"
	"launcher: the environment reaches every worker.\n";

static const char profile_tail[] =
	"exit codes: the command's own exit status (128+N when killed by signal N);\n"
	"2 bad usage, or the tracer library missing on a machine with an NVIDIA GPU;\n"
	"77 the tracer library is not built here (no CUDA toolkit) and there is no GPU.\n";

struct pfargs {
	const char *dir, *lib;
	int chrome, no_nvtx, flush_ms;
};

#define PF(field) offsetof(struct pfargs, field)

static const struct cli_opt profile_opts[] = {
	CLI_SEC("options"),
	{ .type = CLI_STR, .name = "output", .short_name = 'o', .meta = "DIR", .off = PF(dir),
	  .help = "where the traces go (created)" },
	{ .type = CLI_FLAG, .name = "chrome", .off = PF(chrome),
	  .help = "also write each trace as Chrome trace JSON (.json), to\n"
		  "open in Perfetto (ui.perfetto.dev) or chrome://tracing" },
	{ .type = CLI_INT, .name = "flush-ms", .meta = "N", .off = PF(flush_ms), .lo = 10,
	  .hi = 3600000, .help = "flush period (default 1000)" },
	{ .type = CLI_STR, .name = "lib", .meta = "PATH", .off = PF(lib),
	  .help = "the tracer library (default: next to this binary, or\n"
		  "$MEGATUNE_TRACE_LIB)" },
	{ .type = CLI_FLAG, .name = "no-nvtx", .off = PF(no_nvtx),
	  .help = "do not capture NVTX ranges" },
	CLI_OPT_END
};

/* the options end at COMMAND: its own options are its own */
const struct cli_spec cli_spec_profile = {
	.cmd = "profile", .head = profile_head, .opts = profile_opts, .tail = profile_tail,
	.in_order = 1,
};

static volatile sig_atomic_t child_pid;

static void profile_forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/* The tracer library: --lib, $MEGATUNE_TRACE_LIB, or next to this binary (a build
 * folder), or in ../lib/megatune/ (installed). */
static int find_lib(const char *given, char out[PATH_MAX])
{
	char found[PATH_MAX];

	if (!given)
		given = getenv("MEGATUNE_TRACE_LIB");
	if (given)
		return realpath(given, out) ? 0 : -1;
	if (cli_installed_file("libmegatune_trace.so", found, sizeof(found)))
		return -1;
	return realpath(found, out) ? 0 : -1;
}

/* The CUPTI a trace's tracer loaded, from its first line ("" when it does not say). */
static void trace_cupti(const char *path, char *out, size_t n)
{
	char line[8192];
	FILE *f = fopen(path, "r");
	cJSON *h;

	out[0] = 0;
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && (h = cJSON_Parse(line))) {
		const char *p = mt_jget_strd(h, "cupti_path", NULL);
		const char *w = mt_jget_strd(h, "cupti_from", NULL);

		if (p && *p)
			snprintf(out, n, "%s (%s)", p, w ? w : "?");
		cJSON_Delete(h);
	}
	fclose(f);
}

static int mkdirs(const char *dir)
{
	char buf[PATH_MAX];
	size_t i, n = strlen(dir);

	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] == '/' || buf[i] == '\0') {
			char c = buf[i];
			buf[i] = '\0';
			if (mkdir(buf, 0777) && errno != EEXIST)
				return -1;
			buf[i] = c;
		}
	}
	return 0;
}

static int profile_summarise(const char *dir, int chrome)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0, rc = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[PATH_MAX + 512], out[PATH_MAX + 512];
		struct mt_error err = MT_ERROR_INIT;
		struct mt_trace *t = NULL;
		size_t n = strlen(e->d_name);

		if (strncmp(e->d_name, "megatune-trace.", 15) || n < 6 ||
		    strcmp(e->d_name + n - 6, ".jsonl"))
			continue;
		found++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (mt_trace_read(path, NULL, &t, &err)) {
			fprintf(stderr, "megatune profile: warning: %s\n", err.msg);
			continue;
		}
		printf("%s: %zu kernel/memcpy/memset, %zu API calls, %zu NVTX ranges%s%s\n", path,
		       t->ngpu, t->nlaunch, t->nnvtx,
		       t->dropped ? " (records dropped: see the end record)" : "",
		       t->has_end ? "" : " (no end record: the process did not exit cleanly)");
		{
			char cupti[PATH_MAX + 64];

			trace_cupti(path, cupti, sizeof(cupti));
			if (cupti[0])
				printf("  CUPTI: %s\n", cupti);
		}
		if (chrome) {
			char *buf = NULL;
			size_t blen = 0;
			FILE *f;
			int bad;
			snprintf(out, sizeof(out), "%.*s.json", (int)(strlen(path) - 6), path);
			/* in memory, then the one atomic writer (lib/fsutil.h) */
			f = open_memstream(&buf, &blen);
			bad = !f || mt_trace_write_chrome(t, f);
			if (f && fclose(f))
				bad = 1;
			if (bad)
				mt_error_set(&err, MT_EIO, "cannot write %s: %s", out, strerror(errno));
			if (bad || mt_write_atomic(out, buf, blen, &err)) {
				fprintf(stderr, "megatune profile: error: %s\n", err.msg);
				rc = 2;
			} else {
				printf("  Chrome trace: %s\n", out);
			}
			free(buf);
		}
		mt_trace_free(t);
	}
	closedir(d);
	if (!found)
		printf("megatune profile: no trace in %s: the command started no CUDA context "
		       "(no CUDA call, or no GPU/driver here)\n", dir);
	return rc;
}

int cmd_profile(int argc, char **argv)
{
	struct pfargs pa;
	const char *dir, *lib;
	char libpath[PATH_MAX], absdir[PATH_MAX];
	int status, rc, first;
	struct sigaction sa, old_int, old_term;
	sigset_t block, old_mask;
	pid_t pid;

	memset(&pa, 0, sizeof(pa));
	if ((rc = cli_parse(&cli_spec_profile, argc, argv, &pa, &first)) >= 0)
		return rc;
	dir = pa.dir;
	lib = pa.lib;
	if (!dir)
		return cli_usage_error("profile", "-o DIR is required");
	if (first >= argc)
		return cli_usage_error("profile", "give the command to run after --");
	if (find_lib(lib, libpath)) {
		int ngpu = mt_dl_nvidia_gpus();

		/* no GPU: not applicable here; a GPU: a build to fix */
		fprintf(stderr, "megatune profile: %s%s: the tracer library libmegatune_trace.so is "
			"not here (it is built by make where the CUDA toolkit's CUPTI headers are)%s\n",
			ngpu > 0 ? "error: " : "", lib ? lib : "next to megatune or in ../lib/megatune",
			ngpu > 0 ? ", and this machine has an NVIDIA GPU" : "");
		return ngpu > 0 ? 2 : 77;
	}
	if (mkdirs(dir) || !realpath(dir, absdir)) {
		fprintf(stderr, "megatune profile: error: cannot create %s: %s\n", dir, strerror(errno));
		return 2;
	}
	setenv("CUDA_INJECTION64_PATH", libpath, 1);
	setenv("MEGATUNE_TRACE_DIR", absdir, 1);
	if (pa.flush_ms) {
		char flush[16];

		snprintf(flush, sizeof(flush), "%d", pa.flush_ms);
		setenv("MEGATUNE_TRACE_FLUSH_MS", flush, 1);
	}
	if (!pa.no_nvtx) /* the tracer forwards NVTX to the CUPTI it loaded: one instance */
		setenv("NVTX_INJECTION64_PATH", libpath, 1);

	fflush(NULL);
	/* a SIGTERM that comes before the handler is in place (the command can
	 * send one at once) waits, blocked, and is passed on then */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old_mask);
	pid = fork();
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		fprintf(stderr, "megatune profile: error: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		execvp(argv[first], argv + first);
		fprintf(stderr, "megatune profile: error: cannot run %s: %s\n", argv[first],
			strerror(errno));
		_exit(127);
	}
	child_pid = pid;
	/* Ctrl-C reaches the whole process group, the command included: ignore it
	 * here and let the command decide; a SIGTERM sent to megatune alone (a
	 * scheduler's) is passed on, so the tracer flushes before the end. */
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, &old_int);
	sa.sa_handler = profile_forward;
	sigaction(SIGTERM, &sa, &old_term);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "megatune profile: error: waitpid: %s\n", strerror(errno));
			return 2;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 2;
	if (profile_summarise(absdir, pa.chrome) && !rc)
		rc = 2;
	return rc;
}
