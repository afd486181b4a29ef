"""Calibrate and score ``launchcard predict`` on public measured runs.

Calibration data: ``systems/silicon_sample.csv`` of the ``aiconfigurator-core`` 0.12.0 wheel
on PyPI (Apache-2.0; NVIDIA's measured vLLM / SGLang / TensorRT-LLM runs on H100, H200, B200,
B300, GB200), read from the wheel itself (downloaded once with ``pip download`` into
``.cache/aic/``, never copied into the repository), with the model configs the same wheel
ships (``model_configs/``).  Only aggregated (non-disaggregated) rows are used.

    python bench/predict_accuracy.py                # leave-one-family-out table + corpus SGLang table
    python bench/predict_accuracy.py --write        # refit on every row, write data/predict_coefficients.json
    python bench/predict_accuracy.py --json

Method: the step model's schedule of a closed loop does not depend on the step times, so
each run is simulated once with traced step features; the efficiency/overhead terms are
then fitted per engine by iteratively reweighted least squares on relative error (an L1
fit: medians matter, not outliers), the runs re-simulated with the fit, and fitted again.
Leave-one-family-out: the family's rows are scored with coefficients fitted on the other
families only.  The SGLang cookbook tables in ../shared/corpus are test data: they are
scored, never fitted.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from launchcard import atomicfile  # noqa: E402
from launchcard.hardware import find  # noqa: E402
from launchcard.predict import (  # noqa: E402
    PARAMS,
    Coefficients,
    Workload,
    coefficients,
    predict,
)
from launchcard.predict._arrivals import length_range  # noqa: E402
from launchcard.predict._coef import SeqRise, engine_seq, from_theta, request_theta, theta  # noqa: E402
from launchcard.predict._domain import domain_from_runs  # noqa: E402
from launchcard.predict._kernels import (  # noqa: E402
    attn_read_basis,
    max_attn_read_ratio,
    max_weight_read_ratio,
    weight_read_basis,
)

sys.path.insert(0, str(ROOT / "bench"))
from accuracy_rows import (  # noqa: E402,F401  (re-exported: other scripts and tests read them here)
    ENGINE,
    SYSTEMS,
    WHEEL_URL,
    Row,
    inferencex_kv_fraction,
    load_rows,
    run,
    sample,
    wheel,
    workload_lengths,
)


def _mean_vec(pairs: list[tuple[list[float], int]]) -> list[float]:
    n = sum(k for _, k in pairs)
    out = [0.0] * len(pairs[0][0])
    for v, k in pairs:
        for i, x in enumerate(v):
            out[i] += x * k / n
    return out


@dataclass
class Trace:
    row: Row
    a_tpot: list[float]  # mean TPOT = a_tpot . theta
    a_ttft: list[float]  # mean TTFT = a_ttft . (theta + request_theta)


def traces(rows: list[Row], sets: dict[str, Coefficients]) -> list[Trace]:
    out = []
    for row in rows:
        res = run(row, sets[row.engine], trace=True)
        if res.tpot_fv and res.ttft_fv:
            out.append(Trace(row, _mean_vec(res.tpot_fv), _mean_vec(res.ttft_fv)))
    return out


# bounds of theta + request_theta = (1/bw_eff, 1/flops_eff, 1/attn_eff, 1/link_eff, collective_us, step_us,
# seq_us, layer_us, eager_layer_us, extend_layer_us, request_ms, inflight_us)
LOWER = (1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
UPPER = (10.0, 20.0, 20.0, 20.0, 200.0, 50_000.0, 500.0, 1000.0, 5000.0, 5000.0, 500.0, 20_000.0)


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        if abs(m[col][col]) < 1e-300:
            continue
        for r in range(n):
            if r != col:
                fac = m[r][col] / m[col][col]
                for k in range(col, n + 1):
                    m[r][k] -= fac * m[col][k]
    return [m[i][n] / m[i][i] if abs(m[i][i]) > 1e-300 else 0.0 for i in range(n)]


def fit(tr: list[Trace], start: Coefficients, *, rounds: int = 12, hold: tuple[int, ...] = (),
        upper: tuple[float, ...] = UPPER, lower: tuple[float, ...] = LOWER) -> Coefficients:
    """IRLS (L1 on relative error) of theta and request_ms on TPOT and TTFT, within bounds (``lower``,
    ``upper``); ``hold``: indices of theta kept at their start values."""
    th = list(theta(start)) + list(request_theta(start))
    nparam = len(th)
    eqs: list[tuple[list[float], float]] = []  # (coefficients, measured): relative residual rows
    for t in tr:
        eqs.append(([x / t.row.tpot_ms * 1e3 for x in t.a_tpot], 1.0))
        eqs.append(([x / t.row.ttft_ms * 1e3 for x in t.a_ttft], 1.0))
    fixed: dict[int, float] = {i: th[i] for i in hold}
    for _ in range(rounds):
        ata = [[0.0] * nparam for _ in range(nparam)]
        atb = [0.0] * nparam
        for coef, y in eqs:
            pred = sum(c * v for c, v in zip(coef, th, strict=True))
            w = 1.0 / max(abs(pred - y), 0.02)  # L1 by reweighting; 2% floor
            for i in range(nparam):
                if coef[i] == 0.0:
                    continue
                atb[i] += w * coef[i] * y
                for j in range(nparam):
                    ata[i][j] += w * coef[i] * coef[j]
        scale = [max(ata[i][i], 1e-30) for i in range(nparam)]
        for i in range(nparam):  # light ridge toward the previous value keeps unseen terms put
            ata[i][i] += 1e-3 * scale[i]
            atb[i] += 1e-3 * scale[i] * th[i]
        for i, v in fixed.items():
            ata[i] = [0.0] * nparam
            ata[i][i] = 1.0
            atb[i] = v
        new = _solve(ata, atb)
        lo, hi = lower, upper
        for i in range(nparam):
            if new[i] < lo[i] or new[i] > hi[i]:
                fixed[i] = min(max(new[i], lo[i]), hi[i])
                new[i] = fixed[i]
        th = new
    return from_theta(th, start)


def ape(pred: float, meas: float) -> float:
    return abs(pred - meas) / meas


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return math.nan
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, math.ceil(q * len(xs)) - 1))]


def spearman(a: list[float], b: list[float]) -> float:
    def ranks(x: list[float]) -> list[float]:
        order = sorted(range(len(x)), key=lambda i: x[i])
        r = [0.0] * len(x)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and x[order[j + 1]] == x[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2.0
            i = j + 1
        return r

    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    den = math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))
    return num / den if den else math.nan


def measured_tput_per_gpu(r: Row) -> float:
    """Closed-loop output tokens/s per GPU implied by the measured means (C x OSL per request time)."""
    return r.concurrency * r.osl / ((r.ttft_ms + r.tpot_ms * (r.osl - 1)) / 1e3) / r.gpus


def score(rows: list[Row], sets: dict[str, Coefficients]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        isl, osl, ratio = workload_lengths(r)
        p = predict(r.facts, Workload(isl=isl, osl=osl, concurrency=r.concurrency, range_ratio=ratio,
                                      num_requests=r.rounds * r.concurrency), sets[r.engine])
        tput_pred = r.concurrency * r.osl / ((p.ttft_ms_mean + p.tpot_ms_mean * (r.osl - 1)) / 1e3) / r.gpus
        out.append({"id": r.id, "family": r.family, "engine": r.engine, "group": r.group, "release": r.release,
                    "system": r.system, "tpot_signed": (p.tpot_ms_mean - r.tpot_ms) / r.tpot_ms,
                    "tpot": ape(p.tpot_ms_mean, r.tpot_ms), "ttft": ape(p.ttft_ms_mean, r.ttft_ms),
                    "tput": ape(tput_pred, measured_tput_per_gpu(r)), "tput_pred": tput_pred,
                    "tput_meas": measured_tput_per_gpu(r), "sim_tput": p.output_tok_per_s_per_gpu})
    return out


def summarize(scored: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for s in scored:
        groups.setdefault(s["group"], []).append(s)
    rho = [spearman([x["tput_pred"] for x in g], [x["tput_meas"] for x in g]) for g in groups.values() if len(g) >= 3]
    rho = [x for x in rho if not math.isnan(x)]
    return {"rows": len(scored),
            "tpot_median": pct([s["tpot"] for s in scored], 0.5), "tpot_p90": pct([s["tpot"] for s in scored], 0.9),
            "ttft_median": pct([s["ttft"] for s in scored], 0.5),
            "tput_median": pct([s["tput"] for s in scored], 0.5),
            "spearman_median": statistics.median(rho) if rho else math.nan, "ranking_groups": len(rho)}


def release_group(engine: str, release: str) -> str:
    """``engine major.minor`` of a row's backend_version; a nightly tag or none stays as recorded ("-": none)."""
    m = re.match(r"(\d+)\.(\d+)", release or "")
    return f"{engine} {m.group(1)}.{m.group(2)}" if m else f"{engine} {release or '-'}"


def by_release(scored: list[dict[str, Any]]) -> dict[str, Any]:
    """The held-out rows' errors by engine release (major.minor) and GPU: where the misses sit, with the signed
    TPOT median (positive: predicted too slow)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for s in scored:
        groups.setdefault(f"{release_group(s['engine'], s['release'])} {s['system']}", []).append(s)
    return {k: {**summarize(g), "tpot_signed_median": statistics.median(x["tpot_signed"] for x in g)}
            for k, g in sorted(groups.items())}


def domain_of(rows: list[Row], engine: str, stride: int, prov: dict[str, str]) -> dict[str, Any]:
    """The span of the runs ``engine``'s set is fitted on (``predict._domain.Domain``, written with the set): clients
    per replica, the shortest and longest lengths each run's client sent, releases, GPUs."""
    mine = [r for r in rows if r.engine == engine]
    runs = []
    for r in mine:
        isl, osl, ratio = workload_lengths(r)
        (i0, i1), (o0, o1) = length_range(isl, ratio), length_range(osl, ratio)
        gpu = SYSTEMS[r.system]
        runs.append((math.ceil(r.concurrency / max(1, r.facts.replicas)), i0, i1, o0, o1, r.release, gpu,
                     find(gpu).vendor))
    source = (f"the {len(mine)} aggregated {engine} runs this set is fitted on (one usable row in {max(1, stride)} "
              f"by run-id hash; {prov['csv']} in {prov['wheel']}, sha256 {prov['csv_sha256'][:16]}): clients per "
              "replica (batch_size x attention DP over the replicas), the lengths each run's client sent "
              "(InferenceX: uniform in [0.8 L, L]; aiconfigurator's own: exact), backend_version as recorded; "
              "bench/predict_accuracy.py")
    return domain_from_runs(runs, source).to_json()


def write_domains(rows: list[Row], stride: int, prov: dict[str, str]) -> dict[str, Any]:
    """Record each gpu set's domain in data/predict_coefficients.json without refitting (``--domain-only``): the
    rows must be those the shipped sets were fitted on (the same ``--stride``)."""
    path = ROOT / "src/launchcard/data/predict_coefficients.json"
    doc = json.loads(path.read_text())
    out = {}
    for e in ENGINE:
        key = f"gpu:{e}"
        if key in doc["sets"] and any(r.engine == e for r in rows):
            doc["sets"][key]["domain"] = out[key] = domain_of(rows, e, stride, prov)
    atomicfile.write_text(path, json.dumps(doc, indent=2) + "\n")
    return out


def prior_sets() -> dict[str, Coefficients]:
    """The starting point of every fit: the recorded gpu:vllm set for each engine, its FLOP/s share at 1: the
    kernels' own (data/predict_coefficients.json "kernels", fitted on measured kernel tables by
    bench/predict_kernels.py) are in the step work already."""
    base = replace(coefficients("gpu", "vllm"), flops_eff=1.0, domain=None, request_ms=0.0, inflight_us=0.0)
    # each engine's measured streaming stages ("streaming") and, where measured ("engine_seq", held: SEQ_HELD), its
    # per-sequence host cost, never fitted (an engine without one fits seq_us from the vLLM start, without its rise)
    # an engine without a measured per-step part fits step_us from 0
    return {e: replace(base, key=f"gpu:{e}", stages=coefficients("gpu", e).stages,
                       seq_rise=base.seq_rise if engine_seq(e) else SeqRise(),
                       step_us=base.step_us if step_measured(e) else 0.0) for e in ENGINE}


def step_measured(engine: str) -> bool:
    """Whether ``engine``'s per-step host part is measured ("engine_seq" "step"; held: STEP_HELD)."""
    got = engine_seq(engine)
    return got is not None and got.step_us is not None


# theta index held at its prior (1.0): 1/flops_eff (the kernels' FLOP/s shares come from the kernel tables).  The
# memory shares (a served step moves more than the modelled kernels), the interconnect and the host/overhead terms
# are fitted on end-to-end runs
KERNEL_HELD = (1,)
# theta + request_theta indices held at 0: request_ms and inflight_us, the API server's front end.  These runs
# cannot tell it apart from the engine's own light-load cost, and what a free fit put there is not a front end
# (bench/predict_front.py): measured minus engine-only TTFT at 4-8 clients is ~0 for vLLM but 150-300 ms for
# SGLang, about 20 decode steps at every load from 4 to 64 clients, on 1k and 8k prompts alike, while tokenizing
# a prompt costs ~1 us a token; a fixed per-request term fitted on it (SGLang 172 ms) then lands on every
# request of every model.  What the gap is remains unexplained (README "TTFT's front end"); held at 0, the fit
# puts it into the eager terms of the steps that carry prefill tokens (SGLang: extend_layer_us): a proxy, not a
# launch cost
FRONT_HELD = (10, 11)
# theta index of extend_layer_us, an extend batch's cost per op it launches (ServingFacts.extend_ops, counted from
# the model's structure by predict._sglang_ops) beside the launches per kernel group (eager_layer_us), fitted for
# SGLang only: its extend batches always run eagerly (enable_piecewise_cuda_graph off by default in 0.5.3-0.5.9,
# server_args.py 0.5.6.post2 L530) and its decode batches above --cuda-graph-max-bs too (cuda_graph_runner.py
# can_run), so the calibration runs' eager decode batches (Llama-3.1-8B on H200 at TP 1-2, 352-512 clients over
# the 256 captured) time the launches alone and the extend batches the rest.  vLLM's and TensorRT-LLM's sets keep
# one eager term (held at 0 here: their prefill steps are not split by this change)
EXTEND_HELD = (9,)
# theta index held at its measured value where measured (seq_us: bench/measure_engine_seq.py, "engine_seq"; vLLM):
# these runs, almost none above 256 sequences, cannot identify it (a free fit put 0 there)
SEQ_HELD = (6,)
# theta index held at its measured value where measured (step_us: the host time every step pays, the intercept of
# bench/measure_engine_seq.py's steps, "engine_seq" "step"; vLLM): in series with the kernels without async
# scheduling, beside them with it.  A free fit cannot tell it from layer_us (both are paid once a step by one model)
STEP_HELD = (5,)


def read_bounds(engine: str) -> tuple[float, float, float]:
    """Lower bounds of (1/bw_eff, 1/flops_eff, 1/attn_eff) for ``engine``'s set.  A served decode step's weight
    and KV reads are made by the kernels the tables time (few-row GEMMs, decode attention), so no GPU's reads are
    timed faster than its own kernels measure: bw_eff x share / basis <= share, i.e. bw_eff <= the calibrated GPUs'
    median share (0.835 for vLLM, where the datasheet bound alone, 1 / the largest ratio, let the fit put H100's reads
    at 0.99 of 3.35 TB/s against its GEMMs' 0.88); the same for attn_eff; neither above any GPU's datasheet."""
    return (max(max_weight_read_ratio(engine), 1.0 / weight_read_basis(engine)), LOWER[1],
            max(max_attn_read_ratio(engine), 1.0 / attn_read_basis(engine)))


def fit_sets(tr: list[Trace], start: dict[str, Coefficients]) -> dict[str, Coefficients]:
    out = dict(start)
    for e in ENGINE:
        mine = [t for t in tr if t.row.engine == e]
        if len(mine) >= 8:
            low = read_bounds(e) + LOWER[3:]
            hold = (KERNEL_HELD + FRONT_HELD + (SEQ_HELD if engine_seq(e) else ())
                    + (STEP_HELD if step_measured(e) else ())
                    + (() if e == "sglang" else EXTEND_HELD))
            out[e] = fit(mine, start[e], hold=hold, lower=low)
    return out


def light_load_gap(rows: list[Row], c: Coefficients, clients: int = 8) -> dict[str, Any] | None:
    """Measured minus predicted TTFT (ms) on the runs of ``c``'s engine at <= ``clients`` clients, under ``c``
    itself (in-sample: how far the fitted set misses light-load TTFT on its own data), as quartiles."""
    engine = c.key.split(":")[-1]
    mine = [r for r in rows if r.engine == engine and r.concurrency <= clients]
    if len(mine) < 8:
        return None
    gaps = []
    for r in mine:
        isl, osl, ratio = workload_lengths(r)
        p = predict(r.facts, Workload(isl=isl, osl=osl, concurrency=r.concurrency, range_ratio=ratio,
                                      num_requests=r.rounds * r.concurrency), c)
        gaps.append(r.ttft_ms - p.ttft_ms_mean)
    return {"clients": clients, "runs": len(gaps), "measured_minus_predicted_ms": [
        round(pct(gaps, q), 1) for q in (0.25, 0.5, 0.75)]}


def roofline_sets() -> dict[str, Coefficients]:
    plain = Coefficients(bw_eff=1.0, flops_eff=1.0, attn_eff=1.0, link_eff=1.0, collective_us=0.0, step_us=0.0,
                         seq_us=0.0, layer_us=0.0, eager_layer_us=0.0, request_ms=0.0, key="roofline",
                         fitted_on="none: datasheet bandwidth, FLOP/s at the kernel tables' shares")
    return dict.fromkeys(ENGINE, plain)


def fmt(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x * 100:.1f}%"


def main(argv: list[str] | None = None) -> int:
    from predict_corpus import corpus_summary, print_corpus, score_corpus  # it imports this module's helpers

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="refit on every row and write the coefficient table")
    ap.add_argument("--limit", type=int, default=None, help="first N usable rows only (quick look)")
    ap.add_argument("--stride", type=int, default=1, help="one usable row in N, by run id (the README's tables: 3)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--domain-only", action="store_true",
                    help="record each gpu set's calibrated domain (batch, lengths, releases, GPUs of the rows it is "
                         "fitted on: pass the --stride it was fitted with) without refitting")
    ap.add_argument("--corpus-only", action="store_true",
                    help="only the corpus SGLang tables, with the shipped coefficient sets (no wheel, no fit)")
    args = ap.parse_args(argv)
    if args.corpus_only:
        shipped = {e: coefficients("gpu", e) for e in ENGINE}
        corpus = score_corpus(shipped)
        res: dict[str, Any] = {"corpus_sglang": corpus, "corpus_sglang_summary": corpus_summary(corpus)}
        if args.json:
            print(json.dumps(res, indent=2, default=str))
        else:
            print_corpus(res)
        return 0
    rows, skipped, prov = load_rows(args.limit)
    rows = sample(rows, args.stride)
    prov["rows_used"] = f"{len(rows)} (one usable aggregated row in {max(1, args.stride)}, by run id)"
    if args.domain_only:
        print(json.dumps(write_domains(rows, args.stride, prov), indent=2))
        return 0
    fams = sorted({r.family for r in rows})
    print(f"{len(rows)} aggregated rows usable from {prov['wheel']} ({prov['csv']}, sha256 {prov['csv_sha256'][:12]})",
          file=sys.stderr)
    for why, n in sorted(skipped.items(), key=lambda kv: -kv[1]):
        print(f"  skipped {n:5d}: {why}", file=sys.stderr)
    table: dict[str, Any] = {}
    all_scored: list[dict[str, Any]] = []
    prior = prior_sets()
    tr_all = traces(rows, prior)  # schedules traced once, under the prior terms
    for fam in fams:
        sets = fit_sets([t for t in tr_all if t.row.family != fam], prior)
        sc = score([r for r in rows if r.family == fam], sets)
        all_scored += sc
        table[fam] = summarize(sc)
        print(f"  held out {fam}: {table[fam]}", file=sys.stderr)
    table["all (held out)"] = summarize(all_scored)
    releases = by_release(all_scored)
    for k, v in releases.items():
        print(f"  by release {k}: {v['rows']} rows, TPOT {fmt(v['tpot_median'])} / {fmt(v['tpot_p90'])} "
              f"(signed median {v['tpot_signed_median'] * 100:+.0f}%)", file=sys.stderr)
    table["kernel roofline (no end-to-end terms)"] = summarize(score(rows, roofline_sets()))
    engines = {e: summarize([s for s in all_scored if s["engine"] == e])
               for e in sorted({s["engine"] for s in all_scored})}
    result: dict[str, Any] = {"provenance": prov, "skipped": skipped, "leave_one_family_out": table,
                              "leave_one_family_out_by_engine": engines,
                              "leave_one_family_out_by_release": releases}
    if args.write:
        sets = fit_sets(tr_all, prior)
        sets = fit_sets(traces(rows, sets), sets)  # once more with the roofline branches the fit implies
        doc = {"about": "Efficiency and overhead terms of launchcard.predict, by platform. Written by "
                        "bench/predict_accuracy.py --write; each set names the public data it was fitted on.",
               "sets": {}}
        old = json.loads((ROOT / "src/launchcard/data/predict_coefficients.json").read_text())
        for e, c in sets.items():
            n = sum(1 for r in rows if r.engine == e)
            doc["sets"][f"gpu:{e}"] = {
                "values": {k: round(getattr(c, k), 6) for k in PARAMS},
                "fitted_on": f"{n} aggregated (one usable row in {max(1, args.stride)} by run-id hash; "
                             "bench/predict_accuracy.py "
                             f"--stride {max(1, args.stride)} --write) {e} runs of {prov['csv']} in {prov['wheel']} "
                             f"({prov['license']}, "
                             f"{prov['wheel_url']}, sha256 {prov['csv_sha256'][:16]}); families "
                             f"{', '.join(sorted({r.family for r in rows if r.engine == e}))}; flops_eff held at 1 "
                             "(the kernels' FLOP/s shares of \"kernels\", fitted on the wheel's measured kernel "
                             "tables by bench/predict_kernels.py, are in the step work); request_ms and inflight_us "
                             "held at 0 (FRONT_HELD: not identifiable in these runs, bench/predict_front.py)"
                             + ("; seq_us held at its measured value (SEQ_HELD: \"engine_seq\", "
                                "bench/measure_engine_seq.py)" if engine_seq(e) else "")
                             + ("; step_us held at its measured value (STEP_HELD: \"engine_seq\" \"step\")"
                                if step_measured(e) else "")
                             + ("; eager_layer_us (launches, every step without CUDA graphs) apart from "
                                "extend_layer_us (an extend batch's own cost per op it launches, "
                                "predict._sglang_ops)" if e == "sglang" else
                                "; extend_layer_us held at 0 (EXTEND_HELD: one eager term)"),
                "domain": domain_of(rows, e, args.stride, prov)}
            gap = light_load_gap(rows, c)
            if gap is not None:
                doc["sets"][f"gpu:{e}"]["light_load_ttft"] = gap
        for k, v in old["sets"].items():
            if k.startswith(("cpu:", "rocm:")):  # this machine's CPU runs; bench/predict_amd.py's AMD set (its
                doc["sets"][k] = v  # unfitted terms are read from the gpu set it falls back to)
        # every other section is another writer's (bench/predict_kernels.py "kernels", measure_host_stream.py
        # "streaming", measure_engine_seq.py "engine_seq", measure_chat_request.py "chat", ...): kept whole, so a
        # refit never drops a section it does not know of
        for key, value in old.items():
            if key not in doc:
                doc[key] = value
        path = ROOT / "src/launchcard/data/predict_coefficients.json"
        atomicfile.write_text(path, json.dumps(doc, indent=2) + "\n")
        result["written"] = {k: v["values"] for k, v in doc["sets"].items()}
        shipped = sets
    else:
        shipped = {e: coefficients("gpu", e) for e in ENGINE}  # the recorded sets (fitted on the wheel's runs only)
    result["corpus_sglang"] = score_corpus(shipped)
    result["corpus_sglang_summary"] = corpus_summary(result["corpus_sglang"])
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        print_corpus(result)
        print("| held-out family | rows | TPOT median / p90 | TTFT median | throughput median "
              "| ranking (Spearman, groups) |")
        print("|---|---|---|---|---|---|")
        for fam, s in table.items():
            print(f"| {fam} | {s['rows']} | {fmt(s['tpot_median'])} / {fmt(s['tpot_p90'])} | {fmt(s['ttft_median'])} | "
                  f"{fmt(s['tput_median'])} | {s['spearman_median']:.2f} ({s['ranking_groups']}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
