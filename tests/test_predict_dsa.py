"""DeepSeek Sparse Attention (DeepSeek-V3.2): the indexer and top-k sparse MLA in the memory plan and step work."""

from __future__ import annotations

from pathlib import Path

import pytest

from launchcard.memory import Settings, load_arch, plan_memory
from launchcard.predict import serving_facts, step_work
from launchcard.predict._facts import ServingFacts

CONFIGS = Path(__file__).parent / "fixtures" / "predict_heldout_configs"
V32 = CONFIGS / "deepseek-ai--DeepSeek-V3.2_config.json"
R1 = CONFIGS / "deepseek-ai--DeepSeek-R1_config.json"
V4 = Path(__file__).parents[2] / "shared" / "corpus" / "hf" / "deepseek-ai" / "DeepSeek-V4-Flash" / "config.json"


def facts(config: Path, version: str = "0.13.0", engine: str = "vllm", gpu: str = "h200", tp: int = 8,
          **kw: object) -> ServingFacts:
    return serving_facts(config, Settings(tp=tp, vllm_version=version, **kw).validate(),  # type: ignore[arg-type]
                         gpu=gpu, engine=engine)


def attention(f: ServingFacts, *args: float) -> float:
    """Attention seconds of one step at 100% of the datasheet (memory part + compute part)."""
    w = step_work(f, *args)  # type: ignore[arg-type]
    return w.attn_mem + w.attn_flop


def test_the_indexer_fields_are_read_for_a_v32_style_model_only() -> None:
    a = load_arch(V32)
    assert (a.index_topk, a.index_n_heads, a.index_head_dim) == (2048, 64, 128)
    assert load_arch(R1).index_topk == 0
    if V4.exists():  # DeepSeek-V4 has index_topk but compressed attention, no MLA latent: not this mechanism
        assert load_arch(V4).index_topk == 0


def test_the_memory_plan_holds_the_indexer_cache_and_its_replicated_weights() -> None:
    s = Settings(tp=8, vllm_version="0.13.0").validate()
    v32, r1 = plan_memory(load_arch(V32), s, gpu="h200"), plan_memory(load_arch(R1), s, gpu="h200")
    # 132 bytes (128 FP8 keys + a float32 scale) per token in each of the 61 layers, on top of the bf16 latent
    assert v32.kv_bytes_per_token_per_gpu - r1.kv_bytes_per_token_per_gpu == 61 * 132
    # wq_b 1536 x 64*128, wk 7168 x 128, weights_proj 7168 x 64, whole on every rank (FP8 checkpoint: 1 byte)
    extra = 61 * (1536 * 64 * 128 + 7168 * 128 + 7168 * 64)
    assert (v32.weights_gib_per_gpu - r1.weights_gib_per_gpu) * 2**30 == pytest.approx(extra, rel=0.02)
    fp8 = plan_memory(load_arch(V32), Settings(tp=8, vllm_version="0.13.0", kv_cache_dtype="fp8").validate(),
                      gpu="h200")
    assert fp8.kv_bytes_per_token_per_gpu == 61 * (656 + 132)  # FlashMLA's FP8-with-scale record + the indexer's


def test_long_context_decode_reads_topk_latents_and_the_indexer_keys_not_the_whole_latent_cache() -> None:
    v32, r1 = facts(V32), facts(R1)
    seqs, ctx = 64, 64 * 32000
    assert attention(v32, seqs, ctx, 0, 0.0) < 0.5 * attention(r1, seqs, ctx, 0, 0.0)
    # decode attention grows with the context only through the indexer (132 + 8 bytes and 16,384 FP8 FLOPs per token
    # per layer), far slower than dense MLA's 1,152-byte latent read
    grow_v32 = attention(v32, seqs, 2 * ctx, 0, 0.0) - attention(v32, seqs, ctx, 0, 0.0)
    grow_r1 = attention(r1, seqs, 2 * ctx, 0, 0.0) - attention(r1, seqs, ctx, 0, 0.0)
    assert 0 < grow_v32 < 0.2 * grow_r1


def test_vllm_before_024_computes_the_whole_topk_with_padded_heads_at_short_context() -> None:
    # 16 heads per rank padded to FlashMLA's 64-head block, all 2048 index slots computed: a short context costs
    # more than dense MLA; from 0.24 vLLM passes topk_length (only valid keys)
    old, new, r1 = facts(V32, "0.13.0"), facts(V32, "0.24.0"), facts(R1, "0.13.0")
    seqs, ctx = 256, 256 * 300
    assert attention(old, seqs, ctx, 0, 0.0) > 3 * attention(r1, seqs, ctx, 0, 0.0)
    assert attention(new, seqs, ctx, 0, 0.0) < attention(old, seqs, ctx, 0, 0.0) / 3
    # prefill of 2,000-token prompts: every query computes 2048 keys x 64 heads, more than dense MLA's causal pairs
    n = 2000.0
    pf = (0, 0.0, int(4 * n), 4 * n * (n + 1) / 2, 0.0)
    assert attention(old, *pf) > 2 * attention(r1, *pf)


def test_long_prompts_cost_the_indexer_over_every_pair_and_topk_keys_per_query() -> None:
    v32, r1 = facts(V32), facts(R1)
    assert v32.dsa is not None and v32.dsa.index_pair_flops == 2 * 64 * 128 * 61
    n = 32000.0
    pf = (0, 0.0, 8192, 8192 * (n - 4096), n - 8192)  # the last chunk of a 32K prompt
    a, b = attention(v32, *pf), attention(r1, *pf)
    index_s = v32.dsa.index_pair_flops * pf[3] / v32.hardware.flops["fp8"]
    sparse_s = v32.dsa.pf_pair_flops * 8192 * 2048 / v32.hardware.flops["bf16"]
    assert a > index_s + sparse_s  # the FP8 indexer over all 230M pairs, then 2048 keys per query (at <100%)
    # at TP 8 under vLLM 0.13 (16 heads padded to 64, all 2048 slots) that is more than dense MLA's 28K keys per
    # query of 16 heads: DSA saves decode reads, not prefill work
    assert a > b
    # with all 128 heads on a rank (attention data-parallel: no padding) the top-k pays off at 28K keys per query
    wide = facts(V32, tp=1, dp=8, expert_parallel=True)
    wide_r1 = facts(R1, tp=1, dp=8, expert_parallel=True)
    assert attention(wide, *pf) < attention(wide_r1, *pf)


def test_sglang_prefills_prompts_within_topk_densely_and_decodes_only_the_selected_tokens() -> None:
    from launchcard.predict import sglang_plan, sglang_serving_facts

    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3.2", "--tp-size", "8"]
    s32 = sglang_serving_facts(V32, sglang_plan(argv, gpu_memory_gib=141.0), gpu="h200")
    r1 = sglang_serving_facts(R1, sglang_plan(argv, gpu_memory_gib=141.0), gpu="h200")
    n = 1000.0
    short = (0, 0.0, int(4 * n), 4 * n * (n + 1) / 2, 0.0)
    assert attention(s32, *short) == pytest.approx(attention(r1, *short), rel=1e-9)  # MHA_ONE_SHOT, no logits
    # decode: FA3 over min(context, 2048) selected latents, no head padding: at a short context as dense MLA's
    # read plus the indexer's
    seqs, ctx = 64, 64 * 1000
    assert attention(r1, seqs, ctx, 0, 0.0) < attention(s32, seqs, ctx, 0, 0.0) < 1.5 * attention(r1, seqs, ctx, 0, 0.0)


def test_at_a_context_within_topk_the_sparse_read_is_the_dense_latent_read_plus_the_indexer() -> None:
    from launchcard.predict._dsa import dsa_attention

    v32 = facts(V32, "0.24.0")
    assert v32.dsa is not None
    fn = dsa_attention(v32.dsa, v32.kv_bytes_per_token, 0.0, 1.0, 1e30, 1e30, 1e30, 0.0, 1)
    mem, comp = fn(10, 10 * 1500.0, 0, 0.0, 0.0)
    assert comp == pytest.approx(0.0, abs=1e-12)
    d = v32.dsa
    assert mem == pytest.approx(10 * 1500 * (v32.kv_bytes_per_token + d.index_kv_bytes + d.index_pair_bytes))
    assert v32.kv_bytes_per_token == 61 * 1152  # the latent alone; the indexer's cache is read apart


def test_tensorrt_llm_dsa_is_an_assumption_on_blackwell() -> None:
    f = facts(V32, engine="trtllm", gpu="b200")
    assert any(x.severity == "assumed" and x.code == "dsa-kernels" for x in f.findings)
    assert any(x.code == "dsa" for x in facts(V32).findings)


def test_tensorrt_llm_on_hopper_runs_the_sparse_prefill_kernel_with_padded_heads_for_every_token() -> None:
    # below SM100 TensorRT-LLM sends context and generation through FlashMLA's sparse prefill kernel: 16 heads
    # per rank padded to 64, all 2048 slots, like vLLM before 0.24 with a bf16 cache (not the unpadded assumption)
    trt, vllm, blackwell = facts(V32, engine="trtllm"), facts(V32, "0.13.0"), facts(V32, engine="trtllm", gpu="b200")
    d, v, b = trt.dsa, vllm.dsa, blackwell.dsa
    assert d is not None and v is not None and b is not None
    assert d.dec_full and d.pf_full and not d.dense_prefill and not (b.dec_full or b.pf_full)
    assert d.dec_pair_flops == d.pf_pair_flops == 4 * b.dec_pair_flops == v.pf_pair_flops
    said = [x for x in trt.findings if x.code == "dsa-kernels"]
    assert len(said) == 1 and said[0].severity == "info" and "padded to 64" in said[0].message
    seqs, ctx = 256, 256 * 300  # short contexts: every slot and every padded head cost more than dense MLA
    assert attention(trt, seqs, ctx, 0, 0.0) > 3 * attention(facts(R1, engine="trtllm"), seqs, ctx, 0, 0.0)


def test_a_dsa_layer_counts_twice_in_the_fixed_per_layer_cost() -> None:
    # the indexer's own kernels: measured DSA modules' floor is about twice MLA's (aiconfigurator vLLM 0.24.0 H200)
    v32, r1 = step_work(facts(V32), 8, 8000.0, 0, 0.0), step_work(facts(R1), 8, 8000.0, 0, 0.0)
    assert v32.layers - r1.layers == 61


def test_an_sglang_command_naming_its_dsa_backends_is_timed_with_them() -> None:
    from launchcard.predict import sglang_plan, sglang_serving_facts

    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3.2", "--tp-size", "8",
            "--kv-cache-dtype", "fp8_e4m3"]

    def at(*more: str, version: str | None = "0.5.9") -> ServingFacts:
        plan = sglang_plan([*argv, *more], gpu_memory_gib=141.0, version=version)
        return sglang_serving_facts(V32, plan, gpu="h200")

    default, fa3 = at(), at("--nsa-decode-backend", "fa3")
    seqs, ctx = 64, 64 * 500
    # FP8 cache on Hopper: FlashMLA decode (16 heads padded to 64, all 2048 slots); FA3 the 500 tokens of 16 heads
    assert attention(fa3, seqs, ctx, 0, 0.0) < attention(default, seqs, ctx, 0, 0.0) / 4
    # through 0.5.8 (and the unstated release, 0.5.6.post2's rules) an FP8 cache sets FlashMLA over the command's
    assert attention(at("--nsa-decode-backend", "fa3", version=None), seqs, ctx, 0, 0.0) == pytest.approx(
        attention(default, seqs, ctx, 0, 0.0), rel=1e-9)
    odd = at("--nsa-prefill-backend", "tilelang")
    assert any(f.severity == "assumed" and f.code == "dsa-kernels" and "tilelang" in f.message for f in odd.findings)


def test_the_sparse_kernels_run_at_their_measured_shares() -> None:
    from launchcard.predict._kernels import dsa_kernel_eff

    # fitted by bench/predict_kernels.py on the wheel's kernel-level FlashMLA sparse / DeepGEMM MQA-logits tables
    h200 = dsa_kernel_eff("h200", "gpu", "vllm")
    assert h200 is not None and 0.5 < h200[0] < 0.7 and 0.3 < h200[1] < 0.5
    assert dsa_kernel_eff("a100_80gb", "gpu", "vllm") is not None  # the median of the GPUs measured
    assert dsa_kernel_eff("cpu", "cpu", "vllm") is None


def test_vllm_before_016_writes_a_max_model_len_logits_row_per_decode_token() -> None:
    # clean_logits=True until 0.16 (vllm/utils/deep_gemm.py 0.13.0; sparse_attn_indexer.py 0.16.0 passes False):
    # DeepGEMM's cleaner fills every column past the context with -inf, so 200 decode tokens at 300 tokens of
    # context write 200 rows of max_model_len float32 in each of the 61 layers
    old, new = facts(V32, "0.13.0"), facts(V32, "0.16.0")
    assert old.dsa is not None and old.dsa.clean_row == old.max_model_len == 163840
    assert new.dsa is not None and new.dsa.clean_row == 0
    assert any(x.code == "dsa-logits" for x in old.findings) and not any(x.code == "dsa-logits" for x in new.findings)
    seqs, ctx = 200, 200 * 300.0
    extra = step_work(old, seqs, ctx, 0, 0.0).attn_mem - step_work(new, seqs, ctx, 0, 0.0).attn_mem
    row_s = seqs * (163840 - 300) * 4 * 61 / old.hardware.bandwidth_bps
    assert extra == pytest.approx(row_s, rel=1e-6)
    # a shorter --max-model-len writes a shorter row
    short = facts(V32, "0.13.0", max_model_len=32768)
    assert short.dsa is not None and short.dsa.clean_row == 32768
    assert attention(new, seqs, ctx, 0, 0.0) < attention(short, seqs, ctx, 0, 0.0) < attention(old, seqs, ctx, 0, 0.0)
    # a prefill chunk of 4 prompts of 2,000 tokens: its [8,000 x 8,000] logits matrix written whole (memory time at
    # 1 byte/s with free FLOPs: the bytes)
    from launchcard.predict._dsa import dsa_attention

    n = 2000.0
    pairs = 4 * n * (n + 1) / 2

    def pf_bytes(f: ServingFacts) -> float:
        assert f.dsa is not None
        return dsa_attention(f.dsa, f.kv_bytes_per_token, 0.0, 1.0, 1e30, 1e30, 1e30, 0.0, 1)(0, 0.0, 8000, pairs,
                                                                                               0.0)[0]

    assert pf_bytes(old) - pf_bytes(new) == pytest.approx((8000 * 8000 - pairs) * 4 * 61, rel=1e-9)
    # ROCm runs its own logits kernel (rocm_fp8_paged_mqa_logits), not DeepGEMM's cleaner
    assert facts(V32, "0.13.0", gpu="mi300x").dsa.clean_row == 0  # type: ignore[union-attr]
    # SGLang never cleans (nsa_indexer.py 0.5.6.post2 clean_logits=False)
    assert facts(V32, engine="sglang").dsa.clean_row == 0  # type: ignore[union-attr]


def test_sglang_verifies_speculative_tokens_through_its_prefill_kernel() -> None:
    # TARGET_VERIFY is an extend mode: nsa_backend.forward_extend runs the prefill implementation (flashmla_sparse on
    # Hopper with a bf16 cache: 16 heads per rank padded to 64, all 2048 slots), not FA3's decode over the context
    from launchcard.predict import sglang_plan, sglang_serving_facts
    from launchcard.predict._dsa import DsaFacts, dsa_attention

    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3.2", "--tp-size", "8",
            "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
            "--speculative-num-draft-tokens", "2"]
    f = sglang_serving_facts(V32, sglang_plan(argv, gpu_memory_gib=141.0, architecture="DeepseekV32ForCausalLM"),
                             gpu="h200")
    d = f.dsa
    assert d is not None and f.spec_tokens == 1
    assert d.verify_full and d.verify_pair_flops == 2 * 64 * (576 + 512) * 61
    seqs, ctx = 48, 48 * 300.0

    def flops(dd: DsaFacts) -> float:  # compute seconds at 1 FLOP/s, free bytes and indexer
        return dsa_attention(dd, 0.0, 0.0, 1e30, 1.0, 1.0, 1e30, 0.0, 2)(seqs, ctx, 0, 0.0, 0.0)[1]

    assert flops(d) == pytest.approx(d.verify_pair_flops * seqs * 2048 * 2)
    assert flops(d._replace(verify_pair_flops=0.0)) == pytest.approx(d.dec_pair_flops * ctx * 2)
    # vLLM's FlashMLA sparse backend takes verify tokens as decode tokens
    v = facts(V32, "0.13.0", speculative_method="mtp", num_speculative_tokens=1)
    assert v.dsa is not None and v.dsa.verify_pair_flops == 0.0


def test_sglang_prefills_a_later_chunk_densely_while_the_whole_sequence_fits_in_topk() -> None:
    # MHA_ONE_SHOT and the indexer's key-only path test seq_lens (prefix included) against index_topk: the second
    # 1,000-token chunk of a 2,000-token prompt still runs dense MLA; of a 3,000-token prompt, the sparse path
    from launchcard.predict import sglang_plan, sglang_serving_facts

    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3.2", "--tp-size", "8"]
    s32 = sglang_serving_facts(V32, sglang_plan(argv, gpu_memory_gib=141.0), gpu="h200")
    r1 = sglang_serving_facts(R1, sglang_plan(argv, gpu_memory_gib=141.0), gpu="h200")

    def chunk(prefix: float) -> tuple[int, float, int, float, float]:
        return 0, 0.0, 1000, 1000 * (prefix + 500.0), prefix

    assert attention(s32, *chunk(1000.0)) == pytest.approx(attention(r1, *chunk(1000.0)), rel=1e-9)
    assert attention(s32, *chunk(2000.0)) != pytest.approx(attention(r1, *chunk(2000.0)), rel=1e-3)
    # a batch of 6 prompts that each found 400 tokens in the prefix cache and compute 1,500 more: every sequence is
    # 1,900 tokens, within topk 2,048, so dense (it was taken as 6 x 400 = 2,400 tokens long, the sparse path)
    b, p, t = 6, 400.0, 1500

    def batch(prefix: float) -> tuple[int, float, int, float, float]:
        return 0, 0.0, b * t, b * t * (prefix + t / 2.0), b * prefix

    assert attention(s32, *batch(p)) == pytest.approx(attention(r1, *batch(p)), rel=1e-9)
    assert attention(s32, *batch(600.0)) != pytest.approx(attention(r1, *batch(600.0)), rel=1e-3)  # 2,100 long


def test_vllm_0110_serves_a_dsa_checkpoint_with_an_fp8_cache_by_default() -> None:
    # config.py 0.11.0 L416-422: "auto" becomes fp8_ds_mla for DeepSeek-V3.2; 0.11.1 on keeps the model dtype
    def kv(version: str, dtype: str = "auto") -> float:
        s = Settings(tp=8, vllm_version=version, kv_cache_dtype=dtype).validate()
        return plan_memory(load_arch(V32), s, gpu="h200").kv_bytes_per_token_per_gpu

    assert kv("0.11.0") == 61 * (656 + 132) == kv("0.13.0", "fp8")
    assert kv("0.11.1") == kv("0.13.0") == kv("0.11.0", "bfloat16") == 61 * (1152 + 132)
    s = Settings(tp=8, vllm_version="0.11.0").validate()
    assert any("fp8_ds_mla" in x.what for x in plan_memory(load_arch(V32), s, gpu="h200").assumed)
    # the FP8 decode kernel (FlashMLA's, heads padded to 64) for 0.11.0's default; R1 keeps its bf16 cache
    f = facts(V32, "0.11.0")
    assert f.dsa is not None and f.dsa.dec_pair_flops == 2 * 64 * (576 + 512) * 61
    assert plan_memory(load_arch(R1), s, gpu="h200").kv_bytes_per_token_per_gpu == 61 * 1152
