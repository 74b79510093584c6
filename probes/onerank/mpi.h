/* SPDX-License-Identifier: MIT */
/* onerank/mpi.h: a one-rank MPI, for the single-GPU bundle's megatune-probe.
 *
 * megatune-probe starts MPI only when a launcher started it (probes/mpi.h,
 * mt_world_launched()); on one machine without mpirun it never calls MPI at all.  The
 * bundle (`make gpu-bundle`) compiles probes/mpi.c, collective.c and dispatch.c with
 * -Iprobes/onerank instead of OpenMPI's headers, so that the executable needs no MPI
 * library: this header is the whole MPI it gets.  It is the subset those files call, for
 * a world of exactly one rank: every collective copies the send buffer to the receive
 * buffer (MPI_IN_PLACE leaves it), splits return the same communicator (or
 * MPI_COMM_NULL for MPI_UNDEFINED), and MPI_Init_thread fails, since a process a launcher
 * started is one of several ranks this build cannot join (probes/mpi.c then says so).
 *
 * Nothing here is OpenMPI's: handles are small integers of our own.
 */
#ifndef MT_ONERANK_MPI_H
#define MT_ONERANK_MPI_H

#include <stdlib.h>
#include <string.h>

#define MT_MPI_ONE_RANK 1 /* probes/mpi.c: this build has no MPI to start */

typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Info;
typedef struct {
	int MPI_SOURCE, MPI_TAG, MPI_ERROR;
} MPI_Status;

#define MPI_SUCCESS 0
#define MPI_ERR_OTHER 15
#define MPI_COMM_NULL 0
#define MPI_COMM_WORLD 1
#define MPI_INFO_NULL 0
#define MPI_UNDEFINED (-32766)
#define MPI_COMM_TYPE_SHARED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_IN_PLACE ((void *)1)
#define MPI_STATUS_IGNORE ((MPI_Status *)0)

/* datatypes: their sizes in bytes, kept distinct by the high bits */
#define MPI_BYTE (0x100 | 1)
#define MPI_CHAR (0x200 | 1)
#define MPI_INT (0x300 | 4)
#define MPI_FLOAT (0x400 | 4)
#define MPI_DOUBLE (0x500 | 8)

#define MPI_SUM 1
#define MPI_MAX 2
#define MPI_MIN 3

static inline size_t mt_onerank_size(MPI_Datatype t)
{
	return (size_t)(t & 0xff);
}

/* One rank's part of a collective: its own block, copied unless in place. */
static inline int mt_onerank_copy(const void *s, void *d, int n, MPI_Datatype t)
{
	if (s != MPI_IN_PLACE && s != d && n > 0)
		memmove(d, s, (size_t)n * mt_onerank_size(t));
	return MPI_SUCCESS;
}

static inline int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	(void)argc;
	(void)argv;
	(void)required;
	*provided = 0;
	return MPI_ERR_OTHER; /* launched as one of several ranks: not this build */
}

static inline int MPI_Finalize(void)
{
	return MPI_SUCCESS;
}

static inline int MPI_Abort(MPI_Comm c, int code)
{
	(void)c;
	exit(code);
}

static inline int MPI_Comm_rank(MPI_Comm c, int *rank)
{
	(void)c;
	*rank = 0;
	return MPI_SUCCESS;
}

static inline int MPI_Comm_size(MPI_Comm c, int *size)
{
	(void)c;
	*size = 1;
	return MPI_SUCCESS;
}

static inline int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *out)
{
	(void)key;
	*out = color == MPI_UNDEFINED ? MPI_COMM_NULL : c;
	return MPI_SUCCESS;
}

static inline int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm *out)
{
	(void)type;
	(void)key;
	(void)info;
	*out = c;
	return MPI_SUCCESS;
}

static inline int MPI_Comm_free(MPI_Comm *c)
{
	*c = MPI_COMM_NULL;
	return MPI_SUCCESS;
}

static inline int MPI_Barrier(MPI_Comm c)
{
	(void)c;
	return MPI_SUCCESS;
}

static inline int MPI_Bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm c)
{
	(void)buf;
	(void)n;
	(void)t;
	(void)root;
	(void)c;
	return MPI_SUCCESS;
}

static inline int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
				MPI_Comm c)
{
	(void)op;
	(void)c;
	return mt_onerank_copy(s, r, n, t);
}

static inline int MPI_Reduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t,
					   MPI_Op op, MPI_Comm c)
{
	(void)op;
	(void)c;
	return mt_onerank_copy(s, r, n, t);
}

static inline int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn,
				MPI_Datatype rt, MPI_Comm c)
{
	(void)rn;
	(void)rt;
	(void)c;
	return mt_onerank_copy(s, r, sn, st);
}

static inline int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn,
			     MPI_Datatype rt, int root, MPI_Comm c)
{
	(void)rn;
	(void)rt;
	(void)root;
	(void)c;
	return mt_onerank_copy(s, r, sn, st);
}

static inline int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn,
			       MPI_Datatype rt, MPI_Comm c)
{
	(void)rn;
	(void)rt;
	(void)c;
	return mt_onerank_copy(s, r, sn, st);
}

static inline int MPI_Alltoallv(const void *s, const int *sc, const int *sd, MPI_Datatype st,
				void *r, const int *rc, const int *rd, MPI_Datatype rt, MPI_Comm c)
{
	(void)rc;
	(void)c;
	if (s == MPI_IN_PLACE)
		return MPI_SUCCESS;
	return mt_onerank_copy((const char *)s + (size_t)sd[0] * mt_onerank_size(st),
			       (char *)r + (size_t)rd[0] * mt_onerank_size(rt), sc[0], st);
}

static inline int MPI_Sendrecv(const void *s, int sn, MPI_Datatype st, int dest, int stag,
			       void *r, int rn, MPI_Datatype rt, int src, int rtag, MPI_Comm c,
			       MPI_Status *status)
{
	(void)dest;
	(void)stag;
	(void)rn;
	(void)rt;
	(void)src;
	(void)rtag;
	(void)c;
	(void)status;
	return mt_onerank_copy(s, r, sn, st); /* to and from itself */
}

#endif
