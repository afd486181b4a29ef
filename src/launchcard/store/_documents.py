"""The source documents an ingest read, kept in the catalog so that it is self-contained.

An ingest stores every file of the corpus it read (recipes with their ``SOURCES.md`` manifest, cookbook,
provider presets, Dynamo manifests, Hub configs) content-addressed by sha256 in ``documents``, and the
corpus layout of that ingest (relative path -> sha256) in ``corpus_files``, in the same transaction as the
cards.  A catalog file can then be copied to a web host and served alone: :func:`materialize_corpus` writes
the stored layout back out (once per distinct layout, write-then-rename) and the server reads it as it reads
``--corpus``.  Every file is checked against its sha256 on the way out; a mismatch stops with an error.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from launchcard import atomicfile
from launchcard.errors import CatalogError
from launchcard.store._sql import CatalogTarget, Db, DbError

DDL = """
CREATE TABLE IF NOT EXISTS documents (sha256 TEXT PRIMARY KEY, content {blob} NOT NULL);
CREATE TABLE IF NOT EXISTS corpus_files (path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, stored_at TEXT NOT NULL)
"""
MAX_FILE_BYTES = 16 << 20  # a source document larger than this is not a recipe, card or config: not kept


def corpus_documents(root: Path) -> list[tuple[str, bytes]]:
    """(path relative to ``root``, bytes) of every regular file under ``root`` (hidden ones and links aside)."""
    out: list[tuple[str, bytes]] = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts) or path.is_symlink() or not path.is_file():
            continue
        if path.stat().st_size > MAX_FILE_BYTES:
            continue
        out.append((rel.as_posix(), path.read_bytes()))
    return out


def write_documents(db: Db, files: Sequence[tuple[str, bytes]], at: str) -> None:
    """Inside the caller's write transaction: keep each file's bytes once and make ``files`` the stored layout."""
    for stmt in DDL.format(blob="BYTEA" if db.dialect == "postgresql" else "BLOB").split(";"):
        if stmt.strip():
            db.execute(stmt)
    db.execute("DELETE FROM corpus_files")
    rows = [(rel, hashlib.sha256(data).hexdigest(), data) for rel, data in files]
    db.executemany("INSERT INTO documents VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING",
                   list({digest: (digest, data) for _, digest, data in rows}.values()))
    db.executemany("INSERT INTO corpus_files VALUES (?, ?, ?)", [(rel, digest, at) for rel, digest, _ in rows])


def _layout(db: Db) -> list[tuple[str, str]]:
    if not db.has_table("corpus_files"):  # a catalog from before documents were kept
        return []
    return [(str(p), str(s)) for p, s in db.rows("SELECT path, sha256 FROM corpus_files ORDER BY path")]


def materialize_corpus(catalog: CatalogTarget, dest_root: Path) -> Path | None:
    """The corpus layout the catalog's newest ingest read, written under ``dest_root`` (reused when already
    there); None when the catalog keeps no documents."""
    try:
        db = Db(catalog, timeout_s=60.0)
    except DbError as exc:
        raise CatalogError(f"cannot read the stored documents ({exc})", where=str(catalog), field="catalog",
                           fix="give a catalog an ingest wrote") from exc
    try:
        layout = _layout(db)
        if not layout:
            return None
        key = hashlib.sha256("\n".join(f"{p}\t{s}" for p, s in layout).encode()).hexdigest()[:20]
        dest = dest_root / key
        if (dest / ".launchcard-complete").is_file():
            return dest
        dest_root.mkdir(parents=True, exist_ok=True)
        with atomicfile.staged_folder(dest) as tmp:  # another process that wrote the same layout first: use theirs
            for rel, digest in layout:
                target = (tmp / rel).resolve()
                if not target.is_relative_to(tmp.resolve()):
                    raise CatalogError(f"stored path {rel!r} leaves the corpus folder", where=str(catalog),
                                       field="corpus_files", fix="re-ingest from a corpus folder")
                row = db.one("SELECT content FROM documents WHERE sha256 = ?", (digest,))
                data = bytes(row[0]) if row else b""
                if row is None or hashlib.sha256(data).hexdigest() != digest:
                    raise CatalogError(f"stored document {rel} is missing or does not match its sha256 {digest}",
                                       where=str(catalog), field="documents", fix="re-ingest the corpus")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            (tmp / ".launchcard-complete").write_text(key + "\n")
        return dest
    except DbError as exc:
        raise CatalogError(f"cannot read the stored documents ({exc})", where=str(catalog), field="catalog",
                           fix="give a catalog an ingest wrote") from exc
    finally:
        db.close()
