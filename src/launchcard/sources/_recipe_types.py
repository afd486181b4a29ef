"""Typed, frozen records of the vLLM recipes repository (what the resolver reads).

Built once per file by :mod:`launchcard.sources._recipe_check`, which validates
while it converts, so the resolver never meets a wrong type.  ``None`` means the
key is absent (or null), which is what the reference's "present" rule tests;
an empty tuple is a present-but-empty list.  Mapping fields hold plain dicts
that nothing writes to after construction (typed read-only).  Hardware-keyed
mappings drop null entries: a null entry and a missing one behave the same in
the reference builder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

Scalar = str | int | float | bool
Token = Scalar | None
ArgList = tuple[Token, ...]
EnvMap = Mapping[str, Token]
# docker_image: a tag, a CUDA map ({cu129, cu130}) or a brand map whose entries are tags or CUDA maps
ImageSpec = str | Mapping[str, str | Mapping[str, str]]
# tp: a number, or a hardware-keyed map of numbers
TpSpec = int | float | Mapping[str, Token]
# strategy_min_gpus: a number, or a map of strategy / hardware keys to numbers or such maps
MinGpus = int | float | Mapping[str, int | float | Mapping[str, int | float]]

@dataclass(frozen=True, slots=True)
class HwBlock:
    """One ``hardware_overrides.<key>`` entry (recipe, variant, strategy override, role, omni task)."""

    extra_args: ArgList | None = None
    extra_env: EnvMap | None = None
    docker_image: str | None = None  # variant-level exact-hardware pin
    model_id: str | None = None  # omni task hardware override


@dataclass(frozen=True, slots=True)
class ArgsBlock:
    """A feature's or mode's ``hardware_overrides.<key>``: replacement args."""

    args: ArgList | None = None


@dataclass(frozen=True, slots=True)
class Companion:
    command: str | None = None
    label: str | None = None
    description: str | None = None


@dataclass(frozen=True, slots=True)
class Mode:
    args: ArgList
    variants: tuple[str, ...] | None = None
    hardware: Mapping[str, Scalar] = field(default_factory=dict)  # hw/gen -> "unsupported"
    hardware_overrides: Mapping[str, ArgsBlock] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Feature:
    args: ArgList | None = None
    strategies: tuple[str, ...] | None = None
    companion: Companion | None = None
    hardware_overrides: Mapping[str, ArgsBlock] = field(default_factory=dict)
    modes: Mapping[str, Mode] | None = None  # None: not a modal feature
    default_mode: str | None = None
    # hw/gen -> "unsupported": a mark the resolution spec gives modes only; recipes write it on plain features
    # too (Muse-Glimmer-30B), and the builder renders the args anyway: resolve warns, never drops it
    hardware: Mapping[str, Scalar] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Variant:
    model_id: str | None = None
    precision: str | None = None
    precision_hardware: tuple[str | None, str | None] | None = None  # (brand, generation)
    extra_args: ArgList | None = None
    extra_env: EnvMap | None = None
    tp: TpSpec | None = None
    vram_minimum_gb: int | float | None = None
    supported_hardware: tuple[str, ...] | None = None
    hardware_overrides: Mapping[str, HwBlock] = field(default_factory=dict)
    default_modes: Mapping[str, str] = field(default_factory=dict)
    docker_image: ImageSpec | None = None
    min_vllm_version: Scalar | None = None


@dataclass(frozen=True, slots=True)
class ModelBlock:
    model_id: str | None = None
    base_args: ArgList | None = None
    base_env: EnvMap | None = None
    docker_image: ImageSpec | None = None
    nightly_required: bool = False
    min_vllm_version: Scalar | None = None
    context_length: int | None = None
    architecture: str | None = None
    parameter_count: Scalar | None = None
    active_parameters: Scalar | None = None


@dataclass(frozen=True, slots=True)
class RoleOverride:
    """``strategy_overrides.<sid>.prefill|decode``."""

    extra_args: ArgList | None = None
    vllm_args: ArgList | None = None
    env: EnvMap | None = None
    hardware_overrides: Mapping[str, HwBlock] = field(default_factory=dict)
    parallelism: str | None = None
    tp: int | float | None = None
    parallel_flag: str | None = None


@dataclass(frozen=True, slots=True)
class StrategyOverride:
    extra_args: ArgList | None = None
    vllm_args: ArgList | None = None
    env: EnvMap | None = None
    extra_env: EnvMap | None = None
    hardware_overrides: Mapping[str, HwBlock] = field(default_factory=dict)
    prefill: RoleOverride = RoleOverride()
    decode: RoleOverride = RoleOverride()
    tp: TpSpec | None = None
    pool_modes: tuple[str, ...] = ()
    router_intra_dp: Scalar | None = None  # router.intra_node_data_parallel_size

    def role(self, role: str) -> RoleOverride:
        return self.prefill if role == "prefill" else self.decode


@dataclass(frozen=True, slots=True)
class OmniTask:
    id: str | None = None
    key: str | None = None
    model_id: str | None = None
    extra_args: ArgList | None = None
    hardware_overrides: Mapping[str, HwBlock] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Omni:
    tasks: tuple[OmniTask, ...] = ()
    port: Scalar | None = None
    serve_binary: str | None = None


@dataclass(frozen=True, slots=True)
class Meta:
    hardware: Mapping[str, Scalar] = field(default_factory=dict)  # profile -> maintainer status
    default_hardware: str | None = None
    tasks: tuple[Scalar, ...] = ()


@dataclass(frozen=True, slots=True)
class Recipe:
    """One ``models/<org>/<name>.yaml``."""

    meta: Meta
    model: ModelBlock
    variants: Mapping[str, Variant]
    features: Mapping[str, Feature]
    opt_in_features: tuple[str, ...] = ()
    hardware_opt_in_features: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    compatible_strategies: tuple[str, ...] = ()
    default_strategy: str | None = None
    strategy_hardware: Mapping[str, Mapping[str, Scalar]] = field(default_factory=dict)
    strategy_min_gpus: MinGpus | None = None
    strategy_overrides: Mapping[str, StrategyOverride] = field(default_factory=dict)
    hardware_overrides: Mapping[str, HwBlock] = field(default_factory=dict)
    kv_offload_support: Mapping[str, Scalar] = field(default_factory=dict)
    kv_cache_strategy_hardware: Mapping[str, Mapping[str, Scalar]] = field(default_factory=dict)
    omni: Omni | None = None

    @property
    def is_omni(self) -> bool:
        return "omni" in self.meta.tasks

    def variant(self, key: str) -> Variant:
        return self.variants.get(key) or _NO_VARIANT

    def override(self, strategy: str | None) -> StrategyOverride:
        return self.strategy_overrides.get(strategy or "") or _NO_OVERRIDE


_NO_VARIANT = Variant()
_NO_OVERRIDE = StrategyOverride()


@dataclass(frozen=True, slots=True)
class StrategyRole:
    """``prefill:`` / ``decode:`` of a strategy file."""

    vllm_args: ArgList | None = None
    env: EnvMap | None = None
    parallelism: str | None = None
    tp: int | float | None = None
    parallel_flag: str | None = None


@dataclass(frozen=True, slots=True)
class KvRouter:
    policy: str | None = None
    install: str | None = None
    port: int | None = None


@dataclass(frozen=True, slots=True)
class Strategy:
    """A serving strategy (``strategies/``) or KV-store deployment (``kv_store/``)."""

    name: str
    deploy_type: str | None = None
    vllm_args: ArgList | None = None
    env: EnvMap | None = None
    parallel_flag: str | None = None
    parallelism: str | None = None
    prefill: StrategyRole = StrategyRole()
    decode: StrategyRole = StrategyRole()
    router: KvRouter | None = None
    router_raw: object = None  # echoed verbatim as router_config (wire value)
    # kv_store files
    store_vllm_args: ArgList | None = None
    store_env: EnvMap | None = None
    store_install: Mapping[str, str] = field(default_factory=dict)
    store_port: Scalar | None = None
    pd_args: Mapping[str, ArgList] = field(default_factory=dict)
    master_command: str | None = None
    store_command: str | None = None
    default_instances: int | float | None = None

    def role(self, role: str) -> StrategyRole:
        return self.prefill if role == "prefill" else self.decode


@dataclass(frozen=True, slots=True)
class HwProfile:
    """A taxonomy ``hardware_profiles`` entry."""

    brand: str | None = None
    generations: tuple[str, ...] = ()
    gpu_count: int = 1
    vram_gb: int | float | None = None
    restricted: bool = False
    scalable: bool = True

    @property
    def generation(self) -> str | None:
        return self.generations[0] if self.generations else None


@dataclass(frozen=True, slots=True)
class KvOption:
    """A taxonomy ``kv_offload`` entry."""

    args: ArgList | None = None
    env: EnvMap | None = None
    strategies: tuple[str, ...] | None = None
    requires_opt_in: bool = False
    brands: tuple[str, ...] | None = None
    companion: Companion | None = None
    install: str | None = None


@dataclass(frozen=True, slots=True)
class Taxonomy:
    profiles: Mapping[str, HwProfile]
    kv_offload: Mapping[str, KvOption]
