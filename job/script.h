/* SPDX-License-Identifier: MIT */
/* script: the Megatron-LM arguments of a job as its user wrote them, the
 * first step of every Megatron-LM job reader (job/megatron.h turns them into
 * knobs, model and job).
 *
 * One reader for the three ways a user has the arguments:
 *  - a launch script or a pasted command line: shell text with `\`
 *    continuations, comments, quotes, variables and arrays defined in the
 *    script (`NAME=value`, `export NAME=value`, `NAME=( ... )`, `$NAME`,
 *    `${NAME}`, `${NAME:-default}`, `${NAME[@]}`, `$((arithmetic))`); the
 *    training command is the one that runs a `*.py` script (pretrain_gpt.py
 *    under torchrun, srun, python or python -m torch.distributed.run), its
 *    launcher's --nproc-per-node / --nnodes (srun's --ntasks-per-node,
 *    --nodes) give the GPUs, and the variables assigned in the script
 *    (exported or prefixed to the command) are its environment;
 *  - a file of arguments (`--flag value` words, no script): every word;
 *  - the `arguments` block Megatron-LM prints at start-up (_print_args in
 *    megatron/training/arguments.py: a `---- arguments ----` header, one
 *    `  name ........ value` line per argparse field with Python str()
 *    values, `---- end of arguments ----`), anywhere in a log and behind
 *    launcher prefixes: each field becomes the flag that sets it (a True
 *    store_true field the bare flag, a False default-true field its --no-
 *    flag, None and False left out, a list its words).
 *
 * Pure: the caller reads the file.  Every argument keeps the line it was
 * read on, for messages ("job.sh:12: --tensor-model-parallel-size: ...").
 */
#ifndef MT_JOB_SCRIPT_H
#define MT_JOB_SCRIPT_H

#include <stddef.h>

#include "../lib/err.h"
#include "../tuner/config.h"

#define MT_JOBSRC_ARGS 1024
#define MT_JOBSRC_ENV 64
#define MT_JOBSRC_NOTES 16

enum mt_jobsrc_kind {
	MT_JS_ARGS,     /* a file of arguments or a bare command line */
	MT_JS_SCRIPT,   /* a launch script: the arguments of its training command */
	MT_JS_ARGBLOCK, /* the arguments block of a Megatron-LM log */
};

struct mt_jobsrc {
	int kind;                 /* enum mt_jobsrc_kind */
	char file[256];           /* as given, for messages */
	int n;                    /* arguments, in order */
	struct mt_kv arg[MT_JOBSRC_ARGS]; /* the flag without "--", its words joined by ' '
					   * ("" for a bare flag) */
	int line[MT_JOBSRC_ARGS]; /* 1-based line of each */
	int nenv;
	struct mt_kv env[MT_JOBSRC_ENV]; /* variables the script sets (the last value) */
	int env_line[MT_JOBSRC_ENV];
	int nproc_per_node, nnodes; /* the launcher's, 0 when not stated */
	int world_size;           /* the arguments block's world_size, 0: none */
	char entry[128];          /* the training script (pretrain_gpt.py), "" for none */
	int entry_line;
	int nnotes;               /* what was read with a caveat: an unset variable, a
				   * command substitution, a second training command */
	char notes[MT_JOBSRC_NOTES][200];
};

/* Read the arguments of `buf` (len bytes) into s; `file` names it.  The kind
 * is found from the text: an arguments block when there is one, a script when
 * a command runs a `*.py` file, otherwise every word.  Returns MT_OK, or
 * MT_EINVAL with "FILE:LINE: ..." for what cannot be read (an unterminated
 * quote, more arguments than MT_JOBSRC_ARGS, no arguments at all). */
int mt_jobsrc_read(const char *file, const char *buf, size_t len, struct mt_jobsrc *s,
		   struct mt_error *err);

/* The argument `flag` (without "--"): its index, the last one given
 * (argparse keeps the last), or -1. */
int mt_jobsrc_find(const struct mt_jobsrc *s, const char *flag);

/* The variable `name` of the script's environment, or NULL. */
const char *mt_jobsrc_env(const struct mt_jobsrc *s, const char *name);

#endif
