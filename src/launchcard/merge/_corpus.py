"""Read a whole corpus folder (every source) and build one card per model.

Each document is read and parsed once.  A document that breaks its format is
skipped and reported (one clear line naming it); everything else is kept.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from launchcard.card import EngineEnv, Evidence, Gap, LaunchCard
from launchcard.errors import InputError, LaunchcardError
from launchcard.merge._hardware import ModelConfig
from launchcard.merge._merge import merge_card
from launchcard.sources._base import Adapter, Extract

Progress = Callable[[str, int, int], None]


@dataclass
class CorpusResult:
    cards: dict[str, LaunchCard] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # documents skipped, one line each
    warnings: list[str] = field(default_factory=list)  # parts of documents skipped
    documents: int = 0


def adapters() -> list[Adapter]:
    from launchcard.sources.dynamo import DynamoRecipe
    from launchcard.sources.hf_hub import HfConfigFile
    from launchcard.sources.sglang_cookbook import SGLangCookbook
    from launchcard.sources.truss import TrussPreset

    return [SGLangCookbook(), TrussPreset(), DynamoRecipe(), HfConfigFile()]


def subject_for(x: Extract, known: set[str]) -> str | None:
    """Which model's card a document belongs to: a known repo id, its folder, or a conversion's base."""
    by_name = {k.split("/")[-1].lower(): k for k in known}
    for m in x.models:
        if m in known:
            return m
    for part in reversed(Path(x.doc.path or "").parts[:-1]):
        if part.lower() in by_name:
            return by_name[part.lower()]
    for m in x.models:
        name = m.split("/")[-1].lower()
        hits = sorted((n for n in by_name if name.startswith(n)), key=len, reverse=True)
        if hits:
            return by_name[hits[0]]
    return x.models[0] if x.models else None


def _configs(root: Path, parts: Sequence[Extract], result: CorpusResult) -> dict[str, ModelConfig]:
    """The config.json documents among a model's extracts, parsed for the memory planner.

    The bytes are read again and checked against the sha256 the adapter
    recorded, so the plan rests on exactly the document the card cites.
    """
    out: dict[str, ModelConfig] = {}
    for x in parts:
        if x.doc.kind != "hf-config" or not x.doc.path or not x.models:
            continue
        file = root / x.doc.path
        try:
            raw = file.read_bytes()
            if hashlib.sha256(raw).hexdigest() != x.doc.sha256:
                raise ValueError("changed since it was read")
            config = json.loads(raw)
        except (OSError, ValueError) as exc:
            result.warnings.append(f"{file}: config.json not used for memory planning ({exc})")
            continue
        if isinstance(config, dict):
            d = x.doc
            out[x.models[0]] = ModelConfig(repo=x.models[0], config=config, evidence=Evidence(
                kind=d.kind, url=d.url, path=d.path, revision=d.revision, sha256=d.sha256, fetched_at=d.fetched_at))
    return out


def _plan_envs(repo, model: str, parts: Sequence[Extract], configs: dict[str, ModelConfig],
               hardware: str | None) -> list[EngineEnv]:
    """A recipe command to plan when the default one loads a checkpoint without a config here."""
    recipe = next((x for x in parts if x.doc.kind == "vllm-recipes"), None)
    if recipe is None or not configs:
        return []
    envs = [e for e in recipe.envs if e.engine == "vllm" and e.role in ("single", "head")]
    if not envs or any((e.checkpoint or model) in configs for e in envs):
        return []
    from launchcard.merge._vllm import variant_env

    try:
        env = variant_env(repo, model, set(configs), hardware or envs[0].hardware)
    except LaunchcardError:
        return []
    return [env] if env else []


def build_corpus(root: Path, *, models: Sequence[str] | None = None, hardware: str | None = None,
                 hub: bool = False, hf_endpoint: str | None = None, progress: Progress | None = None,
                 captured_at: datetime | None = None) -> CorpusResult:
    root = Path(root)
    if not root.is_dir():
        raise InputError("corpus folder not found", where=f"--corpus {root}",
                         fix="pass the folder holding vllm-recipes/, sglang-cookbook/, providers/, dynamo/, hf/")
    captured_at = captured_at or datetime.now(timezone.utc).replace(microsecond=0)
    result = CorpusResult()
    extracts: list[Extract] = []
    docs = []
    for adapter in adapters():
        folder = root / adapter.folder
        if folder.is_dir():
            try:
                docs += [(adapter, d) for d in adapter.discover(folder)]
            except LaunchcardError as exc:
                result.problems.append(exc.one_line())
    repo = None
    recipe_ids: list[str] = []
    if (root / "vllm-recipes" / "models").is_dir():
        from launchcard.sources.vllm_recipes import load_recipes

        repo = load_recipes(root / "vllm-recipes")
        recipe_ids = repo.model_ids()
    wanted = set(models) if models else None
    total = len(docs) + len(wanted or recipe_ids) + 1
    step = 0
    for adapter, doc in docs:
        step += 1
        if progress:
            progress(doc.path, step, total)
        try:
            x = adapter.extract(doc)
        except LaunchcardError as exc:
            result.problems.append(exc.one_line())
            continue
        result.documents += 1
        result.warnings += list(x.warnings)
        extracts.append(x)

    known = set(recipe_ids) | {m for x in extracts if x.doc.kind == "hf-config" for m in x.models}
    grouped: dict[str, list[Extract]] = defaultdict(list)
    for x in extracts:
        subject = subject_for(x, known)
        if subject:
            grouped[subject].append(x)
    all_models = sorted(set(recipe_ids) | set(grouped))
    targets = [m for m in all_models if wanted is None or m in wanted]
    if wanted:
        missing = sorted(wanted - set(all_models))
        if missing:
            raise InputError(f"no source in the corpus mentions {missing[0]!r}", where=f"--corpus {root}",
                             fix="check the model id (org/name as on the Hub)")
    for model in targets:
        step += 1
        if progress:
            progress(model, step, total)
        parts = list(grouped.get(model, []))
        gaps: list[Gap] = []
        if repo is not None and model in recipe_ids:
            from launchcard.merge._vllm import recipe_extract

            try:
                x, gaps = recipe_extract(repo, model, hardware=hardware)
                parts.insert(0, x)
                result.documents += 1
            except LaunchcardError as exc:
                result.problems.append(exc.one_line())
        if hub:
            from launchcard.sources.hf_hub import fetch_hub

            try:
                parts.append(fetch_hub(model, endpoint=hf_endpoint))
            except LaunchcardError as exc:
                result.problems.append(exc.one_line())
        if not parts:
            continue
        configs = _configs(root, parts, result)
        plan_envs = _plan_envs(repo, model, parts, configs, hardware) if repo is not None and model in recipe_ids \
            else []
        result.cards[model] = merge_card(model, parts, captured_at=captured_at, extra_gaps=gaps, configs=configs,
                                         plan_envs=plan_envs)
    return result
