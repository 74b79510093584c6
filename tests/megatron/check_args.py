#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run Megatron-LM's own argument parser over flag sets.

Each flag set goes through megatron.training.arguments.parse_args (unknown
flags rejected), validate_args and core_transformer_config_from_args, as
pretrain_gpt.py would before building the model, from the pinned Megatron-LM
files under tests/megatron/upstream/ with PyTorch replaced by the stand-ins
under tests/megatron/stubs/.

Input: the files named, or stdin; one flag set per line, shell-quoted as
megatune prints them (`\\` line continuations are joined first).  Blank lines
and lines starting with # are skipped.  A line may start with `LABEL ::`, and
then with NAME=VALUE environment settings for that set alone (for example
WORLD_SIZE=64 CUDA_DEVICE_MAX_CONNECTIONS=1); the pseudo-variable
CAPABILITY=MAJOR.MINOR sets the GPU's compute capability for that set, and
HF=PATH compares the model Megatron-LM builds from the flags (its arguments
and TransformerConfig) with that Hugging Face config.json, field by field.

Output: "ok - LABEL" or "not ok - LABEL: MESSAGE" per set, where MESSAGE is
the assertion or error that stopped it; with --verbose, the warnings Megatron
gave as "#   warning: ..." lines.  Exit status 1 when any set failed, 2 on a
usage error.

Usage: check_args.py [--world-size N] [--capability MAJOR.MINOR]
                     [--te-version X.Y.Z] [--verbose] [--dump DIR] [FILE...]
"""

import argparse
import contextlib
import io
import os
import re
import shlex
import sys
import traceback
import warnings

sys.dont_write_bytecode = True  # keep the pinned copy and the stand-ins as they are
HERE = os.path.dirname(os.path.abspath(__file__))
UPSTREAM = os.path.join(HERE, "upstream")
sys.path.insert(0, os.path.join(HERE, "stubs"))

MEGATRON = {}


def load_megatron(te_version):
    """Import Megatron-LM's argument code over the stand-ins."""
    os.environ["MEGATRON_TE_VERSION"] = te_version  # read by the stand-in at import
    import megatron_standins
    import torch

    megatron_standins.install(UPSTREAM)
    from megatron.training import arguments

    MEGATRON.update(torch=torch, parse_args=arguments.parse_args,
                    validate_args=arguments.validate_args,
                    core_transformer_config_from_args=arguments.core_transformer_config_from_args)

ENV = re.compile(r"^([A-Z_][A-Z0-9_]*)=(.*)$")


def capability(text):
    m = re.fullmatch(r"(\d+)\.(\d+)", text)
    if not m:
        raise ValueError("capability %r is not MAJOR.MINOR" % text)
    return int(m.group(1)), int(m.group(2))


def flag_sets(lines):
    """Yield (label, environment, argv) per flag set."""
    text = re.sub(r"\\\n", " ", "".join(lines))
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        label = "line %d" % n
        if " :: " in line:
            label, line = (s.strip() for s in line.split(" :: ", 1))
        words = shlex.split(line)
        env = {}
        while words and ENV.match(words[0]):
            name, value = ENV.match(words[0]).groups()
            env[name] = value
            words.pop(0)
        yield label, env, words


def first_line(text):
    lines = [s for s in text.strip().splitlines() if s.strip()]
    return lines[-1].strip() if lines else ""


# What transformers' configuration classes assume when a field is absent, by
# model_type (the test's own reading, independent of megatune's): tied
# embeddings, biases on every linear layer, QKV bias, QK norm, gated MLP,
# top-k renormalisation of the router's weights.
HF_DEFAULTS = {
    "llama": dict(tied=False, bias=False, qkv_bias=False, qk_norm=False, gated=True),
    "mistral": dict(tied=False, bias=False, qkv_bias=False, qk_norm=False, gated=True),
    "mixtral": dict(tied=False, bias=False, qkv_bias=False, qk_norm=False, gated=True,
                    norm_topk=True, all_moe=True),
    "qwen2": dict(tied=False, bias=False, qkv_bias=True, qk_norm=False, gated=True),
    "qwen2_moe": dict(tied=False, bias=False, qkv_bias=True, qk_norm=False, gated=True,
                      norm_topk=False, shared_gate=True),
    "qwen3": dict(tied=False, bias=False, qkv_bias=False, qk_norm=True, gated=True),
    "qwen3_moe": dict(tied=False, bias=False, qkv_bias=False, qk_norm=True, gated=True,
                      norm_topk=False),
    "deepseek_v2": dict(tied=False, bias=False, qkv_bias=False, qk_norm=True, gated=True,
                        norm_topk=False),
    "deepseek_v3": dict(tied=False, bias=False, qkv_bias=False, qk_norm=True, gated=True,
                        norm_topk=True),
    "gpt2": dict(tied=True, bias=True, qkv_bias=True, qk_norm=False, gated=False),
}


def hf_mismatches(hf, args, cfg):
    """The fields where the model Megatron-LM builds differs from the HF config:
    shape, heads, KV groups, head dim, RoPE base and scaling, norm type and
    epsilon, QK norm, biases, gated MLP, tied embeddings, experts, top-k,
    router, shared experts, MoE layers, MLA ranks, MTP."""
    def first(*keys, default=None):
        for k in keys:
            if hf.get(k) is not None:
                return hf[k]
        return default

    kind = hf.get("model_type", "gpt2" if "n_embd" in hf else "llama")
    d = HF_DEFAULTS[kind]
    mla = bool(hf.get("kv_lora_rank"))
    heads = first("num_attention_heads", "n_head")
    hidden = first("hidden_size", "n_embd")
    want = {
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_layers": first("num_hidden_layers", "n_layer"),
        "gated_linear_unit": d["gated"],
        "add_bias_linear": d["bias"],
        "add_qkv_bias": bool(hf.get("attention_bias", d["qkv_bias"])) or d["bias"],
        "qk_layernorm": d["qk_norm"],
        "untie_embeddings_and_output_weights": not hf.get("tie_word_embeddings", d["tied"]),
    }
    experts = first("num_local_experts", "n_routed_experts", "num_experts")
    if not mla:
        want["num_query_groups"] = first("num_key_value_heads", default=heads)
        want["kv_channels"] = first("head_dim", default=hidden // heads)
    if first("rope_theta") is not None:
        want["rotary_base"] = int(round(first("rope_theta")))
    eps = first("rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps")
    if eps is not None:
        want["layernorm_epsilon"] = float(eps)
    want["normalization"] = "RMSNorm" if "rms_norm_eps" in hf or kind != "gpt2" else "LayerNorm"
    rs = hf.get("rope_scaling") or {}
    rtype = rs.get("rope_type", rs.get("type"))
    if rtype == "llama3":
        want["use_rope_scaling"] = True
        want["rope_scaling_factor"] = float(rs.get("factor", 8.0))
    elif rtype == "yarn":
        want["rotary_scaling_factor"] = float(rs.get("factor", 1.0))
        want["mscale"] = float(rs.get("mscale", 1.0))
        want["mscale_all_dim"] = float(rs.get("mscale_all_dim", 0.0))
        if not mla:
            want["position_embedding_type"] = "yarn"
    elif rtype == "linear":
        want["rotary_seq_len_interpolation_factor"] = int(rs["factor"])
    # the MLP: the dense width where the model has dense layers; the routed
    # experts' width, their number, top-k and where they are
    dense_layers = 0
    if experts:
        dense_layers = hf.get("first_k_dense_replace", 0) + len(hf.get("mlp_only_layers") or [])
    if not experts or dense_layers:
        want["ffn_hidden_size"] = first("intermediate_size", "n_inner", default=4 * hidden)
    if experts:
        want["num_moe_experts"] = experts
        want["moe_router_topk"] = first("num_experts_per_tok")
        want["moe_ffn_hidden_size"] = first("moe_intermediate_size", "intermediate_size")
        shared = hf.get("shared_expert_intermediate_size") or \
            (hf.get("n_shared_experts") or 0) * hf.get("moe_intermediate_size", 0)
        want["moe_shared_expert_intermediate_size"] = shared or None
        want["moe_shared_expert_gate"] = bool(shared and d.get("shared_gate"))
        layers = want["num_layers"]
        k = hf.get("first_k_dense_replace", 0)
        freq = hf.get("moe_layer_freq", 1) if kind.startswith("deepseek") else 1
        step = hf.get("decoder_sparse_step", 1) if not kind.startswith("deepseek") else 1
        pattern = [int(i >= k and i % freq == 0 and (i + 1) % step == 0) for i in range(layers)]
        for i in hf.get("mlp_only_layers") or []:
            pattern[i] = 0
        got_freq = getattr(cfg, "moe_layer_freq", 1)
        got = [1] * layers if got_freq == 1 else \
            ([int(i % got_freq == 0) for i in range(layers)] if isinstance(got_freq, int)
             else list(got_freq))
        if got != pattern:
            want["moe_layer_pattern"] = pattern
        sigmoid = hf.get("scoring_func") == "sigmoid"
        want["moe_router_score_function"] = "sigmoid" if sigmoid else "softmax"
        if not sigmoid:
            want["moe_router_pre_softmax"] = not hf.get("norm_topk_prob", d.get("norm_topk", True))
        want["moe_router_enable_expert_bias"] = hf.get("topk_method") == "noaux_tc"
        scale = hf.get("routed_scaling_factor")
        if scale not in (None, 1, 1.0):
            want["moe_router_topk_scaling_factor"] = float(scale)
        groups = hf.get("n_group") or 0
        if groups > 1 and hf.get("topk_method") in ("group_limited_greedy", "noaux_tc"):
            want["moe_router_num_groups"] = groups
            want["moe_router_group_topk"] = hf.get("topk_group")
        coef = first("router_aux_loss_coef", "aux_loss_alpha")
        if coef is not None:
            got = cfg.moe_aux_loss_coeff
            want["moe_aux_loss_coeff"] = float(coef) if not isinstance(got, list) else [float(coef)]
    if mla:
        want["kv_lora_rank"] = hf["kv_lora_rank"]
        want["q_lora_rank"] = hf.get("q_lora_rank")
        want["qk_head_dim"] = hf["qk_nope_head_dim"]
        want["qk_pos_emb_head_dim"] = hf["qk_rope_head_dim"]
        want["v_head_dim"] = hf["v_head_dim"]
    want["mtp_num_layers"] = hf.get("num_nextn_predict_layers") or None
    bad = []
    for field, value in want.items():
        if field == "moe_layer_pattern":
            bad.append("MoE layers: Megatron-LM has %r, the HF config %r" % (got_freq, value))
            continue
        got = getattr(cfg, field, getattr(args, field, None))
        if field in ("rotary_base", "use_rope_scaling", "rope_scaling_factor", "normalization",
                     "untie_embeddings_and_output_weights", "position_embedding_type",
                     "rotary_seq_len_interpolation_factor"):
            got = getattr(args, field, None)
        if isinstance(value, float) and isinstance(got, (int, float)):
            same = abs(got - value) <= 1e-9 * max(1.0, abs(value))
        else:
            same = got == value
        if not same:
            bad.append("%s: Megatron-LM has %r, the HF config %r" % (field, got, value))
    return bad


def check(argv, env, default_capability, dump=None):
    """Return (error message or None, [warnings]); dump: a path for what
    Megatron-LM printed (its arguments block)."""
    env = dict(env)
    cap = capability(env.pop("CAPABILITY", default_capability))
    hf_path = env.pop("HF", None)
    saved = dict(os.environ)
    os.environ.update(env)
    MEGATRON["torch"].cuda.set_capability(*cap)
    sys.argv = ["pretrain_gpt.py"] + argv
    out, err = io.StringIO(), io.StringIO()
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                args = MEGATRON["parse_args"](ignore_unknown_args=False)
                MEGATRON["validate_args"](args, {})
                cfg = MEGATRON["core_transformer_config_from_args"](args)
            if dump:
                with open(dump, "w") as f:
                    f.write(out.getvalue())
            if hf_path:
                import json
                with open(hf_path) as f:
                    bad = hf_mismatches(json.load(f), args, cfg)
                if bad:
                    error = "not the model of %s: %s" % (hf_path, "; ".join(bad))
        except SystemExit as e:  # argparse's error(): the message is on stderr
            error = first_line(err.getvalue()) or "exit %s" % e.code
        except AssertionError as e:
            error = "AssertionError: %s" % (str(e) or "(no message)")
        except Exception as e:  # noqa: BLE001  (any error is the set's failure)
            error = "%s: %s" % (type(e).__name__, e)
            if os.environ.get("CHECK_ARGS_TRACEBACK"):
                traceback.print_exc()
        finally:
            os.environ.clear()
            os.environ.update(saved)
    return error, [str(w.message) for w in caught]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--world-size", type=int, default=None,
                    help="number of GPUs (default: $WORLD_SIZE, else 1)")
    ap.add_argument("--capability", default="9.0",
                    help="GPU compute capability MAJOR.MINOR (Hopper 9.0, Blackwell 10.0)")
    ap.add_argument("--te-version", default="2.10.0",
                    help="version of Transformer Engine to pretend is installed")
    ap.add_argument("--verbose", "-v", action="store_true", help="print Megatron's warnings")
    ap.add_argument("--dump", metavar="DIR", default=None,
                    help="write what Megatron-LM prints for each set (its arguments "
                         "block) to DIR/LABEL.log")
    ap.add_argument("files", nargs="*")
    opts = ap.parse_args()
    try:
        capability(opts.capability)
    except ValueError as e:
        ap.error(str(e))
    load_megatron(opts.te_version)
    base = {"RANK": "0", "LOCAL_RANK": "0"}
    base["WORLD_SIZE"] = str(opts.world_size or os.environ.get("WORLD_SIZE", "1"))

    lines = []
    if opts.files:
        for path in opts.files:
            with open(path) as f:
                lines.extend(f.readlines())
                if lines and not lines[-1].endswith("\n"):
                    lines[-1] += "\n"
    else:
        lines = sys.stdin.readlines()

    failed = total = 0
    for label, env, argv in flag_sets(lines):
        total += 1
        try:
            dump = os.path.join(opts.dump, label.replace("/", "_") + ".log") if opts.dump else None
            error, warned = check(argv, {**base, **env}, opts.capability, dump)
        except ValueError as e:
            error, warned = str(e), []
        if error is None:
            print("ok - %s" % label)
        else:
            failed += 1
            print("not ok - %s: %s" % (label, error))
        if opts.verbose:
            for w in warned:
                print("#   warning: %s" % " ".join(w.split()))
    print("# %d flag sets, %d failed" % (total, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
