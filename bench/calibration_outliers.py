"""Report-only: every calibration run (bench/predict_accuracy.py's rows) whose predicted TPOT or TTFT is off the
measured one by more than a factor 1 + ``--over`` either way (default 2x: an under-prediction's relative error never
reaches 100%, so a plain error threshold would miss them), with the plan it was scored under, grouped by model, GPU,
engine, release and workload.  Scored with the shipped coefficient sets (in-sample: a quick look for gross misses
whose cause is the plan or the run, not the fit), or leave-one-family-out with ``--lofo`` (slow).  Writes nothing.

    python bench/calibration_outliers.py [--stride 3] [--over 1.0] [--lofo] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from predict_accuracy import (
    ENGINE,
    Row,
    coefficients,
    fit_sets,
    load_rows,
    prior_sets,
    sample,
    score,
    traces,
)


def plan_of(r: Row) -> dict[str, Any]:
    f = r.facts
    return {"tp": f.tp, "pp": f.pp, "replicas": f.replicas, "ep": f.ep, "kv_capacity_tokens": f.kv_capacity_tokens,
            "max_num_seqs": f.max_num_seqs, "max_num_batched_tokens": f.max_num_batched_tokens,
            "graph_tokens": f.graph_tokens, "cuda_graphs": f.cuda_graphs, "chunked_prefill": f.chunked_prefill,
            "release": f.release, "lockstep": getattr(f, "lockstep", None)}


def predicted_ttft(r: Row, s: dict[str, Any]) -> float:
    """The predicted mean TTFT behind a scored row (score keeps its absolute error; the throughput it implies gives
    the sign): C x osl / (TTFT + TPOT (osl - 1)) per GPU, solved for TTFT."""
    tpot = r.tpot_ms * (1 + s["tpot_signed"])
    return r.concurrency * r.osl / (s["tput_pred"] * r.gpus) * 1e3 - tpot * (r.osl - 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--over", type=float, default=1.0,
                    help="list a run whose prediction is off by more than a factor 1 + OVER either way (0: every run)")
    ap.add_argument("--lofo", action="store_true", help="score each family with sets fitted on the others (slow)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.stride < 1:
        ap.error(f"--stride {args.stride}: must be 1 or more")
    if args.over < 0:
        ap.error(f"--over {args.over}: must be 0 or more")
    rows = sample(load_rows()[0], args.stride)
    by_id = {r.id: r for r in rows}
    if args.lofo:
        prior = prior_sets()
        tr = traces(rows, prior)
        scored: list[dict[str, Any]] = []
        for fam in sorted({r.family for r in rows}):
            scored += score([r for r in rows if r.family == fam], fit_sets([t for t in tr if t.row.family != fam],
                                                                            prior))
    else:
        scored = score(rows, {e: coefficients("gpu", e) for e in ENGINE})
    out = []
    for s in scored:
        r = by_id[s["id"]]
        tpot_pred = max(r.tpot_ms * (1 + s["tpot_signed"]), 1e-9)
        ttft_pred = max(predicted_ttft(r, s), 1e-9)
        factor = max(tpot_pred / r.tpot_ms, r.tpot_ms / tpot_pred, ttft_pred / r.ttft_ms, r.ttft_ms / ttft_pred)
        if factor > 1 + args.over:
            out.append({"id": r.id, "family": r.family, "group": r.group, "release": r.release,
                        "conc": r.concurrency, "isl": r.isl, "osl": r.osl, "gpus": r.gpus, "spread": r.spread,
                        "tpot_meas": r.tpot_ms, "tpot_pred": round(tpot_pred, 2), "tpot": s["tpot"],
                        "tpot_signed": s["tpot_signed"], "ttft_meas": r.ttft_ms, "ttft_pred": round(ttft_pred, 1),
                        "ttft": s["ttft"], "tput": s["tput"], "plan": plan_of(r)})
    print(f"{len(out)} of {len(scored)} runs off by more than a factor {1 + args.over:g} in TPOT or TTFT",
          file=sys.stderr)
    if args.json:
        print(json.dumps(out, indent=1, default=str))
    else:
        for o in sorted(out, key=lambda o: (o["group"], o["release"], o["conc"])):
            print(json.dumps(o, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
