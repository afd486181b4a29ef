"""Memory planner vs. what real vLLM servers reported at start-up.

    .venv/bin/python bench/memory_report.py [--observations F.jsonl ...] [--architectures F.json] [--json]

Prints one row per observation (predicted vs. observed weights, KV pool and
KV tokens), then median and p90 relative errors per family and overall,
separately for the held-out rows (bench/data, sources other than the sample's)
and the public sample (shared/testdata, referenced, not copied).  Rows whose
model has no located config.json are still planned, from a partial config or
the name.  See bench/data/README.md for the split.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

# E402: these imports need the sys.path entry above (the script runs without an install)
from launchcard.errors import LaunchcardError  # noqa: E402
from launchcard.memory import MEMORY_UNDECIDED, Settings, _quant, arch_from_config, find_gpu, plan_memory  # noqa: E402
from launchcard.memory._guess import guess_arch  # noqa: E402

SHARED_ROOT = ROOT.parent / "shared"
SHARED = SHARED_ROOT / "testdata"
OBS = SHARED / "vllm-memory-observations-sample.jsonl"
HELD_OUT = ROOT / "bench" / "data" / "vllm-memory-observations.jsonl"
CONFIGS = ROOT / "bench" / "data" / "configs.json"
ARCHS = SHARED / "model-architectures-sample.json"
_SUFFIX = re.compile(r"[-_](fp8|nvfp4|mxfp4|awq|gptq|int4|int8|w4a16|w8a8|4bit|8bit|bf16|dynamic)\b.*$", re.IGNORECASE)


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
    spec = other.get("speculative_config") if isinstance(other.get("speculative_config"), dict) else None
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
        speculative_method=str(spec.get("method") or "draft") if spec else None,
        num_speculative_tokens=int(spec.get("num_speculative_tokens") or 1) if spec else 0,
        flashinfer_sampler=other.get("flashinfer_sampler"),  # None: not stated (the planner decides what follows)
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
        plan = plan_memory(arch, s, gpu=gpu, gpu_memory_gib=mem)
        row["_undecided"] = undecided(plan)
        if row["_undecided"] and (row.get("observed") or {}).get("startup_failed"):
            # the planner cannot decide (its figures assume a kernel package the row does not state) and the
            # row's server refused to start: its environment is the other branch, scored as such
            plan = plan_memory(arch, replace(s, flashinfer_sampler=False), gpu=gpu, gpu_memory_gib=mem)
        return plan, None
    except LaunchcardError as exc:  # e.g. heads not divisible after a guess: plan at TP that works
        return None, exc.one_line()


def undecided(plan) -> bool:
    """The plan fits only under an assumption about the environment (memory.MEMORY_UNDECIDED)."""
    return plan is not None and any(MEMORY_UNDECIDED in w for w in plan.warnings)


def _raw_pool(plan) -> float | None:
    """The KV pool before clipping at zero: vLLM prints negative values when it does not fit."""
    if plan is None:
        return None
    b = plan.breakdown
    if plan.kv_cache_gib_per_gpu > 0 or plan.gpu == "cpu":
        return plan.kv_cache_gib_per_gpu
    return round(b.budget_gib - b.weights_gib - b.activation_peak_gib - b.non_torch_gib, 3)


def _rel(p, o):
    return None if p is None or o in (None, 0) else abs(p - o) / abs(o)


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(len(xs) - 1, int(k) + 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def load_configs(arch_path: Path = ARCHS, configs_path: Path = CONFIGS) -> dict:
    """The sample's architectures plus bench/data/configs.json (each with its source)."""
    archs = json.loads(arch_path.read_text("utf-8")) if arch_path.exists() else {}
    if configs_path.exists():
        for model, entry in json.loads(configs_path.read_text("utf-8")).items():
            cfg = entry.get("config")
            if entry.get("corpus_path"):
                path = SHARED_ROOT / entry["corpus_path"]
                if not path.exists():
                    continue
                cfg = json.loads(path.read_text("utf-8"))
            archs[model] = {**entry, "config": cfg}
    return archs


def load_rows(paths: list[Path]) -> list[dict]:
    """Rows of every file, each tagged with its split: the shared sample is "sample", the rest "held-out"."""
    rows = []
    for path in paths:
        if not path.exists():
            continue
        split = "sample" if path.name == OBS.name else "held-out"
        rows += [{**json.loads(line), "_split": split} for line in path.read_text("utf-8").splitlines() if line.strip()]
    return rows


def _stats(recs: list[dict]) -> dict:
    out: dict = {"rows": len(recs), "predicted": sum(r["pred_tokens"] is not None for r in recs)}
    # the start-up verdict against the row's outcome (started, or refused): decided rows only
    judged = [r for r in recs if r["fits"] is not None and not r["undecided"]]
    out["verdict"] = {"judged": len(judged), "agree": sum(r["fits"] != r["obs_failed"] for r in judged),
                      "undecided": sum(r["undecided"] for r in recs)}
    for key in ("err_tokens", "err_weights", "err_kv_gib"):
        xs = [r[key] for r in recs if r[key] is not None]
        out[key] = {"n": len(xs), "median": _pct(xs, 0.5) if xs else None, "p90": _pct(xs, 0.9) if xs else None}
    return out


def report(obs_path: Path | list[Path] | None = None, arch_path: Path = ARCHS) -> dict:
    paths = [OBS, HELD_OUT] if obs_path is None else (obs_path if isinstance(obs_path, list) else [obs_path])
    archs = load_configs(arch_path)
    rows = load_rows(paths)
    out = []
    for row in rows:
        plan, err = predict(row, archs)
        o = row.get("observed") or {}
        rec = {"obs_id": row["obs_id"], "split": row["_split"], "families": list(row.get("families") or ()),
               "source_url": row.get("source_url"), "model": row["model_id"], "error": err,
               "pred_weights": plan.weights_gib_per_gpu if plan else None, "obs_weights": o.get("weights_gib_per_gpu"),
               "pred_kv_gib": _raw_pool(plan), "obs_kv_gib": o.get("available_kv_gib"),
               "pred_tokens": plan.kv_cache_tokens if plan else None, "obs_tokens": observed_tokens(o),
               "fits": plan.fits if plan else None, "obs_failed": bool(o.get("startup_failed")),
               "undecided": bool(row.get("_undecided"))}
        rec["err_weights"] = _rel(rec["pred_weights"], rec["obs_weights"])
        rec["err_kv_gib"] = _rel(rec["pred_kv_gib"], rec["obs_kv_gib"])
        rec["err_tokens"] = _rel(rec["pred_tokens"], rec["obs_tokens"])
        out.append(rec)
    summary = _stats(out)
    splits: dict = {}
    for split in sorted({r["split"] for r in out}):
        recs = [r for r in out if r["split"] == split]
        fams = sorted({f for r in recs for f in r["families"]})
        splits[split] = {"overall": _stats(recs),
                         "families": {f: _stats([r for r in recs if f in r["families"]]) for f in fams}}
    return {"rows": out, "summary": summary, "splits": splits}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--observations", type=Path, nargs="+", default=[OBS, HELD_OUT])
    ap.add_argument("--architectures", type=Path, default=ARCHS)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rep = report(args.observations, args.architectures)
    if args.json:
        print(json.dumps(rep, indent=2))
        return 0
    def f(v: Any, d: int = 2) -> str:
        return "-" if v is None else (f"{v:,.{d}f}" if isinstance(v, float) else f"{v:,}")

    def pc(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.1f}%"

    print(f"{'obs':8} {'split':8} {'model':40} {'W pred':>7} {'W obs':>7} {'err':>6} "
          f"{'KV pred':>8} {'KV obs':>7} {'err':>6} {'tok pred':>10} {'tok obs':>10} {'err':>6}")
    for r in rep["rows"]:
        print(f"{r['obs_id']:8} {r['split']:8} {r['model'][:40]:40} {f(r['pred_weights']):>7} {f(r['obs_weights']):>7} "
              f"{pc(r['err_weights']):>6} {f(r['pred_kv_gib']):>8} {f(r['obs_kv_gib']):>7} {pc(r['err_kv_gib']):>6} "
              f"{f(r['pred_tokens']):>10} {f(r['obs_tokens']):>10} {pc(r['err_tokens']):>6}"
              + (f"  ! {r['error']}" if r["error"] else ""))
    s = rep["summary"]
    print(f"\nrows {s['rows']}, predicted {s['predicted']}")
    v = s["verdict"]
    print(f"start-up verdict agrees with the row's outcome on {v['agree']}/{v['judged']} decided rows; "
          f"{v['undecided']} undecided (fit only with a kernel package the row does not state)")
    labels = (("err_tokens", "kv_cache_tokens"), ("err_kv_gib", "available_kv_gib"),
              ("err_weights", "weights_gib_per_gpu"))
    for key, label in labels:
        m = s[key]
        print(f"{label:22} n={m['n']:3}  median {pc(m['median'])}  p90 {pc(m['p90'])}")
    for split, block in rep["splits"].items():
        print(f"\n{split}: rows {block['overall']['rows']}, predicted {block['overall']['predicted']}")
        print(f"  {'family':30} " + "  ".join(f"{lab:>26}" for _, lab in labels))
        for name, st in [("OVERALL", block["overall"])] + sorted(block["families"].items()):
            cells = []
            for key, _ in labels:
                m = st[key]
                cells.append(f"n={m['n']:2} med {pc(m['median']):>6} p90 {pc(m['p90']):>6}")
            print(f"  {name[:30]:30} " + "  ".join(f"{c:>26}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
