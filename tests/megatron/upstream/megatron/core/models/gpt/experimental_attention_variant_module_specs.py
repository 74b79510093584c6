# Copyright (c) 2026, NVIDIA CORPORATION. All rights reserved.

import warnings
from typing import List, Optional

from megatron.core.fusions.fused_bias_dropout import get_bias_dropout_add
from megatron.core.models.backends import BackendSpecProvider
from megatron.core.ssm.gated_delta_net import GatedDeltaNet, GatedDeltaNet2, GatedDeltaNetSubmodules
from megatron.core.transformer.enums import AttnMaskType, LayerType
from megatron.core.transformer.experimental_attention_variant.absorbed_mla import (
    AbsorbedMLASelfAttention,
    AbsorbedMLASelfAttentionSubmodules,
)
from megatron.core.transformer.experimental_attention_variant.dsa import (
    DSAIndexer,
    DSAIndexerSubmodules,
    DSAttention,
    DSAttentionSubmodules,
    is_dsa_skip_topk_layer,
    source_dsa_compute_layer,
)
from megatron.core.transformer.identity_op import IdentityOp
from megatron.core.transformer.spec_utils import ModuleSpec
from megatron.core.transformer.transformer_block import (
    TransformerBlockSubmodules,
    get_num_layers_to_build,
)
from megatron.core.transformer.transformer_config import TransformerConfig
from megatron.core.transformer.transformer_layer import (
    MlpBuilder,
    TransformerLayer,
    TransformerLayerSubmodules,
    get_transformer_layer_offset,
)
from megatron.core.typed_torch import not_none

try:
    import transformer_engine as te  # type: ignore[import-untyped]  # pylint: disable=unused-import

    from megatron.core.extensions.transformer_engine_spec_provider import TESpecProvider

    HAVE_TE = True
except ImportError:
    HAVE_TE = False

try:
    import nvidia_kitchen  # type: ignore[import-not-found]  # pylint: disable=unused-import

    from megatron.core.extensions.kitchen import KitchenSpecProvider

    HAVE_KITCHEN = True
except ImportError:
    HAVE_KITCHEN = False


##########
# Experimental Attention Variant Names
##########

# Canonical ``experimental_attention_variant`` names served by the gated delta net family.
GDN_ATTENTION_VARIANTS = ("gdn", "gdn2")

# Deprecated ``experimental_attention_variant`` spellings mapped to their canonical name.
_DEPRECATED_ATTENTION_VARIANT_ALIASES = {"gated_delta_net": "gdn"}


##########
# Experimental Attention Variant Module Specs
##########


def get_gated_delta_net_module_spec(
    config: TransformerConfig, backend: BackendSpecProvider = None
) -> ModuleSpec:
    """Build module spec for GatedDeltaNet attention."""

    if backend is None:
        backend = _get_backend_spec_provider(config=config)

    rms_norm = config.normalization == "RMSNorm"
    # gdn2 reuses the GDN submodules and spec structure with the GatedDeltaNet2 module.
    gdn_module = (
        GatedDeltaNet2 if config.experimental_attention_variant == "gdn2" else GatedDeltaNet
    )
    attention = ModuleSpec(
        module=gdn_module,
        submodules=GatedDeltaNetSubmodules(
            in_proj=backend.column_parallel_layer_norm_linear(),
            out_norm=backend.layer_norm(rms_norm=rms_norm, for_qk=False),
            out_proj=backend.row_parallel_linear(),
        ),
        metainfo={"fuse_input_layernorm": True},
    )
    return attention


def get_dsa_module_spec_for_backend(
    config: TransformerConfig, backend: BackendSpecProvider = None
) -> ModuleSpec:
    """Helper function to get module spec for Sparse Attention."""
    assert config.multi_latent_attention, "Currently only MLA supports sparse attention."
    assert config.qk_l2_norm is False, "qk_l2_norm is not supported with MLA."

    # Because TransformerEngine does not support sparse attention yet, we use local
    # implementation whether the backend is TransformerEngine or not.
    core_attention = ModuleSpec(
        module=DSAttention,
        submodules=DSAttentionSubmodules(
            indexer=ModuleSpec(
                module=DSAIndexer,
                submodules=DSAIndexerSubmodules(
                    linear_wq_b=backend.linear(),
                    linear_wk=backend.linear(),
                    k_norm=backend.layer_norm(rms_norm=False, for_qk=True),
                    linear_weights_proj=backend.linear(),
                ),
            )
        ),
    )

    # Adjust for RMS norm.
    rms_norm = config.normalization == "RMSNorm"
    # DSA indexer requires normalized q as input, so here we cannot fuse qk layernorm
    # with linear projection and have to use unfused qk layernorm.
    qk_norm = (
        backend.layer_norm(rms_norm=rms_norm, for_qk=True) if config.qk_layernorm else IdentityOp
    )

    attention = ModuleSpec(
        module=AbsorbedMLASelfAttention,
        params={"attn_mask_type": AttnMaskType.causal},
        submodules=AbsorbedMLASelfAttentionSubmodules(
            linear_q_proj=backend.column_parallel_linear(),
            linear_q_down_proj=backend.linear(),
            linear_q_up_proj=backend.column_parallel_linear(),
            linear_kv_down_proj=backend.linear(),
            linear_kv_up_proj=backend.column_parallel_linear(),
            core_attention=core_attention,
            linear_proj=backend.row_parallel_linear(),
            q_layernorm=qk_norm,
            kv_layernorm=qk_norm,
        ),
        metainfo={"fuse_input_layernorm": False},
    )

    return attention


def get_experimental_attention_variant_module_spec(
    config: TransformerConfig, backend: BackendSpecProvider = None
) -> ModuleSpec:
    """Helper function to get module spec for experimental attention variant"""

    if backend is None:
        backend = _get_backend_spec_provider(config=config)

    if is_gated_delta_net_variant(config.experimental_attention_variant):
        return get_gated_delta_net_module_spec(config=config, backend=backend)
    elif config.experimental_attention_variant == "dsa":
        return get_dsa_module_spec_for_backend(config=config, backend=backend)
    else:
        raise ValueError(
            f"Invalid experimental attention variant: {config.experimental_attention_variant}"
        )


##########
# Experimental GPT Decoder Block Spec
##########


def get_transformer_layer_with_experimental_attention_variant_spec(
    config: TransformerConfig, backend: BackendSpecProvider = None
) -> List[ModuleSpec]:
    """Build transformer layer specs with experimental attention variants (e.g., linear attention).

    This function is for constructing a heterogeneous transformer that supports mixing different
    attention mechanisms (experimental vs standard) and MLP types (MoE vs dense) across layers.
    **Note that, this API is a experimental API in the short term, and might be deprecated in the
    future. In the long run, we will move to a new design that better support hybrid models.**

    Key Design:
        1. Attention and MLP patterns: The attention pattern and MLP pattern are orthogonal
           and determined independently. This allows flexible combinations (e.g., linear attention
           with MoE, or standard attention with dense MLP).
           - Attention pattern: derived from `config.linear_attention_freq` or
             `config.experimental_attention_variant`.
           - MLP pattern: derived from `config.moe_layer_freq`.

        2. Per-Layer Spec Construction: Iterates through layers, constructing transformer
           layer specs based on attention and MLP patterns.

    Args:
        config: Transformer configuration containing model hyperparameters and feature flags.

    Returns:
        List[ModuleSpec] containing per-layer specs.

    Note:
        Currently only supports transformer_engine backend. Kitchen backend can be used as a
        wrapper with TE fallback for unsupported operations.
    """

    if backend is None:
        backend = _get_backend_spec_provider(config=config)

    # Get attention patterns and specs
    experimental_attention_pattern = [0] * config.num_layers
    if is_linear_attention_variant(config.experimental_attention_variant):
        experimental_attention_pattern = get_linear_attention_pattern(config=config)
    elif config.experimental_attention_variant is not None:
        experimental_attention_pattern = [1] * config.num_layers

    if 1 in experimental_attention_pattern:
        experimental_attention_spec = get_experimental_attention_variant_module_spec(
            config=config, backend=backend
        )
    else:
        experimental_attention_spec = None

    if 0 in experimental_attention_pattern:
        standard_attention_spec = _get_self_attention_module_spec(config=config, backend=backend)
    else:
        standard_attention_spec = None

    # Get MLP patterns and specs
    if config.num_moe_experts is not None:
        moe_layer_pattern = get_moe_layer_pattern(config=config)
    else:
        moe_layer_pattern = [0] * config.num_layers

    if 1 in moe_layer_pattern:
        moe_layer_spec, fuse_layernorm_pre_moe = _get_moe_module_spec(
            config=config, backend=backend
        )
    else:
        moe_layer_spec, fuse_layernorm_pre_moe = None, False

    if 0 in moe_layer_pattern:
        dense_mlp_layer_spec, fuse_layernorm_pre_dense = _get_dense_mlp_module_spec(
            config=config, backend=backend
        )
    else:
        dense_mlp_layer_spec, fuse_layernorm_pre_dense = None, False

    # Get GPT decoder block layer specs
    rms_norm = config.normalization == "RMSNorm"
    layer_specs = []
    for layer_number in range(config.num_layers):
        attention = (
            experimental_attention_spec
            if experimental_attention_pattern[layer_number] == 1
            else standard_attention_spec
        )
        mlp = moe_layer_spec if moe_layer_pattern[layer_number] == 1 else dense_mlp_layer_spec
        fuse_pre_mlp_layernorm = (
            fuse_layernorm_pre_moe
            if moe_layer_pattern[layer_number] == 1
            else fuse_layernorm_pre_dense
        )
        input_layernorm = (
            IdentityOp
            if attention.metainfo["fuse_input_layernorm"]
            else backend.layer_norm(rms_norm=rms_norm, for_qk=False)
        )
        pre_mlp_layernorm = (
            IdentityOp
            if fuse_pre_mlp_layernorm
            else backend.layer_norm(rms_norm=rms_norm, for_qk=False)
        )

        layer_specs.append(
            ModuleSpec(
                module=TransformerLayer,
                submodules=TransformerLayerSubmodules(
                    input_layernorm=input_layernorm,
                    self_attention=attention,
                    self_attn_bda=get_bias_dropout_add,
                    pre_mlp_layernorm=pre_mlp_layernorm,
                    mlp=not_none(mlp),
                    mlp_bda=get_bias_dropout_add,
                ),
            )
        )

    return layer_specs


def get_transformer_block_with_experimental_attention_variant_spec(
    config: TransformerConfig, vp_stage: Optional[int] = None, pp_rank: Optional[int] = None
) -> TransformerBlockSubmodules:
    """Build transformer block spec with experimental attention variants (e.g., linear attention).

    This function constructs a heterogeneous transformer block that supports mixing different
    attention mechanisms (experimental vs standard) and MLP types (MoE vs dense) across layers.
    **Note that, this API is a experimental API in the short term, and might be deprecated in the
    future. In the long run, we will move to a new design that better support hybrid models.**

    Constructing transformer layer specs by
    `get_transformer_layer_with_experimental_attention_variant_spec` and then slicing the
    layer specs to only include the layers that are built in this pipeline stage.

    Args:
        config: Transformer configuration containing model hyperparameters and feature flags.
        vp_stage: Virtual pipeline stage index for interleaved pipeline parallelism.
        pp_rank: Pipeline model parallel rank.

    Returns:
        TransformerBlockSubmodules containing per-layer specs and final layer norm.

    Note:
        Currently only supports transformer_engine backend. Kitchen backend can be used as a
        wrapper with TE fallback for unsupported operations.
    """

    backend = _get_backend_spec_provider(config=config)

    layer_specs = get_transformer_layer_with_experimental_attention_variant_spec(
        config=config, backend=backend
    )

    # Slice the layer specs to only include the layers that are built in this pipeline stage.
    if config.pipeline_model_parallel_layout is not None:
        local_layer_ids = config.pipeline_model_parallel_layout.get_layer_id_list(
            layer_type=LayerType.decoder, vp_stage=vp_stage, pp_rank=pp_rank
        )
    else:
        offset = get_transformer_layer_offset(config, vp_stage=vp_stage, pp_rank=pp_rank)
        num_layers_to_build = get_num_layers_to_build(config, vp_stage=vp_stage, pp_rank=pp_rank)
        local_layer_ids = range(offset, offset + num_layers_to_build)

    _validate_dsa_index_share_pipeline_split(config, local_layer_ids)
    layer_specs = [layer_specs[layer_id] for layer_id in local_layer_ids]

    # Get GPT decoder block spec
    rms_norm = config.normalization == "RMSNorm"
    gpt_decoder_block_spec = TransformerBlockSubmodules(
        layer_specs=layer_specs, layer_norm=backend.layer_norm(rms_norm=rms_norm, for_qk=False)
    )

    return gpt_decoder_block_spec


##########
# Utilities
##########


def normalize_experimental_attention_variant(
    experimental_attention_variant: Optional[str],
) -> Optional[str]:
    """Resolve a deprecated ``experimental_attention_variant`` spelling to its canonical name.

    ``gated_delta_net`` is the deprecated spelling of ``gdn``. Passing it emits a
    ``DeprecationWarning`` and returns the canonical name so that every downstream
    consumer only has to handle ``gdn``.

    Args:
        experimental_attention_variant: The configured variant name, possibly a
            deprecated alias.

    Returns:
        The canonical variant name, or the argument unchanged when it is not an alias.
    """
    canonical = _DEPRECATED_ATTENTION_VARIANT_ALIASES.get(experimental_attention_variant)
    if canonical is None:
        return experimental_attention_variant

    warnings.warn(
        f"experimental_attention_variant='{experimental_attention_variant}' is deprecated "
        f"and will be removed in a future release. Use '{canonical}' instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    return canonical


def is_gated_delta_net_variant(experimental_attention_variant: Optional[str]) -> bool:
    """Check if the experimental attention variant is served by a gated delta net layer.

    Accepts the deprecated ``gated_delta_net`` spelling without warning; use
    :func:`normalize_experimental_attention_variant` to emit the deprecation notice.
    """
    canonical = _DEPRECATED_ATTENTION_VARIANT_ALIASES.get(
        experimental_attention_variant, experimental_attention_variant
    )
    return canonical in GDN_ATTENTION_VARIANTS


def is_linear_attention_variant(experimental_attention_variant: Optional[str]) -> bool:
    """Check if the experimental attention variant is a linear attention variant."""
    return is_gated_delta_net_variant(experimental_attention_variant)


def _validate_dsa_index_share_pipeline_split(config: TransformerConfig, local_layer_ids) -> None:
    """Ensure DSA top-k sharing does not require top-k indices from another PP stage."""
    if (
        config.experimental_attention_variant != "dsa"
        or getattr(config, "dsa_indexer_topk_freq", 1) <= 1
    ):
        return

    local_layer_ids = list(local_layer_ids)
    local_layer_positions = {
        layer_id: position for position, layer_id in enumerate(local_layer_ids)
    }
    for position, layer_id in enumerate(local_layer_ids):
        layer_number = layer_id + 1
        if not is_dsa_skip_topk_layer(
            layer_number, config.dsa_indexer_skip_topk_offset, config.dsa_indexer_topk_freq
        ):
            continue

        source_layer_number = source_dsa_compute_layer(
            layer_number, config.dsa_indexer_skip_topk_offset, config.dsa_indexer_topk_freq
        )
        source_layer_id = source_layer_number - 1
        if (
            source_layer_id not in local_layer_positions
            or local_layer_positions[source_layer_id] > position
        ):
            raise RuntimeError(
                "DSA index-share pipeline split is invalid: local layer "
                f"{layer_number} reuses top-k indices from computing layer "
                f"{source_layer_number}, but that source layer is not earlier in this "
                "pipeline stage. Cross-layer top-k sharing does not cross PP boundaries. "
                "Choose a pipeline layout where each stage starts on a computing layer "
                f"(dsa_indexer_topk_freq={config.dsa_indexer_topk_freq}, "
                f"dsa_indexer_skip_topk_offset={config.dsa_indexer_skip_topk_offset})."
            )


def get_moe_layer_pattern(config: TransformerConfig) -> List[int]:
    """Parse config.moe_layer_freq to get per-layer MoE pattern (1=MoE, 0=dense).

    - int N: one MoE layer every N layers (e.g., N=2 -> [1,0,1,0,...])
    - list: use directly as the pattern."""

    if isinstance(config.moe_layer_freq, int):
        # [1,0,0,...,0,1,0,0,...,0,...]
        moe_layer_pattern = [
            1 if (i % config.moe_layer_freq == 0) else 0 for i in range(config.num_layers)
        ]
    elif isinstance(config.moe_layer_freq, list):
        moe_layer_pattern = config.moe_layer_freq
        assert len(moe_layer_pattern) == config.num_layers, (
            f"Invalid length of moe_layer_pattern: {len(moe_layer_pattern)}, "
            f"expected {config.num_layers}, "
            f"current moe layer pattern: {config.moe_layer_freq}"
        )
    else:
        raise ValueError(
            f"Invalid moe_layer_freq: {type(config.moe_layer_freq)}, {config.moe_layer_freq}"
        )
    return moe_layer_pattern


def get_linear_attention_pattern(config: TransformerConfig) -> List[int]:
    """Parse config.linear_attention_freq to get per-layer attention pattern (1=LA, 0=SDPA).

    - int N: one SDPA layer every N layers (e.g., N=4 -> [1,1,1,0,1,1,1,0,...])
    - list: use directly as the pattern."""

    if isinstance(config.linear_attention_freq, int):
        linear_attention_pattern = [
            # [1,1,...,1,0,1,1,...,1,0,...]
            0 if ((i + 1) % config.linear_attention_freq == 0) else 1
            for i in range(config.num_layers)
        ]
    elif isinstance(config.linear_attention_freq, list):
        linear_attention_pattern = config.linear_attention_freq
        assert len(linear_attention_pattern) == config.num_layers, (
            f"Invalid length of linear_attention_pattern: {len(linear_attention_pattern)}, "
            f"expected {config.num_layers}, "
            f"current linear attention pattern: {config.linear_attention_freq}"
        )
    elif config.linear_attention_freq is None:
        if not is_linear_attention_variant(config.experimental_attention_variant):
            linear_attention_pattern = [0] * config.num_layers
        else:
            # This should be caught by config validation, but raise here as a safety check
            raise ValueError(
                f"Linear attention type {config.experimental_attention_variant} is specified "
                "but linear_attention_freq is None. "
                "Please set linear_attention_freq to specify the LA/SDPA layer pattern."
            )
    else:
        raise ValueError(
            f"Invalid linear_attention_freq: {type(config.linear_attention_freq)},"
            f" {config.linear_attention_freq}"
        )
    return linear_attention_pattern


def _get_backend_spec_provider(config: TransformerConfig) -> BackendSpecProvider:
    """Get backend spec provider for experimental attention variant."""

    assert config.transformer_impl == "transformer_engine", (
        "Experimental GPT decoder block spec only supports "
        "transformer engine implementation for now."
    )
    backend: BackendSpecProvider = (
        KitchenSpecProvider(
            fallback=TESpecProvider(),
            use_kitchen_attention=config.use_kitchen_attention,
            kitchen_attention_backend=config.kitchen_attention_backend,
        )
        if config.use_kitchen
        else TESpecProvider()
    )
    return backend


##########
# Spec functions for non-experimental self attention and MLP layer.
##########


def _get_self_attention_module_spec(
    config: TransformerConfig, backend: BackendSpecProvider = None
) -> ModuleSpec:
    """Get non-experimental self-attention module spec.
    For hybrid models that mix experimental and non-experimental attention architectures.

    Warning: This function may be deprecated in the future."""

    if backend is None:
        backend = _get_backend_spec_provider(config=config)

    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_with_transformer_engine_spec

    layer_spec = get_gpt_layer_with_transformer_engine_spec(
        num_experts=config.num_moe_experts,
        moe_grouped_gemm=config.moe_grouped_gemm,
        qk_layernorm=config.qk_layernorm,
        multi_latent_attention=config.multi_latent_attention,
        qk_l2_norm=config.qk_l2_norm,
        use_kitchen=config.use_kitchen,
        use_te_activation_func=config.use_te_activation_func,
        use_kitchen_attention=config.use_kitchen_attention,
        kitchen_attention_backend=config.kitchen_attention_backend,
        mla_down_proj_fusion=getattr(config, "mla_down_proj_fusion", False),
    )
    attn_spec = layer_spec.submodules.self_attention
    if config.multi_latent_attention:
        attn_spec.metainfo["fuse_input_layernorm"] = False
    else:
        attn_spec.metainfo["fuse_input_layernorm"] = backend.fuse_layernorm_and_linear()

    return attn_spec


def _get_dense_mlp_module_spec(
    config: TransformerConfig, backend: BackendSpecProvider = None
) -> tuple[MlpBuilder, bool]:
    """Get dense MLP module spec.
    For hybrid models that mix dense MLP and experimental attention architectures.

    Warning: This function may be deprecated in the future.

    Returns:
        A tuple of (MLP module spec, whether to fuse pre-MLP layernorm)
    """

    if backend is None:
        backend = _get_backend_spec_provider(config=config)

    from megatron.core.models.gpt.gpt_layer_specs import get_mlp_module_spec_for_backend

    return (
        get_mlp_module_spec_for_backend(backend=backend, num_experts=None),
        backend.fuse_layernorm_and_linear(),
    )


def _get_moe_module_spec(
    config: TransformerConfig, backend: BackendSpecProvider = None
) -> tuple[MlpBuilder, bool]:
    """Get MoE module spec.
    For hybrid models that mix MoE and experimental attention architectures.

    Warning: This function may be deprecated in the future.

    Returns:
        A tuple of (MoE module spec, whether to fuse pre-MoE layernorm)
    """

    if backend is None:
        backend = _get_backend_spec_provider(config=config)

    from megatron.core.models.gpt.moe_module_specs import get_moe_module_spec_for_backend

    return (
        get_moe_module_spec_for_backend(
            backend=backend,
            num_experts=config.num_moe_experts,
            moe_grouped_gemm=config.moe_grouped_gemm,
            use_te_activation_func=config.use_te_activation_func,
        ),
        False,
    )
