"""Expert-parallel sizes that do not divide the routed experts: vLLM starts (the heaviest rank holds one more),
SGLang and TensorRT-LLM assert (limits/_experts.py); memory, predict, check and the plan search read the same rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_cli
from launchcard.errors import SplitError
from launchcard.hardware import find
from launchcard.limits import ep_experts_refusal, experts_per_rank, uneven_ep_note
from launchcard.memory import Settings, load_arch, plan_memory
from launchcard.memory._weights import weight_split
from launchcard.predict import sglang_plan, sglang_serving_facts

CONFIGS = Path(__file__).parent / "fixtures" / "predict_heldout_configs"
GPT_OSS = CONFIGS / "openai--gpt-oss-20b_config.json"  # 32 routed experts
QWEN = CONFIGS / "Qwen--Qwen3-235B-A22B_config.json"  # 128 routed experts


def test_the_rule_per_engine() -> None:
    assert experts_per_rank(32, 3) == 11 and experts_per_rank(32, 4) == 8 and experts_per_rank(32, 1) == 32
    assert ep_experts_refusal("vllm", 32, 3, "TP x DP") is None
    assert ep_experts_refusal("sglang", 32, 4, "--ep-size") is None
    message, fix = ep_experts_refusal("sglang", 32, 3, "--ep-size") or ("", "")
    assert "--ep-size 3 does not divide the 32 routed experts" in message and "layer.py L182" in message
    assert fix.endswith("2, 4, 8, 16, 32")
    note = uneven_ep_note(32, 3) or ""
    assert "first 2 ranks 11 experts and the rest 10" in note and "expert_map_manager.py" in note
    assert uneven_ep_note(32, 4) is None


def test_memory_plans_vllms_heaviest_rank() -> None:
    arch = load_arch(GPT_OSS)
    three, four = (weight_split(arch, Settings(dp=dp, expert_parallel=True)) for dp in (3, 4))
    assert three.experts_local == 11 and four.experts_local == 8
    assert three.expert_bytes == pytest.approx(four.expert_bytes * 11 / 8)
    plan = plan_memory(arch, Settings(dp=3, expert_parallel=True), gpu="h100")
    assert any("heaviest rank" in w for w in plan.warnings)
    assert not any("heaviest rank" in w for w in plan_memory(arch, Settings(dp=4, expert_parallel=True),
                                                                gpu="h100").warnings)


def test_predict_times_vllms_heaviest_rank_and_memory_accepts_it() -> None:
    base = ["--config", str(GPT_OSS), "--gpu", "h100", "--ep", "--isl", "256", "--osl", "32", "--concurrency", "4"]
    res = run_cli("predict", *base, "--dp", "3")
    assert res.returncode == 0, res.stderr
    mem = run_cli("memory", "--config", str(GPT_OSS), "--gpu", "h100", "--dp", "3", "--enable-expert-parallel")
    assert mem.returncode == 0 and "heaviest rank" in mem.stdout, mem.stdout + mem.stderr


def test_sglang_refuses_an_ep_size_not_dividing_the_experts() -> None:
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size", "6", "--ep-size", "6"]
    plan = sglang_plan(argv, gpu_memory_gib=find("h200").memory_gib, architecture="GptOssForCausalLM")
    with pytest.raises(SplitError, match="--ep-size 6 does not divide the 32 routed experts") as err:
        sglang_serving_facts(GPT_OSS, plan, gpu="h200")
    assert err.value.exit_code == 1


QWEN3_8B = CONFIGS / "Qwen--Qwen3-8B_config.json"  # dense


def test_expert_parallel_on_a_dense_model_is_vllms_startup_refusal_everywhere() -> None:
    """vLLM refuses --enable-expert-parallel without routed experts (config/model.py
    _verify_with_expert_parallelism): predict and memory fail the plan (exit 1), check says error."""
    from launchcard.limits import dense_ep_refusal

    assert dense_ep_refusal(0, False) is None and dense_ep_refusal(8, True) is None
    message, fix, rule = dense_ep_refusal(0, True) or ("", "", "")
    assert "refuses to start" in message and fix == "drop --enable-expert-parallel" and "L1001-1016" in rule
    pred = run_cli("predict", "--config", str(QWEN3_8B), "--gpu", "h100", "--tp", "2", "--ep", "--isl", "256",
                   "--osl", "32", "--concurrency", "2")
    assert pred.returncode == 1 and "--enable-expert-parallel on a model without routed experts" in pred.stderr
    assert "TPOT" not in pred.stdout
    mem = run_cli("memory", "--config", str(QWEN3_8B), "--gpu", "h100", "--tp", "2", "--enable-expert-parallel")
    assert mem.returncode == 1 and "without routed experts" in mem.stdout, mem.stdout + mem.stderr
    chk = run_cli("check", "--config", str(QWEN3_8B), "--", "vllm", "serve", "Qwen/Qwen3-8B",
                  "--tensor-parallel-size", "2", "--enable-expert-parallel")
    assert chk.returncode == 1 and "ep-dense-model" in chk.stdout, chk.stdout
    plain = run_cli("memory", "--config", str(QWEN3_8B), "--gpu", "h100", "--tp", "2")
    assert plain.returncode == 0 and "routed experts" not in plain.stdout


def test_trtllm_refuses_an_ep_size_not_dividing_the_experts(tmp_path: Path) -> None:
    """TensorRT-LLM asserts E % ep == 0 without an EPLB config (limits.TRTLLM_EP_RULE): predict fails the plan
    (exit 1, one line) on --engine trtllm and on a trtllm-serve command alike, never times vLLM's heaviest rank."""
    import json

    from launchcard.limits import TRTLLM_EP_RULE

    message, fix = ep_experts_refusal("trtllm", 30, 4, "--ep_size") or ("", "")
    assert message.startswith("--ep_size 4 does not divide the 30 routed experts: TensorRT-LLM asserts it")
    assert TRTLLM_EP_RULE in message and fix.endswith("2, 3, 5, 6, 10, 15")
    assert ep_experts_refusal("trtllm", 32, 4, "--ep_size") is None
    config = json.loads(GPT_OSS.read_text())
    config["num_local_experts"] = 30  # 64 heads: TP 4 splits them, not the experts
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    work = ["--gpu", "h100", "--isl", "256", "--osl", "32", "--concurrency", "4"]
    launches = (["--engine", "trtllm", "--tp", "4", "--ep"], ["--command", "trtllm-serve m --tp_size 4 --ep_size 4"])
    for launch in launches:
        res = run_cli("predict", "--config", str(path), *work, *launch)
        assert res.returncode == 1 and "TPOT" not in res.stdout, res.stdout + res.stderr
        assert "--ep_size 4 does not divide the 30 routed experts" in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    even = run_cli("predict", "--config", str(path), *work, "--engine", "trtllm", "--tp", "2", "--ep")
    assert even.returncode == 0, even.stderr


SGLANG = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.mark.parametrize(("flags", "ep"), [
    (["--tp-size", "4", "--ep-size", "4"], 4),
    (["--tp-size", "4", "--expert-parallel-size", "2"], 2),
    (["--tp-size", "4", "--moe-a2a-backend", "deepep"], 4),  # the backend makes ep_size the TP size
    (["--tp-size", "4", "--moe-a2a-backend", "none", "--ep-size", "2"], 2),
    (["--tp-size", "4"], 1),
    (["--tp-size", "2", "--ep-size", "8"], 2),  # never above --tp-size
])
def test_check_and_predict_read_one_sglang_ep_size(flags: list[str], ep: int) -> None:
    from launchcard.check._argv import read_argv
    from launchcard.limits import sglang_ep_size

    view = read_argv([*SGLANG, *flags])
    plan = sglang_plan([*SGLANG, *flags], gpu_memory_gib=find("h200").memory_gib, architecture="GptOssForCausalLM")
    assert view.ep_size == plan.moe_ep == ep
    assert plan.settings.expert_parallel is (ep > 1)
    assert sglang_ep_size(None, None, 8) == 1 and read_argv(["vllm", "serve", "m", "-tp", "4"]).moe_ep is None


def test_check_reads_an_sglang_ep_size(tmp_path: Path) -> None:
    """`launchcard check` on an SGLang command reads its --ep-size (it read only vLLM's --enable-expert-parallel,
    so an --ep-size SGLang refuses passed): the same ep-uneven error predict refuses the command by (exit 1)."""
    import json

    from launchcard.check import check_command

    config = json.loads(GPT_OSS.read_text())
    config["num_local_experts"] = 30
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    bad = run_cli("check", "--engine", "sglang", "--config", str(path), "--", *SGLANG, "--tp-size", "4",
                  "--ep-size", "4")
    assert bad.returncode == 1 and "[ep-uneven, startup]" in bad.stdout, bad.stdout
    assert "--ep-size 4 does not divide the 30 routed experts" in bad.stdout
    good = run_cli("check", "--engine", "sglang", "--config", str(path), "--", *SGLANG, "--tp-size", "2",
                   "--ep-size", "2")
    assert good.returncode == 0, good.stdout
    verdict = check_command([*SGLANG, "--tp-size", "4", "--moe-a2a-backend", "deepep"], engine="sglang",
                            config=path)
    assert [f.severity for f in verdict.findings if f.code == "ep-uneven"] == ["error"]
    pred = run_cli("predict", "--config", str(path), "--gpu", "h100", "--isl", "256", "--osl", "32",
                   "--concurrency", "4", "--command", " ".join([*SGLANG, "--tp-size", "4", "--ep-size", "4"]))
    assert pred.returncode == 1 and "--ep-size 4 does not divide the 30 routed experts" in pred.stderr


def test_the_sglang_ep_fix_offers_sizes_dividing_the_tp_group_too(tmp_path: Path) -> None:
    """SGLang's EP groups split --tp-size (moe_ep_rank = tp_rank // (tp / ep)): 126 experts at --tp-size 4 were
    offered 3, 7, 9, 14, none of which SGLang splits a TP group of 4 by; now 2, on check and predict alike."""
    import json

    cfg = json.loads(QWEN.read_text())
    cfg["num_experts"] = 126
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    cmd = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size", "4", "--ep-size", "4"]
    chk = run_cli("check", "--engine", "sglang", "--config", str(tmp_path), "--", *cmd)
    assert chk.returncode == 1 and "dividing 126 and --tp-size 4: 2 (" in chk.stdout, chk.stdout
    pred = run_cli("predict", "--engine", "sglang", "--config", str(tmp_path), "--gpu", "h200", "--command",
                   " ".join(cmd), "--isl", "128", "--osl", "16", "--concurrency", "1")
    assert pred.returncode == 1 and "dividing 126 and --tp-size 4: 2" in pred.stderr, pred.stderr
    assert (ep_experts_refusal("sglang", 32, 6, "--ep-size", 6) or ("", ""))[1].endswith("dividing 32 and "
                                                                                          "--tp-size 6: 2")


def test_sglang_eagle_without_a_draft_is_refused_on_a_plan_command_too() -> None:
    """check_command (emit presets, merge verdicts) and recipe plans read SGLang's draft rule as the bare check does
    (limits.draft_self_refusal): EAGLE without --speculative-draft-model-path on a checkpoint without MTP layers."""
    from launchcard.check import check_command

    verdict = check_command(["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size", "4",
                             "--speculative-algorithm", "EAGLE"], engine="sglang", gpus=4, config=str(QWEN))
    assert any(f.code == "speculative-draft" and f.severity == "error" for f in verdict.findings), verdict.findings


def test_vllm_eplb_refuses_an_uneven_split_check_and_predict_say_so(tmp_path: Path) -> None:
    """VLLM_EP_RULE's own source: only EPLB refuses an uneven split (global_num_experts, redundant ones counted,
    % ep_size): check said ok and predict timed `--enable-eplb` with 126 experts over TP 4; now check's error
    eplb-uneven and predict exit 1, while redundant experts evening the split (126 + 2) start."""
    import json

    from launchcard.limits import eplb_uneven_refusal

    assert eplb_uneven_refusal(126, 0, 4) is not None and eplb_uneven_refusal(126, 2, 4) is None
    assert eplb_uneven_refusal(128, 0, 4) is None and eplb_uneven_refusal(0, 0, 4) is None
    cfg = json.loads(QWEN.read_text())
    cfg["num_experts"] = 126
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    cmd = ["vllm", "serve", "m", "--tensor-parallel-size", "4", "--enable-expert-parallel", "--enable-eplb"]
    chk = run_cli("check", "--config", str(tmp_path), "--", *cmd)
    assert chk.returncode == 1 and "eplb-uneven" in chk.stdout and "EPLB currently only supports" in chk.stdout
    ok = run_cli("check", "--config", str(tmp_path), "--", *cmd, "--eplb-config", '{"num_redundant_experts": 2}')
    assert "eplb-uneven" not in ok.stdout, ok.stdout
    pred = run_cli("predict", "--config", str(tmp_path), "--gpu", "h200", "--command", " ".join(cmd),
                   "--isl", "128", "--osl", "16", "--concurrency", "1")
    assert pred.returncode == 1 and "eplb-uneven" in pred.stderr and "TPOT" not in pred.stdout
    plain = run_cli("check", "--config", str(tmp_path), "--", *cmd[:-1])
    assert "eplb-uneven" not in plain.stdout, plain.stdout
