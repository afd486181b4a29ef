"""The catalog on a real PostgreSQL server behaves as the embedded SQLite one: same captures, same unchanged
detection, same index answers, one writer at a time, drift verdicts, and the web catalog over it.

The server is started by tests/pg_support.py (Debian's binaries, as the postgres user, Unix socket only).
Where it cannot start the tests skip with the reason, except under LAUNCHCARD_REQUIRE_POSTGRES=1 (CI), where
that is a failure.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from launchcard.errors import CatalogError
from launchcard.store import Catalog, IndexQuery, redact
from pg_support import PgServer, start_postgres
from test_store_ingest import _card

TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def pg() -> Iterator[PgServer]:
    server = start_postgres()
    if isinstance(server, str):
        if os.environ.get("LAUNCHCARD_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required here but could not start: {server}")
        pytest.skip(server)
    yield server
    server.stop()


def _cards() -> list:  # type: ignore[type-arg]
    from launchcard.card import EngineEnv, Fact, SourceRef

    out = []
    for i in range(30):
        base = _card(f"org{i % 3}/model-{i}", sha=f"{i:064x}")
        env = EngineEnv(engine="vllm" if i % 2 else "sglang", argv=("vllm", "serve", base.model),
                        validated_hardware=("h100",) if i % 4 == 0 else (), hardware="mi300x" if i % 5 == 0 else None,
                        source=SourceRef(kind="vllm-recipes"))
        facts = (*base.facts, Fact(name="params_total_b", value=float(3 + 17 * i)),
                 Fact(name="architecture_family", value="moe" if i % 3 else "dense"),
                 Fact(name="tasks", value=["text"] if i % 2 else ["text", "multimodal"]))
        out.append(base.model_copy(update={"envs": (env,), "facts": facts}))
    return out


QUERIES = [IndexQuery(), IndexQuery(q="model-1"), IndexQuery(q="G0/"), IndexQuery(q="1"),
           IndexQuery(arch="moe", sort="size"), IndexQuery(hardware="h100", hw_status="verified"),
           IndexQuery(task="multimodal", engine="vllm", per_page=5, page=2),
           IndexQuery(size="150-500B", sort="updated"), IndexQuery(q="model", hardware="mi300x"),
           # two and three filters, no text: counted over the facet combinations
           IndexQuery(task="text", arch="moe", sort="size"), IndexQuery(arch="dense", hardware="h100"),
           IndexQuery(task="multimodal", arch="moe", hardware="h100", hw_status="verified"),
           IndexQuery(engine="sglang", hardware="mi300x", hw_status="declared", page=2, per_page=3)]


def test_postgres_catalog_answers_as_sqlite_does(pg: PgServer, tmp_path: Path) -> None:
    url = pg.new_database()
    cards = _cards()
    with Catalog(url) as pgc, Catalog(tmp_path / "c.sqlite3") as lite:
        assert pgc.dialect == "postgresql" and lite.dialect == "sqlite"
        assert pgc.schema_version == lite.schema_version == 7
        for cat in (pgc, lite):
            first = cat.ingest(cards, checked_at="2026-01-01T00:00:00+00:00")
            assert len(first.stored) == 30
            again = cat.ingest(cards, checked_at="2026-01-02T00:00:00+00:00")
            assert again.stored == () and len(again.unchanged) == 30  # unchanged documents: nothing stored
            changed = cat.ingest([_card("org0/model-0", sha="f" * 64)], checked_at="2026-01-03T00:00:00+00:00")
            assert len(changed.stored) == 1  # a changed document
        assert pgc.models() == lite.models() and pgc.count() == lite.count() == 31
        assert pgc.checked_at() == lite.checked_at()
        assert [c.docs_sha256 for c in pgc.captures("org0/model-0")] == \
            [c.docs_sha256 for c in lite.captures("org0/model-0")]
        assert pgc.latest("org0/model-0") == lite.latest("org0/model-0")
        for query in QUERIES:  # the index: same page, same facet counts, same total
            a, b = pgc.search(query), lite.search(query)
            assert (a.total, [r.model for r in a.rows], a.counts) == (b.total, [r.model for r in b.rows], b.counts), \
                query
        assert pgc.search(IndexQuery(q="model-1")).total == 11  # model-1, model-10..19
        assert pgc.by_hardware("h100", None) == lite.by_hardware("h100", None)
        with pytest.raises(CatalogError, match="no card for"):
            pgc.latest("org0/missing")


def test_one_writer_at_a_time_on_postgres(pg: PgServer) -> None:
    """Two processes ingesting the same cards at once: one stores them, the other waits, then finds them."""
    url = pg.new_database()
    Catalog(url).close()
    go = Path(pg.root) / f"go-{os.getpid()}"
    code = f"""
import sys, time
from pathlib import Path
sys.path.insert(0, {str(TESTS)!r})
from test_store_ingest import _card
from launchcard.store import Catalog
cards = [_card(f"org/m{{i}}", sha=f"{{i:064x}}") for i in range(40)]
while not Path({str(go)!r}).exists():
    time.sleep(0.01)
with Catalog({url!r}) as cat:
    print(len(cat.ingest(cards).stored))
"""
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    go.unlink()
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    assert sorted(int(o[0]) for o in outs) == [0, 40]
    with Catalog(url) as cat:
        assert cat.count() == 40 and len(cat.checked_at()) == 40


def test_streaming_ingest_and_drift_on_postgres(pg: PgServer, tmp_path: Path) -> None:
    from launchcard.store import drift_badges

    url = pg.new_database()
    lines = tmp_path / "cards.jsonl"
    lines.write_text("".join(c.model_dump_json(by_alias=True) + "\n" for c in _cards()), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(TESTS.parent / "src")}
    run = subprocess.run([sys.executable, "-m", "launchcard.cli", "ingest", "--cards", str(lines), "--catalog", url,
                          "--batch", "7", "--workers", "0", "--quiet"], capture_output=True, text=True, env=env,
                         timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    assert "stored 30 card(s), 0 unchanged" in run.stdout
    assert "postgresql://postgres@/" in run.stdout  # where it stored them, as given (no password to hide)

    class _Cmd:
        def __init__(self, model: str, key: str) -> None:
            self.model, self.key, self.source, self.role = model, key, "vllm-recipes", "single"

    class _Drift:
        def __init__(self, model: str, key: str, verdicts: list[tuple[str, str]]) -> None:
            self.command, self.verdicts = _Cmd(model, key), verdicts

        def reasons_at(self, release: str) -> tuple[str, ...]:
            return ()

    class _Report:
        def __init__(self) -> None:
            self.engine = "vllm"
            self.commands = [_Drift("org0/model-0", "k1", [("0.10.0", "pass"), ("0.11.0", "fail")]),
                             _Drift("org0/model-0", "k2", [("0.10.0", "pass"), ("0.11.0", "pass")])]

    from launchcard.store import store_drift

    assert drift_badges(url, "org0/model-0") == {}  # nothing stored yet: no table, no error
    assert store_drift(url, _Report(), "2026-01-01T00:00:00+00:00") == 4
    assert drift_badges(url, "org0/model-0") == {"vllm": {"0.10.0": "pass", "0.11.0": "fail"}}


def test_web_catalog_over_postgres(pg: PgServer) -> None:
    from fastapi.testclient import TestClient

    from launchcard.web import create_app

    url = pg.new_database()
    with Catalog(url) as cat:
        cat.ingest(_cards())
    with TestClient(create_app(url)) as client:
        res = client.get("/index.json", params={"q": "model-2", "arch": "moe"})
        assert res.status_code == 200
        data = res.json()
        assert data["total"] == len([m for m in data["models"]]) and data["total"] >= 1
        assert all("model-2" in m["model"] for m in data["models"])
        assert client.get("/").status_code == 200


def test_bad_postgres_url_is_one_line(pg: PgServer) -> None:
    bad = f"postgresql://postgres:secret@/nosuchdb?host={pg.socket_dir}&port={pg.port}"
    with pytest.raises(CatalogError) as err:
        Catalog(bad)
    line = err.value.one_line()
    assert "\n" not in line and "cannot open the catalog" in line and "secret" not in line
    assert redact(bad) in line
