/* SPDX-License-Identifier: MIT */
/* probe: run one probe and print its table (and megatune.result/1 JSON Lines). */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../probes/mpi.h"
#include "../probes/probe.h"
#include "../probes/topology.h"
#include "../perfmodel/cluster.h"
#include "cli.h"
#include "probe_opts.h"

static const char probe_head[] =
	"usage: megatune probe NAME [--backend cuda|cpu] [--quick|--full|--smoke]\n"
	"                      [--json FILE] [probe options]\n"
	"       megatune probe --list            (the names, one a line)\n"
	"       build/probe-NAME [options]       (the same program under another name)\n"
	"\n"
	"Measures one thing about this machine, verified, with repeat statistics\n"
	"(n, median, min, max, p95, cv).  Under mpirun or srun every rank takes part:\n"
	"per-GPU probes run on every rank at once (one GPU per rank by local rank) and\n"
	"rank 0 prints every rank's row; collectives run on the parallel groups a job\n"
	"uses (inside a node: 2, 4, 8 ranks; across nodes: rails and the whole world).\n";

static const char probe_tail[] =
	"The CUDA back end loads cuBLASLt, cuDNN and NCCL at run time: a copy already\n"
	"loaded, the folders of $MEGATUNE_CUDA_LIBRARY_PATH, the loader's path, the CUDA\n"
	"toolkit ($CUDA_HOME, /usr/local/cuda), then the pip wheels of the Python on\n"
	"PATH; `megatune probe topology` says which file each came from.\n"
	"\n"
	"exit codes: 0 success; 1 a result failed verification; 2 bad usage, or a\n"
	"library a GPU probe needs is missing on a machine with an NVIDIA GPU (the\n"
	"message names it and where it was looked for); 77 the probe does not apply\n"
	"here (no GPU, one rank for a collective), with the reason.\n";

/* The probes of the registry, one a line. */
static void probe_list(FILE *f)
{
	const struct mt_probe *p;
	int i;

	for (i = 0; (p = mt_probe_at(i)); i++)
		fprintf(f, "  %-11s %s\n", p->name, p->summary);
}

struct pargs {
	struct mt_probe_opts o;
	const char *json;
	int quiet;
};

#define PA(field) offsetof(struct pargs, field)

static const struct cli_opt probe_opts[] = {
	CLI_SEC("probes"),
	{ .type = CLI_TEXT, .put = probe_list },
	CLI_SEC("options"),
	{ .type = CLI_GROUP, .off = PA(o), .group = probe_opts_group },
	{ .type = CLI_STR, .name = "json", .short_name = 'j', .meta = "FILE", .off = PA(json),
	  .help = "also write megatune.result/1 JSON Lines ('-': stdout,\nthen no table)" },
	{ .type = CLI_FLAG, .name = "quiet", .short_name = 'q', .off = PA(quiet),
	  .help = "no table" },
	CLI_OPT_END
};

const struct cli_spec cli_spec_probe = {
	.cmd = "probe", .head = probe_head, .opts = probe_opts, .tail = probe_tail,
};

struct psink {
	struct mt_sink s;
	FILE *table, *json;
	int header;
};

static void p_emit(struct mt_sink *s, const struct mt_measurement *m)
{
	struct psink *ps = (struct psink *)s;

	if (ps->table) {
		if (!ps->header++)
			mt_table_header(ps->table, m->probe);
		mt_table_row(ps->table, m);
		fflush(ps->table);
	}
	if (ps->json)
		mt_result_record(ps->json, m);
}

/* Where the CUDA library found cuBLASLt, cuDNN and NCCL (or why not). */
static void libraries_text(FILE *f)
{
	struct mt_cuda_lib libs[MT_CUDA_NLIBS];
	int i;

	if (mt_cuda_libraries(libs, NULL))
		return;
	for (i = 0; i < MT_CUDA_NLIBS; i++) {
		if (libs[i].version)
			fprintf(f, "library %-9s %d.%d.%d  %s  (%s)\n", libs[i].name,
				libs[i].version / 10000, libs[i].version % 10000 / 100,
				libs[i].version % 100, libs[i].path, libs[i].from);
		else
			fprintf(f, "library %-9s MISSING: %s\n", libs[i].name, libs[i].why);
	}
}

static void topology_text(FILE *f, const struct mt_world *w, const struct mt_host_info *h, int nh,
			  const struct mt_topo *t, const char *why, int cuda)
{
	int i, j;

	fprintf(f, "# hosts %d, ranks %d (%d per host)\n", nh, w->size, w->local_size);
	for (i = 0; i < nh; i++)
		fprintf(f, "host %-20s %s, %d CPUs, %d NUMA node%s, %.1f GiB\n", h[i].host,
			h[i].cpu_model, h[i].cores, h[i].numa_nodes, h[i].numa_nodes == 1 ? "" : "s",
			h[i].mem_bytes / (1024.0 * 1024 * 1024));
	if (cuda)
		libraries_text(f);
	if (!t) {
		fprintf(f, "gpus: none (%s)\n", why);
		return;
	}
	fprintf(f, "gpus: %d on %s, NVLink domain %d, topology from %s\n", t->ngpus, w->host,
		t->nvlink_domain, t->nvml ? "NVML" : "CUDA only");
	if (!t->nvml && t->nvml_reason[0])
		fprintf(f, "  (NVML: %s)\n", t->nvml_reason);
	for (i = 0; i < t->ngpus; i++) {
		const struct mt_topo_gpu *g = &t->gpu[i];

		fprintf(f, "gpu %d %s  %s  sm_%d%d  %d SMs  %.1f GiB  %d/%d MHz  NVLink %d links "
			"%d peers  PCIe gen%d x%d  NUMA %d  CPUs %s\n", g->index, g->name, g->pci_bus_id,
			g->cc_major, g->cc_minor, g->sm_count, g->memory_bytes / (1024.0 * 1024 * 1024),
			g->sm_clock_mhz, g->mem_clock_mhz, g->nvlinks, g->nvlink_peers, g->pcie_gen,
			g->pcie_width, g->numa_node, g->cpu_affinity[0] ? g->cpu_affinity : "?");
		fprintf(f, "  p2p:");
		for (j = 0; j < t->ngpus; j++)
			fprintf(f, " %c", j == i ? 'X' : g->p2p[j] ? '1' : '0');
		fprintf(f, "\n");
	}
}

static int run_topology(const struct mt_probe_opts *o, const struct mt_world *w, FILE *table,
			FILE *json)
{
	struct mt_host_info *hosts = NULL;
	struct mt_topo *t = calloc(1, sizeof(*t));
	struct mt_error err = MT_ERROR_INIT, gerr = MT_ERROR_INIT;
	int nh = 0, rc, grc = MT_EUNSUPPORTED;

	if (!t)
		return 2;
	if ((rc = mt_hosts_gather(w, &hosts, &nh, &err))) {
		free(t);
		return cli_fail("probe", &err);
	}
	if (o->backend == MT_BACKEND_CUDA)
		grc = mt_gpu_topology(t, &gerr);
	else
		snprintf(gerr.msg, sizeof(gerr.msg), "the CPU backend looks at hosts only");
	if (w->rank == 0) {
		if (table)
			topology_text(table, w, hosts, nh, grc ? NULL : t, gerr.msg,
				      o->backend == MT_BACKEND_CUDA);
		if (json) {
			int i;

			for (i = 0; i < nh; i++)
				fprintf(json, "{\"probe\": \"topology\", \"kind\": \"host\", \"host\": \"%s\", "
					"\"cpu\": \"%s\", \"cpus\": %d, \"numa_nodes\": %d, "
					"\"memory_bytes\": %.0f, \"ranks\": %d}\n", hosts[i].host,
					hosts[i].cpu_model, hosts[i].cores, hosts[i].numa_nodes,
					hosts[i].mem_bytes, hosts[i].ranks);
			for (i = 0; !grc && i < t->ngpus; i++)
				fprintf(json, "{\"probe\": \"topology\", \"kind\": \"gpu\", \"host\": \"%s\", "
					"\"index\": %d, \"name\": \"%s\", \"pci_bus_id\": \"%s\", "
					"\"memory_bytes\": %.0f, \"sm_count\": %d, \"compute_capability\": "
					"%d.%d, \"nvlinks\": %d, \"nvlink_peers\": %d, \"nvlink_domain\": %d, "
					"\"pcie_gen\": %d, \"pcie_width\": %d, \"numa_node\": %d, "
					"\"cpu_affinity\": \"%s\", \"nvml\": %s}\n", w->host, t->gpu[i].index,
					t->gpu[i].name, t->gpu[i].pci_bus_id, t->gpu[i].memory_bytes,
					t->gpu[i].sm_count, t->gpu[i].cc_major, t->gpu[i].cc_minor,
					t->gpu[i].nvlinks, t->gpu[i].nvlink_peers, t->nvlink_domain,
					t->gpu[i].pcie_gen, t->gpu[i].pcie_width, t->gpu[i].numa_node,
					t->gpu[i].cpu_affinity, t->nvml ? "true" : "false");
		}
	}
	free(hosts);
	free(t);
	if (o->backend == MT_BACKEND_CUDA && grc) {
		if (w->rank == 0)
			fprintf(stderr, "megatune probe topology: %s\n", gerr.msg);
		return mt_exit_code(grc);
	}
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	struct pargs a;
	const struct mt_probe_opts *o = &a.o;
	struct mt_world w;
	struct mt_error err = MT_ERROR_INIT;
	const struct mt_probe *p;
	const char *json;
	struct psink ps;
	FILE *jf = NULL;
	int failed = 0, rc, idx, code, first;
	char **full_argv = argv, *jbuf = NULL;
	size_t jlen = 0;
	int full_argc = argc;

	if (!strcmp(argv[0], "--list") ||
	    (!strcmp(argv[0], "probe") && argc > 1 && !strcmp(argv[1], "--list"))) {
		/* every registered probe, hidden ones too: one name a line */
		for (idx = 0; (p = mt_probe_at(idx)); idx++)
			printf("%s\n", p->name);
		return 0;
	}
	if ((rc = cli_help_arg(&cli_spec_probe, argv[0])) >= 0)
		return rc;
	if (!strcmp(argv[0], "probe")) {
		if (argc > 1 && (rc = cli_help_arg(&cli_spec_probe, argv[1])) >= 0)
			return rc;
		cli_help(stderr, &cli_spec_probe);
		fprintf(stderr, "megatune probe: error: name a probe\n");
		return 2;
	}
	p = mt_probe_find(argv[0]);
	if (!p) {
		char names[256];

		mt_probe_names(names, sizeof(names), ", ");
		fprintf(stderr, "megatune probe: error: unknown probe '%s' (expected one of %s)\n",
			argv[0], names);
		return 2;
	}
	memset(&a, 0, sizeof(a));
	probe_opts_init(&a.o);
	if ((rc = cli_parse(&cli_spec_probe, argc, argv, &a, &first)) >= 0)
		return rc;
	json = a.json;
	if (first < argc) {
		fprintf(stderr, "megatune probe: error: unexpected argument '%s'\n", argv[first]);
		return 2;
	}
	if ((rc = mt_world_init(&w, &full_argc, &full_argv, &err)))
		return cli_fail("probe", &err);
	memset(&ps, 0, sizeof(ps));
	ps.s.emit = p_emit;
	if (w.rank == 0 && json) {
		/* gathered in memory and written by mt_write_atomic() at the end,
		 * only when the run produced results (exit 0 or 1) */
		jf = !strcmp(json, "-") ? stdout : open_memstream(&jbuf, &jlen);
		if (!jf) {
			fprintf(stderr, "megatune probe: error: %s: cannot write: %s\n", json,
				strerror(errno));
			mt_world_abort(&w, 2);
		}
		mt_result_head(jf, argc, argv, o, &w);
	}
	ps.json = jf;
	ps.table = w.rank == 0 && !a.quiet && jf != stdout ? stdout : NULL;
	if (p->kind == MT_PROBE_INFO) {
		code = run_topology(o, &w, ps.table, jf);
	} else {
		rc = mt_probe_run(p, o, &w, &ps.s, NULL, NULL, &failed, &err);
		if (rc) {
			if (w.rank == 0)
				fprintf(stderr, "megatune probe %s: %s: %s\n", p->name,
					rc == MT_EUNSUPPORTED ? "not applicable here" : "error", err.msg);
			code = mt_exit_code(rc);
		} else {
			code = failed ? 1 : 0;
			if (failed && w.rank == 0)
				fprintf(stderr, "megatune probe %s: %d result%s failed verification\n",
					p->name, failed, failed == 1 ? "" : "s");
		}
	}
	if (jf && jf != stdout) {
		/* a run that exits 2 or 77 leaves the previous file as it was */
		if (fclose(jf)) {
			fprintf(stderr, "megatune probe: error: %s: cannot write: %s\n", json,
				strerror(errno));
			code = 2;
		} else if ((code == 0 || code == 1) &&
			   mt_write_atomic(json, jbuf, jlen, &err)) {
			code = cli_fail("probe", &err);
		}
		free(jbuf);
	}
	mt_world_finalize(&w);
	return code;
}
