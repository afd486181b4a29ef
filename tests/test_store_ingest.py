"""Catalog ingests store only changed documents, record checked_at, migrate old files and survive concurrency."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from launchcard.card import Evidence, Fact, LaunchCard, SourceRef
from launchcard.store import Catalog, CommitRef, content_fingerprint, docs_fingerprint

REPO = Path(__file__).resolve().parents[1]


def _card(model: str = "org/m", sha: str = "a" * 64, value: int = 1) -> LaunchCard:
    ev = Evidence(kind="vllm-recipes", path=f"models/{model}.yaml", line=3, sha256=sha, revision="r1")
    return LaunchCard(model=model, facts=(Fact(name="context_tokens", value=value, evidence=ev),),
                      evidence=(SourceRef(kind="vllm-recipes", path=f"models/{model}.yaml", revision="r1", sha256=sha,
                                          committed_at=datetime(2026, 1, 2, tzinfo=UTC)),),
                      captured_at=datetime(2026, 1, 3, tzinfo=UTC), captured_by="vllm-recipes")


def test_unchanged_documents_store_nothing_and_are_checked(tmp_path):
    with Catalog(tmp_path / "c.sqlite3") as cat:
        first = cat.ingest([_card(), _card("org/n")], checked_at="2026-01-01T00:00:00+00:00")
        assert len(first.stored) == 2 and first.unchanged == ()
        again = cat.ingest([_card(), _card("org/n")], checked_at="2026-01-02T00:00:00+00:00")
        assert again.stored == () and set(again.unchanged) == {"org/m", "org/n"}  # same sha256s: no capture
        assert cat.count() == 2 and cat.checked_at() == {"org/m": "2026-01-02T00:00:00+00:00",
                                                         "org/n": "2026-01-02T00:00:00+00:00"}
        # same cited documents, but the card says something else (a strategy or the taxonomy changed): stored
        assert len(cat.ingest([_card("org/n", value=2)]).stored) == 1
        # only times, revisions and URLs differ: not stored
        moved = _card("org/n", value=2).model_copy(update={"captured_at": datetime(2026, 2, 1, tzinfo=UTC)})
        assert cat.ingest([moved]).stored == ()
        assert content_fingerprint(moved.model_dump_json()) == content_fingerprint(
            _card("org/n", value=2).model_dump_json())
        changed = cat.ingest([_card(sha="b" * 64)])
        assert len(changed.stored) == 1 and cat.count() == 4
        caps = cat.captures("org/m")
        assert caps[-1].commit_id == "r1" and caps[-1].committed_at == "2026-01-02T00:00:00+00:00"
        assert caps[-1].docs_sha256 == docs_fingerprint(_card(sha="b" * 64))
        forced = cat.ingest([_card(sha="b" * 64)], force=True)
        assert len(forced.stored) == 1
        # a history walk: a capture of the same commit with the same documents is already stored
        walk = CommitRef("c" * 40, "2025-12-01T00:00:00+00:00")
        assert len(cat.ingest([_card(sha="a" * 64)], commit=walk).stored) == 1
        cat.ingest([_card(sha="b" * 64)])
        assert cat.ingest([_card(sha="a" * 64)], commit=walk).stored == ()
        assert cat.captures("org/m")[-2].commit_id == "c" * 40


V1 = """
CREATE TABLE captures (id INTEGER PRIMARY KEY AUTOINCREMENT, model TEXT NOT NULL, captured_at TEXT NOT NULL,
    captured_by TEXT, card_sha256 TEXT NOT NULL, card_json TEXT NOT NULL);
CREATE INDEX captures_model ON captures(model, id);
CREATE TABLE capture_sources (capture_id INTEGER NOT NULL REFERENCES captures(id) ON DELETE CASCADE,
    kind TEXT NOT NULL, path TEXT, url TEXT, revision TEXT, sha256 TEXT);
CREATE TABLE facts (capture_id INTEGER NOT NULL REFERENCES captures(id) ON DELETE CASCADE,
    name TEXT NOT NULL, scope TEXT, value_json TEXT, kind TEXT, url TEXT, line INTEGER);
"""


def test_catalog_written_before_the_upgrade_is_migrated(tmp_path):
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(V1)
    card = _card()
    db.execute("INSERT INTO captures(model, captured_at, captured_by, card_sha256, card_json) VALUES (?,?,?,?,?)",
               (card.model, "2026-01-03T00:00:00+00:00", "x", "f" * 64,
                card.model_dump_json(by_alias=True, exclude={"evidence": {0: {"committed_at"}}})))
    db.execute("INSERT INTO capture_sources VALUES (1, 'vllm-recipes', 'models/org/m.yaml', NULL, 'r1', ?)",
               ("a" * 64,))
    db.commit()
    db.close()
    with Catalog(path) as cat:
        assert cat.schema_version == 7
        assert cat.captures("org/m")[0].docs_sha256 == docs_fingerprint(card)  # backfilled from its source rows
        assert cat.index_models() == ["org/m"]  # version 3: the model index, filled from the newest capture
        assert cat.ingest([_card()]).stored == ()  # the first ingest after the upgrade stores nothing again
        assert cat.latest("org/m").model == "org/m"
        cat.ensure_tables("CREATE TABLE IF NOT EXISTS drift (capture_id INTEGER, finding TEXT)")
        with cat.transaction() as tx:
            tx.execute("INSERT INTO drift VALUES (1, 'x')")
        assert cat.query("SELECT finding FROM drift") == [("x",)]
    with Catalog(path) as cat:  # opening again: nothing to migrate
        assert cat.count() == 1


WRITER = """
import sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_store_ingest import _card
from launchcard.store import Catalog
cards = [_card(f"org/m{{i}}", sha=f"{{i:064x}}") for i in range(40)]
while not Path({go!r}).exists():
    time.sleep(0.01)
with Catalog({catalog!r}) as cat:
    print(len(cat.ingest(cards).stored))
"""


def test_two_concurrent_ingests_do_not_double_history(tmp_path):
    catalog, go = tmp_path / "c.sqlite3", tmp_path / "go"
    Catalog(catalog).close()
    code = WRITER.format(tests=str(Path(__file__).parent), go=str(go), catalog=str(catalog))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    assert sorted(int(o[0]) for o in outs) == [0, 40]  # one stored everything, the other found it stored
    with Catalog(catalog) as cat:
        assert cat.count() == 40 and len(cat.checked_at()) == 40


def test_a_version_3_index_of_any_layout_is_rebuilt(tmp_path):
    """Version 3 files were written with two index layouts during development; version 4 rebuilds the index
    (derived data) from the captures, so such a file ingests again instead of failing on a missing column."""
    path = tmp_path / "v3.sqlite3"
    with Catalog(path) as cat:
        cat.ingest([_card("org/a"), _card("org/b", sha="b" * 64)])
    db = sqlite3.connect(path)
    db.executescript("DROP TABLE model_rows; DROP TABLE IF EXISTS model_facets; DROP TABLE model_search; "
                     "DROP TABLE model_index;"
                     "CREATE TABLE model_index (model TEXT PRIMARY KEY, capture_id INTEGER NOT NULL, "
                     "row_json TEXT NOT NULL); PRAGMA user_version = 3;")
    db.close()
    with Catalog(path) as cat:
        assert cat.schema_version == 7 and cat.index_models() == ["org/a", "org/b"]
        assert len(cat.ingest([_card("org/c", sha="c" * 64)]).stored) == 1
        assert cat.index_count() == 3
    # version 4 had no facet combinations (5 no sort indexes): its index is rebuilt too, filters count from them
    db = sqlite3.connect(path)
    db.executescript("DROP TABLE combo_facets; DROP TABLE facet_combos; PRAGMA user_version = 4;")
    db.close()
    with Catalog(path) as cat:
        assert cat.schema_version == 7 and cat.index_count() == 3
        assert cat.query("SELECT COUNT(*) FROM model_index WHERE combo_id IS NOT NULL") == [(3,)]
