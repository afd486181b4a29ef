"""Derive src/launchcard/data/fused_moe_blocks.json: the BLOCK_SIZE_M of each tuned Triton fused MoE config file
vLLM and SGLang ship, per release, for the shapes launchcard's calibration and held-out runs hit.

Sources: the engines' release wheels on PyPI (``pip download --no-deps vllm==X sglang==Y -d DIR``), read with
zipfile; only each file's BLOCK_SIZE_M per M key is kept (launchcard.predict._fused_moe explains the lookup).
Shapes kept (E = the rank's experts, N = w2.shape[2] = the rank's expert intermediate size): every balanced,
non-EP MoE row of the aiconfigurator-core 0.12.0 kernel tables for the GPUs below (bench/predict_kernels.py fits
on them; needs pyarrow) and every MoE model config of that wheel and of tests/fixtures/predict_heldout_configs at
TP 1, 2, 4, 8, 16 (and EP: all experts / ranks, full N).  dtypes: 16-bit experts (no dtype in the name),
per-tensor FP8 (``dtype=fp8_w8a8``, key "fp8") and 128 x 128 block-scaled FP8 (``dtype=fp8_w8a8,block_shape=[128,128]``;
SGLang writes ``[128, 128]``); each release lists the dtypes read ("dtypes": launchcard.predict._fused_moe reads
a dtype not listed as unread).

    python bench/fused_moe_blocks.py --wheels DIR            # report
    python bench/fused_moe_blocks.py --wheels DIR --write    # rewrite the data file
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from predict_accuracy import wheel  # noqa: E402

from launchcard.predict._fused_moe import DEVICE_NAMES  # noqa: E402

OUT = ROOT / "src/launchcard/data/fused_moe_blocks.json"
VLLM_DIR = "vllm/model_executor/layers/fused_moe/configs/"
# SGLang's configs folder moved in 0.5.11-0.5.14 (moe_runner/triton_utils); earlier fused_moe_triton
SGL_DIRS = ("sglang/srt/layers/moe/moe_runner/triton_utils/configs/", "sglang/srt/layers/moe/fused_moe_triton/configs/")
# (engine, release) -> default rule (launchcard.predict._fused_moe.DEFAULT_RULES) and the SGLang triton_<ver>
# folders in the order get_moe_configs tries them (the installed Triton's first)
RELEASES: dict[tuple[str, str], dict[str, Any]] = {
    ("vllm", "0.11.0"): {"default": "e"}, ("vllm", "0.12.0"): {"default": "e"},
    ("vllm", "0.14.0"): {"default": "e"}, ("vllm", "0.16.0"): {"default": "e"},
    ("vllm", "0.18.0"): {"default": "m"}, ("vllm", "0.24.0"): {"default": "m"},
    # torch 2.9.1 (Triton 3.5.1): its folder, then supported_triton_versions 3.4.0, 3.3.1, 3.2.0, 3.1.0
    # (fused_moe_triton_config.py L61, L80-115 in 0.5.6.post2 to 0.5.10)
    **{("sglang", v): {"default": "e", "triton": ["3_5_1", "3_4_0", "3_3_1", "3_2_0", "3_1_0"]}
       for v in ("0.5.6.post2", "0.5.8", "0.5.8.post1", "0.5.9", "0.5.10")},
    # torch 2.11.0: its Triton (3.7, assumed) has no folder; every folder newest first (L114-140)
    ("sglang", "0.5.14"): {"default": "e", "triton": ["3_6_0", "3_5_1", "3_4_0", "3_3_1", "3_3_0", "3_2_0", "3_1_0"]},
}
TABLE_GPUS = {"h100_sxm": "h100", "h200_sxm": "h200", "a100_sxm": "a100_80gb", "l40s": "l40s"}
TPS = (1, 2, 4, 8, 16)
ABOUT = ("BLOCK_SIZE_M per M key of the Triton fused MoE tuned config files each release wheel ships (PyPI "
         "vllm / sglang; path = the file in the wheel, the first the release's lookup finds), for the (E, N, device, "
         "dtype) shapes launchcard's kernel tables, calibration and held-out models hit; key = 'E,N,device,dtype'. "
         "default = get_default_config's rule in that release (launchcard.predict._fused_moe.DEFAULT_RULES). "
         "Written by bench/fused_moe_blocks.py.")


def shapes(aic: Path) -> set[tuple[int, int]]:
    import pyarrow.parquet as pq  # bench-only (calibrate extra)

    out: set[tuple[int, int]] = set()
    z = zipfile.ZipFile(aic)
    for n in z.namelist():
        m = re.match(r"aiconfigurator_core/systems/data/([^/]+)/moe/(vllm|sglang)/[^/]+/moe_perf\.parquet$", n)
        if m and m.group(1) in TABLE_GPUS:
            t = pq.read_table(z.open(n), columns=["num_experts", "inter_size", "moe_tp_size", "moe_ep_size"])
            for e, i, tp, ep in zip(*(t.column(c).to_pylist() for c in t.column_names), strict=True):
                out.add((e // ep, i // tp))
    cfgs = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("aiconfigurator_core/model_configs/")
            and n.endswith("_config.json") and "hf_quant" not in n]
    cfgs += [json.loads(p.read_text()) for p in (ROOT / "tests/fixtures/predict_heldout_configs").glob("*.json")]
    for c in cfgs:
        c = c.get("text_config") or c
        e = c.get("n_routed_experts") or c.get("num_experts") or c.get("num_local_experts")
        n = c.get("moe_intermediate_size") or (c.get("intermediate_size") if e else None)
        if not (isinstance(e, int) and isinstance(n, int)):
            continue
        for tp in TPS:
            out.add((e, n // tp))
            out.add((e // tp, n))
    return out


def names(e: int, n: int, dev: str, engine: str) -> dict[str, str]:
    base = f"E={e},N={n},device_name={dev}"
    return {"bfloat16": base + ".json", "fp8": base + ",dtype=fp8_w8a8.json",
            "fp8_block": base + ",dtype=fp8_w8a8,block_shape=" + ("[128,128]" if engine == "vllm" else "[128, 128]")
            + ".json"}


def blocks(raw: bytes) -> list[list[int]]:
    d = json.loads(raw)
    return sorted([int(k), int(v["BLOCK_SIZE_M"])] for k, v in d.items() if k.isdigit())


def dump(doc: dict[str, Any]) -> str:
    """The data file: one line per tuned file and per block map (a diff shows which changed)."""
    lines = ['{"about": ' + json.dumps(doc["about"]) + ',', ' "engines": {']
    for i, (engine, sets) in enumerate(sorted(doc["engines"].items())):
        lines.append(f'  "{engine}": [')
        for j, rel in enumerate(sets):
            head = {k: v for k, v in rel.items() if k != "files"}
            lines.append("   " + json.dumps(head)[:-1] + ', "files": {')
            items = sorted(rel["files"].items())
            lines += [f"    {json.dumps(k)}: {json.dumps(v)}" + ("," if n < len(items) - 1 else "")
                      for n, (k, v) in enumerate(items)]
            lines.append("   }}" + ("," if j < len(sets) - 1 else ""))
        lines.append("  ]" + ("," if i < len(doc["engines"]) - 1 else ""))
    lines.append(" },")
    lines.append(' "maps": {')
    maps = sorted(doc["maps"].items(), key=lambda kv: int(kv[0][1:]))
    lines += [f"  {json.dumps(k)}: {json.dumps(v)}" + ("," if n < len(maps) - 1 else "")
              for n, (k, v) in enumerate(maps)]
    lines.append(" }")
    return "\n".join(lines) + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheels", required=True, help="folder holding the vllm and sglang release wheels")
    ap.add_argument("--aic", help="the aiconfigurator-core 0.12.0 wheel (default: bench/predict_accuracy.py's)")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    for engine, rel in RELEASES:
        if not any(Path(args.wheels).glob(f"{engine}-{rel}-*.whl")):
            print(f"--wheels {args.wheels}: no {engine} {rel} wheel there (pip download --no-deps {engine}=={rel} "
                  f"-d {args.wheels})", file=sys.stderr)
            return 2
    try:
        want = shapes(Path(args.aic) if args.aic else wheel())
    except ModuleNotFoundError as e:
        print(f"{e.name} is needed to read the kernel tables: pip install -e .[calibrate]", file=sys.stderr)
        return 2
    maps: dict[str, list[list[int]]] = {}
    ids: dict[str, str] = {}
    out: dict[str, Any] = {"about": ABOUT, "engines": {}}
    devices = sorted(set(DEVICE_NAMES.values()))
    for (engine, rel), how in RELEASES.items():
        hits = sorted(Path(args.wheels).glob(f"{engine}-{rel}-*.whl"))
        z = zipfile.ZipFile(hits[0])
        have = set(z.namelist())
        # the wheel's SGLang config folder: one per wheel, found once
        root = "" if engine == "vllm" else next(d for d in SGL_DIRS if any(p.startswith(d) for p in have))
        files: dict[str, Any] = {}
        for e, n in sorted(want):
            for dev in devices:
                for dt, name in names(e, n, dev, engine).items():
                    if engine == "vllm":
                        tries = [VLLM_DIR + name]
                    else:
                        tries = [f"{root}triton_{t}/{name}" for t in how["triton"]]
                    path = next((p for p in tries if p in have), None)
                    if path is None:
                        continue
                    b = blocks(z.read(path))
                    key = json.dumps(b)
                    mid = ids.setdefault(key, f"m{len(ids)}")
                    maps[mid] = b
                    files[f"{e},{n},{dev},{dt}"] = {"map": mid, "path": path}
        repo = "vllm-project/vllm" if engine == "vllm" else "sgl-project/sglang"
        out["engines"].setdefault(engine, []).append({"release": rel, "repo": repo, "tag": f"v{rel}",
                                                      "repo_dir": "" if engine == "vllm" else "python/",
                                                      "wheel": hits[0].name,
                                                      "default": how["default"],
                                                      "dtypes": sorted(names(1, 1, "d", engine)), "files": files})
        print(f"{engine} {rel}: {len(files)} tuned files for the kept shapes ({hits[0].name})")
    out["maps"] = maps
    if args.write:
        OUT.write_text(dump(out))
        print(f"wrote {OUT.relative_to(ROOT)}: {len(maps)} distinct block maps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
