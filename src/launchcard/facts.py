"""The fact vocabulary: every fact name a card may carry, with its unit, value type and comparison rule.

Adapters create facts only under these names (:func:`check` at creation; an
unknown name is a programming error the tests catch), and merge decides what
is a conflict by the name's rule, never by ad-hoc string comparison:

* ``exact``: equal after ``str`` (architecture, format, revision);
* ``numeric``: equal when they round alike to ``digits`` decimals — parameter counts to whole billions
  (a Hub count of 116.83 B and a page's "117B" agree; 321 B and 320 B do not);
* ``set``: equal as sets (lists whose order carries no meaning);
* ``registry``: a name in one engine's parser registry; names are compared through
  :data:`PARSER_EQUIVALENTS` (equivalents across engines, each with evidence), else as written;
* ``none``: never compared across sources (derived figures, per-deployment settings).

Labels are presentation only (``launchcard facts``, rendered pages).  No pydantic here: merge and the CLI read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

Compare = Literal["exact", "numeric", "set", "registry", "none"]
ValueType = Literal["int", "float", "str", "list", "object"]


@dataclass(frozen=True)
class FactSpec:
    name: str
    label: str  # for people; never a key
    type: ValueType
    compare: Compare
    unit: str | None = None
    digits: int | None = None  # ``numeric``: values that round alike to this many decimals are equal


def _specs(*specs: FactSpec) -> dict[str, FactSpec]:
    return {s.name: s for s in specs}


VOCABULARY: Mapping[str, FactSpec] = _specs(
    # declared by sources
    FactSpec("params_total_b", "Total parameters", "float", "numeric", "B", digits=0),
    FactSpec("params_active_b", "Active parameters", "float", "numeric", "B", digits=0),
    FactSpec("context_tokens", "Context length", "int", "numeric", "tokens"),
    FactSpec("architecture", "Architecture class (config.json)", "str", "exact"),
    FactSpec("architecture_family", "Architecture family (recipe)", "str", "none"),
    FactSpec("routed_experts", "Routed experts", "int", "numeric"),
    FactSpec("checkpoint_format", "Checkpoint format", "str", "none"),
    FactSpec("min_engine_version", "Minimum engine version", "str", "none"),
    FactSpec("planning_minimum_gb", "Planning minimum (recipe declaration)", "float", "none", "GB"),
    FactSpec("weights_revision", "Weights revision", "str", "none"),  # compared per repo by merge
    FactSpec("reasoning_parser", "Reasoning parser", "str", "registry"),
    FactSpec("tool_call_parser", "Tool-call parser", "str", "registry"),
    FactSpec("num_speculative_tokens", "Speculative tokens", "int", "numeric"),
    FactSpec("concurrency", "Requests served at once (provider preset)", "int", "none"),
    FactSpec("health_endpoints", "Health endpoints (provider preset)", "object", "none"),
    FactSpec("tasks", "Tasks the model serves (recipe meta.tasks: text, multimodal, ...)", "list", "none"),
    FactSpec("description", "Model description", "str", "none"),
    FactSpec("title", "Display title (recipe meta.title)", "str", "none"),
    FactSpec("recipe_updated_on", "Date the recipe was last updated (recipe meta.date_updated)", "str", "none"),
    # derived by launchcard
    FactSpec("min_vram_per_gpu_gib", "Minimum VRAM per GPU", "float", "none", "GiB"),
    FactSpec("min_total_vram_gib", "Minimum total VRAM", "float", "none", "GiB"),
    FactSpec("memory_plan", "Memory plan", "object", "none"),
    FactSpec("min_gpus", "Minimum GPUs", "int", "none"),
)

# Parser names that denote one output format in different engines' registries, with where each is registered.
# Key: (fact name, engine, parser name) -> format.  Names not listed are compared as written.
PARSER_EQUIVALENTS: Mapping[tuple[str, str, str], str] = {
    # gpt-oss speaks the Harmony format; each engine registers its parser under its own name:
    # vLLM vllm/entrypoints/openai/tool_parsers/openai_tool_parser.py (register_module("openai")),
    # SGLang python/sglang/srt/function_call/function_call_parser.py ("gpt-oss": GptOssDetector),
    # Dynamo lib/parsers/src/tool_calling (parser "harmony"); the corpus' dynamo/gpt-oss-120b/README.md:33
    # names it the "harmony tool-call parser".
    ("tool_call_parser", "vllm", "openai"): "harmony",
    ("tool_call_parser", "sglang", "gpt-oss"): "harmony",
    ("tool_call_parser", "dynamo", "harmony"): "harmony",
    # vLLM registers "openai_gptoss" (reasoning/gptoss_reasoning_parser.py), SGLang "gpt-oss"
    # (srt/parser/reasoning_parser.py), Dynamo "gpt_oss" (lib/parsers/src/reasoning; README.md:32 of the corpus).
    ("reasoning_parser", "vllm", "openai_gptoss"): "harmony",
    ("reasoning_parser", "sglang", "gpt-oss"): "harmony",
    ("reasoning_parser", "dynamo", "gpt_oss"): "harmony",
}


class UnknownFactName(LookupError):
    """A programming error: code created a fact under a name the vocabulary does not define."""


def spec(name: str) -> FactSpec:
    try:
        return VOCABULARY[name]
    except KeyError:
        raise UnknownFactName(f"fact name {name!r} is not in launchcard.facts.VOCABULARY; add it there") from None


def check(name: str, unit: str | None = None) -> FactSpec:
    """The spec of ``name``; a unit other than the vocabulary's is a programming error too."""
    s = spec(name)
    if unit is not None and unit != s.unit:
        raise UnknownFactName(f"fact {name!r} is in {s.unit!r}, not {unit!r}")
    return s


def comparable(name: str, value: object, engine: str | None = None) -> object:
    """The value merge compares for ``name``; raises ValueError/TypeError when the value cannot be compared."""
    s = spec(name)
    if s.compare == "numeric":
        if not isinstance(value, (int, float, str)):  # declared values are numbers or numeric strings
            raise TypeError(f"{name}: {value!r} is not a number")
        number = float(value)
        return number if s.digits is None else round(number, s.digits)
    if s.compare == "set":
        if not isinstance(value, Iterable):  # list-typed facts only
            raise TypeError(f"{name}: {value!r} is not a list")
        return frozenset(str(v) for v in value)
    if s.compare == "registry":
        text = str(value)
        return PARSER_EQUIVALENTS.get((name, engine or "", text), text)
    return str(value)


def compared(name: str) -> bool:
    return spec(name).compare != "none"


def label(name: str) -> str:
    """The presentation label of a fact name (the name itself when it is not in the vocabulary)."""
    s = VOCABULARY.get(name)
    return s.label if s else name
