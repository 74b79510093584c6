/* SPDX-License-Identifier: MIT */
/* fsutil: whole-file reads and atomic writes. */
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbuf.h"

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
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int mt_write_atomic(const char *path, const void *data, size_t len, struct mt_error *err)
{
	struct sbuf tmp = SBUF_INIT;
	int fd, rc = MT_OK;

	if (!strcmp(path, "-")) {
		if (write_all(STDOUT_FILENO, data, len))
			return mt_error_set(err, MT_EIO, "cannot write to standard output: %s",
					    strerror(errno));
		return MT_OK;
	}
	sbuf_addf(&tmp, "%s.tmp.XXXXXX", path);
	if (tmp.failed)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	fd = mkstemp(tmp.buf);
	if (fd < 0) {
		rc = mt_error_set(err, MT_EIO, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	fchmod(fd, 0644);
	if (write_all(fd, data, len) || fsync(fd)) {
		rc = mt_error_set(err, MT_EIO, "cannot write '%s': %s", path, strerror(errno));
		close(fd);
		unlink(tmp.buf);
		goto out;
	}
	if (close(fd) || rename(tmp.buf, path)) {
		rc = mt_error_set(err, MT_EIO, "cannot write '%s': %s", path, strerror(errno));
		unlink(tmp.buf);
	}
out:
	sbuf_release(&tmp);
	return rc;
}

int mt_is_path(const char *spec)
{
	struct stat st;
	size_t n = strlen(spec);

	return strchr(spec, '/') || (n > 5 && !strcmp(spec + n - 5, ".json")) ||
	       stat(spec, &st) == 0;
}
