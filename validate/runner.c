/* SPDX-License-Identifier: MIT */
/* runner: a candidate's command in its own process group, watched through
 * its log (runner.h). */
#include "runner.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/shell.h"

static void nap(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ------------------------------------------------------------ templates */

static int known_key(const char *key, size_t n)
{
	const char *k = MT_TEMPLATE_KEYS;

	while (*k) {
		size_t len = strcspn(k, " ");

		if (len == n && !strncmp(k, key, n))
			return 1;
		k += len;
		k += strspn(k, " ");
	}
	return 0;
}

int mt_template_fill(const char *tmpl, mt_template_lookup lookup, void *ctx, struct sbuf *out,
		     struct mt_error *err)
{
	const char *s = tmpl;

	while (*s) {
		size_t n;
		char key[64];
		const char *val;

		if ((s[0] == '{' && s[1] == '{') || (s[0] == '}' && s[1] == '}')) {
			sbuf_addc(out, s[0]);
			s += 2;
			continue;
		}
		if (s[0] == '$' && s[1] == '{') {
			sbuf_add(out, s, 2);
			s += 2;
			continue;
		}
		if (*s != '{') {
			sbuf_addc(out, *s++);
			continue;
		}
		n = strspn(s + 1, "abcdefghijklmnopqrstuvwxyz_0123456789");
		if (n == 0 || s[1 + n] != '}' || !islower((unsigned char)s[1])) {
			sbuf_addc(out, *s++);
			continue;
		}
		if (!known_key(s + 1, n) || n >= sizeof(key))
			return mt_error_set(err, MT_EINVAL, "unknown placeholder {%.*s} in the "
					    "--launch template; known: {%s}", (int)n, s + 1,
					    "megatron_args} {bridge_overrides} {env} {nodes} {gpus} "
					    "{gpus_per_node} {name} {dir} {log} {iters} {warmup} "
					    "{rank} {advice");
		memcpy(key, s + 1, n);
		key[n] = 0;
		val = lookup(key, ctx);
		if (!val)
			return mt_error_set(err, MT_EINVAL, "placeholder {%s} has no value here", key);
		sbuf_adds(out, val);
		s += n + 2;
	}
	return MT_OK;
}

static int is_exec(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

int mt_program_check(const char *cmd, const char *what, struct mt_error *err)
{
	static const char *const builtin[] = {
		"cd", "exec", "export", ".", "source", "set", "eval", "if", "for", "while",
		"until", "case", "(", "{", "!", "time", "command", "exit", "true", ":",
		"test", "[", "echo", "printf", "sh", "bash", NULL,
	};
	char word[4096], cand[8192];
	const char *s = cmd, *path, *p;
	size_t n;
	int i;

	for (;;) {
		s += strspn(s, " \t\n");
		n = strcspn(s, " \t\n;&|");
		if (n == 0)
			return MT_OK;
		if (n >= sizeof(word))
			return MT_OK;
		memcpy(word, s, n);
		word[n] = 0;
		/* VAR=value assignments before the program, and env's */
		if ((strchr(word, '=') && (isalpha((unsigned char)word[0]) || word[0] == '_') &&
		     strspn(word, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") ==
			     (size_t)(strchr(word, '=') - word)) ||
		    !strcmp(word, "env")) {
			s += n;
			continue;
		}
		break;
	}
	if (strpbrk(word, "'\"$`\\"))
		return MT_OK; /* quoted or expanded: the shell decides */
	for (i = 0; builtin[i]; i++)
		if (!strcmp(word, builtin[i]))
			return MT_OK;
	if (strchr(word, '/')) {
		if (is_exec(word))
			return MT_OK;
		return mt_error_set(err, MT_EINVAL, "the launcher '%s' does not exist or is not "
				    "executable (the program of %s)", word, what);
	}
	path = getenv("PATH");
	for (p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t len = strcspn(p, ":");

		snprintf(cand, sizeof(cand), "%.*s/%s", (int)(len ? len : 1), len ? p : ".", word);
		if (is_exec(cand))
			return MT_OK;
		p += len;
		if (*p == ':')
			p++;
	}
	return mt_error_set(err, MT_EINVAL, "the launcher '%s' is not found on PATH (the program "
			    "of %s)", word, what);
}

/* ------------------------------------------------------------ running */

static volatile sig_atomic_t *stop_flag;

static void runner_on_signal(int sig)
{
	(void)sig;
	if (stop_flag)
		*stop_flag = 1;
}

void mt_runner_signals(volatile sig_atomic_t *flag)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	stop_flag = flag;
	sa.sa_handler = flag ? runner_on_signal : SIG_DFL;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static void drain(int fd, struct mt_logparse *p)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		mt_logparse_feed(p, buf, (size_t)n);
}

/* SIGTERM to the group, SIGKILL after grace; reaps pid unless *reaped */
static void kill_group(pid_t pg, double grace, int *reaped, int *status, int rfd,
		       struct mt_logparse *p)
{
	double t0 = mt_now();

	if (kill(-pg, SIGTERM) && errno == ESRCH && *reaped)
		return;
	while (mt_now() - t0 < grace) {
		if (!*reaped && waitpid(pg, status, WNOHANG) == pg)
			*reaped = 1;
		if (*reaped && kill(-pg, 0) && errno == ESRCH)
			break;
		drain(rfd, p);
		nap(0.02);
	}
	kill(-pg, SIGKILL);
	if (!*reaped && waitpid(pg, status, 0) == pg)
		*reaped = 1;
	/* the killed members are reaped by whoever inherited them */
	t0 = mt_now();
	while (!(kill(-pg, 0) && errno == ESRCH) && mt_now() - t0 < 2.0)
		nap(0.01);
}

static pid_t start(const struct mt_run_opts *o, int wfd)
{
	pid_t pid = fork();

	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(wfd, 1);
		dup2(wfd, 2);
		execl("/bin/sh", "sh", "-c", o->command, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		setpgid(pid, pid);
	return pid;
}

int mt_run(const struct mt_run_opts *o, struct mt_logparse *p, struct mt_run_result *r,
	   struct mt_error *err)
{
	int wfd, rfd, status = 0, reaped = 0;
	long seen = 0;
	double t0, last;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->exit_code = -1;
	wfd = open(o->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (wfd < 0)
		return mt_error_set(err, MT_EIO, "cannot write the log '%s': %s", o->log_path,
				    strerror(errno));
	rfd = open(o->log_path, O_RDONLY | O_CLOEXEC);
	if (rfd < 0) {
		close(wfd);
		return mt_error_set(err, MT_EIO, "cannot read the log '%s': %s", o->log_path,
				    strerror(errno));
	}
	pid = start(o, wfd);
	close(wfd);
	if (pid < 0) {
		close(rfd);
		return mt_error_set(err, MT_EIO, "cannot start '%s': %s", o->command,
				    strerror(errno));
	}
	t0 = last = mt_now();
	r->end = MT_RUN_EXITED;
	for (;;) {
		double now;

		drain(rfd, p);
		now = mt_now();
		if (p->iter_lines != seen) {
			seen = p->iter_lines;
			last = now;
		}
		if (waitpid(pid, &status, WNOHANG) == pid) {
			reaped = 1;
			break;
		}
		if (o->stop && *o->stop)
			r->end = MT_RUN_INTERRUPTED;
		else if (now - last > o->timeout_s)
			r->end = MT_RUN_HANG;
		else if (o->deadline > 0 && now > o->deadline)
			r->end = MT_RUN_BUDGET;
		if (r->end != MT_RUN_EXITED)
			break;
		nap(0.02);
	}
	/* a killed run, or what an exited one left running in its group */
	kill_group(pid, o->grace_s, &reaped, &status, rfd, p);
	drain(rfd, p);
	close(rfd);
	mt_logparse_finish(p);
	if (WIFEXITED(status))
		r->exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		r->signo = WTERMSIG(status);
	r->wall_s = mt_now() - t0;
	return MT_OK;
}
