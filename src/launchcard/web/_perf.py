"""Published performance points, each with its source and the conditions it was measured under."""

from __future__ import annotations

from pathlib import Path
from typing import Any


# Any: benchmark points are JSON objects read from the recipes checkout
def published_points(recipes_dir: Path | None, model: str) -> list[dict[str, Any]]:
    """Points a source publishes for ``model`` (none are ingested yet from this corpus)."""
    return []
