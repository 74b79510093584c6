/* SPDX-License-Identifier: MIT */
/* fsutil: whole-file reads and crash-safe writes.
 *
 * Outputs are never written in place: mt_write_atomic() writes a temporary file
 * next to the target, flushes it to disk and renames it over the target, so a
 * failed or interrupted write leaves the previous file untouched.
 */
#ifndef MT_FSUTIL_H
#define MT_FSUTIL_H

#include <stddef.h>

#include "err.h"

/* Read a whole file.  On success *data is a heap buffer (caller frees) with a
 * terminating NUL not counted in *len.  Refuses files over `max_bytes`. */
int mt_read_file(const char *path, size_t max_bytes, char **data, size_t *len,
		 struct mt_error *err);

/* 1 when `spec` names a file rather than a bundled name: it contains '/',
 * ends in ".json", or exists. */
int mt_is_path(const char *spec);

/* The path of this program (/proc/self/exe), into buf: 0, or -1 when it
 * cannot be read or does not fit. */
int mt_self_exe(char *buf, size_t cap);

/* Write `len` bytes to `path` through a temporary file and rename().
 * "-" writes to standard output.
 *
 * The guarantees (docs/FORMATS.md, "Outputs"): the temporary file has a
 * unique name (mkstemp) in the directory of the final target, every write and
 * the close are checked, the data is fsync()ed before the rename and the
 * directory after it, so the target holds either its old or its new content,
 * never a mix.  A symbolic link is followed: its target is replaced, the link
 * stays.  An existing file keeps its permission bits; a new one gets
 * 0666 & ~umask.  Inside a transaction (mt_outset_begin()) the file is staged
 * and renamed only by mt_outset_commit(). */
int mt_write_atomic(const char *path, const void *data, size_t len, struct mt_error *err);

/* ---------------------------------------------------------------- outputs
 * A command's outputs committed together: stage each one (written whole to
 * its temporary file, synced), then commit (every rename) only when all are
 * staged; a failure before the commit removes the temporary files and leaves
 * every target untouched.  Two staged outputs naming the same file are
 * refused.  "-" (standard output) is written at once, never staged.
 *
 *     struct mt_outset os;
 *     mt_outset_begin(&os);             // mt_write_atomic() now stages
 *     if (write_json(...) || mt_report_write(...))
 *             mt_outset_abort(&os);     // no target changed
 *     else
 *             rc = mt_outset_commit(&os, &err);
 *
 * One transaction at a time (begin makes it the current one for
 * mt_write_atomic(); commit and abort end it).  The caller owns `os`. */
#define MT_OUTSET_MAX 16

struct mt_outset {
	int n;
	char *target[MT_OUTSET_MAX]; /* resolved final paths (heap) */
	char *tmp[MT_OUTSET_MAX];    /* staged temporary files (heap) */
};

void mt_outset_begin(struct mt_outset *os);
/* Stage one output of `os` (need not be the current transaction). */
int mt_outset_stage(struct mt_outset *os, const char *path, const void *data, size_t len,
		    struct mt_error *err);
/* Rename every staged file over its target and sync the directories; ends
 * the transaction.  A rename failing after others succeeded is reported
 * naming the files already replaced (a rename cannot be undone). */
int mt_outset_commit(struct mt_outset *os, struct mt_error *err);
/* Remove every staged file; ends the transaction.  Safe to call twice. */
void mt_outset_abort(struct mt_outset *os);

/* ---------------------------------------------------------------- identity
 * Which file a path names, symbolic links followed, for outputs that do not
 * exist yet too (then: the directory's device and inode plus the name). */
struct mt_file_id {
	int exists;
	unsigned long long dev, ino; /* the file, when it exists */
	unsigned long long ddev, dino; /* its directory (0 when missing) */
	char name[256];              /* last component of the resolved path */
	char dir[1024];              /* resolved directory as text (when missing) */
};

int mt_file_id_get(const char *path, struct mt_file_id *id);
/* 1 when the two ids name the same file (or the same future file). */
int mt_file_id_same(const struct mt_file_id *a, const struct mt_file_id *b);
/* 1 when paths a and b name the same file ("-" names none). */
int mt_same_file(const char *a, const char *b);

/* The path a write to `path` really replaces: symbolic links followed to
 * their final target (which need not exist).  Heap string (caller frees),
 * or NULL with errno (ELOOP after 40 links). */
char *mt_resolve_target(const char *path);

/* ---------------------------------------------------------------- streams
 * An append-only record stream (the calibrate results file): opened with an
 * exclusive lock (flock) held until mt_stream_close(); every record written
 * whole, checked, and fsync()ed. */
struct mt_stream {
	int fd;
	const char *path;
};

/* Open `path` for appending (truncate: start empty; create when missing) and
 * lock it.  A lock held by another process: MT_EUSAGE with a message naming
 * the file (the caller's exit 2). */
int mt_stream_open(struct mt_stream *s, const char *path, int truncate, struct mt_error *err);
/* Append `len` bytes and sync; MT_EIO with the reason on any failure. */
int mt_stream_write(struct mt_stream *s, const void *data, size_t len, struct mt_error *err);
/* Cut the stream to `len` bytes (recovery after damage). */
int mt_stream_truncate(struct mt_stream *s, long long len, struct mt_error *err);
/* Close (releases the lock); MT_EIO when the close fails. */
int mt_stream_close(struct mt_stream *s, struct mt_error *err);

#endif
