import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from launchcard.card import Evidence, Fact, LaunchCard, SourceRef
from launchcard.errors import CatalogError
from launchcard.store import Catalog, default_catalog_path, diff_cards

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"


def _card(value: int, sha: str = "a" * 64, at: int = 1) -> LaunchCard:
    ev = Evidence(kind="vllm-recipes", url="https://x/models/m.yaml#L34", path="models/m.yaml", line=34, sha256=sha)
    return LaunchCard(model="org/m", facts=(Fact(name="context_tokens", value=value, evidence=ev),),
                      evidence=(SourceRef(kind="vllm-recipes", path="models/m.yaml", revision="r1", sha256=sha),),
                      captured_at=datetime(2026, 1, at, tzinfo=UTC), captured_by="vllm-recipes")


def test_history_and_diff(tmp_path):
    with Catalog(tmp_path / "c.sqlite3") as cat:
        cat.add([_card(1000)])
        cat.add([_card(2000, "b" * 64, 2)])
        caps = cat.captures("org/m")
        assert len(caps) == 2 and cat.latest("org/m").facts[0].value == 2000
        changes = diff_cards(cat.card(caps[0].id), cat.card(caps[1].id))
    lines = [c.line() for c in changes]
    assert any("context_tokens" in x and "1000 -> 2000" in x and "#L34" in x for x in lines)
    assert any(x.startswith("~ source vllm-recipes models/m.yaml") for x in lines)


def test_failed_write_leaves_catalog_as_it_was(tmp_path):
    with Catalog(tmp_path / "c.sqlite3") as cat:
        cat.add([_card(1)])

        def cards():
            yield _card(2)
            raise RuntimeError("boom")

        with pytest.raises(RuntimeError):
            cat.add(cards())
        assert cat.count() == 1


def test_default_path_and_missing_model(tmp_path, monkeypatch):
    monkeypatch.delenv("LAUNCHCARD_CATALOG", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_catalog_path().name == "catalog.sqlite3"
    with Catalog(tmp_path / "c.sqlite3") as cat, pytest.raises(CatalogError, match="no card"):
        cat.latest("org/none")


def _run(*args, env=None):
    return subprocess.run([str(REPO / ".venv/bin/launchcard"), *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def test_ingest_skips_bad_documents_and_stores_the_rest(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("vllm-recipes", "dynamo", "hf"):
        (corpus / name).symlink_to(CORPUS / name)
    (corpus / "sglang-cookbook" / "Broken").mkdir(parents=True)
    (corpus / "sglang-cookbook" / "Broken" / "Broken.mdx").write_text("# x\n```bash\nsglang serve --tp 8\n")
    (corpus / "sglang-cookbook" / "GLM-5.3-Flash").symlink_to(CORPUS / "sglang-cookbook" / "GLM-5.3-Flash")
    (corpus / "providers" / "bad").mkdir(parents=True)
    (corpus / "providers" / "bad" / "config.yaml").write_text("model_metadata:\n  repo_id: org/m\n")
    catalog = tmp_path / "cat.sqlite3"
    out = _run("ingest", "--corpus", str(corpus), "--catalog", str(catalog), "--quiet")
    assert out.returncode == 0, out.stderr
    assert "Broken.mdx" in out.stderr and "truncated" in out.stderr
    assert "config.yaml" in out.stderr and "no start command" in out.stderr
    assert "skipped 2 bad document(s)" in out.stdout
    with Catalog(catalog) as cat:
        assert "zai-org/GLM-5.3-Flash" in cat.models() and len(cat.models()) > 150
    # a second ingest of the same documents stores nothing (the models are marked checked) ...
    with Catalog(catalog) as cat:
        count, checked = cat.count(), cat.checked_at("zai-org/GLM-5.3-Flash")["zai-org/GLM-5.3-Flash"]
    again = _run("ingest", "--corpus", str(corpus), "--catalog", str(catalog), "--quiet")
    assert again.returncode == 0 and "stored 0 card(s)" in again.stdout, again.stdout
    with Catalog(catalog) as cat:
        assert cat.count() == count and cat.checked_at()["zai-org/GLM-5.3-Flash"] >= checked
    # ... unless forced; then a diff between the two captures
    assert _run("ingest", "--corpus", str(corpus), "--catalog", str(catalog), "--quiet", "--force").returncode == 0
    diff = _run("diff", "zai-org/GLM-5.3-Flash", "--catalog", str(catalog))
    assert diff.returncode == 0 and "capture" in diff.stdout
    shown = _run("card", "zai-org/GLM-5.3-Flash", "--catalog", str(catalog), "--json")
    assert json.loads(shown.stdout)["model"] == "zai-org/GLM-5.3-Flash"


def test_card_from_missing_catalog_model_is_one_line(tmp_path):
    with Catalog(tmp_path / "c.sqlite3") as cat:
        cat.add([_card(1)])
    out = _run("card", "org/none", "--catalog", str(tmp_path / "c.sqlite3"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.splitlines() == [f"launchcard: error: --catalog {tmp_path / 'c.sqlite3'}: no card for "
                                       "'org/none' in the catalog; did you mean org/m?"]


def test_card_store_keeps_one_capture_of_an_unchanged_card_as_ingest_does(tmp_path, capsys):
    """Issue 21 item 7: `card --store` stored a duplicate capture each time (then `diff` said 0 changes)."""
    from launchcard.cli import main

    db = tmp_path / "c.sqlite3"
    args = ["card", "openai/gpt-oss-20b", "--corpus", str(CORPUS), "--catalog", str(db), "--store", "--json"]
    assert main(args) == 0
    assert "stored capture" in capsys.readouterr().err
    assert main(args) == 0
    assert "unchanged: capture" in capsys.readouterr().err
    assert main(["ingest", "--corpus", str(CORPUS), "--catalog", str(db), "--quiet"]) == 0
    with Catalog(db) as cat:
        assert len(cat.captures("openai/gpt-oss-20b")) == 1  # neither the second --store nor ingest added one


@pytest.mark.parametrize("content", [b"x", b"my notes\n", b"\x00" * 99])
def test_a_file_that_is_not_a_sqlite_database_is_refused_and_left_as_it_was(tmp_path: Path, content: bytes) -> None:
    """SQLite opens a file shorter than its 100-byte header as an empty database: `ingest --catalog one.db` on a
    1-byte file wrote the catalog's tables over it (qa11).  Now refused by the header, the file untouched."""
    path = tmp_path / "mine.db"
    path.write_bytes(content)
    with pytest.raises(CatalogError, match="not a SQLite database") as got:
        Catalog(path)
    assert got.value.field == "catalog" and path.read_bytes() == content


@pytest.mark.parametrize("url", ["mysql://u:pw@h/db", "sqlite:///x.db"])
def test_a_url_of_another_database_is_refused_and_nothing_is_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  url: str) -> None:
    """qa12: `--catalog mysql://u@h/db` (or SQLAlchemy's sqlite:///x.db) was read as a path: `ingest` made the
    folders mysql:/u@h/ in the working directory and a SQLite catalog in them; `serve`/`card` said "catalog file not
    found" of the path mysql:/u@h/db.  The same from $LAUNCHCARD_CATALOG; the password is not shown."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CatalogError, match=r"not a catalog launchcard opens \(a (mysql|sqlite):// URL\)") as got:
        Catalog(url)
    assert got.value.field == "catalog" and "pw" not in str(got.value)
    monkeypatch.setenv("LAUNCHCARD_CATALOG", url)
    with pytest.raises(CatalogError, match="not a catalog launchcard opens"):
        Catalog()
    out = _run("ingest", "--corpus", str(CORPUS), "--catalog", url, "--quiet")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "not a catalog launchcard opens" in out.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_empty_or_missing_file_is_a_new_catalog(tmp_path: Path) -> None:
    (tmp_path / "empty.db").write_bytes(b"")
    for name in ("empty.db", "new.db"):
        with Catalog(tmp_path / name) as cat:
            assert cat.dialect == "sqlite"
        assert (tmp_path / name).read_bytes().startswith(b"SQLite format 3\x00")
