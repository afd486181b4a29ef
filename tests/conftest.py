"""Shared fixtures.  Third-party data is read in place from ../shared, never copied."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("LAUNCHCARD_SHARED", ROOT.parent / "shared"))
RECIPES = SHARED / "corpus" / "vllm-recipes"
GOLDEN = SHARED / "testdata" / "vllm-recipes-golden-sample.jsonl"


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
