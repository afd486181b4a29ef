"""Typed, frozen records of a launch card and its parts.

Wire and YAML data become these types once, at an adapter boundary; nothing
downstream handles raw dictionaries.  Unknown is ``None``, never a guess.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_ID = "launchcard.launch-card/v1"

Classification = Literal["declared", "derived", "measured"]
SourceKind = Literal[
    "vllm-recipes",
    "sglang-cookbook",
    "hf-api",
    "hf-config",
    "provider-preset",
    "dynamo",
    "launchcard",
    "endpoint",
]
Scalar = str | int | float | bool | None


class Frozen(BaseModel):
    # defer_build: schemas are built on first use, not at import (CLI start-up).
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Evidence(Frozen):
    """Where a fact was read: enough to find the exact line again."""

    kind: SourceKind = Field(description="Which kind of source the fact came from.")
    url: str | None = Field(None, description="URL of the source, with a #L<line> anchor when known.")
    path: str | None = Field(None, description="Path of the document inside its repository.")
    line: int | None = Field(None, description="1-based line of the value in the document.")
    revision: str | None = Field(None, description="Revision (commit, sha) of the document; null when unknown.")
    sha256: str | None = Field(None, description="sha256 of the whole source document's raw bytes.")
    fetched_at: datetime | None = Field(None, description="When the document was fetched or captured.")
    committed_at: datetime | None = Field(None, description="Time of the commit `revision` (synced git sources).")


class Conditions(Frozen):
    """Conditions of a measurement; each null when unknown."""

    model_revision: str | None = None
    weight_hash: str | None = None
    runtime_execution_revision: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    concurrency: int | None = None
    cache_state: str | None = None
    quantization: str | None = None
    speculative_decoding: str | None = None
    temperature: float | None = None
    top_p: float | None = None


class Fact(Frozen):
    """One attributed value."""

    name: str
    value: Any = None  # Any: a JSON value (number, string, list, object), typed by the fact vocabulary
    classification: Classification = "declared"
    evidence: Evidence | None = None
    conditions: Conditions | None = Field(None, description="Only for measured facts.")
    unit: str | None = None
    scope: str | None = Field(None, description="Deployment or hardware the value is stated for; null = model-wide.")
    engine: str | None = Field(None, description="Engine whose registry names the value (parsers: vllm, sglang, "
                               "dynamo...); null = engine-neutral.")


class SourceRef(Frozen):
    kind: SourceKind
    url: str | None = None
    path: str | None = None
    revision: str | None = None
    sha256: str | None = None
    fetched_at: datetime | None = None
    committed_at: datetime | None = None


class EnvVerdict(Frozen):
    """Derived: launchcard's judgement of one environment (``launchcard.check``)."""

    status: Literal["ok", "warning", "error"] = Field(description="error = will not start or does not fit.")
    findings: Annotated[tuple[str, ...], Field(description="One line each: severity [code] message (evidence); "
                                               "fix.")] = ()


class EngineEnv(Frozen):
    """One way to launch the model with one engine, as one source gives it."""

    engine: str
    role: str = "single"
    checkpoint: str | None = None
    engine_version: str | None = None
    image: str | None = None
    argv: tuple[str, ...]
    command: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    validated_hardware: tuple[str, ...] = ()
    hardware: str | None = Field(None, description="Hardware this command is written for, where the source says so.")
    gpus: int | None = None
    notes: str | None = None
    source: SourceRef
    evidence: Evidence | None = None
    flag_verdicts: dict[str, str] = Field(default_factory=dict, description=(
        "Derived: engine version -> pass | fail | n/a, checking argv against that version's captured "
        "argument parser (launchcard check)."))
    verdict: Annotated[EnvVerdict | None, Field(description="Derived: plan verdict (topology, memory, sizing, "
                                                "flags); null = not judged.")] = None


class Checkpoint(Frozen):
    name: str
    repo: str | None = None
    revision: str | None = None
    format: str | None = None
    subdir: str | None = None
    source_repo: str | None = None
    resident_gib: float | None = None
    host_gib: float | None = None
    gated: bool | None = None
    notes: str | None = None


class HfInfo(Frozen):
    repo: str
    revision: str | None = None
    license: str | None = None
    gated: bool | None = None
    params_b: float | None = None
    modality: tuple[str, ...] = ()
    weight_gib: float | None = None
    weight_files: int | None = None
    architecture: str | None = None
    last_modified: datetime | None = None
    downloads: int | None = None


class HardwareNeeds(Frozen):
    gpu_models: tuple[str, ...] = ()
    gpu_arch: tuple[str, ...] = ()
    min_gpus: int | None = None
    tp_rule: str | None = None
    min_vram_per_gpu_gib: float | None = None
    min_total_vram_gib: float | None = None
    min_disk_gib: float | None = None
    min_host_ram_gib: float | None = None
    interconnect: str | None = None
    cuda_min: str | None = None
    driver_min: str | None = None
    context_tokens: int | None = None


class Gap(Frozen):
    field: str
    why: str


class ConflictSide(Frozen):
    value: Any  # Any: a fact value (JSON)
    evidence: Evidence
    scope: str | None = Field(None, description="Deployment or hardware the side's value is stated for.")


class Conflict(Frozen):
    """One fact, different values in different sources."""

    field: str
    sides: tuple[ConflictSide, ...]
    note: str | None = None


class LaunchCard(Frozen):
    schema_id: str = Field(SCHEMA_ID, alias="schema")
    model: str
    hf: HfInfo | None = None
    checkpoints: tuple[Checkpoint, ...] = ()
    envs: tuple[EngineEnv, ...] = ()
    hardware: HardwareNeeds = HardwareNeeds()
    facts: tuple[Fact, ...] = ()
    evidence: tuple[SourceRef, ...] = ()
    gaps: tuple[Gap, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    captured_at: datetime | None = None
    captured_by: str | None = None

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)


def card_json_schema() -> dict[str, Any]:  # Any: a JSON Schema document
    """The JSON Schema of a launch card (what ``launchcard schema`` prints)."""
    schema = LaunchCard.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    return schema
