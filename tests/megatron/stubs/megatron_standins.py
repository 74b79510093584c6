# SPDX-License-Identifier: MIT
"""Stand-ins for the parts of Megatron-LM that argument parsing does not need.

install(upstream) makes `import megatron.training.arguments` load the pinned,
unmodified files under tests/megatron/upstream/ while keeping out the training
loop, the models and the kernels, which need PyTorch, Transformer Engine and
CUDA:

- the package __init__ files of megatron, megatron.core, megatron.training,
  megatron.core.transformer and megatron.core.dist_checkpointing, which import
  the whole library, are replaced by empty packages over the same directories
  (megatron.core.transformer also exports the two config classes, as its
  __init__ does);
- a few modules that arguments.py and the config classes import for names they
  use only at run time are replaced by modules with placeholders of those
  names (listed in PLACEHOLDERS), or, for megatron.training.utils and
  megatron.training.global_vars, by the few functions validate_args calls.
"""

import ast
import os
import sys
import types
import warnings

import torch

EMPTY_PACKAGES = [
    "megatron",
    "megatron.core",
    "megatron.training",
    "megatron.core.transformer",
    "megatron.core.dist_checkpointing",
    "megatron.core.models.common.embeddings",
]

# module -> names it must define; the names are never called by parse_args,
# validate_args or core_transformer_config_from_args.
PLACEHOLDERS = {
    "megatron.core.inference.moe.fused_moe": ["ActivationType", "mcore_fused_moe"],
    "megatron.core.inference.moe.vllm_fused_moe": ["vllm_fused_moe"],
    "megatron.training.config.container": [
        "InferenceConfigContainer",
        "PretrainConfigContainer",
    ],
    "megatron.training.models": ["GPTModelConfig", "HybridModelConfig"],
    "megatron.core.extensions.transformer_engine": [
        "fused_apply_rotary_pos_emb",
        "fused_apply_rotary_pos_emb_thd",
    ],
    # the fused permutation kernels, which come from Transformer Engine
    "megatron.core.transformer.moe.moe_utils": [
        "fused_permute",
        "fused_permute_with_probs",
        "fused_sort_chunks_by_index",
        "fused_sort_chunks_by_index_with_probs",
        "fused_unpermute",
    ],
}

# module -> (standard modules it needs, top-level names to define from its file)
PARTIAL = {
    "megatron.core.models.gpt.experimental_attention_variant_module_specs": (
        ["warnings", "typing"],
        [
            "GDN_ATTENTION_VARIANTS",
            "_DEPRECATED_ATTENTION_VARIANT_ALIASES",
            "normalize_experimental_attention_variant",
            "is_gated_delta_net_variant",
            "is_linear_attention_variant",
        ],
    ),
}


class Placeholder:
    """A name imported for use at run time, never used here."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kwargs):
        raise RuntimeError("stand-in for %s called" % self.name)

    def __repr__(self):
        return "<stand-in %s>" % self.name


def _module(name, path=None):
    m = types.ModuleType(name)
    if path is not None:
        m.__path__ = [path]
    sys.modules[name] = m
    parent, _, child = name.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], child, m)
    return m


# megatron.training.utils: the functions arguments.py imports from it.
def print_rank_0(message, rank=None):
    if (rank if rank is not None else 0) == 0:
        print(message, flush=True)


def warn_rank_0(message, rank=None):
    if (rank if rank is not None else 0) == 0:
        warnings.warn(message)


def is_rank0():
    return True


def get_device_arch_version():
    return torch.cuda.get_device_properties(0).major


def update_use_dist_ckpt(args):
    args.use_dist_ckpt = args.ckpt_format != "torch"


def set_global_variables(args, build_tokenizer=True):
    pass


def _partial(upstream, name, stdlib, names):
    """Define in module `name` only the named top-level definitions of its
    file, and the imports of it that come from the modules in `stdlib`
    (relative ones by their name without the dots); a package's file is its
    __init__.py."""
    base = os.path.join(upstream, *name.split("."))
    package = os.path.isdir(base)
    path = os.path.join(base, "__init__.py") if package else base + ".py"
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    keep = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom):
                mods = [node.module]
            else:
                mods = [a.name for a in node.names]
            if all(m in stdlib for m in mods):
                keep.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            keep.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in names for t in targets):
                keep.append(node)
    found = set()
    for n in keep:
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            found.add(n.name)
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            found.update(t.id for t in targets if isinstance(t, ast.Name))
    missing = set(names) - found
    if missing:
        raise ImportError("%s: no top-level %s" % (path, ", ".join(sorted(missing))))
    m = _module(name, base if package else None)
    m.__file__ = path
    m.__package__ = name if package else name.rpartition(".")[0]
    exec(compile(ast.Module(body=keep, type_ignores=[]), path, "exec"), m.__dict__)


def install(upstream):
    if upstream not in sys.path:
        sys.path.insert(0, upstream)
    for name in EMPTY_PACKAGES:
        _module(name, os.path.join(upstream, *name.split(".")))
    for name, attrs in PLACEHOLDERS.items():
        m = _module(name)
        for a in attrs:
            setattr(m, a, Placeholder(name + "." + a))
    utils = _module("megatron.training.utils")
    for f in (print_rank_0, warn_rank_0, is_rank0, get_device_arch_version, update_use_dist_ckpt):
        setattr(utils, f.__name__, f)
    _module("megatron.training.global_vars").set_global_variables = set_global_variables
    for name, (stdlib, names) in PARTIAL.items():
        _partial(upstream, name, stdlib, names)

    # parallel_state and utils import each other; megatron/core/__init__.py
    # imports parallel_state first, and so must we.
    import megatron.core.parallel_state  # noqa: F401
    import megatron.core.transformer.transformer_config as tc

    pkg = sys.modules["megatron.core.transformer"]
    pkg.TransformerConfig = tc.TransformerConfig
    pkg.MLATransformerConfig = tc.MLATransformerConfig
