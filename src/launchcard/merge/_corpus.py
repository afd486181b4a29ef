"""Read a whole corpus folder (every source) and build one card per model.

Each document is read and parsed once.  A document that breaks its format is
skipped and reported (one clear line naming it); everything else is kept.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from launchcard.card import Evidence, Gap, LaunchCard
from launchcard.errors import InputError, LaunchcardError, UnknownModelError, canonical_name
from launchcard.merge._cache import BuildCache, key_of
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


def _given_configs(given: Mapping[str, str], model: str) -> dict[str, ModelConfig]:
    """The user's config.json for ``model`` (``--config``), parsed once; it comes before the corpus's copy."""
    path = given.get(model)
    if path is None:
        return {}
    from launchcard.check import load_config

    cfg = load_config(path)
    return {model: ModelConfig(repo=model, config=dict(cfg.raw), evidence=Evidence(kind="hf-config", path=cfg.path))}


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


def _check_web_url(url: str) -> None:
    """Each card's ``performance`` link starts with ``url``: an http(s) URL with a host, else bad input (``notaurl``
    and ``javascript:...`` were written into every card)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise InputError(f"not an http(s) base URL ({url!r})", where="", field="web_url",
                         fix="write e.g. --web-url https://catalog.example.org (LAUNCHCARD_WEB_URL alike)")


def build_corpus(root: Path, *, models: Sequence[str] | None = None, hardware: str | None = None,
                 hub: bool = False, hf_endpoint: str | None = None, progress: Progress | None = None,
                 captured_at: datetime | None = None, revision: str | None = None,
                 web_url: str | None = None, cache: bool = True,
                 configs: Mapping[str, str | Path] | None = None) -> CorpusResult:
    """Every registered source's extracts about each model, merged into one card per model.

    A document or model a source cannot read is skipped and named in ``problems``; an empty
    corpus (no source has anything) is an :class:`InputError`, never an empty success.  ``revision`` pins the
    vLLM recipes' evidence URLs; ``web_url`` is the web catalog's base URL for each card's ``performance``.

    With ``models``, only the documents that can be about them are parsed: a document's extract names models
    its text (or path) spells out, so one whose bytes mention none of the wanted names is skipped unread
    (documents that define models of their own are always read: they decide which names are models).
    ``cache``: reuse what an earlier build computed from unchanged inputs (:mod:`launchcard.merge._cache`;
    ``LAUNCHCARD_BUILD_CACHE=off`` turns it off everywhere).
    """
    root = Path(root)
    if not root.is_dir():
        raise InputError("corpus folder not found", where=str(root), fix=_LAYOUT, field="corpus")
    if web_url is not None:
        _check_web_url(web_url)
    given = {k: str(v) for k, v in (configs or {}).items()}  # the user's --config: judges the model's plans
    options = ReadOptions(hardware=hardware, hub=hub, hf_endpoint=hf_endpoint, revision=revision,
                          configs=tuple(given.items()))
    captured_at = captured_at or datetime.now(UTC).replace(microsecond=0)
    store = BuildCache.open() if cache else None
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
    if wanted:
        names = [m.split("/")[-1].lower().encode() for m in wanted]
        docs = [(a, d) for a, d in docs if a.defines_models or _mentions(d, names)]
    total = len(docs) + len(wanted or model_ids) + 1
    step = 0
    extracts: list[Extract] = []
    keys: dict[int, str] = {}  # id(extract) -> its cache key
    defining: set[str] = set()
    for adapter, doc in docs:
        step += 1
        if progress:
            progress(doc.path, step, total)
        key = key_of("extract", adapter.kind, doc.path, doc.url, doc.revision, doc.committed_at, doc.fetched_at,
                     doc.sha256)
        x = _cached(store, "extract", key, Extract)
        if x is None:
            try:
                x = adapter.extract(doc)
            except LaunchcardError as exc:
                result.problems.append(exc.one_line())
                continue
            if store is not None:
                store.put("extract", key, x.model_dump_json())
        keys[id(x)] = key
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
        given = {canonical_name(m, all_models) or m: path for m, path in given.items()}
    targets = [m for m in all_models if wanted is None or m in wanted]
    if wanted:
        missing = sorted(wanted - set(all_models))
        if missing:  # the names to suggest come from every document, not only those that passed the filter
            raise UnknownModelError(missing[0], _every_model(root, options), where=str(root))
    for model in targets:
        step += 1
        if progress:
            progress(model, step, total)
        card_key = _card_key(model, grouped.get(model, []), keys, per_model, options, web_url)
        if card_key is not None and model in given:  # the user's config.json judges the card: its bytes are input
            card_key = key_of(card_key, hashlib.sha256(Path(given[model]).read_bytes()).hexdigest())
        if store is not None and card_key is not None:
            hit = store.get("card", card_key)
            if hit is not None:
                count, _, text = hit.partition("\n")
                with contextlib.suppress(ValueError):
                    card = LaunchCard.model_validate_json(text)
                    result.cards[model] = card.model_copy(update={"captured_at": captured_at})
                    result.documents += int(count)
                    continue
        problems = len(result.problems)
        parts = list(grouped.get(model, []))
        gaps: list[Gap] = []
        own = 0  # per-model extracts (each counts as a document read)
        for adapter in per_model:
            try:
                got = adapter.model_extract(model)
            except LaunchcardError as exc:
                result.problems.append(exc.one_line())
                continue
            if got is not None:
                parts.append(got.extract)
                gaps += got.gaps
                own += 1
        result.documents += own
        if not parts:
            continue
        parts.sort(key=lambda x: source_rank(x.doc.kind))  # stable: documents of one source keep their order
        cfgs = {**_configs(parts), **_given_configs(given, model)}
        plan_envs = [e for a in per_model for e in a.plan_envs(model, parts, set(cfgs))]
        result.cards[model] = merge_card(model, parts, captured_at=captured_at, extra_gaps=gaps, configs=cfgs,
                                         plan_envs=plan_envs, web_url=web_url)
        if store is not None and card_key is not None and len(result.problems) == problems:
            store.put("card", card_key, f"{own}\n{result.cards[model].model_dump_json()}")
    return result


def _mentions(doc: SourceDoc, names: Sequence[bytes]) -> bool:
    """Whether a document's bytes or path spell out one of ``names`` (lower-cased model names)."""
    text = doc.raw.lower()
    path = doc.path.lower().encode()
    return any(n in text or n in path for n in names)


def _every_model(root: Path, options: ReadOptions) -> list[str]:
    """Every model of the corpus (the names an unknown-model error suggests from): a full read."""
    return sorted(build_corpus(root, hardware=options.hardware, revision=options.revision, cache=True).cards)


def _card_key(model: str, docs: Sequence[Extract], keys: dict[int, str], per_model: Sequence[Adapter],
              options: ReadOptions, web_url: str | None) -> str | None:
    """What one model's card is built from: its documents' extract keys, each per-model source's key, the options."""
    own = [a.model_key(model) for a in per_model]
    if any(k is None for k in own):
        return None
    return key_of("card", model, [keys[id(x)] for x in docs], own, options.hardware, options.hub, options.revision,
                  web_url)


def _cached(store: BuildCache | None, kind: str, key: str, typ: type[Extract]) -> Extract | None:
    if store is None:
        return None
    text = store.get(kind, key)
    if text is None:
        return None
    try:
        return typ.model_validate_json(text)
    except ValueError:
        return None  # a damaged entry is a miss; the next put replaces it
