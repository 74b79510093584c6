/* SPDX-License-Identifier: MIT */
/* topology: the local GPUs as CUDA sees them, completed by NVML when the
 * driver's libnvidia-ml.so.1 is there (NVLink state, NVLink peers, PCIe link,
 * NUMA node, CPU affinity, NVSwitch fabric clique), else by sysfs
 * (/sys/bus/pci/devices/<busid>/{numa_node,local_cpulist,current_link_*}) and
 * cudaDeviceCanAccessPeer, with the reason NVML was not used.
 *
 * NVML is loaded with dlopen (the driver installs the library; there is no
 * header package to build against);
 * the few types used are declared here with the layouts of the NVML API
 * (nvml.h): device handles are opaque pointers, nvmlPciInfo_t is
 * {busIdLegacy[16], domain, bus, device, pciDeviceId, pciSubSystemId,
 * busId[32]}, nvmlGpuFabricInfo_v2_t is {version, clusterUuid[16], status,
 * cliqueId, state, healthMask} with version = sizeof | 2 << 24.  Every symbol
 * is optional: a missing one (an older driver) leaves its field unknown.
 * NVML is initialised once and never shut down (the process may go on using
 * it through the offload probe).
 */
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "mtc.h"

typedef int nvml_ret;
typedef struct nvml_device *nvml_dev;

struct nvml_pci {
	char bus_id_legacy[16];
	unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

struct nvml_fabric_v2 {
	unsigned version;
	unsigned char cluster_uuid[16];
	nvml_ret status;
	unsigned clique_id;
	unsigned char state;
	unsigned health_mask;
};

#define NVML_SUCCESS 0
#define NVML_P2P_CAPS_INDEX_NVLINK 2
#define NVML_P2P_STATUS_OK 0
#define NVML_FEATURE_ENABLED 1
#define NVML_AFFINITY_SCOPE_NODE 0
#define NVML_FABRIC_STATE_COMPLETED 3
#define NVML_MAX_LINKS 36

/* NVML's CPU masks are arrays of unsigned long, read here as 64-bit words */
_Static_assert(sizeof(unsigned long) == sizeof(uint64_t), "64-bit unsigned long");

static struct {
	pthread_once_t once;
	int ok;
	char why[128];
	void *lib;
	nvml_ret (*init)(void);
	const char *(*error_string)(nvml_ret);
	nvml_ret (*driver_version)(char *, unsigned);
	nvml_ret (*count)(unsigned *);
	nvml_ret (*by_index)(unsigned, nvml_dev *);
	nvml_ret (*by_pci)(const char *, nvml_dev *);
	nvml_ret (*pci_info)(nvml_dev, struct nvml_pci *);
	nvml_ret (*link_state)(nvml_dev, unsigned, int *);
	nvml_ret (*p2p_status)(nvml_dev, nvml_dev, int, int *);
	nvml_ret (*pcie_gen)(nvml_dev, unsigned *);
	nvml_ret (*pcie_width)(nvml_dev, unsigned *);
	nvml_ret (*pcie_gen_cur)(nvml_dev, unsigned *);
	nvml_ret (*pcie_width_cur)(nvml_dev, unsigned *);
	nvml_ret (*numa_node)(nvml_dev, unsigned *);
	nvml_ret (*cpu_affinity_scope)(nvml_dev, unsigned, unsigned long *, unsigned);
	nvml_ret (*cpu_affinity)(nvml_dev, unsigned, unsigned long *);
	nvml_ret (*fabric)(nvml_dev, struct nvml_fabric_v2 *);
} nv = { PTHREAD_ONCE_INIT, 0, { 0 }, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL };

/* dlsym into a function pointer without a data/function pointer cast */
static void sym(void *fp, const char *name)
{
	void *p = dlsym(nv.lib, name);

	memcpy(fp, &p, sizeof(p));
}

static void nvml_load(void)
{
	nvml_ret r;

	nv.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!nv.lib) {
		const char *e = dlerror();

		snprintf(nv.why, sizeof(nv.why), "NVML not loaded: %s", e ? e : "libnvidia-ml.so.1 not found");
		return;
	}
	sym(&nv.init, "nvmlInit_v2");
	sym(&nv.error_string, "nvmlErrorString");
	sym(&nv.driver_version, "nvmlSystemGetDriverVersion");
	sym(&nv.count, "nvmlDeviceGetCount_v2");
	sym(&nv.by_index, "nvmlDeviceGetHandleByIndex_v2");
	sym(&nv.by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
	sym(&nv.pci_info, "nvmlDeviceGetPciInfo_v3");
	sym(&nv.link_state, "nvmlDeviceGetNvLinkState");
	sym(&nv.p2p_status, "nvmlDeviceGetP2PStatus");
	sym(&nv.pcie_gen, "nvmlDeviceGetMaxPcieLinkGeneration");
	sym(&nv.pcie_width, "nvmlDeviceGetMaxPcieLinkWidth");
	sym(&nv.pcie_gen_cur, "nvmlDeviceGetCurrPcieLinkGeneration");
	sym(&nv.pcie_width_cur, "nvmlDeviceGetCurrPcieLinkWidth");
	sym(&nv.numa_node, "nvmlDeviceGetNumaNodeId");
	sym(&nv.cpu_affinity_scope, "nvmlDeviceGetCpuAffinityWithinScope");
	sym(&nv.cpu_affinity, "nvmlDeviceGetCpuAffinity");
	sym(&nv.fabric, "nvmlDeviceGetGpuFabricInfoV");
	if (!nv.init || !nv.by_pci || !nv.count || !nv.by_index) {
		snprintf(nv.why, sizeof(nv.why),
			 "NVML too old: nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2 missing");
		return;
	}
	r = nv.init();
	if (r != NVML_SUCCESS) {
		snprintf(nv.why, sizeof(nv.why), "NVML: nvmlInit_v2: %s (%d)",
			 nv.error_string ? nv.error_string(r) : "error", r);
		return;
	}
	nv.ok = 1;
}

int mtc_nvml_ready(char *why, size_t n)
{
	pthread_once(&nv.once, nvml_load);
	if (nv.ok)
		return MT_OK;
	if (why && n)
		snprintf(why, n, "%s", nv.why);
	return MT_EUNSUPPORTED;
}

/* ------------------------------------------------------------ cpu lists */

static void mask_to_list(const uint64_t *mask, int nwords, char *out, size_t n)
{
	size_t pos = 0;
	int i, start = -1, bits = nwords * 64;

	out[0] = 0;
	for (i = 0; i <= bits; i++) {
		int set = i < bits && (mask[i / 64] >> (i % 64) & 1);

		if (set && start < 0)
			start = i;
		if (!set && start >= 0) {
			if (start == i - 1)
				mtc_cat(out, n, &pos, "%s%d", pos ? "," : "", start);
			else
				mtc_cat(out, n, &pos, "%s%d-%d", pos ? "," : "", start, i - 1);
			start = -1;
		}
	}
}

/* "0-27,56-83" into the mask; 0 on success */
static int list_to_mask(const char *s, uint64_t *mask, int nwords)
{
	int any = 0;

	memset(mask, 0, (size_t)nwords * sizeof(*mask));
	while (*s) {
		char *end;
		long a, b;

		while (*s == ',' || isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		a = strtol(s, &end, 10);
		if (end == s)
			return -1;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1)
				return -1;
			s = end;
		}
		for (; a <= b; a++)
			if (a >= 0 && a < nwords * 64) {
				mask[a / 64] |= 1ull << (a % 64);
				any = 1;
			}
	}
	return any ? 0 : -1;
}

/* ------------------------------------------------------------ sysfs */

static int sysfs_read(const char *busid, const char *leaf, char *buf, size_t n)
{
	char path[160], low[32];
	FILE *f;
	size_t i, len;

	for (i = 0; i + 1 < sizeof(low) && busid[i]; i++)
		low[i] = (char)tolower((unsigned char)busid[i]);
	low[i] = 0;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", low, leaf);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)n, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	len = strlen(buf);
	while (len && isspace((unsigned char)buf[len - 1]))
		buf[--len] = 0;
	return 0;
}

static int sysfs_int(const char *busid, const char *leaf, int *v)
{
	char buf[64];

	if (sysfs_read(busid, leaf, buf, sizeof(buf)))
		return -1;
	*v = atoi(buf);
	return 0;
}

/* "32.0 GT/s PCIe" into a generation */
static int speed_to_gen(const char *s)
{
	double gt = atof(s);

	if (gt >= 60)
		return 6;
	if (gt >= 30)
		return 5;
	if (gt >= 15)
		return 4;
	if (gt >= 7)
		return 3;
	if (gt >= 4)
		return 2;
	if (gt > 0)
		return 1;
	return -1;
}

/* ------------------------------------------------------------ per GPU */

static nvml_dev nvml_handle(const char *busid)
{
	nvml_dev d = NULL;

	if (!nv.ok || nv.by_pci(busid, &d) != NVML_SUCCESS)
		return NULL;
	return d;
}

int mtc_gpu_cpus(int dev, uint64_t *mask, int nwords, int *node, char *why, size_t n)
{
	char busid[32], buf[1024];
	cudaError_t e;
	nvml_dev d;
	int v;

	*node = -1;
	memset(mask, 0, (size_t)nwords * sizeof(*mask));
	e = cudaDeviceGetPCIBusId(busid, sizeof(busid), dev);
	if (e != cudaSuccess) {
		snprintf(why, n, "cudaDeviceGetPCIBusId: %s", cudaGetErrorName(e));
		return MT_EUNSUPPORTED;
	}
	mtc_nvml_ready(NULL, 0);
	d = nvml_handle(busid);
	if (d) {
		unsigned long words[64];
		unsigned nw = (unsigned)(nwords < 64 ? nwords : 64);
		nvml_ret r = -1;
		unsigned nn;

		memset(words, 0, sizeof(words));
		if (nv.cpu_affinity_scope)
			r = nv.cpu_affinity_scope(d, nw, words, NVML_AFFINITY_SCOPE_NODE);
		if (r != NVML_SUCCESS && nv.cpu_affinity)
			r = nv.cpu_affinity(d, nw, words);
		if (r == NVML_SUCCESS) {
			memcpy(mask, words, nw * sizeof(uint64_t));
			if (nv.numa_node && nv.numa_node(d, &nn) == NVML_SUCCESS)
				*node = (int)nn;
			else if (sysfs_int(busid, "numa_node", &v) == 0)
				*node = v;
			return MT_OK;
		}
	}
	if (sysfs_read(busid, "local_cpulist", buf, sizeof(buf)) == 0 &&
	    list_to_mask(buf, mask, nwords) == 0) {
		if (sysfs_int(busid, "numa_node", &v) == 0)
			*node = v;
		return MT_OK;
	}
	snprintf(why, n, "no CPU affinity for GPU %d (%s): %s, and no sysfs local_cpulist", dev, busid,
		 nv.ok ? "NVML gave none" : nv.why);
	return MT_EUNSUPPORTED;
}

static void uuid_text(const unsigned char *u, char *out, size_t n)
{
	snprintf(out, n,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

static void gpu_nvml(struct mt_topo_gpu *g, nvml_dev d, nvml_dev *all, unsigned nall)
{
	unsigned link, j, v;
	int active, r;
	uint64_t mask[16];

	if (nv.link_state) {
		g->nvlinks = 0;
		for (link = 0; link < NVML_MAX_LINKS; link++) {
			active = 0;
			r = nv.link_state(d, link, &active);
			if (r != NVML_SUCCESS)
				continue;   /* invalid argument or not supported: no such link */
			if (active == NVML_FEATURE_ENABLED)
				g->nvlinks++;
		}
	}
	if (nv.p2p_status) {
		g->nvlink_peers = 0;
		for (j = 0; j < nall; j++) {
			int st = -1;

			if (all[j] == d)
				continue;
			if (nv.p2p_status(d, all[j], NVML_P2P_CAPS_INDEX_NVLINK, &st) == NVML_SUCCESS &&
			    st == NVML_P2P_STATUS_OK)
				g->nvlink_peers++;
		}
	}
	if (nv.pcie_gen && nv.pcie_gen(d, &v) == NVML_SUCCESS)
		g->pcie_gen = (int)v;
	else if (nv.pcie_gen_cur && nv.pcie_gen_cur(d, &v) == NVML_SUCCESS)
		g->pcie_gen = (int)v;
	if (nv.pcie_width && nv.pcie_width(d, &v) == NVML_SUCCESS)
		g->pcie_width = (int)v;
	else if (nv.pcie_width_cur && nv.pcie_width_cur(d, &v) == NVML_SUCCESS)
		g->pcie_width = (int)v;
	if (nv.numa_node && nv.numa_node(d, &v) == NVML_SUCCESS)
		g->numa_node = (int)v;
	memset(mask, 0, sizeof(mask));
	if (nv.cpu_affinity_scope) {
		unsigned long w[16];

		memset(w, 0, sizeof(w));
		if (nv.cpu_affinity_scope(d, 16, w, NVML_AFFINITY_SCOPE_NODE) == NVML_SUCCESS) {
			memcpy(mask, w, sizeof(w) < sizeof(mask) ? sizeof(w) : sizeof(mask));
			mask_to_list(mask, 16, g->cpu_affinity, sizeof(g->cpu_affinity));
		}
	}
}

static void gpu_sysfs(struct mt_topo_gpu *g)
{
	char buf[256];
	int v;

	if (g->numa_node < 0 && sysfs_int(g->pci_bus_id, "numa_node", &v) == 0)
		g->numa_node = v;
	if (!g->cpu_affinity[0] && sysfs_read(g->pci_bus_id, "local_cpulist", buf, sizeof(buf)) == 0)
		mtc_copy(g->cpu_affinity, sizeof(g->cpu_affinity), buf);
	if (g->pcie_gen < 0 && sysfs_read(g->pci_bus_id, "current_link_speed", buf, sizeof(buf)) == 0)
		g->pcie_gen = speed_to_gen(buf);
	if (g->pcie_width < 0 && sysfs_int(g->pci_bus_id, "current_link_width", &v) == 0 && v > 0)
		g->pcie_width = v;
}

/* Largest clique of an undirected graph (adjacency bit rows, n <= 64):
 * greedy from every vertex, which is exact for the usual NVLink shapes
 * (NVSwitch: one complete graph; hybrid cube-mesh: cliques of four). */
static int largest_clique(const uint64_t *adj, int n)
{
	int best = n > 0 ? 1 : 0, s, v, size;
	uint64_t cand, all = n >= 64 ? ~0ull : ((1ull << n) - 1);

	for (s = 0; s < n; s++) {
		cand = adj[s] & all;
		size = 1;
		for (v = 0; v < n; v++)
			if (cand >> v & 1) {
				size++;
				cand &= adj[v];
			}
		if (size > best)
			best = size;
	}
	return best;
}

int mtc_topology(struct mt_topo *t, struct mt_error *err)
{
	int n = 0, rc, i, j, ncuda;
	nvml_dev all[MT_TOPO_MAX_GPUS], mine[MT_TOPO_MAX_GPUS];
	unsigned nall = 0, u;
	uint64_t adj[MT_TOPO_MAX_GPUS];
	cudaError_t e;

	memset(t, 0, sizeof(*t));
	t->nvlink_domain = 1;
	rc = mtc_gpu_check(&n, err);
	if (rc)
		return rc;
	ncuda = n < MT_TOPO_MAX_GPUS ? n : MT_TOPO_MAX_GPUS;
	t->ngpus = ncuda;

	if (mtc_nvml_ready(t->nvml_reason, sizeof(t->nvml_reason)) == MT_OK) {
		t->nvml = 1;
		t->nvml_reason[0] = 0;
		if (nv.driver_version)
			nv.driver_version(t->driver, sizeof(t->driver));
		if (nv.count(&nall) != NVML_SUCCESS)
			nall = 0;
		if (nall > MT_TOPO_MAX_GPUS)
			nall = MT_TOPO_MAX_GPUS;
		for (u = 0; u < nall; u++)
			if (nv.by_index(u, &all[u]) != NVML_SUCCESS)
				all[u] = NULL;
	}

	for (i = 0; i < ncuda; i++) {
		struct mt_topo_gpu *g = &t->gpu[i];
		struct cudaDeviceProp p;
		int v;

		g->index = i;
		g->nvlinks = g->nvlink_peers = g->pcie_gen = g->pcie_width = g->numa_node = -1;
		mine[i] = NULL;
		e = cudaGetDeviceProperties(&p, i);
		if (e != cudaSuccess)
			return mtc_fail(err, MT_EINVAL, "cudaGetDeviceProperties(%d): %s (%s)", i,
					cudaGetErrorName(e), cudaGetErrorString(e));
		mtc_copy(g->name, sizeof(g->name), p.name);
		uuid_text((const unsigned char *)p.uuid.bytes, g->uuid, sizeof(g->uuid));
		g->memory_bytes = (double)p.totalGlobalMem;
		g->sm_count = p.multiProcessorCount;
		g->cc_major = p.major;
		g->cc_minor = p.minor;
		if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, i) == cudaSuccess)
			g->sm_clock_mhz = v / 1000;
		if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, i) == cudaSuccess)
			g->mem_clock_mhz = v / 1000;
		if (cudaDeviceGetAttribute(&v, cudaDevAttrGlobalMemoryBusWidth, i) == cudaSuccess)
			g->mem_bus_width = v;
		e = cudaDeviceGetPCIBusId(g->pci_bus_id, sizeof(g->pci_bus_id), i);
		if (e != cudaSuccess)
			return mtc_fail(err, MT_EINVAL, "cudaDeviceGetPCIBusId(%d): %s", i,
					cudaGetErrorName(e));
		for (j = 0; j < ncuda; j++) {
			int can = 0;

			if (j != i && cudaDeviceCanAccessPeer(&can, i, j) == cudaSuccess)
				g->p2p[j] = can ? 1 : 0;
		}
		if (t->nvml) {
			mine[i] = nvml_handle(g->pci_bus_id);
			if (mine[i])
				gpu_nvml(g, mine[i], all, nall);
		}
		gpu_sysfs(g);
		if (g->numa_node < 0 && cudaDeviceGetAttribute(&v, cudaDevAttrHostNumaId, i) == cudaSuccess &&
		    v >= 0)
			g->numa_node = v;
	}

	/* the NVLink domain: an NVSwitch fabric clique when NVML reports one
	 * (counted among the GPUs of this host), else the largest set of
	 * GPUs that all reach each other over NVLink (NVML) or P2P (CUDA) */
	memset(adj, 0, sizeof(adj));
	if (t->nvml && nall > 0 && nv.fabric) {
		struct nvml_fabric_v2 f[MT_TOPO_MAX_GPUS];
		int ok = 1;
		unsigned a, b, best = 0;

		for (u = 0; u < nall && ok; u++) {
			static const unsigned char zero[16];

			memset(&f[u], 0, sizeof(f[u]));
			f[u].version = (unsigned)sizeof(f[u]) | 2u << 24;
			if (!all[u] || nv.fabric(all[u], &f[u]) != NVML_SUCCESS ||
			    f[u].state != NVML_FABRIC_STATE_COMPLETED || f[u].status != NVML_SUCCESS ||
			    !memcmp(f[u].cluster_uuid, zero, 16))
				ok = 0;
		}
		for (a = 0; ok && a < nall; a++) {
			unsigned c = 0;

			for (b = 0; b < nall; b++)
				if (f[b].clique_id == f[a].clique_id &&
				    !memcmp(f[b].cluster_uuid, f[a].cluster_uuid, 16))
					c++;
			if (c > best)
				best = c;
		}
		if (ok && best > 0) {
			t->nvlink_domain = (int)best;
			return MT_OK;
		}
	}
	if (t->nvml && nall > 0 && nv.p2p_status) {
		unsigned a, b;

		for (a = 0; a < nall; a++)
			for (b = 0; b < nall; b++) {
				int st = -1;

				if (a != b && all[a] && all[b] &&
				    nv.p2p_status(all[a], all[b], NVML_P2P_CAPS_INDEX_NVLINK, &st) == NVML_SUCCESS &&
				    st == NVML_P2P_STATUS_OK)
					adj[a] |= 1ull << b;
			}
		t->nvlink_domain = largest_clique(adj, (int)nall);
	} else {
		for (i = 0; i < ncuda; i++)
			for (j = 0; j < ncuda; j++)
				if (t->gpu[i].p2p[j] && t->gpu[j].p2p[i])
					adj[i] |= 1ull << j;
		t->nvlink_domain = largest_clique(adj, ncuda);
	}
	if (t->nvlink_domain < 1)
		t->nvlink_domain = 1;
	return MT_OK;
}
