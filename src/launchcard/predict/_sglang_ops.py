"""Ops an SGLang extend (prefill) batch launches one by one, counted from the model's structure.

SGLang runs every extend batch without CUDA graphs in 0.5.3-0.5.9 (``enable_piecewise_cuda_graph`` off by default,
server_args.py 0.5.6.post2 L530): each decoder layer's Python forward calls its GPU ops one at a time, and how many
depends on the architecture (the model file), the checkpoint's quantization and the MoE runner.  An op here is one
call from the layer's Python code that launches GPU work (a torch op, an sgl-kernel / FlashInfer / Triton call); a
fused call that launches several kernels from C++ counts once.

Rules (sgl-project/sglang 0.5.6.post2, the PyPI wheel's ``python/sglang/srt``; Qwen3.5 and the DSA indexer read
at 0.5.9 / 0.5.6.post2 as named), per decoder layer:

====================  ===  ================================================================================
part                  ops  what (where)
====================  ===  ================================================================================
frame                 2    input_layernorm, post_attention_layernorm (layers/communicator.py L369-420,
                           L777-784)
TP all-reduce         2    the attention's and the MLP's output where tp > 1 (communicator.py L781;
                           models/qwen3_moe.py L296-303, models/deepseek_v2.py L905-911)
GQA attention         5    qkv_proj, rope, KV write, attention, o_proj (qwen3_moe.py L563-680)
  q/k norm per head   +2   q_norm, k_norm (qwen3_moe.py L500-530; Qwen3*, Qwen3-Next, Qwen3.5 files)
  q/k norm over TP    +6   MiniMax-M2's RMSNormTP on q and on k: variance, its all-reduce, normalize
                           (models/minimax_m2.py L102-125; the all-reduce only where tp > 1: +2 without)
  output gate         +2   sigmoid, multiply (qwen3_5.py 0.5.9 L633-635; Qwen3-Next, Qwen3.5)
MLA attention         11   fused_qkv_a, q_a_layernorm, q_b_proj, kv_a_layernorm, kv_b_proj, rope, q_pe copy,
                           set_mla_kv_buffer, concat_and_cast, attention, o_proj (deepseek_v2.py L1664-1783)
  DSA indexer         +12  wq_b, wk, k_norm, rope, rotate q and k, act_quant q and k, index-K write,
                           weights_proj, fp8_mqa_logits, topk (layers/attention/nsa/nsa_indexer.py L167-262,
                           L433-545, L797-861)
GDN linear attention  16   in_proj_qkv, in_proj_z, in_proj_b, in_proj_a, causal_conv1d, gating, q/k l2norm,
                           six chunked delta-rule kernels, gated norm, out_proj (qwen3_5.py 0.5.9 L268-305;
                           layers/attention/hybrid_linear_attn_backend.py 0.5.9 L915-1063; fla/chunk.py)
dense MLP             3    gate_up_proj, silu_and_mul, down_proj
MoE router            2    gate, topk (qwen3_moe.py L285-306)
  Triton fused MoE    +5   moe_align_block_size, two grouped GEMMs, silu_and_mul, moe_sum_reduce
                           (layers/moe/fused_moe_triton/fused_moe.py L517-660)
  flashinfer_trtllm   +0   routing and experts in one call that replaces topk (so router + runner: 2)
  shared experts      +4   gate_up, act, down, add (deepseek_v2.py L848-903); none where SGLang fuses the
                           shared expert into the routed experts as one more expert (below)
  shared-expert gate  +3   its gate GEMM, sigmoid, multiply (qwen2_moe.py 0.5.9 L206-249; Qwen2-MoE block)
activation quant      +1   per GEMM whose activations are quantized (FP8 block, per-tensor FP8, NVFP4):
                           every block-FP8 linear quantizes first (layers/quantization/fp8_utils.py L300-540),
                           the Triton MoE before each grouped GEMM (fused_moe_triton_kernels.py L625-635),
                           flashinfer_trtllm once
====================  ===  ================================================================================

GEMMs per part: GQA 2 (qkv, o), MLA 4 (fused_qkv_a, q_b, kv_b, o), DSA indexer 2 (wq_b, wk), GDN 5, dense MLP 2,
shared experts 2, MoE 2 (Triton) / 1 (flashinfer_trtllm).  The router gate stays 16-bit.

SGLang takes flashinfer_trtllm for the routed experts on SM100 for FP8 / FP4 checkpoints of DeepSeek-V3-style
models, GLM-5 (from 0.5.9), Qwen3-MoE, Qwen3-VL-MoE, Qwen3-Next and Qwen3.5 (server_args.py 0.5.6.post2
L1080-1113, L1265-1313; 0.5.9 L1198-1202, L1562-1600), the Triton fused MoE otherwise.

SGLang fuses the shared expert into the routed MoE call (num_fused_shared_experts 1, no shared-expert ops) for
DeepseekV3ForCausalLM with 256 routed experts and one shared (deepseek_v2.py 0.5.6.post2 L3272-3312) and for
Glm4MoeForCausalLM with shared experts (glm4_moe.py L1034-1062), on CUDA SM80 or newer, at MoE EP size 1 without
DeepEP, unless the flashinfer_trtllm runner turned the fusion off (server_args.py L1594-1599).  Counted fused only
on CUDA where the plan has no expert parallelism (an --ep-size 1 under DP attention, fused in SGLang, is counted
unfused; ROCm's own rule is not read).

Left out (each one op or two of 20-40 a layer): FlashInfer's all-reduce + norm fusion (DeepSeek on SM100 at
TP > 1, extends up to 2,048 tokens only: communicator.py L770-784); the KV write folded into rope where the KV
cache is BF16 (models/utils.py L31-37); the second kv_b_proj of 0.5.5.post2-0.5.6.post2's MHA extend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from launchcard.memory import Arch

FRAME, TP_REDUCE = 2, 2
GQA, QK_NORM_HEAD, QK_NORM_TP, QK_NORM_TP_ONE, OUT_GATE = 5, 2, 6, 2, 2
MLA, DSA_INDEXER, GDN = 11, 12, 16
DENSE_MLP, ROUTER, TRITON_MOE, SHARED, SHARED_GATE = 3, 2, 5, 4, 3
GEMMS = {"gqa": 2, "mla": 4, "dsa": 2, "gdn": 5, "mlp": 2, "shared": 2, "triton_moe": 2, "trtllm_moe": 1}

# the model files (config architectures) whose attention norms q and k per head, over TP, or gates its output
_QK_HEAD = ("Qwen3",)  # Qwen3, Qwen3-MoE, Qwen3-VL(-MoE), Qwen3-Next, Qwen3.5 (Qwen3_5*)
_QK_TP = ("MiniMaxM2",)
_OUT_GATE = ("Qwen3Next", "Qwen3_5")
# the Qwen2-MoE sparse block: its shared expert scaled by a sigmoid gate
_SHARED_GATE = ("Qwen2Moe", "Qwen3Next", "Qwen3_5Moe")
# SGLang's flashinfer_trtllm MoE runner on SM100 for FP8 / FP4 checkpoints (module docstring)
_TRTLLM_MOE = ("DeepseekV3ForCausalLM", "GlmMoeDsaForCausalLM", "Qwen3MoeForCausalLM",
               "Qwen3VLMoeForConditionalGeneration", "Qwen3NextForCausalLM", "Qwen3_5MoeForConditionalGeneration")
# the model files that fuse their shared expert into the routed MoE (module docstring), with what each asks of it
_FUSED_SHARED = ("DeepseekV3ForCausalLM", "Glm4MoeForCausalLM")
QUANT_ACT = ("fp8", "fp4", "int8")  # compute dtypes whose GEMMs quantize their activations first


def _named(archs: tuple[str, ...], prefixes: tuple[str, ...]) -> bool:
    return any(a.startswith(prefixes) for a in archs)


def _shared_fused(arch: Arch, ep: bool, trtllm: bool, capability: str) -> bool:
    """Whether SGLang runs the shared expert inside the routed MoE call (the module docstring's rule)."""
    name = (arch.architectures or (arch.model_type,))[0]
    major = capability.split(".")[0]
    # ROCm (gfx...) has rules of its own (capability >= gfx942, EP allowed there): not read, counted unfused
    if ep or trtllm or name not in _FUSED_SHARED or not major.isdigit() or int(major) < 8:
        return False
    if name == "DeepseekV3ForCausalLM":  # n_routed_experts 256, n_shared_experts 1
        return arch.num_experts == 256 and arch.shared_expert_intermediate == arch.moe_intermediate_size
    return arch.shared_expert_intermediate > 0


def extend_ops(arch: Arch, tp: int, pp: int, dense_dtype: str, expert_dtype: str, capability: str,
               *, ep: bool) -> int:
    """Ops one eager extend launches on one PP stage (the module's table), from the config (``arch``), the
    tensor-parallel size, the GEMMs' compute dtypes (dense, routed experts), the GPU's CUDA capability and whether
    the experts are spread by expert parallelism (``ep``)."""
    archs = arch.architectures or (arch.model_type,)
    q_dense = dense_dtype in QUANT_ACT
    q_expert = expert_dtype in QUANT_ACT
    reduce = TP_REDUCE if tp > 1 else 0
    sm100 = capability.split(".")[0] == "10"
    trtllm = sm100 and q_expert and archs[0] in _TRTLLM_MOE
    shared = arch.shared_expert_intermediate > 0 and not _shared_fused(arch, ep, trtllm, capability)
    total = 0
    moe_from = arch.dense_layers if arch.is_moe else arch.num_layers
    for i, kind in enumerate(arch.layer_kinds):
        ops, gemms = FRAME + reduce, 0
        if kind == "mla":
            ops, gemms = ops + MLA, GEMMS["mla"]
            if arch.index_topk:
                ops, gemms = ops + DSA_INDEXER, gemms + GEMMS["dsa"]
        elif kind == "linear" and arch.linear_attn is not None and arch.linear_attn.kind == "gdn":
            ops, gemms = ops + GDN, GEMMS["gdn"]
        elif kind != "none":  # full or sliding attention (and mixers the table does not count: as GQA)
            ops, gemms = ops + GQA, GEMMS["gqa"]
            if _named(archs, _QK_HEAD):
                ops += QK_NORM_HEAD
            elif _named(archs, _QK_TP):
                ops += QK_NORM_TP if tp > 1 else QK_NORM_TP_ONE
            if _named(archs, _OUT_GATE) and kind == "full":
                ops += OUT_GATE
        x_gemms = 0
        if i >= moe_from:
            ops += ROUTER + (0 if trtllm else TRITON_MOE)
            x_gemms = GEMMS["trtllm_moe" if trtllm else "triton_moe"]
            if shared:
                ops, gemms = ops + SHARED, gemms + GEMMS["shared"]
                if _named(archs, _SHARED_GATE):
                    ops += SHARED_GATE
            if arch.moe_dense_mlp:
                ops, gemms = ops + DENSE_MLP, gemms + GEMMS["mlp"]
        else:
            ops, gemms = ops + DENSE_MLP, gemms + GEMMS["mlp"]
        total += ops + (gemms if q_dense else 0) + (x_gemms if q_expert else 0)
    return -(-total // max(1, pp))
