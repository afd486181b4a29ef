"""A held-out row whose printed serving command launchcard refuses at start-up, planned with the page's own
fuller baseline command where the page's summary table says both are one baseline (bench/heldout_extract.py's
gpustack pages): the rule, the table reader and the start-up check it asks."""

from __future__ import annotations

import re
import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

# a cell of a page's summary table ("Total TPS: 1730.98<br>Mean TPOT(ms): 149.67")
_CELL = re.compile(r"Total TPS:\s*([\d.]+).*?Mean TPOT\(ms\):\s*([\d.]+)")


def summary_columns(lines: list[str]) -> dict[tuple[float, float], tuple[str, int]]:
    """The page's summary table (``| Benchmark Case | baseline (vLLM without any optimizations) | Optimized |``):
    each cell's (total TPS, mean TPOT) -> its column's heading and the cell's line."""
    out: dict[tuple[float, float], tuple[str, int]] = {}
    header: list[str] | None = None
    for n, ln in enumerate(lines, 1):
        if not ln.lstrip().startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        for col, cell in zip(header, cells, strict=False):  # a short row has no cell in the last columns
            m = _CELL.search(cell)
            if m:
                out[(float(m.group(1)), float(m.group(2)))] = (col, n)
    return out


def complete_baselines(page: list[tuple[dict[str, Any], float | None]],
                       columns: dict[tuple[float, float], tuple[str, int]],
                       refused: Callable[[dict[str, Any]], str | None],
                       planned: Callable[[str], dict[str, Any]]) -> None:
    """A row whose printed command launchcard's start-up check refuses at the page's release is planned with the
    page's own fuller baseline command, where the page's summary table says both are one baseline: the table puts
    the row's block (its total TPS and mean TPOT) in a column headed "baseline ..." beside a block whose serving
    script is the row's command with more flags (the row's words are its first words), and that command starts.
    The row keeps its block and records both lines and why (``plan_note``).  qwen3-32b/a100.md (gpustack 47277d79)
    prints ``vllm serve Qwen/Qwen3-32B`` (L346) above the "Other Benchmark Cases" baseline blocks (L349-), which
    vLLM 0.11.0 refuses at its 40,960-token default (one request's KV cache does not fit); its table's
    "baseline (vLLM without any optimizations)" column (L17) holds those blocks (L20-L23) and the engine-choice
    block (L19, result L90) run with ``vllm serve Qwen/Qwen3-32B --max-model-len 32768`` (L85).  qwen3-32b/h100.md
    shows no fuller baseline command: its rows stay as printed."""
    cell = {id(r): columns.get((tps, r["measured"]["tpot_ms_mean"])) for r, tps in page if tps is not None}
    # each block as the page prints it (before any row here is completed): command, its line, block line, table cell
    shown = [(r["serve_command"], r["source"]["command_url"], r["source"]["line"], cell.get(id(r))) for r, _ in page]
    for row, _ in page:
        col = cell.get(id(row))
        if col is None or not col[0].lower().startswith("baseline"):
            continue
        words = shlex.split(row["serve_command"])
        fuller = {(cmd, url, line, c[1]) for cmd, url, line, c in shown if c is not None and c[0] == col[0]
                  and (w := shlex.split(cmd))[:len(words)] == words and len(w) > len(words)}
        if len({f[0] for f in fuller}) != 1:
            continue
        why = refused(row)
        if why is None:
            continue
        cmd, cmd_url, line, cell_line = min(fuller, key=lambda f: (f[2], f[3]))
        done = {**row, **planned(cmd)}
        if refused(done) is not None:
            continue
        printed = row["source"]["command_url"].rpartition("#")[2]
        row.update(done)
        row["plan_note"] = (
            f"the printed command (#{printed}) is refused at start-up: {why}. The page's summary table puts this "
            f"block (cell #L{col[1]}) and the block at #L{line} (cell #L{cell_line}) in one column, '{col[0]}'; that "
            f"block's serving script (#{cmd_url.rpartition('#')[2]}) is the printed command with more flags: planned "
            "with it")
        row["source"]["command_url"] = cmd_url


def start_refusal(config_text: Callable[[str], str]) -> Callable[[dict[str, Any]], str | None]:
    """Why launchcard refuses a row's plan at the row's stated release before any workload (its one line: the
    start-up check of bench/predict_heldout.py's ``facts_for`` with one token of context), None where it starts;
    ``config_text``: a model config's text by its file name (the extractor's: from the aiconfigurator snapshot)."""
    from predict_heldout import facts_for

    from launchcard.errors import LaunchcardError

    def refused(row: dict[str, Any]) -> str | None:
        name = row["config"]["file"]
        with tempfile.TemporaryDirectory() as tmp:
            cfg = Path(tmp) / name
            cfg.write_text(config_text(name), encoding="utf-8")
            try:
                facts_for(row, cfg, 1)
            except LaunchcardError as exc:
                return exc.one_line()
        return None
    return refused
