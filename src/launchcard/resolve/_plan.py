"""Typed result of a resolution: commands per role, each token with its reason.

Frozen standard-library dataclasses rather than pydantic models: resolving is on
the CLI's start-up path, and importing pydantic alone costs about 0.25 s on a
small machine.  Evidence (a card type) is only built when provenance is asked.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from launchcard.card import Evidence

EnvValue = str | int | float | bool

Role = Literal["single", "head", "worker", "prefill", "decode", "instance", "omni"]
DeployType = Literal["single_node", "multi_node", "pd_cluster", "kv_store_lb", "omni"]


@dataclass(frozen=True, kw_only=True)
class Input:
    """One input a computed value was computed from."""

    name: str  # e.g. hardware_profiles.h100.gpu_count, node count
    value: str
    evidence: Evidence | None = None  # the line holding it; None: the user's choice or this command's position

    def text(self) -> str:
        ev = self.evidence
        where = f" ({ev.path}#L{ev.line})" if ev is not None and ev.line else ""
        return f"{self.name}={self.value}{where}"


@dataclass(frozen=True, kw_only=True)
class Origin:
    """Where a token or variable came from: the line that holds its value and, where different, the
    line that names its flag; or, for a value the builder computed, the rule and its inputs.

    ``layer`` is one of base, variant, variant_hardware, strategy, parallelism,
    strategy_override, hardware_override, strategy_hardware_override, advanced,
    feature, mode, kv_offload, kv_store, pd_layout, omni_task; ``key`` names the
    entry of that layer (a hardware key, feature name, mode ...).  It is the layer
    of the value (for a flag without a value, of the flag).
    """

    layer: str
    key: str | None = None
    evidence: Evidence | None = None  # the line holding the value (the flag, for a flag without one)
    flag_evidence: Evidence | None = None  # the line naming the flag, when it is not ``evidence``'s line
    derived: str | None = None  # computed, not written: the rule, in words
    inputs: tuple[Input, ...] = ()  # what a derived value was computed from

    def label(self) -> str:
        return f"{self.layer}[{self.key}]" if self.key else self.layer

    def credit(self) -> str:
        """One line: ``path#Lline`` of the value, or ``derived: rule <- inputs``, or the user's choice."""
        if self.derived is not None:
            given = ", ".join(i.text() for i in self.inputs)
            return f"derived: {self.derived}" + (f" <- {given}" if given else "")
        ev = self.evidence
        if ev is None:
            return "(your choice)"
        return f"{ev.path}#L{ev.line}" if ev.line else (ev.path or ev.url or "")

    def where(self) -> str:
        """:meth:`credit`, and the flag's line where it is another one."""
        flag = self.flag_credit()
        return self.credit() + (f" (flag: {flag})" if flag else "")

    def flag_credit(self) -> str:
        """``path#Lline`` of the line naming the flag, when it is not the value's line ('' otherwise)."""
        ev = self.flag_evidence
        if ev is None:
            return ""
        return f"{ev.path}#L{ev.line}" if ev.line else (ev.path or "")


@dataclass(frozen=True, kw_only=True)
class ArgUnit:
    """A flag with its value, a boolean flag, or a positional token."""

    flag: str | None = None
    value: str | None = None
    origin: Origin
    overrides: tuple[Origin, ...] = ()  # earlier layers whose same flag this one replaced

    @property
    def tokens(self) -> tuple[str, ...]:
        if self.flag is None:
            return (self.value,) if self.value is not None else ()
        return (self.flag,) if self.value is None else (self.flag, self.value)


@dataclass(frozen=True, kw_only=True)
class EnvEntry:
    name: str
    value: EnvValue
    origin: Origin
    overrides: tuple[Origin, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Command:
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


@dataclass(frozen=True, kw_only=True)
class Router:
    command: str
    install: str | None = None
    port: int | None = None


@dataclass(frozen=True)
class Assumption:
    """Something resolve supplied or replaced that the choice did not say, with how to say it instead.

    ``code``: ``assumed`` (a value supplied, e.g. a catalog name mapped onto a profile) or
    ``selection-replaced`` (a selection the recipe cannot honour here, replaced by another)."""

    code: str
    message: str
    evidence: str
    fix: str


@dataclass(frozen=True, kw_only=True)
class ResolvedPlan:
    """Everything a user needs to launch one choice of a recipe."""

    model: str  # recipe id (org/name from the path)
    model_id: str  # checkpoint served
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
    feature_modes: dict[str, str] = field(default_factory=dict)
    commands: tuple[Command, ...]
    router: Router | None = None
    warnings: tuple[str, ...] = ()
    # what resolve supplied or replaced that the choice did not say (a catalog name mapped onto a profile, a
    # selection the recipe cannot honour on this hardware); the verdict shows each as an ``assumed`` finding
    assumed: tuple[Assumption, ...] = ()
    source: Evidence | None = None  # the recipe document (when provenance was asked)
    # set on a plan no recipe made ("derived by launchcard (no recipe)"): every argument's origin is then
    # ``derived`` (rule and inputs) or the user's, and ``assumed`` says what the model's files did not
    derived: str | None = None
    engine: str = "vllm"  # the serving engine the commands start (vllm; sglang for a derived SGLang plan)
    reference: dict[str, Any] = field(default_factory=dict)  # the result in the reference (golden) format

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

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of the whole plan, provenance included."""
        out: dict[str, Any] = _jsonable(self)
        return out


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, "model_dump"):  # pydantic card types (Evidence)
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def env_value_str(value: EnvValue) -> str:
    """Plain string conversion, as the reference renders env values."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
