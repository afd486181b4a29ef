"""SGLang's DeepSeek extend (prefill) paths, and the GEMM one release line runs twice on them.

``DeepseekV2AttentionMLA`` sends an extend batch through one of two forms, picked per batch by the attention
backend's handler (``srt/models/deepseek_v2.py``, 0.5.6.post2 L340-448):

* MHA (``MHA``, ``MHA_ONE_SHOT``, ``MHA_CHUNKED_KV``): the latent is up-projected by ``kv_b_proj`` into per-head
  keys and values (``forward_normal_prepare``, L1664-1776; the one-shot and chunked forms call it, L2504-2520,
  L2552-2561);
* MLA (absorbed, ``forward_absorb_prepare``): no ``kv_b_proj``; its two per-head matmuls against the same weight
  cost as many FLOPs per token.

The step model counts ``kv_b_proj`` once per token either way.  From 0.5.5.post2 through 0.5.6.post2
``forward_normal_prepare`` runs ``kv_b_proj`` over the new tokens (0.5.6.post2 L1746, 0.5.5.post2 L1578, in the
branch that normalises ``kv_a``), keeps nothing of it and runs it again (L1770; 0.5.5.post2 L1595): one more GEMM
per MLA layer on every MHA-form extend step.  0.5.5.post1 (L1548) and 0.5.7 (L1813-1817) run it once.

Which form a step takes (0.5.6.post2; the handlers are alike from 0.5.5.post2):

* ``trtllm_mla`` (SGLang's pick for DeepseekV3ForCausalLM on compute capability 10, server_args.py L1069-1075):
  MHA_CHUNKED_KV for every extend without speculative decoding unless --disable-chunked-prefix-cache (L402-409);
* ``fa3`` (the MLA default on Hopper, L1392-1393), ``flashinfer`` (on capability 10 otherwise, L1394-1395),
  ``flashmla``: MHA while the batch's prefixes sum to 0 or to at least SGL_CHUNKED_PREFIX_CACHE_THRESHOLD
  (8192, L1437-1439), else MLA (L348-374);
* ``triton`` (the default elsewhere on CUDA, L1403-1404): MHA only without a prefix (L436-448);
* --disable-chunked-prefix-cache (``DeepseekV2AttentionMLA.disable_chunked_prefix_cache``, from the server args)
  turns the first two rules into the third: MHA only while the batch's prefixes sum to 0;
* ``nsa`` (DeepSeek Sparse Attention): MHA_ONE_SHOT while the batch's longest sequence fits in index_topk
  (nsa_backend.py L1436-1454), the step model's dense DSA prefill; MLA (sparse) otherwise.

Not read here: ROCm's aiter rules (no release of the line is planned there by a calibrated run) and a command's
--prefill-attention-backend apart from --attention-backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from launchcard.limits import compute_capability
from launchcard.predict._types import Finding

if TYPE_CHECKING:
    from launchcard.memory import Arch

KVB_TWICE = ((0, 5, 5, 2), (0, 5, 6, 2))  # the releases whose forward_normal_prepare runs kv_b_proj twice
# SGL_CHUNKED_PREFIX_CACHE_THRESHOLD's default (deepseek_v2.py 0.5.6.post2 L1437-1439)
PREFIX_THRESHOLD = 8192
# the extend form rules: "always" (every extend step is MHA), "threshold" (MHA at a prefix sum of 0 or at least
# PREFIX_THRESHOLD), "fresh" (MHA without a prefix), "dense" (the dense DSA prefill), "" (not modelled)
_RULES = {"trtllm_mla": "always", "fa3": "threshold", "flashinfer": "threshold", "flashmla": "threshold",
          "triton": "fresh", "nsa": "dense"}
# SGLang's DeepseekV3 branch of _handle_model_specific_adjustments (server_args.py 0.5.6.post2 L988-992, L1069-1075)
_TRTLLM_MLA_ARCHS = frozenset({"DeepseekV3ForCausalLM", "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration"})


def mla_backend(capability: str, architectures: tuple[str, ...] | None, backend: str | None, nsa: bool) -> str:
    """The attention backend SGLang runs an MLA model's extend with on a CUDA GPU of ``capability`` ("9.0"): the
    command's ``--attention-backend`` (``backend``), else SGLang's pick (the module's docstring: nsa for an NSA model,
    server_args.py L995-999; trtllm_mla for the DeepseekV3 architectures on capability 10, L1069-1075; fa3 on Hopper,
    flashinfer on capability 10, triton elsewhere, L1392-1404); "" where not read (a GPU that is not CUDA).  The one
    pick :func:`extend_rule` and the prefix-cache page (predict._prefix.sglang_page) read."""
    cc = compute_capability(capability)
    if cc is None:
        return ""
    major = cc[0]
    if backend:
        return backend.lower()
    if nsa:
        return "nsa"
    if major == 10:
        return "trtllm_mla" if (architectures or ("",))[0] in _TRTLLM_MLA_ARCHS else "flashinfer"
    return "fa3" if major == 9 else "triton"


def extend_rule(capability: str, architectures: tuple[str, ...] | None, backend: str | None, nsa: bool,
                no_chunked_prefix: bool = False) -> str:
    """The rule by which SGLang's extend steps take the MHA form (see the module's docstring) on a CUDA GPU of
    ``capability`` ("9.0"), for the checkpoint's ``architectures``, the command's ``--attention-backend`` (None:
    SGLang's pick, :func:`mla_backend`), an NSA model and the command's ``--disable-chunked-prefix-cache``
    (``no_chunked_prefix``); "" where it is not read (a backend not listed, a GPU that is not CUDA)."""
    rule = _RULES.get(mla_backend(capability, architectures, backend, nsa), "")
    # --disable-chunked-prefix-cache: trtllm_mla's handler takes MHA_CHUNKED_KV only at a prefix sum of 0 (its
    # ``not attn.disable_chunked_prefix_cache or sum_extend_prefix_lens == 0``, L402-409), and so does
    # _handle_attention_backend's (fa3, flashinfer, flashmla: the threshold branch requires ``not
    # attn.disable_chunked_prefix_cache``, L348-374): MHA without a prefix only
    return "fresh" if no_chunked_prefix and rule in ("always", "threshold") else rule


def kvb_flops(arch: Arch, heads_rank: float, mla_layers: float) -> float:
    """FLOPs per token of ``kv_b_proj`` on one rank, all its MLA layers: the latent to ``heads_rank`` heads' keys
    (nope dims) and values."""
    return 2.0 * arch.kv_lora_rank * heads_rank * (arch.qk_nope_head_dim + arch.v_head_dim) * mla_layers


def kvb_twice(release: tuple[int, int, int, int] | None, version: str | None, rule: str, flops: float,
              found: list[Finding]) -> float:
    """FLOPs per prefill token the second ``kv_b_proj`` adds on an MHA-form extend step at SGLang ``release``
    (0 outside ``KVB_TWICE``, for an unread form rule, or an unstated release: the newest rules run it once)."""
    if release is None or not KVB_TWICE[0] <= release <= KVB_TWICE[1] or not rule or flops <= 0.0:
        return 0.0
    when = {"always": "every extend step", "threshold": f"extend steps whose prefixes sum to 0 or >= "
                                                        f"{PREFIX_THRESHOLD}",
            "fresh": "extend steps without a prefix", "dense": "dense (short) DSA prefill steps"}[rule]
    found.append(Finding("info", "sglang-mla-extend",
                         f"SGLang {version}: the MHA form of a DeepSeek extend runs kv_b_proj twice over the new "
                         f"tokens (deepseek_v2.py 0.5.6.post2 forward_normal_prepare L1746 and L1770; once from "
                         f"0.5.7): timed on {when}"))
    return flops


def mha_form(rule: str, prefix_sum: float) -> bool:
    """Whether an extend step whose sequences' prefixes sum to ``prefix_sum`` takes the MHA form under ``rule``
    ("always", "threshold", "fresh"; "dense" is decided by the DSA step model, which sees the sequence lengths)."""
    if rule == "always":
        return True
    if rule == "threshold":
        return prefix_sum == 0 or prefix_sum >= PREFIX_THRESHOLD
    return rule == "fresh" and prefix_sum == 0


def absorb_copies_gib(arch: Arch, heads_rank: float, mla_layers: float, cuda: bool = True) -> float:
    """GiB per rank of the absorbed-MLA weights SGLang's DeepSeek model file keeps beside ``kv_b_proj``:
    ``post_load_weights`` (run at the end of ``load_weights``, so inside the "Load weight end ... mem usage" that
    ``profile_max_num_token`` subtracts) splits kv_b_proj into ``w_kc`` and ``w_vc`` and stores both as new contiguous
    tensors, kv_b_proj itself kept for the MHA form: bf16 where the checkpoint is 16-bit or 128 x 128 block FP8 on
    CUDA (``block_quant_dequant`` to bfloat16 unless SGL_USE_DEEPGEMM_BMM), FP8 for other FP8 scalings and off CUDA
    (``channel_quant_to_tensor_quant`` / ``block_quant_to_tensor_quant``).  Read in 0.5.3 models/deepseek_v2.py
    L2888-3060 and L3379, 0.5.6.post2 L3362-3530 and L3885, 0.5.9 models/deepseek_common/deepseek_weight_loader.py
    L364, L400-610."""
    q = arch.quant
    fp8_tensor = q.name == "fp8" and "attn" in q.covers and not (q.block and cuda)
    width = 1 if fp8_tensor else 2
    numel = heads_rank * (arch.qk_nope_head_dim + arch.v_head_dim) * arch.kv_lora_rank
    return numel * width * mla_layers / 2**30
