"""The web catalog: model pages, the command builder, performance and hardware pages, JSON twins.

Public API: :func:`create_app` (a FastAPI application over a catalog and a recipes checkout).
FastAPI, Jinja2 and nh3 are imported only here, never on the CLI's start-up path.
"""

from __future__ import annotations

from launchcard.web._app import CSP, create_app

__all__ = ["CSP", "create_app"]
