/* SPDX-License-Identifier: MIT */
/* trace_io: a trace in and out (trace.h): the source read, a file (plain or gzipped:
 * zlib detects which) or memory, and fed to the parser (trace.c) in chunks, with the
 * errors that name the file and the byte offset; the launch call of a correlation
 * id, freeing, and the trace written back as Chrome trace JSON. */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "trace_guard.h"
#include "trace_parser.h"

#define CHUNK (256u * 1024u)

/* ------------------------------------------------------------------ driver */

static int cmp_launch(const void *a, const void *b)
{
	const struct mt_launch *x = a, *y = b;

	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

const struct mt_launch *mt_trace_launch(const struct mt_trace *t, int64_t corr)
{
	size_t lo = 0, hi = t->nlaunch;

	if (corr < 0)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->launch[mid].corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nlaunch && t->launch[lo].corr == corr ? &t->launch[lo] : NULL;
}

void mt_trace_free(struct mt_trace *t)
{
	if (!t)
		return;
	free(t->path);
	free(t->gpu_name);
	free(t->gpu);
	free(t->launch);
	free(t->step);
	free(t->a2a);
	free(t->annot);
	free(t->nvtx);
	free(t->strs);
	free(t->str_off);
	free(t->hash);
	free(t);
}

struct source {
	gzFile gz;
	const unsigned char *mem;
	size_t memlen, mempos;
};

/* Read up to n bytes; returns the count, 0 at the end, -1 on error. */
static long src_read(struct source *s, unsigned char *buf, unsigned n, const char **why)
{
	if (s->gz) {
		int r = gzread(s->gz, buf, n);
		if (r < 0) {
			int e;
			*why = gzerror(s->gz, &e);
			return -1;
		}
		if (r == 0) {
			int e;
			const char *m = gzerror(s->gz, &e);
			if (e != Z_OK && e != Z_STREAM_END) {
				*why = m;
				return -1;
			}
		}
		return r;
	}
	if (s->mempos >= s->memlen)
		return 0;
	if (n > s->memlen - s->mempos)
		n = (unsigned)(s->memlen - s->mempos);
	memcpy(buf, s->mem + s->mempos, n);
	s->mempos += n;
	return n;
}

static int parse_source(const char *name, struct source *src, const struct mt_trace_opts *o,
			struct mt_trace **out, struct mt_error *err)
{
	struct parser *p = NULL;
	struct mt_trace *t = NULL;
	yajl_handle h = NULL;
	unsigned char *buf = NULL;
	uint64_t off = 0;
	size_t kept;
	long scan;
	int rc = 0, seen = 0;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	t = calloc(1, sizeof(*t));
	buf = malloc(CHUNK);
	if (!p || !t || !buf || !(t->path = strdup(name))) {
		rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", name);
		goto out;
	}
	t->rank = t->world_size = -1;
	p->t = t;
	p->o = o;
	p->props_hash = 1469598103934665603ull;
	acc_reset(&p->a);
	h = yajl_alloc(&mt_trace_callbacks, NULL, p);
	if (!h) {
		rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", name);
		goto out;
	}
	yajl_config(h, yajl_allow_multiple_values, 1);
	for (;;) {
		const char *why = NULL;
		long n = src_read(src, buf, CHUNK, &why);
		yajl_status st;

		if (n < 0) {
			const char *z = why ? why : "read error";
			size_t pl = strlen(name);
			/* zlib prefixes its message with the path */
			if (!strncmp(z, name, pl) && z[pl] == ':' && z[pl + 1] == ' ')
				z += pl + 2;
			if (!strcmp(z, "unexpected end of file"))
				rc = mt_error_set(err, MT_EPARSE, "%s: truncated: the gzip stream ends early "
						  "after %llu uncompressed bytes (an interrupted copy?)",
						  name, (unsigned long long)off);
			else
				rc = mt_error_set(err, MT_EPARSE, "%s: cannot read after byte %llu: %s",
						  name, (unsigned long long)off, z);
			goto out;
		}
		for (scan = 0; !seen && scan < n; scan++)
			seen = !(buf[scan] == ' ' || buf[scan] == '\n' || buf[scan] == '\r' ||
				 buf[scan] == '\t');
		kept = n ? mt_guard_filter(&p->guard, buf, (size_t)n) : 0;
		if (p->guard.bad_num) {
			rc = mt_error_set(err, MT_EPARSE, "%s: a number of more than %d characters at "
					  "byte %llu (the reader's cap)", name, MT_TRACE_MAX_NUM,
					  (unsigned long long)p->guard.bad_num_at);
			goto out;
		}
		st = n ? yajl_parse(h, buf, kept) : yajl_complete_parse(h);
		if (st != yajl_status_ok) {
			size_t used = n ? yajl_get_bytes_consumed(h) : 0;
			if (p->second_doc || p->bad_schema[0]) {
				rc = p->second_doc ?
					mt_error_set(err, MT_EPARSE, "%s: a second JSON document at byte "
						     "%llu: one trace per file (a Kineto trace is one "
						     "JSON object)", name,
						     (unsigned long long)(off + used - (used > 0))) :
					mt_error_set(err, MT_EINVAL, "%s: field 'schema': \"%s\" is a "
						     "version this megatune does not read (expected "
						     "\"megatune.trace/1\")", name, p->bad_schema);
			} else if (p->oom) {
				rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", name);
			} else if (!n && !seen) {
				rc = mt_error_set(err, MT_EPARSE, "%s: empty: no JSON value in the file "
						  "(expected a Kineto/Chrome trace or megatune.trace/1 lines)",
						  name);
			} else if (!n && t->format == MT_TRACE_MEGATUNE && !t->has_end) {
				/* a traced process killed while writing: keep every whole line */
				t->cut_short = 1;
				break;
			} else if (!n) {
				rc = mt_error_set(err, MT_EPARSE, "%s: truncated: the JSON ends inside a value "
						  "after %llu bytes (an interrupted write?)", name,
						  (unsigned long long)off);
			} else {
				unsigned char *m = yajl_get_error(h, 0, buf, (size_t)n);
				char msg[200];
				size_t k;
				snprintf(msg, sizeof(msg), "%s", m ? (const char *)m : "parse error");
				for (k = 0; msg[k]; k++)
					if (msg[k] == '\n')
						msg[k] = ' ';
				while (k > 0 && msg[k - 1] == ' ')
					msg[--k] = '\0';
				if (m)
					yajl_free_error(h, m);
				rc = mt_error_set(err, MT_EPARSE, "%s: not valid JSON at byte %llu: %s "
						  "(expected a Kineto/Chrome trace or megatune.trace/1 lines)",
						  name, (unsigned long long)(off + used - (used > 0)), msg);
			}
			goto out;
		}
		if (!n)
			break;
		off += (uint64_t)n;
	}
	t->bytes = off;
	t->strings_cut = p->guard.cut;
	if (p->scalar_top) {
		rc = mt_error_set(err, MT_EPARSE, "%s: a top-level value is not an object or array "
				  "(expected a Kineto/Chrome trace or megatune.trace/1 lines)", name);
		goto out;
	}
	if (!p->ntop) {
		rc = mt_error_set(err, MT_EPARSE, "%s: empty: no JSON value in the file (expected a "
				  "Kineto/Chrome trace or megatune.trace/1 lines)", name);
		goto out;
	}
	if (!t->format)
		t->format = MT_TRACE_KINETO;
	if (t->nlaunch)
		qsort(t->launch, t->nlaunch, sizeof(*t->launch), cmp_launch);
	*out = t;
	t = NULL;
out:
	if (h)
		yajl_free(h);
	mt_trace_free(t);
	free(buf);
	free(p);
	return rc;
}

int mt_trace_read(const char *path, const struct mt_trace_opts *o, struct mt_trace **out,
		  struct mt_error *err)
{
	struct source src = { 0 };
	int rc;

	src.gz = gzopen(path, "rb");
	if (!src.gz)
		return mt_error_set(err, MT_EIO, "%s: cannot open: %s", path,
				    errno ? strerror(errno) : "out of memory");
	gzbuffer(src.gz, CHUNK);
	rc = parse_source(path, &src, o, out, err);
	gzclose(src.gz);
	return rc;
}

int mt_trace_read_mem(const char *name, const void *data, size_t len,
		      const struct mt_trace_opts *o, struct mt_trace **out, struct mt_error *err)
{
	struct source src = { 0 };

	src.mem = data;
	src.memlen = len;
	return parse_source(name, &src, o, out, err);
}

/* ------------------------------------------------------------------ Chrome */

static void put_us(FILE *f, const char *key, int64_t ns)
{
	int64_t a = ns < 0 ? -ns : ns;
	fprintf(f, ",\"%s\":%s%lld.%03lld", key, ns < 0 ? "-" : "", (long long)(a / 1000),
		(long long)(a % 1000));
}

static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int mt_trace_write_chrome(const struct mt_trace *t, FILE *f)
{
	static const char *const gcat[] = { "kernel", "gpu_memcpy", "gpu_memset" };
	size_t i;
	int first = 1;

	fputs("{\"schemaVersion\":1,\"displayTimeUnit\":\"ns\"", f);
	if (t->rank >= 0)
		fprintf(f, ",\"distributedInfo\":{\"rank\":%lld,\"world_size\":%lld}",
			(long long)t->rank, (long long)t->world_size);
	fputs(",\"traceEvents\":[\n", f);
	for (i = 0; i < t->ngpu; i++) {
		const struct mt_gpu_ev *g = &t->gpu[i];
		fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", first ? "" : ",\n",
			gcat[g->kind < 3 ? g->kind : 0]);
		first = 0;
		put_str(f, mt_trace_str(t, g->name));
		fprintf(f, ",\"pid\":%d,\"tid\":%d", g->device, g->stream);
		put_us(f, "ts", g->start);
		put_us(f, "dur", g->end - g->start);
		fprintf(f, ",\"args\":{\"device\":%d,\"stream\":%d,\"correlation\":%lld}}",
			g->device, g->stream, (long long)g->corr);
	}
	for (i = 0; i < t->nlaunch; i++) {
		const struct mt_launch *l = &t->launch[i];
		fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", first ? "" : ",\n",
			l->driver ? "cuda_driver" : "cuda_runtime");
		first = 0;
		put_str(f, mt_trace_str(t, l->name));
		fprintf(f, ",\"pid\":%lld,\"tid\":%lld", (long long)(l->pid < 0 ? 0 : l->pid),
			(long long)l->tid);
		put_us(f, "ts", l->ts);
		put_us(f, "dur", l->end - l->ts);
		fprintf(f, ",\"args\":{\"correlation\":%lld}}", (long long)l->corr);
	}
	for (i = 0; i < t->nnvtx; i++) {
		const struct mt_range *r = &t->nvtx[i];
		fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":", first ? "" : ",\n");
		first = 0;
		put_str(f, mt_trace_str(t, r->name));
		fprintf(f, ",\"pid\":%lld,\"tid\":%lld", (long long)(r->pid < 0 ? 0 : r->pid),
			(long long)r->tid);
		put_us(f, "ts", r->ts);
		put_us(f, "dur", r->end - r->ts);
		fputc('}', f);
	}
	fputs("\n]}\n", f);
	return ferror(f) ? -1 : 0;
}
