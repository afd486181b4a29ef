"""Where the package's shipped data files are (``launchcard/data``).

By path next to this module, not through :mod:`importlib.resources`: importing it (with the ``tempfile`` and
``zipfile`` modules its readers pull in) was ~10 ms of every command that reads a shipped table, and the package
is installed as files (``merge._cache`` reads the package by path too). Public (``launchcard.datadir``): every
layer reads shipped data through it (tests/test_architecture.py: a private top-level module is the root
package's, which no package may import).
"""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"


def data_path(*parts: str) -> Path:
    """``launchcard/data/<parts...>``."""
    return DATA_DIR.joinpath(*parts)
