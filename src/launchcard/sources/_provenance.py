"""Where each corpus file came from, read from the corpus's ``SOURCES*.md`` manifests.

The corpus keeps third-party files with manifests naming origin repository,
path and commit.  That gives every document a pinned URL and revision, so a
fact's evidence points at the exact upstream line.

Two manifest shapes are read, by their headers rather than by column position:

- tables whose first column is the local path and which have a column headed
  ``commit`` (the one marked ``(used)`` wins when several are) and, optionally,
  an ``origin`` column (``github: owner/repo path`` or ``summary of owner/repo path``);
- file lists under a heading that names the commit they were taken at
  (``## 4. Snapshot file list (commit <sha>)``), one `` - `path` `` per line.

Where a row has no origin, the manifest's own "Upstream repository: `owner/repo`"
line supplies the repository and the local path is the path inside it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

_HEX = re.compile(r"\b[0-9a-f]{40}\b")
_GITHUB = re.compile(r"(?:github:|summary of)\s*([\w.-]+/[\w.-]+)(?:\s*\([^)]*\))?\s+(\S+)")
_URL = re.compile(r"https://[^\s|)`'\"]+")
_UPSTREAM = re.compile(r"[Uu]pstream repository:\s*`?([\w.-]+/[\w.-]+)`?")
_LIST_HEADING = re.compile(r"^#+\s.*\(commit\s+([0-9a-f]{40})\)")
_LIST_ITEM = re.compile(r"^\s*[-*]\s+`([^`]+)`")


_SNAPSHOT = re.compile(r"snapshot HEAD\s+([0-9a-f]{40})")


def _expand(path: str, previous: str | None) -> str:
    """An abbreviated row path, completed from the row before it.

    ``.../model_configs/x.json`` after ``aic-core/src/model_configs/y.json`` is ``aic-core/src/model_configs/x.json``.
    """
    if not path.startswith(".../") or previous is None:
        return path
    tail = path[4:]
    first = tail.split("/", 1)[0] + "/"
    at = previous.find(first)
    return previous[:at] + tail if at >= 0 else path


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _commit_column(header: list[str]) -> int | None:
    cols = [i for i, h in enumerate(header) if "commit" in h.lower()]
    used = [i for i in cols if "used" in header[i].lower()]
    return next(iter(used or cols), None)


def _revision(cell: str) -> str | None:
    last = re.search(r"last changed\s+([0-9a-f]{40})", cell)
    shas = _HEX.findall(cell)
    return last.group(1) if last else (shas[0] if shas else None)


def _parse(text: str) -> dict[str, tuple[str | None, str | None]]:
    out: dict[str, tuple[str | None, str | None]] = {}
    upstream = _UPSTREAM.search(text)
    default_repo = upstream.group(1) if upstream else None
    header: list[str] | None = None
    list_commit: str | None = None
    snapshot: str | None = None  # the last "snapshot HEAD <sha>" a row named: "same snapshot" rows mean it
    paths: dict[str, str] = {}  # repo -> last full path, to expand a row's ".../tail" abbreviation
    for line in text.splitlines():
        if line.startswith("#"):
            m = _LIST_HEADING.match(line)
            list_commit = m.group(1) if m else None
            header = None
            continue
        if line.startswith("|"):
            cells = _cells(line)
            if header is None:
                header = cells
                continue
            if not cells[0].startswith("`"):
                continue  # the |---| rule, or a row that names no file
            local = cells[0].strip("`")
            col = _commit_column(header)
            origin_col = next((i for i, h in enumerate(header) if h.lower().startswith("origin")), None)
            cell = cells[col] if col is not None and col < len(cells) else ""
            revision = _revision(cell)
            head = _SNAPSHOT.search(cell)
            snapshot = head.group(1) if head else snapshot
            if revision is None and "same snapshot" in cell.lower():
                revision = snapshot
            url = None
            origin = cells[origin_col] if origin_col is not None and origin_col < len(cells) else ""
            gh = _GITHUB.search(origin)
            if gh:
                repo, rpath = gh.group(1), _expand(gh.group(2), paths.get(gh.group(1)))
                paths[repo] = rpath
                url = f"https://github.com/{repo}/blob/{revision or 'HEAD'}/{rpath}"
            elif origin_col is not None:
                found = _URL.search(line)
                url = found.group(0) if found else None
            elif default_repo:
                url = f"https://github.com/{default_repo}/blob/{revision or 'HEAD'}/{local}"
            out[local] = (url, revision)
            continue
        header = None
        item = _LIST_ITEM.match(line)
        if item and list_commit:
            local = item.group(1)
            url = f"https://github.com/{default_repo}/blob/{list_commit}/{local}" if default_repo else None
            out.setdefault(local, (url, list_commit))
    return out


@lru_cache(maxsize=8)
def corpus_provenance(root: str) -> dict[str, tuple[str | None, str | None]]:
    """``{local path: (url, revision)}`` for every file that ``root/SOURCES*.md`` names."""
    out: dict[str, tuple[str | None, str | None]] = {}
    for table in sorted(Path(root).glob("SOURCES*.md")):
        for local, value in _parse(table.read_text(encoding="utf-8", errors="replace")).items():
            out.setdefault(local, value)
    return out


def lookup(corpus_root: Path, rel: str) -> tuple[str | None, str | None]:
    return corpus_provenance(str(corpus_root)).get(rel, (None, None))


@lru_cache(maxsize=8)
def declared_license(root: str) -> str | None:
    """The SPDX id a manifest declares for its upstream (``repository: `x/y` (Apache-2.0)``)."""
    for table in sorted(Path(root).glob("SOURCES*.md")):
        m = re.search(
            r"[Uu]pstream repository:\s*`?[\w.-]+/[\w.-]+`?\s*\(([\w.+-]+)\)",
            table.read_text(encoding="utf-8", errors="replace"),
        )
        if m:
            return m.group(1)
    return None
