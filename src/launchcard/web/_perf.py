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

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from launchcard.errors import LaunchcardError

Predictions = Callable[[str], Sequence[dict[str, Any]]]
"""The hook for predicted curves (``create_app(predictions=...)``): model id -> predicted points, each a dict
``{"configuration", "tokens_per_sec_per_user", "tokens_per_sec_per_gpu", "input_tokens", "output_tokens",
"source", "source_url"}`` (``source``: what predicted it, e.g. ``launchcard.predict`` with its version and
inputs).  They are drawn as their own dashed series with hollow markers, never merged into a measured
configuration's line."""


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


def per_user(results: dict[str, Any]) -> float | None:
    """Output tokens/s one user sees: as published, else 1000 / TPOT (ms per output token after the first)."""
    direct = results.get("tokens_per_sec_per_user")
    if isinstance(direct, (int, float)) and direct > 0:
        return float(direct)
    tpot = results.get("tpot_ms")
    return round(1000.0 / tpot, 2) if isinstance(tpot, (int, float)) and tpot > 0 else None


def interactivity_charts(points: Sequence[dict[str, Any]], predicted: Sequence[dict[str, Any]] = ()
                         ) -> list[dict[str, Any]]:
    """Throughput against interactivity, as InferenceMAX and AIConfigurator plot it: output tokens/s per GPU
    (y) against tokens/s per user (x), one curve per configuration, one chart per (source, workload); every
    point links to its source.  Predicted points (same workload) are their own series, marked predicted."""
    groups: dict[tuple[str, Any, Any], dict[tuple[str, bool], list[tuple[float, float, str | None]]]] = {}
    for p in points:
        c, r = p["conditions"], p["results"]
        x, y = per_user(r), r.get("tokens_per_sec_per_gpu")
        if x is None or not isinstance(y, (int, float)):
            continue
        label = f"{p['configuration']} · {c.get('engine')} {c.get('engine_version') or '?'}"
        key = (p["source"], c.get("input_tokens"), c.get("output_tokens"))
        groups.setdefault(key, {}).setdefault((label, False), []).append((x, float(y), p.get("source_url")))
    for p in predicted:
        x, y = p.get("tokens_per_sec_per_user"), p.get("tokens_per_sec_per_gpu")
        if not isinstance(x, (int, float)) or not isinstance(y, (int, float)) or x <= 0:
            continue
        isl, osl = p.get("input_tokens"), p.get("output_tokens")
        key = next((k for k in groups if k[1:] == (isl, osl)), (str(p.get("source") or "prediction"), isl, osl))
        label = f"{p.get('configuration')} (predicted)"
        groups.setdefault(key, {}).setdefault((label, True), []).append((float(x), float(y), p.get("source_url")))
    out = []
    for i, ((source, isl, osl), series) in enumerate(groups.items()):
        out.append({"id": f"pareto-{i + 1}", "source": source, "input_tokens": isl, "output_tokens": osl,
                    "title": f"{isl if isl is not None else '?'} input / {osl if osl is not None else '?'} output "
                             f"tokens per request ({source.rpartition('/')[2]})",
                    "x": "tokens/s per user (interactivity; 1000 / TPOT where not published)",
                    "y": "output tokens/s per GPU", "x_log": False,
                    "point": "{x:,.1f} tok/s per user, {y:,.0f} tok/s per GPU",
                    "series": [{"label": label, "points": [[x, y] for x, y, _ in sorted(pts)],
                                "links": [u for _, _, u in sorted(pts)], "predicted": pred}
                               for (label, pred), pts in series.items()]})
    return out
