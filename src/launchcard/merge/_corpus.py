"""Read a whole corpus folder (every source) and build one card per model.

Each document is read and parsed once.  A document that breaks its format is
skipped and reported (one clear line naming it); everything else is kept.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from launchcard.card import Evidence, Gap, LaunchCard
from launchcard.errors import InputError, LaunchcardError, UnknownModelError, canonical_name
from launchcard.merge._hardware import ModelConfig
from launchcard.merge._merge import merge_card, source_rank
from launchcard.merge._registry import adapters
from launchcard.sources import Adapter, Extract, ReadOptions, SourceDoc

Progress = Callable[[str, int, int], None]
_LAYOUT = "pass the folder holding vllm-recipes/, sglang-cookbook/, providers/, dynamo/, hf/"


@dataclass
class CorpusResult:
    cards: dict[str, LaunchCard] = field(default_factory=dict)  # by the model's own id
    problems: list[str] = field(default_factory=list)  # documents skipped, one line each
    warnings: list[str] = field(default_factory=list)  # parts of documents skipped
    documents: int = 0

    def card(self, model: str) -> LaunchCard | None:
        """The card of ``model``, its id matched case-insensitively."""
        name = canonical_name(model, self.cards)
        return self.cards[name] if name is not None else None


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


def _configs(parts: Sequence[Extract]) -> dict[str, ModelConfig]:
    """The config.json documents among a model's extracts (the corpus's hf/ folder, a Hub capture), parsed once
    by their adapter, for the memory planner; a corpus copy comes before the Hub's (it is what the recipe cites)."""
    out: dict[str, ModelConfig] = {}
    for x in parts:
        if x.config is None or not x.models:
            continue
        d = x.doc
        out.setdefault(x.models[0], ModelConfig(repo=x.models[0], config=x.config, evidence=Evidence(
            kind=d.kind, url=d.url, path=d.path, revision=d.revision, sha256=d.sha256, fetched_at=d.fetched_at)))
    return out


def build_corpus(root: Path, *, models: Sequence[str] | None = None, hardware: str | None = None,
                 hub: bool = False, hf_endpoint: str | None = None, progress: Progress | None = None,
                 captured_at: datetime | None = None, revision: str | None = None,
                 web_url: str | None = None) -> CorpusResult:
    """Every registered source's extracts about each model, merged into one card per model.

    A document or model a source cannot read is skipped and named in ``problems``; an empty
    corpus (no source has anything) is an :class:`InputError`, never an empty success.  ``revision`` pins the
    vLLM recipes' evidence URLs; ``web_url`` is the web catalog's base URL for each card's ``performance``.
    """
    root = Path(root)
    if not root.is_dir():
        raise InputError("corpus folder not found", where=str(root), fix=_LAYOUT, field="corpus")
    options = ReadOptions(hardware=hardware, hub=hub, hf_endpoint=hf_endpoint, revision=revision)
    captured_at = captured_at or datetime.now(UTC).replace(microsecond=0)
    result = CorpusResult()
    docs: list[tuple[Adapter, SourceDoc]] = []
    per_model: list[Adapter] = []
    for adapter in adapters():
        folder = root / adapter.folder if adapter.folder else None
        try:
            if folder is not None and folder.is_dir():
                docs += [(adapter, d) for d in adapter.discover(folder)]
            if adapter.open(folder if folder is not None and folder.is_dir() else None, options):
                per_model.append(adapter)
        except InputError:  # the request is wrong (e.g. unknown hardware), not one document
            raise
        except LaunchcardError as exc:
            result.problems.append(exc.one_line())
    model_ids = sorted({m for a in per_model for m in a.models()})
    if not docs and not model_ids and not result.problems:
        raise InputError("no source documents in the corpus folder", where=str(root), fix=_LAYOUT, field="corpus")
    wanted = set(models) if models else None
    total = len(docs) + len(wanted or model_ids) + 1
    step = 0
    extracts: list[Extract] = []
    defining: set[str] = set()
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
        if adapter.defines_models:
            defining.update(x.models)

    known = set(model_ids) | defining
    grouped: dict[str, list[Extract]] = defaultdict(list)
    for x in extracts:
        subject = subject_for(x, known)
        if subject:
            grouped[subject].append(x)
    all_models = sorted(set(model_ids) | set(grouped))
    if wanted:  # model ids match case-insensitively (google/gemma-4-E4B-it is the recipe Google/gemma-4-E4B-it)
        wanted = {canonical_name(m, all_models) or m for m in wanted}
    targets = [m for m in all_models if wanted is None or m in wanted]
    if wanted:
        missing = sorted(wanted - set(all_models))
        if missing:
            raise UnknownModelError(missing[0], all_models, where=str(root))
    for model in targets:
        step += 1
        if progress:
            progress(model, step, total)
        parts = list(grouped.get(model, []))
        gaps: list[Gap] = []
        for adapter in per_model:
            try:
                got = adapter.model_extract(model)
            except LaunchcardError as exc:
                result.problems.append(exc.one_line())
                continue
            if got is not None:
                parts.append(got.extract)
                gaps += got.gaps
                result.documents += 1
        if not parts:
            continue
        parts.sort(key=lambda x: source_rank(x.doc.kind))  # stable: documents of one source keep their order
        configs = _configs(parts)
        plan_envs = [e for a in per_model for e in a.plan_envs(model, parts, set(configs))]
        result.cards[model] = merge_card(model, parts, captured_at=captured_at, extra_gaps=gaps, configs=configs,
                                         plan_envs=plan_envs, web_url=web_url)
    return result
