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


def test_derived_tp_cites_the_config_fields_as_written(tmp_path: Path) -> None:
    """DeepSeek-V2-Lite (MLA) says num_key_value_heads 16; the derived TP was credited to
    'config.json num_key_value_heads=1' (the planner's one latent head), a value the file does not hold."""
    cfg = _config(tmp_path, "deepseek-ai/DeepSeek-V2-Lite-Chat")
    proc = run_cli("resolve", "deepseek-ai/DeepSeek-V2-Lite-Chat", "--hardware", "h100", "--config", str(cfg),
                   "--max-model-len", "32768", "--json")
    assert proc.returncode == 0, proc.stderr
    unit = json.loads(proc.stdout)["commands"][0]["units"][0]
    inputs = {i["name"].split(" ", 1)[1]: i["value"] for i in unit["origin"]["inputs"] if str(cfg) in i["name"]}
    assert "num_key_value_heads" not in inputs, inputs
    assert inputs["num_attention_heads"] == "16"
    assert any(k.startswith("kv_lora_rank") and v == "512" for k, v in inputs.items()), inputs
    gemma = _config(tmp_path, "google/gemma-3-27b-it")
    proc = run_cli("resolve", "google/gemma-3-27b-it", "--hardware", "h100", "--config", str(gemma), "--json")
    unit = json.loads(proc.stdout)["commands"][0]["units"][0]
    names = [i["name"] for i in unit["origin"]["inputs"]]
    assert any(n.endswith("text_config.num_attention_heads") for n in names), names


def test_gemma3_text_config_defaults_are_transformers_not_guesses(tmp_path: Path) -> None:
    """gemma-3-27b-it's text_config leaves vocab_size, max_position_embeddings and the sliding pattern to
    Gemma3TextConfig; the planner 'guessed' 8192 tokens of context and a 2-layer sliding pattern."""
    from launchcard.memory import SLIDING, load_arch

    cfg = _config(tmp_path, "google/gemma-3-27b-it")
    arch = load_arch(cfg)
    assert arch.vocab_size == 262208 and arch.max_position_embeddings == 131072
    assert arch.tie_word_embeddings
    assert arch.kind_counts.get(SLIDING) == 52  # 62 layers, every 6th global (transformers' default pattern 6)
    proc = run_cli("resolve", "google/gemma-3-27b-it", "--hardware", "h100", "--config", str(cfg))
    assert proc.returncode == 0, proc.stderr
    assert "guessed" not in proc.stdout and "131072 (vLLM's default" in proc.stdout
    assert "gemma3_text default 131072" in proc.stdout


def test_jamba_layers_are_mamba_and_moe_where_the_config_says(tmp_path: Path) -> None:
    """Jamba-v0.1: one attention layer in 8 (the rest Mamba-1), experts on every other layer. All 32 layers were
    planned as full attention with 16 experts each (171 GiB of weights for a 52B model, TP 4 on H100)."""
    from launchcard.memory import Settings, load_arch
    from launchcard.memory._arch import FULL, LINEAR
    from launchcard.memory._weights import components

    cfg = _config(tmp_path, "ai21labs/Jamba-v0.1")
    arch = load_arch(cfg)
    assert arch.kind_counts == {LINEAR: 28, FULL: 4} and arch.num_layers - arch.dense_layers == 16
    assert arch.linear_attn is not None and arch.linear_attn.kind == "mamba1"
    c = components(arch, Settings())
    total = c.embed + c.lm_head + c.attn + c.linear_attn + c.mlp + c.experts + c.router
    assert 51.0e9 < total < 52.5e9  # AI21's model card: 52B total parameters
    proc = run_cli("resolve", "ai21labs/Jamba-v0.1", "--hardware", "h100", "--config", str(cfg), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "--tensor-parallel-size" in (argv := json.loads(proc.stdout)["commands"][0]["argv"])
    assert argv[argv.index("--tensor-parallel-size") + 1] == "2"


def test_predict_states_the_memory_plans_assumptions_and_the_default_parallelism(tmp_path: Path) -> None:
    """``predict --config --gpu`` printed two findings (request count, coefficients) while its figures rested on
    the memory plan's defaults (context, KV dtype, memory share, batching limits) and on TP 1 nobody chose."""
    cfg = _config(tmp_path, "mistralai/Mistral-7B-Instruct-v0.3")
    proc = run_cli("predict", "--config", str(cfg), "--gpu", "h100", "--isl", "1000", "--osl", "200",
                   "--concurrency", "4", "--num-requests", "8", "--json")
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)["findings"]
    said = " | ".join(f["message"] for f in found if f["severity"] == "assumed")
    assert "--max-model-len not given: 32768" in said and "--kv-cache-dtype auto" in said
    assert "TP 1 x PP 1 x DP 1" in said
    given = run_cli("predict", "--config", str(cfg), "--gpu", "h100", "--tp", "2", "--isl", "1000", "--osl", "200",
                    "--concurrency", "4", "--num-requests", "8", "--json")
    assert "TP 1 x PP 1" not in given.stdout
    big = _config(tmp_path, "mistralai/Mixtral-8x7B-Instruct-v0.1")
    nofit = run_cli("predict", "--config", str(big), "--gpu", "h100", "--isl", "1000", "--osl", "200")
    assert nofit.returncode == 1 and nofit.stdout == ""
    assert "nearest plan that fits: --tensor-parallel-size" in nofit.stderr and nofit.stderr.count("\n") == 1


def test_kubernetes_cache_size_is_said_and_settable(tmp_path: Path) -> None:
    """A 7B model's manifest asked for a 1Ti volume with no word of where 1Ti came from and no way to change it."""
    cfg = _config(tmp_path, "mistralai/Mistral-7B-Instruct-v0.3")
    base = ("emit", "acme/mistral", "--hardware", "h100", "--config", str(cfg))
    default = run_cli(*base, "-t", "kubernetes")
    assert default.returncode == 0 and "1Ti per GPU pod (launchcard's fixed default" in default.stdout
    sized = run_cli(*base, "-t", "kubernetes", "--cache-size", "40Gi")
    assert sized.returncode == 0 and "storage: 40Gi" in sized.stdout and "(your --cache-size)" in sized.stdout
    for bad in (("-t", "kubernetes", "--cache-size", "40GB"), ("-t", "docker", "--cache-size", "40Gi")):
        proc = run_cli(*base, *bad)
        assert proc.returncode == 2 and proc.stderr.startswith("launchcard: error: --cache-size"), proc.stderr


def test_check_has_a_json_twin(tmp_path: Path) -> None:
    """Every other judging command has --json; ``check`` refused it ("not an option")."""
    cfg = _config(tmp_path, "microsoft/phi-4")
    argv = ("--", "vllm", "serve", "microsoft/phi-4", "--tensor-parallel-size", "4", "--max-num-seqs", "0")
    proc = run_cli("check", "--json", "--config", str(cfg), *argv)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["status"] == "fail" and data["exit_code"] == 1 and not data["ok"]
    assert [f["flag"] for f in data["findings"]] == ["--max-num-seqs"]
    assert [f["code"] for f in data["startup"]] == ["tp-kv-heads"]
    text = run_cli("check", "--config", str(cfg), *argv)
    assert text.returncode == 1 and "tp-kv-heads" in text.stdout and "--max-num-seqs" in text.stdout
    ok = run_cli("check", "--json", "--", "vllm", "serve", "microsoft/phi-4", "--kv-cache-dtype", "fp8")
    assert ok.returncode == 0 and json.loads(ok.stdout)["ok"] and json.loads(ok.stdout)["notes"]


def test_a_derived_plan_runs_the_image_built_for_its_gpu(tmp_path: Path) -> None:
    """On an MI300X the derived plan's docker run had the ROCm device flags but the CUDA image
    vllm/vllm-openai:latest ("the recipes builder's default NVIDIA image"), which cannot run there."""
    cfg = _config(tmp_path, "microsoft/phi-4")
    amd = run_cli("emit", "microsoft/phi-4", "--hardware", "mi300x", "--config", str(cfg), "-t", "docker")
    assert amd.returncode == 0, amd.stderr
    assert "vllm/vllm-openai-rocm:latest" in amd.stdout and "/dev/kfd" in amd.stdout
    assert "  vllm/vllm-openai:latest" not in amd.stdout
    nvidia = run_cli("emit", "microsoft/phi-4", "--hardware", "h100", "--config", str(cfg), "-t", "docker")
    assert "  vllm/vllm-openai:latest" in nvidia.stdout
    sgl = run_cli("resolve", "microsoft/phi-4", "--hardware", "mi300x", "--engine", "sglang", "--config", str(cfg))
    assert sgl.returncode == 0 and "lmsysorg/sglang:latest is a CUDA build" in sgl.stdout


def test_predict_never_advises_a_context_vllm_refuses(tmp_path: Path) -> None:
    """phi-4 (16384 positions) with a 20k-token workload: predict advised "raise --max-model-len (to at least
    20010)", which vLLM refuses to start with (``plan`` already said the model's limit)."""
    cfg = _config(tmp_path, "microsoft/phi-4")
    over = run_cli("predict", "--config", str(cfg), "--gpu", "h100", "--isl", "20000", "--osl", "10")
    assert over.returncode == 2 and "more than the 16384 vLLM accepts" in over.stderr
    assert "to at least" not in over.stderr and "at most 16384" in over.stderr
    served = run_cli("predict", "--config", str(cfg), "--gpu", "h100", "--isl", "9000", "--osl", "10",
                     "--max-model-len", "8192")
    assert served.returncode == 2 and "raise --max-model-len (vLLM accepts up to 16384)" in served.stderr


def test_the_web_builders_prediction_gives_the_same_context_advice_and_assumptions(tmp_path: Path) -> None:
    """The builder's prediction box goes through the same library: a too-long workload names the model's limit
    (was "raise --max-model-len (to at least 20010)"), and the shown findings carry the memory plan's defaults."""
    from launchcard.check import derive_plan
    from launchcard.web._predicted import plan_prediction

    cfg = _config(tmp_path, "microsoft/phi-4")
    plan = derive_plan("microsoft/phi-4", cfg, "h100")
    long = plan_prediction(plan, cfg, {"isl": 20000, "osl": 10, "concurrency": 1})
    assert "16384 vLLM accepts" in long["error"] and "to at least" not in long["error"]
    fine = plan_prediction(plan, cfg, {"isl": 1000, "osl": 100, "concurrency": 2})
    assert fine["error"] is None and fine["tpot_ms_mean"] > 0
    assert any(f["code"] == "memory-plan" and "--kv-cache-dtype auto" in f["message"] for f in fine["findings"])


def test_the_no_fit_line_says_what_did_not_fit_without_a_context(tmp_path: Path) -> None:
    """A config with no max_position_embeddings that fits nowhere: the line said only "no parallelism on one
    l4 node fits" (no node size, no memory, no word of the missing context)."""
    cfg = _config(tmp_path, "mistralai/Mixtral-8x7B-Instruct-v0.1")
    raw = json.loads(cfg.read_text())
    del raw["max_position_embeddings"]
    cfg.write_text(json.dumps(raw))
    proc = run_cli("resolve", "acme/mixtral", "--hardware", "l4", "--config", str(cfg))
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert "(1 GPU(s), 22.03 GiB each)" in proc.stderr and "no max_position_embeddings" in proc.stderr


def test_memory_takes_config_as_every_plan_command_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``memory --config`` read only a file path: the model's folder failed with 'Is a directory' and a cached Hub
    id with 'No such file', where resolve/emit/predict/check take both."""
    cfg = _config(tmp_path, "microsoft/phi-4")
    folder = run_cli("memory", "--config", str(cfg.parent), "--gpu", "h100", "--json")
    assert folder.returncode == 0, folder.stderr
    assert json.loads(folder.stdout)["fits"]
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    missing = run_cli("memory", "--config", "acme/not-cached", "--gpu", "h100")
    assert missing.returncode == 2 and "hf download acme/not-cached" in missing.stderr


def test_custom_code_note_says_when_vllm_implements_the_class(tmp_path: Path) -> None:
    """DeepSeek-V2-Lite's config has auto_map, but vLLM registers DeepseekV2ForCausalLM itself: the plan said
    only "unless the engine implements it natively it needs --trust-remote-code" (the answer is in the captured
    registry)."""
    cfg = _config(tmp_path, "deepseek-ai/DeepSeek-V2-Lite-Chat")
    vllm = run_cli("resolve", "deepseek-ai/DeepSeek-V2-Lite-Chat", "--hardware", "h100", "--config", str(cfg))
    assert "vLLM implements DeepseekV2ForCausalLM natively" in vllm.stdout and "deepseek_v2.py" in vllm.stdout
    raw = json.loads(cfg.read_text())
    raw["architectures"] = ["AcmeNewForCausalLM"]
    cfg.write_text(json.dumps(raw))
    custom = run_cli("resolve", "acme/new", "--hardware", "h100", "--config", str(cfg))
    assert "unless the engine implements AcmeNewForCausalLM natively" in custom.stdout


@pytest.mark.parametrize(("target", "needle"), [("docker", "--name gemma-sglang"), ("compose", "  sglang:"),
                                                  ("kubernetes", "- name: sglang")])
def test_an_sglang_plans_process_is_named_for_its_engine(tmp_path: Path, target: str, needle: str) -> None:
    """A derived SGLang plan's container/service was named 'vllm' (docker --name ...-vllm, compose service vllm,
    kubernetes container vllm) while it runs python3 -m sglang.launch_server."""
    cfg = _config(tmp_path, "google/gemma-3-27b-it")
    proc = run_cli("emit", "acme/gemma", "--hardware", "h100", "--engine", "sglang", "--config", str(cfg), "-t", target)
    assert proc.returncode == 0, proc.stderr
    body = "\n".join(line for line in proc.stdout.splitlines() if not line.startswith("#"))
    assert needle in body and "vllm" not in body, body
