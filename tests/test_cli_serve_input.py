"""`launchcard serve` refuses a catalog that is not there (it created an empty one and served 0 models) and a
--benchmarks folder that is not there, in one line, exit 2, before it listens."""

from __future__ import annotations

from pathlib import Path

from helpers import run_cli


def test_serve_refuses_a_missing_catalog_and_creates_nothing(tmp_path: Path) -> None:
    target = tmp_path / "typo.sqlite3"
    out = run_cli("serve", "--catalog", str(target), "--port", "1")
    assert out.returncode == 2 and "catalog file not found" in out.stderr and out.stderr.count("\n") == 1
    assert not target.exists()


def test_serve_refuses_a_missing_benchmarks_folder(tmp_path: Path) -> None:
    from launchcard.store import Catalog

    catalog = tmp_path / "catalog.sqlite3"
    Catalog(catalog).close()  # an (empty) catalog that exists: the benchmarks folder is what is wrong
    out = run_cli("serve", "--catalog", str(catalog), "--benchmarks", str(tmp_path / "nope"), "--port", "1")
    assert out.returncode == 2 and out.stderr.startswith("launchcard: error: --benchmarks")


def test_serve_refuses_a_corpus_folder_that_is_not_there(tmp_path: Path) -> None:
    """`serve --corpus /typo` served the catalog without recipes (no builder), not a word said."""
    from launchcard.store import Catalog

    catalog = tmp_path / "catalog.sqlite3"
    Catalog(catalog).close()
    (tmp_path / "file").write_text("x")
    for corpus in (tmp_path / "nope", tmp_path / "file"):
        out = run_cli("serve", "--catalog", str(catalog), "--corpus", str(corpus), "--port", "1")
        assert out.returncode == 2 and out.stderr == (
            f"launchcard: error: --corpus {corpus}: corpus folder not found; pass the folder holding vllm-recipes/, "
            "sglang-cookbook/, providers/, dynamo/, hf/\n")


def test_serve_refuses_a_taken_port_before_loading_anything(tmp_path: Path) -> None:
    """A port another server holds was found by uvicorn after the catalog was loaded and warmed: "serving N
    model(s)" then uvicorn's "ERROR: [Errno 98] ..." log line and exit 3."""
    import socket

    from launchcard.store import Catalog

    catalog = tmp_path / "catalog.sqlite3"
    Catalog(catalog).close()
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        out = run_cli("serve", "--catalog", str(catalog), "--port", str(port))
    assert out.returncode == 2 and out.stderr == (
        f"launchcard: error: --port {port}: cannot listen on 127.0.0.1:{port} (Address already in use); choose a "
        "free port with --port (or stop the server holding it)\n")
    out = run_cli("serve", "--catalog", str(catalog), "--host", "nonsense.invalid", "--port", "1")
    assert out.returncode == 2 and out.stderr.startswith("launchcard: error: --host nonsense.invalid: cannot listen")
