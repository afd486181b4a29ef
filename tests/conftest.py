"""Shared fixtures.  Third-party data is read in place from ../shared, never copied."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("LAUNCHCARD_SHARED", ROOT.parent / "shared"))
RECIPES = SHARED / "corpus" / "vllm-recipes"
GOLDEN = SHARED / "testdata" / "vllm-recipes-golden-sample.jsonl"


# Variables that steer the test run itself (where data lives, whether live tests must run).
_TEST_CONTROLS = {"LAUNCHCARD_SHARED", "LAUNCHCARD_REQUIRE_LIVE", "LAUNCHCARD_UPDATE_GOLDEN"}


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's LAUNCHCARD_* or HF_* settings (catalog, recipes, Hub endpoint, token).

    The user data dir points into the test's own folder, so a default catalog never lands in $HOME.
    """
    for name in list(os.environ):
        if (name.startswith(("LAUNCHCARD_", "HF_")) and name not in _TEST_CONTROLS):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"shared data not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def recipes_dir(shared_dir: Path) -> Path:
    return RECIPES


@pytest.fixture(scope="session")
def recipe_repo(recipes_dir: Path):
    from launchcard.sources.vllm_recipes import load_recipes

    return load_recipes(recipes_dir)


@pytest.fixture(scope="session")
def browser_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One real ``launchcard serve`` over a freshly ingested corpus catalog for every browser test module
    (they only read it): one ingest and one server start instead of one per module."""
    from web_support import ingest, require_browser, serving

    require_browser()
    tmp = tmp_path_factory.mktemp("browser")
    ingest(tmp / "catalog.sqlite3")
    with serving(tmp / "catalog.sqlite3", log=tmp / "serve.log") as base:
        yield base


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A catalog freshly ingested from the corpus, one per test module (the in-process web tests read it)."""
    from web_support import ingest

    path = tmp_path_factory.mktemp("web") / "catalog.sqlite3"
    ingest(path)
    return path


@pytest.fixture(scope="module")
def client(catalog: Path) -> Iterator[TestClient]:
    """The web app over that catalog, the corpus's vLLM recipes and the SGLang benchmark fixtures."""
    from fastapi.testclient import TestClient

    from launchcard.web import create_app
    from web_support import BENCHMARKS, CORPUS

    with TestClient(create_app(catalog, CORPUS / "vllm-recipes", [BENCHMARKS])) as c:
        yield c
