"""What SGLang's extend (prefill) batches cost in the calibration runs, beyond the step model's GPU time (report only).

SGLang runs an extend batch eagerly (piecewise CUDA graphs off by default: ``enable_piecewise_cuda_graph: bool =
False`` in python/sglang/srt/server_args.py of 0.5.3.post3 L434, 0.5.6.post2 L530, 0.5.7 L548, 0.5.9 L604) and apart
from decode (``enable_mixed_chunk: bool = False``, 0.5.6.post2 L523), so ``gpu:sglang`` times it with a fitted
term per op the batch launches (``extend_layer_us``; the ops counted from the model's structure,
launchcard.predict._sglang_ops) on top of its kernels.  This script prints, for each setting of the
aiconfigurator-core 0.12.0 SGLang runs (quant mode, GPU, release, TP, load), the signed median TTFT / TPOT errors with
``extend_layer_us`` set to a few values (the shipped set otherwise) and the value at which the median TTFT error
crosses zero: if the term stood for one mechanism, that value would be about the same in every setting.  Beside
it, what the crossing puts on one extend batch of the setting's model, ``eager_layer_us`` x its kernel groups + the
crossing x its ops: a model of more ops (DeepSeek-R1 block FP8 on an H200: 2,044) pays more per batch at the same
value.

    python bench/sglang_extend_need.py                      # one run in 3 (bench/predict_accuracy.py's sample)
    python bench/sglang_extend_need.py --only qwen3.5:b300_sxm:0.5.10.post1 --stride 1
    python bench/sglang_extend_need.py --forms              # where the fit puts the light-load gap (~4 min)

``--forms`` refits the SGLang set (bench/predict_accuracy.py's fit and holds) with the gap placed three ways
(:data:`FORMS`): the shipped per-op cost of an extend batch, which every running decode waits through (an
extend batch runs alone and eagerly: ``enable_mixed_chunk`` and ``enable_piecewise_cuda_graph`` off by default in
0.5.5.post1-0.5.9), a per-request delay before the first token that stalls no decode (``request_ms``), or both
free; and prints each form's terms and its SGLang errors in-sample (staggered and exact-length runs apart) and
leaving one family out.

Calibration runs only (never the held-out fixture); it writes nothing.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from predict_accuracy import (
    KERNEL_HELD,
    LOWER,
    Row,
    Trace,
    fit,
    load_rows,
    prior_sets,
    read_bounds,
    sample,
    score,
    summarize,
    traces,
    workload_lengths,
)

from launchcard.predict import Coefficients, Workload, coefficients, predict, step_work

VALUES = (0.0, 20.0, 40.0, 100.0)  # extend_layer_us tried beside the shipped set's own (us an op)
# where --forms lets the fit put the light-load gap: theta + request_theta indices held (at the prior's 0) beside
# KERNEL_HELD and inflight_us (11): extend_layer_us is index 9, request_ms 10 (bench/predict_accuracy.py)
FORMS = {"extend batch (shipped)": (10,), "request delay": (9,), "both free": ()}


def zero_crossing(xs: list[float], ys: list[float]) -> float | None:
    """The x where ``ys`` (sorted by ``xs``) first crosses from below zero to zero or above, linearly between the
    two points around it; None when it never does within the range."""
    pts = sorted(zip(xs, ys, strict=True))
    for (x0, y0), (x1, y1) in itertools.pairwise(pts):
        if y0 < 0.0 <= y1:
            return x0 + (x1 - x0) * (-y0) / (y1 - y0)
    return None


def kernel_groups(r: Row) -> tuple[int, int]:
    """(Kernel groups, ops) an extend batch of ``r``'s plan pays ``eager_layer_us`` and ``extend_layer_us`` for
    (predict._cost.token_terms: the step's eager groups, else its layers; its ops, else the groups)."""
    w = step_work(r.facts, 0, 0.0, 1, 1.0)
    groups = w.eager_layers or w.layers
    return groups, w.extend_ops or groups


def batch_ms(need_us: float, eager_us: float, groups: int, ops: int) -> float:
    """Milliseconds the eager and extend terms put on one extend batch of ``groups`` kernel groups and ``ops`` ops
    when ``extend_layer_us`` is ``need_us``."""
    return (eager_us * groups + need_us * ops) / 1000.0


def load_bin(conc: int) -> str:
    return "c<=8" if conc <= 8 else "c9-64" if conc <= 64 else "c>64"


def setting(r: Row) -> tuple[str, ...]:
    # the group's quant mode: "" is an unquantized (BF16) run, "checkpoint" one of NVIDIA's NVFP4 checkpoints
    quant = {"": "bf16", "checkpoint": "nvfp4-ckpt"}.get(r.group.split("|")[3], r.group.split("|")[3])
    return (r.family, quant, r.system, r.release or "-", f"tp{r.facts.tp}", load_bin(r.concurrency))


def errors(r: Row, c: Coefficients) -> tuple[float, float]:
    """Signed (TTFT, TPOT) errors of one run under ``c`` (+: predicted slower)."""
    isl, osl, ratio = workload_lengths(r)
    p = predict(r.facts, Workload(isl=isl, osl=osl, concurrency=r.concurrency, range_ratio=ratio,
                                  num_requests=r.rounds * r.concurrency), c)
    return (p.ttft_ms_mean - r.ttft_ms) / r.ttft_ms, (p.tpot_ms_mean - r.tpot_ms) / r.tpot_ms


def fit_form(tr: list[Trace], start: Coefficients, form: str) -> Coefficients:
    """The SGLang set fitted on ``tr`` from ``start`` with the terms :data:`FORMS` holds for ``form`` at 0."""
    held = FORMS[form]
    start = replace(start, extend_layer_us=0.0 if 9 in held else start.extend_layer_us,
                    request_ms=0.0 if 10 in held else start.request_ms)
    return fit(tr, start, hold=KERNEL_HELD + held + (11,), lower=read_bounds("sglang") + LOWER[3:])


def summary_line(tag: str, scored: list[dict[str, object]]) -> str:
    s = summarize(scored)
    signed = statistics.median(float(str(x["tpot_signed"])) for x in scored) if scored else 0.0
    return (f"  {tag:10s} n={s['rows']:3d}  TPOT {100 * s['tpot_median']:5.1f}% / p90 {100 * s['tpot_p90']:5.1f}%"
            f" (signed {100 * signed:+.1f}%)  TTFT {100 * s['ttft_median']:5.1f}%  throughput "
            f"{100 * s['tput_median']:5.1f}%")


def forms(rows: list[Row]) -> None:
    """--forms: each of :data:`FORMS` fitted on ``rows`` (SGLang calibration runs), in-sample and per held-out
    family."""
    prior = prior_sets()["sglang"]
    tr = traces(rows, {"sglang": prior})
    fams = sorted({r.family for r in rows})
    for form in FORMS:
        c = fit_form(tr, prior, form)
        print(f"{form}: eager_layer_us {c.eager_layer_us:.0f}, extend_layer_us {c.extend_layer_us:.0f}, request_ms "
              f"{c.request_ms:.1f}, layer_us {c.layer_us:.1f}, seq_us {c.seq_us:.1f}, attn_eff {c.attn_eff:.3f}, "
              f"link_eff {c.link_eff:.3f}")
        ins = score(rows, {"sglang": c})
        print(summary_line("in-sample", ins))
        print(summary_line("staggered", [x for x, r in zip(ins, rows, strict=True) if r.spread]))
        print(summary_line("exact", [x for x, r in zip(ins, rows, strict=True) if not r.spread]))
        out: list[dict[str, object]] = []
        for fam in fams:
            out += score([r for r in rows if r.family == fam],
                         {"sglang": fit_form([t for t in tr if t.row.family != fam], prior, form)})
        print(summary_line("one out", out))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stride", type=int, default=3, help="one run in N, as bench/predict_accuracy.py samples them")
    ap.add_argument("--only", default="", help="family[:system[:release]] to keep, e.g. qwen3.5:b300_sxm:0.5.10.post1")
    ap.add_argument("--forms", action="store_true", help="refit the set with the gap as an extend cost, a request "
                                                        "delay or both, and print each form's errors")
    a = ap.parse_args(argv)
    if a.stride < 1:
        ap.error(f"--stride {a.stride}: must be 1 or more (one run in N)")
    want = [w for w in a.only.split(":") if w]
    rows = [r for r in sample(load_rows()[0], a.stride) if r.engine == "sglang"
            and all(x == w for x, w in zip((r.family, r.system, r.release), want, strict=False))]
    if a.forms:
        forms(rows)
        return 0
    shipped = coefficients("gpu", "sglang")
    values = sorted({*VALUES, shipped.extend_layer_us})
    sets = [replace(shipped, extend_layer_us=v) for v in values]
    by: dict[tuple[str, ...], list[list[tuple[float, float]]]] = {}
    groups: dict[tuple[str, ...], set[tuple[int, int]]] = {}
    for r in rows:
        by.setdefault(setting(r), []).append([errors(r, c) for c in sets])
        groups.setdefault(setting(r), set()).add(kernel_groups(r))
    print(f"{len(rows)} SGLang calibration runs; extend_layer_us tried: {', '.join(f'{v:g}' for v in values)}"
          f" (shipped {shipped.extend_layer_us:g}); cells: signed median TTFT% / TPOT%")
    for key, runs in sorted(by.items()):
        ttft = [statistics.median(run[i][0] for run in runs) for i in range(len(values))]
        tpot = [statistics.median(run[i][1] for run in runs) for i in range(len(values))]
        need = zero_crossing(list(values), ttft)
        cells = "  ".join(f"{100 * t:+4.0f}/{100 * p:+4.0f}" for t, p in zip(ttft, tpot, strict=True))
        lo, hi = min(groups[key]), max(groups[key])
        at = "-" if need is None else f"{need:.0f} us = " + "-".join(
            f"{batch_ms(need, shipped.eager_layer_us, *g):.0f}" for g in sorted({lo, hi})) + " ms a batch"
        print(f"{' '.join(key):58s} n={len(runs):3d}  {cells}  TTFT zero at {at} "
              f"({lo[1] if lo == hi else f'{lo[1]}-{hi[1]}'} ops)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
