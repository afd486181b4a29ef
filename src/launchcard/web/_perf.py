"""Published performance points, each with its source and the conditions it was measured under.

Points come from the SGLang cookbook's ``*-benchmarks.jsx`` files found under
the configured folders (``launchcard serve --benchmarks DIR``; the corpus'
``sglang-cookbook/`` is always looked at), parsed by
:mod:`launchcard.sources.sglang_benchmarks` and joined with the cookbook panel
cells of the corpus' config data summaries for parallelism and speculative
settings.  They are read once, when the server starts.  Points of different
sources or workloads are never put on one chart or ranked against each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from launchcard.errors import LaunchcardError


class PerfIndex:
    """Published points by model, read once."""

    def __init__(self, folders: Sequence[Path], summaries: Sequence[Path], models: Iterable[str]) -> None:
        from launchcard.sources.sglang_benchmarks import load_points

        self.folders = tuple(folders)
        self.errors: list[str] = []
        self._by_model: dict[str, list[dict[str, Any]]] = {}
        try:
            pts = load_points(self.folders, models, summaries)
        except LaunchcardError as exc:  # a broken file is reported on the pages, not a server error
            self.errors.append(exc.one_line())
            pts = []
        for p in pts:
            self._by_model.setdefault(p.model, []).append(p.to_json())

    def published(self, model: str) -> list[dict[str, Any]]:
        return self._by_model.get(model, [])


def charts(points: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One chart per (source, workload): a series per configuration of tokens/s/GPU against concurrency."""
    groups: dict[tuple[str, Any, Any], dict[str, list[tuple[float, float]]]] = {}
    for p in points:
        c, r = p["conditions"], p["results"]
        x, y = c.get("concurrency"), r.get("tokens_per_sec_per_gpu")
        if not isinstance(x, (int, float)) or not isinstance(y, (int, float)) or x <= 0:
            continue
        key = (p["source"], c.get("input_tokens"), c.get("output_tokens"))
        label = f"{p['configuration']} · {c.get('engine')} {c.get('engine_version') or '?'}"
        groups.setdefault(key, {}).setdefault(label, []).append((float(x), float(y)))
    out = []
    for i, ((source, isl, osl), series) in enumerate(groups.items()):
        out.append({"id": f"chart-{i + 1}", "source": source, "input_tokens": isl, "output_tokens": osl,
                    "title": f"{isl if isl is not None else '?'} input / {osl if osl is not None else '?'} output "
                             f"tokens per request ({source.rpartition('/')[2]})",
                    "x": "concurrency (requests in flight)", "y": "tokens/s per GPU (as published)",
                    "series": [{"label": k, "points": sorted(v)} for k, v in series.items()]})
    return out
