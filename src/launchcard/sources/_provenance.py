"""Where each corpus file came from, read from the corpus's ``SOURCES*.md`` tables.

The corpus keeps third-party files with a table naming origin repository,
path and commit.  That gives every document a pinned URL and revision, so a
fact's evidence points at the exact upstream line.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

_HEX = re.compile(r"\b[0-9a-f]{40}\b")
_GITHUB = re.compile(r"(?:github:|summary of)\s*([\w.-]+/[\w.-]+)(?:\s*\([^)]*\))?\s+(\S+)")
_URL = re.compile(r"https://[^\s|)`'\"]+")


@lru_cache(maxsize=8)
def corpus_provenance(root: str) -> dict[str, tuple[str | None, str | None]]:
    """``{local path: (url, revision)}`` for every row of ``root/SOURCES*.md``."""
    out: dict[str, tuple[str | None, str | None]] = {}
    for table in sorted(Path(root).glob("SOURCES*.md")):
        for line in table.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.startswith("| `"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 3:
                continue
            local = cells[0].strip("`")
            origin, commit_cell = cells[1], cells[2]
            last = re.search(r"last changed\s+([0-9a-f]{40})", commit_cell)
            shas = _HEX.findall(commit_cell)
            revision = last.group(1) if last else (shas[0] if shas else None)
            url = None
            gh = _GITHUB.search(origin)
            if gh:
                repo, path = gh.group(1), gh.group(2)
                url = f"https://github.com/{repo}/blob/{revision or 'HEAD'}/{path}"
            else:
                found = _URL.search(line)
                url = found.group(0) if found else None
            out[local] = (url, revision)
    return out


def lookup(corpus_root: Path, rel: str) -> tuple[str | None, str | None]:
    return corpus_provenance(str(corpus_root)).get(rel, (None, None))
