/* SPDX-License-Identifier: MIT */
/* records: the decoding of CUPTI's activity records into megatune.trace/1 lines for
 * libmegatune_trace.so (the contract is in records.h): kernel names demangled, the
 * kinds of copies, sets and synchronisations by name, the device of each context, and
 * the NVTX ranges pending their end. */
#include "records.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

/* libstdc++ (linked with -lstdc++) */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

#define NVTX_MAX 65536
#define NVTX_HASH (NVTX_MAX * 2)
#define NVTX_NAME_MAX 511
#define DEMANGLE_SLOTS 1024
#define CTX_MAX 256

/* ---- state ------------------------------------------------------------------------ */

struct ctxdev {
	uint32_t ctx, dev;
};
static struct ctxdev g_ctx[CTX_MAX];
static int g_nctx;

struct demangled {
	uint64_t hash;
	char *mangled, *pretty;
};
static struct demangled g_dm[DEMANGLE_SLOTS];

struct nvtx_open {
	uint32_t id, tid;
	uint64_t start;
	char *name, *domain;
	int32_t prev, next; /* insertion order, oldest first */
};
static struct nvtx_open *g_nv;
static int32_t *g_nv_hash; /* NVTX_HASH slots: index into g_nv or -1 */
static int32_t g_nv_free = -1, g_nv_head = -1, g_nv_tail = -1, g_nv_count;

/* ---- names --------------------------------------------------------------------------- */

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static const char *demangle(const char *name)
{
	if (name == NULL)
		return "";
	uint64_t h = fnv1a(name);
	struct demangled *e = &g_dm[h % DEMANGLE_SLOTS];
	if (e->mangled && e->hash == h && strcmp(e->mangled, name) == 0)
		return e->pretty ? e->pretty : e->mangled;
	int status = -1;
	char *pretty = name[0] == '_' ? __cxa_demangle(name, NULL, NULL, &status) : NULL;
	if (status != 0) {
		free(pretty);
		pretty = NULL;
	}
	char *copy = strdup(name);
	if (copy == NULL) { /* out of memory: do not cache */
		free(pretty);
		return name;
	}
	free(e->mangled);
	free(e->pretty);
	e->hash = h;
	e->mangled = copy;
	e->pretty = pretty;
	return pretty ? pretty : copy;
}

/* Forget the demangled names (the end of the trace). */
void dm_free_all(void)
{
	for (int i = 0; i < DEMANGLE_SLOTS; i++) {
		free(g_dm[i].mangled);
		free(g_dm[i].pretty);
		g_dm[i].mangled = g_dm[i].pretty = NULL;
	}
}

static const char *memcpy_kind_str(unsigned k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
	default: return "<unknown>";
	}
}

static const char *mem_kind_str(unsigned k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN: return "Unknown";
	case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "Pageable";
	case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "Pinned";
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "Device";
	case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "Array";
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "Managed";
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "Device Static";
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "Managed Static";
	default: return "Unrecognized";
	}
}

static const char *sync_str(unsigned t)
{
	switch (t) {
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "Event Sync";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "Stream Wait Event";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "Stream Sync";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "Context Sync";
	default: return "Unknown Sync";
	}
}

/* context id -> device ordinal, learned from the records that carry both */
static void ctx_learn(uint32_t ctx, uint32_t dev)
{
	for (int i = 0; i < g_nctx; i++)
		if (g_ctx[i].ctx == ctx) {
			g_ctx[i].dev = dev;
			return;
		}
	if (g_nctx < CTX_MAX)
		g_ctx[g_nctx++] = (struct ctxdev){ctx, dev};
}

static int ctx_dev(uint32_t ctx, uint32_t *dev)
{
	for (int i = 0; i < g_nctx; i++)
		if (g_ctx[i].ctx == ctx) {
			*dev = g_ctx[i].dev;
			return 1;
		}
	return 0;
}

/* ---- NVTX ranges: pending START records, bounded, oldest evicted ------------------- */

static uint32_t nv_slot(uint32_t id) { return (id * 2654435761u) & (NVTX_HASH - 1); }

static int nv_init(void)
{
	if (g_nv)
		return 0;
	g_nv = calloc(NVTX_MAX, sizeof *g_nv);
	g_nv_hash = malloc(NVTX_HASH * sizeof *g_nv_hash);
	if (g_nv == NULL || g_nv_hash == NULL) {
		free(g_nv);
		free(g_nv_hash);
		g_nv = NULL;
		g_nv_hash = NULL;
		return -1;
	}
	for (int32_t i = 0; i < NVTX_HASH; i++)
		g_nv_hash[i] = -1;
	for (int32_t i = 0; i < NVTX_MAX; i++)
		g_nv[i].next = i + 1 < NVTX_MAX ? i + 1 : -1;
	g_nv_free = 0;
	return 0;
}

/* hash slot holding id, or -1 */
static int32_t nv_find(uint32_t id)
{
	for (uint32_t i = nv_slot(id);; i = (i + 1) & (NVTX_HASH - 1)) {
		int32_t e = g_nv_hash[i];
		if (e < 0)
			return -1;
		if (g_nv[e].id == id)
			return (int32_t)i;
	}
}

/* remove the entry at hash slot s (its strings stay with the caller) */
static void nv_remove(int32_t s)
{
	int32_t e = g_nv_hash[s];
	struct nvtx_open *o = &g_nv[e];
	if (o->prev >= 0)
		g_nv[o->prev].next = o->next;
	else
		g_nv_head = o->next;
	if (o->next >= 0)
		g_nv[o->next].prev = o->prev;
	else
		g_nv_tail = o->prev;
	o->next = g_nv_free;
	g_nv_free = e;
	g_nv_count--;
	/* linear probing: shift later entries of the cluster back */
	uint32_t i = (uint32_t)s, j = i;
	g_nv_hash[i] = -1;
	for (;;) {
		j = (j + 1) & (NVTX_HASH - 1);
		if (g_nv_hash[j] < 0)
			break;
		uint32_t k = nv_slot(g_nv[g_nv_hash[j]].id);
		int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
		if (!stays) {
			g_nv_hash[i] = g_nv_hash[j];
			g_nv_hash[j] = -1;
			i = j;
		}
	}
}

static void nv_drop_slot(int32_t s)
{
	struct nvtx_open *o = &g_nv[g_nv_hash[s]];
	free(o->name);
	free(o->domain);
	o->name = o->domain = NULL;
	nv_remove(s);
	g_dropped++;
}

static char *copy_name(const char *s, size_t max)
{
	if (s == NULL)
		return NULL;
	size_t n = strnlen(s, max + 1);
	if (n > max) { /* cut, but not inside a UTF-8 sequence */
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	char *c = malloc(n + 1);
	if (c) {
		memcpy(c, s, n);
		c[n] = '\0';
	}
	return c;
}

static void nvtx_line(const char *name, const char *domain, uint32_t tid, uint64_t start,
		      uint64_t end)
{
	line_begin("nvtx", name);
	if (domain)
		kv_str("domain", domain);
	kv_u64("tid", tid);
	kv_u64("start", start);
	kv_u64("end", end);
	line_end();
}

static void on_marker(const CUpti_ActivityMarker2 *m)
{
	uint32_t tid = m->objectId.pt.threadId;
	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
		nvtx_line(m->name, m->domain, tid, m->timestamp, m->timestamp);
		return;
	}
	if (!(m->flags & (CUPTI_ACTIVITY_FLAG_MARKER_START | CUPTI_ACTIVITY_FLAG_MARKER_END)))
		return; /* nvtxSync and other marker kinds */
	if (nv_init() != 0) {
		g_dropped++;
		return;
	}
	int32_t s = nv_find(m->id);
	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
		if (s < 0) {
			g_dropped++;
			return;
		}
		struct nvtx_open *o = &g_nv[g_nv_hash[s]];
		nvtx_line(o->name, o->domain, o->tid, o->start, m->timestamp);
		free(o->name);
		free(o->domain);
		o->name = o->domain = NULL;
		nv_remove(s);
		return;
	}
	if (s >= 0) /* a START reusing an open id: the old one never ends */
		nv_drop_slot(s);
	if (g_nv_count == NVTX_MAX)
		nv_drop_slot(nv_find(g_nv[g_nv_head].id));
	char *name = copy_name(m->name ? m->name : "", NVTX_NAME_MAX);
	char *domain = m->domain ? copy_name(m->domain, NVTX_NAME_MAX) : NULL;
	if (name == NULL || (m->domain && domain == NULL)) {
		free(name);
		free(domain);
		g_dropped++;
		return;
	}
	int32_t e = g_nv_free;
	struct nvtx_open *o = &g_nv[e];
	g_nv_free = o->next;
	*o = (struct nvtx_open){m->id, tid, m->timestamp, name, domain, g_nv_tail, -1};
	if (g_nv_tail >= 0)
		g_nv[g_nv_tail].next = e;
	else
		g_nv_head = e;
	g_nv_tail = e;
	g_nv_count++;
	uint32_t i = nv_slot(m->id);
	while (g_nv_hash[i] >= 0)
		i = (i + 1) & (NVTX_HASH - 1);
	g_nv_hash[i] = e;
}

void nv_free_all(void)
{
	if (g_nv == NULL)
		return;
	g_dropped += (uint64_t)g_nv_count; /* ranges still open */
	for (int32_t i = 0; i < NVTX_MAX; i++) {
		free(g_nv[i].name);
		free(g_nv[i].domain);
	}
	free(g_nv);
	free(g_nv_hash);
	g_nv = NULL;
	g_nv_hash = NULL;
	g_nv_count = 0;
}

/* ---- record decoding (caller holds g_lock) ---------------------------------------- */

/* The fields every copy and set record carries, then its byte count, and the line's end. */
static void copy_fields(uint32_t dev, uint32_t stream, uint64_t start, uint64_t end,
			uint32_t corr, uint64_t bytes)
{
	kv_u64("dev", dev);
	kv_u64("stream", stream);
	kv_u64("start", start);
	kv_u64("end", end);
	kv_u64("corr", corr);
	kv_u64("bytes", bytes);
	line_end();
}

void on_record(const CUpti_Activity *rec)
{
	char name[96];
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
		ctx_learn(k->contextId, k->deviceId);
		line_begin("kernel", demangle(k->name));
		kv_u64("dev", k->deviceId);
		kv_u64("ctx", k->contextId);
		kv_u64("stream", k->streamId);
		kv_u64("start", k->start);
		kv_u64("end", k->end);
		kv_u64("corr", k->correlationId);
		kv_dim3("grid", k->gridX, k->gridY, k->gridZ);
		kv_dim3("block", k->blockX, k->blockY, k->blockZ);
		line_end();
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *c = (const CUpti_ActivityMemcpy6 *)rec;
		ctx_learn(c->contextId, c->deviceId);
		snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", memcpy_kind_str(c->copyKind),
			 mem_kind_str(c->srcKind), mem_kind_str(c->dstKind));
		line_begin("memcpy", name);
		copy_fields(c->deviceId, c->streamId, c->start, c->end, c->correlationId,
			    c->bytes);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY2: {
		const CUpti_ActivityMemcpyPtoP4 *c = (const CUpti_ActivityMemcpyPtoP4 *)rec;
		ctx_learn(c->contextId, c->deviceId);
		line_begin("memcpy", "Memcpy PtoP (Device -> Device)");
		copy_fields(c->deviceId, c->streamId, c->start, c->end, c->correlationId,
			    c->bytes);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
		ctx_learn(m->contextId, m->deviceId);
		snprintf(name, sizeof name, "Memset (%s)", mem_kind_str(m->memoryKind));
		line_begin("memset", name);
		copy_fields(m->deviceId, m->streamId, m->start, m->end, m->correlationId,
			    m->bytes);
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const CUpti_ActivitySynchronization2 *)rec;
		uint32_t dev;
		line_begin("sync", sync_str(s->type));
		if (s->contextId != CUPTI_SYNCHRONIZATION_INVALID_VALUE && ctx_dev(s->contextId, &dev))
			kv_u64("dev", dev);
		if (s->streamId != CUPTI_SYNCHRONIZATION_INVALID_VALUE)
			kv_u64("stream", s->streamId);
		kv_u64("start", s->start);
		kv_u64("end", s->end);
		kv_u64("corr", s->correlationId);
		line_end();
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
		int rt = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
		const char *api = NULL;
		if (g_cupti.cuptiGetCallbackName(rt ? CUPTI_CB_DOMAIN_RUNTIME_API :
						      CUPTI_CB_DOMAIN_DRIVER_API,
						 a->cbid, &api) != CUPTI_SUCCESS ||
		    api == NULL) {
			snprintf(name, sizeof name, "cbid:%" PRIu32, (uint32_t)a->cbid);
			api = name;
		}
		line_begin(rt ? "runtime" : "driver", api);
		kv_u64("tid", a->threadId);
		kv_u64("start", a->start);
		kv_u64("end", a->end);
		kv_u64("corr", a->correlationId);
		line_end();
		break;
	}
	case CUPTI_ACTIVITY_KIND_MARKER:
		on_marker((const CUpti_ActivityMarker2 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_CONTEXT: {
		const CUpti_ActivityContext3 *c = (const CUpti_ActivityContext3 *)rec;
		ctx_learn(c->contextId, c->deviceId);
		break;
	}
	default:
		break;
	}
}
