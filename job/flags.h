/* SPDX-License-Identifier: MIT */
/* flags: a candidate configuration as Megatron-LM arguments, Megatron-Bridge
 * overrides and environment variables, ready to paste.
 *
 * Each writer appends to an sbuf; `sep` separates items (" \\\n  " for a
 * shell command, "\n" for one per line).  Option names are those of
 * Megatron-LM's arguments.py and Megatron-Bridge's ConfigContainer
 * (docs/FORMATS.md section 7 lists them).
 */
#ifndef MT_FLAGS_H
#define MT_FLAGS_H

#include "../lib/sbuf.h"
#include "../perfmodel/config.h"
#include "../perfmodel/model.h"

/* struct mt_kv (perfmodel/config.h): one item of a list. */
#define MT_FLAGS_MAX 128

/* Fill `out` (MT_FLAGS_MAX entries) and return the count. */
int mt_megatron_args(const struct mt_model *m, const struct mt_job *j, const struct mt_config *c,
		     struct mt_kv *out);
int mt_bridge_overrides(const struct mt_model *m, const struct mt_job *j,
			const struct mt_config *c, struct mt_kv *out);

/* Bridge overrides that no form applies to every recipe (comm_overlap.*: the
 * node is None in recipes without a CommOverlapConfig) become notes; the set
 * rules' BRIDGE effects pass through it after the merge.  Returns n. */
int mt_bridge_notes(struct mt_kv *o, int n);

/* A note is an item whose key starts with '#' (the rest names what it is
 * about); its value is a sentence, rendered as a "# " comment line ahead of
 * the items and kept out of the JSON lists (megatune.advice/1 bridge_notes). */
int mt_kv_is_note(const struct mt_kv *kv);

/* Append the note about `about` saying `text` to a list of n items (nothing
 * when it is full).  Returns the count. */
int mt_kv_note(struct mt_kv *o, int n, const char *about, const char *text);

/* Add `add` to a list of n items (capacity MT_FLAGS_MAX): an item with a key
 * already there replaces its value, others are appended.  Returns the count.
 * The set rules' ARG, BRIDGE and ENV effects join the lists this way;
 * environment variables come from rules only. */
int mt_kv_merge(struct mt_kv *o, int n, const struct mt_kv *add, int nadd);

/* Render: notes first, one "# text" line each, then Megatron args as
 * "--key value" (mt_kv_value_words), overrides as "key=value", env as
 * "KEY=value", every word through the one shell quoter, mt_shell_word
 * (lib/shell.h). */
void mt_kv_render(struct sbuf *sb, const struct mt_kv *kv, int n, int style, const char *sep);
enum { MT_KV_ARGS, MT_KV_ASSIGN, MT_KV_EXPORT /* "export KEY=value", for a shell to source */ };

/* 1 when a Megatron-LM argument's value is a list of words: spaces between
 * words the shell reads as they are ("--recompute-modules core_attn mlp");
 * any other value is one word, spaces and all ("m;touch pwned'q").  The
 * advice's argv tokens (tuner/advice.c) and the printed flags split alike. */
int mt_kv_value_is_list(const char *val);

/* A Megatron-LM argument's value as shell words, each after a space: the
 * words of a list value (mt_kv_value_is_list), else the value as one word;
 * each through mt_shell_word. */
void mt_kv_value_words(struct sbuf *sb, const char *val);

#endif
