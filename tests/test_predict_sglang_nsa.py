"""SGLang's defaults for a DeepSeek Sparse Attention checkpoint (its NSA path), per release (predict/_sglang_nsa.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from launchcard.hardware import find
from launchcard.predict import sglang_plan, sglang_serving_facts
from launchcard.predict._sglang import SglangPlan

CONFIGS = Path(__file__).parent / "fixtures" / "predict_heldout_configs"
V32 = CONFIGS / "deepseek-ai--DeepSeek-V3.2_config.json"
R1 = CONFIGS / "deepseek-ai--DeepSeek-R1_config.json"
SERVE = ["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3.2"]


def plan(*args: str, version: str = "0.5.6.post2", arch: str = "DeepseekV32ForCausalLM",
         gpu: str = "h200") -> SglangPlan:
    return sglang_plan([*SERVE, *args], gpu_memory_gib=find(gpu).memory_gib, version=version, architecture=arch)


def test_nsa_turns_dp_attention_on_for_more_than_one_dp_rank_in_056_and_057() -> None:
    # _handle_model_specific_adjustments sets enable_dp_attention for an NSA model (0.5.6.post2 server_args.py
    # L1002-1004, after the memory rules), _handle_data_parallelism turns it off again at one DP rank
    written = plan("--tp-size", "8", "--dp-size", "8", "--enable-dp-attention")
    forced = plan("--tp-size", "8", "--dp-size", "8")
    assert forced.dp_attention and forced.replicas == 8 and forced.settings.tp == 1
    assert forced.chunked_prefill_size == written.chunked_prefill_size == 8192 // 8
    # the static share is the command's own: computed before the model rules, without DP attention's reserve
    assert forced.mem_fraction_static > written.mem_fraction_static
    assert any(f.code == "sglang-nsa" for f in forced.findings)
    assert not plan("--tp-size", "8").dp_attention
    assert plan("--tp-size", "8", "--dp-size", "8", version="0.5.7").dp_attention
    # from 0.5.8 only the prefill context-parallel mode sets it: --dp-size alone is 8 replicas
    later = plan("--tp-size", "8", "--dp-size", "8", version="0.5.9")
    assert not later.dp_attention and later.replicas == 8 and later.settings.tp == 8
    # a dense-MLA DeepSeek (R1: DeepseekV3ForCausalLM without index_topk) is not touched
    assert not plan("--tp-size", "8", "--dp-size", "8", arch="DeepseekV3ForCausalLM").dp_attention


def test_up_to_055_nsa_runs_dp_attention_over_all_tp_ranks() -> None:
    # 0.5.3.post3-0.5.5.post3 also set dp_size = tp_size (0.5.5.post3 server_args.py L1106-1109)
    old = plan("--tp-size", "8", version="0.5.5.post3")
    assert old.dp_attention and old.replicas == 8 and old.settings.tp == 1 and old.chunked_prefill_size == 1024
    assert not plan("--tp-size", "8", version="0.5.6.post2").dp_attention


def test_nsa_kv_cache_defaults_to_fp8_on_blackwell_and_bf16_on_hopper_with_sglangs_own_cell() -> None:
    b200 = sglang_serving_facts(V32, plan("--tp-size", "8", gpu="b200"), gpu="b200")
    h200 = sglang_serving_facts(V32, plan("--tp-size", "8"), gpu="h200")
    assert any(f.code == "sglang-nsa" and "fp8_e4m3" in f.message for f in b200.findings)
    assert any(f.code == "sglang-nsa" and "bfloat16" in f.message for f in h200.findings)
    assert b200.dsa is not None and h200.dsa is not None
    # the pool: (512 + 64) FP8 latent elements + the indexer's 128 + 4 bytes, 61 layers (model_runner.py 0.5.6.post2
    # L1380-1410), not FlashMLA's 656-byte record; bf16 on Hopper: 2 x 576 + 132
    fp8 = sglang_serving_facts(V32, plan("--tp-size", "8", "--kv-cache-dtype", "fp8_e4m3"), gpu="h200")
    ratio = fp8.kv_capacity_tokens / h200.kv_capacity_tokens
    assert ratio == pytest.approx((2 * 576 + 132) / (576 + 132), rel=1e-3)
    # R1 is not an NSA model: its "auto" stays the model dtype, no NSA finding
    r1 = sglang_serving_facts(R1, plan("--tp-size", "8", arch="DeepseekV3ForCausalLM", gpu="b200"), gpu="b200")
    assert not any(f.code == "sglang-nsa" for f in r1.findings)


def test_which_checkpoints_take_the_nsa_path() -> None:
    from launchcard.predict._sglang_nsa import nsa_model

    # is_deepseek_nsa: the architecture list and an index_topk (GLM-5's class from 0.5.9, the first release serving it)
    assert nsa_model(("DeepseekV32ForCausalLM",), 2048) and nsa_model(("GlmMoeDsaForCausalLM",), 2048)
    assert not nsa_model(("DeepseekV3ForCausalLM",), 0)  # R1 / V3: dense MLA
    assert not nsa_model(("Qwen3MoeForCausalLM",), 2048) and not nsa_model(None, 2048)


def test_sglang_picks_its_dsa_kernels_by_release_gpu_and_cache() -> None:
    from launchcard.predict._sglang_nsa import nsa_backends

    none: tuple[str | None, str | None] = (None, None)
    # FP8: FlashMLA (auto prefill, kv decode) through 0.5.9, TensorRT-LLM's on Blackwell from 0.5.10
    assert nsa_backends((0, 5, 6, 2), "10.0", "fp8_e4m3", none) == ("flashmla_auto", "flashmla_kv")
    assert nsa_backends((0, 5, 10, 1), "10.0", "fp8_e4m3", none) == ("trtllm", "trtllm")
    assert nsa_backends((0, 5, 10, 1), "9.0", "fp8_e4m3", none) == ("flashmla_auto", "flashmla_kv")
    # bf16: FlashMLA sparse + FA3 on Hopper; on Blackwell FlashMLA sparse for both through 0.5.8, TRT decode from 0.5.9
    assert nsa_backends(None, "9.0", "bfloat16", none) == ("flashmla_sparse", "fa3")
    assert nsa_backends((0, 5, 8, 0), "10.0", "bfloat16", none) == ("flashmla_sparse", "flashmla_sparse")
    assert nsa_backends((0, 5, 9, 0), "10.0", "bfloat16", none) == ("flashmla_sparse", "trtllm")
    assert nsa_backends((0, 5, 9, 0), "10.0", "bfloat16", (None, "fa3")) == ("flashmla_sparse", "fa3")
    # through 0.5.8 the FP8 and capability-10 picks overwrite the command's backends (no user_set_* test before
    # 0.5.9); Hopper's bf16 defaults give way to them
    assert nsa_backends((0, 5, 8, 0), "9.0", "fp8_e4m3", (None, "fa3")) == ("flashmla_auto", "flashmla_kv")
    assert nsa_backends(None, "10.0", "bfloat16", ("flashmla_kv", None)) == ("flashmla_sparse", "flashmla_sparse")
    assert nsa_backends((0, 5, 8, 0), "9.0", "bfloat16", (None, "flashmla_kv")) == ("flashmla_sparse", "flashmla_kv")
    assert nsa_backends((0, 5, 9, 0), "9.0", "fp8_e4m3", (None, "fa3")) == ("flashmla_auto", "fa3")
    assert nsa_backends(None, "gfx942", "bfloat16", none) == none  # not CUDA: not read
    # on a B200 the 0.5.6.post2 default (FP8 cache) decodes with FlashMLA: 16 heads padded to 64, all 2048 slots
    old = sglang_serving_facts(V32, plan("--tp-size", "8", gpu="b200"), gpu="b200")
    new = sglang_serving_facts(V32, plan("--tp-size", "8", version="0.5.10.post1", gpu="b200"), gpu="b200")
    assert old.dsa is not None and old.dsa.dec_full and old.dsa.dec_pair_flops == 2 * 64 * (576 + 512) * 61
    assert new.dsa is not None and not new.dsa.dec_full
    assert any(f.code == "dsa-kernels" and "trtllm" in f.message for f in new.findings)


def test_dp_attention_on_deepseeks_model_file_keeps_only_attention_per_rank() -> None:
    from dataclasses import replace

    from launchcard.memory import load_arch
    from launchcard.memory._weights import components

    # deepseek_v2.py 0.5.6.post2: embedding whole on every rank (L2984-2988), LM head / dense MLPs / shared experts
    # over the whole TP group (L3237-3243, L2754-2767, L688-705), attention whole per DP-attention rank
    dpa = plan("--tp-size", "8", "--dp-size", "8", "--enable-dp-attention")
    assert dpa.settings.tp == 1 and dpa.settings.dense_tp == 8
    assert any(f.code == "sglang-dp-attention" and "deepseek_v2.py" in f.message for f in dpa.findings)
    arch = load_arch(V32)
    split, whole = components(arch, dpa.settings), components(arch, replace(dpa.settings, dense_tp=None))
    assert split.lm_head == pytest.approx(whole.lm_head / 8) and split.mlp == pytest.approx(whole.mlp / 8)
    assert split.shared_experts == pytest.approx(whole.shared_experts / 8)
    assert (split.embed, split.attn, split.experts) == (whole.embed, whole.attn, whole.experts)
    # so the pool per rank is larger by what the planner no longer counts twice
    facts = sglang_serving_facts(V32, dpa, gpu="h200")
    replicated = sglang_serving_facts(V32, replace(dpa, settings=replace(dpa.settings, dense_tp=None)), gpu="h200")
    assert facts.kv_capacity_tokens > 1.3 * replicated.kv_capacity_tokens
    # another model file is not read for this: gpt-oss keeps the replicated plan
    gpt = plan("--tp-size", "8", "--dp-size", "8", "--enable-dp-attention", arch="GptOssForCausalLM")
    assert gpt.settings.dense_tp is None


def test_flashmla_kv_on_a_bf16_cache_requantizes_the_whole_pool_every_step() -> None:
    from launchcard.predict._dsa import dsa_attention

    # nsa_backend.py 0.5.6.post2 L1254-1256: quantize_k_cache(get_key_buffer(layer)) before flash_mla_with_kvcache
    args = ("--tp-size", "8", "--dp-size", "8", "--enable-dp-attention", "--nsa-prefill-backend", "flashmla_sparse",
            "--nsa-decode-backend", "flashmla_kv")
    kv = sglang_serving_facts(V32, plan(*args), gpu="h200")
    assert kv.dsa is not None and kv.dsa.pf_requant == 0.0
    # the latent read as bf16 (2 x 576) and FlashMLA's 656-byte FP8 record written, every slot, 61 layers
    assert kv.dsa.dec_requant == pytest.approx(kv.kv_capacity_tokens * (2 * 576 + 656) * 61)
    assert any(f.code == "dsa-kernels" and "whole KV buffer" in f.message for f in kv.findings)
    # a decode step's attention memory carries it at the bandwidth given, whatever the batch
    fa3 = sglang_serving_facts(V32, plan(*args[:-1], "fa3"), gpu="h200")
    assert fa3.dsa is not None and fa3.dsa.dec_requant == 0.0
    bw = 4.8e12
    step = dsa_attention(kv.dsa, 1304.0 * 61, 1.0, bw, 1e15, 1e15, 1e15, 1.0, 1)(4, 4000, 0, 0, 0)
    plain = dsa_attention(kv.dsa._replace(dec_requant=0.0), 1304.0 * 61, 1.0, bw, 1e15, 1e15, 1e15, 1.0, 1)(4, 4000,
                                                                                                          0, 0, 0)
    assert step[0] - plain[0] == pytest.approx(kv.dsa.dec_requant / bw)
    # an FP8 cache stores the record itself; the variable turns it off through 0.5.8, not in 0.5.9 (L1729-1731)
    fp8 = sglang_serving_facts(V32, plan(*args, "--kv-cache-dtype", "fp8_e4m3"), gpu="h200")
    assert fp8.dsa is not None and fp8.dsa.dec_requant == 0.0
    off = ["SGLANG_NSA_FLASHMLA_BACKEND_DECODE_COMPUTE_FP8=0"]
    env_off = sglang_serving_facts(V32, sglang_plan([*off, *SERVE, *args], gpu_memory_gib=find("h200").memory_gib,
                                                    version="0.5.6.post2", architecture="DeepseekV32ForCausalLM"),
                                   gpu="h200")
    assert env_off.dsa is not None and env_off.dsa.dec_requant == 0.0
    later = sglang_serving_facts(V32, sglang_plan([*off, *SERVE, *args], gpu_memory_gib=find("h200").memory_gib,
                                                  version="0.5.9", architecture="DeepseekV32ForCausalLM"), gpu="h200")
    assert later.dsa is not None and later.dsa.dec_requant > 0.0


def test_dp_attention_parts_the_command_keeps_off_the_whole_tp_group() -> None:
    from launchcard.memory import load_arch
    from launchcard.memory._weights import components

    arch = load_arch(V32)
    base = ("--tp-size", "8", "--dp-size", "8", "--enable-dp-attention")
    split = components(arch, plan(*base).settings)
    # --moe-dense-tp-size 1: the dense MLPs whole on every rank (enable_moe_dense_fully_dp, deepseek_v2.py L2755)
    fully = plan(*base, "--moe-dense-tp-size", "1")
    assert fully.settings.dense_local == ("mlp",)
    assert components(arch, fully.settings).mlp == pytest.approx(8 * split.mlp)
    # an all-to-all MoE backend: the shared experts whole (L700-703), by the release's list
    deepep = components(arch, plan(*base, "--moe-a2a-backend", "deepep").settings)
    assert deepep.shared_experts == pytest.approx(8 * split.shared_experts) and deepep.mlp == split.mlp
    assert "shared_experts" not in plan(*base, "--moe-a2a-backend", "mori").settings.dense_local  # 0.5.9's list
    assert "shared_experts" in plan(*base, "--moe-a2a-backend", "mori", version="0.5.9").settings.dense_local
    # --enable-dp-lm-head: the LM head over the attention's group (L3242): one GPU here, whole
    assert components(arch, plan(*base, "--enable-dp-lm-head").settings).lm_head == pytest.approx(8 * split.lm_head)
    # 0.5.9: the embedding over the attention's group (L2531-2535), whole at one attention GPU, halved at two
    four = plan("--tp-size", "8", "--dp-size", "4", "--enable-dp-attention", version="0.5.9")
    assert four.settings.tp == 2 and "embed" in four.settings.dense_local
    assert components(arch, four.settings).embed == pytest.approx(split.embed / 2)
    assert "embed" not in plan("--tp-size", "8", "--dp-size", "4", "--enable-dp-attention",
                               version="0.5.7").settings.dense_local


def test_parts_over_the_whole_tp_group_cost_a_rank_their_flops_of_every_ranks_tokens() -> None:
    """The bytes a rank reads are its split; the FLOPs of a part split over the whole TP group are every DP rank's
    tokens (gathered) through it: a rank's own tokens through the part over the attention's TP size."""
    from dataclasses import replace

    from launchcard.memory import load_arch, weight_split

    arch = load_arch(V32)
    s = plan("--tp-size", "8", "--dp-size", "8", "--enable-dp-attention").settings
    split, replicated = weight_split(arch, s), weight_split(arch, replace(s, dense_tp=None))
    assert split.dense_bytes < 0.9 * replicated.dense_bytes
    assert split.dense_params == pytest.approx(replicated.dense_params)
    assert split.lm_head_params == pytest.approx(replicated.lm_head_params)
    # a part whole on every rank runs its own tokens only: bytes and FLOPs both whole
    whole = weight_split(arch, replace(s, dense_local=("mlp", "shared_experts", "lm_head")))
    assert whole.dense_params == pytest.approx(replicated.dense_params)
    assert whole.dense_bytes == pytest.approx(replicated.dense_bytes)


@pytest.mark.parametrize(("value", "on"), [("1", True), ("TRUE", True), ("0", False), ("yes", False), ("on", False)])
def test_the_fp8_compute_switch_is_read_as_sglangs_get_bool_env_var(value: str, on: bool) -> None:
    """utils/common.py 0.5.6.post2 L264-276: only "true"/"1" are true; anything else is false (with a warning)."""
    argv = [f"SGLANG_NSA_FLASHMLA_BACKEND_DECODE_COMPUTE_FP8={value}", *SERVE, "--tp-size", "8"]
    assert sglang_plan(argv, gpu_memory_gib=find("h200").memory_gib, version="0.5.6.post2",
                       architecture="DeepseekV32ForCausalLM").nsa_fp8_compute is on


@pytest.mark.parametrize("value", ["2", "8", "0"])
def test_a_moe_dense_tp_size_other_than_1_is_sglangs_assert_bad_input(value: str) -> None:
    from launchcard.errors import InputError

    with pytest.raises(InputError, match="only support 1 and None") as err:
        plan("--tp-size", "8", "--moe-dense-tp-size", value)
    assert err.value.exit_code == 2


def test_a_release_not_given_is_named_where_its_rule_is_taken() -> None:
    """No release given: 0.5.6.post2's rule forces DP attention (predict's other finding names SGLang 0.5.23, the
    newest captured, from 0.5.8 on which it is not forced), so the finding says which release's rule it took."""
    forced = sglang_plan([*SERVE, "--tp-size", "4", "--dp-size", "2"], gpu_memory_gib=find("mi325x").memory_gib,
                         version=None, architecture="DeepseekV32ForCausalLM")
    assert forced.dp_attention
    [line] = [f.message for f in forced.findings if f.code == "sglang-nsa"]
    assert "no SGLang release given" in line and "0.5.6.post2" in line and "--engine-version" in line, line


def test_dsa_decode_compiles_deepgemms_schedule_kernel_per_batch_rounded_to_32() -> None:
    from launchcard.predict._dsa import jit_warm
    from launchcard.predict._sglang_nsa import JIT_COMPILE_S, nsa_jit

    facts = sglang_serving_facts(V32, plan("--tp-size", "8"), gpu="h200")
    assert facts.dsa is not None and facts.dsa.jit_s == JIT_COMPILE_S
    assert any(f.code == "dsa-jit" and "aligned_batch_size" in f.message for f in facts.findings)
    # the capture compiled every rounded size up to the graphs' largest step (512 on an H200 at TP 8); a verify step's
    # tokens are batch x draft tokens; without graphs only the warm-up's batch of one
    assert jit_warm(facts.graph_tokens, facts.cuda_graphs) == 512
    assert jit_warm(500, True) == 512 and jit_warm(160 * 4, True) == 640 and jit_warm(512, False) == 32
    bare = facts.dsa._replace(jit_s=0.0)
    assert nsa_jit(bare, "0.5.3", "10.0", []).jit_s == JIT_COMPILE_S
    # releases not read, and GPUs without DeepGEMM's kernels, are left as they are
    assert nsa_jit(bare, "0.5.10", "9.0", []) == bare
    assert nsa_jit(bare, "0.5.6.post2", "", []) == bare


def test_each_new_rounded_eager_decode_batch_waits_for_one_compile_once() -> None:
    from dataclasses import replace

    from launchcard.predict import coefficients, simulate

    f = sglang_serving_facts(V32, plan("--tp-size", "8"), gpu="h200")
    assert f.dsa is not None
    c = coefficients(f.hardware.kind, f.engine)
    off = replace(f, dsa=f.dsa._replace(jit_s=0.0))

    def makespan(facts: object, clients: int) -> float:
        return simulate(facts, c, isl=100, osl=40, concurrency=clients, rate=None,  # type: ignore[arg-type]
                        requests=clients).makespan

    # 600 alike requests decode together at 600 (rounded: 608, above the graphs' 512) until they all end: one compile
    assert makespan(f, 600) - makespan(off, 600) == pytest.approx(f.dsa.jit_s)
    # within the CUDA graphs no decode step compiles
    assert makespan(f, 400) == makespan(off, 400)


def test_under_dp_attention_each_rank_compiles_for_its_own_batch_against_its_own_graphs() -> None:
    """The stall counted the DP group's decodes rounded to 32 against the group's graphs (8 x 512): a group draining
    from 4,320 to 4,097 decodes met 7 rounded sizes, where each rank (540 -> 513 decodes) meets one, 544 (review39)."""
    from dataclasses import replace

    from launchcard.predict import coefficients, lockstep_group, simulate

    f = sglang_serving_facts(V32, plan("--tp-size", "8", "--dp-size", "8", "--enable-dp-attention"), gpu="h200")
    assert f.dsa is not None and f.lockstep == 8 and f.graph_tokens == 512
    c = coefficients(f.hardware.kind, f.engine)
    off = replace(f, dsa=f.dsa._replace(jit_s=0.0))

    def makespan(facts: object) -> float:
        group, _ = lockstep_group(facts)  # type: ignore[arg-type]
        return simulate(group, c, isl=64, osl=40, concurrency=8 * 540, rate=None, requests=8 * 540,
                        range_ratio=0.5).makespan

    assert makespan(f) - makespan(off) == pytest.approx(f.dsa.jit_s)
