"""The workload options predict and plan share (--isl, --osl, --dataset): a value the user typed is judged as typed,
never replaced by a default."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_cli

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"


@pytest.mark.parametrize("surface", ["predict", "plan"])
@pytest.mark.parametrize(("option", "others"), [("--isl", ()), ("--osl", ()), ("--isl", ("--dataset", "sharegpt"))])
def test_a_zero_length_is_bad_input_not_the_default(surface: str, option: str, others: tuple[str, ...]) -> None:
    """--isl 0 / --osl 0 was read as 'not given' (``isl or 1024``) and predicted at 1024 / 256 tokens, exit 0."""
    args = (["predict", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "2"] if surface == "predict" else
            ["plan", "openai/gpt-oss-120b", "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "2",
             "--slo", "ttft=5000", "--max-num-seqs", "8"])
    res = run_cli(*args, "--concurrency", "2", option, "0", *others)
    assert res.returncode == 2, res.stdout[:300]
    line = res.stderr.strip()
    assert "\n" not in line and line.startswith(f"launchcard: error: {option}") and "(0)" in line, line


def test_plan_says_what_it_took_of_the_dataset_and_endpoint() -> None:
    """plan --dataset sharegpt --endpoint chat: the lengths drawn and the chat endpoint's added cost are said once,
    as predict says them (the plan search's findings said neither: its figures rested on them unsaid)."""
    import json

    args = ["plan", "openai/gpt-oss-120b", "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "2",
            "--slo", "ttft=5000", "--max-num-seqs", "8", "--concurrency", "2", "--dataset", "sharegpt",
            "--endpoint", "chat"]
    res = run_cli(*args, "--json")
    assert res.returncode == 0, res.stderr
    findings = json.loads(res.stdout)["findings"]
    assert sum(f.startswith("sharegpt: ") for f in findings) == 1, findings
    assert sum(f.startswith("chat endpoint") for f in findings) == 1, findings
    text = run_cli(*args)
    assert "  - sharegpt: " in text.stdout and "  - chat endpoint" in text.stdout
    plain = run_cli(*args[:-4])
    assert "sharegpt: " not in plain.stdout and "chat endpoint" not in plain.stdout


def test_plan_json_says_the_workload_it_searched_as_predict_json_does() -> None:
    """plan --json named no workload (with --dataset alone, the mean lengths searched were nowhere); it is
    predict --json's "workload" object for the same options."""
    import json

    load = ["--concurrency", "2", "--dataset", "sharegpt", "--endpoint", "chat"]
    plan = run_cli("plan", "openai/gpt-oss-120b", "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "2",
                   "--slo", "ttft=5000", "--max-num-seqs", "8", *load, "--json")
    pred = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "2", *load, "--json")
    assert plan.returncode == 0 and pred.returncode == 0, plan.stderr + pred.stderr
    work = json.loads(plan.stdout)["workload"]
    assert work == json.loads(pred.stdout)["workload"]
    assert work["dataset"] == "sharegpt" and work["endpoint"] == "chat" and work["num_requests"] == 20


def test_plan_refuses_an_acceptance_no_searched_plan_uses_as_predict_does() -> None:
    """--acceptance with no speculative plan in the search was ignored (exit 0) where predict refuses it (exit 2);
    a search that offers a speculative method takes it."""
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    res = run_cli("plan", "Qwen/Qwen3-8B", "--config", str(qwen), "--gpu", "h100", "--gpus", "1", "--slo",
                  "ttft=5000", "--concurrency", "2", "--acceptance", "0.7")
    assert res.returncode == 2, res.stdout[:300]
    line = res.stderr.strip()
    assert "\n" not in line and line.startswith("launchcard: error: --acceptance") and "(0.7)" in line, line
    model = "deepseek-ai/DeepSeek-V4-Flash"
    ok = run_cli("plan", model, "--config", str(SHARED / "corpus" / "hf" / model / "config.json"), "--gpu", "b200",
                 "--gpus", "8", "--slo", "tpot=200", "--concurrency", "8", "--max-num-seqs", "16",
                 "--max-model-len", "8192", "--no-disaggregation", "--acceptance", "0.6", "--osl", "128")
    assert ok.returncode == 0, ok.stderr
    assert "mtp" in ok.stdout and "assumed for mtp" not in ok.stdout


@pytest.mark.parametrize("surface", ["predict", "plan"])
def test_num_requests_help_names_every_default_the_workload_takes(surface: str) -> None:
    """--num-requests' help gives each default Workload.requests() applies, the rate's too (it named only the
    closed loop's and the burst's, where the README and the `num-requests` finding also give a rate's)."""
    from launchcard.predict._types import BURST_REQUESTS, RATE_MIN_REQUESTS

    proc = run_cli(surface, "--help")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  --num-requests"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("  -") or not lines[i].strip())
    help_text = " ".join(" ".join(lines[start:end]).split())
    assert "10 x concurrency" in help_text and f"{BURST_REQUESTS} with --rate inf" in help_text, help_text
    assert "10 s of arrivals" in help_text and f"at least {RATE_MIN_REQUESTS}" in help_text, help_text
