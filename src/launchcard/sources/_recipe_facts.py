"""Attributed facts of one vLLM recipe: each value with the line that declares it.

Facts about the default variant's identity are anchored, like the published
recipe index pages, at the line opening ``variants:``; where the value has a
line of its own, ``exact_url`` points there too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from launchcard.card import Fact
from launchcard.sources._recipe_doc import RecipeDoc
from launchcard.sources.vllm_recipes import RecipeRepo


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _fact(doc: RecipeDoc, name: str, value: Any, anchor: tuple[Any, ...], unit: str | None = None) -> Fact:
    return Fact(name=name, value=value, classification="recipe_declaration", evidence=doc.evidence(*anchor), unit=unit)


def default_variant_key(data: dict[str, Any]) -> str | None:
    variants = _d(data.get("variants"))
    if "default" in variants:
        return "default"
    return next(iter(variants), None)


def min_version(data: dict[str, Any], variant_key: str | None) -> tuple[Any, tuple[Any, ...]]:
    variant = _d(_d(data.get("variants")).get(variant_key)) if variant_key is not None else {}
    if variant.get("min_vllm_version") is not None:
        return variant["min_vllm_version"], ("variants", variant_key, "min_vllm_version")
    return _d(data.get("model")).get("min_vllm_version"), ("model", "min_vllm_version")


def recipe_facts(repo: RecipeRepo, model: str) -> list[Fact]:
    """The declared facts of ``model``'s recipe, in reading order."""
    doc = repo.recipe(model)
    data = doc.data
    m = _d(data.get("model"))
    vkey = default_variant_key(data)
    variant = _d(_d(data.get("variants")).get(vkey)) if vkey is not None else {}
    vanchor: tuple[Any, ...] = ("variants",)
    vpath: tuple[Any, ...] = ("variants", vkey)
    facts = [
        _fact(doc, "Architecture", m.get("architecture"), ("model", "architecture")),
        _fact(doc, "Total parameters as counted by recipe", m.get("parameter_count"), ("model", "parameter_count")),
        _fact(doc, "Active parameters as counted by recipe", m.get("active_parameters"),
              ("model", "active_parameters")),
        _fact(doc, "Native context declaration (tokens)", m.get("context_length"), ("model", "context_length")),
        _fact(doc, "Model-wide minimum vLLM", m.get("min_vllm_version"), ("model", "min_vllm_version")),
    ]
    eff, eff_path = min_version(data, vkey)
    facts.append(_fact(doc, "Effective default-variant minimum vLLM", eff, eff_path))
    facts += [
        _fact(doc, "Default artifact", variant.get("model_id") or m.get("model_id"), vanchor),
        _fact(doc, "Default precision label", variant.get("precision"), vanchor),
        _fact(doc, "Default planning minimum (GB; recipe declaration)", variant.get("vram_minimum_gb"),
              vpath + ("vram_minimum_gb",), unit="GB"),
        _fact(doc, "Default variant hardware allowlist", variant.get("supported_hardware"), vanchor),
        _fact(doc, "Shared base arguments (incomplete launch)", list(m.get("base_args") or []), vanchor),
        _fact(doc, "Declared compatible strategies", list(data.get("compatible_strategies") or []), vanchor),
        _fact(doc, "Optional feature names", list(_d(data.get("features"))), vanchor),
        # The published index pages name the opt-in list this way; kept for comparability.
        _fact(doc, "Features selected by default", list(data.get("opt_in_features") or []), vanchor),
    ]
    # the version and image notes of the recipe's install tabs (the resolver leaves them out of the command)
    facts += [_fact(doc, f"Install note ({mode})", note, ("model", "install", mode, "note"))
              for mode, note, _ in doc.install_notes()]
    return [f for f in facts if f.evidence is not None]


def exact_line(repo: RecipeRepo, model: str, fact: Fact) -> int | None:
    """The line that holds the value itself, when it differs from the fact's anchor."""
    doc = repo.recipe(model)
    paths = {
        "Default artifact": ("variants", default_variant_key(doc.data), "model_id"),
        "Default precision label": ("variants", default_variant_key(doc.data), "precision"),
        "Declared compatible strategies": ("compatible_strategies",),
        "Optional feature names": ("features",),
        "Features selected by default": ("opt_in_features",),
        "Shared base arguments (incomplete launch)": ("model", "base_args"),
    }
    path = paths.get(fact.name)
    if path is None:
        return None
    line = doc.loaded.lines.get(tuple(path))
    if line is None or (fact.evidence and line == fact.evidence.line):
        return None
    return line


def exact_url(repo: RecipeRepo, model: str, fact: Fact) -> str | None:
    """URL of the line that holds the value itself, when it differs from the anchor."""
    line = exact_line(repo, model, fact)
    return None if line is None else repo.recipe(model).url(line)


def fact_rows(repo: RecipeRepo, model: str, link: Callable[[int | None], str] | None = None) -> list[dict[str, Any]]:
    """The declared facts of ``model``'s recipe as JSON rows, in reading order: name, value, classification,
    the anchor's URL, the document's sha256, and ``value_url`` where the value has a line of its own.

    ``link(line)`` makes the URLs (default: the document's own revision).
    """
    doc = repo.recipe(model)
    url = link or doc.url
    rows: list[dict[str, Any]] = []
    for fact in recipe_facts(repo, model):
        ev = fact.evidence
        row: dict[str, Any] = {
            "name": fact.name, "value": fact.value, "classification": fact.classification,
            "evidence_url": url(ev.line if ev else None), "source_document_sha256": doc.sha256}
        line = exact_line(repo, model, fact)
        if line is not None:
            row["value_url"] = url(line)
        rows.append(row)
    return rows


def recipe_parameters(repo: RecipeRepo, model: str) -> dict[str, Any]:
    doc = repo.recipe(model)
    data = doc.data
    m, meta = _d(data.get("model")), _d(data.get("meta"))
    eff, _ = min_version(data, default_variant_key(data))
    return {
        "minimum_runtime_version": m.get("min_vllm_version"),
        "nightly_required": bool(m.get("nightly_required")),
        "model_context_limit_tokens": m.get("context_length"),
        "compatible_strategies": list(data.get("compatible_strategies") or []),
        "hardware_claims": [{"profile": hw, "maintainer_status": status}
                            for hw, status in _d(meta.get("hardware")).items()],
        "recipe_updated_on": meta.get("date_updated"),
        "effective_default_minimum_runtime_version": eff,
    }


def deployment_options(repo: RecipeRepo, model: str) -> list[dict[str, Any]]:
    doc = repo.recipe(model)
    data = doc.data
    m = _d(data.get("model"))
    out = []
    for key, variant in _d(data.get("variants")).items():
        variant = _d(variant)
        tp = variant.get("tp")
        out.append({
            "variant": key,
            "model_id": variant.get("model_id") or m.get("model_id"),
            "precision": variant.get("precision"),
            "supported_hardware": variant.get("supported_hardware"),
            "model_revision": variant.get("revision") or variant.get("model_revision"),
            "declared_planning_minimum_gb": variant.get("vram_minimum_gb"),
            "minimum_runtime_version": min_version(data, key)[0],
            "extra_args": list(variant.get("extra_args") or []),
            "tensor_parallel_by_hardware": tp if isinstance(tp, dict) else None,
        })
    return out
