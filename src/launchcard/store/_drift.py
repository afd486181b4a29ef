"""Drift verdicts in the catalog: one row per (model, command, release), for per-release badge rows.

Its own table (``drift_verdicts``) in the catalog (SQLite or PostgreSQL), created on
first use; ``launchcard drift --store`` writes a whole engine's run at once
(replacing the previous run of that engine), pages read ``drift_badges``.
"""

from __future__ import annotations

import json
from typing import Any

from launchcard.errors import CatalogError
from launchcard.store._catalog import Catalog
from launchcard.store._sql import CatalogTarget, DbError

DRIFT_SCHEMA = """
CREATE TABLE IF NOT EXISTS drift_verdicts (
    engine TEXT NOT NULL,
    release TEXT NOT NULL,
    model TEXT NOT NULL,
    command_key TEXT NOT NULL,
    source TEXT NOT NULL,
    role TEXT NOT NULL,
    verdict TEXT NOT NULL,
    reasons TEXT NOT NULL,
    computed_at TEXT NOT NULL,
    PRIMARY KEY (engine, release, command_key)
);
CREATE INDEX IF NOT EXISTS drift_model ON drift_verdicts(model);
"""


def store_drift(path: CatalogTarget, report: Any, computed_at: str) -> int:
    """Replace ``report.engine``'s drift rows with ``report`` (a DriftReport); returns the rows written."""
    rows = [(report.engine, release, d.command.model, d.command.key, d.command.source, d.command.role, v,
             json.dumps(list(d.reasons_at(release))), computed_at)
            for d in report.commands for release, v in d.verdicts]
    with Catalog(path) as cat:
        cat.ensure_tables(DRIFT_SCHEMA)
        try:
            with cat.transaction() as db:
                db.execute("DELETE FROM drift_verdicts WHERE engine = ?", (report.engine,))
                db.executemany(
                    "INSERT INTO drift_verdicts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(engine, release, command_key) DO UPDATE SET model = excluded.model, "
                    "source = excluded.source, role = excluded.role, verdict = excluded.verdict, "
                    "reasons = excluded.reasons, computed_at = excluded.computed_at", rows)
        except DbError as exc:
            raise CatalogError(f"storing drift failed ({exc}); nothing was stored", where=cat.where,
                               field="catalog", fix="close other writers and retry") from exc
    return len(rows)


def drift_badges(path: CatalogTarget, model: str) -> dict[str, dict[str, str]]:
    """engine -> {release: "pass" | "fail" | "n/a"} for ``model`` (fail when any of its commands fails).

    Empty when the catalog holds no drift yet; reading never creates the file or the table.
    """
    with Catalog(path, create=False) as cat:
        if not cat.has_table("drift_verdicts"):  # nothing stored yet
            return {}
        rows = cat.query("SELECT engine, release, verdict FROM drift_verdicts WHERE model = ?", (model,))
    from launchcard.flagspec import version_key

    rank = {"fail": 2, "pass": 1, "n/a": 0}  # a model's badge: fail when any of its commands fails
    out: dict[str, dict[str, str]] = {}
    for engine, release, verdict in rows:
        per = out.setdefault(engine, {})
        if rank.get(verdict, 0) >= rank.get(per.get(release, "n/a"), 0):
            per[release] = verdict
    return {e: dict(sorted(v.items(), key=lambda kv: version_key(kv[0]))) for e, v in sorted(out.items())}
