"""What one capture writes, computed from its card without the database (so a streaming ingest can compute it in
worker processes): the stored JSON, the documents and content fingerprints the catalog compares with the model's
newest capture, the commit its documents were read at, and its fact, source and index rows."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from launchcard.card import LaunchCard
from launchcard.store import _index


@dataclass(frozen=True)
class CommitRef:
    """The commit a capture's documents were read at."""

    id: str
    committed_at: str  # ISO 8601


@dataclass(frozen=True, slots=True)
class Prepared:
    """Everything a capture writes, computed from one card without the database (so a streaming ingest can
    compute it in worker processes): the stored JSON, both fingerprints, the commit, and the rows."""

    model: str
    text: str
    fps: tuple[str, str]  # (documents, content) fingerprints
    commit: CommitRef | None
    captured_at: str
    captured_by: str | None
    sources: tuple[tuple[str, str | None, str | None, str | None, str | None], ...]
    facts: tuple[tuple[str, str | None, str, str | None, str | None, int | None], ...]
    index: _index.IndexRow


def prepare(card: LaunchCard) -> Prepared:
    text = card.model_dump_json(by_alias=True)
    return Prepared(
        model=card.model, text=text, fps=(docs_fingerprint(card), content_fingerprint(text)),
        commit=_commit_of(card), captured_at=card.captured_at.isoformat() if card.captured_at else "",
        captured_by=card.captured_by,
        sources=tuple((str(r.kind), r.path, r.url, r.revision, r.sha256) for r in card.evidence),
        facts=tuple((f.name, f.scope, json.dumps(f.value, sort_keys=True, default=str),
                     f.evidence.kind if f.evidence else None, f.evidence.url if f.evidence else None,
                     f.evidence.line if f.evidence else None) for f in card.facts),
        index=_index.index_row(0, card))


def docs_fingerprint(card: LaunchCard) -> str:
    """sha256 over the sorted (kind, path, sha256) of the card's source documents (revisions left out:
    a commit that does not touch a document does not change it)."""
    rows = sorted({f"{r.kind}\0{r.path or r.url or ''}\0{r.sha256 or ''}" for r in card.evidence})
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


# where a card says *when* or *at which commit* it was read, not *what* it says; and the plan verdicts, which
# are launchcard's judgement of the commands (they name local paths such as where a config.json was looked for)
_VOLATILE = frozenset({"captured_at", "fetched_at", "committed_at", "revision", "url", "value_url", "verdict"})


class _Stripped(dict[str, Any]):
    """A JSON object without its volatile and empty keys, remembering whether it was empty as written."""

    __slots__ = ("was_empty",)
    was_empty: bool


def _strip_object(pairs: list[tuple[str, Any]]) -> _Stripped:
    """The JSON decoder's object hook: every object is stripped as it is parsed (children first, in C-driven
    order, with no second walk).  A key is dropped when it is volatile or its value was *written* empty (null,
    [], {}): a child object emptied by stripping is kept as {}, so the fingerprint is the one earlier versions
    stored (a field a later version adds, still unset, changes nothing)."""
    out = _Stripped()
    for k, v in pairs:
        if k in _VOLATILE or v is None:
            continue
        kind = type(v)
        if (kind is list and not v) or (kind is _Stripped and v.was_empty):
            continue
        out[k] = v
    out.was_empty = not pairs
    return out


def content_fingerprint(card_json: str) -> str:
    """sha256 of what a stored card says, leaving out capture/fetch/commit times, revisions, URLs and plan
    verdicts: a commit
    that changes a file a card rests on without being cited (a strategy, the taxonomy) changes it; a commit
    that changes nothing it says does not."""
    stripped = json.loads(card_json, object_pairs_hook=_strip_object)
    return hashlib.sha256(json.dumps(stripped, sort_keys=True).encode()).hexdigest()


def _commit_of(card: LaunchCard) -> CommitRef | None:
    """The newest commit among the card's documents (the one that last changed what the card rests on)."""
    best: CommitRef | None = None
    for r in card.evidence:
        at = getattr(r, "committed_at", None)
        if r.revision and at is not None:
            iso = at.isoformat()
            if best is None or iso > best.committed_at:
                best = CommitRef(r.revision, iso)
    return best
