/* SPDX-License-Identifier: MIT */
#include "topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi.h"
#include "probe.h"

static void cpu_model(char *buf, size_t n)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, n, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			c++;
			while (*c == ' ' || *c == '\t')
				c++;
			c[strcspn(c, "\n")] = 0;
			snprintf(buf, n, "%s", c);
			break;
		}
	}
	fclose(f);
}

static double mem_total(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	double kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %lf kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

static int numa_nodes(void)
{
	char path[64];
	int n = 0;

	for (;;) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", n);
		if (access(path, F_OK))
			break;
		n++;
	}
	return n ? n : 1;
}

void mt_host_info(const struct mt_world *w, struct mt_host_info *h)
{
	long c = sysconf(_SC_NPROCESSORS_ONLN);

	memset(h, 0, sizeof(*h));
	snprintf(h->host, sizeof(h->host), "%s", w->host);
	cpu_model(h->cpu_model, sizeof(h->cpu_model));
	h->cores = c > 0 ? (int)c : 1;
	h->numa_nodes = numa_nodes();
	h->mem_bytes = mem_total();
	h->ranks = w->local_size;
}

int mt_hosts_gather(const struct mt_world *w, struct mt_host_info **hosts, int *n,
		    struct mt_error *err)
{
	struct mt_host_info me, *all = NULL, *out;
	int i, j, k = 0, rc;

	*hosts = NULL;
	*n = 0;
	mt_host_info(w, &me);
	if ((rc = mt_world_gather(w, &me, (int)sizeof(me), (void **)&all, err)))
		return rc;
	if (w->rank != 0)
		return MT_OK;
	out = calloc((size_t)w->size, sizeof(*out));
	if (!out) {
		free(all);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	for (i = 0; i < w->size; i++) {
		for (j = 0; j < k; j++)
			if (!strcmp(out[j].host, all[i].host))
				break;
		if (j == k)
			out[k++] = all[i];
	}
	free(all);
	*hosts = out;
	*n = k;
	return MT_OK;
}

int mt_gpu_topology(struct mt_topo *t, struct mt_error *err)
{
	const struct mt_cuda_api *api;
	int rc;

	memset(t, 0, sizeof(*t));
	if ((rc = mt_cuda_load(&api, NULL, err)))
		return rc;
	return api->topology(t, err);
}

/* Topology is information, not a measurement: `megatune probe topology`
 * prints it and calibrate reads it directly (mt_gpu_topology()); it has no
 * ops, records or profile section of its own. */
const struct mt_probe mt_probe_topology = {
	.name = "topology",
	.summary = "GPUs, SMs, memory, clocks, NVLink, PCIe, NUMA affinity, hosts and ranks",
	.kind = MT_PROBE_INFO,
};
