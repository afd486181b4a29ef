"""The embedded SQLite catalog: every captured card, with capture time and source revisions/hashes.

One ingest is one transaction: either every card of it is stored or none is.
Cards are stored whole (JSON) and their facts and sources also as rows, so
history can be listed and compared without re-reading any source.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from launchcard.card import LaunchCard
from launchcard.errors import CatalogError, suggest

SCHEMA = """
CREATE TABLE IF NOT EXISTS captures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    model TEXT NOT NULL,
    captured_at TEXT NOT NULL,
    captured_by TEXT,
    card_sha256 TEXT NOT NULL,
    card_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS captures_model ON captures(model, id);
CREATE TABLE IF NOT EXISTS capture_sources (
    capture_id INTEGER NOT NULL REFERENCES captures(id) ON DELETE CASCADE,
    kind TEXT NOT NULL, path TEXT, url TEXT, revision TEXT, sha256 TEXT
);
CREATE TABLE IF NOT EXISTS facts (
    capture_id INTEGER NOT NULL REFERENCES captures(id) ON DELETE CASCADE,
    name TEXT NOT NULL, scope TEXT, value_json TEXT, kind TEXT, url TEXT, line INTEGER
);
CREATE INDEX IF NOT EXISTS facts_capture ON facts(capture_id);
"""


def default_catalog_path() -> Path:
    """``$LAUNCHCARD_CATALOG``, else ``<user data dir>/launchcard/catalog.sqlite3`` (platformdirs/XDG)."""
    env = os.environ.get("LAUNCHCARD_CATALOG")
    if env:
        return Path(env).expanduser()
    try:
        from platformdirs import user_data_dir

        base = Path(user_data_dir("launchcard", appauthor=False))
    except ImportError:  # XDG fallback
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "launchcard"
    return base / "catalog.sqlite3"


@dataclass(frozen=True)
class Capture:
    id: int
    model: str
    captured_at: str
    captured_by: str | None
    card_sha256: str


class Catalog:
    """The catalog file at ``path``; ``create=False`` (reading) never makes a file that is not there."""

    def __init__(self, path: Path | str | None = None, *, create: bool = True) -> None:
        self.path = Path(path).expanduser() if path else default_catalog_path()
        if not create and not self.path.is_file():
            raise CatalogError("catalog file not found", where=str(self.path), field="catalog",
                               fix="give the file an ingest wrote (nothing was created)")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA foreign_keys = ON")
            self._db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise CatalogError(f"cannot open the catalog ({exc})", where=str(self.path), field="catalog",
                               fix="give a writable SQLite file path") from exc

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise CatalogError(f"cannot start a write ({exc})", where=str(self.path), field="catalog",
                               fix="close other writers and retry") from exc
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        else:
            try:
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                db.execute("ROLLBACK")
                raise CatalogError(f"write failed ({exc}); nothing was stored", where=str(self.path), field="catalog",
                                   fix="check free disk space and permissions") from exc

    def add(self, cards: Iterable[LaunchCard]) -> list[int]:
        """Store all ``cards`` in one transaction; on any failure nothing is stored."""
        ids: list[int] = []
        try:
            with self._tx() as db:
                for card in cards:
                    ids.append(self._insert(db, card))
        except sqlite3.Error as exc:
            raise CatalogError(f"write failed ({exc}); the catalog is unchanged", where=str(self.path), field="catalog",
                               fix="check free disk space and permissions") from exc
        return ids

    def _insert(self, db: sqlite3.Connection, card: LaunchCard) -> int:
        text = card.model_dump_json(by_alias=True)
        cur = db.execute(
            "INSERT INTO captures(model, captured_at, captured_by, card_sha256, card_json) VALUES (?,?,?,?,?)",
            (card.model, card.captured_at.isoformat() if card.captured_at else "", card.captured_by,
             hashlib.sha256(text.encode()).hexdigest(), text))
        cid = int(cur.lastrowid or 0)
        db.executemany("INSERT INTO capture_sources VALUES (?,?,?,?,?,?)",
                       [(cid, r.kind, r.path, r.url, r.revision, r.sha256) for r in card.evidence])
        db.executemany("INSERT INTO facts VALUES (?,?,?,?,?,?,?)", [
            (cid, f.name, f.scope, json.dumps(f.value, sort_keys=True, default=str),
             f.evidence.kind if f.evidence else None, f.evidence.url if f.evidence else None,
             f.evidence.line if f.evidence else None) for f in card.facts])
        return cid

    def models(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT DISTINCT model FROM captures ORDER BY model")]

    def captures(self, model: str) -> list[Capture]:
        rows = self._db.execute(
            "SELECT id, model, captured_at, captured_by, card_sha256 FROM captures WHERE model = ? ORDER BY id",
            (model,))
        return [Capture(*r) for r in rows]

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM captures").fetchone()[0])

    def card(self, capture_id: int) -> LaunchCard:
        row = self._db.execute("SELECT card_json FROM captures WHERE id = ?", (capture_id,)).fetchone()
        if row is None:
            raise CatalogError(f"no capture with id {capture_id}", where=str(self.path), field="capture",
                               fix="list the model's captures")
        return _card(row[0], self.path, capture_id)

    def model_card(self, model: str, capture_id: int) -> LaunchCard:
        """Capture ``capture_id``, which must be one of ``model``'s (another model's capture is bad input)."""
        caps = self.captures(model)
        if capture_id not in {c.id for c in caps}:
            self.latest(model)  # no capture at all: the "no card for" error with its suggestions
            ids = ", ".join(str(c.id) for c in caps)
            raise CatalogError(f"capture {capture_id} is not a capture of {model!r}", where=str(self.path),
                               field="capture", fix=f"{model}'s captures are {ids}")
        return self.card(capture_id)

    def latest(self, model: str) -> LaunchCard:
        caps = self.captures(model)
        if not caps:
            known = self.models()
            fix = suggest(model, known, "model") if known else "the catalog is empty; ingest a corpus first"
            raise CatalogError(f"no card for {model!r} in the catalog", where=str(self.path), field="catalog",
                               fix=fix)
        return self.card(caps[-1].id)


def _card(text: str, path: Path, capture_id: int) -> LaunchCard:
    """A stored card, validated; a row this version cannot read is a catalog error, not a pydantic trace."""
    from pydantic import ValidationError

    try:
        return LaunchCard.model_validate_json(text)
    except ValidationError as exc:
        raise CatalogError(f"capture {capture_id} does not validate as a launch card ({exc.error_count()} error(s))",
                           where=str(path), field="catalog",
                           fix="the row was written by another launchcard version; ingest again") from exc
