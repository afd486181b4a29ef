"""The embedded SQLite catalog: every captured card, with capture time and source revisions/hashes.

One ingest is one transaction: either every card of it is stored or none is.
Cards are stored whole (JSON) and their facts and sources also as rows, so
history can be listed and compared without re-reading any source.

:meth:`Catalog.ingest` stores a card only when its documents or what it says
changed: the capture's *documents fingerprint* (sha256 over the sorted ``kind,
path, sha256`` of its evidence) and *content fingerprint* (the card without
times, revisions and URLs) are compared with the model's newest capture inside the
``BEGIN IMMEDIATE`` write transaction, so two ingests at once cannot both store
the same history; an unchanged model only gets its ``checked_at`` moved on.
Schema versions are kept in ``PRAGMA user_version`` and older files are
migrated in place, in one transaction, when opened for writing.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

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

SCHEMA_VERSION = 2
# version 1 -> 2: what the documents were (fingerprint) and which commit they were read at; when each model
# was last checked against its sources, whether or not that stored a capture
_MIGRATE_2 = """
ALTER TABLE captures ADD COLUMN docs_sha256 TEXT;
ALTER TABLE captures ADD COLUMN commit_id TEXT;
ALTER TABLE captures ADD COLUMN committed_at TEXT;
ALTER TABLE captures ADD COLUMN content_sha256 TEXT;
CREATE INDEX IF NOT EXISTS captures_docs ON captures(model, docs_sha256);
CREATE TABLE IF NOT EXISTS checks (
    model TEXT PRIMARY KEY,
    checked_at TEXT NOT NULL,
    capture_id INTEGER REFERENCES captures(id) ON DELETE SET NULL
);
"""
BUSY_TIMEOUT_S = 60.0  # a second writer waits this long for the first one's transaction


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
    commit_id: str | None = None  # the source commit the capture's documents were read at (history ingests)
    committed_at: str | None = None  # that commit's time (ISO 8601)
    docs_sha256: str | None = None  # fingerprint of the capture's documents (kind, path, sha256)


@dataclass(frozen=True)
class CommitRef:
    """The commit a capture's documents were read at."""

    id: str
    committed_at: str  # ISO 8601


@dataclass(frozen=True)
class IngestResult:
    """What :meth:`Catalog.ingest` did: new capture ids, and the models whose documents had not changed."""

    stored: tuple[int, ...]
    unchanged: tuple[str, ...]
    checked_at: str


def docs_fingerprint(card: LaunchCard) -> str:
    """sha256 over the sorted (kind, path, sha256) of the card's source documents (revisions left out:
    a commit that does not touch a document does not change it)."""
    rows = sorted({f"{r.kind}\0{r.path or r.url or ''}\0{r.sha256 or ''}" for r in card.evidence})
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


# where a card says *when* or *at which commit* it was read, not *what* it says; and the plan verdicts, which
# are launchcard's judgement of the commands (they name local paths such as where a config.json was looked for)
_VOLATILE = frozenset({"captured_at", "fetched_at", "committed_at", "revision", "url", "value_url", "verdict"})


def _strip(value: Any) -> Any:
    """Without volatile keys, nor empty ones (a field a later version adds, still unset, changes nothing)."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in _VOLATILE and v not in (None, [], {})}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def content_fingerprint(card_json: str) -> str:
    """sha256 of what a stored card says, leaving out capture/fetch/commit times, revisions, URLs and plan
    verdicts: a commit
    that changes a file a card rests on without being cited (a strategy, the taxonomy) changes it; a commit
    that changes nothing it says does not."""
    return hashlib.sha256(json.dumps(_strip(json.loads(card_json)), sort_keys=True).encode()).hexdigest()


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


class Catalog:
    """The catalog file at ``path``; ``create=False`` (reading) never makes a file that is not there."""

    def __init__(self, path: Path | str | None = None, *, create: bool = True) -> None:
        self.path = Path(path).expanduser() if path else default_catalog_path()
        if not create and not self.path.is_file():
            raise CatalogError("catalog file not found", where=str(self.path), field="catalog",
                               fix="give the file an ingest wrote (nothing was created)")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_S)
            self._db.execute("PRAGMA foreign_keys = ON")
            self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            self._migrate()
        except (OSError, sqlite3.Error) as exc:
            raise CatalogError(f"cannot open the catalog ({exc})", where=str(self.path), field="catalog",
                               fix="give a writable SQLite file path") from exc

    def _migrate(self) -> None:
        """Create or upgrade the schema to :data:`SCHEMA_VERSION`, in one write transaction (a second
        process opening the file at the same time waits, then finds it done)."""
        if int(self._db.execute("PRAGMA user_version").fetchone()[0]) >= SCHEMA_VERSION:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
            if version < 1:
                for stmt in _statements(SCHEMA):
                    self._db.execute(stmt)
            if version < 2:
                cols = {r[1] for r in self._db.execute("PRAGMA table_info(captures)")}
                for stmt in _statements(_MIGRATE_2):
                    if stmt.startswith("ALTER TABLE captures ADD COLUMN") and stmt.split()[5] in cols:
                        continue
                    self._db.execute(stmt)
                self._backfill_fingerprints()
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _backfill_fingerprints(self) -> None:
        """Fingerprints of captures stored before version 2, from their source rows (same rule as
        :func:`docs_fingerprint`), so the first ingest after an upgrade does not store everything again."""
        rows: dict[int, set[str]] = {}
        for cid, kind, path, url, sha in self._db.execute(
                "SELECT c.id, s.kind, s.path, s.url, s.sha256 FROM captures c "
                "LEFT JOIN capture_sources s ON s.capture_id = c.id WHERE c.docs_sha256 IS NULL"):
            keys = rows.setdefault(int(cid), set())
            if kind is not None:
                keys.add(f"{kind}\0{path or url or ''}\0{sha or ''}")
        self._db.executemany("UPDATE captures SET docs_sha256 = ? WHERE id = ?", [
            (hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest(), cid) for cid, keys in rows.items()])
        for cid, text in list(self._db.execute("SELECT id, card_json FROM captures WHERE content_sha256 IS NULL")):
            try:
                content = content_fingerprint(text)
            except ValueError:
                continue  # a row that is not JSON: never equal to a new card
            self._db.execute("UPDATE captures SET content_sha256 = ? WHERE id = ?", (content, cid))

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def ensure_tables(self, ddl: str) -> None:
        """Create extra tables (``CREATE TABLE IF NOT EXISTS ...``) next to the captures, e.g. a module's
        own results keyed by capture id; one write transaction."""
        with self._tx() as db:
            for stmt in _statements(ddl):
                db.execute(stmt)

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` write transaction on the catalog (committed on success, rolled back on
        any exception), for modules that keep their own tables here (see :meth:`ensure_tables`)."""
        return self._tx()

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """Rows of a read-only query (for modules' own tables)."""
        return [tuple(r) for r in self._db.execute(sql, tuple(params))]

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

    def add(self, cards: Iterable[LaunchCard], *, commit: CommitRef | None = None) -> list[int]:
        """Store all ``cards`` in one transaction, changed or not (an explicit capture, e.g. ``card --store``
        or measured facts); on any failure nothing is stored."""
        ids: list[int] = []
        now = _now()
        try:
            with self._tx() as db:
                for card in cards:
                    cid = self._insert(db, card, commit)
                    self._checked(db, card.model, now, cid)
                    ids.append(cid)
        except sqlite3.Error as exc:
            raise CatalogError(f"write failed ({exc}); the catalog is unchanged", where=str(self.path), field="catalog",
                               fix="check free disk space and permissions") from exc
        return ids

    def ingest(self, cards: Iterable[LaunchCard], *, commit: CommitRef | None = None, force: bool = False,
               checked_at: str | None = None, documents: Sequence[tuple[str, bytes]] = ()) -> IngestResult:
        """Store the cards whose documents changed since the model's newest capture, in one transaction.

        With ``commit`` (a history walk), the capture in effect at that commit (the newest read at or before
        its time) counts too, so walking a range again adds nothing.  The comparison runs inside the write
        transaction (``BEGIN IMMEDIATE``), so a concurrent ingest of
        the same documents waits, then finds them stored and adds nothing.  Every model, stored or not,
        gets ``checked_at`` (default: now).  ``force`` stores every card.  ``documents`` (corpus-relative path,
        bytes) are the source files read, kept in the same transaction so the catalog serves pages alone
        (:mod:`launchcard.store._documents`).  On any failure nothing is stored.
        """
        stored: list[int] = []
        unchanged: list[str] = []
        now = checked_at or _now()
        try:
            with self._tx() as db:
                for card in cards:
                    text = card.model_dump_json(by_alias=True)
                    fps = docs_fingerprint(card), content_fingerprint(text)
                    if not force and self._known(db, card.model, fps, commit):
                        self._checked(db, card.model, now, None)
                        unchanged.append(card.model)
                        continue
                    cid = self._insert(db, card, commit, text, fps)
                    self._checked(db, card.model, now, cid)
                    stored.append(cid)
                if documents:
                    from launchcard.store._documents import write_documents

                    write_documents(db, documents, now)
        except sqlite3.Error as exc:
            raise CatalogError(
                f"write failed ({exc}); the catalog is unchanged",
                where=str(self.path),
                field="catalog",
                fix="check free disk space and permissions",
            ) from exc
        return IngestResult(stored=tuple(stored), unchanged=tuple(unchanged), checked_at=now)

    @staticmethod
    def _known(db: sqlite3.Connection, model: str, fps: tuple[str, str], commit: CommitRef | None) -> bool:
        """The model's newest capture has these (documents, content) fingerprints, or (history) the capture in
        effect at ``commit`` does."""
        row = db.execute(
            "SELECT docs_sha256, content_sha256 FROM captures WHERE model = ? ORDER BY id DESC LIMIT 1", (model,)
        ).fetchone()
        if row is not None and (row[0], row[1]) == fps:
            return True
        if commit is None:
            return False
        # a history walk: the capture in effect at this commit (the newest one read at or before it) says the same
        row = db.execute(
            "SELECT docs_sha256, content_sha256 FROM captures WHERE model = ? AND committed_at <= ? "
            "ORDER BY committed_at DESC, id DESC LIMIT 1",
            (model, commit.committed_at),
        ).fetchone()
        return row is not None and (row[0], row[1]) == fps

    @staticmethod
    def _checked(db: sqlite3.Connection, model: str, at: str, capture_id: int | None) -> None:
        db.execute(
            "INSERT INTO checks(model, checked_at, capture_id) VALUES (?,?,?) ON CONFLICT(model) DO UPDATE "
            "SET checked_at = MAX(checked_at, excluded.checked_at), "
            "capture_id = COALESCE(excluded.capture_id, capture_id)",
            (model, at, capture_id),
        )

    def checked_at(self, model: str | None = None) -> dict[str, str]:
        """When each model (or just ``model``) was last checked against its sources, stored or unchanged."""
        if model is None:
            rows = self._db.execute("SELECT model, checked_at FROM checks ORDER BY model")
        else:
            rows = self._db.execute("SELECT model, checked_at FROM checks WHERE model = ?", (model,))
        return {str(m): str(t) for m, t in rows}

    def _insert(
        self,
        db: sqlite3.Connection,
        card: LaunchCard,
        commit: CommitRef | None = None,
        text: str | None = None,
        fps: tuple[str, str] | None = None,
    ) -> int:
        """Store one capture; ``fps`` = its (documents, content) fingerprints when the caller has them."""
        text = text or card.model_dump_json(by_alias=True)
        docs_fp, content_fp = fps or (docs_fingerprint(card), content_fingerprint(text))
        commit = commit or _commit_of(card)
        cur = db.execute(
            "INSERT INTO captures(model, captured_at, captured_by, card_sha256, card_json, docs_sha256, commit_id, "
            "committed_at, content_sha256) VALUES (?,?,?,?,?,?,?,?,?)",
            (
                card.model,
                card.captured_at.isoformat() if card.captured_at else "",
                card.captured_by,
                hashlib.sha256(text.encode()).hexdigest(),
                text,
                docs_fp,
                commit.id if commit else None,
                commit.committed_at if commit else None,
                content_fp,
            ),
        )
        cid = int(cur.lastrowid or 0)
        db.executemany(
            "INSERT INTO capture_sources VALUES (?,?,?,?,?,?)",
            [(cid, r.kind, r.path, r.url, r.revision, r.sha256) for r in card.evidence],
        )
        db.executemany(
            "INSERT INTO facts VALUES (?,?,?,?,?,?,?)",
            [
                (
                    cid,
                    f.name,
                    f.scope,
                    json.dumps(f.value, sort_keys=True, default=str),
                    f.evidence.kind if f.evidence else None,
                    f.evidence.url if f.evidence else None,
                    f.evidence.line if f.evidence else None,
                )
                for f in card.facts
            ],
        )
        return cid

    def models(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT DISTINCT model FROM captures ORDER BY model")]

    def captures(self, model: str) -> list[Capture]:
        """``model``'s captures, oldest first; the id matches case-insensitively when no model has it exactly."""
        query = ("SELECT id, model, captured_at, captured_by, card_sha256, commit_id, committed_at, docs_sha256 "
                 "FROM captures WHERE model = ? {} ORDER BY id")
        caps = [Capture(*r) for r in self._db.execute(query.format(""), (model,))]
        if not caps:
            caps = [Capture(*r) for r in self._db.execute(query.format("COLLATE NOCASE"), (model,))]
            if len({c.model for c in caps}) > 1:  # several models differ only by case: none is meant
                return []
        return caps

    def latest_json(self) -> list[tuple[str, int, str]]:
        """(model, capture id, card JSON) of every model's newest capture, by model name.

        Raw JSON, not parsed cards: a listing of thousands of models (the web
        index) reads a few fields of each and must not pay for validation.
        """
        rows = self._db.execute(
            "SELECT c.model, c.id, c.card_json FROM captures c "
            "JOIN (SELECT model, MAX(id) AS id FROM captures GROUP BY model) m ON c.id = m.id ORDER BY c.model"
        )
        return [(str(m), int(i), str(j)) for m, i, j in rows]

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM captures").fetchone()[0])

    def card(self, capture_id: int) -> LaunchCard:
        row = self._db.execute("SELECT card_json FROM captures WHERE id = ?", (capture_id,)).fetchone()
        if row is None:
            raise CatalogError(
                f"no capture with id {capture_id}",
                where=str(self.path),
                field="capture",
                fix="list the model's captures",
            )
        return _card(row[0], self.path, capture_id)

    def model_card(self, model: str, capture_id: int) -> LaunchCard:
        """Capture ``capture_id``, which must be one of ``model``'s (another model's capture is bad input)."""
        caps = self.captures(model)
        if capture_id not in {c.id for c in caps}:
            self.latest(model)  # no capture at all: the "no card for" error with its suggestions
            ids = ", ".join(str(c.id) for c in caps)
            raise CatalogError(
                f"capture {capture_id} is not a capture of {model!r}",
                where=str(self.path),
                field="capture",
                fix=f"{model}'s captures are {ids}",
            )
        return self.card(capture_id)

    def latest(self, model: str) -> LaunchCard:
        caps = self.captures(model)
        if not caps:
            known = self.models()
            fix = suggest(model, known, "model") if known else "the catalog is empty; ingest a corpus first"
            raise CatalogError(f"no card for {model!r} in the catalog", where=str(self.path), field="catalog", fix=fix)
        return self.card(caps[-1].id)


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def _card(text: str, path: Path, capture_id: int) -> LaunchCard:
    """A stored card, validated; a row this version cannot read is a catalog error, not a pydantic trace."""
    from pydantic import ValidationError

    try:
        return LaunchCard.model_validate_json(text)
    except ValidationError as exc:
        raise CatalogError(
            f"capture {capture_id} does not validate as a launch card ({exc.error_count()} error(s))",
            where=str(path),
            field="catalog",
            fix="the row was written by another launchcard version; ingest again",
        ) from exc
