/* SPDX-License-Identifier: MIT */
/* mpi: the launch as the probes see it (struct mt_world in probes/probe.h).
 *
 * MPI is started only when a launcher started us (mpirun/mpiexec set
 * OMPI_COMM_WORLD_SIZE or PMIX_RANK, Slurm's srun sets SLURM_PROCID and a
 * step id with SLURM_STEP_NUM_TASKS > 1 (a batch script, which has no step
 * id, is not launched), MPICH-style launchers set PMI_RANK); otherwise the world
 * is this one process and every function below is a cheap no-op.  The local
 * rank comes from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), the host index
 * from the order of each host's first rank.
 */
#ifndef MT_MPI_H
#define MT_MPI_H

#include "probe.h"

/* 1 when a launcher started this process as one of its ranks (the
 * variables above), 0 otherwise. */
int mt_world_launched(void);
int mt_world_init(struct mt_world *w, int *argc, char ***argv, struct mt_error *err);
void mt_world_finalize(const struct mt_world *w);
/* Stop every rank now (a hung collective); `code` is the exit status. */
void mt_world_abort(const struct mt_world *w, int code);

void mt_world_barrier(const struct mt_world *w);
/* In-place reductions over the whole world. */
void mt_world_sum(const struct mt_world *w, double *v, int n);
void mt_world_max(const struct mt_world *w, double *v, int n);
void mt_world_min_int(const struct mt_world *w, int *v, int n);
void mt_world_bcast(const struct mt_world *w, void *buf, int len);

/* Gather `len` bytes from every rank on rank 0: *all (heap, caller frees on
 * rank 0; NULL elsewhere) holds size blocks of `len` bytes in rank order. */
int mt_world_gather(const struct mt_world *w, const void *buf, int len, void **all,
		    struct mt_error *err);

/* A sub-communicator (MPI_Comm as an opaque handle): every rank calls with
 * its color (-1: not a member, gets NULL) and key. */
void *mt_world_split(const struct mt_world *w, int color, int key);
void mt_world_comm_free(void *comm);
int mt_comm_bcast(void *comm, void *buf, int len);

#endif
