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
#include "../perfmodel/config.h"

#define MT_JOBSRC_ARGS 1024
#define MT_JOBSRC_ENV 64
#define MT_JOBSRC_NOTES 16

enum mt_jobsrc_kind {
	MT_JS_ARGS,     /* a file of arguments or a bare command line */
	MT_JS_SCRIPT,   /* a launch script: the arguments of its training command */
	MT_JS_ARGBLOCK, /* the arguments block of a Megatron-LM log */
	MT_JS_BRIDGE_YAML,      /* a Megatron-Bridge ConfigContainer YAML (job/bridge.h) */
	MT_JS_BRIDGE_SUMMARY,   /* Bridge's "Configuration Summary" in a log */
	MT_JS_BRIDGE_OVERRIDES, /* Bridge overrides (key=value), a list or a script */
	MT_JS_VERL_YAML,        /* a verl config (.hydra/config.yaml; job/verl.h) */
	MT_JS_VERL_OVERRIDES,   /* verl's Hydra overrides, a list or a launch script */
};

/* Whose words a job is in: the diffs of `check` are written in them. */
enum mt_job_format { MT_JF_MEGATRON, MT_JF_BRIDGE, MT_JF_VERL };

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
	int loongforge;           /* the entry is LoongForge's (a path with loongforge/) */
	int nnotes;               /* what was read with a caveat: an unset variable, a
				   * command substitution, a second training command */
	char notes[MT_JOBSRC_NOTES][200];
	/* Bridge and verl jobs: arg[] holds the Megatron-LM arguments their keys
	 * set (Bridge and verl hand the same TransformerConfig fields to
	 * Megatron-Core), raw[] the keys and values as the job wrote them */
	int format;               /* enum mt_job_format */
	int nraw;
	struct mt_kv raw[MT_JOBSRC_ARGS]; /* "model.tensor_model_parallel_size" = "8" */
	int raw_line[MT_JOBSRC_ARGS];
	int orig[MT_JOBSRC_ARGS]; /* each argument's item of raw[] plus 1, 0 for none */
	int nskipped;             /* keys of sections that do not change the step time
				   * (checkpoint, logger, scheduler, ...) */
	char model_path[512];     /* verl: the Hugging Face model it names, LoongForge:
				   * its --model-name; "" none */
	int model_path_line;
	int ntypo;                /* keys (flags) the job sets that megatune does not read
				   * but that resemble one it reads: a typo, each a message
				   * "FILE:LINE: unknown key 'x': did you mean 'y'? ..." for
				   * the command to warn of (and refuse under --strict) */
	char typo[MT_JOBSRC_NOTES][640];
	int layout_mtp_last;      /* the layout was built without the model's MTP
				   * depth: its MTP layers go in the last chunk
				   * (job/loongforge.h) */
};

/* Read the Megatron-LM arguments of `buf` (len bytes) into s; `file` names
 * it.  The kind is found from the text: an arguments block when there is one,
 * a script when a command runs a `*.py` file, otherwise every word (a job in
 * any format: mt_job_read, job/formats.h).  Returns MT_OK, or
 * MT_EINVAL with "FILE:LINE: ..." for what cannot be read (an unterminated
 * quote, more arguments than MT_JOBSRC_ARGS, no arguments at all). */
int mt_jobsrc_read(const char *file, const char *buf, size_t len, struct mt_jobsrc *s,
		   struct mt_error *err);

/* The arguments block of a log (buf, len; `file` names it) into s: the
 * first block, read through to its `end of arguments` line before any field
 * is (a block cut short, by the log's end or a second block, is MT_EINVAL
 * "FILE:LINE: the arguments block is cut: ..." naming its last line, a field
 * without a value among them), then each `name .... value` line as
 * mt_jobsrc_field.  job/argblock.c. */
int mt_jobsrc_argblock(const char *file, const char *buf, size_t len, struct mt_jobsrc *s,
		       struct mt_error *err);

/* Append the argument `key` (klen bytes, without "--") with value `val` ("" a
 * bare flag) read at `line` of `file`; MT_EINVAL past MT_JOBSRC_ARGS. */
int mt_jobsrc_push(struct mt_jobsrc *s, const char *file, const char *key, size_t klen,
		   const char *val, int line, struct mt_error *err);

/* Push the argument that sets Megatron-LM's argparse field `dest` to `val`
 * (as the arguments block does: True the flag, False nothing, a field true
 * by default its --no- flag, a list its words).  py: val is Python's str()
 * ("['a', 'b']", "AttnBackend.fused"); else YAML's words ("a b", "true").
 * `orig` is the raw[] item plus 1 it comes from (0 none).  MT_OK, or
 * MT_EINVAL when the job has more than MT_JOBSRC_ARGS arguments. */
int mt_jobsrc_field(struct mt_jobsrc *s, const char *dest, const char *val, int py, int line,
		    int orig, struct mt_error *err);

/* Keep a key of a Bridge or verl job as written (raw[]); returns its index
 * plus 1, or 0 when raw[] is full. */
int mt_jobsrc_raw(struct mt_jobsrc *s, const char *key, const char *val, int line);

/* The words of shell text that are Hydra / Bridge overrides
 * (`key.path=value`, `+key=value`, `++key=value`; `~key` deletions are
 * noted), with the script's variables expanded, into s->raw (the prefix
 * dropped); a launcher's GPU counts and environment as mt_jobsrc_read reads
 * them.  Returns MT_OK or MT_EINVAL ("FILE:LINE: ..."). */
int mt_jobsrc_overrides(const char *file, const char *buf, size_t len, struct mt_jobsrc *s,
			struct mt_error *err);

/* Set variable `name` of the job's environment (the last value wins). */
void mt_jobsrc_setenv(struct mt_jobsrc *s, const char *name, const char *val, int line);

/* A note of the reader (a caveat); printf-style, cut at 200 bytes. */
void mt_jobsrc_note(struct mt_jobsrc *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A typo: the key `key` the job sets at `line` (0: none) is not one megatune
 * reads and resembles `like`, one it does; what (key, flag) names the kind.
 * Kept once per key, at most MT_JOBSRC_NOTES. */
void mt_jobsrc_typo(struct mt_jobsrc *s, int line, const char *what, const char *key,
		    const char *like);

/* The argument `flag` (without "--"): its index, the last one given
 * (argparse keeps the last), or -1. */
int mt_jobsrc_find(const struct mt_jobsrc *s, const char *flag);

/* Take back every argument `flag` (one a later setting turns off, or one a
 * dialect's flag stood for). */
void mt_jobsrc_drop(struct mt_jobsrc *s, const char *flag);

/* The variable `name` of the script's environment, or NULL. */
const char *mt_jobsrc_env(const struct mt_jobsrc *s, const char *name);

#endif
