/* SPDX-License-Identifier: MIT */
/* calibrate_launch: `megatune calibrate --launcher CMD` (calibrate_launch.h). */
#include "calibrate_launch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/sbuf.h"
#include "../probes/mpi.h"
#include "../validate/runner.h"
#include "common.h"

static volatile sig_atomic_t g_launch_stop;

/* --launcher: the launch of the round running now, which a signal to this
 * process is passed on to */
static volatile sig_atomic_t g_child;

static void on_launcher_signal(int sig)
{
	g_launch_stop = 1;
	if (g_child > 0)
		kill((pid_t)g_child, sig);
}

/* The line an interrupted pass ends with (round 0: not named). */
void calibrate_say_interrupted(const char *results, int round)
{
	char in[32] = "";

	if (round > 0)
		snprintf(in, sizeof(in), " in round %d", round);
	fprintf(stderr, "\ninterrupted%s: the results so far are in %s; run the same command "
		"with --resume to continue\n", in, results);
}

/* --launcher: round k runs as `sh -c 'LAUNCHER "$@"' megatune EXE calibrate
 * ARGS... --launched-round k`.  The launches of the rounds before the last
 * exit 0 whether or not a result failed (the file says), so any other status
 * is the launcher failing; the last round's launch writes the profile and
 * exits 1 when a result of any round failed.  0, 1 (a result failed, or a
 * launch did), or the exit code of the round that stopped the pass (2, 77,
 * 130). */
int calibrate_launch(const char *launcher, const struct mt_calib_opts *c, int argc, char **argv)
{
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf script = SBUF_INIT;
	char exe[4096], kbuf[16];
	char **av = calloc((size_t)argc + 8, sizeof(char *));
	int i, k, j, code = 0;

	signal(SIGINT, on_launcher_signal);
	signal(SIGTERM, on_launcher_signal);
	if (mt_world_launched()) {
		free(av);
		fprintf(stderr, "megatune calibrate: error: --launcher starts the ranks itself: run "
			"`megatune calibrate --launcher '%s' ...` outside mpirun or srun\n",
			launcher);
		return 2;
	}
	if (mt_program_check(launcher, "--launcher", &err)) {
		free(av);
		fprintf(stderr, "megatune calibrate: error: %s\n", err.msg);
		return 2;
	}
	if (!av) {
		fprintf(stderr, "megatune calibrate: error: out of memory\n");
		return 1;
	}
	/* this program: calibrate runs in megatune-probe */
	cli_sibling_exe("megatune-probe", exe, sizeof(exe));
	sbuf_addf(&script, "%s \"$@\"", launcher);
	if (script.failed) {
		free(av);
		fprintf(stderr, "megatune calibrate: error: out of memory\n");
		return 2;
	}
	j = 0;
	av[j++] = (char *)"/bin/sh";
	av[j++] = (char *)"-c";
	av[j++] = script.buf;
	av[j++] = (char *)"megatune";
	av[j++] = exe;
	for (i = 0; i < argc; i++)
		av[j++] = argv[i];
	av[j++] = (char *)"--launched-round";
	av[j++] = kbuf;
	av[j] = NULL;
	for (k = 1; k <= c->rounds && !code && !g_launch_stop; k++) {
		int status = 0, last = k == c->rounds;
		time_t t0 = time(NULL);
		struct stat st;
		pid_t pid;

		snprintf(kbuf, sizeof(kbuf), "%d", k);
		fprintf(stderr, "round %d of %d: %s\n", k, c->rounds, launcher);
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid == 0) {
			execv(av[0], av);
			_exit(127);
		}
		g_child = pid;
		while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		g_child = 0;
		if (pid < 0) {
			fprintf(stderr, "megatune calibrate: error: cannot start round %d: %s\n", k,
				strerror(errno));
			code = 1;
		} else if (g_launch_stop || (WIFEXITED(status) && WEXITSTATUS(status) == 130) ||
			   (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT)) {
			calibrate_say_interrupted(c->results, k);
			code = 130;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			continue;
		} else if (WIFEXITED(status) && (WEXITSTATUS(status) == 2 ||
						 WEXITSTATUS(status) == 77)) {
			code = WEXITSTATUS(status); /* the launch said why */
		} else if (last && WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
			   stat(c->out, &st) == 0 && st.st_mtime >= t0) {
			code = 1; /* the profile is written; some results failed (it said) */
		} else {
			/* earlier rounds' launches exit 0 with failed results: anything
			 * else is the launcher's own failure */
			if (WIFEXITED(status))
				fprintf(stderr, "megatune calibrate: error: round %d: '%s' exited with "
					"status %d", k, launcher, WEXITSTATUS(status));
			else
				fprintf(stderr, "megatune calibrate: error: round %d: '%s' was killed "
					"by signal %d", k, launcher, WTERMSIG(status));
			fprintf(stderr, "; the results so far are in %s, and the same command with "
				"--resume continues\n", c->results);
			code = 1;
		}
	}
	if (!code && g_launch_stop) { /* stopped between two rounds */
		calibrate_say_interrupted(c->results, 0);
		code = 130;
	}
	free(av);
	sbuf_release(&script);
	return code;
}
