"""``launchcard sweep``: the best plan of every model x GPU type x workload of a fleet, on a process pool or Ray."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from launchcard.cli._app import app
from launchcard.cli._options import JsonOpt


@app.command()
def sweep(
    file: Annotated[Path, typer.Argument(help="Sweep YAML: models (id, config), gpus (gpu, count), workloads "
                                              "(name, isl, osl, concurrency|rate, slo), optional max_num_seqs and "
                                              "engines ([vllm, sglang]).")],
    ray: Annotated[str | None, typer.Option("--ray", help="Run on Ray: auto (the running cluster, else a local "
                                                          "one) or a cluster address; needs launchcard[ray].")] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Local processes (default: the CPUs); "
                                                "with --ray auto and no cluster, the local cluster's CPUs; "
                                                "refused with a --ray cluster address (its CPUs are its own).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Search the best plan for each model x GPU type x workload (a platform team's fleet plan); rows with no plan
    meeting the SLO say so (answers: exit 0); a search that could not run (e.g. a workload longer than a model's
    context) is a row naming the sweep file's line, and the sweep exits 1."""
    from launchcard.plansearch import load_sweep, run_sweep

    tasks = load_sweep(file)
    rows = run_sweep(tasks, workers=workers, ray=ray)
    if as_json:
        import json

        typer.echo(json.dumps({"tasks": len(rows), "backend": f"ray ({ray})" if ray else "process pool",
                               "rows": rows}, indent=2))
    else:
        typer.echo(_table(rows))
    failed = [r for r in rows if r["status"] == "error"]
    if failed:
        typer.echo(f"launchcard: sweep: {len(failed)} of {len(rows)} searches could not run; first: "
                   f"{failed[0]['model']} on {failed[0]['gpus']} x {failed[0]['gpu']}: {failed[0]['error']}", err=True)
        raise typer.Exit(1)


def _load(r: dict[str, Any]) -> str:
    """How a row's requests arrive, as its JSON says (``arrivals``; ``rate`` is null for a burst), with the
    dataset and endpoint where they are not the defaults."""
    w = r["workload"]
    arrivals = w.get("arrivals")
    if arrivals == "all at once":
        load = f"{w['num_requests']} at once"
    elif arrivals == "poisson":
        load = f"rate={w['rate']:g}/s"
    elif arrivals == "poisson, capped":
        load = f"rate={w['rate']:g}/s, c<={w['concurrency']}"
    else:
        load = f"c={w['concurrency']}"
    extra = [x for x in (w.get("dataset"), "chat" if w.get("endpoint") == "chat" else None) if x]
    return ", ".join([load, *extra])


def _table(rows: list[dict[str, Any]]) -> str:
    from launchcard.predict import figure_text as t

    lines = [f"{len(rows)} searches; the best plan of each (output tokens/s per GPU, then per user, meeting the SLO):"]
    for r in rows:
        engine = f" ({r['engine']})" if r.get("engine", "vllm") != "vllm" else ""
        work = r["workload"]
        head = (f"{r['model']}{engine} | {r['gpus']} x {r['gpu']} | {work['name']} ({work['isl']}/{work['osl']}, "
                f"{_load(r)}, {r['slo']})")
        w = r.get("winner")
        if w is not None:
            f = w["figures"]
            per_token = (f"{t(f['output_tok_per_s_per_user'], 1, ',')} tok/s/user, TTFT {f['ttft_ms_mean']:,.1f} ms, "
                         f"TPOT {f['tpot_ms_mean']:.2f} ms" if f["tpot_ms_mean"] is not None
                         else f"TTFT {f['ttft_ms_mean']:,.1f} ms, no TPOT (no second output token)")
            lines.append(f"  {head}: {w['label']}: {t(f['output_tok_per_s_per_gpu'], 1, ',')} tok/s/GPU, {per_token}")
        elif r["status"] == "error":
            lines.append(f"  {head}: error: {r['error']}")
        else:
            c = r.get("closest")
            if c is None and r["status"] == "no plan can run":
                counts = (r.get("rejected_by_reason") or {}).items()
                why = ", ".join(f"{n} rejected by {reason}" for reason, n in counts)
                lines.append(f"  {head}: no plan can run (of {r.get('candidates', 0)}: {why or 'none searched'})")
                continue
            why = f"; closest {c['label']}: {c['reason']}" if c else ""
            lines.append(f"  {head}: no plan meets the SLO{why}")
    return "\n".join(lines)
