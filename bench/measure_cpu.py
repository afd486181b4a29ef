"""Measure this machine's figures for the vLLM CPU backend, the ones ``launchcard predict`` times a CPU
step against (``--hardware-figures FILE``).

Runs in the vLLM CPU venv (``.cache/vllm-venv``) with the kernel the engine itself runs: vLLM 0.32 sends
every unquantized fp32 linear layer of an x86 CPU to oneDNN with a prepacked weight
(``vllm/model_executor/layers/utils.py`` ``dispatch_cpu_unquantized_gemm`` -> ``_custom_ops.create_onednn_mm``
/ ``onednn_mm``), single-threaded on the worker's core when the machine has two cores (the CPU worker binds
``core ids=[0]`` and reserves the other for the API server).  Three figures, medians of repeats:

* weight-streaming bandwidth: one-row ``onednn_mm`` over fp32 weights of ``--weight-mb`` in all (the model's
  own weight bytes when given: what fits in the caches depends on it), i.e. what a decode step does;
* GEMM FLOP/s: ``onednn_mm`` of a 256-row prefill chunk (1024 x 4096 weights);
* host op time: microseconds of one tiny ``onednn_mm`` call from Python, the per-kernel dispatch an eager
  CPU step pays for every op; the ``cpu:vllm`` host terms are scaled by it.

Each is timed in the probe thread's CPU seconds (``time.thread_time``), not wall seconds: what the work
costs when it has the core.  On a core shared with other jobs the wall time stretches by the share the
probe got (``probe_share``, recorded), which moves from second to second; the engine's own share during a
run is measured separately (bench/predict_cpu.py reads its worker's CPU time).

    python bench/measure_cpu.py [--out .cache/cpu-figures.json] [--core 0] [--weight-mb 400]

Falls back to ``torch.nn.functional.linear`` (said in ``method``) when the venv's vLLM has no oneDNN op.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VLLM_PY = ROOT / ".cache" / "vllm-venv" / "bin" / "python"

_PROBE = r"""
import json, os, statistics, time, torch
threads = int(os.environ.get("THREADS") or torch.get_num_threads())
torch.set_num_threads(threads)
if os.environ.get("CORE"):
    os.sched_setaffinity(0, {int(os.environ["CORE"])})
reps = int(os.environ.get("REPS") or 5)
mb = float(os.environ.get("WEIGHT_MB") or 256)
def _engine_ops():
    # the library vLLM's CPU platform loads (platforms/cpu.py import_kernels: _C with AVX-512 BF16, _C_AVX512
    # with AVX-512, else _C_AVX2), loaded alone: importing vllm costs ~3 s of CPU per probe, its kernels ~0
    import importlib.util
    root = os.path.dirname(importlib.util.find_spec("vllm").origin)
    if torch.cpu._is_avx512_supported():
        name = "_C" if torch.cpu._is_avx512_bf16_supported() else "_C_AVX512"
    else:
        name = "_C_AVX2"
    torch.ops.load_library(os.path.join(root, name + ".abi3.so"))
    assert hasattr(torch.ops._C, "create_onednn_mm_handler")
    return name
try:
    lib = _engine_ops()
    kernel = f"oneDNN onednn_mm (vLLM's fp32 linear on x86, vllm/{lib})"
    def prep(w):
        # vLLM's create_onednn_mm: a handler over the prepacked [K, N] weight (the primitive cache size as before)
        ptr = torch.ops._C.create_onednn_mm_handler(w.t(), 32)
        return (torch.tensor(ptr, dtype=torch.int64), w.shape[1], w.shape[0])
    def mm(h, x):
        # what vLLM's onednn_mm wrapper does around the kernel (the op time is the host's speed: same work)
        out = torch.empty((*x.shape[0:-1], h[2]), dtype=x.dtype)
        torch.ops._C.onednn_mm(out, x.reshape(-1, h[1]), None, h[0])
        return out
except Exception:
    kernel = "torch.nn.functional.linear (no vLLM oneDNN op)"
    def prep(w):
        return w
    def mm(h, x):
        return torch.nn.functional.linear(x, h)
walls = []
def med(fn):
    # CPU seconds of this thread (what the work costs when it has the core) and wall seconds (what it took on
    # a core shared with other work); the figures are the former, the share the ratio of the two
    fn()
    xs, ws = [], []
    for _ in range(reps):
        t, c = time.perf_counter(), time.thread_time(); fn(); ws.append(time.perf_counter() - t)
        xs.append(time.thread_time() - c)
    walls.append((statistics.median(xs), statistics.median(ws)))
    return statistics.median(xs)
shape = json.loads(os.environ.get("LAYER") or "null")
rows_ms = {}
pf_gflops = {}
half_rows = 0.0
if shape:
    # the model's own decoder layer, with vLLM's own CPU kernels, attention left out (the prediction times it
    # by its KV bytes): the norms (vLLM's CPU IR runs rms_norm native), q/k rotary, the KV-cache write, the
    # four projections through oneDNN with prepacked weights, SiLU-and-mul; the lm_head after the last layer
    H, I, L, V = shape["hidden"], shape["intermediate"], shape["layers"], shape["vocab"]
    NH, KVH, D = shape["heads"], shape["kv_heads"], shape["head_dim"]
    q_out, kv_out = NH * D, KVH * D
    lay = [(q_out + 2 * kv_out, H), (H, q_out), (2 * I, H), (H, I)]  # [out, in] as nn.Linear
    ws = [[prep(torch.full((o, i), 0.01)) for o, i in lay] for _ in range(L)]
    head = prep(torch.full((V, H), 0.01))
    nbytes = (sum(o * i for o, i in lay) * L + V * H) * 4
    layer_params = sum(o * i for o, i in lay) * L
    norm_w = torch.ones(H)
    cos_sin = torch.full((4096, D), 0.5)
    BS = 128
    caches = [torch.zeros(8, KVH, BS * 2, D) for _ in range(L)]
    try:
        _C = torch.ops._C
        def rope(pos, q, k):
            _C.rotary_embedding(pos, q, k, D, cos_sin, True)
        def cache_write(l, k, v, slots):
            kc, vc = caches[l].chunk(2, dim=2)
            _C.cpu_attn_reshape_and_cache(k.view(-1, KVH, D), v.reshape(-1, KVH, D), kc, vc, slots, "vec", 1.0, 1.0,
                                          "auto")
        def silu_mul(x):
            out = torch.empty(x.shape[0], x.shape[1] // 2)
            _C.silu_and_mul(out, x)
            return out
        silu_mul(torch.ones(1, 4)); rope(torch.zeros(1, dtype=torch.int64), torch.ones(1, q_out), torch.ones(1, kv_out))
        cache_write(0, torch.ones(1, kv_out), torch.ones(1, kv_out), torch.zeros(1, dtype=torch.int64))
    except Exception:
        def rope(pos, q, k):
            q.mul_(1.0); k.mul_(1.0)
        def cache_write(l, k, v, slots):
            caches[l].view(-1)[: k.numel()].copy_(k.reshape(-1))
        def silu_mul(x):
            a, b = x.chunk(2, dim=-1)
            return torch.nn.functional.silu(a) * b
    def norm(x, res):
        if res is not None:
            x = x + res
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * norm_w, x
    def forward(m, lm_head):
        h = torch.full((m, H), 0.5)
        res = None
        pos = torch.arange(m, dtype=torch.int64) % 4096
        slots = torch.arange(m, dtype=torch.int64) % (8 * BS)
        for l in range(L):
            w = ws[l]
            x, res = norm(h, res)
            qkv = mm(w[0], x)
            q, k, v = qkv.split([q_out, kv_out, kv_out], dim=-1)
            q, k = q.contiguous(), k.contiguous()
            rope(pos, q, k)
            cache_write(l, k, v, slots)
            h = mm(w[1], q)  # attention left out: its output has q's shape
            x, res = norm(h, res)
            h = mm(w[3], silu_mul(mm(w[2], x)))
        x, _ = norm(h, res)
        if lm_head:
            mm(head, x[-1:])
    # the row counts in interleaved rounds (a drift in the machine's speed hits every count alike): a decode
    # step's few rows (at least 7 rounds: their times are a few percent apart), then prefill chunks through the
    # layers alone (the lm_head runs for one row of a prefill)
    def rounds(counts, n, lm_head):
        for m in counts:
            forward(m, lm_head)
        got = {m: [] for m in counts}
        for _ in range(n):
            for m in counts:
                t, c = time.perf_counter(), time.thread_time(); forward(m, lm_head)
                got[m].append((time.thread_time() - c, time.perf_counter() - t))
        out = {}
        for m in counts:
            out[m] = statistics.median(x for x, _ in got[m])
            walls.append((out[m], statistics.median(w for _, w in got[m])))
        return out
    rows_ms = {m: t * 1e3 for m, t in rounds((1, 2, 4, 8), max(7, reps), True).items()}
    t_bw = rows_ms[1] / 1e3
    kernel += " on the model's decoder layer (its GEMMs, norms, rotary, KV write, SiLU-and-mul; attention left out)"
    pf = rounds((64, 256), reps, False)
    pf_gflops = {m: 2 * m * layer_params / t / 1e9 for m, t in pf.items()}
    # a GEMM's FLOP/s grows with its rows until they fill the core's blocking: 1/F = (1 + half / rows) / F_max
    # through the two chunks (F_max, and the rows at which half of it is reached)
    (m1, f1), (m2, f2) = sorted(pf_gflops.items())
    b = (1 / f1 - 1 / f2) / (1 / m1 - 1 / m2)
    a = 1 / f2 - b / m2
    if a > 0 and b >= 0:
        gemm, half_rows = 1e9 / a, b / a
    else:  # no fill effect this time (noise): the larger chunk's rate, no half
        gemm, half_rows = f2 * 1e9, 0.0
else:
    K, N = 1024, 4096
    count = max(1, round(mb * 1e6 / (K * N * 4)))
    ws = [torch.full((N, K), 0.01) for _ in range(count)]  # nn.Linear layout [out, in]
    hs = [prep(w) for w in ws]
    x1 = torch.full((1, K), 0.5)
    nbytes = count * K * N * 4
    t_bw = med(lambda: [mm(h, x1) for h in hs])
    x256 = torch.full((256, K), 0.5)
    few = hs[:4]
    t_fl = med(lambda: [mm(h, x256) for h in few])
    gemm = 2 * 256 * K * N * len(few) / t_fl
tiny = prep(torch.full((64, 64), 0.01)); xt = torch.full((1, 64), 0.5)
n = 2000
t_op = med(lambda: [mm(tiny, xt) for _ in range(n)])
print(json.dumps({"threads": threads, "kernel": kernel, "bytes": nbytes, "bw": nbytes / t_bw,
                  "gemm": gemm, "op_us": t_op / n * 1e6, "rows_ms": rows_ms,
                  "pf_gflops": pf_gflops, "half_rows": half_rows,
                  "share": sum(c for c, _ in walls) / sum(w for _, w in walls)}))
"""


def layer_shape(config: Path) -> dict[str, int] | None:
    """The decoder-layer shapes the probe runs, from a dense Llama-like ``config.json`` (None for others: MoE,
    MLA, ... fall back to the generic GEMM probe)."""
    c = json.loads(Path(config).read_text(encoding="utf-8"))
    if c.get("num_local_experts") or c.get("n_routed_experts") or c.get("num_experts") or c.get("kv_lora_rank"):
        return None
    try:
        h, heads = int(c["hidden_size"]), int(c["num_attention_heads"])
        return {"hidden": h, "intermediate": int(c["intermediate_size"]), "layers": int(c["num_hidden_layers"]),
                "vocab": int(c["vocab_size"]), "heads": heads,
                "kv_heads": int(c.get("num_key_value_heads") or heads),
                "head_dim": int(c.get("head_dim") or h // heads)}
    except (KeyError, TypeError, ValueError):
        return None


def measure(python: Path = VLLM_PY, threads: int | None = None, core: int | None = None, reps: int = 5,
            weight_mb: float = 256.0, config: Path | None = None) -> dict[str, object]:
    """The figures; with a model's ``config`` (dense Llama-like) measured on its own decoder layer."""
    env = {"REPS": str(reps), "WEIGHT_MB": str(weight_mb)}
    shape = layer_shape(config) if config else None
    if shape:
        env["LAYER"] = json.dumps(shape)
    if threads:
        env["THREADS"] = str(threads)
    if core is not None:
        env["CORE"] = str(core)
    out = subprocess.run([str(python), "-c", _PROBE], check=True, capture_output=True, text=True,
                         env={**os.environ, **env}, timeout=300)
    raw = json.loads(out.stdout.strip().splitlines()[-1])
    rows = {int(m): float(t) for m, t in raw["rows_ms"].items()}
    doc: dict[str, object] = {
        "id": "this-machine-cpu",
        "kind": "cpu",
        "bandwidth_gbs": round(raw["bw"] / 1e9, 3),
        "tflops": {"fp32": round(raw["gemm"] / 1e12, 4)},
        "op_us": round(raw["op_us"], 3),
        "probe_share": round(min(1.0, raw["share"]), 3),
    }
    what = (f"one-row GEMMs over {raw['bytes'] / 1e6:.0f} MB of fp32 weights {raw['bw'] / 1e9:.2f} GB/s; 256-row "
            f"GEMM {raw['gemm'] / 1e9:.1f} GFLOP/s")
    if rows:
        # a decode step's weight pass at m rows over its one-row time: what more sequences cost the memory-bound
        # pass on one core (the extra rows' GEMM and element-wise work is not hidden under the weight stream)
        doc["decode_rows"] = {str(m): round(t / rows[1], 4) for m, t in sorted(rows.items())}
        doc["gemm_half_rows"] = round(float(raw["half_rows"]), 2)
        pfg = {int(m): float(g) for m, g in raw["pf_gflops"].items()}
        what = (f"one row through the model's {shape['layers'] if shape else '?'} layers and lm_head "
                f"({raw['bytes'] / 1e6:.0f} MB of fp32 weights) {rows[1]:.2f} ms = {raw['bw'] / 1e9:.2f} GB/s, "
                f"at {'/'.join(str(m) for m in sorted(rows) if m > 1)} rows x"
                + "/".join(f"{rows[m] / rows[1]:.3f}" for m in sorted(rows) if m > 1)
                + "; chunks through its layers " + ", ".join(f"{m} rows {g:.1f}" for m, g in sorted(pfg.items()))
                + f" GFLOP/s = {raw['gemm'] / 1e9:.1f} GFLOP/s x rows / (rows + {raw['half_rows']:.1f})")
    doc["method"] = (f"bench/measure_cpu.py, {raw['kernel']}, {raw['threads']} thread(s)"
                     + (f" on core {core}" if core is not None else "")
                     + f", CPU time (the probe had {min(1.0, raw['share']):.0%} of the core), medians of {reps}: "
                     f"{what}; one tiny kernel call {raw['op_us']:.2f} us")
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / ".cache" / "cpu-figures.json")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--core", type=int, default=None, help="pin to this CPU (the vLLM CPU worker's)")
    ap.add_argument("--weight-mb", type=float, default=256.0, help="weights streamed per pass (the model's)")
    ap.add_argument("--config", type=Path, default=None,
                    help="a dense model's config.json: measure on its own decoder layer (and decode rows)")
    args = ap.parse_args(argv)
    fig = measure(threads=args.threads, core=args.core, weight_mb=args.weight_mb, config=args.config)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT / "src"))
    from launchcard import atomicfile  # stdlib-only: any Python runs it

    atomicfile.write_text(args.out, json.dumps(fig, indent=2) + "\n")
    print(json.dumps(fig, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
