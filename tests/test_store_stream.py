"""Streaming ingest (``ingest --cards``): batches, flat memory, resumable after kill -9, bad lines named; the model
index answers as a plain filter over the rows would; the content fingerprint's one-pass parse equals the
two-pass definition."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launchcard.errors import InputError
from launchcard.store import FACETS, Catalog, IndexQuery, IndexRow, content_fingerprint, prepared_cards, read_cards
from launchcard.store._prepare import _VOLATILE
from test_store_ingest import _card
from test_store_postgres import QUERIES, _cards

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}


def _write(path: Path, n: int, start: int = 0) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(start, start + n):
            fh.write(_card(f"org{i % 7}/m{i}", sha=f"{i:064x}").model_dump_json(by_alias=True) + "\n")
    return path


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "launchcard.cli", *args], capture_output=True, text=True, env=ENV,
                          timeout=timeout, check=False)


def test_stream_commits_in_batches_and_a_second_run_stores_nothing(tmp_path: Path) -> None:
    lines = _write(tmp_path / "cards.jsonl", 250)
    seen: list[tuple[int, int]] = []
    with Catalog(tmp_path / "c.sqlite3") as cat:
        done = cat.ingest_stream(read_cards(lines), batch=100, progress=lambda s, n: seen.append((s, n)))
        assert len(done.stored) == 250 and seen == [(100, 100), (200, 200), (250, 250)]
        again = cat.ingest_stream(prepared_cards(lines, workers=0), batch=100)
        assert again.stored == () and again.unchanged_total == 250
        assert cat.count() == 250 and cat.index_count() == 250


def test_worker_processes_prepare_the_same_rows_in_order(tmp_path: Path) -> None:
    lines = _write(tmp_path / "cards.jsonl", 450)
    local = [p.fps for p in prepared_cards(lines, workers=0)]
    pooled = [p.fps for p in prepared_cards(lines, workers=2)]
    assert pooled == local and len(local) == 450


def test_kill_9_mid_ingest_then_rerun_leaves_every_card_once(tmp_path: Path) -> None:
    lines = _write(tmp_path / "cards.jsonl", 3000)
    catalog = tmp_path / "c.sqlite3"
    proc = subprocess.Popen([sys.executable, "-m", "launchcard.cli", "ingest", "--cards", str(lines), "--catalog",
                             str(catalog), "--batch", "50", "--workers", "0", "--quiet"], env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    stored = 0
    while time.monotonic() < deadline and stored < 100:  # killed after some batches committed, mid-way
        time.sleep(0.05)
        if catalog.exists():
            try:
                with sqlite3.connect(catalog, timeout=1) as db:
                    stored = db.execute("SELECT COUNT(*) FROM captures").fetchone()[0]
            except sqlite3.Error:
                stored = 0
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    with Catalog(catalog) as cat:
        partial = cat.count()
    assert 0 < partial < 3000 and partial % 50 == 0  # whole batches only: nothing of the one in flight
    run = _cli("ingest", "--cards", str(lines), "--catalog", str(catalog), "--batch", "500", "--quiet")
    assert run.returncode == 0, run.stderr
    assert f"stored {3000 - partial} card(s), {partial} unchanged" in run.stdout
    with sqlite3.connect(catalog) as db:
        assert db.execute("SELECT COUNT(*), COUNT(DISTINCT model) FROM captures").fetchone() == (3000, 3000)
        assert db.execute("SELECT COUNT(*) FROM model_index").fetchone() == (3000,)
        assert db.execute("SELECT COUNT(*) FROM model_search").fetchone() == (3000,)


def test_bad_line_is_one_line_naming_file_and_line_and_keeps_what_came_before(tmp_path: Path) -> None:
    lines = _write(tmp_path / "cards.jsonl", 5)
    with lines.open("a", encoding="utf-8") as fh:
        fh.write('{"schema": "launchcard.launch-card/v1", "model": 7}\n')
    catalog = tmp_path / "c.sqlite3"
    run = _cli("ingest", "--cards", str(lines), "--catalog", str(catalog), "--batch", "2", "--workers", "0", "--quiet")
    assert run.returncode == 2
    assert run.stderr.strip().count("\n") == 0 and f"{lines}:6" in run.stderr and "not a launch card" in run.stderr
    with Catalog(catalog) as cat:
        assert cat.count() == 4  # two whole batches committed; the batch holding the bad line is not
    missing = _cli("ingest", "--cards", str(tmp_path / "nope.jsonl"), "--catalog", str(catalog))
    assert missing.returncode == 2 and "card file not found" in missing.stderr


def test_a_bad_first_card_leaves_no_new_catalog_and_an_old_one_as_it_was(tmp_path: Path) -> None:
    """`ingest --cards bad.json --catalog new.db` refused the first line but left a new, empty 104 KiB catalog
    behind (qa11).  Now nothing is created; an existing catalog keeps what it held."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"bad": 1}\n', encoding="utf-8")
    catalog = tmp_path / "new.sqlite3"
    run = _cli("ingest", "--cards", str(bad), "--catalog", str(catalog), "--workers", "0", "--quiet")
    assert run.returncode == 2 and f"{bad}:1" in run.stderr and not catalog.exists(), run.stderr
    assert not list(tmp_path.glob("new.sqlite3*"))
    good = _write(tmp_path / "cards.jsonl", 3)
    assert _cli("ingest", "--cards", str(good), "--catalog", str(catalog), "--quiet").returncode == 0
    run = _cli("ingest", "--cards", str(bad), "--catalog", str(catalog), "--workers", "0", "--quiet")
    assert run.returncode == 2 and catalog.exists()
    with Catalog(catalog) as cat:
        assert cat.count() == 3


def test_stream_memory_stays_flat(tmp_path: Path) -> None:
    """Peak RSS of the ingest process is the same for 1,000 and 4,000 cards (one batch is held, not the input).

    The peak is the process's own VmHWM: ``ru_maxrss`` of a process forked from pytest keeps pytest's own peak
    across exec (Linux), which says nothing about the ingest."""
    def peak(n: int) -> int:
        lines = _write(tmp_path / f"c{n}.jsonl", n)
        code = (f"import sys; sys.argv = ['launchcard', 'ingest', '--cards', {str(lines)!r}, '--catalog', "
                f"{str(tmp_path / f'c{n}.sqlite3')!r}, '--batch', '250', '--workers', '0', '--quiet']\n"
                "from launchcard.cli import main\ncode = main(sys.argv[1:])\n"
                "print(next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM:')))\n"
                "sys.exit(code)")
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=600,
                             check=False)
        assert run.returncode == 0, run.stderr
        return int(run.stdout.strip().splitlines()[-1])

    small, large = peak(1000), peak(4000)
    assert large < 300_000  # kB
    assert large - small < 25_000, (small, large)  # 3,000 more cards: less than 25 MB more


def _reference(rows: list[IndexRow], query: IndexQuery) -> tuple[list[str], dict[str, dict[str, int]], int]:
    """The index's meaning, as a plain filter over rows: substring text match on model and title, a facet's
    counts applying every other filter."""
    def ok(r: IndexRow, skip: str | None) -> bool:
        q = query.q.strip().lower()
        if q and q not in f"{r.model} {r.title}".lower():
            return False
        for name, want in query.selected().items():
            if name == skip:
                continue
            if want not in r.facet(name):
                return False
            if name == "hardware" and query.hw_status and r.hardware.get(want) != query.hw_status:
                return False
        return True

    hits = [r for r in rows if ok(r, None)]
    if query.sort == "size":
        hits.sort(key=lambda r: (r.params_b is None, -(r.params_b or 0.0), r.model.lower()))
    elif query.sort == "updated":
        hits.sort(key=lambda r: (r.updated is None, "" if r.updated is None else
                                 "".join(chr(0x10FFFF - ord(c)) for c in r.updated), r.model.lower()))
    else:
        hits.sort(key=lambda r: r.model.lower())
    counts: dict[str, dict[str, int]] = {}
    for name in FACETS:
        tally: dict[str, int] = {}
        for r in rows:
            if ok(r, name):
                for v in dict.fromkeys(r.facet(name)):
                    tally[v] = tally.get(v, 0) + 1
        counts[name] = dict(sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])))
    start = (query.page - 1) * query.per_page
    return [r.model for r in hits[start:start + query.per_page]], counts, len(hits)


def test_filter_counts_follow_models_that_change_combination(tmp_path: Path) -> None:
    """Facet counts under filters come from the facet combinations: a model whose facets change moves to another
    combination (the one it left may then have no model) and the counts stay the plain filter's answer, also on
    the connection that wrote the change (its memos are dropped with each write)."""
    cards = _cards()
    queries = [IndexQuery(task="text", arch="moe"), IndexQuery(arch="dense", hardware="h100"),
               IndexQuery(task="multimodal", hardware="h100", hw_status="verified"), IndexQuery(arch="moe"),
               IndexQuery(engine="vllm", arch="dense", size="10-40B")]
    with Catalog(tmp_path / "c.sqlite3") as cat:
        cat.ingest(cards)
        before = [cat.search(q) for q in queries]  # counted (and kept) before the change, on this connection
        assert all(page.total for page in before[:2])
        moved = []
        for card in cards[:6]:  # new facets for six models: architecture flipped, the Hub task changed
            facts = tuple(f.model_copy(update={"value": "dense" if f.value == "moe" else "moe"})
                          if f.name == "architecture_family" else
                          f.model_copy(update={"value": ["omni"]}) if f.name == "tasks" else f for f in card.facts)
            moved.append(card.model_copy(update={"facts": facts,
                                                  "evidence": tuple(e.model_copy(update={"sha256": "e" * 64})
                                                                    for e in card.evidence)}))
        assert len(cat.ingest(moved).stored) == 6
        rows = [r for m in cat.index_models() if (r := cat.index_row(m)) is not None]
        assert sum(r.facet("task") == ("omni",) for r in rows) == 6
        for query in [*queries, IndexQuery(task="omni", arch="moe")]:
            page = cat.search(query)
            assert ([r.model for r in page.rows], page.counts, page.total) == _reference(rows, query), query
        assert cat.query("SELECT COUNT(*) FROM model_index WHERE combo_id IS NULL") == [(0,)]


def test_sql_index_equals_the_plain_filter(tmp_path: Path) -> None:
    with Catalog(tmp_path / "c.sqlite3") as cat:
        cat.ingest(_cards())
        rows = [r for m in cat.index_models() if (r := cat.index_row(m)) is not None]
        assert len(rows) == 30
        for query in [*QUERIES, IndexQuery(q="mo"), IndexQuery(q="%"), IndexQuery(q='"x'), IndexQuery(q="ORG1/MODEL")]:
            page = cat.search(query)
            assert ([r.model for r in page.rows], page.counts, page.total) == _reference(rows, query), query


@pytest.mark.parametrize("q", ["ab\x00", "\x00q", "q\x00", "\x00", "\U00052576\x99\x006\x80\U00022591"])
def test_a_text_query_holding_nul_is_bad_input_not_a_database_error(tmp_path: Path, q: str) -> None:
    """SQLite's FTS5 stopped at the NUL ("unterminated string", a DbError the web let escape as a server error) and
    LIKE read its pattern only up to it ("\\x00q" matched all 30 models): the store refuses the text, naming q."""
    with Catalog(tmp_path / "c.sqlite3") as cat:
        cat.ingest(_cards())
        for read in (cat.search, cat.tally, cat.page_rows):
            with pytest.raises(InputError, match=r"NUL character \(U\+0000\)") as err:
                read(IndexQuery(q=q))
            assert err.value.field == "q" and "\n" not in err.value.one_line()
        assert cat.search(IndexQuery(q="model-1")).total == 11  # a text without it is searched as before


_json = st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
                     lambda kids: st.lists(kids, max_size=3) | st.dictionaries(
                         st.sampled_from(["a", "b", "url", "revision", "verdict", "c"]), kids, max_size=4),
                     max_leaves=25)


def _strip(value: Any) -> Any:  # the fingerprint's definition: two passes, parse then strip
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in _VOLATILE and v not in (None, [], {})}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["model", "facts", "url", "x"]), _json, max_size=4))
def test_one_pass_fingerprint_equals_the_definition(doc: dict[str, Any]) -> None:
    import hashlib

    text = json.dumps(doc)
    assert content_fingerprint(text) == hashlib.sha256(json.dumps(_strip(json.loads(text)), sort_keys=True)
                                                       .encode()).hexdigest()
