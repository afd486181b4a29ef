"""`launchcard predict` on the GPUs a plan spans (--tp, --dp, --gpus-per-node against the catalog's node and link
domain): a layout the node cannot hold is bad input said first, one the catalog cannot time is said as assumed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import run_cli

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"
QWEN2 = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen2-7B-Instruct_config.json"
LOAD = ["--isl", "128", "--osl", "16", "--concurrency", "1"]


@pytest.mark.parametrize("launch", [["--tp", "3"], ["--command", "vllm serve q -tp 3"],
                                    ["--command", "vllm serve q -tp 3 -pp 64"]])
def test_a_tp_wider_than_a_node_is_said_before_the_engines_refusal(launch: list[str]) -> None:
    """`--tp 3 --gpus-per-node 2` on a 28-head model said vLLM's heads refusal (exit 1) and never the bad input
    (exit 2): bad input is said first on every predict form."""
    res = run_cli("predict", "--config", str(QWEN2), "--gpu", "h100", "--gpus-per-node", "2", *launch, *LOAD)
    assert res.returncode == 2 and "exceeds the 2 GPUs of a node" in res.stderr, res.stderr


def test_a_tp_of_whole_nodes_is_the_recipes_multi_node_tp_and_is_predicted() -> None:
    """`--gpus-per-node 8` with the recipes' multi-node TP command (`--tensor-parallel-size 16 --nnodes 2` on H100,
    strategy multi_node_tp) was refused as a TP wider than a node, while `predict MODEL --strategy multi_node_tp` and
    the same command without --gpus-per-node predicted it: now the same figures; a TP of part of a node, or nodes
    smaller than the catalog's link domain (its timing's hierarchy), stays refused."""
    qwen3 = QWEN2.parent / "Qwen--Qwen3-8B_config.json"
    cmd = "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 16 --nnodes 2 --node-rank 0 --master-addr 10.0.0.1"
    base = ["predict", "--config", str(qwen3), "--gpu", "h100", *LOAD, "--json"]
    given = run_cli(*base, "--gpus-per-node", "8", "--command", cmd)
    assert given.returncode == 0, given.stderr
    plain = run_cli(*base, "--command", cmd)
    assert json.loads(given.stdout)["tpot_ms_mean"] == json.loads(plain.stdout)["tpot_ms_mean"]
    for tp, per in (("12", "8"), ("16", "4")):
        res = run_cli(*base, "--gpus-per-node", per, "--tp", tp)
        assert res.returncode == 2 and f"exceeds the {per} GPUs of a node" in res.stderr, res.stderr


def test_a_vllm_moe_plans_data_parallel_ranks_split_its_experts_in_the_recipes_vram_rule() -> None:
    """`predict openai/gpt-oss-120b --recipes R --hardware h100 --tp 1 --dp 8` exited 1 on [vram-shortfall] "holds
    one copy of the weights on 1 h100 GPU(s) = 80 GB" while `plan` ranked that very plan and `memory --dp 8` fits
    it at 12 GiB a GPU: vLLM flattens TP across DP for the MoE layers without --enable-expert-parallel
    (FusedMoEParallelConfig.make); predict --config gave figures for it too."""
    recipes = SHARED / "corpus" / "vllm-recipes"
    load = ["--isl", "256", "--osl", "32", "--concurrency", "8", "--kv-cache-dtype", "fp8", "--max-num-seqs", "8",
            "--json"]
    res = run_cli("predict", "openai/gpt-oss-120b", "--recipes", str(recipes), "--hardware", "h100", "--tp", "1",
                  "--dp", "8", *load)
    assert res.returncode == 0 and "vram-shortfall" not in res.stdout + res.stderr, res.stderr
    given = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "1", "--dp", "8", *load)
    assert json.loads(res.stdout)["tpot_ms_mean"] == json.loads(given.stdout)["tpot_ms_mean"]


@pytest.mark.parametrize("launch", [["--tp", "16"], ["--tp", "2"], ["--dp", "2"],
                                    ["--command", "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 16"],
                                    ["--engine", "sglang", "--tp", "4"],
                                    ["--command", "trtllm-serve Qwen/Qwen3-8B --tp_size 4"]])
def test_a_plan_of_gpus_with_no_node_profile_says_the_node_it_times(launch: list[str]) -> None:
    """`predict --config C --gpu l40s --tp 16` was timed as one 16-GPU PCIe node with no word said: the catalog
    has no node profile for l40s (no recipes profile, a PCIe card with no link domain). The plan the user typed is
    still timed as one node of its GPUs, and an `assumed` finding (node-size) says so and how to say otherwise;
    given --gpus-per-node, nothing is assumed; one GPU needs no node. `plan`, which chooses the layout, refuses
    without the node size instead (exit 2)."""
    qwen3 = QWEN2.parent / "Qwen--Qwen3-8B_config.json"
    res = run_cli("predict", "--config", str(qwen3), "--gpu", "l40s", *launch, *LOAD, "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    said = [f for f in json.loads(res.stdout)["findings"] if f["code"] == "node-size"]
    assert len(said) == 1 and said[0]["severity"] == "assumed", said
    assert "no node profile for l40s" in said[0]["message"] and "--gpus-per-node" in said[0]["message"]
    plan = run_cli("plan", "Qwen/Qwen3-8B", "--config", str(qwen3), "--gpu", "l40s", "--gpus", "2", "--slo",
                   "tpot=100", "--concurrency", "2")
    assert plan.returncode == 2 and "no node profile for l40s" in plan.stderr, plan.stderr
    ok = run_cli("predict", "--config", str(qwen3), "--gpu", "l40s", "--gpus-per-node", "16", *launch, *LOAD,
                 "--json")
    assert ok.returncode == 0, ok.stderr
    assert not [f for f in json.loads(ok.stdout)["findings"] if f["code"] == "node-size"]
    one = run_cli("predict", "--config", str(qwen3), "--gpu", "l40s", *LOAD, "--json")
    assert one.returncode == 0 and not [f for f in json.loads(one.stdout)["findings"] if f["code"] == "node-size"]


def test_a_tp_wider_than_the_catalogs_node_is_refused_without_the_node_size() -> None:
    """`predict --config C --gpu mi300x --tp 16` (an 8-GPU node in the catalog, no link domain to time a TP of
    two nodes by) was timed as one 16-GPU xGMI fabric: without --gpus-per-node the node is the catalog's, as
    `plan` takes it, and the line says where the size came from."""
    res = run_cli("predict", "--config", str(QWEN2.parent / "Qwen--Qwen3-8B_config.json"), "--gpu", "mi300x",
                  "--tp", "16", *LOAD)
    line = res.stderr.strip()
    assert res.returncode == 2 and "exceeds the 8 GPUs of a node (the hardware catalog's node profile for " \
                                   "mi300x)" in line and "--gpus-per-node N" in line, line


def test_a_tp_of_whole_nodes_inside_a_wider_nvlink_domain_is_predicted() -> None:
    """`predict --gpu gb200 --tp 8` was refused as wider than the catalog's 4-GPU node (a GB200 tray), though the
    catalog's NVLink domain is the 72-GPU rack: a TP of whole trays inside it runs over NVLink and is timed so (an
    info finding says it); past the domain, part of a node, or an H100 node (its domain is its node) stays refused."""
    qwen3 = QWEN2.parent / "Qwen--Qwen3-8B_config.json"
    base = ["predict", "--config", str(qwen3), "--gpu", "gb200", *LOAD, "--json"]
    res = run_cli(*base, "--tp", "8")
    assert res.returncode == 0, res.stderr
    said = [f for f in json.loads(res.stdout)["findings"] if f["code"] == "node-size"]
    assert len(said) == 1 and said[0]["severity"] == "info", said
    assert "spans 2 nodes of 4 gb200 GPUs inside one NVLink 5 domain of 72" in said[0]["message"], said
    for extra in (["--tp", "6"], ["--tp", "16", "--gpus-per-node", "3"]):
        bad = run_cli(*base, *extra)
        assert bad.returncode == 2 and "GPUs of a node" in bad.stderr, bad.stderr
    h100 = run_cli("predict", "--config", str(qwen3), "--gpu", "h100", "--gpus-per-node", "4", "--tp", "8", *LOAD)
    assert h100.returncode == 2 and "exceeds the 4 GPUs of a node" in h100.stderr, h100.stderr
