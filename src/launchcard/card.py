"""Typed, frozen records of a launch card and its parts.

Wire and YAML data become these types once, at an adapter boundary; nothing
downstream handles raw dictionaries.  Unknown is ``None``, never a guess.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SCHEMA_ID = "onefrontier.launch-card/v1"
LEGACY_SCHEMA_IDS = ("launchcard.launch-card/v1",)  # read and migrated (:func:`migrate_card_data`)

# The seed card's and the recipe index page's terms: a recipe's own declaration, another source's report,
# launchcard's derivation, a measurement on a running server.
Classification = Literal["recipe_declaration", "source_reported", "derived", "measured"]
_LEGACY_CLASSIFICATION = "declared"  # before v1 of the seed vocabulary; split by the evidence's source kind
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
# The top-level keys every published card carries (the seed format's keys); ``model`` or ``hf.repo`` names it.
REQUIRED_KEYS = ("schema", "hf", "checkpoints", "envs", "hardware", "performance", "evidence", "gaps",
                 "captured_at", "captured_by")


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
    load_generator: str | None = Field(None, description=(
        "The tool that sent the load and took the timings (launchcard's built-in client, vllm bench serve, "
        "guidellm...), with its version where it states one."))


class Fact(Frozen):
    """One attributed value."""

    name: str
    value: Any = None  # Any: a JSON value (number, string, list, object), typed by the fact vocabulary
    classification: Classification = Field("source_reported", description=(
        "recipe_declaration (the vLLM recipe says so), source_reported (another source says so), derived "
        "(launchcard computed it), measured (read off a running server). Omitted or the legacy 'declared': "
        "recipe_declaration for vllm-recipes evidence, else source_reported."))
    evidence: Evidence | None = None
    conditions: Conditions | None = Field(None, description="Only for measured facts.")
    unit: str | None = None
    scope: str | None = Field(None, description="Deployment or hardware the value is stated for; null = model-wide.")
    engine: str | None = Field(None, description="Engine whose registry names the value (parsers: vllm, sglang, "
                               "dynamo...); null = engine-neutral.")

    @model_validator(mode="before")
    @classmethod
    def _classify(cls, data: Any) -> Any:
        """A declaration's term follows its source: the recipe's own, or another source's report."""
        if isinstance(data, dict) and data.get("classification", _LEGACY_CLASSIFICATION) == _LEGACY_CLASSIFICATION:
            ev = data.get("evidence")
            kind = ev.kind if isinstance(ev, Evidence) else ev.get("kind") if isinstance(ev, dict) else None
            data = {**data, "classification": "recipe_declaration" if kind == "vllm-recipes" else "source_reported"}
        return data


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


class PresetWeights(Frozen):
    source: str = Field(description="Where the weights come from, e.g. hf://org/name@revision.")
    mount_location: str | None = None
    auth_secret_name: str | None = None
    allow_patterns: tuple[str, ...] = ()
    ignore_patterns: tuple[str, ...] = Field((), description="Files of the weights repo the provider skips.")


class ProviderPreset(Frozen):
    """A provider preset's deployment settings beyond its command (a Baseten/Truss ``config.yaml``), as written."""

    provider: str = "baseten"
    model_name: str | None = None
    description: str | None = None
    repo_id: str | None = None
    tags: tuple[str, ...] = ()
    example_input: dict[str, Any] | None = Field(None, description="The preset's example request (with its "
                                                "sampling parameters).")
    weights: tuple[PresetWeights, ...] = ()
    secrets: tuple[str, ...] = Field((), description="Secret names; values are never stored.")
    server: dict[str, str | int] = Field(default_factory=dict, description="readiness/liveness/predict endpoints, "
                                         "server port.")
    instance_type: str | None = None
    predict_concurrency: int | None = None
    # As the provider wrote them, so a re-emitted preset comes back unchanged (issue 21):
    build_commands: tuple[str, ...] = Field((), description="Commands run while the image is built.")
    resources: dict[str, str | int | bool] = Field(default_factory=dict, description=(
        "resources as written (instance_type, or accelerator and use_gpu, cpu, memory)."))
    start_command: str | None = Field(None, description=(
        "The start command as written (whitespace folded), e.g. with its `sh -c \"VAR=1 ...\"` wrapper."))
    start_env: dict[str, str] = Field(default_factory=dict, description=(
        "`VAR=value` words at the front of the start command (set there, not in environment_variables)."))
    environment: dict[str, str | int | float | bool] = Field(default_factory=dict, description=(
        "environment_variables as written (a value keeps its YAML type: `1` stays a number)."))
    model_cache: tuple[dict[str, Any], ...] = Field((), description="model_cache entries as written.")
    trt_llm: dict[str, Any] | None = Field(None, description=(
        "The TensorRT-LLM engine settings (`trt_llm`) as written; Baseten builds the server from them."))
    health_checks: dict[str, int] = Field(default_factory=dict)
    comments: tuple[str, ...] = Field((), description=(
        "The provider's own comment lines, as written, each after its line ('L29: text'): notes the settings do "
        "not carry, e.g. why an image is required."))


class CreditInput(Frozen):
    """One input a computed argument value was computed from."""

    name: str
    value: str
    evidence: Evidence | None = Field(None, description="The line holding it; null: the user's choice or the "
                                      "command's own position (node rank).")


class ArgCredit(Frozen):
    """Where one argument of a resolved command came from, as the resolver credits it."""

    flag: str | None = None
    value: str | None = None
    layer: str = Field(description="Recipe layer of the value (base, variant, strategy_override, parallelism ...).")
    credit: str = Field(description="One line: path#Lline of the value, or 'derived: rule <- inputs'.")
    evidence: Evidence | None = Field(None, description="The line holding the value (the flag, without one).")
    flag_evidence: Evidence | None = Field(None, description="The line naming the flag, where it is another line.")
    derived: str | None = Field(None, description="Computed, not written: the rule.")
    inputs: tuple[CreditInput, ...] = Field((), description="What a derived value was computed from.")

    def where(self) -> str:
        """``credit``, and the flag's line where it is another one (as ``resolve --explain`` shows them)."""
        ev = self.flag_evidence
        if ev is None:
            return self.credit
        return f"{self.credit} (flag: {f'{ev.path}#L{ev.line}' if ev.line else ev.path or ev.url or ''})"


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
    preset: ProviderPreset | None = Field(None, description="A provider preset's own settings (provider-preset "
                                          "environments).")
    credits: tuple[ArgCredit, ...] = Field((), description=(
        "Per argument of argv (resolved recipe commands): the line holding its value, the line naming its flag, "
        "or how it was computed."))


class Pin(Frozen):
    """Which weights revision one source loads for a checkpoint (``main`` = unpinned, the repo's current head)."""

    revision: str
    kind: SourceKind
    url: str | None = None


class Checkpoint(Frozen):
    name: str
    repo: str | None = None
    revision: str | None = Field(None, description=(
        "The revision this card stands for: the Hub capture's when there is one, else the one revision every "
        "pinning source agrees on; null when the sources disagree (see pins and the weights_revision conflict)."))
    pins: tuple[Pin, ...] = Field((), description="Every source's pin for this checkpoint, with where it says so.")
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
    min_gpus_from: str | None = Field(None, description=(
        "The deployment min_gpus counts (source, line, role, checkpoint); null when min_gpus is."))
    tp_rule: str | None = None
    min_vram_per_gpu_gib: float | None = None
    min_total_vram_gib: float | None = None
    min_vram_from: str | None = Field(None, description=(
        "The environment the memory figures plan (command, checkpoint, GPUs, TP/PP/DP, request length): "
        "min_total_vram_gib = min_vram_per_gpu_gib x its GPU count; null when they are."))
    min_disk_gib: float | None = None
    min_disk_rule: str | None = Field(None, description=(
        "How min_disk_gib was derived (the formula and its inputs); null when min_disk_gib is."))
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
    """One model's launch card: the seed format's keys (``schema``, ``hf``, ``checkpoints``, ``envs``, ``hardware``,
    ``performance``, ``evidence``, ``gaps``, ``captured_at``, ``captured_by``) plus launchcard's additions."""

    schema_id: Literal["onefrontier.launch-card/v1"] = Field("onefrontier.launch-card/v1", alias="schema")
    model: str = Field("", description="HF repo id the card is about; a card without it (the seed format) takes "
                                       "hf.repo.")
    hf: HfInfo | None = None
    checkpoints: tuple[Checkpoint, ...] = ()
    envs: tuple[EngineEnv, ...] = ()
    hardware: HardwareNeeds = HardwareNeeds()
    performance: str | None = Field(None, description=(
        "Where the model's performance points are: the web catalog's /{org}/{model}/performance page under its "
        "base URL, or, with no base URL known, that path alone."))
    evidence: tuple[SourceRef, ...] = ()
    gaps: tuple[Gap, ...] = ()
    captured_at: datetime | None = None
    captured_by: str | None = None
    facts: tuple[Fact, ...] = ()
    conflicts: tuple[Conflict, ...] = ()

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        return migrate_card_data(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _named(self) -> LaunchCard:
        if not self.model:
            raise ValueError("a launch card needs 'model' or 'hf.repo'")
        return self


def migrate_card_data(data: dict[str, Any]) -> dict[str, Any]:
    """A card's JSON as written by any earlier launchcard, or in the seed format, in today's shape.

    Legacy schema ids become :data:`SCHEMA_ID`; a card without ``model`` takes ``hf.repo``; the legacy
    ``declared`` classification is split by :class:`Fact` itself.  Unknown keys are still refused.
    """
    out = dict(data)
    if out.get("schema") in LEGACY_SCHEMA_IDS:
        out["schema"] = SCHEMA_ID
    if not out.get("model"):
        hf = out.get("hf")
        repo = hf.repo if isinstance(hf, HfInfo) else hf.get("repo") if isinstance(hf, dict) else None
        if isinstance(repo, str):
            out["model"] = repo
    return out


def performance_ref(model: str, base_url: str | None = None) -> str:
    """The card's ``performance``: ``{base_url}/{org}/{model}/performance``, or the path alone offline."""
    path = f"/{model}/performance"
    return base_url.rstrip("/") + path if base_url else path


def card_json_schema() -> dict[str, Any]:  # Any: a JSON Schema document
    """The JSON Schema of a launch card (what ``launchcard schema`` prints)."""
    schema = LaunchCard.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    # A published card is whole: every seed key present (null where unknown), its schema id one launchcard
    # reads (legacy ids are migrated on read), and named by a non-empty `model` or by `hf.repo`.
    schema["properties"]["schema"] = {"type": "string", "enum": [SCHEMA_ID, *LEGACY_SCHEMA_IDS],
                                      "title": "Schema", "description": "The card format's id."}
    schema["required"] = list(REQUIRED_KEYS)
    schema["anyOf"] = [{"required": ["model"], "properties": {"model": {"type": "string", "minLength": 1}}},
                       {"properties": {"hf": {"type": "object", "required": ["repo"]}}}]
    return schema
