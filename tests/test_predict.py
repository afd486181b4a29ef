"""launchcard.predict: the step model, the scheduler simulation, the CLI and its bad input."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from config_support import LLAMA8B
from helpers import run_cli
from launchcard.errors import InputError, PredictError
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import (
    MAX_REQUESTS,
    Coefficients,
    HardwareFigures,
    ServingFacts,
    Workload,
    accepted_per_step,
    coefficients,
    facts_from_memory_plan,
    on_host,
    predict,
    step_terms,
    step_work,
    with_limits,
)
from launchcard.predict._coef import Stages

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"
QWEN_MOE = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "num_hidden_layers": 48,
            "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
            "vocab_size": 151936, "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128,
            "num_experts_per_tok": 8, "max_position_embeddings": 40960, "torch_dtype": "bfloat16"}
# round numbers so a step can be checked by hand
PLAIN = Coefficients(bw_eff=0.5, flops_eff=0.5, attn_eff=0.5, link_eff=0.5, collective_us=0.0, step_us=1000.0,
                     seq_us=0.0, layer_us=0.0, eager_layer_us=0.0, request_ms=0.0, inflight_us=0.0, key="test")


@pytest.fixture
def datasheet_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The step arithmetic at 100% of every datasheet figure (no measured kernel efficiencies): checkable by hand."""
    from launchcard.predict import _cost
    from launchcard.predict._kernels import NO_KERNELS

    monkeypatch.setattr(_cost, "facts_kernels", lambda f: NO_KERNELS)


# a small DeepSeek-V3-shaped MLA model (kv_lora_rank 512, rope 64, nope 128, v 128)
MLA_TINY = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "num_hidden_layers": 4,
            "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 32000,
            "intermediate_size": 2048, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
            "v_head_dim": 128, "q_lora_rank": 384, "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}


def facts(cfg: dict[str, object] = LLAMA8B, gpu: str = "h100", engine: str = "vllm", **kw: object) -> ServingFacts:
    s = Settings(max_model_len=16384, **kw)  # type: ignore[arg-type]
    arch = arch_from_config(dict(cfg))
    acc = find(gpu)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                           engine=engine)


@pytest.mark.usefixtures("datasheet_only")
def test_one_user_decode_step_is_weights_over_bandwidth_plus_overhead() -> None:
    f = facts(vllm_version="0.11.0")  # synchronous scheduling: the per-step host work is in series with the kernels
    # Llama 8B bf16 on an H100: the GEMMs read every dense weight once per step (embedding excluded)
    assert 14.5e9 < f.dense_bytes < 15.2e9
    assert f.kv_bytes_per_token == 32 * 2 * 8 * 128 * 2
    w = step_work(f, 1, 1000.0, 0, 0.0)
    mem, comp, comm, ovh = step_terms(w, PLAIN, True)
    expect = (f.dense_bytes + 1000 * f.kv_bytes_per_token) / (3.35e12 * 0.5)
    assert mem == pytest.approx(expect, rel=1e-9)
    assert comp == 0.0 and comm == 0.0 and ovh == pytest.approx(1e-3 + 0.0)
    p = predict(f, Workload(isl=64, osl=65, concurrency=1, num_requests=1), PLAIN)
    # TPOT excludes the first token: 64 decode steps over contexts 65..128
    per_step = [(f.dense_bytes + (64 + i) * f.kv_bytes_per_token) / (3.35e12 * 0.5) + 1e-3 for i in range(1, 65)]
    assert p.tpot_ms_mean == pytest.approx(sum(per_step) / 64 * 1e3, rel=2e-3)
    assert p.decode.bound == "memory"


def test_a_plans_step_function_is_never_another_plans_when_an_id_is_reused() -> None:
    from dataclasses import replace as _replace

    from launchcard.predict import _cost

    f = facts()
    other = _replace(f, dense_bytes=f.dense_bytes * 2)
    one = _cost.work_fn(f)(1, 1000.0, 0, 0.0, 0.0)
    # another plan that got the id of a plan no longer alive: its own figures, never the cached ones
    _cost._FNS._entries[(id(other), None)] = (f, _cost.work_fn(f))
    assert _cost.work_fn(other)(1, 1000.0, 0, 0.0, 0.0).gemm_mem == 2 * one.gemm_mem
    assert step_work(other, 1, 1000.0, 0, 0.0) == _cost.work_fn(other)(1, 1000.0, 0, 0.0, 0.0)


def test_a_pipeline_round_is_pp_stage_times_on_a_micro_batch() -> None:
    """pp > 1 inside the plan's step function: pp x one stage's work on 1/pp of the batch, one sequence count."""
    one, two = facts(), facts(pp=2)
    w = step_work(two, 64, 64 * 600.0, 512, 512 * 300.0)
    assert w.seqs == 64 + 1 and w.layers == 2 * two.layers
    assert w.collectives == 2 * 0 + 1  # TP 1: no all-reduce; one activation hand-off between the two stages
    half = step_work(_pp1(two), 32, 32 * 600.0, 256, 256 * 300.0)
    assert w.attn_mem == half.attn_mem * 2 and w.gemm_flop == half.gemm_flop * 2
    assert step_work(one, 64, 64 * 600.0, 512, 512 * 300.0).seqs == 65


def _pp1(f: ServingFacts) -> ServingFacts:
    from dataclasses import replace as _replace

    return _replace(f, pp=1)


def test_a_tied_lm_head_is_still_read_every_step() -> None:
    # tie_word_embeddings stores the head once (as the embedding) but its GEMM reads vocab x hidden per step
    tied = facts(LLAMA8B | {"tie_word_embeddings": True})
    untied = facts(LLAMA8B | {"tie_word_embeddings": False})
    head = 128256 * 4096
    assert tied.lm_head_params == untied.lm_head_params == pytest.approx(head, rel=1e-3)
    assert tied.dense_bytes == pytest.approx(untied.dense_bytes)


def test_prefill_is_compute_bound_and_ttft_grows_with_the_prompt() -> None:
    f = facts()
    short = predict(f, Workload(isl=256, osl=8, concurrency=1, num_requests=2), PLAIN)
    long = predict(f, Workload(isl=8000, osl=8, concurrency=1, num_requests=2), PLAIN)
    assert long.prefill.bound == "compute"
    assert long.ttft_ms_mean > 10 * short.ttft_ms_mean
    # 2 x params x tokens at half of 989 TFLOP/s dominates an 8k prompt
    assert long.ttft_ms_mean > 2 * f.dense_params * 8000 / (989e12 * 0.5) * 1e3


def test_batching_trades_latency_for_throughput() -> None:
    f = facts()
    c = coefficients("gpu", "vllm")
    one, many = (predict(f, Workload(isl=1024, osl=256, concurrency=n), c) for n in (1, 64))
    assert many.tpot_ms_mean > one.tpot_ms_mean
    assert many.output_tok_per_s > 20 * one.output_tok_per_s
    assert many.output_tok_per_s_per_user < one.output_tok_per_s_per_user
    assert many.mean_batch == pytest.approx(64, rel=0.1)
    assert many.output_tok_per_s_per_user == pytest.approx(1000 / many.tpot_ms_mean)


def test_tensor_parallel_cuts_tpot_and_adds_communication() -> None:
    one, four = facts(tp=1), facts(tp=4)
    w = Workload(isl=512, osl=128, concurrency=8)
    p1, p4 = predict(one, w, PLAIN), predict(four, w, PLAIN)
    assert p4.tpot_ms_mean < p1.tpot_ms_mean
    assert p4.decode.shares["communication"] > 0 == p1.decode.shares["communication"]
    assert p4.gpus == 4 and p4.output_tok_per_s_per_gpu < p4.output_tok_per_s


@pytest.mark.usefixtures("datasheet_only")
def test_moe_reads_only_the_experts_its_tokens_route_to() -> None:
    f = facts(QWEN_MOE)
    one = step_work(f, 1, 100.0, 0, 0.0)
    big = step_work(f, 256, 100.0 * 256, 0, 0.0)
    full = (f.dense_bytes + f.expert_bytes) / f.hardware.bandwidth_bps
    # one token touches 8 of 128 experts; 256 tokens touch nearly all of them
    assert one.gemm_mem + one.moe_mem < 0.2 * full
    assert big.gemm_mem + big.moe_mem == pytest.approx(full, rel=0.01)


@pytest.mark.usefixtures("datasheet_only")
def test_sliding_window_layers_read_only_their_window() -> None:
    cfg = json.loads(GPT_OSS.read_text())  # alternating 128-token sliding and full attention layers
    f = facts(cfg, tp=2)
    assert f.window == 128 and 0 < f.sliding_kv_bytes < f.kv_bytes_per_token
    short, long = step_work(f, 1, 200.0, 0, 0.0), step_work(f, 1, 10_200.0, 0, 0.0)
    full_part = f.kv_bytes_per_token - f.sliding_kv_bytes
    # 10k more context tokens cost only the full-attention layers' bytes
    assert (long.attn_mem - short.attn_mem) * f.hardware.bandwidth_bps == pytest.approx(10_000 * full_part, rel=1e-6)


def test_kv_pool_limits_the_batch_requests_queue_and_are_preempted() -> None:
    f = with_limits(facts(), kv_capacity_tokens=8 * 1100)
    p = predict(f, Workload(isl=1000, osl=200, concurrency=32), PLAIN)
    assert p.mean_batch <= 8.5
    assert p.prefill.shares["queueing"] > 0.5
    codes = {x.code for x in p.findings}
    assert "kv-capacity" in codes
    roomy = predict(facts(), Workload(isl=1000, osl=200, concurrency=32), PLAIN)
    assert roomy.output_tok_per_s > 2 * p.output_tok_per_s


def test_max_num_seqs_caps_the_batch() -> None:
    f = with_limits(facts(), max_num_seqs=4)
    p = predict(f, Workload(isl=128, osl=64, concurrency=16), PLAIN)
    assert p.mean_batch <= 4.0
    assert any(x.code == "max-num-seqs" for x in p.findings)


def test_chunked_prefill_mixes_into_decode_steps_but_sglang_runs_prefill_alone() -> None:
    w = Workload(isl=4000, osl=64, concurrency=16)
    v = predict(facts(engine="vllm"), w, PLAIN)
    s = predict(facts(engine="sglang"), w, PLAIN)
    # SGLang stalls decode for whole prefill batches; vLLM spreads prefill over mixed steps
    assert s.tpot_ms_mean != pytest.approx(v.tpot_ms_mean, rel=0.01)
    small = with_limits(facts(engine="vllm"), max_num_batched_tokens=512)
    assert predict(small, w, PLAIN).ttft_ms_mean > v.ttft_ms_mean


def test_speculative_decoding_yields_accepted_tokens_per_step() -> None:
    assert accepted_per_step(0, 0.9) == 1.0
    assert accepted_per_step(3, 0.5) == pytest.approx(1 + 0.5 + 0.25 + 0.125)
    base = facts()
    spec = facts(speculative_method="eagle3", num_speculative_tokens=3)
    w = Workload(isl=512, osl=256, concurrency=1, num_requests=2)
    p0, p_hi, p_lo = predict(base, w, PLAIN), predict(spec, replace(w, acceptance=0.8), PLAIN), predict(
        spec, replace(w, acceptance=0.05), PLAIN)
    assert p_hi.tpot_ms_mean < 0.6 * p0.tpot_ms_mean
    assert p_lo.tpot_ms_mean > p0.tpot_ms_mean  # drafting that is never accepted costs time
    assert p_hi.itl_ms_mean > p_hi.tpot_ms_mean  # one chunk carries several tokens
    dflt = predict(spec, w, PLAIN)
    assert any(x.code == "acceptance" and x.severity == "assumed" for x in dflt.findings)


def test_poisson_rate_below_capacity_is_served_at_that_rate() -> None:
    f = facts()
    p = predict(f, Workload(isl=256, osl=64, rate=2.0, num_requests=200), coefficients("gpu", "vllm"))
    assert p.request_per_s == pytest.approx(2.0, rel=0.2)
    assert p.ttft_ms_median < 200


def test_prefix_hits_shorten_ttft() -> None:
    f = facts()
    w = Workload(isl=8000, osl=16, concurrency=1)
    assert predict(f, replace(w, prefix_hit=0.75), PLAIN).ttft_ms_mean < 0.5 * predict(f, w, PLAIN).ttft_ms_mean


def test_bad_workloads_and_plans_are_refused_before_any_number() -> None:
    f = facts()
    for bad in (Workload(isl=0, osl=10, concurrency=1), Workload(isl=10, osl=10),
                Workload(isl=10, osl=10, rate=math.nan), Workload(isl=10, osl=10, rate=-math.inf),
                Workload(isl=10, osl=10, concurrency=1, range_ratio=1.0),
                Workload(isl=10, osl=10, concurrency=1, prefix_hit=1.0),
                Workload(isl=10, osl=10, concurrency=1, acceptance=1.5),
                Workload(isl=16000, osl=1000, concurrency=1)):
        with pytest.raises(InputError):
            predict(f, bad, PLAIN)
    # more requests than one prediction simulates (it would run for hours): refused, naming what makes them
    for bad, field in ((Workload(isl=10, osl=10, concurrency=10**8), "concurrency"),
                       (Workload(isl=10, osl=10, rate=1e9), "rate"),
                       # qa12: 10 x 1e308 arrivals is no int (an internal error, OverflowError, in requests())
                       (Workload(isl=10, osl=10, rate=1e308), "rate"),
                       (Workload(isl=10, osl=10, concurrency=4, rate=1e308), "rate"),
                       (Workload(isl=10, osl=10, concurrency=4, num_requests=MAX_REQUESTS + 1), "num_requests")):
        with pytest.raises(InputError, match=f"more than the {MAX_REQUESTS:,} requests") as e:
            predict(f, bad, PLAIN)
        assert e.value.field == field
    assert Workload(isl=10, osl=10, concurrency=10**8, num_requests=MAX_REQUESTS).validate()
    # qa12: arrivals spanning more than the clock counts to the microsecond (2^52 us) lost steps in its rounding
    # (gpt-oss-120b TP2 --rate 1e-16: TPOT 0.245 ms, one request alone 4.33 ms); refused, with or without a count
    for bad in (Workload(isl=10, osl=10, rate=1e-16), Workload(isl=10, osl=10, rate=1e-9),
                Workload(isl=10, osl=10, rate=1e-16, num_requests=2, concurrency=1)):
        with pytest.raises(InputError, match=r"longer than the simulation's clock counts to the microsecond") as e:
            bad.validate()
        assert e.value.field == "rate"
    assert Workload(isl=10, osl=10, rate=1e-8).validate()
    assert Workload(isl=10, osl=10, rate=1e-9, num_requests=4).validate()
    with pytest.raises(PredictError):
        predict(with_limits(f, kv_capacity_tokens=500), Workload(isl=400, osl=200, concurrency=1), PLAIN)


def test_every_coefficient_set_names_the_data_it_was_fitted_on() -> None:
    doc = json.loads((Path(__file__).resolve().parents[1] / "src/launchcard/data/predict_coefficients.json")
                     .read_text())
    assert {"gpu:vllm", "gpu:sglang", "gpu:trtllm", "cpu:vllm"} <= set(doc["sets"])
    for key, entry in doc["sets"].items():
        assert entry["fitted_on"] and not entry["fitted_on"].startswith("not fitted"), key
        c = coefficients(key.split(":")[0], key.split(":")[1])
        assert 0 < c.bw_eff <= 1 and 0 < c.flops_eff <= 1 and 0 < c.link_eff <= 1


def test_hardware_figures_file_is_read_and_checked(tmp_path: Path) -> None:
    good = tmp_path / "cpu.json"
    good.write_text(json.dumps({"bandwidth_gbs": 10, "tflops": {"fp32": 0.5}, "method": "measured"}))
    hw = HardwareFigures.from_file(good)
    assert hw.bandwidth_bps == 1e10 and hw.flops == {"fp32": 5e11} and hw.kind == "cpu"
    bad = tmp_path / "bad.json"
    bad.write_text("{\"bandwidth_gbs\": -1, \"tflops\": {\"fp32\": 1}}")
    with pytest.raises(InputError):
        HardwareFigures.from_file(bad)


def test_a_cpu_prediction_says_no_cuda_graphs_once(tmp_path: Path) -> None:
    """The CPU backend's lack of CUDA graphs is one fact: the memory plan's CPU note states it (with its engine
    source); the prediction shows that note and adds no second finding saying the same."""
    from launchcard.predict import serving_facts

    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA8B))
    fig = tmp_path / "cpu.json"
    fig.write_text(json.dumps({"bandwidth_gbs": 100, "tflops": {"bf16": 2}, "method": "measured"}))
    f = serving_facts(config, Settings(max_model_len=4096), gpu="xeon6", hardware=HardwareFigures.from_file(fig))
    said = [x.code for x in f.findings if "no CUDA graphs" in x.message]
    assert said == ["memory-plan"], said


def test_host_terms_scale_with_the_op_time_measured_on_the_host(tmp_path: Path) -> None:
    # a core running Python 2x slower than where the host terms were fitted spends 2x on them; kernels unchanged
    fig = tmp_path / "cpu.json"
    fig.write_text(json.dumps({"bandwidth_gbs": 10, "tflops": {"fp32": 0.5}, "op_us": 20.0, "method": "measured"}))
    hw = HardwareFigures.from_file(fig)
    assert hw.host_op_us == 20.0
    f = replace(facts(vllm_version="0.11.0"), hardware=replace(hw, flops={"bf16": 5e11}))  # step_us in series
    c = replace(PLAIN, host_op_us=10.0)
    w = Workload(isl=64, osl=33, concurrency=1, num_requests=1)
    slow, plain = predict(f, w, c), predict(f, w, PLAIN)
    assert slow.tpot_ms_mean - plain.tpot_ms_mean == pytest.approx(1.0, rel=1e-6)  # step_us 1000 -> 2000
    assert any(x.code == "host-speed" and "x2.00" in x.message for x in slow.findings)
    assert not any(x.code == "host-speed" for x in plain.findings)
    fig.write_text(json.dumps({"bandwidth_gbs": 10, "tflops": {"fp32": 0.5}, "op_us": -1}))
    with pytest.raises(InputError):
        HardwareFigures.from_file(fig)


def test_front_end_terms_scale_with_the_api_servers_own_op_time(tmp_path: Path) -> None:
    # the API server runs in its own process: its per-request terms scale by the op time measured for it, the
    # engine's host terms by the engine's
    fig = tmp_path / "cpu.json"
    fig.write_text(json.dumps({"bandwidth_gbs": 10, "tflops": {"fp32": 0.5}, "op_us": 20.0, "front_op_us": 40.0}))
    hw = HardwareFigures.from_file(fig)
    assert hw.front_op_us == 40.0
    c = on_host(replace(PLAIN, host_op_us=10.0), hw.host_op_us, hw.front_op_us)
    assert (c.step_us, c.request_ms) == (PLAIN.step_us * 2, PLAIN.request_ms * 4)
    assert on_host(replace(PLAIN, host_op_us=10.0), 20.0).request_ms == PLAIN.request_ms * 2
    # the finding names both scales; a host as fast as the fit's says so instead of "x1.00"
    f = replace(facts(), hardware=replace(hw, flops={"bf16": 5e11}))
    w = Workload(isl=64, osl=33, concurrency=1, num_requests=1)
    [said] = [x.message for x in predict(f, w, replace(PLAIN, host_op_us=10.0)).findings if x.code == "host-speed"]
    assert said == ("host overhead terms x2.00 on the engine's core (one kernel call measured 20.00 us), the API "
                    "server's x4.00 on its own (40.00 us), against 10.00 us where test was fitted")
    [said] = [x.message for x in predict(f, w, replace(PLAIN, host_op_us=20.0)).findings if x.code == "host-speed"]
    assert said.startswith("host overhead terms as fitted on the engine's core (one kernel call measured 20.00 us)")
    same = replace(f, hardware=replace(f.hardware, front_op_us=None))
    [said] = [x.message for x in predict(same, w, replace(PLAIN, host_op_us=20.0)).findings if x.code == "host-speed"]
    assert said == ("host overhead terms as fitted: one kernel call measured 20.00 us here, 20.00 us where test was "
                    "fitted")
    fig.write_text(json.dumps({"bandwidth_gbs": 10, "tflops": {"fp32": 0.5}, "front_op_us": 0}))
    with pytest.raises(InputError, match="front_op_us"):
        HardwareFigures.from_file(fig)


def test_request_path_and_client_terms_scale_with_their_own_processes_op_times(tmp_path: Path) -> None:
    # a busy loop beside the benchmark client takes its share of the other core from the client and the API server,
    # not from the worker: each term runs at the op time of the process that spends it (bench/predict_cpu.py
    # measures them from the processes' CPU and run-queue time); before, the client's stage ran at the worker's
    # speed and a request's path at the API server's alone
    fig = tmp_path / "cpu.json"
    fig.write_text(json.dumps({"bandwidth_gbs": 10, "tflops": {"fp32": 0.5}, "op_us": 20.0, "front_op_us": 40.0,
                               "client_op_us": 100.0, "request_op_us": 80.0}))
    hw = HardwareFigures.from_file(fig)
    assert (hw.client_op_us, hw.request_op_us) == (100.0, 80.0)
    c0 = replace(PLAIN, host_op_us=10.0, request_ms=5.0, inflight_us=100.0, stages=Stages(api_us=50.0, client_us=30.0))
    c = on_host(c0, hw.host_op_us, hw.front_op_us, client_op_us=hw.client_op_us, request_op_us=hw.request_op_us)
    assert (c.step_us, c.stages.api_us, c.stages.client_us) == (2000.0, 200.0, 300.0)
    assert (c.request_ms, c.inflight_us) == (40.0, 800.0)
    # without the client's figures: the request path at the API server's op time, the client's stage at the host's
    old = on_host(c0, hw.host_op_us, hw.front_op_us)
    assert (old.request_ms, old.stages.client_us, old.stages.api_us) == (20.0, 60.0, 200.0)
    # end to end, a closed loop (the front end in its schedule): the slower request path lengthens TTFT by the
    # request term's difference and lowers throughput; TPOT does not move
    f = replace(facts(), hardware=replace(hw, flops={"bf16": 5e11}))
    loop = replace(c0, inflight_us=0.0, front_in_schedule=True)
    w = Workload(isl=64, osl=33, concurrency=1, num_requests=4)
    slow, quick = predict(f, w, loop), predict(replace(f, hardware=replace(f.hardware, request_op_us=None)), w, loop)
    assert slow.ttft_ms_mean - quick.ttft_ms_mean == pytest.approx(40.0 - 20.0, rel=1e-6)
    assert slow.tpot_ms_mean == pytest.approx(quick.tpot_ms_mean, rel=1e-9)
    assert slow.output_tok_per_s < quick.output_tok_per_s
    [said] = [x.message for x in slow.findings if x.code == "host-speed"]
    assert said.endswith("; a request's path through the client and the API server x8.00 (80.00 us); the client's "
                         "stage x10.00 (100.00 us)")
    for bad in ({"client_op_us": 0}, {"request_op_us": "fast"}):
        fig.write_text(json.dumps({"bandwidth_gbs": 10, "tflops": {"fp32": 0.5}, **bad}))
        with pytest.raises(InputError, match=next(iter(bad))):
            HardwareFigures.from_file(fig)


def test_measured_row_figures_time_the_dense_gemms(tmp_path: Path) -> None:
    # CPU figures measured on the model's own layer (bench/measure_cpu.py --config): one core does not hide extra
    # decode rows under the weight stream (4 rows: 1.1x the one-row pass), and a short prefill chunk reaches only
    # rows / (rows + half) of the FLOP/s
    fig = tmp_path / "cpu.json"
    fig.write_text(json.dumps({"bandwidth_gbs": 10, "tflops": {"fp32": 0.5}, "gemm_half_rows": 32,
                               "decode_rows": {"1": 1.0, "2": 1.02, "4": 1.1, "8": 1.3}}))
    hw = replace(HardwareFigures.from_file(fig), flops={"bf16": 5e11})
    assert hw.decode_rows == ((1, 1.0), (2, 1.02), (4, 1.1), (8, 1.3)) and hw.gemm_half_rows == 32
    f = replace(facts(), hardware=hw)
    g = replace(facts(), hardware=replace(hw, decode_rows=(), gemm_half_rows=0.0))  # rows free, full FLOP/s
    assert step_work(f, 1, 100.0, 0, 0.0).gemm_mem == step_work(g, 1, 100.0, 0, 0.0).gemm_mem
    one = step_work(g, 4, 400.0, 0, 0.0).gemm_mem
    assert one == step_work(g, 1, 100.0, 0, 0.0).gemm_mem  # without the figures the rows cost nothing
    assert step_work(f, 4, 400.0, 0, 0.0).gemm_mem == pytest.approx(one * 1.1)
    assert step_work(f, 3, 300.0, 0, 0.0).gemm_mem == pytest.approx(one * 1.06)  # between measured counts
    assert step_work(f, 64, 6400.0, 0, 0.0).gemm_mem == pytest.approx(one * 1.3)  # past them: the last
    chunk, full = step_work(f, 0, 0.0, 32, 32 * 16.0), step_work(g, 0, 0.0, 32, 32 * 16.0)
    assert chunk.gemm_flop == pytest.approx(full.gemm_flop * 2)
    big, big_full = step_work(f, 0, 0.0, 3200, 0.0), step_work(g, 0, 0.0, 3200, 0.0)
    assert big.gemm_flop == pytest.approx(big_full.gemm_flop * 3232 / 3200)
    # taken as measured: a row count whose kernel streams faster than one row's (oneDNN on an AMD EPYC core,
    # 4 rows at ~0.83) is not clamped to 1, and a dip between counts is followed, not smoothed over
    dip = replace(facts(), hardware=replace(hw, decode_rows=((1, 1.0), (2, 1.17), (4, 0.83), (8, 1.08))))
    assert step_work(dip, 4, 400.0, 0, 0.0).gemm_mem == pytest.approx(one * 0.83)
    assert step_work(dip, 3, 300.0, 0, 0.0).gemm_mem == pytest.approx(one * 1.0)
    assert step_work(dip, 6, 600.0, 0, 0.0).gemm_mem == pytest.approx(one * 0.955)
    assert step_work(dip, 1, 100.0, 0, 0.0).gemm_mem == pytest.approx(one)
    for bad in ({"decode_rows": {"2": 1.1}}, {"decode_rows": {"1": 1.0, "4": -1}}, {"decode_rows": {"x": 1}},
                {"gemm_half_rows": -3}):
        fig.write_text(json.dumps({"bandwidth_gbs": 10, "tflops": {"fp32": 0.5}, **bad}))
        with pytest.raises(InputError, match=r"decode_rows|gemm_half_rows"):
            HardwareFigures.from_file(fig)


# -- the command ------------------------------------------------------------------------------------


def test_cli_json_has_every_figure_and_bound_per_phase() -> None:
    res = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--tp", "2", "--isl", "1024", "--osl",
                  "256", "--concurrency", "16", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    for key in ("ttft_ms_mean", "ttft_ms_median", "tpot_ms_mean", "itl_ms_mean", "e2e_ms_mean", "output_tok_per_s",
                "output_tok_per_s_per_gpu", "output_tok_per_s_per_user", "request_per_s"):
        assert out[key] > 0, key
    assert out["gpus"] == 2
    for phase in ("prefill", "decode"):
        assert sum(out["bound"][phase]["shares"].values()) == pytest.approx(1.0, abs=1e-3)
    assert any(f["code"] == "compute-dtype" for f in out["findings"])  # MXFP4: bf16 activations, said so


def test_cli_recipe_mode_predicts_the_resolved_command() -> None:
    res = run_cli("predict", "openai/gpt-oss-120b", "--recipes", str(SHARED / "corpus" / "vllm-recipes"),
                  "--hardware", "h100", "--isl", "1024", "--osl", "128", "--concurrency", "4")
    assert res.returncode == 0, res.stderr
    assert "vllm serve" in res.stdout and "TPOT" in res.stdout and "decode   bound" in res.stdout


@pytest.mark.parametrize(("args", "code", "words"), [
    (["--gpu", "h999"], 2, "--gpu"),
    (["--gpu", "h100", "--tp", "2", "--isl", "200000"], 2, "--isl"),
    (["--gpu", "h100", "--tp", "2", "--rate", "nan"], 2, "--rate"),
    (["--gpu", "h100", "--tp", "2", "--request-rate", "0"], 2, "--request-rate"),
    (["--gpu", "h100", "--tp", "2", "--rate", "inf", "--num-prompts", "0"], 2, "--num-prompts"),
    (["--gpu", "h100", "--tp", "2", "--random-range-ratio", "1"], 2, "--random-range-ratio"),
    (["--gpu", "h100", "--tp", "2", "--isl", "100000", "--osl", "4000", "--random-range-ratio", "0.5"], 2, "--isl"),
    (["--gpu", "l4"], 1, "does not fit"),
    (["--gpu", "h100", "--tp", "2", "--engine", "tgi"], 2, "--engine"),
])
def test_cli_bad_input_is_one_line(args: list[str], code: int, words: str) -> None:
    res = run_cli("predict", "--config", str(GPT_OSS), *args)
    assert res.returncode == code, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in res.stderr
    assert res.stdout == ""


@pytest.mark.usefixtures("datasheet_only")
def test_attention_matmuls_run_in_bf16_even_with_fp8_weights() -> None:
    bf16, fp8 = facts(), facts(quantization="fp8")
    assert fp8.compute_dtype == "fp8" and fp8.attn_flops_per_s == bf16.attn_flops_per_s == 989e12
    # a long prefill's attention costs the same FLOP time whatever the weights are stored in
    w16, w8 = (step_work(f, 0, 0.0, 8192, 8192 * 4096.0) for f in (bf16, fp8))
    assert w8.attn_flop == pytest.approx(w16.attn_flop, rel=1e-9)
    assert w8.gemm_flop == pytest.approx(w16.gemm_flop / 2, rel=0.05)  # the GEMMs do run at the FP8 rate


def test_routed_experts_are_their_own_roofline() -> None:
    f = facts(QWEN_MOE)
    # a decode step of 4 sequences: experts memory-bound; a long prefill: experts compute-bound
    small, big = step_work(f, 4, 4000.0, 0, 0.0), step_work(f, 0, 0.0, 16384, 16384 * 8192.0)
    assert small.moe_mem > small.moe_flop and big.moe_flop > big.moe_mem
    mem, comp, _, _ = step_terms(small, PLAIN, True)
    # the dense GEMMs at their GPU's smooth roofline (KernelEff.g_ridge), memory-bound here
    g_m, g_c, q = small.gemm_mem / 0.5, small.gemm_flop / PLAIN.flops_eff, small.ridge
    dense = (g_m ** q + g_c ** q) ** (1 / q) if q else g_m
    assert g_m > g_c and g_m <= dense < g_m * 1.001
    both = dense + (small.moe_mem + max(small.attn_mem, small.attn_flop)) / 0.5
    # compute: the grouped calls' measured fixed latency alone (each MoE layer's, with the kernel terms)
    assert mem == pytest.approx(both, rel=1e-9) and comp == pytest.approx(small.moe_fixed / 0.5, rel=1e-12)


def test_mla_prefill_attends_over_the_up_projected_heads() -> None:
    f = facts(MLA_TINY)
    # decode: absorbed, (512 + 64) + 512 per head; prefill: (128 + 64) + 128 per head
    assert f.attn_flops_per_pair == 2 * 16 * (576 + 512) * 4
    assert f.prefill_flops_per_pair == 2 * 16 * (192 + 128) * 4
    assert f.mla and not facts().mla


def test_mla_decode_kv_reads_keep_attn_eff_where_gqa_reads_take_the_gpus_attention_share() -> None:
    """The attn_decode tables time GQA/MHA decode kernels: on the H200 (a_read < 1) a Llama's KV reads take that
    share, a DeepSeek-style MLA plan's latent reads do not."""
    from launchcard.predict._kernels import facts_kernels

    bw = 4.8e12
    gqa, mla = facts(gpu="h200"), facts(MLA_TINY, gpu="h200")
    assert facts_kernels(gqa).a_read < 1 and facts_kernels(mla).a_read < 1
    g, m = step_work(gqa, 1, 1000.0, 0, 0.0), step_work(mla, 1, 1000.0, 0, 0.0)
    assert g.attn_mem == pytest.approx(1000 * gqa.kv_bytes_per_token / (bw * facts_kernels(gqa).a_read), rel=1e-9)
    assert m.attn_mem == pytest.approx(1000 * mla.kv_bytes_per_token / bw, rel=1e-9)


def test_pipeline_parallel_keeps_a_token_waiting_for_every_stage() -> None:
    one, pp2, tp2 = facts(), facts(pp=2), facts(tp=2)
    w = Workload(isl=512, osl=128, concurrency=1, num_requests=2)
    p1, pp, tp = (predict(f, w, PLAIN) for f in (one, pp2, tp2))
    # one user: PP halves each GPU's weights but a token crosses both stages, so TPOT stays about one GPU's;
    # TP splits every layer and cuts it
    assert pp.tpot_ms_mean == pytest.approx(p1.tpot_ms_mean, rel=0.15)
    assert tp.tpot_ms_mean < 0.8 * pp.tpot_ms_mean
    # many users: two micro-batches in flight, each stage reads its half of the weights once per micro-batch, so
    # a memory-bound round reads the whole model per GPU as one GPU does (PP buys KV room, not bandwidth)
    many = Workload(isl=512, osl=128, concurrency=64, num_requests=128)
    one_m, pp_m, tp_m = (predict(f, many, PLAIN) for f in (one, pp2, tp2))
    assert pp_m.decode.shares["memory"] > 0.5
    assert step_work(pp2, 64, 64 * 600.0, 0, 0.0).gemm_mem == pytest.approx(
        step_work(one, 64, 64 * 600.0, 0, 0.0).gemm_mem, rel=0.1)  # stages differ by the lm_head
    assert tp_m.tpot_ms_mean < 0.8 * pp_m.tpot_ms_mean and pp_m.tpot_ms_mean <= one_m.tpot_ms_mean


def test_collectives_beyond_one_link_domain_cross_the_network() -> None:
    moe = dict(QWEN_MOE, num_attention_heads=64, num_key_value_heads=16)
    inside, across = facts(moe, gpu="b200", tp=8, expert_parallel=True), facts(moe, gpu="b200", tp=16,
                                                                                 expert_parallel=True)
    assert inside.hardware.link_domain == 8 and inside.hardware.scale_out_bps == 400e9 / 8
    nvlink_only = replace(across, hardware=replace(across.hardware, link_domain=None, scale_out_bps=None))
    w_out, w_nv = (step_work(f, 64, 64 * 1000.0, 0, 0.0) for f in (across, nvlink_only))
    # 16 GPUs: half of each all-to-all leaves the 8-GPU domain at 50 GB/s instead of 900 GB/s NVLink (the
    # all-reduces run hierarchically: only 1/8 of their bytes leave it)
    assert w_out.comm > 3 * w_nv.comm
    assert step_work(inside, 64, 64 * 1000.0, 0, 0.0).comm == pytest.approx(
        step_work(replace(inside, hardware=replace(inside.hardware, link_domain=None)), 64, 64 * 1000.0, 0,
                  0.0).comm)
    assert any(x.code == "scale-out" for x in across.findings)
    assert not any(x.code == "scale-out" for x in inside.findings)


def test_mxfp4_experts_multiply_bf16_activations_and_attention_stays_bf16() -> None:
    cfg = json.loads(GPT_OSS.read_text())  # MXFP4 experts; attention, router, embeddings and lm_head not converted
    f = facts(cfg, gpu="b200", tp=2)
    assert f.compute_dtype == "bf16" and f.expert_dtype == "bf16"
    assert any(x.code == "compute-dtype" and "bf16 activations" in x.message for x in f.findings)
    fp4 = facts(dict(cfg, quantization_config={"quant_method": "modelopt", "quant_algo": "NVFP4"}), gpu="b200", tp=2)
    assert fp4.expert_dtype == "fp4" and fp4.compute_dtype == "fp4"  # W4A4 runs on the FP4 tensor cores
    # the MXFP4 checkpoint keeps its attention in 16 bits: more always-read bytes than an all-NVFP4 one
    assert f.dense_bytes > 1.5 * fp4.dense_bytes


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 1e6, allow_nan=False), st.integers(0, 1000)), max_size=300))
def test_a_weighted_mean_is_the_plain_sums_to_the_last_bit(pairs: list[tuple[float, int]]) -> None:
    from launchcard.predict._predict import _mean

    n = sum(c for _, c in pairs)
    plain = sum(v * c for v, c in pairs) / n if n else math.nan
    got = _mean(pairs)
    assert got == plain or (math.isnan(got) and math.isnan(plain))


def test_cli_a_model_without_a_recipe_is_derived_for_the_gpu_predicted_on() -> None:
    """MODEL --config --gpu (no recipe, no --hardware): the derived plan is sized for that GPU, not refused."""
    res = run_cli("predict", "some/model", "--config", str(GPT_OSS), "--gpu", "h100", "--concurrency", "4", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["ttft_ms_mean"] > 0 and "h100" in json.dumps(doc).lower()


def test_kernel_efficiencies_time_each_class_at_its_measured_share() -> None:
    """The recorded kernel terms (bench/predict_kernels.py, measured kernel tables) scale each kernel class's FLOP/s:
    a long prefill's GEMMs at their share once M fills every tile, fewer tokens than a tile at the whole tile's cost,
    prefill attention at its share; memory time stays at the datasheet bandwidth (the set's bw_eff/attn_eff), the
    weights' at the GPU's measured weight-read share relative to the calibrated GPUs' (``w_read``)."""
    from launchcard.predict._kernels import facts_kernels

    f = facts(gpu="h200")
    k = facts_kernels(f)
    assert k.source == "h200/vllm" and 0 < k.g_comp < 1 and 0 < k.ap_comp < 1
    bw, fl = 4.8e12, 989e12
    dec = step_work(f, 1, 1000.0, 0, 0.0)
    assert dec.gemm_mem == pytest.approx(f.dense_bytes / (bw * k.w_read), rel=1e-9)
    assert dec.attn_mem == pytest.approx(1000 * f.kv_bytes_per_token / (bw * k.a_read), rel=1e-9) and k.a_read < 1
    m = 8192
    pf = step_work(f, 0, 0.0, m, m * (m + 1) / 2)
    flops = 2.0 * f.dense_params * m + 2.0 * f.lm_head_params
    assert m >= k.g_half  # a long prompt fills every tile
    assert pf.gemm_flop == pytest.approx(flops / (fl * k.g_comp), rel=1e-9)
    keys = (m + 1) / 2
    fill = keys / max(keys, k.ap_half) if k.ap_half else 1.0
    assert pf.attn_flop == pytest.approx(f.attn_flops_per_pair * m * (m + 1) / 2 / (fl * k.ap_comp * fill), rel=1e-9)
    if k.g_half > 1:  # fewer tokens than a tile's rows cost the whole tile
        few = step_work(f, 0, 0.0, 1, 1.0)
        assert few.gemm_flop == pytest.approx((2.0 * f.dense_params + 2.0 * f.lm_head_params) * k.g_half
                                              / (fl * k.g_comp), rel=1e-9)


def test_fp8_gemms_reach_a_smaller_share_of_their_datasheet_than_bf16() -> None:
    """What the measured tables show on every Hopper/Blackwell GPU and engine: FP8 (and NVFP4) GEMMs reach about half
    of their datasheet FLOP/s, BF16 ~0.7-0.8; one flops_eff for all dtypes under-predicted quantized prefills."""
    from launchcard.predict._kernels import kernel_eff

    for gpu in ("h100", "h200", "b200", "gb200"):
        for engine in ("vllm", "sglang", "trtllm"):
            bf16, fp8 = kernel_eff(gpu, "gpu", engine, "bf16", "bf16"), kernel_eff(gpu, "gpu", engine, "fp8", "fp8")
            assert bf16.source == fp8.source == f"{gpu}/{engine}"
            assert fp8.g_comp < bf16.g_comp


def test_gpu_without_kernel_tables_uses_the_median_and_cpus_none() -> None:
    from launchcard.predict._kernels import NO_KERNELS, kernel_eff

    assert kernel_eff("a100", "gpu", "vllm", "bf16", "bf16").source == "default/vllm"
    assert kernel_eff("epyc", "cpu", "vllm", "fp32", "fp32") == NO_KERNELS


def test_kernel_terms_record_their_provenance() -> None:
    from launchcard.predict._kernels import _table

    doc = _table()["kernels"]
    assert doc["source"]["wheel"].startswith("aiconfigurator_core-0.12.0") and len(doc["source"]["wheel_sha256"]) == 64
    for gpu, by_engine in doc["gpus"].items():
        if gpu == "default":
            continue
        for engine, by_cls in by_engine.items():
            for cls, by_dt in by_cls.items():
                for dt, e in by_dt.items():
                    assert e["file"].startswith("systems/data/") and e["rows"] >= 20, (gpu, engine, cls, dt)
                    assert 0 < e["e_mem"] <= 1 and 0 < e["e_comp"] <= 1


def test_moe_calls_carry_their_measured_fixed_latency() -> None:
    """Each MoE layer's grouped call takes the fixed latency its kernel table shows (routing, sorting and permuting
    the tokens) on top of its roofline: at one decode token the weights of 8 experts are read in a few microseconds,
    the measured call takes tens.  Counted once per MoE layer per step that runs tokens, with the kernel terms; a
    step without tokens and a dense model get none (nor a CPU: no kernel tables, its figures are measured)."""
    from launchcard.predict._kernels import facts_kernels

    f = facts(QWEN_MOE, gpu="h200")
    k = facts_kernels(f)
    assert k.x_t0 > 0 and k.source == "h200/vllm"
    w = step_work(f, 1, 1000.0, 0, 0.0)
    assert w.moe_fixed == pytest.approx(f.moe_layers * k.x_t0, rel=1e-12)
    assert step_work(f, 0, 0.0, 0, 0.0).moe_fixed == 0.0
    mem, comp, _, _ = step_terms(w, replace(PLAIN, flops_eff=1.0), True)
    no_fixed = step_terms(w._replace(moe_fixed=0.0), replace(PLAIN, flops_eff=1.0), True)
    assert comp - no_fixed[1] == pytest.approx(w.moe_fixed) and mem == no_fixed[0]
    assert step_work(facts(LLAMA8B, gpu="h200"), 1, 1000.0, 0, 0.0).moe_fixed == 0.0  # dense: no MoE calls


def test_a_moe_layer_counts_once_for_kernel_tails_where_its_call_is_timed() -> None:
    """layer_us counted a MoE layer twice (its grouped call's tails inside CUDA graphs); where the kernel tables time
    that call (moe_fixed), it counts once there, and still twice for eager launches (eager_layer_us: more kernels)."""
    f = facts(QWEN_MOE, gpu="h200")
    w = step_work(f, 1, 1000.0, 0, 0.0)
    assert w.moe_fixed > 0 and w.layers == f.layers and w.eager_layers == f.layers + f.moe_layers
    c = replace(PLAIN, step_us=0.0, layer_us=10.0, eager_layer_us=100.0)
    assert step_terms(w, c, True)[3] == pytest.approx(10.0 * f.layers * 1e-6)
    assert step_terms(w, c, False)[3] == pytest.approx((10.0 * f.layers + 100.0 * (f.layers + f.moe_layers)) * 1e-6)


@pytest.mark.usefixtures("datasheet_only")
def test_without_kernel_tables_a_moe_layer_still_counts_twice() -> None:
    f = facts(QWEN_MOE, gpu="h200")
    w = step_work(f, 1, 1000.0, 0, 0.0)
    assert w.moe_fixed == 0.0 and w.layers == w.eager_layers == f.layers + f.moe_layers


def test_a_run_without_decode_names_no_decode_bound() -> None:
    """--osl 1: the decode phase takes no time, so no term bounds it: null in JSON and "none" in text (it was
    "memory", the first term of an all-zero share table, claimed without any decode step)."""
    from launchcard.predict._render import prediction_to_text

    p = predict(facts(), Workload(isl=256, osl=1, concurrency=4, num_requests=8))
    assert p.decode.bound is None and p.prefill.bound is not None
    out = p.to_json()
    assert out["bound"]["decode"]["bound"] is None and out["bound"]["prefill"]["bound"] == p.prefill.bound
    text = prediction_to_text(p)
    assert "decode   bound: none" in text and "decode   bound: memory" not in text
    assert predict(facts(), Workload(isl=256, osl=16, concurrency=4, num_requests=8)).decode.bound is not None


def test_cli_recipe_mode_gives_the_plans_verdict_as_resolve_does() -> None:
    """predict in recipe mode printed figures without the plan's verdict that resolve, emit and the web give: the
    same check_plan verdict now, in text (its errors and warnings) and JSON (whole)."""
    recipes = str(SHARED / "corpus" / "vllm-recipes")
    args = ("openai/gpt-oss-120b", "--recipes", recipes, "--hardware", "h100")
    load = ("--isl", "1024", "--osl", "128", "--concurrency", "4")
    text = run_cli("predict", *args, *load)
    js = run_cli("predict", *args, *load, "--json")
    res = run_cli("resolve", *args, "--json")
    assert text.returncode == 0 and js.returncode == 0, text.stderr + js.stderr
    verdict = json.loads(res.stdout)["verdict"]
    assert json.loads(js.stdout)["verdict"] == verdict
    assert f"verdict: {verdict['label']} (" in text.stdout


def test_a_float32_checkpoint_runs_in_bf16_under_dtype_auto() -> None:
    """vLLM's --dtype auto downcasts a float32 checkpoint (config/model.py _resolve_auto_dtype): the memory plan
    read its weights at 2 bytes while predict timed its activations/GEMMs at 4 and said "no fp32 FLOP/s figure";
    now both take the plan's width, and --dtype float32 keeps 4."""
    f32 = {**LLAMA8B, "torch_dtype": "float32"}
    auto = facts(f32)
    assert auto.act_bytes == 2 and auto.dense_bytes == facts().dense_bytes
    assert not [x for x in auto.findings if x.code == "compute-dtype"]
    kept = facts(f32, dtype="float32")
    assert kept.act_bytes == 4 and [x for x in kept.findings if x.code == "compute-dtype"]
