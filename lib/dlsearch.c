/* SPDX-License-Identifier: MIT */
/* dlsearch: find a library of the CUDA stack at run time (lib/dlsearch.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dlsearch.h"

#include <dirent.h>
#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SITES 24

/* What was looked at, for the message: appended while there is room. */
struct trail {
	char *buf;
	size_t n, pos;
};

static void say(struct trail *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct trail *t, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (!t->buf || t->n == 0 || t->pos + 1 >= t->n)
		return;
	va_start(ap, fmt);
	k = vsnprintf(t->buf + t->pos, t->n - t->pos, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	t->pos += (size_t)k;
	if (t->pos >= t->n)
		t->pos = t->n - 1;
}

static void dlsearch_copy(char *dst, size_t n, const char *src)
{
	size_t k = strlen(src);

	if (k >= n)
		k = n - 1;
	memcpy(dst, src, k);
	dst[k] = 0;
}

/* The file the loader mapped for `h`. */
static void mapped_path(void *h, const char *fallback, char *out, size_t n)
{
	struct link_map *lm = NULL;

	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
		dlsearch_copy(out, n, lm->l_name);
	else
		dlsearch_copy(out, n, fallback);
}

static int loaded(void *h, const char *fallback, const char *from, struct mt_dl_found *f,
		  struct trail *t)
{
	if (t->buf && t->n)
		t->buf[0] = 0; /* found: nothing to explain */
	f->handle = h;
	f->from = from;
	mapped_path(h, fallback, f->path, sizeof(f->path));
	return MT_OK;
}

/* Keep a loaded copy when the spec accepts it; else note why, unload it, 0. */
static int take(const struct mt_dl_spec *s, void *h, const char *what, struct trail *t)
{
	char why[256] = "";

	if (!s->accept || s->accept(h, why, sizeof(why)) == 0)
		return 1;
	say(t, "; %s was refused (%s)", what, why[0] ? why : "not usable");
	dlclose(h);
	return 0;
}

/* Try one file: 1 when it loaded and was accepted; 0 (and a note when it was there)
 * otherwise. */
static int try_file(const struct mt_dl_spec *s, const char *path, struct trail *t, void **h)
{
	if (access(path, F_OK) != 0)
		return 0;
	*h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (*h)
		return take(s, *h, path, t);
	say(t, "; %s is there but did not load (%s)", path, dlerror());
	return 0;
}

/* Try the spec's soname in every folder of the ':'-separated list `dirs`, each under
 * `base` (NULL: the folders themselves).  1 when one loaded and was accepted. */
static int try_dirs(const struct mt_dl_spec *s, const char *base, const char *dirs,
		    struct trail *t, void **h)
{
	const char *soname = s->soname;
	char path[PATH_MAX + 64];
	const char *p = dirs, *e;

	while (p && *p) {
		size_t k;

		e = strchr(p, ':');
		k = e ? (size_t)(e - p) : strlen(p);
		if (k > 0) {
			int w = base ? snprintf(path, sizeof(path), "%s/%.*s/%s", base, (int)k, p, soname)
				     : snprintf(path, sizeof(path), "%.*s/%s", (int)k, p, soname);

			if (w > 0 && (size_t)w < sizeof(path) && try_file(s, path, t, h))
				return 1;
		}
		p = e ? e + 1 : NULL;
	}
	return 0;
}

/* ---------------------------------------------------------------- the places */

static int seen_dir(char (*list)[PATH_MAX], int n, const char *dir)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i], dir))
			return 1;
	return 0;
}

/* Add every site-packages matched by `pattern` (a glob), resolved, once. */
static int add_sites(char (*list)[PATH_MAX], int n, const char *pattern)
{
	glob_t g;
	size_t i;

	if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
		return n;
	for (i = 0; i < g.gl_pathc && n < MAX_SITES; i++) {
		char real[PATH_MAX];

		if (!realpath(g.gl_pathv[i], real))
			continue;
		if (!seen_dir(list, n, real))
			dlsearch_copy(list[n++], PATH_MAX, real);
	}
	globfree(&g);
	return n;
}

/* The site-packages of the Python installed under `prefix` (a venv, conda or /usr). */
static int add_prefix(char (*list)[PATH_MAX], int n, const char *prefix)
{
	char pat[PATH_MAX + 64];

	if (!prefix || !*prefix)
		return n;
	snprintf(pat, sizeof(pat), "%s/lib/python3*/site-packages", prefix);
	n = add_sites(list, n, pat);
	snprintf(pat, sizeof(pat), "%s/lib/python3*/dist-packages", prefix);
	return add_sites(list, n, pat);
}

/* The prefix of an interpreter at `exe` (".../bin/python3" -> "..."), without
 * resolving links: a venv's bin/python3 links to the base interpreter. */
static int add_interpreter(char (*list)[PATH_MAX], int n, const char *exe)
{
	char prefix[PATH_MAX], *slash;

	dlsearch_copy(prefix, sizeof(prefix), exe);
	if (!(slash = strrchr(prefix, '/')))
		return n;
	*slash = 0;                       /* .../bin */
	if (!(slash = strrchr(prefix, '/')))
		return n;
	*slash = 0;                       /* ... */
	n = add_prefix(list, n, prefix);
	/* the interpreter the link resolves to: its own site-packages */
	{
		char real[PATH_MAX];

		if (realpath(exe, real) && strcmp(real, exe)) {
			if ((slash = strrchr(real, '/'))) {
				*slash = 0;
				if ((slash = strrchr(real, '/'))) {
					*slash = 0;
					n = add_prefix(list, n, real);
				}
			}
		}
	}
	return n;
}

static int python_sites(char (*list)[PATH_MAX])
{
	const char *path = getenv("PATH"), *home = getenv("HOME"), *p, *e;
	char exe[PATH_MAX];
	ssize_t k;
	int n = 0;

	n = add_prefix(list, n, getenv("VIRTUAL_ENV"));
	n = add_prefix(list, n, getenv("CONDA_PREFIX"));
	/* this process, when it is Python (the tracer inside a training script) */
	k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (k > 0) {
		const char *base;

		exe[k] = 0;
		base = strrchr(exe, '/');
		if (base && !strncmp(base + 1, "python", 6))
			n = add_interpreter(list, n, exe);
	}
	for (p = path; p && *p; p = e ? e + 1 : NULL) {
		char cand[PATH_MAX];
		size_t len;

		e = strchr(p, ':');
		len = e ? (size_t)(e - p) : strlen(p);
		if (len == 0 || len + 10 >= sizeof(cand))
			continue;
		snprintf(cand, sizeof(cand), "%.*s/python3", (int)len, p);
		if (access(cand, X_OK) == 0)
			n = add_interpreter(list, n, cand);
	}
	if (home && *home) {
		char pat[PATH_MAX + 64];

		snprintf(pat, sizeof(pat), "%s/.local/lib/python3*/site-packages", home);
		n = add_sites(list, n, pat);
	}
	n = add_sites(list, n, "/usr/local/lib/python3*/dist-packages");
	n = add_sites(list, n, "/usr/local/lib/python3*/site-packages");
	n = add_sites(list, n, "/usr/lib/python3/dist-packages");
	return n;
}

static int try_toolkit(const struct mt_dl_spec *s, struct trail *t, void **h)
{
	const char *homes[3] = { getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda" };
	char seen[3][PATH_MAX];
	int i, j, n = 0;

	if (!s->toolkit_dirs)
		return 0;
	for (i = 0; i < 3; i++) {
		char real[PATH_MAX];
		int dup = 0;

		if (!homes[i] || !*homes[i] || !realpath(homes[i], real))
			continue;
		for (j = 0; j < n; j++)
			dup |= !strcmp(seen[j], real);
		if (dup)
			continue;
		dlsearch_copy(seen[n++], PATH_MAX, real);
		if (try_dirs(s, homes[i], s->toolkit_dirs, t, h))
			return 1;
		say(t, "; %s/{%s}", homes[i], s->toolkit_dirs);
	}
	if (n == 0)
		say(t, "; no CUDA toolkit ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda)");
	return 0;
}

static int try_wheels(const struct mt_dl_spec *s, struct trail *t, void **h)
{
	char (*sites)[PATH_MAX];
	int i, n, ok = 0;

	if (!s->wheel_dirs)
		return 0;
	if (!(sites = calloc(MAX_SITES, PATH_MAX)))
		return 0;
	n = python_sites(sites);
	for (i = 0; i < n && !ok; i++) {
		ok = try_dirs(s, sites[i], s->wheel_dirs, t, h);
		if (!ok)
			say(t, "; %s/{%s}", sites[i], s->wheel_dirs);
	}
	if (n == 0)
		say(t, "; no Python site-packages");
	free(sites);
	return ok;
}

int mt_dl_find(const struct mt_dl_spec *s, int order, struct mt_dl_found *f, char *why, size_t n)
{
	struct trail t = { why, n, 0 };
	const char *v, *lp = getenv("LD_LIBRARY_PATH");
	void *h = NULL;
	int pass;

	memset(f, 0, sizeof(*f));
	if (why && n)
		why[0] = 0;
	say(&t, "%s (%s) not found; looked in: this process", s->label, s->soname);
	if ((h = dlopen(s->soname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD))) {
		if (take(s, h, "the copy already loaded", &t))
			return loaded(h, s->soname, "already loaded", f, &t);
	} else {
		say(&t, " (not loaded)");
	}
	if (s->path_env && (v = getenv(s->path_env)) && *v) {
		if (try_file(s, v, &t, &h))
			return loaded(h, v, s->path_env, f, &t);
		say(&t, "; $%s=%s", s->path_env, v);
	}
	if ((v = getenv("MEGATUNE_CUDA_LIBRARY_PATH")) && *v) {
		if (try_dirs(s, NULL, v, &t, &h))
			return loaded(h, s->soname, "MEGATUNE_CUDA_LIBRARY_PATH", f, &t);
		say(&t, "; $MEGATUNE_CUDA_LIBRARY_PATH=%s", v);
	}
	if ((h = dlopen(s->soname, RTLD_NOW | RTLD_LOCAL))) {
		char p[MT_DL_PATH_MAX];

		mapped_path(h, s->soname, p, sizeof(p));
		if (take(s, h, p, &t))
			return loaded(h, s->soname, "the loader's search path", f, &t);
	} else {
		const char *e = dlerror();

		/* "cannot open shared object file" is the usual absence; anything else
		 * (a missing dependency, a wrong architecture) is worth quoting */
		if (e && !strstr(e, "cannot open shared object file"))
			say(&t, "; the loader's search path found it but: %s", e);
		else
			say(&t, "; the loader's search path (LD_LIBRARY_PATH=%s, ld.so.cache)",
			    lp && *lp ? lp : "(unset)");
	}
	for (pass = 0; pass < 2; pass++) {
		int wheels = (pass == 0) == (order == MT_DL_WHEELS_FIRST);

		if (wheels ? try_wheels(s, &t, &h) : try_toolkit(s, &t, &h))
			return loaded(h, s->soname, wheels ? "a Python wheel" : "the CUDA toolkit", f,
				      &t);
	}
	return MT_ENOLIB;
}

int mt_dl_nvidia_gpus(void)
{
	const char *dir = getenv("MEGATUNE_NVIDIA_PROC");
	struct dirent *e;
	DIR *d;
	int n = 0;

	if (!dir || !*dir)
		dir = "/proc/driver/nvidia/gpus";
	if (!(d = opendir(dir)))
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}
