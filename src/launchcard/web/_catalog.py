"""The web catalog's read model: one row per model for the index, pages on demand.

Rows are built once, when the server starts, from the newest capture of each
model in the SQLite catalog (raw JSON, a few fields each) and, where a recipes
checkout is given, from the recipe's own metadata (tasks, hardware claims,
update date).  Filtering and facet counts then run over plain frozen rows in
memory: a few milliseconds for thousands of models, without a query per
request.  Model pages are built on first request and cached.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchcard.errors import LaunchcardError
from launchcard.web._cache import OnceCache

if TYPE_CHECKING:
    from launchcard.card import LaunchCard
    from launchcard.sources.vllm_recipes import RecipeRepo

# Any in this module: stored cards, pages and recipe metadata are JSON documents (values of every JSON type).

SIZE_BUCKETS: tuple[tuple[str, float], ...] = (
    ("<10B", 10), ("10-40B", 40), ("40-150B", 150), ("150-500B", 500), (">500B", float("inf")))
FACETS = ("task", "arch", "size", "precision", "hardware", "engine", "source")
SORTS = ("name", "size", "updated")


@dataclass(frozen=True, slots=True)
class ModelRow:
    """What the index shows and filters on, for one model."""

    model: str
    title: str
    capture_id: int
    captured_at: str | None
    updated: str | None  # the recipe's date_updated, else the capture time
    tasks: tuple[str, ...]
    arch: str | None
    params_b: float | None
    precisions: tuple[str, ...]
    hardware: Mapping[str, str]  # profile id -> verified | declared
    engines: tuple[str, ...]
    sources: tuple[str, ...]

    @property
    def size(self) -> str | None:
        if self.params_b is None:
            return None
        return next(name for name, top in SIZE_BUCKETS if self.params_b < top)

    def facet(self, name: str) -> tuple[str, ...]:
        value: tuple[str, ...] | str | None = {
            "task": self.tasks, "arch": self.arch, "size": self.size, "precision": self.precisions,
            "hardware": tuple(self.hardware), "engine": self.engines, "source": self.sources}[name]
        if value is None:
            return ()
        return (value,) if isinstance(value, str) else value

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "title": self.title, "capture_id": self.capture_id,
                "captured_at": self.captured_at, "updated": self.updated, "tasks": list(self.tasks),
                "architecture": self.arch, "params_b": self.params_b, "size": self.size,
                "precisions": list(self.precisions), "hardware": dict(self.hardware), "engines": list(self.engines),
                "sources": list(self.sources)}


@dataclass(frozen=True, slots=True)
class Query:
    """The index's filter state, exactly as it travels in the URL."""

    q: str = ""
    task: str | None = None
    arch: str | None = None
    size: str | None = None
    precision: str | None = None
    hardware: str | None = None
    hw_status: str | None = None  # verified | declared
    engine: str | None = None
    source: str | None = None
    sort: str = "name"
    page: int = 1
    per_page: int = 50

    def selected(self) -> dict[str, str]:
        return {k: v for k in FACETS if (v := getattr(self, k))}


def _first(facts: Sequence[Mapping[str, Any]], name: str) -> Any:
    return next((f.get("value") for f in facts if f.get("name") == name and f.get("value") is not None), None)


def row_from_card(capture_id: int, card: Mapping[str, Any], recipe_meta: Mapping[str, Any] | None) -> ModelRow:
    facts = card.get("facts") or []
    meta = recipe_meta or {}
    hf = card.get("hf") or {}
    hardware: dict[str, str] = {}
    for hw, status in (meta.get("hardware") or {}).items():
        hardware[str(hw)] = "verified" if status == "verified" else "declared"
    for env in card.get("envs") or []:
        for hw in env.get("validated_hardware") or []:
            hardware.setdefault(str(hw), "declared")
        if env.get("hardware"):
            hardware.setdefault(str(env["hardware"]), "declared")
    params = _first(facts, "params_total_b")
    if params is None:
        params = hf.get("params_b")
    precisions = sorted({str(c["format"]).lower() for c in card.get("checkpoints") or [] if c.get("format")})
    tasks = tuple(str(t) for t in meta.get("tasks") or ()) or tuple(str(m) for m in hf.get("modality") or ())
    updated = meta.get("date_updated")
    return ModelRow(
        model=str(card.get("model")), title=str(meta.get("title") or str(card.get("model")).split("/")[-1]),
        capture_id=capture_id, captured_at=card.get("captured_at"),
        updated=str(updated) if updated else (str(card.get("captured_at"))[:10] if card.get("captured_at") else None),
        tasks=tasks, arch=_first(facts, "architecture_family"),
        params_b=float(params) if isinstance(params, (int, float)) else None,
        precisions=tuple(precisions), hardware=hardware,
        engines=tuple(sorted({str(e.get("engine")) for e in card.get("envs") or [] if e.get("engine")})),
        sources=tuple(sorted({str(r.get("kind")) for r in card.get("evidence") or [] if r.get("kind")})),
    )


def matches(row: ModelRow, query: Query, *, skip: str | None = None) -> bool:
    if query.q and query.q.lower() not in row.model.lower() and query.q.lower() not in row.title.lower():
        return False
    for name, want in query.selected().items():
        if name == skip:
            continue
        if want not in row.facet(name):
            return False
        if name == "hardware" and query.hw_status and row.hardware.get(want) != query.hw_status:
            return False
    return True


def search(rows: Sequence[ModelRow], query: Query) -> tuple[list[ModelRow], dict[str, dict[str, int]], int]:
    """(one page of matching rows, facet counts, total matches).

    A facet's counts apply every other filter but its own, so each count says
    how many models choosing that value would give.
    """
    selected = query.selected()
    q = query.q.lower()
    hits: list[ModelRow] = []
    tallies: dict[str, dict[str, int]] = {name: {} for name in FACETS}
    for r in rows:  # one pass: a row counts for facet F when it fails no filter but (at most) F's own
        if q and q not in r.model.lower() and q not in r.title.lower():
            continue
        failed = None
        for name, want in selected.items():
            if want not in r.facet(name) or (name == "hardware" and query.hw_status
                                             and r.hardware.get(want) != query.hw_status):
                if failed is not None:
                    break
                failed = name
        else:
            if failed is None:
                hits.append(r)
            for name in FACETS if failed is None else (failed,):
                tally = tallies[name]
                for value in r.facet(name):
                    tally[value] = tally.get(value, 0) + 1
    if query.sort == "size":
        hits.sort(key=lambda r: (r.params_b is None, -(r.params_b or 0.0), r.model.lower()))
    elif query.sort == "updated":
        hits.sort(key=lambda r: r.model.lower())
        hits.sort(key=lambda r: r.updated or "", reverse=True)
    else:
        hits.sort(key=lambda r: r.model.lower())
    counts = {name: dict(sorted(t.items(), key=lambda kv: (-kv[1], kv[0]))) for name, t in tallies.items()}
    start = (query.page - 1) * query.per_page
    return hits[start:start + query.per_page], counts, len(hits)


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """What the pages read from the catalog file, as of one version of it (replaced whole, never changed)."""

    signature: tuple[int, ...]
    rows: list[ModelRow]
    by_model: dict[str, ModelRow]
    cards_raw: dict[str, Any]
    history: dict[str, list[dict[str, Any]]]


def _signature(path: Path) -> tuple[int, ...]:
    """Changes whenever a writer commits to the SQLite file (its size and time, and those of its WAL)."""
    out: list[int] = []
    for p in (path, path.with_name(path.name + "-wal")):
        try:
            st = p.stat()
        except OSError:
            out += [0, 0]
        else:
            out += [st.st_mtime_ns, st.st_size]
    return tuple(out)


class WebCatalog:
    """The catalog as the web pages read it; thread-safe caches, nothing written.

    The catalog file is read whole at start-up; :meth:`refresh` reads it again when a writer (an
    ``ingest`` while the server runs) has changed it, and swaps the new snapshot in as one object,
    so a request sees either the old catalog or the new one, never a mix.
    """

    CHECK_EVERY_S = 1.0  # how often a request may look at the file's signature (one stat)

    def __init__(self, catalog: Path | None, recipes: Path | None) -> None:
        from launchcard.store import Catalog

        self._pages: OnceCache[dict[str, Any]] = OnceCache(1024)  # built once per (model, revision)
        self._reload_lock = threading.Lock()
        self._checked = time.monotonic()
        self.recipes_dir = recipes
        self._repo: RecipeRepo | None = None
        if recipes is not None:
            from launchcard.sources.vllm_recipes import load_recipes

            self._repo = load_recipes(recipes, None)
        self.recipe_ids: frozenset[str] = frozenset(self._repo.model_ids()) if self._repo is not None else frozenset()
        with Catalog(catalog) as cat:
            self.catalog_path = cat.path
        self._snap = self._read()
        self.generation = 0

    def _read(self) -> _Snapshot:
        from launchcard.store import Catalog

        signature = _signature(self.catalog_path)
        with Catalog(self.catalog_path) as cat:  # one read transaction per statement; a writer's commit is atomic
            latest = cat.latest_json()
            history = {m: [{"id": c.id, "captured_at": c.captured_at, "card_sha256": c.card_sha256}
                           for c in cat.captures(m)] for m, _, _ in latest} if len(latest) <= 2000 else {}
        cards = {m: json.loads(j) for m, _, j in latest}
        ids = {m: i for m, i, _ in latest}
        rows = [row_from_card(ids[m], c, self._meta(m)) for m, c in cards.items()]
        return _Snapshot(signature, rows, {r.model: r for r in rows}, cards, history)

    def stale(self) -> bool:
        """True when a writer changed the catalog file since it was read (looked at most once a second)."""
        now = time.monotonic()
        if now - self._checked < self.CHECK_EVERY_S:
            return False
        self._checked = now
        return _signature(self.catalog_path) != self._snap.signature

    def reload(self) -> bool:
        """Read the catalog again if it changed; True when a new snapshot was swapped in (callers then
        drop what they built from the old one)."""
        with self._reload_lock:  # one thread rebuilds; the others keep serving the old snapshot
            if _signature(self.catalog_path) == self._snap.signature:
                return False
            self._snap = self._read()
            self.generation += 1  # what callers key their own caches of catalog-derived pages with
            self._pages = OnceCache(1024)  # after the swap: a page built meanwhile from the new one is dropped
        return True

    @property
    def rows(self) -> list[ModelRow]:
        return self._snap.rows

    @property
    def repo(self) -> RecipeRepo | None:
        return self._repo

    def _meta(self, model: str) -> Mapping[str, Any] | None:
        # Membership first: asking the repo for an unknown id builds did-you-mean suggestions (slow).
        if self._repo is None or model not in self.recipe_ids:
            return None
        try:
            data = self._repo.recipe(model).data
        except Exception:  # noqa: BLE001 -- a model without (or with a broken) recipe simply has no recipe metadata
            return None
        meta = data.get("meta") if isinstance(data, dict) else None
        return meta if isinstance(meta, dict) else None

    def models(self) -> Iterable[str]:
        return self._snap.by_model

    def row(self, model: str) -> ModelRow | None:
        return self._snap.by_model.get(model)

    def card(self, model: str) -> LaunchCard | None:
        from launchcard.card import LaunchCard

        raw = self._snap.cards_raw.get(model)
        return LaunchCard.model_validate(raw) if raw is not None else None

    def history(self, model: str) -> list[dict[str, Any]]:
        if model in self._snap.history:
            return self._snap.history[model]
        from launchcard.store import Catalog

        with Catalog(self.catalog_path) as cat:
            return [{"id": c.id, "captured_at": c.captured_at, "card_sha256": c.card_sha256}
                    for c in cat.captures(model)]

    def page(self, model: str, revision: str | None = None) -> dict[str, Any] | None:
        """The recipe index page of ``model`` (None when no recipe is known for it)."""
        repo = self._repo
        if repo is None or model not in self.recipe_ids:
            return None

        def make() -> dict[str, Any]:
            from launchcard.page import page_data

            return page_data(repo, model, revision=revision, card=self.card(model), history=self.history(model),
                             checked=self.checked_at(model))

        return self._pages.get((model, revision), make)

    def held_revisions(self, model: str) -> list[str]:
        """Revisions of ``model``'s recipe document this server holds: the one its checkout's file is at (the
        content every page shows) and the one the catalog's newest capture read."""
        held: list[str] = []
        if self._repo is not None and model in self.recipe_ids:
            rev = self._repo.recipe(model).revision
            if rev:
                held.append(rev)
        path = f"models/{model}.yaml"
        for ev in (self._snap.cards_raw.get(model) or {}).get("evidence") or []:
            rev = ev.get("revision")
            if ev.get("kind") == "vllm-recipes" and ev.get("path") == path and isinstance(rev, str) and rev not in held:
                held.append(rev)
        return held

    def verified_revision(self, model: str, rev: str | None) -> str | None:
        """``rev`` as the full revision it abbreviates when this server holds it; None when none was asked.

        Raises LookupError naming the held revisions otherwise: a revision is shown as the source's only when
        the catalog or the checkout holds it (pages never point evidence links at an unverified commit)."""
        if rev is None:
            return None
        held = self.held_revisions(model)
        for h in held:
            if h.startswith(rev.lower()):
                return h
        raise LookupError(", ".join(held))

    def checked_at(self, model: str) -> date | None:
        """When the sources of ``model`` were last checked (stored, or found unchanged) by an ingest."""
        from launchcard.store import Catalog

        with Catalog(self.catalog_path, create=False) as cat:
            value = cat.checked_at(model).get(model)
        if not value:
            return None
        try:
            return date.fromisoformat(value[:10])
        except ValueError:
            return None

    def release_badges(self, model: str) -> list[dict[str, Any]]:
        """One badge per captured engine release: does every launch command of ``model`` parse there?

        Read from the catalog's drift table (``launchcard drift --store``); empty until a drift was stored.
        """
        from launchcard.store import drift_badges

        try:
            per_engine = drift_badges(self.catalog_path, model)
        except LaunchcardError:  # the catalog file is unreadable: a page without badges, not a server error
            return []
        status = {"pass": "ok", "fail": "error"}
        return [{"engine": engine, "version": release, "status": status.get(verdict, "unknown"),
                 "title": f"{engine} {release}: every launch command of {model} "
                          + ("parses" if verdict == "pass" else "does not parse" if verdict == "fail" else "n/a")}
                for engine, releases in per_engine.items() for release, verdict in releases.items()]

    def profile(self, hw: str) -> Mapping[str, Any] | None:
        if self._repo is None:
            return None
        if hw not in self._repo.profiles:
            return None
        raw = (self._repo.taxonomy.data.get("hardware_profiles") or {}).get(hw)  # the taxonomy's own words, as JSON
        return raw if isinstance(raw, dict) else None

    def hardware_models(self, hw: str) -> dict[str, list[str]]:
        """Models whose recipe verifies or declares ``hw``, and models that fit one node of it.

        "Fits" compares the card's planned minimum total memory (GiB, from the
        memory planner) with the profile's node: GPUs x declared GB, in GiB.
        """
        return self.hardware_view(hw)[0]

    def hardware_view(self, hw: str) -> tuple[dict[str, list[str]], dict[str, Any]]:
        """(``hardware_models``, what the fits list rests on: models with a planned minimum, node GiB)."""
        out: dict[str, list[str]] = {"verified": [], "declared": [], "fits": []}
        prof = self.profile(hw) or {}
        count, vram = prof.get("gpu_count"), prof.get("vram_gb")
        node_gib = (float(vram) * 1e9 / 2**30 if isinstance(count, (int, float)) and isinstance(vram, (int, float))
                    else None)  # the taxonomy's vram_gb is the node's total
        planned = 0
        snap = self._snap
        for row in snap.rows:
            status = row.hardware.get(hw)
            if status:
                out[status].append(row.model)
            need = ((snap.cards_raw.get(row.model) or {}).get("hardware") or {}).get("min_total_vram_gib")
            if isinstance(need, (int, float)):
                planned += 1
                if node_gib is not None and need <= node_gib:
                    out["fits"].append(row.model)
        basis = {"models_with_planned_minimum": planned, "models": len(snap.rows),
                 "node_gib": round(node_gib, 1) if node_gib is not None else None}
        return out, basis
