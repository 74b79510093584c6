/* SPDX-License-Identifier: MIT */
/* fsutil: whole-file reads and atomic writes. */
/* flock() is not in POSIX */
#define _DEFAULT_SOURCE 1
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbuf.h"
#include "text.h"

int mt_read_file(const char *path, size_t max_bytes, char **data, size_t *len,
		 struct mt_error *err)
{
	struct sbuf sb = SBUF_INIT;
	char chunk[65536];
	FILE *f;
	size_t n;
	int rc = MT_OK;

	*data = NULL;
	*len = 0;
	f = fopen(path, "rb");
	if (!f)
		return mt_error_set(err, MT_EIO, "cannot read '%s': %s", path, strerror(errno));
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (sb.len + n > max_bytes) {
			rc = mt_error_set(err, MT_EINVAL, "%s: file is larger than %zu bytes",
					  path, max_bytes);
			goto out;
		}
		sbuf_add(&sb, chunk, n);
	}
	if (ferror(f)) {
		rc = mt_error_set(err, MT_EIO, "cannot read '%s': %s", path, strerror(errno));
		goto out;
	}
	if (sb.failed) {
		rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	*data = sbuf_detach(&sb, len);
	if (!*data)
		rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", path);
out:
	fclose(f);
	sbuf_release(&sb);
	return rc;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (w == 0) {
			errno = ENOSPC;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* dirname of a path as a heap string ("." for a bare name). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	struct sbuf sb = SBUF_INIT;

	if (!slash)
		sbuf_adds(&sb, ".");
	else if (slash == path)
		sbuf_adds(&sb, "/");
	else
		sbuf_add(&sb, path, (size_t)(slash - path));
	return sbuf_detach(&sb, NULL);
}

char *mt_resolve_target(const char *path)
{
	struct sbuf cur = SBUF_INIT;
	char link[4096];
	int hops;

	sbuf_adds(&cur, path);
	for (hops = 0; hops < 40 && !cur.failed; hops++) {
		struct stat st;
		ssize_t n;

		if (lstat(cur.buf, &st) || !S_ISLNK(st.st_mode))
			return sbuf_detach(&cur, NULL);
		n = readlink(cur.buf, link, sizeof(link) - 1);
		if (n < 0)
			break;
		link[n] = 0;
		if (link[0] == '/') {
			sbuf_reset(&cur);
			sbuf_adds(&cur, link);
		} else {
			char *d = dir_of(cur.buf);

			if (!d)
				break;
			sbuf_reset(&cur);
			sbuf_addf(&cur, "%s/%s", d, link);
			free(d);
		}
	}
	if (hops >= 40)
		errno = ELOOP;
	else if (cur.failed)
		errno = ENOMEM;
	sbuf_release(&cur);
	return NULL;
}

static void sync_dir(const char *path)
{
	char *d = dir_of(path);
	int fd = d ? open(d, O_RDONLY) : -1;

	if (fd >= 0) {
		fsync(fd); /* best effort: some filesystems refuse fsync on directories */
		close(fd);
	}
	free(d);
}

static mode_t new_file_mode(void)
{
	mode_t u = umask(022);

	umask(u);
	return 0666 & ~u;
}

int mt_file_id_get(const char *path, struct mt_file_id *id)
{
	char *t = mt_resolve_target(path), *d;
	const char *base;
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (!t)
		return -1;
	if (!stat(t, &st)) {
		id->exists = 1;
		id->dev = (unsigned long long)st.st_dev;
		id->ino = (unsigned long long)st.st_ino;
	}
	base = strrchr(t, '/');
	base = base ? base + 1 : t;
	snprintf(id->name, sizeof(id->name), "%s", base);
	d = dir_of(t);
	if (d && !stat(d, &st)) {
		id->ddev = (unsigned long long)st.st_dev;
		id->dino = (unsigned long long)st.st_ino;
	}
	snprintf(id->dir, sizeof(id->dir), "%s", d ? d : "");
	free(d);
	free(t);
	return 0;
}

int mt_file_id_same(const struct mt_file_id *a, const struct mt_file_id *b)
{
	if (a->exists || b->exists)
		return a->exists && b->exists && a->dev == b->dev && a->ino == b->ino;
	if (strcmp(a->name, b->name))
		return 0;
	if (a->dino || b->dino)
		return a->ddev == b->ddev && a->dino == b->dino;
	return !strcmp(a->dir, b->dir);
}

int mt_same_file(const char *a, const char *b)
{
	struct mt_file_id ia, ib;

	if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-"))
		return 0;
	if (mt_file_id_get(a, &ia) || mt_file_id_get(b, &ib))
		return !strcmp(a, b);
	return mt_file_id_same(&ia, &ib);
}

/* ---------------------------------------------------------------- outputs */

static struct mt_outset *g_current; /* the transaction mt_write_atomic() stages into */

void mt_outset_begin(struct mt_outset *os)
{
	memset(os, 0, sizeof(*os));
	g_current = os;
}

/* Standard output may be a terminal: control characters that came from
 * inputs (escape sequences in a name) are made visible (lib/text.h);
 * megatune's own text and JSON hold none but '\n' and '\t'. */
static int stdout_write(const void *data, size_t len, struct mt_error *err)
{
	struct sbuf sb = SBUF_INIT;
	int rc = MT_OK;

	fflush(stdout);
	mt_term_clean(&sb, data, len, 1);
	if (sb.failed)
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
	else if (write_all(STDOUT_FILENO, sb.buf, sb.len))
		rc = mt_error_set(err, MT_EIO, "cannot write to standard output: %s",
				  strerror(errno));
	sbuf_release(&sb);
	return rc;
}

/* Write data whole to a new unique temporary file beside `target` with the
 * mode the target will have; *tmp_out is the heap name. */
static int write_temp(const char *path, const char *target, const void *data, size_t len,
		      char **tmp_out, struct mt_error *err)
{
	struct sbuf tmp = SBUF_INIT;
	struct stat st;
	mode_t mode;
	int fd, e;

	*tmp_out = NULL;
	mode = stat(target, &st) == 0 ? (st.st_mode & 07777) : new_file_mode();
	if (stat(target, &st) == 0 && !S_ISREG(st.st_mode))
		return mt_error_set(err, MT_EIO, "cannot write '%s': not a regular file", path);
	sbuf_addf(&tmp, "%s.tmp.XXXXXX", target);
	if (tmp.failed)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	fd = mkstemp(tmp.buf);
	if (fd < 0) {
		e = errno;
		sbuf_release(&tmp);
		return mt_error_set(err, MT_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	if (fchmod(fd, mode) || write_all(fd, data, len) || fsync(fd)) {
		e = errno;
		close(fd);
		unlink(tmp.buf);
		sbuf_release(&tmp);
		return mt_error_set(err, MT_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	if (close(fd)) {
		e = errno;
		unlink(tmp.buf);
		sbuf_release(&tmp);
		return mt_error_set(err, MT_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	*tmp_out = sbuf_detach(&tmp, NULL);
	return MT_OK;
}

int mt_outset_stage(struct mt_outset *os, const char *path, const void *data, size_t len,
		    struct mt_error *err)
{
	struct mt_file_id id, other;
	char *target, *tmp;
	int i, rc;

	if (!strcmp(path, "-"))
		return stdout_write(data, len, err);
	if (os->n >= MT_OUTSET_MAX)
		return mt_error_set(err, MT_EINVAL, "%s: more than %d outputs at once", path,
				    MT_OUTSET_MAX);
	target = mt_resolve_target(path);
	if (!target && errno == ENOMEM)
		return mt_error_set(err, MT_ENOMEM, "%s: out of memory", path);
	if (!target)
		return mt_error_set(err, MT_EIO, "cannot write '%s': %s", path, strerror(errno));
	if (!mt_file_id_get(target, &id))
		for (i = 0; i < os->n; i++)
			if (!mt_file_id_get(os->target[i], &other) && mt_file_id_same(&id, &other)) {
				free(target);
				return mt_error_set(err, MT_EUSAGE, "output '%s' is also written "
						    "as '%s': two outputs name one file", path,
						    os->target[i]);
			}
	if ((rc = write_temp(path, target, data, len, &tmp, err))) {
		free(target);
		return rc;
	}
	os->target[os->n] = target;
	os->tmp[os->n] = tmp;
	os->n++;
	return MT_OK;
}

static void outset_clear(struct mt_outset *os)
{
	int i;

	for (i = 0; i < os->n; i++) {
		free(os->target[i]);
		free(os->tmp[i]);
	}
	os->n = 0;
	if (g_current == os)
		g_current = NULL;
}

int mt_outset_commit(struct mt_outset *os, struct mt_error *err)
{
	int i, j, e, rc = MT_OK;

	for (i = 0; i < os->n; i++) {
		if (rename(os->tmp[i], os->target[i])) {
			e = errno;
			rc = mt_error_set(err, MT_EIO, "cannot write '%s': %s%s", os->target[i],
					  strerror(e), i ? " (outputs already replaced:" : "");
			for (j = i; j < os->n; j++)
				unlink(os->tmp[j]);
			break;
		}
		sync_dir(os->target[i]);
	}
	if (rc && i) {
		size_t n = strlen(err->msg);

		for (j = 0; j < i && n + 4 < sizeof(err->msg); j++) {
			snprintf(err->msg + n, sizeof(err->msg) - n, " %s", os->target[j]);
			n = strlen(err->msg);
		}
		snprintf(err->msg + n, sizeof(err->msg) - n, ")");
	}
	outset_clear(os);
	return rc;
}

void mt_outset_abort(struct mt_outset *os)
{
	int i;

	for (i = 0; i < os->n; i++)
		unlink(os->tmp[i]);
	outset_clear(os);
}

int mt_write_atomic(const char *path, const void *data, size_t len, struct mt_error *err)
{
	struct mt_outset one;
	struct mt_outset *saved = g_current;
	int rc;

	if (!strcmp(path, "-"))
		return stdout_write(data, len, err);
	if (g_current)
		return mt_outset_stage(g_current, path, data, len, err);
	memset(&one, 0, sizeof(one));
	rc = mt_outset_stage(&one, path, data, len, err);
	if (rc)
		mt_outset_abort(&one);
	else
		rc = mt_outset_commit(&one, err);
	g_current = saved;
	return rc;
}

/* ---------------------------------------------------------------- streams */

int mt_stream_open(struct mt_stream *s, const char *path, int truncate, struct mt_error *err)
{
	int e;

	s->path = path;
	s->fd = open(path, O_WRONLY | O_APPEND | O_CREAT, new_file_mode());
	if (s->fd < 0)
		return mt_error_set(err, MT_EIO, "%s: cannot write: %s", path, strerror(errno));
	if (flock(s->fd, LOCK_EX | LOCK_NB)) {
		e = errno;
		close(s->fd);
		s->fd = -1;
		if (e == EWOULDBLOCK)
			return mt_error_set(err, MT_EUSAGE, "%s: in use by another megatune "
					    "calibrate (the file is locked); wait for it to end",
					    path);
		return mt_error_set(err, MT_EIO, "%s: cannot lock: %s", path, strerror(e));
	}
	if (truncate && ftruncate(s->fd, 0)) {
		e = errno;
		close(s->fd);
		s->fd = -1;
		return mt_error_set(err, MT_EIO, "%s: cannot write: %s", path, strerror(e));
	}
	return MT_OK;
}

int mt_stream_write(struct mt_stream *s, const void *data, size_t len, struct mt_error *err)
{
	off_t end;
	int e;

	if (s->fd < 0)
		return mt_error_set(err, MT_EIO, "%s: not open", s->path);
	end = lseek(s->fd, 0, SEEK_END);
	if (write_all(s->fd, data, len) || fsync(s->fd)) {
		e = errno;
		if (end >= 0 && ftruncate(s->fd, end) == 0) /* no half record left behind */
			fsync(s->fd);
		return mt_error_set(err, MT_EIO, "%s: cannot write: %s", s->path, strerror(e));
	}
	return MT_OK;
}

int mt_stream_truncate(struct mt_stream *s, long long len, struct mt_error *err)
{
	if (ftruncate(s->fd, (off_t)len) || fsync(s->fd))
		return mt_error_set(err, MT_EIO, "%s: cannot truncate: %s", s->path,
				    strerror(errno));
	return MT_OK;
}

int mt_stream_close(struct mt_stream *s, struct mt_error *err)
{
	int rc = MT_OK;

	if (s->fd >= 0 && close(s->fd))
		rc = mt_error_set(err, MT_EIO, "%s: cannot write: %s", s->path, strerror(errno));
	s->fd = -1;
	return rc;
}

int mt_is_path(const char *spec)
{
	struct stat st;
	size_t n = strlen(spec);

	return strchr(spec, '/') || (n > 5 && !strcmp(spec + n - 5, ".json")) ||
	       stat(spec, &st) == 0;
}

int mt_self_exe(char *buf, size_t cap)
{
	ssize_t n;

	if (cap < 2)
		return -1;
	n = readlink("/proc/self/exe", buf, cap - 1);
	if (n <= 0 || (size_t)n >= cap - 1)
		return -1;
	buf[n] = 0;
	return 0;
}
