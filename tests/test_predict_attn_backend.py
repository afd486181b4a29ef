"""vLLM's attention backend for gpt-oss (attention sinks): Triton unified attention off SM90/SM100 in 0.11, its
prefill no faster than its SMs' measured rate (else its share of FlashAttention-2's FLOP/s); everywhere else
FlashAttention's.  FlashAttention 2 (vLLM 0.10/0.11 on SM8x) runs a mixed step's decode queries unpacked, a whole
64-row tile per query head."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from config_support import LLAMA8B
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, ServingFacts, facts_from_memory_plan
from launchcard.predict._attn_backend import (
    FA2_TILE_ROWS,
    TRITON,
    triton_3d_seqs,
    triton_attn_rate,
    triton_attn_share,
    triton_prefill_share,
    vllm_fa2_unpacked,
    vllm_sink_attention,
)
from launchcard.predict._cost import step_work
from launchcard.predict._kernels import facts_kernels
from launchcard.predict._types import Finding

SHARED = Path(__file__).resolve().parents[2] / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"


def gpt_oss(gpu: str, version: str | None, engine: str = "vllm") -> ServingFacts:
    arch = arch_from_config(json.loads(GPT_OSS.read_text()))
    s = Settings(tp=1, max_model_len=32768, vllm_version=version)
    acc = find(gpu)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


def test_the_recorded_share_is_a_slowdown_measured_on_two_gpus() -> None:
    got = triton_attn_share()
    assert got is not None
    share, where = got
    assert 0.2 < share < 1.0  # Triton's prefill is slower than FA2's on long prompts, not free
    assert "l40s" in where and "rtx_pro_6000_server" in where


@pytest.mark.parametrize(("cc", "release", "want"), [
    ((8, 0), (0, 11), TRITON), ((8, 9), (0, 11), TRITON), ((12, 0), (0, 11), TRITON),
    ((10, 3), (0, 11), TRITON),  # B300: vLLM's SM90 / SM100 tests are exact matches, 10.3 is neither
    ((9, 0), (0, 11), ""), ((10, 0), (0, 11), ""), ((8, 0), None, ""), ((8, 0), (0, 12), ""), ((7, 5), (0, 11), "")])
def test_the_backend_follows_the_release_and_compute_capability(cc: tuple[int, int], release: tuple[int, int] | None,
                                                                want: str) -> None:
    out: list[Finding] = []
    assert vllm_sink_attention("gpt_oss", "gpu", cc, release, out) == want
    if want:
        assert out[0].severity == "info" and "cuda.py L358-362" in out[0].message
    elif cc >= (8, 0) and cc not in ((9, 0), (10, 0)):  # a release whose rule is not read is said, not silently FA
        assert out[0].severity == "assumed" and "timed as FlashAttention" in out[0].message
    else:
        assert not out


def test_a_model_without_sinks_or_a_cpu_keeps_flashattention() -> None:
    out: list[Finding] = []
    assert vllm_sink_attention("llama", "gpu", (8, 0), (0, 11), out) == "" and not out
    assert vllm_sink_attention("gpt_oss", "cpu", None, (0, 11), out) == "" and not out


def test_a100_prefill_attention_is_slower_on_0_11_only() -> None:
    on, off = gpt_oss("a100_80gb", "0.11.0"), gpt_oss("a100_80gb", None)
    assert on.attn_backend == TRITON and off.attn_backend == ""
    rate = triton_attn_rate("a100_80gb")
    assert rate is not None
    k_on, k_off = facts_kernels(on), facts_kernels(off)
    # Triton's own rate caps prefill attention; FlashAttention's share (the short prompts' fill, decode) stays
    assert k_on.ap_comp == k_off.ap_comp and k_off.ap_cap == 0.0
    assert k_on.ap_cap == pytest.approx(rate[0] / 312e12)
    assert k_on.g_comp == k_off.g_comp and k_on.x_comp == k_off.x_comp  # GEMMs untouched
    said = [f for f in on.findings if f.code == "attention-backend" and f.severity == "info"]
    assert said and "108 SMs x 1,410 MHz" in said[0].message


def test_triton_runs_at_its_sms_rate_where_the_catalog_states_them() -> None:
    rate = triton_attn_rate("a100_80gb")
    assert rate is not None
    # the tables' FLOPs per SM cycle (L40S: 74 TFLOP/s on 142 SMs at 2,520 MHz) at the A100's 108 SMs x 1,410 MHz
    assert 150.0 < rate[0] / (108 * 1410e6) < 300.0 and "l40s" in rate[1]
    l40s = triton_attn_rate("l40s")
    assert l40s is not None and 60e12 < l40s[0] < 90e12  # what the L40S table measured (median 74 TFLOP/s)
    # on the A100 that is about half what a share of its FlashAttention-2 rate would give (FA2 there reaches twice
    # the L40S's FLOP/s an SM cycle): the slower figure is the one taken
    share = triton_attn_share()
    assert share is not None
    fa = 0.5
    got = triton_prefill_share("a100_80gb", fa)
    assert got is not None and got[0] == pytest.approx(rate[0] / 312e12) and got[0] < fa * share[0]
    assert "TFLOP/s" in got[1]


def test_a_gpu_without_sms_falls_back_to_the_share_of_flashattention() -> None:
    assert triton_attn_rate("b300") is None and triton_attn_rate("no-such-gpu") is None
    share = triton_attn_share()
    got = triton_prefill_share("b300", 0.5)
    assert share is not None and got is not None and got[0] == pytest.approx(0.5 * share[0])


def test_a_long_chunk_takes_tritons_rate_a_short_prompt_flashattentions_time() -> None:
    on, off = gpt_oss("a100_80gb", "0.11.0"), gpt_oss("a100_80gb", None)
    k_on = facts_kernels(on)
    # a 2,048-token chunk over 30,000 earlier tokens: its FLOPs at the Triton kernel's own rate
    pairs = 2048 * (30000 + 1024)
    long_on, long_off = step_work(on, 0, 0.0, 2048, pairs, 30000), step_work(off, 0, 0.0, 2048, pairs, 30000)
    want = on.prefill_flops_per_pair or on.attn_flops_per_pair
    assert long_on.attn_flop > 1.5 * long_off.attn_flop
    assert long_on.attn_flop == pytest.approx(
        (want * pairs - on.sliding_flops_per_pair * (pairs - 2048 * on.window)) / (on.attn_flops_per_s * k_on.ap_cap))
    # 16 prompts of 128 tokens: fewer keys a query than FlashAttention's tile, which costs them alike
    short = 16 * 128 * 64.5
    assert step_work(on, 0, 0.0, 2048, short).attn_flop == pytest.approx(step_work(off, 0, 0.0, 2048, short).attn_flop)


def test_h100_and_sglang_are_untouched() -> None:
    assert gpt_oss("h100", "0.11.0").attn_backend == ""
    assert gpt_oss("a100_80gb", "0.11.0", engine="sglang").attn_backend == ""


# FlashAttention 2 under vLLM 0.10/0.11 on SM8x: a step with a prefill chunk runs its decode queries unpacked
def llama(gpu: str, version: str | None, engine: str = "vllm", **kw: object) -> ServingFacts:
    arch = arch_from_config(dict(LLAMA8B))
    s = Settings(tp=1, max_model_len=8192, vllm_version=version, **kw)  # type: ignore[arg-type]
    acc = find(gpu)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


@pytest.mark.parametrize(("cc", "release", "backend", "mla", "kv", "want"), [
    ((8, 0), (0, 10), "", False, "auto", True), ((8, 0), (0, 11), "", False, "bfloat16", True),
    ((8, 9), (0, 11), "", False, "auto", True), ((8, 6), (0, 10), "", False, "auto", True),
    ((9, 0), (0, 11), "", False, "auto", False),  # FA3 on Hopper packs GQA with its own scheduler
    ((10, 0), (0, 11), "", False, "auto", False),  # FlashInfer on exactly SM 10.0
    ((10, 3), (0, 11), "", False, "auto", True), ((10, 3), (0, 10), "", False, "auto", True),  # B300: FA2 from PTX
    ((12, 0), (0, 11), "", False, "auto", True), ((10, 3), (0, 12), "", False, "auto", False),
    ((8, 0), (0, 11), TRITON, False, "auto", False),  # gpt-oss's sinks run Triton there
    ((8, 0), (0, 11), "", True, "auto", False), ((8, 0), (0, 11), "", False, "fp8", False),
    ((8, 0), (0, 12), "", False, "auto", False), ((8, 0), None, "", False, "auto", False)])
def test_fa2_runs_decodes_unpacked_on_sm8x_at_the_releases_read(cc: tuple[int, int], release: tuple[int, int] | None,
                                                              backend: str, mla: bool, kv: str, want: bool) -> None:
    out: list[Finding] = []
    assert vllm_fa2_unpacked("gpu", cc, release, backend, mla, kv, out) is want
    if want:  # SM8x: FA2's sm_80 code; elsewhere its PTX, which no table measures there (assumed)
        assert [f.severity for f in out] == ["info" if cc[0] == 8 else "assumed"]
        assert "flash_api.cpp L593-600" in out[0].message
        assert ("compute_80 PTX" in out[0].message) is (cc[0] != 8)
    elif cc[0] != 9 and cc != (10, 0) and not backend and not mla and kv != "fp8":  # a release not read: said
        assert [f.severity for f in out] == ["assumed"] and "packed decode kernel" in out[0].message
    else:
        assert not out
    assert vllm_fa2_unpacked("cpu", None, (0, 11), "", False, "auto", []) is False


def test_the_plan_facts_carry_the_rule_for_vllm_on_an_a100_only() -> None:
    assert llama("a100_80gb", "0.10.1.1").fa2_unpacked
    assert not llama("h100", "0.10.1.1").fa2_unpacked
    # vLLM 0.11 on SM 10.3 falls through to FLASH_ATTN (only SM 10.0 is FlashInfer's) and FA2 from its PTX
    b300 = llama("b300", "0.11.0")
    assert b300.fa2_unpacked and not llama("b200", "0.11.0").fa2_unpacked
    said = [f for f in b300.findings if f.code == "attention-backend"]
    assert [f.severity for f in said] == ["assumed"] and "compute capability 10.3" in said[0].message
    assert not llama("a100_80gb", "0.10.1.1", engine="sglang").fa2_unpacked
    assert not llama("a100_80gb", "0.11.0", kv_cache_dtype="fp8").fa2_unpacked
    assert not gpt_oss("a100_80gb", "0.11.0").fa2_unpacked  # Triton attention


def test_decode_attention_costs_whole_tiles_only_in_a_step_with_a_prefill_chunk() -> None:
    on = llama("a100_80gb", "0.11.0")
    off = replace(on, fa2_unpacked=False)
    dec_seqs, ctx = 32, 32 * 2000.0  # 2,000 keys per query: over the tile's half-fill, no fill factor
    # a decode-only step: FA2 packs the GQA heads (max_seqlen_q == 1), the same as without the rule
    assert step_work(on, dec_seqs, ctx, 0, 0.0) == step_work(off, dec_seqs, ctx, 0, 0.0)
    mixed_on = step_work(on, dec_seqs, ctx, 512, 512 * 256.0)
    mixed_off = step_work(off, dec_seqs, ctx, 512, 512 * 256.0)
    # the prefill chunk alone: what both time the same
    pf_on = step_work(on, 0, 0.0, 512, 512 * 256.0)
    dec_packed = on.attn_flops_per_pair * ctx / (on.attn_flops_per_s * facts_kernels(on).ap_comp)
    assert mixed_on.attn_flop - pf_on.attn_flop == pytest.approx(FA2_TILE_ROWS * dec_packed)
    assert mixed_on.attn_flop + mixed_on.attn_mem > mixed_off.attn_flop + mixed_off.attn_mem
    assert mixed_on[:2] == mixed_off[:2] and mixed_on.comm == mixed_off.comm  # GEMMs and collectives untouched


def test_short_contexts_pay_the_tile_half_fill_as_prefill_does() -> None:
    on = llama("a100_80gb", "0.11.0")
    half = facts_kernels(on).ap_half
    assert half > 100
    keys = half / 4
    full = step_work(on, 8, 8 * half, 64, 64 * 32.0).attn_flop - step_work(on, 0, 0.0, 64, 64 * 32.0).attn_flop
    short = step_work(on, 8, 8 * keys, 64, 64 * 32.0).attn_flop - step_work(on, 0, 0.0, 64, 64 * 32.0).attn_flop
    assert short == pytest.approx(full)  # a quarter of the keys, the same tiles' time


def test_fa2_never_packs_an_mha_model_so_its_mixed_steps_run_the_decode_kernel_as_ever() -> None:
    """flash_api.cpp L593: the swap needs num_heads > num_heads_k; an MHA model's decode queries run one tile per
    head in a decode-only step too, the kernel the decode shares time: no mixed-step term, no finding."""
    out: list[Finding] = []
    assert vllm_fa2_unpacked("gpu", (8, 0), (0, 11), "", False, "auto", out, gqa=False) is False and not out
    mha = dict(LLAMA8B, num_key_value_heads=LLAMA8B["num_attention_heads"])
    arch = arch_from_config(mha)
    s = Settings(tp=1, max_model_len=8192, vllm_version="0.11.0")
    acc = find("a100_80gb")
    facts = facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc))
    assert not facts.fa2_unpacked and llama("a100_80gb", "0.11.0").fa2_unpacked


def test_sliding_window_layers_keep_the_decode_kernel_in_a_mixed_step() -> None:
    """flash_api.cpp L593: no swap with window_size_left >= 0, so a sliding layer's decode queries run alike in a
    decode-only and a mixed step; only the full-attention layers' decode FLOPs take the 64-row tiles."""
    on = llama("a100_80gb", "0.11.0")
    slid = replace(on, window=128, sliding_flops_per_pair=on.attn_flops_per_pair / 2,
                   sliding_kv_bytes=on.kv_bytes_per_token / 2)
    dec_seqs, ctx = 32, 32 * 2000.0
    pf = step_work(slid, 0, 0.0, 512, 512 * 256.0).attn_flop
    extra = step_work(slid, dec_seqs, ctx, 512, 512 * 256.0).attn_flop - pf
    share = slid.attn_flops_per_s * facts_kernels(slid).ap_comp
    full = (slid.attn_flops_per_pair * ctx - slid.sliding_flops_per_pair * (ctx - dec_seqs * 128)
            - slid.sliding_flops_per_pair * dec_seqs * 128)
    sliding = slid.sliding_flops_per_pair * dec_seqs * 128
    assert extra == pytest.approx((FA2_TILE_ROWS * full + sliding) / share)


# vLLM 0.11's Triton attention: a decode-only step of few sequences runs the 3D kernel, unpruned for sliding windows
@pytest.mark.parametrize(("backend", "release", "heads", "kv", "want"), [
    (TRITON, (0, 11), 64, 8, 11),  # gpt-oss TP1: (11 // 2 + 11) x 8 = 128, 12 sequences make 144
    (TRITON, (0, 11), 32, 4, 21),  # TP2: (21 // 2 + 21) x 4 = 124, 22 make 132
    (TRITON, (0, 12), 64, 8, 0), (TRITON, None, 64, 8, 0),  # releases whose kernels are not read
    ("", (0, 11), 64, 8, 0)])  # FlashAttention 3 / FlashInfer / FA2: their own kernels
def test_the_3d_kernel_takes_the_decode_steps_its_grid_fits(backend: str, release: tuple[int, int] | None, heads: int,
                                                           kv: int, want: int) -> None:
    out: list[Finding] = []
    assert triton_3d_seqs(backend, release, heads, kv, out) == want
    assert bool(out) == bool(want)
    if want:
        assert out[0].code == "attention-backend" and "#31984" in out[0].message and f"up to {want}" in out[0].message


def test_the_facts_carry_the_3d_limit_for_vllm_0_11_on_an_a100_only() -> None:
    assert gpt_oss("a100_80gb", "0.11.0").triton_3d_seqs == 11
    assert gpt_oss("a100_80gb", None).triton_3d_seqs == 0  # FlashAttention's, said as assumed
    assert gpt_oss("h100", "0.11.0").triton_3d_seqs == 0  # FlashAttention 3 takes sinks on SM90
    assert gpt_oss("a100_80gb", "0.11.0", engine="sglang").triton_3d_seqs == 0


def test_a_decode_only_step_on_the_3d_kernel_reads_the_sliding_layers_whole_context() -> None:
    on = gpt_oss("a100_80gb", "0.11.0")
    off = replace(on, triton_3d_seqs=0)
    assert on.window == 128 and on.sliding_kv_bytes > 0
    for seqs in (3, 11):
        ctx = seqs * 32000.0
        got, capped = step_work(on, seqs, ctx, 0, 0.0), step_work(off, seqs, ctx, 0, 0.0)
        assert got.attn_mem > capped.attn_mem > 0  # memory-bound decode attention
        assert got.attn_mem / capped.attn_mem == pytest.approx(
            on.kv_bytes_per_token * ctx / (on.kv_bytes_per_token * ctx - (ctx - seqs * 128) * on.sliding_kv_bytes))
    # 12 sequences run the 2D kernel (pruned since PR #24390), and so does any step with a prefill chunk
    assert step_work(on, 12, 12 * 32000.0, 0, 0.0).attn_mem == step_work(off, 12, 12 * 32000.0, 0, 0.0).attn_mem
    mixed, mixed_off = step_work(on, 3, 96000.0, 512, 512 * 256.0), step_work(off, 3, 96000.0, 512, 512 * 256.0)
    assert (mixed.attn_mem, mixed.attn_flop) == (mixed_off.attn_mem, mixed_off.attn_flop)
