"""A new user's trial of plans without a recipe on models outside the corpus (issue 23 item 2, issue 24).

Each test is a defect the trial found, run as the user ran it (the CLI), on a public config.json from
``bench/data/configs.json`` (source URL recorded there).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_cli
from tests.test_derive import _config


def test_check_config_refuses_a_tp_that_cannot_split_the_kv_heads(tmp_path: Path) -> None:
    """Phi-4 has 40 heads and 10 KV heads: TP 4 and 8 divide the heads but vLLM's QKVParallelLinear cannot split
    (or evenly replicate) 10 KV heads, so the model fails to load; ``check --config`` said "ok"."""
    cfg = _config(tmp_path, "microsoft/phi-4")
    for tp in ("4", "8"):
        bad = run_cli("check", "--config", str(cfg), "--", "vllm", "serve", "microsoft/phi-4",
                      "--tensor-parallel-size", tp)
        assert bad.returncode == 1 and "tp-kv-heads" in bad.stdout, bad.stdout
        assert "1, 2, 5, 10, 20, 40" in bad.stdout  # the TPs vLLM takes for 40 / 10 heads
    good = run_cli("check", "--config", str(cfg), "--", "vllm", "serve", "microsoft/phi-4",
                   "--tensor-parallel-size", "2")
    assert good.returncode == 0 and "tp-kv-heads" not in good.stdout


def test_up_and_verify_take_the_users_node_size(tmp_path: Path) -> None:
    """The no-fit line of a derived plan says "say how many with --gpus-per-node N"; ``up`` and ``verify``
    refused that option."""
    cfg = _config(tmp_path, "mistralai/Mixtral-8x7B-Instruct-v0.1")
    one = run_cli("up", "--resolve", "acme/mixtral", "--hardware", "l4", "--config", str(cfg), "--no-record")
    assert one.returncode == 1 and "--gpus-per-node" in one.stderr
    # 4 L4s per node: the plan now spans 2 nodes of 4, which `up` (one local process) declines as such
    four = run_cli("up", "--resolve", "acme/mixtral", "--hardware", "l4", "--gpus-per-node", "4",
                   "--config", str(cfg), "--no-record")
    assert four.returncode == 2 and "No such option" not in four.stderr and "multi_node" in four.stderr
    from launchcard.cli._live import _plan

    plan = _plan("acme/mixtral", None, None, "l4", None, None, config=str(cfg), gpus_per_node=8)
    assert plan is not None and plan.gpus_per_node == 8 and len(plan.commands) == 1
    alone = run_cli("verify", "--gpus-per-node", "4", "--endpoint", "http://127.0.0.1:9")
    assert alone.returncode == 2 and "--gpus-per-node" in alone.stderr and "--resolve" in alone.stderr


def test_plan_emits_a_derived_winner_on_the_users_node_size(tmp_path: Path) -> None:
    """``plan --gpu l40s --gpus 4 --gpus-per-node 4 --emit``: the search ran on one node of 4, but the base plan
    was derived for the catalog's one-GPU assumption, so the winner 'spanned 4 nodes' and nothing was written."""
    cfg = _config(tmp_path, "mistralai/Mistral-7B-Instruct-v0.3")
    out = tmp_path / "deploy"
    proc = run_cli("plan", "acme/mistral", "--config", str(cfg), "--gpu", "l40s", "--gpus", "4",
                   "--gpus-per-node", "4", "--isl", "1000", "--osl", "200", "--concurrency", "16",
                   "--slo", "ttft=2000,tpot=60", "--max-num-seqs", "16", "--kv-cache-dtype", "auto",
                   "--emit", "docker", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    text = (out / "docker-run.sh").read_text()
    assert "per l40s node" in text and "--gpus 4" in text


@pytest.mark.parametrize("repo", ["microsoft/phi-4", "Qwen/Qwen2.5-VL-7B-Instruct"])
def test_derived_plans_of_trial_models_pass_their_own_check(tmp_path: Path, repo: str) -> None:
    """The derived command, fed back to ``check --config`` on the same GPU, is accepted (one rule everywhere)."""
    cfg = _config(tmp_path, repo)
    proc = run_cli("resolve", repo, "--hardware", "l4", "--gpus-per-node", "8", "--config", str(cfg),
                   "--max-model-len", "8192", "--json")
    assert proc.returncode == 0, proc.stderr
    argv = json.loads(proc.stdout)["commands"][0]["argv"]
    back = run_cli("check", "--config", str(cfg), "--gpu", "l4", "--", *argv)
    assert back.returncode == 0, back.stdout
