"""The web catalog: model pages, the command builder, performance and hardware pages, JSON twins.

Public API: :func:`create_app` (a FastAPI application over a catalog and a recipes checkout) and
:func:`app_from_env` (the same, configured from the environment: the application factory each
worker process of a multi-worker server calls).
FastAPI, Jinja2 and nh3 are imported only here, never on the CLI's start-up path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from launchcard.web._app import CSP, create_app

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["CSP", "app_from_env", "create_app"]


def app_from_env() -> FastAPI:
    """``create_app`` from ``LAUNCHCARD_CATALOG``, ``LAUNCHCARD_RECIPES`` (else ``LAUNCHCARD_CORPUS``'s
    ``vllm-recipes/``) and ``LAUNCHCARD_BENCHMARKS`` (folders, ``os.pathsep``-separated), warmed up.

    For several worker processes over one catalog, e.g.
    ``uvicorn --factory launchcard.web:app_from_env --workers 4`` (what ``launchcard serve --workers 4`` runs).
    """
    catalog = os.environ.get("LAUNCHCARD_CATALOG") or None
    recipes = os.environ.get("LAUNCHCARD_RECIPES") or None
    corpus = os.environ.get("LAUNCHCARD_CORPUS") or None
    if recipes is None and corpus is not None and (Path(corpus) / "vllm-recipes").is_dir():
        recipes = str(Path(corpus) / "vllm-recipes")
    benchmarks = [Path(p) for p in (os.environ.get("LAUNCHCARD_BENCHMARKS") or "").split(os.pathsep) if p]
    app = create_app(catalog, Path(recipes) if recipes else None, benchmarks)
    app.state.warm()
    return app
