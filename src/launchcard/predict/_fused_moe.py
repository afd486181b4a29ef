"""The row blocks of vLLM's and SGLang's Triton fused MoE kernel, whose every expert's rows are padded to a multiple.

Both engines sort a step's (token, expert) pairs by expert with ``moe_align_block_size``, which pads each expert's
rows to a multiple of the kernel config's ``BLOCK_SIZE_M`` (vLLM 0.11.0 fused_moe/moe_align_block_size.py L48-49, the
same op in SGLang 0.5.7 fused_moe_triton/moe_align_block_size.py), and the Triton kernel multiplies whole blocks.  The
config comes from a tuned JSON file for the GPU, the rank's expert count E, N (w2.shape[2]: the expert's intermediate
size on the rank) and dtype where the engine ships one (the entry nearest the call's M tokens: vLLM 0.11.0
fused_moe.py ``try_get_optimal_moe_config`` L936-946; SGLang 0.5.7 fused_moe_triton_config.py L232-239), else from
``get_default_config``: for 16-bit experts 16 rows while M <= E, else 64 (vLLM 0.11.0 fused_moe.py L905-918; SGLang
0.5.7 fused_moe_triton_config.py L185-198); for block-scaled FP8 experts 64 at every M (vLLM L877-889; SGLang
L175-184).  The default is what the step model and the kernel-table fit count (:data:`DEFAULT_BLOCKS`); a tuned file
(e.g. vLLM 0.11.0's E=128,N=384 H200 file: 16 rows to M = 128, 32 at 256, 64 at 512, 128 from 1,024) picks its own,
which is said as an ``assumed`` finding.  The aiconfigurator wheel's SGLang 0.5.10 H200 BF16 table shows the default's
step at Qwen3-235B's full shape (E = 128, N = 1,536, no tuned file): 1.18 ms at 128 tokens, 1.76 ms at 160.
"""

from __future__ import annotations

from launchcard.predict._types import Finding

# table / record dtype -> (BLOCK_SIZE_M while M <= E, BLOCK_SIZE_M above): get_default_config's rows above
DEFAULT_BLOCKS = {"bfloat16": (16, 64), "fp8_block": (64, 64)}
# kernel sources of the wheel's tables that run this kernel (vLLM's fused_experts / TritonExperts, SGLang's port)
TRITON_SOURCES = ("vllm_fused_moe", "tritonexperts", "sglang_fused_moe_triton")


def is_triton_source(kernel_source: str) -> bool:
    """Whether a kernel table row's ``kernel_source`` is the Triton fused MoE kernel."""
    return kernel_source == TRITON_SOURCES[0] or any(s in kernel_source for s in TRITON_SOURCES[1:])


def row_block(tokens: float, experts: float, blocks: tuple[int, int]) -> int:
    """BLOCK_SIZE_M of get_default_config for a call of ``tokens`` rows (M) on a rank holding ``experts`` (E)."""
    return blocks[0] if tokens <= experts else blocks[1]


def default_block_finding(engine: str, blocks: tuple[int, int]) -> Finding:
    """What the prediction assumes of the Triton fused MoE kernel's row blocks."""
    rule = (f"{blocks[0]} rows while the step's tokens are at most the rank's experts, else {blocks[1]}"
            if blocks[0] != blocks[1] else f"{blocks[0]} rows")
    return Finding("assumed", "fused-moe-blocks",
                   f"{engine}'s Triton fused MoE pads every expert's rows to its BLOCK_SIZE_M: counted with "
                   f"get_default_config's block ({rule}; vLLM 0.11.0 fused_moe.py L868-919, SGLang 0.5.7 "
                   "fused_moe_triton_config.py L138-200). A tuned config file for the GPU, expert count and "
                   "intermediate size, where the engine ships one, picks its own block by token count.")
