"""Off a terminal (a pipe, CI) the progress bars of ingest draw nothing: a bad --corpus is exactly one stderr line,
not a blank line (the transient bar's closing newline) and then the error."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_cli


@pytest.mark.parametrize("make", [False, True])
def test_ingest_of_a_missing_or_empty_corpus_is_one_line(tmp_path: Path, make: bool) -> None:
    corpus = tmp_path / "corpus"
    if make:
        corpus.mkdir()
    out = run_cli("ingest", "--corpus", str(corpus), "--catalog", str(tmp_path / "c.sqlite3"))
    assert out.returncode == 2
    assert out.stderr.startswith("launchcard: error: --corpus") and out.stderr.count("\n") == 1, repr(out.stderr)
    assert not (tmp_path / "c.sqlite3").exists()
