"""Live: vLLM 0.32's OWN parser is the authority (needs .cache/vllm-venv).

1. Re-capturing the spec from the installed vLLM gives the shipped file, byte
   for byte (CI fails when vLLM's parser and the shipped spec drift apart).
2. For every command of the golden recipe sample (all roles), the argparse-stage
   verdict of ``check_argv(engine="vllm", version="0.32.0")`` equals the verdict
   of vLLM's own parser, run once over all argvs in one subprocess.  (Start-up
   findings, stage "startup", are what vLLM rejects after its parser: they are
   measured separately, by 3.)
3. For every option whose captured config field has bounds, Literal or enum
   values, probe values on and around them: the checker's start-up verdict
   equals what vLLM's config class itself accepts for that field.
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


# CI builds only the vLLM 0.32.0 env (scripts/setup.d/50-vllm-env.sh).  Other releases are checked when
# LAUNCHCARD_AGREEMENT_VERSIONS names them and scripts/capture_flags.py has unpacked their source under
# .cache/engine-envs/src/vllm-<version> (their real parser over the 0.32 env, as they were captured).
AGREEMENT_VERSIONS = [v for v in os.environ.get("LAUNCHCARD_AGREEMENT_VERSIONS", "0.32.0").split(",") if v]


@pytest.mark.parametrize("version", AGREEMENT_VERSIONS)
def test_checker_agrees_with_vllm_parser_on_golden_sample(vllm_python: Path, version: str) -> None:
    argvs = _golden_argvs()
    assert all(a[:2] == ["vllm", "serve"] for a in argvs)
    stdin = "".join(json.dumps(a[2:]) + "\n" for a in argvs)  # drop `vllm serve`; model is the positional
    env = _env()
    if version != "0.32.0":
        overlay = ROOT / ".cache" / "engine-envs" / "src" / f"vllm-{version}"
        if not (overlay / ".complete").exists():
            pytest.skip(f"vLLM {version} source not unpacked; run scripts/capture_flags.py vllm {version}")
        extra = ROOT / ".cache" / "engine-envs" / "extra"
        env = {**env, "VLLM_TARGET_DEVICE": "cpu",
               "PYTHONPATH": os.pathsep.join([str(overlay), env["PYTHONPATH"], str(extra)])}
    done = subprocess.run([str(vllm_python), "-m", "launchcard.flags._realparse"], input=stdin, capture_output=True,
                          text=True, env=env, timeout=1200, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    real = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(real) == len(argvs)

    disagreements, reasons = [], collections.Counter()
    for argv, truth in zip(argvs, real, strict=True):
        ours = not has_errors(check_argv(argv, engine="vllm", version=version), stage="argparse")
        if not truth["ok"]:
            reasons[_reason(truth["error"])] += 1
        if ours != truth["ok"]:
            disagreements.append((argv, truth, [f.one_line() for f in check_argv(argv, "vllm", version)]))
    REPORT.parent.mkdir(exist_ok=True)
    report = REPORT if version == "0.32.0" else REPORT.with_name(f"flags-agreement-{version}.json")
    report.write_text(json.dumps({
        "commands": len(argvs), "rejected_by_vllm": sum(not r["ok"] for r in real),
        "reasons": dict(reasons.most_common()), "disagreements": len(disagreements),
    }, indent=1))
    assert not disagreements, f"{len(disagreements)} of {len(argvs)} verdicts differ; first: {disagreements[:3]}"


def _probes(o) -> list[str]:
    """Values on, just inside and just outside each declared bound, and each allowed/misspelt value."""
    out: list[str] = []
    todo = [o.startup, *o.startup.get("of", [])]
    for t in todo:
        for key in ("gt", "ge", "lt", "le"):
            if key in t:
                b = t[key]
                step = 1 if o.type in ("int", "human_int", "human_int_or_auto") else 0.01
                out += [str(b), str(b - step), str(b + step)]
        for v in t.get("values", []) + t.get("accepts", []):
            if isinstance(v, str):
                out += [v, v.lower(), v + "x"]
    return list(dict.fromkeys(out))


def _converted(o, text: str):
    if o.type in ("int", "human_int", "human_int_or_auto"):
        return int(float(text))
    if o.type == "float":
        return float(text)
    return text


def test_startup_checks_agree_with_vllm_config_classes(vllm_python: Path) -> None:
    from launchcard.flagspec import shipped_spec

    spec = shipped_spec("vllm", "0.32.0")
    cases = []
    for o in spec.options:
        if o.startup is None or o.config_field is None:
            continue
        if any(m.get("t") == "object" for m in (o.startup, *o.startup.get("of", []))):
            continue  # JSON objects: keys are covered by the offline tests
        for text in _probes(o):
            findings = check_argv(["vllm", "serve", "m", o.name, text], engine="vllm", version="0.32.0")
            if has_errors(findings, stage="argparse"):
                continue  # the parser already rejects it
            cases.append((o, text, not has_errors(findings, stage="startup")))
    assert len(cases) > 50
    stdin = "".join(json.dumps({"field": o.config_field, "value": _converted(o, t)}) + "\n" for o, t, _ in cases)
    env = {**_env(), "HF_HUB_OFFLINE": "1"}  # a config class must never reach for a model
    done = subprocess.run([str(vllm_python), "-m", "launchcard.flags._realparse", "--fields"], input=stdin,
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    real = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(real) == len(cases)
    differ = [(o.name, t, ours, truth) for (o, t, ours), truth in zip(cases, real, strict=True) if ours != truth["ok"]]
    assert not differ, f"{len(differ)} of {len(cases)} start-up verdicts differ: {differ[:5]}"
