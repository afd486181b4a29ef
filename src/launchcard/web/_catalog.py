"""The web catalog's read model: the index in SQL, pages on demand.

The index (filters, facet counts, full-text search, paging) is answered by the
catalog's own model index (``store._index``: one row per model, written with
each capture), so a catalog of hundreds of thousands of models is served
without loading its cards; only the cards a page shows are read, and kept in
a bounded cache.  A recipes checkout, where given, adds the recipe pages and
the builder.  Model pages are built on first request and cached.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchcard.errors import LaunchcardError
from launchcard.store import FACETS, SIZE_BUCKETS, SORTS, IndexPage, IndexRow
from launchcard.store import IndexQuery as Query
from launchcard.web._cache import OnceCache

if TYPE_CHECKING:
    from launchcard.card import LaunchCard
    from launchcard.sources.vllm_recipes import RecipeRepo
    from launchcard.store import Catalog, CatalogTarget

# Any in this module: stored cards, pages and recipe metadata are JSON documents (values of every JSON type).

ModelRow = IndexRow  # what the index shows and filters on, for one model (store's index row)
__all__ = ["FACETS", "SIZE_BUCKETS", "SORTS", "ModelRow", "Query", "WebCatalog"]


class WebCatalog:
    """The catalog as the web pages read it; thread-safe caches, nothing written.

    Every read goes to the catalog (one connection per thread); what is cached (cards, pages, the model
    list) is dropped when :meth:`reload` sees that a writer committed (an ``ingest`` while the server runs),
    so a request sees either the old catalog or the new one.
    """

    CHECK_EVERY_S = 1.0  # how often a request may look at the catalog's signature (one stat or one query)

    def __init__(self, catalog: CatalogTarget | None, recipes: Path | None) -> None:
        from launchcard.store import Catalog

        self._local = threading.local()
        self._reload_lock = threading.Lock()
        self._checked = time.monotonic()
        self.recipes_dir = recipes
        self._repo: RecipeRepo | None = None
        if recipes is not None:
            from launchcard.sources.vllm_recipes import load_recipes

            self._repo = load_recipes(recipes, None)
        self.recipe_ids: frozenset[str] = frozenset(self._repo.model_ids()) if self._repo is not None else frozenset()
        with Catalog(catalog) as cat:  # creates and migrates the file once, before any reader
            self.catalog_path: CatalogTarget = cat.path
            self._signature = cat.signature()
        self.generation = 0  # what callers key their own caches of catalog-derived pages with
        self._fresh_caches()

    def _fresh_caches(self) -> None:
        self._pages: OnceCache[dict[str, Any]] = OnceCache(1024)  # built once per (model, revision)
        self._cards: OnceCache[LaunchCard | None] = OnceCache(256)
        self._names: list[str] | None = None
        # facet counts and totals per text + filters: paging or re-sorting a result does not count it again
        self._tallies: OnceCache[tuple[dict[str, dict[str, int]], int]] = OnceCache(512)

    @contextmanager
    def _db(self) -> Iterator[Catalog]:
        """This thread's reading connection (opened on first use; SQLite connections are per thread)."""
        from launchcard.store import Catalog

        cat: Catalog | None = getattr(self._local, "cat", None)
        if cat is None:
            cat = Catalog(self.catalog_path, create=False)
            self._local.cat = cat
        yield cat

    def stale(self) -> bool:
        """True when a writer changed the catalog since it was read (looked at most once a second)."""
        now = time.monotonic()
        if now - self._checked < self.CHECK_EVERY_S:
            return False
        self._checked = now
        with self._db() as cat:
            return cat.signature() != self._signature

    def reload(self) -> bool:
        """Drop what was read before a writer's commit; True when there was such a commit (callers then drop
        what they built from the old catalog)."""
        with self._reload_lock:
            with self._db() as cat:
                signature = cat.signature()
            if signature == self._signature:
                return False
            self._signature = signature
            self.generation += 1
            self._fresh_caches()
        return True

    @property
    def repo(self) -> RecipeRepo | None:
        return self._repo

    def search(self, query: Query) -> IndexPage:
        """One page of the index (filters, facet counts and paging in SQL; the counts of one text + filters
        are kept until the catalog changes)."""
        key = (query.q.strip().lower(), tuple(sorted(query.selected().items())), query.hw_status)
        with self._db() as cat:
            counts, total = self._tallies.get(key, lambda: cat.tally(query))
            return IndexPage(rows=cat.page_rows(query), counts=counts, total=total)

    def models(self) -> list[str]:
        """Every model of the catalog, by name."""
        names = self._names
        if names is None:
            with self._db() as cat:
                names = self._names = cat.index_models()
        return names

    def count(self) -> int:
        with self._db() as cat:
            return cat.index_count()

    def row(self, model: str) -> ModelRow | None:
        with self._db() as cat:
            return cat.index_row(model)

    def card(self, model: str) -> LaunchCard | None:
        def make() -> LaunchCard | None:
            from launchcard.card import LaunchCard

            with self._db() as cat:
                text = cat.latest_card_json(model)
            return LaunchCard.model_validate_json(text) if text is not None else None

        return self._cards.get(model, make)

    def history(self, model: str) -> list[dict[str, Any]]:
        with self._db() as cat:
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
        card = self.card(model)
        for ev in card.evidence if card is not None else ():
            rev = ev.revision
            if ev.kind == "vllm-recipes" and ev.path == path and isinstance(rev, str) and rev not in held:
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
        with self._db() as cat:
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
        except LaunchcardError:  # the catalog is unreadable: a page without badges, not a server error
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
        """Models whose sources verify or declare ``hw``, and models that fit one node of it.

        "Fits" compares the card's planned minimum total memory (GiB, from the
        memory planner) with the profile's node: GPUs x declared GB, in GiB.
        """
        return self.hardware_view(hw)[0]

    def hardware_view(self, hw: str) -> tuple[dict[str, list[str]], dict[str, Any]]:
        """(``hardware_models``, what the fits list rests on: models with a planned minimum, node GiB)."""
        prof = self.profile(hw) or {}
        count, vram = prof.get("gpu_count"), prof.get("vram_gb")
        node_gib = (float(vram) * 1e9 / 2**30 if isinstance(count, (int, float)) and isinstance(vram, (int, float))
                    else None)  # the taxonomy's vram_gb is the node's total
        with self._db() as cat:
            out = cat.by_hardware(hw, node_gib)
            planned, models = cat.index_planned()
        basis = {"models_with_planned_minimum": planned, "models": models,
                 "node_gib": round(node_gib, 1) if node_gib is not None else None}
        return out, basis
