"""Every environment of the GLM-5.3-Flash card gets a flag verdict per captured engine version."""

from __future__ import annotations

import json

from tests.helpers import run_cli


def test_every_env_has_a_verdict_in_json_and_md(shared_dir):
    corpus = str(shared_dir / "corpus")
    card = json.loads(run_cli("card", "zai-org/GLM-5.3-Flash", "--corpus", corpus, "--json").stdout)
    kinds = {e["source"]["kind"] for e in card["envs"]}
    assert {"vllm-recipes", "sglang-cookbook", "provider-preset", "dynamo"} <= kinds
    for env in card["envs"]:
        if env["engine"] in ("vllm", "sglang") and env["argv"]:
            assert env["flag_verdicts"], env["argv"][:4]
            assert set(env["flag_verdicts"].values()) <= {"pass", "fail", "n/a"}
    recipe = next(e for e in card["envs"] if e["source"]["kind"] == "vllm-recipes")
    assert recipe["flag_verdicts"]["0.32.0"] == "pass"
    md = run_cli("card", "zai-org/GLM-5.3-Flash", "--corpus", corpus, "--format", "md").stdout
    assert md.count("Flag check") >= len(card["envs"]) - 1
    assert "vllm 0.32.0: pass" in md and "sglang 0.5.23:" in md


def test_seed_command_fails_on_the_renamed_flag():
    from launchcard.flags import check_argv, verdicts

    seed = ["vllm", "serve", "zai-org/GLM-5.3-Flash", "--tokenizer-mode", "glm5_next", "--tensor-parallel-size", "8",
            "--disable-flashinfer-autotune", "--tool-call-parser", "glm47", "--enable-auto-tool-choice",
            "--reasoning-parser", "glm47"]
    assert verdicts(seed, "vllm")["0.32.0"] == "fail"
    findings = [f for f in check_argv(seed, engine="vllm", version="0.32.0") if f.severity == "error"]
    assert any(f.flag == "--disable-flashinfer-autotune" and "--no-enable-flashinfer-autotune" in f.fix + f.message
               for f in findings)


def test_a_verdict_without_suggestions_is_the_full_checks_verdict():
    """``suggest=False`` (what ``verdicts`` uses) leaves only the closest spelling out: the same rules and severities,
    and the full check asked afterwards still names the suggestion."""
    from launchcard.flags import check_argv, verdict, verdicts
    from launchcard.flagspec import shipped_index

    commands = [
        ["vllm", "serve", "m", "--tensor-paralel-size", "8"],  # misspelt: a suggestion exists
        ["vllm", "serve", "m", "--disable-flashinfer-autotune", "--max-model-len", "auto"],
        ["python3", "-m", "dynamo.vllm", "--model", "m", "--no-such-flag", "1"],  # a wrapper: warning, not error
        ["vllm", "serve", "m", "--tool-call-parser", "nope", "--enable-auto-tool-choice"],
    ]
    for argv in commands:
        quick = verdicts(argv, "vllm")
        for version in shipped_index()["vllm"]:
            full = check_argv(argv, "vllm", version)
            short = check_argv(argv, "vllm", version, suggest=False)
            assert [(f.severity, f.rule, f.flag) for f in short] == [(f.severity, f.rule, f.flag) for f in full]
            assert quick[version] == verdict(full), (argv, version)
    fix = next(f.fix for f in check_argv(commands[0], "vllm", "0.32.0") if f.rule == "unknown-flag")
    assert "--tensor-parallel-size" in fix


def test_card_and_page_hand_the_cyclic_collector_back():
    import gc

    from launchcard.cli import main

    assert gc.isenabled()
    assert main(["page", "--help"]) == 0
    assert main(["card", "--help"]) == 0
    assert gc.isenabled()
