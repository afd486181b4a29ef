"""An SGLang server command read as the plan ``predict`` times (predict/_sglang.py): SGLang 0.5.6.post2's
defaults by GPU memory, DP attention, EP, speculative flags, explicit limits, bad input."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from launchcard.errors import InputError, SplitError
from launchcard.hardware import find
from launchcard.predict import Workload, accepted_per_step, predict, sglang_plan, sglang_serving_facts

HF = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "hf"
GPT_OSS = HF / "openai" / "gpt-oss-120b" / "config.json"
SERVE = ["python", "-m", "sglang.launch_server", "--model", "openai/gpt-oss-120b"]


def _gib(gpu: str) -> float:
    return find(gpu).memory_gib


def test_defaults_follow_sglangs_gpu_memory_rules() -> None:
    # server_args.py:752-835: H200 (< 160 GiB) 8k chunks, graphs to 512 at TP >= 4 and 256 below; B200 16k, 512
    h200_tp8 = sglang_plan([*SERVE, "--tp", "8"], gpu_memory_gib=_gib("h200"))
    h200_tp2 = sglang_plan([*SERVE, "--tp", "2"], gpu_memory_gib=_gib("h200"))
    b200 = sglang_plan([*SERVE, "--tp", "8"], gpu_memory_gib=_gib("b200"))
    assert (h200_tp8.chunked_prefill_size, h200_tp8.cuda_graph_max_bs) == (8192, 512)
    assert (h200_tp2.chunked_prefill_size, h200_tp2.cuda_graph_max_bs) == (8192, 256)
    assert (b200.chunked_prefill_size, b200.cuda_graph_max_bs) == (16384, 512)
    # mem_fraction_static = (mem - max(512 + 1.5 chunk + 2 graph_bs + tp/8 GiB, 10 GiB)) / mem, in MiB
    mib = _gib("b200") * 1024
    assert b200.mem_fraction_static == round((mib - (512 + 16384 * 1.5 + 512 * 2 + 1024)) / mib, 3)
    assert h200_tp8.settings.tp == 8 and not h200_tp8.settings.expert_parallel
    assert any("--mem-fraction-static not given" in f.message and "server_args.py" in f.message
               for f in b200.findings)
    assert b200.prefill_budget == 16384  # never more than max_prefill_tokens (16384)


def test_explicit_flags_replace_the_defaults_and_bound_the_facts() -> None:
    plan = sglang_plan([*SERVE, "--tp", "8", "--chunked-prefill-size", "4096", "--cuda-graph-max-bs", "64",
                        "--mem-fraction-static", "0.8", "--max-running-requests", "32", "--kv-cache-dtype",
                        "fp8_e4m3"], gpu_memory_gib=_gib("b200"))
    assert not [f for f in plan.findings if f.code == "sglang-default"]
    f = sglang_serving_facts(GPT_OSS, plan, gpu="b200", model="openai/gpt-oss-120b")
    assert (f.max_num_seqs, f.max_num_batched_tokens, f.cuda_graphs) == (32, 4096, True)
    default = sglang_serving_facts(GPT_OSS, sglang_plan([*SERVE, "--tp", "8", "--kv-cache-dtype", "fp8_e4m3"],
                                                        gpu_memory_gib=_gib("b200")), gpu="b200")
    # the pool is what SGLang keeps static minus the weights: a smaller fraction, a smaller pool
    assert 0 < f.kv_capacity_tokens < default.kv_capacity_tokens
    assert plan.settings.kv_cache_dtype == "fp8_e4m3"
    # no vLLM memory share or vLLM batching default is stated for an SGLang plan
    assert not [x for x in f.findings if "--gpu-memory-utilization" in x.message]
    eager = sglang_plan([*SERVE, "--tp", "8", "--disable-cuda-graph"], gpu_memory_gib=_gib("b200"))
    assert eager.cuda_graph_max_bs == 0 and eager.settings.enforce_eager
    ef = sglang_serving_facts(GPT_OSS, eager, gpu="b200")
    assert not ef.cuda_graphs
    # no graph size is assumed for a server that captures none, and none is named
    assert not [x for x in eager.findings if "--cuda-graph-max-bs" in x.message]
    [limits] = [x.message for x in ef.findings if x.code == "sglang-limits"]
    assert limits.endswith("no CUDA graphs: every step runs eagerly") and "up to batch" not in limits


def test_dp_attention_and_expert_parallel() -> None:
    dpa = sglang_plan([*SERVE, "--tp", "8", "--dp", "8", "--enable-dp-attention"], gpu_memory_gib=_gib("h200"))
    s = dpa.settings
    assert (s.tp, s.dp, s.expert_parallel, dpa.replicas) == (1, 8, True, 8)
    assert any(f.code == "sglang-dp-attention" for f in dpa.findings)  # MoE TP planned as EP: said so
    # the ranks as schedulers of their own stepping together (a prefill anywhere takes every rank off CUDA graphs): said
    assert any(f.code == "sglang-dp-attention" and "schedulers stepping together" in f.message and "own queue, KV pool"
               in f.message for f in dpa.findings)
    plain = sglang_plan([*SERVE, "--tp", "8", "--dp", "8"], gpu_memory_gib=_gib("h200"))
    assert not [f for f in plain.findings if f.code == "sglang-dp-attention"]
    f = sglang_serving_facts(GPT_OSS, dpa, gpu="h200")
    assert (f.gpus, f.replicas, f.tp) == (8, 8, 1)
    assert f.lockstep == 8  # the DP-attention ranks step together
    a2a = sglang_plan([*SERVE, "--tp", "8", "--moe-a2a-backend", "deepep"], gpu_memory_gib=_gib("h200"))
    assert a2a.settings.expert_parallel and a2a.settings.tp == 8
    replicas = sglang_plan([*SERVE, "--tp", "4", "--dp", "2"], gpu_memory_gib=_gib("h200"))
    rf = sglang_serving_facts(GPT_OSS, replicas, gpu="h200")
    assert (rf.gpus, rf.replicas, rf.tp) == (8, 2, 4)
    assert rf.lockstep == 1  # plain DP replicas run apart
    # SGLang's own assert (a failed check, exit 1), raised after every bad-input check (exit 2)
    with pytest.raises(SplitError, match="--dp-size 3 does not divide --tp-size 8") as err:
        sglang_plan([*SERVE, "--tp", "8", "--dp", "3", "--enable-dp-attention"], gpu_memory_gib=_gib("h200"))
    assert err.value.exit_code == 1
    with pytest.raises(InputError, match="mem-fraction-static") as bad:
        sglang_plan([*SERVE, "--tp", "8", "--dp", "3", "--enable-dp-attention", "--mem-fraction-static", "2"],
                    gpu_memory_gib=_gib("h200"))
    assert bad.value.exit_code == 2


def test_dp_attention_on_an_architecture_whose_model_file_splits_heads_over_tp_is_said() -> None:
    """check judges a Llama's heads over the whole --tp-size under --enable-dp-attention (limits.attention_tp);
    predict planned its attention over tp / dp without a word: the plan now says it is not read from the code."""
    argv = [*SERVE, "--tp", "8", "--dp", "2", "--enable-dp-attention"]
    llama = sglang_plan(argv, gpu_memory_gib=_gib("h200"), architecture="LlamaForCausalLM")
    [said] = [f for f in llama.findings if f.code == "sglang-dp-attention" and "LlamaForCausalLM" in f.message]
    assert said.severity == "assumed" and "--tp-size 8" in said.message and "dp_attention.py" in said.message
    qwen3 = sglang_plan(argv, gpu_memory_gib=_gib("h200"), architecture="Qwen3ForCausalLM")
    assert not [f for f in qwen3.findings if "does not read the attention TP size" in f.message]
    assert llama.settings == qwen3.settings  # the figures are not moved: only said


def test_speculative_flags() -> None:
    mtp = sglang_plan([*SERVE, "--tp", "8", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
                       "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"],
                      gpu_memory_gib=_gib("b200"))
    assert (mtp.settings.speculative_method, mtp.settings.num_speculative_tokens, mtp.spec_draft_tokens) == \
        ("mtp", 3, 4)
    e3 = sglang_plan([*SERVE, "--tp", "8", "--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "2",
                      "--speculative-draft-model-path", "org/eagle3-head"], gpu_memory_gib=_gib("b200"))
    assert (e3.settings.speculative_method, e3.settings.num_speculative_tokens) == ("eagle3", 2)
    # an EAGLE draft keeps 2 GiB more out of the static share (server_args.py:848-897)
    plain = sglang_plan([*SERVE, "--tp", "8"], gpu_memory_gib=_gib("b200"))
    assert e3.mem_fraction_static < plain.mem_fraction_static
    tree = sglang_plan([*SERVE, "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
                        "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8"],
                       gpu_memory_gib=_gib("b200"))
    assert any("tree drafting" in f.message for f in tree.findings)
    f = sglang_serving_facts(GPT_OSS, e3, gpu="b200")
    p = predict(f, Workload(isl=512, osl=64, concurrency=1, num_requests=2, acceptance=0.6))
    assert p.tpot_ms_mean > 0 and accepted_per_step(2, 0.6) > 1


def test_bad_commands() -> None:
    with pytest.raises(InputError, match="not an SGLang server command"):
        sglang_plan(["vllm", "serve", "openai/gpt-oss-120b"], gpu_memory_gib=80.0)
    with pytest.raises(InputError, match="kv-cache-dtype"):
        sglang_plan([*SERVE, "--kv-cache-dtype", "int3"], gpu_memory_gib=80.0)
    with pytest.raises(InputError, match="mem-fraction-static"):
        sglang_plan([*SERVE, "--mem-fraction-static", "1.5"], gpu_memory_gib=80.0)
    other = sglang_plan([*SERVE, "--tp", "8"], gpu_memory_gib=80.0, version="0.5.15")
    assert any(f.code == "sglang-release" for f in other.findings)


def test_cli_predicts_an_sglang_command_with_sglangs_defaults() -> None:
    import json

    from helpers import run_cli

    base = ("predict", "--config", str(GPT_OSS), "--gpu", "b200", "--isl", "300", "--osl", "200", "--concurrency",
            "8", "--json")
    res = run_cli(*base, "--command", "python -m sglang.launch_server --model openai/gpt-oss-120b --tp 8 "
                                      "--chunked-prefill-size 4096")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["engine"] == "sglang" and out["gpus"] == 8
    msgs = [f["message"] for f in out["findings"]]
    assert any("SGLang plan:" in m and "prefill batches of at most 4096 tokens" in m for m in msgs)
    assert not any("--gpu-memory-utilization" in m for m in msgs)  # no vLLM memory share for an SGLang plan
    # the memory planner's defaults in SGLang's terms: its flag names, its own help as the evidence, never
    # "vLLM's default" for an SGLang server
    assert not any("vLLM's default" in m or "--max-model-len" in m for m in msgs)
    [ctx] = [m for m in msgs if m.startswith("--context-length not given: 131072 (the length vLLM derives")]
    assert "SGLang's default also comes from config.json (its --context-length help)" in ctx
    assert any(m.startswith("--kv-cache-dtype auto: KV cache in the model dtype") and "SGLang's \"auto\"" in m
               for m in msgs)
    # --engine sglang without a command: SGLang's defaults, the options as SGLang flags
    res = run_cli(*base, "--engine", "sglang", "--tp", "8", "--max-num-batched-tokens", "4096")
    assert res.returncode == 0, res.stderr
    assert any("prefill batches of at most 4096 tokens" in f["message"] for f in json.loads(res.stdout)["findings"])
    bad = run_cli(*base, "--command", "tgi-launcher --model x")
    assert bad.returncode == 2 and "--command" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    bad = run_cli(*base, "--engine", "sglang", "--speculative-config", '{"method": "mtp"}')
    assert bad.returncode == 2 and "SGLang" in bad.stderr


def test_dp_attention_divides_the_prefill_chunk_and_spec_defaults_follow_the_architecture() -> None:
    # _handle_data_parallelism: each DP-attention rank prefills chunked_prefill_size // dp_size
    dpa = sglang_plan([*SERVE, "--tp", "4", "--dp", "4", "--enable-dp-attention"], gpu_memory_gib=_gib("b200"))
    assert dpa.chunked_prefill_size == 16384 // 4 and dpa.prefill_budget == 4096
    # ... after the memory rule, which reads the undivided chunk
    assert dpa.mem_fraction_static < sglang_plan([*SERVE, "--tp", "4"], gpu_memory_gib=_gib("b200")).mem_fraction_static
    one = sglang_plan([*SERVE, "--tp", "4", "--dp", "1", "--enable-dp-attention"], gpu_memory_gib=_gib("b200"))
    assert not one.dp_attention and one.chunked_prefill_size == 16384  # one DP rank: DP attention is off
    # ... but the memory rule (server_args.py:861-869) ran before, with the flag as given: it reserves DP attention's
    # padding for cuda_graph_max_bs x 1 rank (x 3, and x 1.5 more above 300)
    mib = _gib("b200") * 1024
    assert one.mem_fraction_static == round((mib - (512 + 16384 * 1.5 + 512 * 2 + 512 + 512 * 3 + 512 * 1.5)) / mib, 3)
    # auto_choose_speculative_params: (3, 1, 4) for DeepSeek/gpt-oss, (5, 4, 8) otherwise
    ds = sglang_plan([*SERVE, "--speculative-algorithm", "EAGLE"], gpu_memory_gib=_gib("b200"),
                     architecture="DeepseekV3ForCausalLM")
    assert (ds.settings.num_speculative_tokens, ds.spec_topk, ds.spec_draft_tokens) == (3, 1, 4)
    other = sglang_plan([*SERVE, "--speculative-algorithm", "EAGLE"], gpu_memory_gib=_gib("b200"),
                        architecture="Qwen3ForCausalLM")
    assert (other.settings.num_speculative_tokens, other.spec_topk, other.spec_draft_tokens) == (5, 4, 8)


@pytest.mark.parametrize("version", ["0.5.3", "0.5.6.post2"])
def test_dp_attention_at_one_rank_changes_only_the_memory_reserve(version: str) -> None:
    # server_args.py 0.5.3 L650-658 / 0.5.6.post2 L861-869 reserve DP attention's padding with the flag as given;
    # _handle_data_parallelism (0.5.3 L949-951, 0.5.6.post2 L1563-1566) then turns it off at dp_size 1, before the
    # x0.3 conservativeness and the chunk split read it, so every later reader (scheduler, model, CUDA graph
    # runner) runs the plain TP plan: the gpustack --tp-size 8 / --tp-size 8 --enable-dp-attention pairs
    argv = [*SERVE, "--tp-size", "8"]
    plain = sglang_plan(argv, gpu_memory_gib=_gib("h200"), version=version)
    flag = sglang_plan([*argv, "--enable-dp-attention"], gpu_memory_gib=_gib("h200"), version=version)
    mib = _gib("h200") * 1024
    base = 512 + 8192 * 1.5 + 512 * 2 + 1024
    assert plain.mem_fraction_static == round((mib - base) / mib, 3)
    assert flag.mem_fraction_static == round((mib - (base + 512 * 3 + 512 * 1.5)) / mib, 3)
    assert flag.mem_fraction_static < plain.mem_fraction_static
    assert not flag.dp_attention and flag.replicas == 1
    assert replace(flag, mem_fraction_static=plain.mem_fraction_static, findings=plain.findings) == plain


def test_speculative_decoding_caps_running_requests_by_release() -> None:
    spec = [*SERVE, "--tp", "4", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1",
            "--speculative-num-draft-tokens", "2"]
    old = sglang_plan(spec, gpu_memory_gib=_gib("b200"), version="0.5.12.post1")
    assert old.max_running_requests == 48 and old.settings.max_num_seqs == 48
    assert sglang_plan(spec, gpu_memory_gib=_gib("b200"), version="0.5.15").max_running_requests is None
    assert sglang_plan(spec, gpu_memory_gib=_gib("b200"), version="0.5.13").max_running_requests == 48  # assumed
    unknown = sglang_plan(spec, gpu_memory_gib=_gib("b200"), version="PR #25820")
    assert unknown.max_running_requests == 48
    assert any("release PR #25820 taken to have it" in f.message for f in unknown.findings)
    given = sglang_plan([*spec, "--max-running-requests", "100"], gpu_memory_gib=_gib("b200"), version="0.5.6")
    assert given.max_running_requests == 100
    # DP attention: the cap is the group's, each rank runs 48 // dp (tp_worker.py:292-300)
    dpa = sglang_plan([*spec, "--dp", "4", "--enable-dp-attention"], gpu_memory_gib=_gib("b200"), version="0.5.6")
    assert sglang_serving_facts(GPT_OSS, dpa, gpu="b200").max_num_seqs == 12


def test_model_hooks_set_running_requests_and_kv_dtype_before_the_speculative_cap() -> None:
    spec = [*SERVE, "--tp", "4", "--dp", "4", "--enable-dp-attention", "--speculative-algorithm", "EAGLE",
            "--speculative-num-steps", "1", "--speculative-num-draft-tokens", "2"]
    v4 = sglang_plan(spec, gpu_memory_gib=_gib("b200"), version="0.5.12.post1", architecture="DeepseekV4ForCausalLM")
    # apply_deepseek_v4_defaults runs first: 256 requests (64 per DP-attention rank), FP8 KV; no 48 cap after it
    assert (v4.max_running_requests, v4.settings.kv_cache_dtype) == (256, "fp8_e4m3")
    given = sglang_plan([*spec, "--kv-cache-dtype", "bf16"], gpu_memory_gib=_gib("b200"),
                        architecture="DeepseekV4ForCausalLM")
    assert given.settings.kv_cache_dtype == "bfloat16"


def test_the_builders_prediction_of_a_derived_sglang_plan_uses_sglangs_rules() -> None:
    from launchcard.check import derive_plan
    from launchcard.web._predicted import plan_prediction

    plan = derive_plan("openai/gpt-oss-120b", GPT_OSS, "b200", engine="sglang", max_model_len=32768)
    assert plan.engine == "sglang"
    out = plan_prediction(plan, GPT_OSS, {"isl": 512, "osl": 128, "concurrency": 4})
    assert out["error"] is None and out["tpot_ms_mean"] > 0
    msgs = [f["message"] for f in out["findings"]]
    # SGLang's defaults for its own command (context as --context-length), not vLLM's memory share
    assert any("--mem-fraction-static not given" in m for m in msgs)
    assert not any("--gpu-memory-utilization" in m for m in msgs)


def test_scheduler_recv_interval_reaches_the_facts() -> None:
    plan = sglang_plan([*SERVE, "--tp", "8", "--scheduler-recv-interval", "10"], gpu_memory_gib=_gib("b200"))
    assert sglang_serving_facts(GPT_OSS, plan, gpu="b200").recv_interval == 10
    assert sglang_serving_facts(GPT_OSS, sglang_plan([*SERVE, "--tp", "8"], gpu_memory_gib=_gib("b200")),
                                gpu="b200").recv_interval == 1
    with pytest.raises(InputError, match="recv-interval"):
        sglang_plan([*SERVE, "--scheduler-recv-interval", "0"], gpu_memory_gib=80.0)


def test_attn_dp_size_is_dp_attention_as_the_old_spelling() -> None:
    """SGLang 0.5.22: "Use --attn-dp-size <dp-size> instead of --dp-size <dp-size> --enable-dp-attention"."""
    old = sglang_plan([*SERVE, "--tp", "8", "--dp-size", "8", "--enable-dp-attention"], gpu_memory_gib=_gib("h200"))
    new = sglang_plan([*SERVE, "--tp", "8", "--attn-dp-size", "8"], gpu_memory_gib=_gib("h200"))
    assert new.dp_attention and new.replicas == 8
    assert (new.settings, new.chunked_prefill_size, new.mem_fraction_static) == \
        (old.settings, old.chunked_prefill_size, old.mem_fraction_static)


def test_vision_model_says_images_are_not_timed() -> None:
    vl = sglang_plan([*SERVE, "--tp", "8"], gpu_memory_gib=_gib("b200"), vision=True)
    [note] = [f for f in vl.findings if f.code == "sglang-vision"]
    assert note.severity == "assumed" and "vision encoder" in note.message
    # the serial per-request path SGLang 0.5.6 runs for images: the API server's loop, the scheduler's broadcast
    assert "one request at a time" in note.message and "scheduler.py L1153-1159" in note.message
    # every TP rank hashes the features on its own scheduler thread unless the hash is broadcast (scheduler.py
    # L1202-1270 in 0.5.6); the encoder runs in the extend batch, which the decodes wait for
    assert "every rank hashes the request's image features" in note.message
    assert "--enable-broadcast-mm-inputs-process" in note.message and "inside the extend batch" in note.message
    text = sglang_plan([*SERVE, "--tp", "8"], gpu_memory_gib=_gib("b200"))
    assert not [f for f in text.findings if f.code == "sglang-vision"]


def test_dp_attention_ranks_wait_for_each_others_prefills() -> None:
    """SGLang's DP-attention ranks step together (scheduler_dp_attn_mixin.py): a closed loop of varied requests
    stalls every rank's decode on any rank's prefill, so TPOT is longer than with each rank run apart; one client
    keeps one rank busy, whose step is the same either way."""
    from dataclasses import replace

    plan = sglang_plan([*SERVE, "--tp", "4", "--dp", "4", "--enable-dp-attention"], gpu_memory_gib=_gib("h200"))
    f = sglang_serving_facts(GPT_OSS, plan, gpu="h200")
    apart = replace(f, lockstep=1)
    busy = Workload(isl=300, osl=200, concurrency=64, num_requests=320, dataset="sharegpt")
    together, alone = predict(f, busy), predict(apart, busy)
    assert together.tpot_ms_mean > 1.2 * alone.tpot_ms_mean
    assert together.output_tok_per_s < alone.output_tok_per_s
    one = Workload(isl=300, osl=200, concurrency=1, num_requests=2)
    assert predict(f, one).tpot_ms_mean == pytest.approx(predict(apart, one).tpot_ms_mean, rel=0.02)


def test_the_calibration_simulates_dp_attention_ranks_as_predict_does() -> None:
    """bench/predict_accuracy.py's run of an SGLang attention-DP calibration row takes the group's facts of all
    clients (predict.lockstep_group, whose ranks the simulation steps together: _sglang_dp.simulate_ranks), as
    predict times such a plan; before, each rank was simulated alone with its share of the clients."""
    import math
    import sys
    from dataclasses import replace

    from launchcard.predict import coefficients, lockstep_group, simulate

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from predict_accuracy import Row, run

    plan = sglang_plan([*SERVE, "--tp", "4", "--dp", "4", "--enable-dp-attention"], gpu_memory_gib=_gib("h200"))
    f = sglang_serving_facts(GPT_OSS, plan, gpu="h200")
    assert lockstep_group(replace(f, lockstep=1)) == (replace(f, lockstep=1), f.replicas)
    group, schedulers = lockstep_group(f)
    assert schedulers == 1 and f.replicas == 4
    assert group.max_num_seqs == 4 * f.max_num_seqs and group.kv_capacity_tokens == 4 * f.kv_capacity_tokens
    c = coefficients("gpu", "sglang")
    row = Row(id="x", model="m", family="gpt-oss", engine="sglang", system="h200_sxm", isl=1000, osl=200,
              concurrency=64, gpus=4, ttft_ms=1.0, tpot_ms=1.0, facts=f, group="g", rounds=4)
    got = run(row, c)
    want = simulate(group, c, isl=1000, osl=200, concurrency=64, rate=None, requests=4 * 64)
    assert got.tpot == want.tpot and got.makespan == pytest.approx(want.makespan)
    apart = run(replace(row, facts=replace(f, lockstep=1)), c)
    assert apart.makespan != pytest.approx(got.makespan)
    assert math.ceil(64 / f.replicas) == 16  # apart: each rank's 16 clients alone


def test_dp_attention_ranks_not_prefilling_decode_in_the_prefill_step() -> None:
    """In a step where one DP-attention rank prefills, the others run their own decode batch (SGLang syncs only
    the ranks' batch sizes and modes: scheduler_dp_attn_mixin.py prepare_mlp_sync_batch_raw, an idle batch only
    for a rank with none), so a long decode meets the prefills of short requests' successors on other ranks and still
    gets its token in each: it ends in fewer steps than when every prefill paused every rank's decode (lockstep 1 on
    the same group facts: one scheduler of every rank's limits)."""
    from dataclasses import replace

    from launchcard.predict import coefficients, lockstep_group, simulate

    plan = sglang_plan([*SERVE, "--tp", "4", "--dp", "4", "--enable-dp-attention"], gpu_memory_gib=_gib("h200"))
    group, _ = lockstep_group(sglang_serving_facts(GPT_OSS, plan, gpu="h200"))
    c = coefficients("gpu", "sglang")
    # client 0 decodes 400 tokens; client 1's requests (2 output tokens) keep sending prompts to prefill
    table = ((64, 400), *((64, 2),) * 60)
    credited, paused = (simulate(f, c, isl=64, osl=8, concurrency=2, rate=None, requests=40, lengths=table)
                        for f in (group, replace(group, lockstep=1)))
    assert credited.requests == paused.requests == 40
    assert credited.steps < paused.steps
    # a prefill of as many requests as ranks leaves no rank decoding: nothing credited, the same steps
    full, alone = (simulate(f, c, isl=64, osl=50, concurrency=64, rate=None, requests=64)
                   for f in (group, replace(group, lockstep=1)))
    assert full.steps == alone.steps


def test_a_dp_attention_prefill_step_lasts_as_its_busiest_rank() -> None:
    """Each DP-attention rank prefills only its own requests (round-robin dispatch) at its own chunk budget
    (chunked_prefill_size // dp), and the synced step lasts as long as the rank carrying the most prefill tokens:
    one long prompt takes one rank's chunk a step, not the group's, and a step of one request's 2,048 tokens is
    slower than one of four requests' 2,048 spread over the four ranks (the MoE sees all tokens either way; the
    dense GEMMs are still timed at an even share, _clock._rank_share)."""
    from launchcard.predict import coefficients, lockstep_group, simulate
    from launchcard.predict._clock import _Clock, busiest_prefill

    assert busiest_prefill(2048, 1, 4, 2048) == 2048  # one request: its one rank
    assert busiest_prefill(2048, 4, 4, 2048) == 512  # one request a rank: an even share
    assert busiest_prefill(2500, 5, 4, 2048) == 1000  # two of five on the busiest rank
    assert busiest_prefill(4000, 5, 4, 1024) == 1024  # two of five (1,600) never over a rank's chunk budget
    assert busiest_prefill(4096, 0, 4, 2048) == 1024  # no request count: the even share
    plan = sglang_plan([*SERVE, "--tp", "4", "--dp", "4", "--enable-dp-attention"], gpu_memory_gib=_gib("h200"))
    group, _ = lockstep_group(sglang_serving_facts(GPT_OSS, plan, gpu="h200"))
    c = coefficients("gpu", "sglang")
    rank = group.max_num_batched_tokens // 4
    assert rank == 2048  # 8,192 // 4
    one = simulate(group, c, isl=8000, osl=2, concurrency=1, rate=None, requests=1)
    assert one.steps == 4 + 1  # four chunks of at most 2,048 tokens, then the second output token
    clock = _Clock(group, c, 1.0)  # 2,048 prompt tokens after 30,000 cached: attention-heavy
    alone, spread = (clock._cost(0, 0.0, 2048, 2048 * (30000 + 1024.0), 30000, n) for n in (1, 4))
    assert alone[2] > 1.5 * spread[2]  # compute: one rank's attention over all 2,048 queries
    assert alone[3:] == spread[3:]  # collectives and overhead: the step's tokens, as before


def test_dp_attention_moe_tp_splits_every_expert_without_vllms_uneven_ep_rule() -> None:
    """R1's 256 routed experts over --tp-size 6 under DP attention (--ep-size 1: SGLang's MoE-TP splits every expert
    over the group): planned at 256/6 experts a rank, not vLLM's heaviest rank of ceil(256/6) = 43, and without
    vLLM's uneven-EP warning."""
    from launchcard.memory import load_arch, plan_memory

    r1 = Path(__file__).parent / "fixtures" / "predict_heldout_configs" / "deepseek-ai--DeepSeek-R1_config.json"
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size", "6", "--dp-size", "6",
            "--enable-dp-attention"]
    s = sglang_plan(argv, gpu_memory_gib=_gib("h200"), architecture="DeepseekV3ForCausalLM").settings
    assert s.moe_tp_group and s.expert_parallel and s.tp * s.dp == 6
    arch, gpu = load_arch(r1), find("h200")
    split, vllm = plan_memory(arch, s, gpu=gpu), plan_memory(arch, replace(s, moe_tp_group=False), gpu=gpu)
    assert not any("routed experts over an expert-parallel group" in w for w in split.warnings)
    assert any("vLLM gives the first" in w for w in vllm.warnings)
    assert split.weights_gib_per_gpu < vllm.weights_gib_per_gpu
    # --ep-size 6: experts split over EP, which SGLang refuses where they do not divide (limits.ep_experts_refusal)
    ep = sglang_plan([*argv[:-1], "--ep-size", "6", "--enable-dp-attention"], gpu_memory_gib=_gib("h200"),
                     architecture="DeepseekV3ForCausalLM").settings
    assert not ep.moe_tp_group


def test_an_sglang_plan_on_a_tpu_says_what_plan_says_and_nothing_of_vllm(tmp_path: Path) -> None:
    """`predict --engine sglang --gpu trillium` gave figures with vLLM's words ('vLLM serves it through a platform
    plugin ...') and not the fact plan ranks the same plan undecided by (SGLang's memory rows are the GPUs'):
    one finding, made where both read the plan (sglang_serving_facts), and vLLM's plugin note kept for vLLM."""
    import json

    from config_support import LLAMA8B
    from helpers import run_cli

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(LLAMA8B), encoding="utf-8")
    work = ("--gpus-per-node", "8", "--isl", "256", "--osl", "16", "--concurrency", "2", "--max-model-len", "8192")
    found: dict[str, list[tuple[str, str]]] = {}
    for engine in ("sglang", "vllm"):
        res = run_cli("predict", "--config", str(cfg), "--gpu", "trillium", "--engine", engine, *work, "--json")
        assert res.returncode == 0, res.stderr
        found[engine] = [(f["code"], f["message"]) for f in json.loads(res.stdout)["findings"]]
    undecided = [m for c, m in found["sglang"] if c == "sglang-undecided"]
    assert len(undecided) == 1 and undecided[0].startswith("trillium is a TPU: SGLang's memory defaults for it")
    assert not any("vLLM serves it" in m for _, m in found["sglang"])
    assert not any(c == "sglang-undecided" for c, _ in found["vllm"])
    assert any("vLLM serves it through a platform plugin" in m for _, m in found["vllm"])
    plan = run_cli("plan", "llama", "--config", str(cfg), "--gpu", "trillium", "--gpus", "1", "--engine", "sglang",
                   "--slo", "tpot=1000", "--no-progress", *work, "--json")
    winner = json.loads(plan.stdout)["winner"]
    assert winner["decided"] is False and winner["undecided"] == undecided[0]
