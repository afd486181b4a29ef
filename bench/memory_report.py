"""Memory planner vs. what real vLLM servers reported at start-up.

    .venv/bin/python bench/memory_report.py [--observations F.jsonl] [--architectures F.json] [--json]

Prints one row per observation (predicted vs. observed weights, KV pool and
KV tokens), then the median and p90 relative errors.  Rows whose model has no
located config.json are still planned, from a partial config or the name.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from launchcard.errors import LaunchcardError  # noqa: E402
from launchcard.memory import Settings, arch_from_config, find_gpu, plan_memory  # noqa: E402
from launchcard.memory import _quant  # noqa: E402
from launchcard.memory._guess import guess_arch  # noqa: E402

SHARED = ROOT.parent / "shared" / "testdata"
OBS = SHARED / "vllm-memory-observations-sample.jsonl"
ARCHS = SHARED / "model-architectures-sample.json"
_SUFFIX = re.compile(r"[-_](fp8|nvfp4|mxfp4|awq|gptq|int4|int8|w4a16|w8a8|4bit|8bit|bf16|dynamic)\b.*$", re.I)


def _find_entry(model_id: str, archs: dict) -> dict | None:
    if model_id in archs:
        return archs[model_id]
    base = model_id.split("/")[-1]
    stripped = _SUFFIX.sub("", base)
    for key, val in archs.items():
        kb = key.split("/")[-1]
        if kb.lower() in (base.lower(), stripped.lower()) or _SUFFIX.sub("", kb).lower() == stripped.lower():
            return val
    return None


def row_arch(row: dict, archs: dict):
    entry = _find_entry(row["model_id"], archs)
    cfg = (entry or {}).get("config") or {}
    if entry and entry.get("head_dim_effective") and not cfg.get("head_dim"):
        cfg = {**cfg, "head_dim": entry["head_dim_effective"]}
    fams = tuple(row.get("families") or ())
    try:
        arch = arch_from_config(cfg, where=row["model_id"])
    except LaunchcardError:
        arch = guess_arch(row["model_id"], fams, cfg)
    qtext = str(row.get("quantization") or "")
    if not arch.quant.is_quantized and qtext and "runtime" not in qtext and "online" not in qtext:
        arch = replace(arch, quant=_quant.from_text(qtext))
    if not arch.quant.is_quantized and not qtext:
        arch = replace(arch, quant=_quant.from_text(_SUFFIX.search(row["model_id"]).group(1)
                                                     if _SUFFIX.search(row["model_id"]) else None))
    return arch


def row_settings(row: dict) -> Settings:
    imp = row.get("implied_defaults") or {}
    other = row.get("other_flags") or {}
    qtext = str(row.get("quantization") or "")
    ver = row.get("vllm_version") or ("0.6.0" if row.get("engine") == "V0" else None)
    mml = row.get("max_model_len") or imp.get("max_model_len")
    dtype = str(row.get("dtype") or "auto").split()[0]
    return Settings(
        tp=row.get("tensor_parallel_size") or 1,
        pp=row.get("pipeline_parallel_size") or 1,
        dp=row.get("data_parallel_size") or 1,
        expert_parallel=bool(row.get("expert_parallel")),
        dcp=row.get("decode_context_parallel_size") or 1,
        max_model_len=mml if isinstance(mml, int) else None,
        kv_cache_dtype=row.get("kv_cache_dtype") or "auto",
        gpu_memory_utilization=row.get("gpu_memory_utilization") or imp.get("gpu_memory_utilization") or 0.9,
        max_num_seqs=row.get("max_num_seqs"),
        max_num_batched_tokens=row.get("max_num_batched_tokens"),
        enforce_eager=bool(row.get("enforce_eager")),
        quantization="fp8" if ("runtime" in qtext or "online" in qtext) and "fp8" in qtext.lower() else None,
        dtype=dtype,
        block_size=row.get("block_size_flag"),
        enable_prefix_caching=row.get("enable_prefix_caching"),
        language_model_only=bool(other.get("language_model_only")),
        vllm_version=ver,
    )


def row_gpu(row: dict):
    mem = row.get("gpu_memory_gib_total")
    gpu = None
    if row.get("gpu_name"):
        try:
            gpu = find_gpu(row["gpu_name"])
        except LaunchcardError:
            gpu = None
    if mem is None and gpu is None:
        # a bare "46 GB" is what nvidia-smi shows in thousands of MiB; torch sees ~0.5 GiB less
        mem = (row.get("gpu_memory_nominal_gb") or 80) * 1000 / 1024 - 0.5
    return gpu, mem


def observed_tokens(obs: dict) -> int | None:
    if obs.get("kv_cache_tokens"):
        return int(obs["kv_cache_tokens"])
    if obs.get("gpu_blocks") and obs.get("block_size"):
        return int(obs["gpu_blocks"] * obs["block_size"])
    return None


def predict(row: dict, archs: dict):
    arch = row_arch(row, archs)
    s = row_settings(row)
    gpu, mem = row_gpu(row)
    try:
        return plan_memory(arch, s, gpu=gpu, gpu_memory_gib=mem), None
    except LaunchcardError as exc:  # e.g. heads not divisible after a guess: plan at TP that works
        return None, exc.one_line()


def _rel(p, o):
    return None if p is None or o in (None, 0) else abs(p - o) / abs(o)


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(len(xs) - 1, int(k) + 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def report(obs_path: Path = OBS, arch_path: Path = ARCHS) -> dict:
    archs = json.loads(arch_path.read_text("utf-8"))
    rows = [json.loads(line) for line in obs_path.read_text("utf-8").splitlines() if line.strip()]
    out = []
    for row in rows:
        plan, err = predict(row, archs)
        o = row.get("observed") or {}
        rec = {"obs_id": row["obs_id"], "model": row["model_id"], "error": err,
               "pred_weights": plan.weights_gib_per_gpu if plan else None, "obs_weights": o.get("weights_gib_per_gpu"),
               "pred_kv_gib": plan.kv_cache_gib_per_gpu if plan else None, "obs_kv_gib": o.get("available_kv_gib"),
               "pred_tokens": plan.kv_cache_tokens if plan else None, "obs_tokens": observed_tokens(o),
               "fits": plan.fits if plan else None, "obs_failed": bool(o.get("startup_failed"))}
        rec["err_weights"] = _rel(rec["pred_weights"], rec["obs_weights"])
        rec["err_kv_gib"] = _rel(rec["pred_kv_gib"], rec["obs_kv_gib"])
        rec["err_tokens"] = _rel(rec["pred_tokens"], rec["obs_tokens"])
        out.append(rec)
    summary = {"rows": len(out), "predicted": sum(r["pred_tokens"] is not None for r in out)}
    for key in ("err_tokens", "err_weights", "err_kv_gib"):
        xs = [r[key] for r in out if r[key] is not None]
        summary[key] = {"n": len(xs), "median": _pct(xs, 0.5) if xs else None, "p90": _pct(xs, 0.9) if xs else None}
    return {"rows": out, "summary": summary}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--observations", type=Path, default=OBS)
    ap.add_argument("--architectures", type=Path, default=ARCHS)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rep = report(args.observations, args.architectures)
    if args.json:
        print(json.dumps(rep, indent=2))
        return 0
    f = lambda v, d=2: "-" if v is None else (f"{v:,.{d}f}" if isinstance(v, float) else f"{v:,}")  # noqa: E731
    pc = lambda v: "-" if v is None else f"{100 * v:.1f}%"  # noqa: E731
    print(f"{'obs':8} {'model':40} {'W pred':>7} {'W obs':>7} {'err':>6} {'KV pred':>8} {'KV obs':>7} {'err':>6} "
          f"{'tok pred':>10} {'tok obs':>10} {'err':>6}")
    for r in rep["rows"]:
        print(f"{r['obs_id']:8} {r['model'][:40]:40} {f(r['pred_weights']):>7} {f(r['obs_weights']):>7} "
              f"{pc(r['err_weights']):>6} {f(r['pred_kv_gib']):>8} {f(r['obs_kv_gib']):>7} {pc(r['err_kv_gib']):>6} "
              f"{f(r['pred_tokens']):>10} {f(r['obs_tokens']):>10} {pc(r['err_tokens']):>6}"
              + (f"  ! {r['error']}" if r["error"] else ""))
    s = rep["summary"]
    print(f"\nrows {s['rows']}, predicted {s['predicted']}")
    for key, label in (("err_tokens", "kv_cache_tokens"), ("err_weights", "weights_gib_per_gpu"),
                       ("err_kv_gib", "available_kv_gib")):
        m = s[key]
        print(f"{label:22} n={m['n']:3}  median {pc(m['median'])}  p90 {pc(m['p90'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
