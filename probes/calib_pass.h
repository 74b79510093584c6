/* SPDX-License-Identifier: MIT */
/* calib_pass: one pass of `megatune calibrate`.  Rank 0 keeps a results
 * file (`megatune.result/1` JSON Lines) locked for the whole pass and appends
 * every record to it as it is measured: a new file starts with its head
 * record, a resumed one is checked against this run, cut back to its last
 * whole record or, repaired, rewritten with its valid records.  The probes
 * run in rounds; beside the records the pass gathers the hosts, the GPU
 * topology and the versions; at the end the profile is built from the whole
 * file (probes/calibrate.h) and written.
 *
 * Nothing here prints.  What a pass has to tell as it goes (a file cut back,
 * a probe skipped, the next round) goes to the caller's `say`; errors return
 * with the reason in err.  A signal stops a pass through *stop, which the
 * pass also sets when a record cannot be written (p->write_failed, the
 * reason in p->werr), when a probe's library is missing on a GPU machine
 * (p->nolib) and after p->stop_after records.
 */
#ifndef MT_CALIB_PASS_H
#define MT_CALIB_PASS_H

#include <signal.h>

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "../lib/fsutil.h"
#include "gpu.h"
#include "probe.h"
#include "topology.h"

/* The options of one pass. */
struct mt_calib_opts {
	const char *out;      /* the profile to write */
	const char *probes;   /* the probes, comma-separated (NULL: those not hidden) */
	const char *results;  /* the results file */
	const char *name;     /* the profile's name (NULL: calibrated-<host>) */
	int resume, fresh, repair, rounds;
	int lround;           /* the one round a --launcher launch runs (0: not one) */
	double margin;        /* outlier margin, percent */
	struct mt_probe_opts o;
};

/* What a pass tells as it goes (say's kind): a remark about a file or a
 * probe, for the caller to name itself before, or a line as it is. */
enum { MT_CALIB_NOTE, MT_CALIB_LINE };

/* A pass.  The caller sets s.emit and s.progress (emit calls mt_calib_keep()
 * first) and say; s.user is free to it. */
struct mt_calib_pass {
	struct mt_sink s;
	struct mt_stream results; /* locked for the whole pass; fd -1 when closed */
	struct mt_error werr;     /* the first write error on it */
	int emitted, written, write_failed;
	const cJSON *done;        /* --resume: records already measured */
	int round;                /* the round being run (0: no rounds) */
	int nolib;                /* a probe's library is missing on this GPU machine */
	int refused;              /* the last error refused the pass as it was started (the
				   * file and this run disagree): the message is the whole story */
	int stop_after;           /* tests: stop as if interrupted after N records (-1: never) */
	double t0;                /* when it started (mt_now()) */
	volatile sig_atomic_t *stop;
	void (*say)(struct mt_calib_pass *p, int kind, const char *msg);
};

/* Zero *p, no results file open, t0 now, stop_after -1. */
void mt_calib_pass_init(struct mt_calib_pass *p, volatile sig_atomic_t *stop);

/* Append record m to the results file (a failed write stops the pass). */
void mt_calib_keep(struct mt_calib_pass *p, const struct mt_measurement *m);

/* Rank 0: the results file a->results opened for the pass.  With a->resume
 * (and a file holding a whole line) it is locked, validated and checked
 * against this run, and *head and *records (the caller deletes them) are
 * what it holds: the records not measured again (p->done).  Otherwise it
 * is started, locked and emptied, with the head record of the command line
 * argv[-1 .. argc - 1] (argc and argv as the command got them, argv[0] its
 * name, the program's before it).  MT_OK or the error; p->refused for a --resume of a file that does
 * not exist or of a pass of another backend or count of ranks, and for the
 * file of an earlier pass without --resume or --fresh. */
int mt_calib_open(struct mt_calib_pass *p, const struct mt_calib_opts *a, int argc,
		  char **argv, const struct mt_world *w, cJSON **head, cJSON **records,
		  struct mt_error *err);

/* Every round of the pass on this rank (a->lround: that one only), each
 * probe of a->probes (default: those not hidden) in registry order, until
 * the last or a stop.  Returns the count of failed results and errors. */
int mt_calib_rounds(struct mt_calib_pass *p, const struct mt_calib_opts *a,
		    const struct mt_world *w);

/* What calibrate knows beyond the records, gathered on every rank. */
struct mt_calib_env {
	struct mt_host_info *hosts;
	int nhosts;
	struct mt_topo *topo;
	char nccl[32], cuda[32], drv[32], when[32], name[128];
};

/* The date, the default name, the hosts (every rank takes part) and, with
 * the CUDA backend, the GPU topology (NULL where it cannot be read) and the
 * versions.  MT_OK or mt_hosts_gather()'s error. */
int mt_calib_env_gather(struct mt_calib_env *e, const struct mt_calib_opts *a,
			const struct mt_world *w, struct mt_error *err);
void mt_calib_env_free(struct mt_calib_env *e);

/* Rank 0, at the end: the records of the whole results file, one per
 * measurement (the median round's: mt_results_one_round()), into *records
 * (the caller deletes it); with a->lround *failed is recounted over every
 * round's records.  MT_OK, or the error reading the file, MT_ENOMEM. */
int mt_calib_records(const struct mt_calib_opts *a, cJSON **records, int *failed,
		     struct mt_error *err);

/* The profile built from those records (mt_calibrate_profile()) into *doc
 * (the caller deletes it) and written to a->out. */
int mt_calib_write(const struct mt_calib_opts *a, const struct mt_world *w,
		   const struct mt_calib_env *e, const cJSON *records, cJSON **doc,
		   struct mt_error *err);

#endif
