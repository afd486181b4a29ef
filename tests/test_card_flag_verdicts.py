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
