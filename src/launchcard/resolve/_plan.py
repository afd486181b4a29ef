"""Typed result of a resolution: commands per role, each token with its reason."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from launchcard.card import Evidence, Frozen

EnvValue = str | int | float | bool

Role = Literal["single", "head", "worker", "prefill", "decode", "instance", "omni"]
DeployType = Literal["single_node", "multi_node", "pd_cluster", "kv_store_lb", "omni"]


class Origin(Frozen):
    """Which layer of the recipe put a token or variable there."""

    layer: str = Field(description="base, variant, variant_hardware, strategy, parallelism, "
                       "strategy_override, hardware_override, strategy_hardware_override, "
                       "advanced, feature, mode, kv_offload, kv_store, pd_layout, omni_task")
    key: str | None = Field(None, description="Which entry of the layer: a hardware key, feature name, mode ...")
    evidence: Evidence | None = None

    def label(self) -> str:
        return f"{self.layer}[{self.key}]" if self.key else self.layer


class ArgUnit(Frozen):
    """A flag with its value, a boolean flag, or a positional token."""

    flag: str | None = None
    value: str | None = None
    origin: Origin
    overrides: tuple[Origin, ...] = Field((), description="Earlier layers whose same flag this one replaced.")

    @property
    def tokens(self) -> tuple[str, ...]:
        if self.flag is None:
            return (self.value,) if self.value is not None else ()
        return (self.flag,) if self.value is None else (self.flag, self.value)


class EnvEntry(Frozen):
    name: str
    value: EnvValue
    origin: Origin
    overrides: tuple[Origin, ...] = ()


class Command(Frozen):
    """One process to start: ``vllm serve`` for a role/rank."""

    role: Role
    node_rank: int | None = None
    argv: tuple[str, ...]
    env: dict[str, EnvValue]
    units: tuple[ArgUnit, ...] = ()
    env_entries: tuple[EnvEntry, ...] = ()
    port: int = 8000

    @property
    def env_str(self) -> dict[str, str]:
        return {k: env_value_str(v) for k, v in self.env.items()}


class Router(Frozen):
    command: str
    install: str | None = None
    port: int | None = None


class ResolvedPlan(Frozen):
    """Everything a user needs to launch one choice of a recipe."""

    model: str = Field(description="Recipe id (org/name from the path).")
    model_id: str = Field(description="Checkpoint served.")
    variant: str
    hardware: str
    strategy: str | None
    node_count: int
    deploy_type: DeployType
    docker_image: str | None
    brand: str | None = None
    generation: str | None = None
    gpus_per_node: int = 1
    features: tuple[str, ...] = ()
    feature_modes: dict[str, str] = Field(default_factory=dict)
    commands: tuple[Command, ...]
    router: Router | None = None
    warnings: tuple[str, ...] = ()
    source: Evidence | None = None
    reference: dict[str, Any] = Field(default_factory=dict, description=(
        "The result object in the reference (golden) format."))

    def role(self, role: Role) -> Command | None:
        return next((c for c in self.commands if c.role == role), None)

    @property
    def ready_timeout_s(self) -> int | None:
        for cmd in self.commands:
            raw = cmd.env.get("VLLM_ENGINE_READY_TIMEOUT_S")
            if raw is not None:
                try:
                    return int(str(raw))
                except ValueError:
                    return None
        return None


def env_value_str(value: EnvValue) -> str:
    """Plain string conversion, as the reference renders env values."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
