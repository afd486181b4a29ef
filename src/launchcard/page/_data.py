"""The data of a recipe index page: every section, each value traced to a recipe line.

This dict is the page's JSON twin (``launchcard page --format json``); the
Markdown and HTML renderings are views of it and add nothing.  Generated prose
(the editorial answer and the FAQ) is templated from the recipe's declared
values only, dated, labelled as generated, and cites the line each answer rests
on.  Unknown is ``None``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from launchcard.card import LaunchCard
from launchcard.facts import VOCABULARY, comparable, label
from launchcard.sources import (
    declared_license,
    default_variant_key,
    deployment_options,
    provenance_lookup,
    recipe_parameters,
)
from launchcard.sources.vllm_recipes import REPO_URL, RecipeDoc, RecipeRepo

# Any in this module: recipe YAML values in, the page's JSON document out.

PAGE_SCHEMA = "launchcard.recipe-page/v1"
GENERATED_BY = "launchcard (generated)"
GENERATED_LABEL = ("Generated from the recipe's declared values by a template; no model was run, "
                   "and nothing here goes beyond what the recipe states.")

# The conditions a measurement would need; a recipe declares none of them.
CONDITION_FIELDS = ("model_revision", "weight_hash", "runtime_execution_revision", "input_tokens", "output_tokens",
                    "concurrency", "cache_state", "quantization", "speculative_decoding", "temperature", "top_p")
REPORTED_SETUP_FIELDS = ("system", "node_count", "parallelism", "kv_dtype", "context_limit_tokens",
                         "experiment_date")


@dataclass(frozen=True, slots=True)
class PageSource:
    """Which revision of the recipe the page pins, and how that revision was learnt."""

    revision: str | None
    how: str  # "--revision" | "git checkout" | "corpus manifest" | "unknown"
    commit_time: str | None


def _d(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def pin(repo: RecipeRepo, doc: RecipeDoc, revision: str | None) -> PageSource:
    """The recipe's revision: given, else the checkout's HEAD, else the corpus manifest."""
    if revision:
        return PageSource(revision, "--revision", _commit_time(repo.root, revision))
    if repo.revision:
        return PageSource(repo.revision, "git checkout", _commit_time(repo.root, repo.revision))
    _, manifest_rev = provenance_lookup(repo.root, doc.path)
    if manifest_rev:
        return PageSource(manifest_rev, "corpus manifest", None)
    return PageSource(None, "unknown", None)


def _commit_time(root: Path, revision: str) -> str | None:
    """Commit time of ``revision`` when ``root`` is a git checkout that has it (UTC, ISO 8601)."""
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "show", "-s", "--format=%ct", revision],
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not out.stdout.strip().isdigit():
        return None
    when = datetime.fromtimestamp(int(out.stdout.strip()), tz=UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _url(doc: RecipeDoc, revision: str | None, line: int | None = None) -> str:
    anchor = f"#L{line}" if line else ""
    return f"{REPO_URL}/blob/{revision or 'HEAD'}/{doc.path}{anchor}"


def _line(doc: RecipeDoc, *path: object) -> int | None:
    return doc.line(*path) if path else None


def _family(meta: Mapping[str, Any], title: str) -> str | None:
    provider = meta.get("provider")
    if isinstance(provider, str) and provider.strip():
        return provider.split("(")[0].strip()
    return title.split("-")[0] or None


def _hardware_topics(repo: RecipeRepo, claims: Sequence[str]) -> list[str]:
    """Vendors of the hardware the recipe names: the taxonomy's brand, else the id's leading word."""
    out: set[str] = set()
    for hw in claims:
        prof = repo.profiles.get(hw)
        brand = prof.brand if prof is not None else None
        out.add(str(brand).lower() if brand else hw.split("_")[0].lower())
    return sorted(out)


def _precisions(options: Sequence[Mapping[str, Any]]) -> str:
    names = [str(o["precision"]).upper() for o in options if o.get("precision")]
    names = list(dict.fromkeys(names))
    if not names:
        return "its declared variants"
    if len(names) == 1:
        return f"{names[0]}"
    return ", ".join(names[:-1]) + f" and {names[-1]}"


def page_data(repo: RecipeRepo, model: str, *, revision: str | None = None, checked: date | None = None,
              generated_on: date | None = None, card: LaunchCard | None = None,
              history: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """Every section of the recipe index page for ``model``, as plain JSON-ready data.

    With ``card`` (the model's multi-source card) the page also shows every
    source side by side with the card's conflicts and gaps; ``history`` lists
    the catalog's captures of the model.
    """
    doc = repo.recipe(model)
    data = _d(doc.data)
    if card is not None and revision:
        card = _pinned_card(card, revision)
    meta, m = _d(data.get("meta")), _d(data.get("model"))
    src = pin(repo, doc, revision)
    rev = src.revision
    title = str(meta.get("title") or model.split("/")[-1])
    params = recipe_parameters(repo, model)
    options = deployment_options(repo, model)
    vkey = default_variant_key(data)
    variant = _d(_d(data.get("variants")).get(vkey)) if vkey is not None else {}
    default_artifact = variant.get("model_id") or m.get("model_id") or model
    precision = variant.get("precision")
    today = checked or datetime.now(UTC).date()
    written = generated_on or today
    claims = [c["profile"] for c in params["hardware_claims"]]
    notes: list[str] = []
    if src.revision is None:
        notes.append("No revision of the recipe is knowable (no --revision, no git checkout, no manifest row): "
                     "links point at blob/HEAD, which moves.")

    from launchcard.resolve import recipe_fact_rows

    # the same rows as `launchcard facts`: the opt-in list under its own name, then what resolve selects
    facts = recipe_fact_rows(repo, model, lambda line: _url(doc, rev, line))

    rows = {r["name"]: r["value"] for r in facts}
    sections = _faq(doc, rev, title=title, model=model, default_artifact=str(default_artifact),
                    precision=precision, params=params, options=options, data=data, vkey=vkey,
                    selected=rows.get("Features selected by default"),
                    opt_in=rows.get("Opt-in features (off unless asked for)") or [])
    if card is not None:
        sections = [_with_card_facts(qa, names, card) for qa, names in zip(sections, FAQ_FACTS, strict=True)]
    eff = params.get("effective_default_minimum_runtime_version")
    editorial = (
        f"The pinned {title} recipe defaults to {default_artifact}"
        + (f" ({precision})" if precision else "") + "."
        + (f" Its effective default-variant minimum is vLLM {eff}." if eff else
           " It declares no minimum vLLM version.")
        + " Select the exact variant, hardware override and topology before treating it as a launch plan."
        + " No deployment was run by launchcard."
    )
    license_id = declared_license(str(repo.root))
    return {
        "schema": PAGE_SCHEMA,
        "title": f"{title}: vLLM recipe",
        "summary": (f"Serving recipe for {title} with {_precisions(options)} choices"
                    + (" and model-specific engine settings." if data.get("hardware_overrides")
                       or m.get("base_args") or m.get("base_env") else ".")),
        "model": model,
        "header": {
            "type": "Deployment recipe",
            "evidence": "source_reported",
            "site_reproduced": False,
            "model_family": _family(meta, title),
            "model_id": model,
            "original_author": REPO_URL.rstrip("/").split("/")[-2],
            "original_project": REPO_URL,
            "pinned_document": _url(doc, rev),
            "source_revision": rev,
            "source_revision_from": src.how,
            "source_commit_time": src.commit_time,
            "source_document_sha256": doc.sha256,
            "checked": today.isoformat(),
            "experiment_date": None,
            "runtime_topics": ["vLLM"],
            "hardware_topics": _hardware_topics(repo, claims),
            "reported_setup": dict.fromkeys(REPORTED_SETUP_FIELDS),
            "performance_figures": "attributed selections with per-point conditions; no cross-source ranking",
        },
        "conditions": dict.fromkeys(CONDITION_FIELDS),
        "test_profiles": [],
        "recipe_parameters": params,
        "deployment_options": options,
        "reading_notes": [
            *([f"Recipe minimum engine version: {m.get('min_vllm_version')}."] if m.get("min_vllm_version") else []),
            *(["The recipe requires a nightly vLLM build."] if m.get("nightly_required") else []),
            f"Default artifact: {default_artifact}.",
            "Variant and hardware settings are source declarations; select the matching original profile.",
        ],
        "limits": [
            "Source hardware verification labels belong to the maintainers, not this index.",
            ("Input length, output policy, concurrency and cache are workload-specific; no single benchmark "
             "is inferred from the recipe."),
        ],
        "license": {
            "declared_spdx": license_id,
            "scope": "Recipe repository only; each model and conversion has independent distribution terms.",
        },
        "editorial": {"text": editorial, "by": GENERATED_BY, "date": written.isoformat(), "label": GENERATED_LABEL},
        "faq": sections,
        "facts": facts,
        "sources": sources_side_by_side(card) if card is not None else [],
        "conflicts": [c.model_dump(mode="json") for c in card.conflicts] if card is not None else [],
        "gaps": [g.model_dump(mode="json") for g in card.gaps] if card is not None else [],
        "history": [dict(h) for h in history],
        "notes": notes,
    }


def _pinned_card(card: LaunchCard, revision: str) -> LaunchCard:
    """``card`` with its vLLM recipes evidence at ``revision`` (URLs and revision fields), as the page pins the
    recipe: a card captured at another revision (the catalog's) reads the same on every surface."""
    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            out = {k: walk(x) for k, x in v.items()}
            old = out.get("revision")
            if out.get("kind") == "vllm-recipes" and "revision" in out and old != revision:
                out["revision"] = revision
                if isinstance(out.get("url"), str):
                    out["url"] = out["url"].replace(f"/blob/{old or 'HEAD'}/", f"/blob/{revision}/")
            return out
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v
    return LaunchCard.model_validate(walk(card.model_dump(mode="json", by_alias=True)))


def _flag_rows(argv: Sequence[str], engine: str) -> list[dict[str, Any]]:
    from launchcard.explain import explain_argv

    if not argv or engine not in ("vllm", "sglang"):
        return []
    return [{"flag": n.flag, "value": n.value, "what": n.what, "cited": n.cited, "value_what": n.value_what,
             "value_cited": n.value_cited, "value_url": n.value_url}
            for n in explain_argv(argv, engine=engine)]


def sources_side_by_side(card: LaunchCard) -> list[dict[str, Any]]:
    """One column per source document: its pinned reference and the launch commands it gives."""
    columns: dict[tuple[str, str | None], dict[str, Any]] = {}
    for ref in card.evidence:
        columns.setdefault((ref.kind, ref.path), {
            "kind": ref.kind, "path": ref.path, "url": ref.url, "revision": ref.revision, "sha256": ref.sha256,
            "envs": []})
    for env in card.envs:
        col = columns.setdefault((env.source.kind, env.source.path), {
            "kind": env.source.kind, "path": env.source.path, "url": env.source.url,
            "revision": env.source.revision, "sha256": env.source.sha256, "envs": []})
        col["envs"].append({
            "engine": env.engine, "role": env.role, "hardware": env.hardware, "gpus": env.gpus, "image": env.image,
            "argv": list(env.argv), "env": dict(env.env),
            "evidence_url": env.evidence.url if env.evidence else None,
            "flag_verdicts": dict(env.flag_verdicts),
            # what each flag and its chosen value do, in the env's own engine's words (explain's one table)
            "flags": _flag_rows(env.argv, env.engine),
            # each argument's credit as the resolver gave it (the card carries it; never re-derived here)
            "credits": [{"flag": c.flag, "value": c.value, "credit": c.credit,
                         "evidence_url": c.evidence.url if c.evidence else None,
                         "flag_url": c.flag_evidence.url if c.flag_evidence else None,
                         "derived": c.derived} for c in env.credits],
        })
    order = ("vllm-recipes", "sglang-cookbook", "provider-preset", "dynamo", "hf-api", "hf-config")
    return sorted(columns.values(), key=lambda c: (order.index(c["kind"]) if c["kind"] in order else 99,
                                                   c["path"] or ""))


# The card's facts each FAQ answer carries, by fact name (every vocabulary name has a place; a test keeps it so).
FAQ_FACTS: tuple[tuple[str, ...], ...] = (
    ("checkpoint_format", "min_engine_version", "tasks", "architecture"),
    ("title", "params_total_b", "params_active_b", "architecture_family", "routed_experts", "description"),
    ("reasoning_parser", "tool_call_parser", "num_speculative_tokens", "context_tokens", "concurrency"),
    ("planning_minimum_gb", "min_vram_per_gpu_gib", "min_total_vram_gib", "min_gpus", "memory_plan"),
    ("weights_revision", "recipe_updated_on", "health_endpoints"),
)


def _fact_value(value: Any, unit: str | None) -> str:
    if isinstance(value, list | tuple):
        text = ", ".join(str(v) for v in value)
    elif isinstance(value, dict):
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    elif isinstance(value, float) and value.is_integer():
        text = str(int(value))
    else:
        text = str(value)
    return f"{text} {unit}" if unit and unit not in ("tokens",) else (f"{text} tokens" if unit else text)


def _with_card_facts(qa: dict[str, Any], names: Sequence[str], card: LaunchCard) -> dict[str, Any]:
    """``qa`` with every fact the card has under ``names``: value, source and scope, conflicts said, anchors cited."""
    sentences: list[str] = []
    urls: list[str] = list(qa["sources"])
    disputed = {c.field for c in card.conflicts}
    for name in names:
        facts = [f for f in card.facts if f.name == name]
        if not facts:
            continue
        groups: dict[str, list[str]] = {}
        shown: dict[str, str] = {}
        for f in facts:
            try:
                key = str(comparable(name, f.value, f.engine)) if VOCABULARY[name].compare != "none" else repr(f.value)
            except (TypeError, ValueError):
                key = repr(f.value)
            shown.setdefault(key, _fact_value(f.value, f.unit))
            where: str = "derived" if f.classification == "derived" else (
                f.evidence.kind if f.evidence is not None else "launchcard")
            groups.setdefault(key, []).append(f"{where}: {f.scope}" if f.scope else where)
            if f.evidence is not None and f.evidence.url and f.evidence.url not in urls:
                urls.append(f.evidence.url)
        parts = [f"{shown[k]} ({', '.join(dict.fromkeys(w))})" for k, w in groups.items()]
        if name in disputed and len(groups) > 1:
            text = (f"{label(name)}: " + " vs ".join(parts)
                    + "; the sources disagree, and the card keeps each value with its source.")
        else:  # one value, or values for different checkpoints / deployments (scoped, not a disagreement)
            text = f"{label(name)}: " + "; ".join(parts) + "."
        sentences.append(text)
    if not sentences:
        return qa
    return {**qa, "answer": qa["answer"] + " From the sources: " + " ".join(sentences), "sources": urls}


def _faq(doc: RecipeDoc, rev: str | None, *, title: str, model: str, default_artifact: str, precision: Any,
         params: Mapping[str, Any], options: Sequence[Mapping[str, Any]], data: Mapping[str, Any],
         vkey: str | None, selected: Sequence[str] | None = None, opt_in: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Five generated answers, each citing the recipe line it rests on.  ``selected`` / ``opt_in``: the
    page's own feature rows (what resolve selects by default, the recipe's opt-in list)."""
    def cite(*path: object) -> list[str]:
        line = _line(doc, *path)
        return [_url(doc, rev, line)] if line else [_url(doc, rev)]

    m = _d(data.get("model"))
    artifacts = [f"{o['model_id']} ({o['precision']})" if o.get("precision") else str(o["model_id"])
                 for o in options if o.get("model_id")]
    hw_keys = list(_d(data.get("hardware_overrides")))
    # each hardware note in full (title and body), said once however many profiles share it (YAML anchors)
    notes: dict[str, list[str]] = {}
    for hw, n in _d(data.get("hardware_notes")).items():
        text = ": ".join(str(_d(n).get(k)).strip().rstrip(".") for k in ("title", "body") if _d(n).get(k))
        if text:
            notes.setdefault(text, []).append(str(hw))
    features = list(_d(data.get("features")))
    variant_notes = [f"{k}: {str(_d(v).get('description')).rstrip('.')}" for k, v in _d(data.get("variants")).items()
                     if _d(v).get("description") and k != vkey]
    # where the recipe sets workload limits (batched tokens, sequences, context) per hardware
    limits = []
    for hw, block in _d(data.get("hardware_overrides")).items():
        args = [str(a) for a in (_d(block).get("extra_args") or [])]
        got = [f"{a} {args[i + 1]}" for i, a in enumerate(args[:-1])
               if a in ("--max-num-batched-tokens", "--max-num-seqs", "--max-model-len")]
        if got:
            limits.append((str(hw), got))
    out = [{
        "question": "Which artifact and engine does this recipe select?",
        "answer": (f"The recipe identifies {m.get('model_id') or model} as its model entry and selects "
                   f"{default_artifact} by default (variant {vkey!s})."
                   + (f" The default precision label is {precision}." if precision else "")
                   + " The document revision fixes what the recipe said; the weight revision and the executed "
                   "runtime revision remain separate fields."
                   + "".join(f" The recipe's {mode} install note: {note.rstrip('.')}."
                             for mode, note, _ in doc.install_notes())),
        "sources": [*cite("variants"), *(u for mode, _, _ in doc.install_notes()
                                         for u in cite("model", "install", mode, "note"))],
    }]
    special = []
    if m.get("parameter_count"):
        special.append(f"The recipe counts {m['parameter_count']} total"
                       + (f" and {m['active_parameters']} active" if m.get("active_parameters") else "")
                       + " parameters.")
    if len(artifacts) > 1:
        special.append("Its variants are separate artifacts: " + "; ".join(artifacts) + ".")
    if variant_notes:
        special.append("The other variants: " + "; ".join(variant_notes) + ".")
    if hw_keys:
        special.append("It sets hardware-specific engine settings for " + ", ".join(hw_keys) + ".")
    for text, hws in notes.items():
        special.append(f"Hardware note for {', '.join(hws)}: {text}.")
    special_sources = cite("model")
    for path in [("hardware_overrides",)] * bool(hw_keys) + [("hardware_notes", hws[0]) for hws in notes.values()]:
        special_sources += [u for u in cite(*path) if u not in special_sources]
    out.append({
        "question": "What needs special attention for this model?",
        "answer": " ".join(special) or "The recipe declares no model-specific settings beyond its variants.",
        "sources": special_sources,
    })
    strategies = params.get("compatible_strategies") or []
    out.append({
        "question": "How should the settings be applied?",
        "answer": ("Choose one variant and one hardware profile, then resolve the shared, variant, hardware, "
                   "strategy and optional-feature settings together (launchcard resolve); the base arguments "
                   "alone are not a complete launch."
                   + (f" Compatible strategies: {', '.join(map(str, strategies))}." if strategies else "")
                   + (" A nightly vLLM build is required." if m.get("nightly_required") else "")
                   + (f" Features: {', '.join(features)}" + (
                       f"; resolve selects {', '.join(selected) or 'none'} by default" if selected is not None else "")
                      + (f"; opt-in (off unless asked for): {', '.join(opt_in)}" if opt_in else "") + "."
                      if features else "")
                   + " Check the command's parsers and flags against the engine release before loading weights "
                   "(launchcard resolve --check reads them with that release's own argument parser)."
                   + (f" The context length ({m['context_length']} tokens) is a model limit;" if m.get("context_length")
                      else " A context length is a model limit;")
                   + " batched-token and sequence settings control a serving workload"
                   + (" (the recipe sets them per hardware: "
                      + "; ".join(f"{hw}: {', '.join(got)}" for hw, got in limits) + ")." if limits else ".")),
        "sources": [*(cite("compatible_strategies") if data.get("compatible_strategies") else cite("variants")),
                    *[u for hw, _ in limits for u in cite("hardware_overrides", hw)]],
    })
    gb = _d(_d(data.get("variants")).get(vkey)).get("vram_minimum_gb") if vkey is not None else None
    out.append({
        "question": "What does the memory number mean?",
        "answer": ((f"{gb} GB is the recipe's declared planning minimum for the default variant. " if gb is not None
                    else "The recipe declares no planning minimum for the default variant. ")
                   + "It is not a measurement, a peak allocation or a promise of maximum context: KV cache, "
                   "draft models, encoders, workspace and active requests need memory too. GB (10^9 bytes) "
                   "and GiB (2^30 bytes) are kept distinct; launchcard memory plans per GPU from the config."),
        "sources": cite("variants", vkey, "vram_minimum_gb") if gb is not None else cite("variants"),
    })
    out.append({
        "question": "What is needed to reproduce a deployment?",
        "answer": ("Record the model and conversion revisions, weight hashes, tokenizer and chat template, the "
                   "container or runtime digest, device count and topology, and the complete resolved launch. "
                   "Check one short request first; for a measurement fix input and output lengths, concurrency, "
                   "cache state, warm-up, sampling, reasoning effort, repetitions and failures."),
        "sources": cite("guide") if data.get("guide") else cite("variants"),
    })
    return out


def page_json(page: Mapping[str, Any]) -> str:
    return json.dumps(page, indent=2, ensure_ascii=False) + "\n"
