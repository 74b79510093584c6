/* SPDX-License-Identifier: MIT */
#include "mpi.h"

#include <stdio.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mt_world_launched(void)
{
	const char *s;

	if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK"))
		return 1;
	/* a task of an srun step (a batch script has SLURM_PROCID and
	 * SLURM_NTASKS too, but no step id) */
	if (!getenv("SLURM_PROCID") || !(getenv("SLURM_STEP_ID") || getenv("SLURM_STEPID")))
		return 0;
	s = getenv("SLURM_STEP_NUM_TASKS");
	if (!s)
		s = getenv("SLURM_NTASKS");
	return s && atoi(s) > 1;
}

int mt_world_init(struct mt_world *w, int *argc, char ***argv, struct mt_error *err)
{
	char *hosts = NULL;
	MPI_Comm local;
	int provided, i, len = (int)sizeof(w->host), rc;

	memset(w, 0, sizeof(*w));
	w->size = w->local_size = w->nnodes = 1;
	if (gethostname(w->host, sizeof(w->host) - 1))
		snprintf(w->host, sizeof(w->host), "localhost");
	if (!mt_world_launched())
		return MT_OK;
#ifdef MT_MPI_ONE_RANK
	return mt_error_set(err, MT_EUNSUPPORTED,
			    "started by a launcher, but this megatune-probe is the one-rank build "
			    "of the single-GPU bundle (make gpu-bundle: no MPI); run it without "
			    "mpirun or srun, or use the regular build");
#endif
	rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
	if (rc != MPI_SUCCESS)
		return mt_error_set(err, MT_EUNSUPPORTED,
				    "started by a launcher but MPI_Init failed (error %d)", rc);
	w->mpi = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &w->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &w->size);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL, &local);
	MPI_Comm_rank(local, &w->local_rank);
	MPI_Comm_size(local, &w->local_size);
	MPI_Comm_free(&local);
	/* host index: hosts numbered in the order of their first rank */
	hosts = calloc((size_t)w->size, (size_t)len);
	if (!hosts)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	MPI_Allgather(w->host, len, MPI_CHAR, hosts, len, MPI_CHAR, MPI_COMM_WORLD);
	w->nnodes = 0;
	for (i = 0; i < w->size; i++) {
		int j, first = 1;

		for (j = 0; j < i; j++)
			if (!strncmp(hosts + (size_t)i * len, hosts + (size_t)j * len, (size_t)len))
				first = 0;
		if (first) {
			if (!strncmp(hosts + (size_t)i * len, w->host, (size_t)len))
				w->node = w->nnodes;
			w->nnodes++;
		}
	}
	free(hosts);
	return MT_OK;
}

void mt_world_finalize(const struct mt_world *w)
{
	if (w->mpi)
		MPI_Finalize();
}

void mt_world_abort(const struct mt_world *w, int code)
{
	if (w->mpi)
		MPI_Abort(MPI_COMM_WORLD, code);
	_exit(code);
}

void mt_world_barrier(const struct mt_world *w)
{
	if (w->mpi)
		MPI_Barrier(MPI_COMM_WORLD);
}

void mt_world_sum(const struct mt_world *w, double *v, int n)
{
	if (w->mpi)
		MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

void mt_world_max(const struct mt_world *w, double *v, int n)
{
	if (w->mpi)
		MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

void mt_world_min_int(const struct mt_world *w, int *v, int n)
{
	if (w->mpi)
		MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
}

void mt_world_bcast(const struct mt_world *w, void *buf, int len)
{
	if (w->mpi)
		MPI_Bcast(buf, len, MPI_BYTE, 0, MPI_COMM_WORLD);
}

int mt_world_gather(const struct mt_world *w, const void *buf, int len, void **all,
		    struct mt_error *err)
{
	void *out = NULL;

	*all = NULL;
	if (w->rank == 0) {
		out = malloc((size_t)len * (size_t)w->size);
		if (!out && w->mpi)
			MPI_Abort(MPI_COMM_WORLD, 2);
		if (!out)
			return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	if (w->mpi)
		MPI_Gather(buf, len, MPI_BYTE, out, len, MPI_BYTE, 0, MPI_COMM_WORLD);
	else
		memcpy(out, buf, (size_t)len);
	*all = out;
	return MT_OK;
}

void *mt_world_split(const struct mt_world *w, int color, int key)
{
	MPI_Comm *c;
	MPI_Comm nc;

	if (!w->mpi)
		return NULL;
	MPI_Comm_split(MPI_COMM_WORLD, color < 0 ? MPI_UNDEFINED : color, key, &nc);
	if (nc == MPI_COMM_NULL)
		return NULL;
	c = malloc(sizeof(*c));
	if (!c) {
		MPI_Comm_free(&nc);
		return NULL;
	}
	*c = nc;
	return c;
}

void mt_world_comm_free(void *comm)
{
	if (comm) {
		MPI_Comm_free((MPI_Comm *)comm);
		free(comm);
	}
}

int mt_comm_bcast(void *comm, void *buf, int len)
{
	if (!comm)
		return MT_OK;
	return MPI_Bcast(buf, len, MPI_BYTE, 0, *(MPI_Comm *)comm) == MPI_SUCCESS ? MT_OK : MT_EIO;
}
