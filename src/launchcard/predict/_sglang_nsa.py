"""How SGLang serves a DeepSeek Sparse Attention checkpoint (its "NSA" path: DeepSeek-V3.2): the server defaults it
forces for such a model, per release, each cited where it is defined (``python/sglang/srt/...`` in the ``sglang``
wheel of that release on PyPI).

* DP attention.  ``_handle_model_specific_adjustments`` turns DP attention on for an NSA model on a GPU (``if not
  is_npu()``: CUDA or ROCm): with ``dp_size = tp_size`` as well in 0.5.3.post3-0.5.5.post3 (server_args.py 0.5.3.post3
  L949-952, 0.5.4.post3 L1058-1061, 0.5.5.post3 L1106-1109), the ``--dp-size`` given in 0.5.6-0.5.7 (0.5.6 L949-951,
  0.5.6.post2 L1002-1004, 0.5.7 L1034-1036; ``_handle_data_parallelism`` turns it back off at one DP rank, 0.5.6.post2
  L1563-1567).  From 0.5.8 only the prefill context-parallel mode sets it (0.5.8 L1111-1131).  Both run after the memory
  defaults (``__post_init__``, 0.5.6.post2 L636 then L647), so ``mem_fraction_static`` is the one of the command as
  written; the prefill chunk is split over the DP ranks afterwards (L1568-1574).
* KV cache dtype.  ``--kv-cache-dtype auto`` becomes ``fp8_e4m3`` on compute capability 10 and up, ``bfloat16``
  below (0.5.4.post3 L1071, 0.5.6.post2 L1031-1036, 0.5.9 L1142-1145, 0.5.21 arg_groups/overrides.py L506-511,
  the last for a checkpoint without learnable attention sinks; 0.5.3.post3 L960-963 forces FP8 there).
* Kernels.  With neither ``--nsa-prefill-backend`` nor ``--nsa-decode-backend`` given SGLang picks them by cache
  dtype and GPU: an FP8 cache ``flashmla_auto`` + ``flashmla_kv`` (0.5.6.post2 L1045-1050, 0.5.9 L1158-1163), on
  compute capability 10+ ``trtllm`` for both from 0.5.10 (0.5.10.post1 L1464-1467); a bf16 cache
  ``flashmla_sparse`` + ``fa3`` on Hopper, on capability 10+ ``flashmla_sparse`` for both through 0.5.8
  (0.5.6.post2 L1052-1056, 0.5.8 L1186-1189) and ``flashmla_sparse`` + ``trtllm`` from 0.5.9 (0.5.9 L1165-1170;
  0.5.21 arg_groups/overrides.py L684-686).  A backend the command names is kept from 0.5.9 (``user_set_prefill`` /
  ``user_set_decode``, 0.5.9 L1155-1176); through 0.5.8 the FP8 and the capability-10 picks overwrite it (0.5.6.post2
  L1045-1056, 0.5.8 L1177-1189), only Hopper's bf16 defaults (the dataclass's own, L400-401) give way to it.
* KV pool.  ``profile_max_num_token`` divides the free memory by a cell of ``kv_lora_rank + qk_rope_head_dim``
  elements of the cache dtype plus the indexer's 128 FP8 keys and a float32 scale, per layer (model_runner.py
  0.5.6.post2 L1380-1410): 708 bytes a layer with an FP8 cache, although ``NSATokenToKVPool`` stores FlashMLA's
  656-byte FP8 record (mem_cache/memory_pool.py L1669-1676), so the pool holds that many tokens.
* Decode JIT.  The decode indexer's DeepGEMM schedule kernel is compiled per batch size rounded up to 32 (``nsa_jit``):
  the CUDA graph capture compiles the sizes up to --cuda-graph-max-bs at start-up, and the first eager decode step at
  each larger size waits for an NVCC compile (a tensor-parallel plan whose batch passes the graph limit: DeepSeek-V3.2
  TP 8 at 1,000 clients meets 16 of them; under DP attention each rank's own batch counts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from launchcard.limits import compute_capability
from launchcard.predict._sglang_rules import RULES_RELEASE as _RULES
from launchcard.predict._types import Finding

if TYPE_CHECKING:
    from launchcard.memory import Arch, Settings
    from launchcard.predict._dsa import DsaFacts

# is_deepseek_nsa (configs/model_config.py 0.5.6.post2 L53-65): a checkpoint of one of these architectures whose
# config has index_topk (SGLang reads a DeepseekV32ForCausalLM config as DeepseekV3ForCausalLM,
# utils/hf_transformers_utils.py L163-191, so its DeepseekV3 branch applies); GLM-5's GlmMoeDsaForCausalLM joins
# in 0.5.9 (model_config.py L55-78 of 0.5.10.post1 too), the first release that serves it.  0.5.21's wider list
# (is_deepseek_dsa: Longcat, Dots3, HYV4 ...) is not taken: its KV default depends on attention sinks not read here
NSA_ARCHITECTURES = frozenset({"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLMNextN",
                               "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration",
                               "GlmMoeDsaForCausalLM"})
_DP_IS_TP = ((0, 5, 3, 0), (0, 5, 5, 99))  # releases that also set dp_size = tp_size
_DPA_UNTIL = (0, 5, 7, 99)  # the last release line that forces DP attention on


def nsa_model(architectures: tuple[str, ...] | None, index_topk: int) -> bool:
    """Whether SGLang serves the checkpoint by its NSA path (``is_deepseek_nsa``)."""
    return bool(index_topk and architectures and architectures[0] in NSA_ARCHITECTURES)


def nsa_dp_attention(release: tuple[int, int, int, int] | None, version: str | None, tp: int, dp: int,
                     dpa: bool, found: list[Finding]) -> tuple[int, bool]:
    """(DP size, DP attention) SGLang ``release`` serves an NSA model with, from the command's ``tp``, ``dp`` and
    ``dpa`` (``--enable-dp-attention`` with more than one DP rank).  A release not stated takes 0.5.6.post2's
    rule (the ``sglang-release`` finding says so)."""
    where = "server_args.py _handle_model_specific_adjustments"
    if release is not None and _DP_IS_TP[0] <= release <= _DP_IS_TP[1]:
        if (dp, dpa) != (tp, tp > 1):
            found.append(Finding("info", "sglang-nsa", f"SGLang {version} serves DeepSeek Sparse Attention with DP "
                                                       f"attention over --dp-size = --tp-size = {tp} whatever the "
                                                       f"command says ({where}, 0.5.5.post3 L1106-1109)"))
        return tp, tp > 1
    if release is not None and release > _DPA_UNTIL:
        return dp, dpa
    if dp > 1 and not dpa:
        taken = "" if release is not None else (
            f" (no SGLang release given: {_RULES}'s rule taken; pass --engine-version for another)" if not version
            else f" ({version} is no final release: {_RULES}'s rule taken)")
        found.append(Finding("info", "sglang-nsa", f"DeepSeek Sparse Attention: SGLang {version or _RULES}{taken} "
                                                   f"turns DP attention on itself, so --dp-size {dp} splits "
                                                   f"attention over {dp} ranks of one scheduler group ({where}, "
                                                   "0.5.6.post2 L1002-1004; not from 0.5.8)"))
    return dp, dp > 1


def nsa_kv_dtype(kv_cache_dtype: str, capability: str) -> tuple[str, str | None]:
    """(cache dtype, why) SGLang picks for ``--kv-cache-dtype auto`` on a GPU of ``capability`` ("9.0", "10.0");
    the dtype as given otherwise (why None)."""
    cc = compute_capability(capability)
    if kv_cache_dtype != "auto" or cc is None:
        return kv_cache_dtype, None
    dtype = "fp8_e4m3" if cc[0] >= 10 else "bfloat16"
    return dtype, (f"--kv-cache-dtype auto on compute capability {capability}: {dtype}, SGLang's default for "
                   "DeepSeek Sparse Attention (server_args.py 0.5.6.post2 L1031-1036; 0.5.21 "
                   "arg_groups/overrides.py L506-511)")


def nsa_cell_bytes(kv_lora_rank: int, rope_dim: int, index_head_dim: int, cache_bytes: float, layers: int) -> float:
    """Bytes per token SGLang divides its KV memory by for an NSA model (model_runner.py 0.5.6.post2 L1380-1410):
    the latent's elements at the cache dtype's size plus the indexer's FP8 keys and float32 scale per 128."""
    return ((kv_lora_rank + rope_dim) * cache_bytes + index_head_dim + index_head_dim // 128 * 4) * layers


def nsa_backends(release: tuple[int, int, int, int] | None, capability: str, kv_cache_dtype: str,
                 given: tuple[str | None, str | None]) -> tuple[str | None, str | None]:
    """(prefill, decode) DSA backends SGLang ``release`` runs on a GPU of ``capability`` with ``kv_cache_dtype``
    (SGLang's own names; a release not stated takes 0.5.6.post2's rules); a backend in ``given`` is kept where the
    release keeps it (see the module's docstring), and ``given`` is returned whole on a GPU that is not CUDA."""
    cc = compute_capability(capability)
    if cc is None:
        return given
    major = cc[0]
    rel = release or (0, 5, 6, 2)
    if kv_cache_dtype.startswith("fp8"):
        pf, dec = ("trtllm", "trtllm") if major >= 10 and rel >= (0, 5, 10, 0) else ("flashmla_auto", "flashmla_kv")
    elif major >= 10:
        pf, dec = "flashmla_sparse", ("trtllm" if rel >= (0, 5, 9, 0) else "flashmla_sparse")
    else:
        pf, dec = "flashmla_sparse", "fa3"
    if rel < (0, 5, 9, 0) and (kv_cache_dtype.startswith("fp8") or major >= 10):
        return pf, dec  # set over the command's own (server_args.py 0.5.6.post2 L1045-1056, 0.5.8 L1177-1189)
    return given[0] or pf, given[1] or dec


def nsa_requant(dsa: DsaFacts, arch: Arch, s: Settings, version: str | None, fp8_compute: bool,
                backends: tuple[str | None, str | None], pool_tokens: int, found: list[Finding]) -> DsaFacts:
    """``dsa`` with the bytes SGLang moves re-quantizing the whole bf16 pool before each FlashMLA kv call
    (``_dsa.REQUANT_RELEASES``) at SGLang ``version`` with the environment's ``fp8_compute`` switch (plain values,
    not the plan: ``_sglang`` imports this module): a decode step with ``flashmla_kv`` decode, a sparse prefill step
    with ``flashmla_kv`` prefill (``flashmla_auto`` on a bf16 cache picks ``flashmla_sparse``: nsa_backend.py
    0.5.6.post2 L1473-1475)."""
    from launchcard.limits import sglang_release
    from launchcard.predict._dsa import REQUANT_ENV, REQUANT_RELEASES, dsa_layers, requant_bytes

    rel = sglang_release(version) or (0, 5, 6, 2)
    fp8 = (s.kv_cache_dtype or "").startswith("fp8")
    if fp8 or not REQUANT_RELEASES[0] <= rel <= REQUANT_RELEASES[1]:
        return dsa
    # 0.5.9 quantizes whatever the variable says (nsa_backend.py L1729-1731)
    if not fp8_compute and rel < (0, 5, 9, 0):
        return dsa
    per_step = requant_bytes(arch.kv_lora_rank, arch.qk_rope_head_dim, pool_tokens, dsa_layers(arch, s.pp))
    dec = per_step if (backends[1] or "").lower() == "flashmla_kv" else 0.0
    pf = per_step if (backends[0] or "").lower() == "flashmla_kv" else 0.0
    if dec or pf:
        found.append(Finding("info", "dsa-kernels",
                             f"SGLang's FlashMLA kv kernel on a bf16 cache: every {'decode' if dec else 'prefill'}"
                             f"{' and prefill' if dec and pf else ''} step first quantizes each DSA layer's whole "
                             f"KV buffer ({pool_tokens:,} tokens) to FP8, {per_step / 2**30:.1f} GiB read and written "
                             f"a step (nsa_backend.py 0.5.6.post2 L1254-1256, {REQUANT_ENV} default true; 0.5.9 "
                             "L1729-1731 always); --kv-cache-dtype fp8_e4m3 stores FP8 and skips it"))
    return dsa._replace(dec_requant=dec, pf_requant=pf)


# DeepGEMM's paged-MQA-logits schedule kernel, smxx_paged_mqa_logits_metadata, is a template on the batch size rounded
# up to 32 (csrc/jit_kernels/impls/smxx_fp8_paged_mqa_logits.hpp: ``aligned_batch_size = align(batch_size, 32)`` in
# generate_impl's template arguments, static_assert'ed in the kernel; sgl-project/DeepGEMM f4adba8, the commit
# sgl-kernel's CMakeLists.txt pins, and every version since the kernel's first, 80ceeb2 of 2025-09-29), so
# ``compiler->build`` compiles one with NVCC the first time a process meets each rounded size (csrc/jit/compiler.hpp
# build: the in-memory runtime cache, then the cubin under DG_JIT_CACHE_DIR, which SGLang points at
# ~/.cache/deep_gemm, with NVCC, not NVRTC: deep_gemm_wrapper/compile_utils.py 0.5.6.post2 L31-39).  SGLang's decode
# indexer calls it every decode and verify step on CUDA GPUs (nsa_indexer.py _get_topk_paged: 0.5.3 L304,
# 0.5.6.post2 L298; from 0.5.7 once a step, nsa_backend.py 0.5.7 L556 / L760; 0.5.9 nsa_indexer.py L382) with the
# step's batch (verify: batch x draft tokens).  The start-up's CUDA graph capture runs every captured size, so only
# an eager step above the graphs meets new ones (_dsa.jit_warm).  Releases read: 0.5.3-0.5.9
JIT_RELEASES = ((0, 5, 3, 0), (0, 5, 9, 99))
# seconds of one such compile: NVCC 13.0 on the generated source of that commit (sm_90a, DeepGEMM's flags), user +
# system CPU time of one compile, 1.65-1.85 s over ten compiles of batch sizes 544-1024 on this project's CI host
# (bench/measure_dg_jit.py); every TP rank compiles its own at once, one CPU core each
JIT_COMPILE_S = 1.75


def nsa_jit(dsa: DsaFacts, version: str | None, capability: str, found: list[Finding]) -> DsaFacts:
    """``dsa`` with the stall SGLang ``version``'s decode indexer takes compiling DeepGEMM's schedule kernel for each
    new rounded batch above those its CUDA graph capture compiled (the clock finds those: _dsa.jit_warm)."""
    from launchcard.limits import sglang_release
    from launchcard.predict._dsa import JIT_ALIGN

    rel = sglang_release(version) or (0, 5, 6, 2)
    if compute_capability(capability) is None or not JIT_RELEASES[0] <= rel <= JIT_RELEASES[1]:
        return dsa
    found.append(Finding("assumed", "dsa-jit",
                         f"SGLang's DSA decode indexer runs DeepGEMM's paged-MQA-logits schedule kernel, compiled "
                         f"(NVCC) for each batch size rounded up to {JIT_ALIGN} (smxx_fp8_paged_mqa_logits.hpp "
                         f"aligned_batch_size; nsa_indexer.py 0.5.6.post2 L298): the CUDA graph capture compiles "
                         "those up to its largest batch (the warm-up's batch of one without graphs); the first eager "
                         f"decode step at each larger one waits {JIT_COMPILE_S:g} s (one compile timed on this "
                         "project's CI host, bench/measure_dg_jit.py), taken as a server without those kernels in "
                         "~/.cache/deep_gemm (a fresh container); a warm cache only loads them"))
    return dsa._replace(jit_s=JIT_COMPILE_S)
