"""``launchcard predict`` against the real vLLM CPU server, measured with ``launchcard bench``.

Two models, two roles (never fit and score on the same runs):

* ``--fit``: a smaller random-weight Llama of another shape (512 wide x 4 layers, ~21M parameters,
  built the same way) is served and benched under a few workloads; the CPU overhead terms (per step,
  per sequence, per layer, per request) are fitted on those runs and written to
  ``data/predict_coefficients.json`` as ``cpu:vllm``, with the runs they came from.  Bandwidth and
  FLOP/s efficiencies stay 1: the hardware figures are measured, not datasheet peaks.  (The live
  tests' 2-layer x 128 tiny model is no use here: its ~0.5 ms steps reach the client in bursts, so its
  TPOT measures the HTTP stream, not the engine.)
* default: the 1024x6 random-weight Llama that ``bench/compare_vllm_bench.py`` builds (~100M
  parameters, ~400 MB fp32 read per step) is served, this machine's bandwidth and GEMM FLOP/s are
  measured (``bench/measure_cpu.py``, one thread: the CPU worker's), and predicted TTFT / TPOT /
  throughput are compared with ``launchcard bench`` for each workload.

    python bench/predict_cpu.py --fit        # refit cpu:vllm on the 512x4 model
    python bench/predict_cpu.py [--json]     # the comparison table (README)

The machine is shared: the table says how loaded it was (load average before and after).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

VLLM_PY = ROOT / ".cache" / "vllm-venv" / "bin" / "python"
FIT_SHAPE, SCORE_SHAPE = "512x4", "1024x6"
KV_SPACE_GIB = 1
MAX_MODEL_LEN = 512
# (input, output, concurrency, prompts): short enough for a loaded 2-core machine
FIT_WORKLOADS = ((64, 32, 1, 6), (64, 32, 4, 12), (128, 16, 2, 8), (32, 64, 8, 16))
SCORE_WORKLOADS = ((128, 32, 1, 4), (128, 32, 4, 8), (256, 16, 2, 6))


@dataclass
class Measured:
    isl: int
    osl: int
    concurrency: int
    prompts: int
    ttft_ms: float
    tpot_ms: float
    out_tok_s: float


def serve(model_dir: Path, port: int, state: Path, log: Path) -> str:
    argv = [sys.executable, "-m", "launchcard.cli", "up", "--detach", "--no-record", "--state", str(state),
            "--log", str(log), "--timeout", "900", "--env", f"VLLM_CPU_KVCACHE_SPACE={KV_SPACE_GIB}", "--",
            str(VLLM_PY), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
            "--served-model-name", "m", "--port", str(port), "--max-model-len", str(MAX_MODEL_LEN), "--dtype",
            "float32", "--enforce-eager"]
    subprocess.run(argv, check=True, stdout=sys.stderr, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    return f"http://127.0.0.1:{port}"


def stop(state: Path) -> None:
    subprocess.run([sys.executable, "-m", "launchcard.cli", "down", "--state", str(state)], check=False,
                   stdout=sys.stderr, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})


REPEATS = 3  # each workload is run this many times, interleaved; the median run of each figure is kept


def bench(endpoint: str, model_dir: Path, isl: int, osl: int, conc: int, prompts: int, seed: int = 0) -> Measured:
    from launchcard.bench import Workload, run_bench

    res = run_bench(endpoint, Workload(input_tokens=isl, output_tokens=osl, num_prompts=prompts, concurrency=conc,
                                       warmup=1, timeout_s=600, seed=seed), model="m", model_dir=model_dir)
    s = res.summary
    if s.failed or not s.ttft_ms or not s.tpot_ms or not s.output_tokens_per_s:
        raise RuntimeError(f"bench failed: {s}")
    return Measured(isl, osl, conc, prompts, s.ttft_ms.mean, s.tpot_ms.mean, s.output_tokens_per_s)


def _median_run(runs: list[Measured]) -> Measured:
    def med(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 2]

    m = runs[0]
    return Measured(m.isl, m.osl, m.concurrency, m.prompts, med([r.ttft_ms for r in runs]),
                    med([r.tpot_ms for r in runs]), med([r.out_tok_s for r in runs]))


WORKER_CORE = 0  # vLLM's CPU worker binds core 0 on a 2-core machine (its log: "core ids=[0]", reserves 1)


def figures(path: Path, samples: list[dict[str, Any]]) -> Path:
    """Write the median of several measurements as one hardware-figures file."""
    def med(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 2]

    bw = [float(s["bandwidth_gbs"]) for s in samples]
    fl = [float(s["tflops"]["fp32"]) for s in samples]
    doc = {"id": "this-machine-cpu", "kind": "cpu", "bandwidth_gbs": med(bw), "tflops": {"fp32": med(fl)},
           "bandwidth_spread": max(bw) / min(bw),
           "method": (f"median of {len(samples)} measurements taken just before each run of the workload "
                      f"(bench/measure_cpu.py on the worker's core {WORKER_CORE}, one thread): weight-streaming "
                      f"{', '.join(f'{x:.2f}' for x in bw)} GB/s; fp32 GEMM {', '.join(f'{x * 1e3:.1f}' for x in fl)} "
                      f"GFLOP/s")}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def plan(model_dir: Path, fig: Path) -> Any:
    from launchcard.memory import Settings
    from launchcard.predict import HardwareFigures, serving_facts

    s = Settings(dtype="float32", max_model_len=MAX_MODEL_LEN, enforce_eager=True, device="cpu",
                 cpu_kvcache_space_gib=KV_SPACE_GIB)
    return serving_facts(model_dir / "config.json", s, hardware=HardwareFigures.from_file(fig), model=model_dir.name)


def predicted(facts: Any, m: Measured, coef: Any = None) -> Any:
    from launchcard.predict import Workload, predict

    return predict(facts, Workload(isl=m.isl, osl=m.osl, concurrency=m.concurrency, num_requests=m.prompts), coef)


def run_server(model_dir: Path, workloads: tuple[tuple[int, int, int, int], ...],
               port: int) -> list[tuple[Measured, Path]]:
    """Each workload ``REPEATS`` times, interleaved, the hardware figures measured right before each run (the
    machine is shared: its load moves between runs); per workload the median run and the median figures."""
    from measure_cpu import measure

    state, log = ROOT / ".cache" / "predict-cpu-up.json", ROOT / ".cache" / "predict-cpu-server.log"
    endpoint = serve(model_dir, port, state, log)
    try:
        runs: list[list[Measured]] = [[] for _ in workloads]
        figs: list[list[dict[str, Any]]] = [[] for _ in workloads]
        for rep in range(REPEATS):  # interleaved, so a burst of load from elsewhere hits one run of each, not all
            for i, w in enumerate(workloads):
                figs[i].append(measure(threads=1, core=WORKER_CORE, reps=3))
                runs[i].append(bench(endpoint, model_dir, *w, seed=rep))
    finally:
        stop(state)
    return [(_median_run(r), figures(ROOT / ".cache" / f"cpu-figures-{model_dir.name}-{i}.json", f))
            for i, (r, f) in enumerate(zip(runs, figs, strict=True))]


def fit_cpu(port: int) -> dict[str, Any]:
    """Fit cpu:vllm's overhead terms on the 512x4 model's runs and record them."""
    from compare_vllm_bench import bench_model
    from predict_accuracy import Row, fit, traces

    from launchcard.predict import PARAMS, Coefficients

    model_dir = bench_model(VLLM_PY, FIT_SHAPE)
    measured = run_server(model_dir, FIT_WORKLOADS, port)
    runs = [m for m, _ in measured]
    start = Coefficients(bw_eff=1.0, flops_eff=1.0, attn_eff=1.0, link_eff=1.0, collective_us=0.0, step_us=5000.0,
                         seq_us=200.0, layer_us=0.0, eager_layer_us=100.0, request_ms=5.0, key="cpu:vllm")
    rows = [Row(id=f"{FIT_SHAPE} {m.isl}x{m.osl} c{m.concurrency}", model=FIT_SHAPE, family="fit", engine="vllm",
                system="cpu", isl=m.isl, osl=m.osl, concurrency=m.concurrency, gpus=1, ttft_ms=m.ttft_ms,
                tpot_ms=m.tpot_ms, facts=plan(model_dir, fig), group="fit") for m, fig in measured]
    coef = start
    for _ in range(2):
        # measured figures: bandwidth, FLOP/s, attention and link efficiencies stay 1 (held), overheads are
        # fitted; every CPU step is eager, so the graph-layer term is held at 0 (one layer term suffices), and
        # the in-flight queue term too (four workloads cannot tell it from the per-sequence term)
        coef = fit(traces(rows, {"vllm": coef}), coef, hold=(0, 1, 2, 3, 4, 7, 10))
    path = ROOT / "src/launchcard/data/predict_coefficients.json"
    doc = json.loads(path.read_text())
    desc = "; ".join(f"{m.isl}x{m.osl} c{m.concurrency}: TTFT {m.ttft_ms:.1f} ms, TPOT {m.tpot_ms:.2f} ms"
                     for m in runs) + f" (median of {REPEATS} interleaved runs each)"
    doc["sets"]["cpu:vllm"] = {
        "values": {k: round(getattr(coef, k), 6) for k in PARAMS},
        "fitted_on": (f"launchcard bench on vLLM CPU ({VLLM_PY.parent.parent.name}) serving a random-weight Llama "
                      f"{FIT_SHAPE} (bench/compare_vllm_bench.py's builder; fp32, --enforce-eager, "
                      f"VLLM_CPU_KVCACHE_SPACE={KV_SPACE_GIB}) on "
                      f"this 2-core machine, {time.strftime('%Y-%m-%d', time.gmtime())} (bench/predict_cpu.py --fit): "
                      f"{desc}; bandwidth/FLOP/s measured before each run (bench/measure_cpu.py), efficiencies "
                      "fixed at 1"),
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(path)
    return doc["sets"]["cpu:vllm"]


def compare(model_dir: Path, port: int) -> dict[str, Any]:
    from compare_vllm_bench import bench_model

    if not model_dir.exists():
        model_dir = bench_model(VLLM_PY, SCORE_SHAPE)
    load0 = os.getloadavg()[0]
    rows = []
    figs = []
    for m, fig in run_server(model_dir, SCORE_WORKLOADS, port):
        p = predicted(plan(model_dir, fig), m)
        figs.append(json.loads(fig.read_text()))
        rows.append({"workload": f"{m.isl}x{m.osl} c{m.concurrency} ({m.prompts} prompts)",
                     "measured": {"ttft_ms": m.ttft_ms, "tpot_ms": m.tpot_ms, "output_tok_per_s": m.out_tok_s},
                     "predicted": {"ttft_ms": p.ttft_ms_mean, "tpot_ms": p.tpot_ms_mean,
                                   "output_tok_per_s": p.output_tok_per_s},
                     "tpot_error": p.tpot_ms_mean / m.tpot_ms - 1, "tput_error": p.output_tok_per_s / m.out_tok_s - 1,
                     "ttft_error": p.ttft_ms_mean / m.ttft_ms - 1, "decode_bound": p.decode.bound,
                     "figures": figs[-1]["method"], "bandwidth_spread": figs[-1]["bandwidth_spread"]})
    out = {"model": str(model_dir.name), "figures": figs[0],
           "load_average": [round(load0, 2), round(os.getloadavg()[0], 2)], "rows": rows}
    (ROOT / ".cache" / "predict-cpu-last.json").write_text(json.dumps(out, indent=2) + "\n")  # the last comparison
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fit", action="store_true", help=f"refit cpu:vllm on the {FIT_SHAPE} model")
    ap.add_argument("--port", type=int, default=18031)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not VLLM_PY.exists():
        print("no vLLM CPU venv: run scripts/setup.d/50-vllm-env.sh", file=sys.stderr)
        return 2
    if args.fit:
        print(json.dumps(fit_cpu(args.port), indent=2))
        return 0
    out = compare(ROOT / ".cache" / f"bench-model-{SCORE_SHAPE}", args.port)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"model {out['model']}; load average {out['load_average']}")
    for r in out["rows"]:
        print(f"  {r['workload']}: {r['figures']}")
    print("| workload | TTFT ms measured / predicted | TPOT ms measured / predicted | output tok/s measured / "
          "predicted | TPOT error | throughput error |")
    print("|---|---|---|---|---|---|")
    for r in out["rows"]:
        me, pr = r["measured"], r["predicted"]
        print(f"| {r['workload']} | {me['ttft_ms']:.1f} / {pr['ttft_ms']:.1f} | {me['tpot_ms']:.2f} / "
              f"{pr['tpot_ms']:.2f} | {me['output_tok_per_s']:.1f} / {pr['output_tok_per_s']:.1f} | "
              f"{r['tpot_error']:+.1%} | {r['tput_error']:+.1%} |")
    worst = max(max(abs(r["tpot_error"]), abs(r["tput_error"])) for r in out["rows"])
    print(f"worst TPOT/throughput error {worst:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
