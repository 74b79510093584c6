# SPDX-License-Identifier: MIT
"""Stand-ins for the parts of Megatron-Bridge that building a recipe's
ConfigContainer, applying overrides and Bridge's runtime set-up do not need.

install(bridge_src, megatron_upstream) first installs the Megatron-LM
stand-ins of tests/megatron/stubs/megatron_standins.py (same pinned
Megatron-Core files, same minimal torch), then makes `import megatron.bridge...`
load the pinned, unmodified Bridge files under tests/bridge/upstream/src/:

- the package __init__ files of megatron.bridge and its sub-packages, which
  import the whole library (models, training loop, data pipelines), are
  replaced by empty packages over the same directories; megatron.bridge.models
  exports GPTModelProvider, as its __init__ does, and a placeholder
  T5ModelProvider;
- modules imported only for names used at run time (model layers, data
  builders, PEFT, checkpointing, kernels) are replaced by modules whose every
  name is a placeholder class (listed in PLACEHOLDER_MODULES);
- megatron.bridge.AutoBridge, which reads a Hugging Face checkpoint's
  config.json from the Hub, is replaced by a class that returns a
  GPTModelProvider with the architecture of the named checkpoint (MODELS,
  values from the models' published config.json files).
"""

import importlib.abc
import importlib.machinery
import os
import sys
import types

import megatron_standins

# Bridge and Megatron-Core modules that the kept files import for names used
# only when a model, a dataset or a checkpoint is built: every attribute is a
# placeholder class.
PLACEHOLDER_MODULES = [
    "transformers",
    "megatron.bridge.data.builders",
    "megatron.bridge.data.builders.direct_hf_sft",
    "megatron.bridge.data.builders.energon",
    "megatron.bridge.data.builders.gpt_sft",
    "megatron.bridge.data.builders.mock_vlm_sft",
    "megatron.bridge.data.loaders",
    "megatron.bridge.data.packing",
    "megatron.bridge.data.sources.hf",
    "megatron.bridge.models.common.unimodal",
    "megatron.bridge.models.config",
    "megatron.bridge.models.gpt.gpt_builder",
    "megatron.bridge.models.hybrid.hybrid_builder",
    "megatron.bridge.models.hybrid.hybrid_provider",
    "megatron.bridge.models.megatron_mimo.megatron_mimo_provider",
    "megatron.bridge.models.t5_provider",
    "megatron.bridge.peft.base",
    "megatron.bridge.training.tokenizers.tokenizer",
    "megatron.bridge.peft.dora",
    "megatron.bridge.peft.lora",
    "megatron.core.models.gpt",
    "megatron.core.tensor_parallel",
    "megatron.core.tensor_parallel.random",
    "megatron.core.fp8_utils",
    "megatron.core.distributed.fsdp.mcore_fsdp_adapter",
    "megatron.core.tokenizers",
    "megatron.core.models.gpt.gpt_layer_specs",
    "megatron.core.post_training.modelopt.gpt.model_specs",
    "megatron.core.process_groups_config",
    "megatron.core.pipeline_parallel.utils",
    "megatron.core.transformer.dot_product_attention",
    "megatron.core.transformer.module",
]


class _PlaceholderBase:
    """A name imported for use at run time only."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("stand-in %s called" % type(self).__qualname__)


class _PlaceholderModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        cls = type(name, (_PlaceholderBase,), {"__module__": self.__name__, "__qualname__": name})
        setattr(self, name, cls)
        return cls


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports the modules named, and their parent packages where no file
    holds them, as placeholder modules."""

    def __init__(self, names):
        self.names = set(names)
        self.parents = {n.rsplit(".", k)[0] for n in names for k in range(1, n.count(".") + 1)}

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.names:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        if fullname in self.parents and not importlib.machinery.PathFinder.find_spec(fullname, path):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        m = _PlaceholderModule(spec.name)
        m.__path__ = []
        return m

    def exec_module(self, module):
        pass


# Megatron-Core modules whose files import the training machinery: only the
# named definitions are run (module -> (modules its kept imports come from,
# names)), as megatron_standins.PARTIAL does.
PARTIAL = {
    "megatron.core.optimizer": (
        ["logging", "typing", "megatron.core.optimizer_param_scheduler", "optimizer_config"],
        ["logger", "get_standard_config_overrides"],
    ),
    # the base class of Bridge's ConfigContainer; megatron_standins gives
    # placeholders for the rest of this module.
    "megatron.training.config.container": (
        ["copy", "os", "dataclasses", "typing", "megatron.training.config.instantiate_utils",
         "megatron.training.config.utils"],
        ["ConfigContainerBase", "T"],
    ),
    "megatron.core.datasets.gpt_dataset": (
        ["logging", "dataclasses", "typing", "megatron.core.datasets.blended_megatron_dataset_config"],
        ["logger", "GPTDatasetConfig"],
    ),
}


# Hugging Face checkpoint -> the GPTModelProvider fields its config.json gives
# (architecture only; Bridge's Llama/Qwen bridges map the same keys).
_LLAMA3 = dict(
    normalization="RMSNorm", activation_func="silu", gated_linear_unit=True, add_bias_linear=False,
    add_qkv_bias=False, position_embedding_type="rope", rotary_base=500000.0,
    share_embeddings_and_output_weights=False, vocab_size=128256, seq_length=8192,
    hidden_dropout=0.0, attention_dropout=0.0, layernorm_epsilon=1e-5,
)
MODELS = {
    "meta-llama/Meta-Llama-3-8B": dict(_LLAMA3, num_layers=32, hidden_size=4096, ffn_hidden_size=14336,
                                       num_attention_heads=32, num_query_groups=8),
    "meta-llama/Meta-Llama-3-70B": dict(_LLAMA3, num_layers=80, hidden_size=8192, ffn_hidden_size=28672,
                                        num_attention_heads=64, num_query_groups=8),
    # config.json and Qwen3MoEBridge.provider_bridge (all layers MoE, QK layernorm)
    "Qwen/Qwen3-30B-A3B": dict(
        normalization="RMSNorm", activation_func="silu", gated_linear_unit=True, add_bias_linear=False,
        add_qkv_bias=False, qk_layernorm=True, position_embedding_type="rope", rotary_base=1000000.0,
        share_embeddings_and_output_weights=False, vocab_size=151936, seq_length=40960,
        hidden_dropout=0.0, attention_dropout=0.0, layernorm_epsilon=1e-6, init_method_std=0.02,
        num_layers=48, hidden_size=2048, ffn_hidden_size=6144, num_attention_heads=32,
        num_query_groups=4, kv_channels=128,
        num_moe_experts=128, moe_router_topk=8, moe_ffn_hidden_size=768, moe_aux_loss_coeff=1e-3,
        moe_router_load_balancing_type="aux_loss", moe_router_pre_softmax=False,
        moe_grouped_gemm=True, moe_token_dispatcher_type="alltoall", moe_permute_fusion=True,
    ),
}


class AutoBridge:
    """megatron.bridge.AutoBridge without the Hub: the model of a known checkpoint."""

    def __init__(self, name):
        self.name = name

    @classmethod
    def from_hf_pretrained(cls, name, *args, **kwargs):
        if name not in MODELS:
            raise KeyError("bridge_standins.MODELS has no %s" % name)
        return cls(name)

    def get_model_config(self):
        import torch.nn.functional as F
        from megatron.bridge.models.gpt_provider import GPTModelProvider

        kw = dict(MODELS[self.name])
        kw["activation_func"] = getattr(F, kw["activation_func"])
        return GPTModelProvider(**kw)

    def to_megatron_provider(self, load_weights=True, hf_path=None):
        # the same provider; no weights are loaded here
        return self.get_model_config()


class FusedAdam:
    """transformer_engine.pytorch.optimizers.FusedAdam: OptimizerConfig reads
    only its signature (the precision-aware optimizer's arguments, as in TE 2.x)."""

    def __init__(self, params, lr=1e-3, bias_correction=True, betas=(0.9, 0.999), eps=1e-8,
                 adam_w_mode=True, weight_decay=0.0, amsgrad=False, set_grad_none=True,
                 capturable=False, master_weights=False, master_weight_dtype=None,
                 exp_avg_dtype=None, exp_avg_sq_dtype=None, use_decoupled_grad=False,
                 store_param_remainders=False):
        raise RuntimeError("stand-in FusedAdam called")


def get_local_rank_preinit():
    return int(os.environ.get("LOCAL_RANK", "0"))


def install(bridge_src, megatron_upstream):
    megatron_standins.install(megatron_upstream)
    # recipes with use_precision_aware_optimizer=True: OptimizerConfig checks
    # that Transformer Engine's FusedAdam takes its arguments.
    import transformer_engine

    te_pt = sys.modules.get("transformer_engine.pytorch") or megatron_standins._module("transformer_engine.pytorch")
    transformer_engine.pytorch = te_pt
    te_opt = megatron_standins._module("transformer_engine.pytorch.optimizers")
    te_opt.FusedAdam = FusedAdam
    te_pt.optimizers = te_opt
    sys.meta_path.insert(0, _Finder(PLACEHOLDER_MODULES))
    # megatron.bridge.utils.common_utils: the helpers the config code calls
    # (its file imports the DDP wrappers and the data utilities).
    from megatron.core import _rank_utils

    cu = megatron_standins._module("megatron.bridge.utils.common_utils")
    cu.print_rank_0 = megatron_standins.print_rank_0
    cu.warn_rank_0 = megatron_standins.warn_rank_0
    cu.get_rank_safe = _rank_utils.safe_get_rank
    cu.get_world_size_safe = _rank_utils.safe_get_world_size
    cu.get_local_rank_preinit = get_local_rank_preinit
    # CheckpointConfig.__post_init__ asks whether NVIDIA Resiliency's async
    # checkpointing is installed: it is not.
    sys.modules["megatron.training.utils"].has_nvrx_checkpointing_async_support = lambda: False
    sys.modules["megatron"].__path__.append(os.path.join(bridge_src, "megatron"))
    import megatron.training.config  # noqa: F401  (before container, which it imports)

    for name, (kept, names) in PARTIAL.items():
        megatron_standins._partial(megatron_upstream, name, kept, names)
    container = sys.modules["megatron.training.config.container"]
    for name in megatron_standins.PLACEHOLDERS["megatron.training.config.container"]:
        setattr(container, name, megatron_standins.Placeholder(container.__name__ + "." + name))
    # megatron/core/distributed/__init__.py imports the DDP wrappers.
    from megatron.core.distributed import distributed_data_parallel_config as ddp

    sys.modules["megatron.core.distributed"].DistributedDataParallelConfig = ddp.DistributedDataParallelConfig
    from megatron.core.transformer import spec_utils

    sys.modules["megatron.core.transformer"].ModuleSpec = spec_utils.ModuleSpec
    # megatron/bridge/models/__init__.py imports every model family.
    from megatron.bridge.models import gpt_provider, t5_provider

    models = sys.modules["megatron.bridge.models"]
    models.GPTModelProvider = gpt_provider.GPTModelProvider
    models.T5ModelProvider = t5_provider.T5ModelProvider
    sys.modules["megatron.bridge"].AutoBridge = AutoBridge
