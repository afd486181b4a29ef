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

import json
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

    def models(self) -> list[str]:
        """Models with published points (those a predicted curve may stand beside)."""
        return sorted(self._by_model)


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
                    "x": "concurrency (requests in flight)", "y": "total tokens/s per GPU (as published)",
                    "series": [{"label": k, "points": sorted(v)} for k, v in series.items()]})
    return out


def per_user(results: dict[str, Any]) -> float | None:
    """Output tokens/s one user sees: as published, else 1000 / TPOT (ms per output token after the first)."""
    direct = results.get("tokens_per_sec_per_user")
    if isinstance(direct, (int, float)) and direct > 0:
        return float(direct)
    tpot = results.get("tpot_ms")
    return round(1000.0 / tpot, 2) if isinstance(tpot, (int, float)) and tpot > 0 else None


def interactivity_charts(points: Sequence[dict[str, Any]], predicted: Sequence[dict[str, Any]] = (),
                         measured: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """Throughput against interactivity, as InferenceMAX and AIConfigurator plot it: output tokens/s per GPU
    (y) against tokens/s per user (x), one curve per configuration, one chart per (source, workload); every
    point links to its source.  Predicted points (same workload) are their own series, marked predicted;
    plotted runs of :func:`measured_runs` (same workload) likewise, marked measured, each linked to its row."""
    groups: dict[tuple[str, Any, Any], dict[tuple[str, str], list[tuple[float, float, str | None]]]] = {}
    for p in points:
        c, r = p["conditions"], p["results"]
        # output tokens/s per GPU, as predicted and measured points are (the published figure is input + output)
        x, y = per_user(r), r.get("output_tokens_per_sec_per_gpu")
        if x is None or not isinstance(y, (int, float)):
            continue
        label = f"{p['configuration']} · {c.get('engine')} {c.get('engine_version') or '?'}"
        key = (p["source"], c.get("input_tokens"), c.get("output_tokens"))
        groups.setdefault(key, {}).setdefault((label, "published"), []).append((x, float(y), p.get("source_url")))
    beside: dict[str, str] = {}  # a predicted series' label -> the published series it stands beside
    for p in predicted:
        x, y = p.get("tokens_per_sec_per_user"), p.get("tokens_per_sec_per_gpu")
        if not isinstance(x, (int, float)) or not isinstance(y, (int, float)) or x <= 0:
            continue
        isl, osl = p.get("input_tokens"), p.get("output_tokens")
        key = next((k for k in groups if k[1:] == (isl, osl)), (str(p.get("source") or "prediction"), isl, osl))
        label = f"{p.get('configuration')} (predicted)"
        if p.get("beside"):
            beside[label] = str(p["beside"][0])
        groups.setdefault(key, {}).setdefault((label, "predicted"), []).append(
            (float(x), float(y), p.get("source_url")))
    for m in measured:
        if not m["plotted"]:
            continue
        isl, osl = m["input_tokens"], m["output_tokens"]
        key = next((k for k in groups if k[1:] == (isl, osl)), ("launchcard bench", isl, osl))
        label = f"{m['configuration']} (measured, launchcard bench)"
        groups.setdefault(key, {}).setdefault((label, "measured"), []).append(
            (float(m["tokens_per_sec_per_user"]), float(m["tokens_per_sec_per_gpu"]), f"#{m['id']}"))
    out = []
    for i, ((source, isl, osl), series) in enumerate(groups.items()):
        # each series its own colour by position; a predicted one the colour of the published series it is beside
        own = {label: n for n, (label, kind) in enumerate(series) if kind == "published"}
        colour = {(label, kind): own.get(beside.get(label, ""), n) if kind == "predicted" else n
                  for n, (label, kind) in enumerate(series)}
        out.append({"id": f"pareto-{i + 1}", "source": source, "input_tokens": isl, "output_tokens": osl,
                    "title": f"{isl if isl is not None else '?'} input / {osl if osl is not None else '?'} output "
                             f"tokens per request ({source.rpartition('/')[2]})",
                    "x": "tokens/s per user (interactivity; 1000 / TPOT where not published)",
                    "y": "output tokens/s per GPU", "x_log": False,
                    "point": "{x:,.1f} tok/s per user, {y:,.0f} output tok/s per GPU",
                    "series": [{"label": label, "points": [[x, y] for x, y, _ in sorted(pts)],
                                "links": [u for _, _, u in sorted(pts)], "predicted": kind == "predicted",
                                "measured": kind == "measured", "colour": colour[(label, kind)],
                                **({"beside": beside[label]} if label in beside else {})}
                               for (label, kind), pts in series.items()]})
    return out


def _gpus(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


def measured_runs(facts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The card's measured facts (``launchcard bench``) as one point per run: the facts sharing an endpoint,
    a capture time and conditions.  Tokens/s per user is 1000 / the run's median TPOT; tokens/s per GPU is the
    run's output tokens/s over a GPU count the run itself recorded (a ``bench.gpus`` fact).  Nothing is
    guessed: a run lacking either is kept with ``plotted: false`` and the ``reason``."""
    runs: dict[str, dict[str, Any]] = {}
    for f in facts:
        ev, cond = f.get("evidence") or {}, f.get("conditions") or {}
        key = json.dumps([ev.get("url"), ev.get("fetched_at"), cond], sort_keys=True)
        run = runs.setdefault(key, {"endpoint": ev.get("url"), "captured_at": ev.get("fetched_at"),
                                    "runtime_version": ev.get("revision"), "conditions": cond, "figures": {}})
        run["figures"][f.get("name")] = f.get("value")
    out = []
    for i, run in enumerate(sorted(runs.values(), key=lambda r: (str(r["endpoint"]), str(r["captured_at"])))):
        fig, cond = run.pop("figures"), run["conditions"]
        tput, tpot, gpus = fig.get("bench.output_tokens_per_s"), fig.get("bench.tpot.p50"), _gpus(fig.get("bench.gpus"))
        has_tput = isinstance(tput, (int, float)) and not isinstance(tput, bool) and tput > 0
        has_tpot = isinstance(tpot, (int, float)) and not isinstance(tpot, bool) and tpot > 0
        missing = [why for ok, why in (
            (has_tput, "no output tokens/s"),
            (has_tpot, "no median time per output token (TPOT p50, a bench.tpot.p50 fact), "
                       "so tokens/s per user is unknown"),
            (gpus is not None, "no GPU count (a bench.gpus fact), so tokens/s per GPU is unknown")) if not ok]
        out.append({**run, "id": f"measured-{i + 1}",
                    "configuration": f"{run['endpoint'] or 'endpoint unknown'}"
                                     + (f" · {gpus} GPU{'s' if gpus != 1 else ''}" if gpus else ""),
                    "input_tokens": cond.get("input_tokens"), "output_tokens": cond.get("output_tokens"),
                    "concurrency": cond.get("concurrency"), "output_tokens_per_sec": tput if has_tput else None,
                    "tpot_ms_p50": tpot if has_tpot else None, "gpus": gpus,
                    "tokens_per_sec_per_user": round(1000.0 / tpot, 2) if has_tpot else None,
                    "tokens_per_sec_per_gpu": round(tput / gpus, 2) if has_tput and gpus else None,
                    "plotted": not missing, "reason": "; ".join(missing) or None})
    return out
