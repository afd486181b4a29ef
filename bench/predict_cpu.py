"""``launchcard predict`` against the real vLLM CPU server, measured with ``launchcard bench``.

Two models, two roles (never fit and score on the same runs):

* ``--fit``: two smaller random-weight Llamas of other shapes (512 wide x 4 layers, ~21M parameters, and 768 x 8,
  built the same way) are served and benched under five workloads; the ``cpu:vllm`` host terms (per step,
  per sequence, per request) are fitted on those runs and written to ``data/predict_coefficients.json`` with
  the runs they came from (``--refit`` redoes the fit on the runs kept in ``.cache/predict-cpu-fit-runs.json``).
  FLOP/s and attention efficiencies stay 1: the figures are measured with the engine's own kernels on the
  model's own decoder layer, and vLLM's CPU attention kernel, timed alone, reads the KV cache at least as fast
  as the weights stream (15-17 GB/s against 12-13 here, README).  The engine's weight streaming against the
  probe's (``bw_eff``) is fitted: in the server the other core is busy (API server, the engine core's loop).
* default: the 1024x6 random-weight Llama that ``bench/compare_vllm_bench.py`` builds (~100M parameters,
  394 MB fp32 read per decode step) is served and predicted TTFT / TPOT / throughput are compared with
  ``launchcard bench`` for three workloads, each run three times interleaved.

The figures of a run, measured for it (never fitted on it): right before and right after it
``bench/measure_cpu.py`` times, on the worker's core in CPU seconds, the model's own decoder layers with
vLLM's kernels: one row through them and the lm_head (bandwidth) and at 2/4/8 rows (``decode_rows``: what
more sequences add to the weight pass), 64- and 256-row chunks (FLOP/s and the rows at which half of it is
reached, ``gemm_half_rows``), and one tiny kernel call from Python (the host's speed, which scales the fitted
host terms); during it the kernel's schedstat gives the share of its core
the CPU worker got (time it ran over time it was runnable: the worker spins between steps, so it is
runnable throughout).  The figures the prediction uses are the machine's times that share: on this
shared 2-core machine other jobs take 10-60% of the worker's core from one run to the next.

    python bench/predict_cpu.py --fit        # measure and fit cpu:vllm on the 512x4 model
    python bench/predict_cpu.py --refit      # fit again on the kept runs
    python bench/predict_cpu.py [--json]     # the comparison table (README)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

VLLM_PY = ROOT / ".cache" / "vllm-venv" / "bin" / "python"
# two fit models of other sizes and depths than the scored one: the weight pass's share of a step differs between
# them, which separates the engine's weight streaming (bw_eff, against the probe's) from its per-step host time
FIT_SHAPES, SCORE_SHAPE = ("512x4", "768x8"), "1024x6"
FIT_SHAPE = FIT_SHAPES[0]  # the small model the other bench scripts serve (measure_chat_request, measure_host_stream)
KV_SPACE_GIB = 1
MAX_MODEL_LEN = 512
# (input, output, concurrency, prompts): short enough for a loaded 2-core machine
# the fit's include long prompts (384 alone, 256 in pairs): prefill's attention and per-token costs beside the
# weight streaming of decode
FIT_WORKLOADS = ((64, 32, 1, 6), (64, 32, 4, 12), (256, 16, 2, 6), (32, 64, 8, 16), (384, 8, 1, 4))
# the 4-client workload's prompts are short (4 x 32 tokens prefill in about one decode step's time): with 128-token
# prompts which of the four requests sent together the idle engine's first step took (1+3, 2+2 or all 4: an OS
# race between client, API server and engine core, the finding "opening-burst") moved its TPOT 29-48 ms between
# runs with throughput steady, so TPOT measured the race, not the model (README, stop 27)
SCORE_WORKLOADS = ((128, 32, 1, 4), (32, 64, 4, 8), (256, 16, 2, 6))


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
    m = runs[0]
    return Measured(m.isl, m.osl, m.concurrency, m.prompts, _med([r.ttft_ms for r in runs]),
                    _med([r.tpot_ms for r in runs]), _med([r.out_tok_s for r in runs]))


WORKER_CORE = 0  # vLLM's CPU worker binds core 0 on a 2-core machine (its log: "core ids=[0]", reserves 1)


def _med(xs: list[float]) -> float:
    ys, n = sorted(xs), len(xs)
    return ys[n // 2] if n % 2 else (ys[n // 2 - 1] + ys[n // 2]) / 2


def figures(path: Path, before: dict[str, Any], after: dict[str, Any], shares: dict[str, float],
            cpu: dict[str, Any] | None = None, op_session: float | None = None) -> Path:
    """One run's figures: the machine's (the mean of those measured right before and right after the run, in
    CPU time: what the work costs with the core to itself) times the share of its core the engine's worker
    got during the run; with how far before and after were apart.  The host terms run at ``op_session``, the
    session's op time (``session_op``), where given."""
    bw = [float(before["bandwidth_gbs"]), float(after["bandwidth_gbs"])]
    fl = [float(before["tflops"]["fp32"]), float(after["tflops"]["fp32"])]
    op = [float(before["op_us"]), float(after["op_us"])]
    share = shares["worker"]
    doc = {"id": "this-machine-cpu", "kind": "cpu", "bandwidth_gbs": sum(bw) / 2 * share,
           "tflops": {"fp32": sum(fl) / 2 * share}, "share": share,
           **host_speed(op_session if op_session is not None else sum(op) / 2, shares, cpu),
           "shares": shares,
           **({"cpu": cpu} if cpu else {}),
           "machine": {"bandwidth_gbs": sum(bw) / 2, "gemm_gflops": sum(fl) / 2 * 1e3, "op_us": sum(op) / 2,
                       **({"op_us_session": op_session} if op_session is not None else {})},
           # ratios of the worker's own passes: the core share cancels out
           **_rows_figures(before, after),
           "spread": {"bandwidth": max(bw) / min(bw), "gemm": max(fl) / min(fl), "op": max(op) / min(op)},
           "method": f"the worker had {share:.0%} of its core during the run (time it ran over time it was runnable, "
                     f"/proc schedstat); "
                     f"machine figures: mean of those measured right before and right after the run: "
                     f"{before['method']}; then {after['bandwidth_gbs']:.2f} GB/s, "
                     f"{after['tflops']['fp32'] * 1e3:.1f} GFLOP/s, {after['op_us']:.2f} us"}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def session_op(run_ops: list[float]) -> float:
    """The host's op time for every run of one server session: the median of its runs' (each the mean of the
    probes right before and right after it).  Per run, the tiny kernel call's CPU time is bimodal beside a
    co-tenant while the engine's host work is not: in a fresh-clone CI run with a busy loop (stop 27, 20:07 UTC)
    the probe read 7.1-7.5 us, then 12.7-14.6 us for whole runs (before and after alike), and the runs' TPOT
    did not follow (4 clients 30.3 ms at 7.2 us, 30.8 ms at 14.5 us; 2 clients 61.0 at 7.2, 60.8 at 13.3), so
    a run's own reading moved its predicted TPOT by up to 19% and the session's median does not."""
    return _med(run_ops)


def host_speed(op_us: float, shares: dict[str, float], cpu: dict[str, Any] | None) -> dict[str, float]:
    """The host terms' op times of one run at the machine's op time ``op_us``: the engine's at the worker's core
    share, the API server's front end (on the other core) at the API server's, the client and a request's path
    through both at theirs (``front_figures``)."""
    return {"op_us": op_us / shares["worker"], "front_op_us": op_us / _front_share(shares),
            **front_figures(op_us, cpu)}


def _rows_figures(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The mean of the two probes' row-count figures (``decode_rows``, ``gemm_half_rows``), where both have them."""
    out: dict[str, Any] = {}
    rb, ra = before.get("decode_rows"), after.get("decode_rows")
    if rb and ra and set(rb) == set(ra):
        out["decode_rows"] = {m: round((float(rb[m]) + float(ra[m])) / 2, 4) for m in rb}
    if "gemm_half_rows" in before and "gemm_half_rows" in after:
        out["gemm_half_rows"] = round((float(before["gemm_half_rows"]) + float(after["gemm_half_rows"])) / 2, 2)
    return out


def _front_share(shares: dict[str, float]) -> float:
    """The share of its core the API server's process got while runnable (floored: a run where it never waited
    reads 1)."""
    return max(0.05, min(1.0, float(shares.get("api", 1.0))))


def front_figures(op_us: float, cpu: dict[str, Any] | None) -> dict[str, float]:
    """The op times of the processes outside the engine, from their CPU time during the run (``cpu``: per
    process the seconds its threads, and its main thread, ran and waited on a run queue): ``client_op_us``, the
    benchmark client's (``op_us`` over the share of a core it got while runnable), and ``request_op_us``, a
    request's path through the client and the API server together: each spends its part of the request's CPU
    time at its own share, so the path runs at their CPU time over the sum of their CPU and run-queue time (the
    share weighted by the CPU time each spent).  Another job on their core (a busy loop in the client's session,
    say) takes its share from them, not from the worker, whose core share alone scaled these terms before.
    None without the figures."""
    if not cpu or "client" not in cpu or "api" not in cpu:
        return {}
    # each process's main thread where recorded: the asyncio loops that carry a request (~90% of the API server's
    # CPU time; the client has one thread).  The API server's other threads once summed 17.7 s on a run queue in
    # an 11.8 s run while running 0.02 s: pool threads woken together, not the request's path
    use = {k: cpu.get(f"{k}_main") or cpu[k] for k in ("api", "client")}
    ran = {k: float(v[0]) for k, v in use.items()}
    wait = {k: float(v[1]) for k, v in use.items()}
    client = _front_share({"api": ran["client"] / max(1e-9, ran["client"] + wait["client"])})
    path = _front_share({"api": sum(ran.values()) / max(1e-9, sum(ran.values()) + sum(wait.values()))})
    return {"client_op_us": op_us / client, "request_op_us": op_us / path, "client_share": client,
            "request_share": path}


def _engine_pids(server_pid: int) -> dict[str, int]:
    """The server's processes: ``api`` (the API server), ``engine`` (``VLLM::EngineCore``: the scheduler) and
    ``worker`` (``VLLM::Worker``: the model, pinned to its core)."""
    kids: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                st = (d / "stat").read_text()
            except OSError:
                continue
            names[int(d.name)] = st[st.index("(") + 1:st.rindex(")")]
            kids.setdefault(int(st[st.rindex(")") + 2:].split()[1]), []).append(int(d.name))
    todo, seen = [server_pid], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo += kids.get(p, [])
    out = {"api": server_pid}
    for key, prefix in (("engine", "VLLM::EngineCor"), ("worker", "VLLM::Worker")):
        found = [p for p in seen if names.get(p, "").startswith(prefix)]
        if not found:
            raise RuntimeError(f"no {prefix} process under pid {server_pid}: {[(p, names.get(p)) for p in seen]}")
        out[key] = found[0]
    return out


def _sched(pid: int) -> tuple[float, float]:
    """Seconds a process's main thread (the CPU worker's one OpenMP thread) ran and waited on a run queue
    (the kernel's schedstat)."""
    run, wait = Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[:2]
    return int(run) / 1e9, int(wait) / 1e9


def _threads(pid: int) -> dict[int, tuple[float, float, int]]:
    """Seconds each thread of a process ran and waited on a run queue so far, and the times it was put on a
    CPU (the kernel's schedstat), by thread id."""
    out: dict[int, tuple[float, float, int]] = {}
    for t in Path(f"/proc/{pid}/task").iterdir():
        try:
            run, wait, slices = t.joinpath("schedstat").read_text().split()[:3]
        except (OSError, ValueError):
            continue  # the thread ended meanwhile
        out[int(t.name)] = (int(run) / 1e9, int(wait) / 1e9, int(slices))
    return out


def _cpu_delta(t0: dict[int, tuple[float, float, int]],
               t1: dict[int, tuple[float, float, int]]) -> tuple[float, float, int]:
    """Seconds all of a process's threads ran and waited between two reads, and the times they were put on a
    CPU (a thread started meanwhile counts from 0; one that ended meanwhile is lost: the pools here live as long
    as the process)."""
    zero = (0.0, 0.0, 0)
    ran = sum(x[0] - t0.get(t, zero)[0] for t, x in t1.items())
    wait = sum(x[1] - t0.get(t, zero)[1] for t, x in t1.items())
    return ran, wait, sum(x[2] - t0.get(t, zero)[2] for t, x in t1.items())


def plan(model_dir: Path, fig: Path | None) -> Any:
    from launchcard.memory import Settings
    from launchcard.predict import HardwareFigures, serving_facts

    s = Settings(dtype="float32", max_model_len=MAX_MODEL_LEN, enforce_eager=True, device="cpu",
                 cpu_kvcache_space_gib=KV_SPACE_GIB)
    hw = (HardwareFigures.from_file(fig) if fig else  # placeholder figures: only the weight bytes are read
          HardwareFigures(id="placeholder", kind="cpu", bandwidth_bps=1e10, flops={"fp32": 1e11}))
    return serving_facts(model_dir / "config.json", s, hardware=hw, model=model_dir.name)


def predicted(facts: Any, m: Measured, coef: Any = None) -> Any:
    from launchcard.predict import Workload, predict

    return predict(facts, Workload(isl=m.isl, osl=m.osl, concurrency=m.concurrency, num_requests=m.prompts), coef)


@dataclass
class Run:
    measured: Measured
    figures: Path  # measured right before this run


def run_server(model_dir: Path, workloads: tuple[tuple[int, int, int, int], ...], port: int) -> list[list[Run]]:
    """Each workload ``REPEATS`` times, interleaved (a burst of load from elsewhere hits one run of each, not
    all), this machine's figures measured right before each run on the worker's core with the engine's own
    kernel and the model's weight bytes (bench/measure_cpu.py)."""
    from measure_cpu import measure

    weight_mb = plan(model_dir, None).dense_bytes / 1e6
    config = model_dir / "config.json"  # the probe runs the model's own decoder layer
    state, log = ROOT / ".cache" / "predict-cpu-up.json", ROOT / ".cache" / "predict-cpu-server.log"
    endpoint = serve(model_dir, port, state, log)
    order = [(rep, i) for rep in range(REPEATS) for i in range(len(workloads))]
    probes: list[dict[str, Any]] = []
    measured: list[tuple[Measured, dict[str, float]]] = []
    cpu: list[dict[str, Any]] = []  # per run: each process's seconds ran / waited (all threads), the wall time
    try:
        pids = _engine_pids(int(json.loads(state.read_text())["pid"]))
        probes.append(measure(threads=1, core=WORKER_CORE, reps=3, weight_mb=weight_mb, config=config))
        procs = {**pids, "client": os.getpid()}  # the benchmark client runs in this process
        for rep, i in order:  # run k lies between probes k and k + 1
            s0 = {k: _sched(p) for k, p in pids.items()}
            c0, w0 = {k: _threads(p) for k, p in procs.items()}, time.monotonic()
            m = bench(endpoint, model_dir, *workloads[i], seed=rep)
            c1, w1 = {k: _threads(p) for k, p in procs.items()}, time.monotonic()
            s1 = {k: _sched(p) for k, p in pids.items()}
            cpu.append({"wall_s": round(w1 - w0, 4),
                        **{k: [round(x, 4) for x in _cpu_delta(c0[k], c1[k])] for k in procs},
                        # the client's and the API server's main threads alone (their asyncio loops)
                        **{f"{k}_main": [round(x, 4) for x in _cpu_delta({p: c0[k][p]}, {p: c1[k][p]})]
                           for k, p in procs.items() if k in ("api", "client")}})
            # the share of its core each process got while it had work: time it ran over time it was runnable
            # (ran or waited on a run queue behind other jobs); the worker spins between steps, so it is
            # runnable throughout
            measured.append((m, {k: (s1[k][0] - s0[k][0]) / max(1e-9, s1[k][0] - s0[k][0] + s1[k][1] - s0[k][1])
                                 for k in pids}))
            probes.append(measure(threads=1, core=WORKER_CORE, reps=3, weight_mb=weight_mb, config=config))
    finally:
        stop(state)
    runs: list[list[Run]] = [[] for _ in workloads]
    op = session_op([(float(probes[k]["op_us"]) + float(probes[k + 1]["op_us"])) / 2 for k in range(len(order))])
    for k, (rep, i) in enumerate(order):
        m, shares = measured[k]
        path = figures(ROOT / ".cache" / f"cpu-figures-{model_dir.name}-{i}-{rep}.json", probes[k], probes[k + 1],
                       shares, cpu[k], op_session=op)
        runs[i].append(Run(m, path))
    return runs


def _spread(r: Run) -> float:
    """How far the figures measured before and after the run were apart (max/min, the worst figure)."""
    sp = json.loads(r.figures.read_text())["spread"]
    return max(float(sp["bandwidth"]), float(sp["op"]))


FIT_RUNS = ROOT / ".cache" / "predict-cpu-fit-runs.json"  # the --fit runs, kept so --refit can redo the fit
LAST = ROOT / ".cache" / "predict-cpu-last.json"  # the last comparison's runs, kept so --rescore can redo it


def fit_cpu(port: int) -> dict[str, Any]:
    """Serve the 512x4 model, run the fit workloads (their figures measured around each run), keep the runs in
    ``FIT_RUNS`` and fit cpu:vllm on them."""
    from compare_vllm_bench import bench_model

    doc = []
    for shape in FIT_SHAPES:
        measured = run_server(bench_model(VLLM_PY, shape), FIT_WORKLOADS, port)
        doc += [{"model": shape, **asdict(r.measured), "figures": json.loads(r.figures.read_text())}
                for rs in measured for r in rs]
    FIT_RUNS.write_text(json.dumps({"models": list(FIT_SHAPES), "measured_at": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                                          time.gmtime()),
                                    "runs": doc}, indent=2) + "\n")
    return refit()


def refit() -> dict[str, Any]:
    """Fit cpu:vllm's host terms (and the attention kernels' efficiency) on the runs in ``FIT_RUNS``."""
    from compare_vllm_bench import bench_model
    from predict_accuracy import UPPER, Row, Trace, _mean_vec, fit, run

    from launchcard.predict import PARAMS, Coefficients, on_host

    saved = json.loads(FIT_RUNS.read_text())
    runs = saved["runs"]
    ref = _med([float(r["figures"]["machine"]["op_us"]) for r in runs])
    sessions: dict[str, list[float]] = {}  # one server session per fit model
    for r in runs:
        sessions.setdefault(str(r.get("model") or FIT_SHAPES[0]), []).append(float(r["figures"]["machine"]["op_us"]))
    rows, scale, fscale, prompts = [], [], [], []
    for k, r in enumerate(runs):
        fig = ROOT / ".cache" / f"cpu-figures-fit-{k}.json"
        shape = str(r.get("model") or FIT_SHAPES[0])
        fr = {**r["figures"], **host_speed(session_op(sessions[shape]), r["figures"]["shares"],
                                           r["figures"].get("cpu"))}
        fig.write_text(json.dumps(fr))
        model_dir = bench_model(VLLM_PY, shape)
        rows.append(Row(id=f"{shape} {r['isl']}x{r['osl']} c{r['concurrency']} #{k}", model=shape,
                        family="fit", engine="vllm", system="cpu", isl=r["isl"], osl=r["osl"],
                        concurrency=r["concurrency"], gpus=1, ttft_ms=r["ttft_ms"], tpot_ms=r["tpot_ms"],
                        facts=plan(model_dir, fig), group="fit"))
        scale.append(float(fr["op_us"]) / ref)
        fscale.append(float(fr.get("request_op_us") or fr["front_op_us"]) / ref)  # request_ms/inflight_us's speed
        prompts.append(int(r["prompts"]))
    coef = Coefficients(bw_eff=1.0, flops_eff=1.0, attn_eff=1.0, link_eff=1.0, collective_us=0.0, step_us=5000.0,
                        seq_us=200.0, layer_us=0.0, eager_layer_us=0.0, request_ms=5.0, key="cpu:vllm",
                        host_op_us=ref, front_in_schedule=True)
    for _ in range(3):
        tr = []
        for row, x, xf, n in zip(rows, scale, fscale, prompts, strict=True):
            # simulated at the run's own host speeds: the front end is in the closed loop's schedule
            hw = row.facts.hardware
            res = run(row, on_host(coef, hw.host_op_us, hw.front_op_us, client_op_us=hw.client_op_us,
                                   request_op_us=hw.request_op_us), trace=True, requests=n)
            t = Trace(row, _mean_vec(res.tpot_fv), _mean_vec(res.ttft_fv))
            for vec in (t.a_tpot, t.a_ttft):  # each run's host terms at its own op time: fit in reference units
                for i in range(4, len(vec)):
                    vec[i] *= xf if i >= 10 else x  # 10, 11: a request's path (client + API server), at its speed
            tr.append(t)
        # measured figures: FLOP/s (the engine's own kernels on the model's own layer), attention (vLLM's CPU
        # attention kernel timed alone reads KV at least as fast as the weights stream) and link held at 1;
        # fitted: the engine's weight streaming against the probe's (bw_eff: the probe runs the layers alone with
        # the other core idle; in the server the API server and the engine core's busy loop share the core's
        # caches and memory, and vLLM's iteration log put 1-sequence decode steps of the 1024x6 model at a
        # median 38-40 ms against the probe's 29-31 ms pass), the per-step and per-sequence host time and the
        # per-request front (HTTP, tokenizer).  Two fit models of different weight bytes separate bw_eff from
        # the per-step term.  (Fitting the attention efficiency gave 0.30: on these small models a decode's
        # KV is a few hundred KB, so the term soaked up per-sequence host time and tripled attention on the
        # scored model.)  The per-layer terms stay 0 (the step term carries them); the in-flight queue term
        # too (these workloads cannot tell it from the others).  A CPU step's per-sequence host time
        # (sampling, input preparation and output handling in Python on a 2-core machine) may run past the GPU
        # sets' 500 us bound
        coef = fit(tr, coef, hold=(1, 2, 3, 4, 7, 8, 9, 11), upper=(*UPPER[:6], 5000.0, *UPPER[7:]))
    path = ROOT / "src/launchcard/data/predict_coefficients.json"
    doc = json.loads(path.read_text())
    by: dict[tuple[str, int, int, int], list[dict[str, Any]]] = {}
    for r in runs:
        by.setdefault((str(r.get("model") or FIT_SHAPES[0]), r["isl"], r["osl"], r["concurrency"]), []).append(r)
    desc = "; ".join(f"{m} {i}x{o} c{c}: TPOT " + "/".join(f"{r['tpot_ms']:.1f}" for r in rs) + " ms, TTFT "
                     + "/".join(f"{r['ttft_ms']:.0f}" for r in rs) + " ms, worker core share "
                     + "/".join(f"{r['figures']['share']:.2f}" for r in rs) for (m, i, o, c), rs in by.items())
    doc["sets"]["cpu:vllm"] = {
        "values": {k: round(getattr(coef, k), 6) for k in PARAMS},
        "host_op_us": round(ref, 3),
        "front_in_schedule": True,
        "fitted_on": (f"launchcard bench on vLLM CPU ({VLLM_PY.parent.parent.name}) serving random-weight Llamas "
                      f"{' and '.join(FIT_SHAPES)} (bench/compare_vllm_bench.py's builder; fp32, --enforce-eager, "
                      f"VLLM_CPU_KVCACHE_SPACE={KV_SPACE_GIB}) on this 2-core machine, {saved['measured_at']} "
                      f"(bench/predict_cpu.py --fit), {REPEATS} interleaved runs per workload: {desc}; around each "
                      f"run bench/measure_cpu.py measured, on the worker's core in CPU time with vLLM's kernels on "
                      f"the model's own decoder layer, bandwidth (one row), decode_rows (2/4/8 rows), FLOP/s and "
                      f"gemm_half_rows (64/256-row chunks) and the host op time (median op time {ref:.2f} us = "
                      "host_op_us, the speed the host terms are in; each run's host terms at its server "
                      "session's median op time, session_op: one run's probe reads bimodal beside a co-tenant) "
                      "and each was scaled by the worker's core share during the run (the request-path terms "
                      "request_ms/inflight_us by the share the benchmark client and the API server got together, "
                      "weighted by their CPU time, or by the "
                      "API server's where a run did not record the client's; a closed loop's next request "
                      "enters the simulated schedule request_ms after the last one ended); FLOP/s/attention "
                      "efficiencies fixed at 1 (the engine's own kernels measured); fitted: bw_eff (the engine's "
                      "weight streaming against the probe's), step_us, seq_us, request_ms"),
    }
    from launchcard import atomicfile

    atomicfile.write_text(path, json.dumps(doc, indent=2) + "\n")
    return doc["sets"]["cpu:vllm"]


STEADY = 1.3  # a run is judged when the figures measured right before and right after it agree within 30%


def compare(model_dir: Path, port: int) -> dict[str, Any]:
    """Measured vs predicted per workload.  Each run is predicted with the figures measured around it (the
    machine's, and the worker's core share during the run); a workload is judged on its steady runs (figures
    before and after within ``STEADY``) when it has at least two, else on all: the median over those runs of
    each run's error against its own prediction."""
    from compare_vllm_bench import bench_model

    if not model_dir.exists():
        model_dir = bench_model(VLLM_PY, SCORE_SHAPE)
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    rows = []
    for runs in run_server(model_dir, SCORE_WORKLOADS, port):
        preds = [predicted(plan(model_dir, r.figures), r.measured) for r in runs]
        figs = [json.loads(r.figures.read_text()) for r in runs]
        per_run = [{"tpot_ms": r.measured.tpot_ms, "output_tok_per_s": r.measured.out_tok_s,
                    "ttft_ms": r.measured.ttft_ms, "predicted_tpot_ms": round(p.tpot_ms_mean, 3),
                    "predicted_tok_per_s": round(p.output_tok_per_s, 3), "predicted_ttft_ms": round(p.ttft_ms_mean, 1),
                    "bandwidth_gbs": round(f["bandwidth_gbs"], 2), "gemm_gflops": round(f["tflops"]["fp32"] * 1e3, 1),
                    "op_us": round(f["op_us"], 2), "shares": {k: round(v, 2) for k, v in f["shares"].items()},
                    **{k: round(f[k], 3) for k in ("client_share", "request_share") if k in f}, "cpu": f.get("cpu"),
                    "spread": round(_spread(r), 3), "steady": _spread(r) <= STEADY, "figures": str(r.figures)}
                   for r, p, f in zip(runs, preds, figs, strict=True)]
        judged = [k for k, x in enumerate(per_run) if x["steady"]]
        use = judged if len(judged) >= 2 else list(range(len(runs)))
        m = _median_run([runs[k].measured for k in use])

        # each run against its own prediction (the machine's share moves between runs): the median error
        tpot_e = _med([preds[k].tpot_ms_mean / runs[k].measured.tpot_ms - 1 for k in use])
        tput_e = _med([preds[k].output_tok_per_s / runs[k].measured.out_tok_s - 1 for k in use])
        ttft_e = _med([preds[k].ttft_ms_mean / runs[k].measured.ttft_ms - 1 for k in use])
        rows.append({"workload": f"{m.isl}x{m.osl} c{m.concurrency} ({m.prompts} prompts)",
                     "measured": {"ttft_ms": m.ttft_ms, "tpot_ms": m.tpot_ms, "output_tok_per_s": m.out_tok_s},
                     "predicted": {"ttft_ms": _med([preds[k].ttft_ms_mean for k in use]),
                                   "tpot_ms": _med([preds[k].tpot_ms_mean for k in use]),
                                   "output_tok_per_s": _med([preds[k].output_tok_per_s for k in use])},
                     "steady": len(judged) >= 2, "runs": per_run,
                     "tpot_error": tpot_e, "tput_error": tput_e, "ttft_error": ttft_e,
                     "decode_bound": preds[0].decode.bound,
                     "figures": figs[0]["method"]})
    out = {"model": str(model_dir.name), "load_average": [round(load0, 2), round(os.getloadavg()[0], 2)],
           "wall_s": round(time.monotonic() - t0, 1), "steady_within": STEADY, "rows": rows}
    LAST.write_text(json.dumps(out, indent=2) + "\n")  # the last comparison (--rescore reads it)
    return out


def _workload_of(label: str) -> tuple[int, int, int, int]:
    """(input, output, concurrency, prompts) from a comparison row's label ("128x32 c4 (8 prompts)"): a comparison
    kept from before the workloads changed is re-predicted for the workload it ran."""
    import re

    m = re.fullmatch(r"(\d+)x(\d+) c(\d+) \((\d+) prompts\)", label)
    if not m:
        raise ValueError(f"a row's workload {label!r} is not INPUTxOUTPUT cCLIENTS (N prompts)")
    isl, osl, conc, prompts = (int(x) for x in m.groups())
    return isl, osl, conc, prompts


def rescore(path: Path = LAST, coef: Any = None) -> list[dict[str, Any]]:
    """The runs of the last comparison predicted again with this code (and ``coef``, else the shipped set): the
    same measurements, another model.  Per workload: the median over its judged runs of each run's error."""
    from compare_vllm_bench import bench_model

    doc = json.loads(path.read_text())
    model_dir = bench_model(VLLM_PY, SCORE_SHAPE)

    def fig_doc(i: int, rep: int, x: dict[str, Any]) -> dict[str, Any]:
        # the figures file where the comparison wrote it, else by name under this tree's .cache (a comparison
        # run in another worktree of the same shared cache)
        fig = Path(x.get("figures") or f"cpu-figures-{model_dir.name}-{i}-{rep}.json")
        if not fig.exists():
            fig = ROOT / ".cache" / fig.name
        return dict(json.loads(fig.read_text()))

    figs = {(i, rep): fig_doc(i, rep, x) for i, row in enumerate(doc["rows"]) for rep, x in enumerate(row["runs"])}
    op = session_op([float(f["machine"]["op_us"]) for f in figs.values()])
    out = []
    for i, row in enumerate(doc["rows"]):
        isl, osl, conc, prompts = _workload_of(row["workload"])
        errs: dict[str, list[float]] = {"tpot": [], "tput": [], "ttft": []}
        runs = row["runs"]
        judged = [x for x in runs if x["steady"]]
        for rep, x in enumerate(runs):
            if len(judged) >= 2 and not x["steady"]:
                continue
            doc_f = {**figs[i, rep], **host_speed(op, figs[i, rep]["shares"], figs[i, rep].get("cpu"))}
            tmp = ROOT / ".cache" / f"cpu-figures-rescore-{i}-{rep}.json"
            tmp.write_text(json.dumps(doc_f))
            m = Measured(isl, osl, conc, prompts, x["ttft_ms"], x["tpot_ms"], x["output_tok_per_s"])
            p = predicted(plan(model_dir, tmp), m, coef)
            errs["tpot"].append(p.tpot_ms_mean / m.tpot_ms - 1)
            errs["tput"].append(p.output_tok_per_s / m.out_tok_s - 1)
            errs["ttft"].append(p.ttft_ms_mean / m.ttft_ms - 1)
        out.append({"workload": row["workload"], **{f"{k}_error": _med(v) for k, v in errs.items()},
                    "per_run": {k: [round(e, 3) for e in v] for k, v in errs.items()}})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fit", action="store_true",
                    help=f"measure and fit cpu:vllm on the {' and '.join(FIT_SHAPES)} models")
    ap.add_argument("--refit", action="store_true", help=f"fit cpu:vllm again on the runs kept in {FIT_RUNS.name}")
    ap.add_argument("--rescore", action="store_true", help=f"predict the runs of the last comparison ({LAST.name}) "
                                                              "again with this code, without a server")
    ap.add_argument("--last", type=Path, default=LAST, help="the comparison --rescore re-predicts (default: the last)")
    ap.add_argument("--port", type=int, default=18031)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.rescore and not args.last.is_file():
        print(f"bench/predict_cpu.py --rescore: {args.last} is not a file; run python bench/predict_cpu.py first (it "
              "keeps its runs there) or pass --last FILE", file=sys.stderr)
        return 2
    if not VLLM_PY.exists():
        print("no vLLM CPU venv: run scripts/setup.d/50-vllm-env.sh", file=sys.stderr)
        return 2
    if args.rescore:
        try:
            rows = rescore(args.last)
        except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:  # a damaged or foreign comparison
            print(f"bench/predict_cpu.py --rescore: cannot re-predict {args.last} ({type(exc).__name__}: {exc}); run "
                  "python bench/predict_cpu.py again (it keeps its runs there)", file=sys.stderr)
            return 2
        for r in rows:
            print(f"{r['workload']}: TPOT {r['tpot_error']:+.1%}, throughput {r['tput_error']:+.1%}, TTFT "
                  f"{r['ttft_error']:+.1%}; per run {r['per_run']}")
        return 0
    if args.fit or args.refit:
        print(json.dumps(fit_cpu(args.port) if args.fit else refit(), indent=2))
        return 0
    out = compare(ROOT / ".cache" / f"bench-model-{SCORE_SHAPE}", args.port)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"model {out['model']}; load average {out['load_average']}")
    for r in out["rows"]:
        print(f"  {r['workload']}: {r['figures']}")
    print("| workload | TTFT ms measured / predicted | TPOT ms measured / predicted | output tok/s measured / "
          "predicted | TPOT error | throughput error |  (medians of runs; errors: median of each run's)")
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
