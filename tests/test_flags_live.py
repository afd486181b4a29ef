"""Live: vLLM 0.32's OWN parser is the authority (needs .cache/vllm-venv).

1. Re-capturing the spec from the installed vLLM gives the shipped file, byte
   for byte (CI fails when vLLM's parser and the shipped spec drift apart).
2. For every command of the golden recipe sample (all roles), the verdict of
   ``check_argv(engine="vllm", version="0.32.0")`` equals the verdict of vLLM's
   own parser, run once over all argvs in one subprocess.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from launchcard.flags import check_argv, has_errors

ROOT = Path(__file__).resolve().parents[1]
VLLM_PY = ROOT / ".cache" / "vllm-venv" / "bin" / "python"
GOLDEN = ROOT.parent / "shared" / "testdata" / "vllm-recipes-golden-sample.jsonl"
SHIPPED = ROOT / "src" / "launchcard" / "data" / "flags" / "vllm-0.32.0.json"
REPORT = ROOT / ".cache" / "flags-agreement.json"

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def vllm_python() -> Path:
    if not VLLM_PY.exists():
        why = f"vLLM environment missing ({VLLM_PY}); run scripts/setup.d/50-vllm-env.sh"
        if os.environ.get("LAUNCHCARD_REQUIRE_LIVE"):
            pytest.fail(why + " (LAUNCHCARD_REQUIRE_LIVE is set)")
        pytest.skip(why)
    return VLLM_PY


def _env() -> dict[str, str]:
    src = str(ROOT / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)}


def _options_by_flag(spec: dict) -> dict[str, dict]:
    return {o["flags"][0] if o["flags"] else o["dest"]: o for o in spec["options"]}


def test_recaptured_spec_equals_shipped(vllm_python: Path, tmp_path: Path) -> None:
    from launchcard.cli import main

    out = tmp_path / "vllm.json"
    assert main(["flags", "capture", "--engine", "vllm", "--python", str(vllm_python), "--out", str(out)]) == 0
    fresh, shipped = out.read_text(), SHIPPED.read_text()
    if fresh == shipped:
        return
    new, old = json.loads(fresh), json.loads(shipped)
    a, b = _options_by_flag(old), _options_by_flag(new)
    changed = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
    pytest.fail(
        f"vLLM {new['version']}'s parser differs from the shipped spec: removed {sorted(a.keys() - b.keys())}, "
        f"added {sorted(b.keys() - a.keys())}, changed {changed[:20]}, "
        f"top-level keys changed {[k for k in new if new.get(k) != old.get(k) and k != 'options']}; "
        f"re-capture with `launchcard flags capture --engine vllm --out {SHIPPED.relative_to(ROOT)}`"
    )


def _golden_argvs() -> list[list[str]]:
    """Every command of every row, all roles, de-duplicated (order kept)."""
    if not GOLDEN.exists():
        pytest.skip(f"golden sample missing at {GOLDEN}")
    seen: dict[tuple[str, ...], None] = {}
    for line in GOLDEN.read_text().splitlines():
        res = json.loads(line)["result"]
        argvs = [res[k] for k in ("argv", "head_argv") if k in res]
        argvs += list(res.get("worker_argvs") or [])
        argvs += [res[k]["argv"] for k in ("prefill", "decode") if isinstance(res.get(k), dict) and "argv" in res[k]]
        for argv in argvs:
            seen.setdefault(tuple(argv), None)
    return [list(a) for a in seen]


def _reason(error: str) -> str:
    """Group parser messages: drop the concrete values."""
    error = re.sub(r"'\$[A-Z_0-9]+'", "'$VAR'", error)
    m = re.search(r"validation error for (\w+) \| (\w+) \| (\S+ \S+ \S+)", error)
    if m:
        return f"{m.group(1)}.{m.group(2)}: {m.group(3)}"
    return re.sub(r"unrecognized arguments: (\S+).*", r"unrecognized arguments: \1", error)


def test_checker_agrees_with_vllm_parser_on_golden_sample(vllm_python: Path) -> None:
    argvs = _golden_argvs()
    assert all(a[:2] == ["vllm", "serve"] for a in argvs)
    stdin = "".join(json.dumps(a[2:]) + "\n" for a in argvs)  # drop `vllm serve`; model is the positional
    done = subprocess.run([str(vllm_python), "-m", "launchcard.flags._realparse"], input=stdin, capture_output=True,
                          text=True, env=_env(), timeout=1200, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    real = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(real) == len(argvs)

    disagreements, reasons = [], collections.Counter()
    for argv, truth in zip(argvs, real):
        ours = not has_errors(check_argv(argv, engine="vllm", version="0.32.0"))
        if not truth["ok"]:
            reasons[_reason(truth["error"])] += 1
        if ours != truth["ok"]:
            disagreements.append((argv, truth, [f.one_line() for f in check_argv(argv)]))
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text(json.dumps({
        "commands": len(argvs), "rejected_by_vllm": sum(not r["ok"] for r in real),
        "reasons": dict(reasons.most_common()), "disagreements": len(disagreements),
    }, indent=1))
    assert not disagreements, f"{len(disagreements)} of {len(argvs)} verdicts differ; first: {disagreements[:3]}"
