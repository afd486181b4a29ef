"""One connection to the catalog database: SQLite (the embedded default) or PostgreSQL (the server option).

The catalog's SQL is written once, with ``?`` placeholders and statements both
databases accept (``INSERT ... RETURNING``, ``ON CONFLICT``); this module is the
only place that knows which one it talks to: it maps the placeholders, the
schema version (``PRAGMA user_version`` / a ``launchcard_meta`` row), the write
lock (``BEGIN IMMEDIATE`` / a transaction-scoped advisory lock) and the
driver's exceptions (every one becomes :class:`DbError`, so callers catch one
type whichever database is behind the catalog).

A target is a file path (SQLite) or a ``postgresql://`` / ``postgres://`` URL.
psycopg is imported only for a PostgreSQL target (``pip install 'launchcard[postgres]'``).
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

Dialect = Literal["sqlite", "postgresql"]
CatalogTarget = Path | str  # a SQLite file, or a postgresql:// URL
# the advisory lock every PostgreSQL writer takes: one writer at a time, as BEGIN IMMEDIATE gives SQLite
_PG_WRITE_LOCK = 0x6C61756E  # "laun"


class DbError(Exception):
    """Any error of the database driver (SQLite or PostgreSQL), with the driver's own message."""


def is_url(target: str | Path) -> bool:
    """Whether ``target`` names a PostgreSQL server rather than a SQLite file."""
    return isinstance(target, str) and target.split("://", 1)[0] in ("postgresql", "postgres")


# RFC 3986 section 3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then "://" for an authority
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def other_url(target: str | Path) -> str | None:
    """The scheme of a URL naming no database launchcard opens (``mysql``, ``sqlite`` of ``sqlite:///x.db``); None
    for a file path or a PostgreSQL URL.  Read as a path, such a URL made folders ``mysql:/HOST/`` in the working
    directory and a SQLite catalog in them."""
    m = _SCHEME.match(target) if isinstance(target, str) else None
    return m.group(1) if m and not is_url(target) else None


def redact(url: str) -> str:
    """The URL without its password (what error messages and listings show)."""
    head, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    cred, _, host = rest.rpartition("@")
    user = cred.split(":", 1)[0]
    return f"{head}://{user}:***@{host}" if ":" in cred else url


class _Cursor(Protocol):
    def fetchone(self) -> Any: ...  # Any: a driver row (tuple-like)

    def fetchall(self) -> list[Any]: ...


# every SQLite database file begins with these 16 bytes (sqlite.org/fileformat.html, 1.3 "The Database Header")
_SQLITE_HEADER = b"SQLite format 3\x00"


def _refuse_non_sqlite(path: Path) -> None:
    """DbError where ``path`` holds something other than a SQLite database: SQLite opens a file too short for its
    header (any under 100 bytes) as an empty database and writes the catalog's tables over it, so a user's file named
    by mistake would be lost.  A missing or empty file is a new catalog."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(_SQLITE_HEADER))
    except (FileNotFoundError, IsADirectoryError):
        return  # created by SQLite / refused by it with its own message
    except OSError as exc:
        raise DbError(f"cannot read it ({exc.strerror})") from exc
    if head and head != _SQLITE_HEADER:
        raise DbError("not a SQLite database: it does not begin with SQLite's header; nothing was written to it")


class Db:
    """The catalog's one connection; every statement goes through :meth:`execute`/:meth:`executemany`."""

    dialect: Dialect

    def __init__(self, target: str | Path, *, timeout_s: float) -> None:
        self.target = str(target)
        # derived values kept with this connection (callers key them by data_version(), so another writer's
        # commit makes them stale)
        self.memo: dict[str, object] = {}
        self._timeout_s = timeout_s
        if is_url(target):
            self.dialect = "postgresql"
            self._conn: Any = _pg_connect(str(target), timeout_s)  # Any: sqlite3 or psycopg connection
        else:
            self.dialect = "sqlite"
            _refuse_non_sqlite(Path(target))
            try:
                self._conn = sqlite3.connect(target, isolation_level=None, timeout=timeout_s)
                self._conn.execute("PRAGMA foreign_keys = ON")
                self._conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
            except sqlite3.Error as exc:
                raise DbError(str(exc)) from exc

    # -- statements -------------------------------------------------------------------------------------------
    def _sql(self, sql: str) -> str:
        if self.dialect == "sqlite":
            return sql
        # psycopg's placeholder is %s; a literal % must be doubled (the catalog's SQL holds no literal ?)
        return sql.replace("%", "%%").replace("?", "%s")

    def execute(self, sql: str, params: Sequence[object] = ()) -> _Cursor:
        try:
            if self.dialect == "sqlite":
                cur: _Cursor = self._conn.execute(sql, tuple(params))
                return cur
            pg_cur: _Cursor = self._conn.execute(self._sql(sql), tuple(params))
            return pg_cur
        except Exception as exc:  # every driver error becomes DbError (one type for callers)
            raise _wrap(exc) from exc

    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> None:
        try:
            if self.dialect == "sqlite":
                self._conn.executemany(sql, rows)
            else:
                with self._conn.cursor() as cur:
                    cur.executemany(self._sql(sql), list(rows))
        except Exception as exc:
            raise _wrap(exc) from exc

    def rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.execute(sql, params).fetchall()]

    def one(self, sql: str, params: Sequence[object] = ()) -> tuple[Any, ...] | None:
        row = self.execute(sql, params).fetchone()
        return tuple(row) if row is not None else None

    # -- transactions -----------------------------------------------------------------------------------------
    def begin_write(self) -> None:
        """Start a write transaction that excludes every other writer until commit or rollback."""
        if self.dialect == "sqlite":
            self.execute("BEGIN IMMEDIATE")
        else:
            self.execute("BEGIN")
            self.execute("SELECT pg_advisory_xact_lock(?)", (_PG_WRITE_LOCK,))

    def commit(self) -> None:
        self.execute("COMMIT")

    def rollback(self) -> None:
        self.memo.clear()  # what was read or written inside the transaction is gone
        with contextlib.suppress(DbError):  # nothing was open (the failure ended it already)
            self.execute("ROLLBACK")

    # -- schema -----------------------------------------------------------------------------------------------
    def version(self) -> int:
        if self.dialect == "sqlite":
            row = self.one("PRAGMA user_version")
            return int(row[0]) if row else 0
        if not self.has_table("launchcard_meta"):  # (an error would abort the caller's transaction)
            return 0
        row = self.one("SELECT value FROM launchcard_meta WHERE key = 'schema_version'")
        return int(row[0]) if row else 0

    def set_version(self, version: int) -> None:
        if self.dialect == "sqlite":
            self.execute(f"PRAGMA user_version = {int(version)}")
        else:
            self.execute("CREATE TABLE IF NOT EXISTS launchcard_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self.execute("INSERT INTO launchcard_meta(key, value) VALUES ('schema_version', ?) "
                         "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (str(version),))

    def columns(self, table: str) -> set[str]:
        if self.dialect == "sqlite":
            return {str(r[1]) for r in self.rows(f"PRAGMA table_info({table})")}
        return {str(r[0]) for r in self.rows(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
            "AND table_schema = current_schema()", (table,))}

    def has_table(self, table: str) -> bool:
        if self.dialect == "sqlite":
            return self.one("SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?",
                            (table,)) is not None
        return self.one("SELECT 1 FROM information_schema.tables WHERE table_name = ? "
                        "AND table_schema = current_schema()", (table,)) is not None

    def data_version(self) -> int:
        """A number that changes when another connection commits (SQLite's ``data_version``; on PostgreSQL the
        catalog's newest capture id, which every ingest that stores anything moves)."""
        if self.dialect == "sqlite":
            row = self.one("PRAGMA data_version")
            return int(row[0]) if row else 0
        row = self.one("SELECT COALESCE(MAX(id), 0) FROM captures")
        return int(row[0]) if row else 0

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing a broken connection has nothing left to report
            self._conn.close()


def _wrap(exc: Exception) -> DbError:
    if isinstance(exc, DbError):
        return exc
    return DbError(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)


def _pg_connect(url: str, timeout_s: float) -> Any:  # Any: a psycopg.Connection (optional dependency)
    try:
        import psycopg
    except ImportError as exc:
        raise DbError("PostgreSQL catalogs need psycopg: pip install 'launchcard[postgres]'") from exc
    try:
        # autocommit: transactions are explicit BEGIN/COMMIT, exactly as on SQLite (isolation_level=None)
        return psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(timeout_s)))
    except psycopg.Error as exc:
        raise DbError(str(exc).strip().splitlines()[0] if str(exc).strip() else "cannot connect") from exc
