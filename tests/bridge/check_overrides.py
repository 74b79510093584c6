#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Apply Megatron-Bridge overrides to a recipe's ConfigContainer, as Bridge's
scripts do, and check the fields after Bridge's own set-up.

The recipe is built by the pinned, unmodified Bridge files under
tests/bridge/upstream/src/; each override is first parsed and applied alone
to the recipe's OmegaConf config (omegaconf_utils.parse_hydra_overrides), so
that a rejected one is named with OmegaConf's message; the accepted ones are
then applied together by omegaconf_utils.process_config_with_overrides (the
path of scripts/training/run_recipe.py), and training.config.
runtime_config_update (mixed-precision and comm-overlap set-up, validate())
runs as pretrain() runs it.  Each overridden field is then compared with the
value the override meant: a plain value as Hydra parses it, a
`{_target_:X,_call_:false}` value as the object X, `mixed_precision=NAME` as
the fields of Bridge's NAME precision recipe.

Input: overrides, one per line (stdin or the files named; `\\` continuations
and quotes as a shell would take them); lines starting with # are notes.
Output: "ok - OVERRIDE" or "not ok - OVERRIDE: MESSAGE"; exit 1 on any
failure, 2 on a usage error.

With --dump-yaml / --dump-summary, the ConfigContainer after set-up is also
written as YAML (OmegaConf's form of it, `_target_` entries included: what
run_config.yaml holds) and as the configuration summary Bridge logs at
start-up (each line behind a "[rank0]: " launcher prefix), for
`megatune check` to read back (tests/cli/check-bridge.sh).

Usage: check_overrides.py --recipe NAME [--world-size N] [--dump-yaml FILE]
                          [--dump-summary FILE] [FILE...]
"""

import argparse
import dataclasses
import enum
import importlib
import logging
import os
import shlex
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "stubs"), os.path.join(HERE, "..", "megatron", "stubs")]

# recipe name -> (module, function); names as in megatron.bridge.recipes at the pinned commit
RECIPES = {
    "llama3_8b_pretrain_2gpu_h100_bf16_config": "megatron.bridge.recipes.llama.h100.llama3",
    "llama3_70b_pretrain_32gpu_h100_bf16_config": "megatron.bridge.recipes.llama.h100.llama3",
    "llama3_8b_pretrain_2gpu_h100_fp8cs_config": "megatron.bridge.recipes.llama.h100.llama3",
    "qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config": "megatron.bridge.recipes.qwen.h100.qwen3_moe",
    "qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config": "megatron.bridge.recipes.qwen.h100.qwen3_moe",
}


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def lookup(obj, path):
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def same(actual, meant):
    if isinstance(meant, dict) and "_target_" in meant:
        mod, _, name = meant["_target_"].rpartition(".")
        try:
            target = getattr(importlib.import_module(mod), name)
        except (ImportError, AttributeError):
            mod2, _, cls = mod.rpartition(".")
            target = getattr(getattr(importlib.import_module(mod2), cls), name)
        if meant.get("_call_", True) is False:
            return actual is target or actual == target
        return isinstance(actual, target) if isinstance(target, type) else False
    if (isinstance(actual, list) and isinstance(meant, list) and len(actual) == len(meant)
            and all(isinstance(a, enum.Enum) and a.name == m for a, m in zip(actual, meant))):
        return True  # the set-up itself turned the names into its enum (cuda_graph_modules)
    if type(actual).__name__ == "PipelineParallelLayerLayout" and isinstance(meant, str):
        # TransformerConfig reads a layout string into this class, which
        # keeps the string it was given (pipeline_parallel_layer_layout.py)
        return actual.input_data == meant
    if isinstance(actual, enum.Enum) and not isinstance(meant, enum.Enum):
        return False  # a string meant for an enum field stays a string in Bridge
    if type(actual).__name__ == "dtype" and isinstance(meant, str):
        # a torch.dtype field: Bridge turns the name into the dtype
        # (omegaconf_utils.py _apply_overrides, str_to_dtype); a name it
        # cannot turn stays a string, which fails here
        return repr(actual) == meant
    if isinstance(meant, float) or isinstance(actual, float):
        return isinstance(actual, (int, float)) and not isinstance(actual, bool) and abs(actual - meant) <= 1e-12 * max(1, abs(meant))
    return type(actual) is type(meant) and actual == meant or (meant is None and actual is None)


BRIDGE_BUCKET = 128 * 1024 * 1024  # comm_overlap.py: CommOverlapConfig's bucket_size when DP > 1


def bridge_bucket(cfg, recipe_overlap, note, actual):
    """ddp.bucket_size holds what Bridge's CommOverlapConfig set-up gives it,
    on a recipe with a CommOverlapConfig, and advise printed the note."""
    return (note is not None and recipe_overlap and cfg.comm_overlap is not None
            and cfg.data_parallel_size > 1 and actual == BRIDGE_BUCKET)


def note_override(note):
    return note.rsplit("add ", 1)[1].split()[0].rstrip(";,.")


def note_advice(recipe, accepted, note):
    """The note's override, added to the others on a fresh recipe, must make
    ddp.bucket_size hold advise's value after set-up; None, or what failed."""
    from megatron.bridge.training import config as bconfig
    from megatron.bridge.training.utils import omegaconf_utils as ou

    extra = note_override(note)
    meant = int(extra.split("=", 1)[1])
    cfg = recipe()
    try:
        ou.process_config_with_overrides(cfg, cli_overrides=accepted + [extra])
        bconfig.runtime_config_update(cfg)
    except Exception as e:
        return "the note's %s: %s: %s" % (extra, type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    if cfg.ddp.bucket_size != meant:
        return "with the note's %s, ddp.bucket_size holds %r after set-up" % (extra, cfg.ddp.bucket_size)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--recipe", required=True, choices=sorted(RECIPES))
    ap.add_argument("--world-size", type=int, default=8)
    ap.add_argument("--dump-yaml", metavar="FILE",
                    help="after set-up, write the ConfigContainer as YAML (Bridge's OmegaConf form)")
    ap.add_argument("--dump-summary", metavar="FILE",
                    help="after set-up, write what ConfigContainer.log_non_default_values prints")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    text = "".join(open(f).read() for f in a.files) if a.files else sys.stdin.read()
    text = text.replace("\\\n", " ")
    overrides, notes = [], []
    for line in text.splitlines():
        if line.strip().startswith("#"):
            notes.append(line.strip())
        if line.strip().startswith("#") or not line.strip():
            continue
        overrides += shlex.split(line)
    # The note advise prints where Bridge's comm-overlap set-up may undo
    # ddp.bucket_size: "# ddp.bucket_size: a recipe with a CommOverlapConfig
    # sets 128 MiB when DP > 1; there add comm_overlap.bucket_size=N".
    bucket_note = next((n for n in notes if n.startswith("# ddp.bucket_size:") and "CommOverlapConfig" in n
                        and "128 MiB" in n and "comm_overlap.bucket_size=" in n), None)

    os.environ["WORLD_SIZE"] = str(a.world_size)
    import bridge_standins

    bridge_standins.install(os.path.join(HERE, "upstream", "src"), os.path.join(HERE, "..", "megatron", "upstream"))
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from megatron.bridge.training import config as bconfig
    from megatron.bridge.training.mixed_precision import get_mixed_precision_config
    from megatron.bridge.training.utils import omegaconf_utils as ou

    collect = Collect()
    logging.getLogger("megatron.bridge").addHandler(collect)
    recipe = getattr(importlib.import_module(RECIPES[a.recipe]), a.recipe)
    cfg = recipe()
    recipe_overlap = cfg.comm_overlap is not None

    results, accepted = {}, []
    base, _ = ou.create_omegaconf_dict_config(cfg)
    from omegaconf import OmegaConf

    for o in overrides:
        try:
            ou.parse_hydra_overrides(OmegaConf.create(OmegaConf.to_container(base)), [o])
            accepted.append(o)
        except Exception as e:  # OverridesError with Hydra's / OmegaConf's message
            cause = e.__cause__.__cause__ if e.__cause__ is not None and e.__cause__.__cause__ is not None else e.__cause__
            results[o] = "rejected: %s%s" % (str(e).splitlines()[0], " (%s)" % str(cause).splitlines()[0] if cause else "")
    collect.messages.clear()
    ou.process_config_with_overrides(cfg, cli_overrides=accepted)
    for m in collect.messages:
        for o in accepted:
            if o.split("=", 1)[0].rsplit(".", 1)[-1] in m and o not in results:
                results[o] = "Bridge: " + m
    try:
        bconfig.runtime_config_update(cfg)
    except Exception as e:
        print("not ok - set-up: %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
        return 1

    if a.dump_yaml:
        dumped, _ = ou.create_omegaconf_dict_config(cfg)
        with open(a.dump_yaml, "w") as f:
            f.write(OmegaConf.to_yaml(dumped))
    if a.dump_summary:
        printed = []
        keep = bconfig.print_rank_0
        bconfig.print_rank_0 = printed.append
        try:
            cfg.log_non_default_values()
        finally:
            bconfig.print_rank_0 = keep
        with open(a.dump_summary, "w") as f:
            # as a launcher prefixes each line of rank 0's log
            f.write("".join("[rank0]: %s\n" % ln for ln in "\n".join(printed).splitlines()))

    notes_ok = {}
    parser = OverridesParser.create()
    keys = {o.split("=", 1)[0] for o in accepted}
    for o in accepted:
        if o in results:
            continue
        ov = parser.parse_override(o)
        key, meant = ov.key_or_group, ov.value()
        actual = lookup(cfg, key)
        if key == "mixed_precision" and isinstance(meant, str):
            ref = get_mixed_precision_config(meant)
            bad = [f.name for f in dataclasses.fields(ref)
                   if "mixed_precision." + f.name not in keys
                   and getattr(actual, f.name, None) != getattr(ref, f.name)]
            if bad:
                results[o] = "fields differ from %s(): %s" % (meant, ", ".join(bad))
        elif not same(actual, meant):
            if key == "ddp.bucket_size" and bridge_bucket(cfg, recipe_overlap, bucket_note, actual):
                # Bridge's CommOverlapConfig set-up (comm_overlap.py,
                # _get_optimizer_overlap_cfgs) sets 128 MiB when DP > 1, and
                # advise said so: check the way round it that the note gives.
                err = note_advice(recipe, accepted, bucket_note)
                if err:
                    results[o] = err
                else:
                    notes_ok[o] = "Bridge's CommOverlapConfig set %d (DP %d), as noted; with %s it holds %s" % (
                        actual, cfg.data_parallel_size, note_override(bucket_note), meant)
            else:
                results[o] = "after set-up %s holds %r, not %r" % (key, actual, meant)
    fail = 0
    for o in overrides:
        if o in results:
            fail = 1
            print("not ok - %s: %s" % (o, results[o]))
        else:
            print("ok - %s%s" % (o, " # " + notes_ok[o] if o in notes_ok else ""))
    print("# %d overrides, recipe %s" % (len(overrides), a.recipe))
    return fail


if __name__ == "__main__":
    sys.exit(main())
