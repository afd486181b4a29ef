"""How many of a prompt's tokens a prefix-cache hit spares, at the granularity each engine reuses cached KV.

``--prefix-hit F`` says that the first ``int(F x prompt)`` tokens of every prompt are already in the cache; the
engine reuses only part of that, by its own rule, and always computes the prompt's last token (its logits):

* vLLM (v1): whole blocks of ``block_size`` tokens (16 on GPU unless the memory plan's block is larger), at most
  prompt - 1 tokens: ``KVCacheManager.get_computed_blocks`` sets ``max_cache_hit_length = request.num_tokens - 1``
  (vllm 0.32.0 vllm/v1/core/kv_cache_manager.py L289-300) and ``FullAttentionManager.find_longest_cache_hit``
  walks ``max_length // block_size`` full blocks (0.32.0 vllm/v1/core/single_type_kv_cache_manager.py L782-790;
  its finer phase 2 only where the hash block is smaller than the KV block, not modelled);
* SGLang: the radix cache matches whole pages of ``--page-size`` tokens (1 by default) of the first prompt - 1
  tokens: ``Req`` matches ``fill_ids[:input_len - 1]`` (``max_prefix_len = input_len - 1``, schedule_batch.py
  ``_compute_max_prefix_len``) and ``RadixCache.match_prefix`` truncates the key to ``len(key) // page_size *
  page_size`` (sgl-project/sglang@006b0e3d python/sglang/srt/mem_cache/radix_cache.py); some attention backends
  force their page (server_args: trtllm_mla 64 unless 32 or 64 is given, flashmla 64, cutlass_mla 128);
* TensorRT-LLM: blocks of ``tokens_per_block`` (32) over the first prompt - 1 tokens ("Ignore last token because
  it can't be recovered", ``BlockManager::addSequence`` chopVectorIntoBlocks(uniqueTokens, inputLength - 1,
  mTokensPerBlock, true), cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp), the last one partial: with
  ``KvCacheConfig.enable_partial_reuse`` (default True, tensorrt_llm/llmapi/llm_args.py) a partly matched block is
  reused too, so the hit is taken to the token.

With the engine's prefix cache off it reuses nothing (``ServingFacts.prefix_off`` names the option that turned it
off): vLLM ``--no-enable-prefix-caching`` (``CacheConfig.enable_prefix_caching``; its default, None, is
``model_config.is_prefix_caching_supported``, True for generative decoder models, vllm 0.32.0
vllm/engine/arg_utils.py L3021-3022, config/model.py L2221; "Enabled by default for V1" in the 0.10.2 and 0.11.2
flag specs), SGLang ``--disable-radix-cache`` (a ChunkCache in place of the RadixCache, which matches no prefix) and
TensorRT-LLM ``kv_cache_config.enable_block_reuse: false`` (KvCacheConfig's default True, llm_args.py).  A
``--prefix-hit`` for such a plan is refused as bad input (:func:`prefix_off_error`), as ``--acceptance`` is for a
plan without speculative decoding (predict._launch.predict_launch); the plan search, whose other plans may keep the
cache, simulates such a plan's hit as 0 (:func:`prefix_off_finding`).
"""

from __future__ import annotations

from launchcard.errors import InputError
from launchcard.limits import compute_capability
from launchcard.predict._types import Finding

# SGLang's server_args forces these backends' page size (_handle_attention_backend_compatibility, 0.5.6.post2
# server_args.py L1427-1443 flashmla 64 and cutlass_mla 128, L1445-1458 trtllm_mla 64 unless 32 or 64, L1465-1479
# trtllm_mha 64 unless 16, 32 or 64); a DeepSeek NSA model's is 64 whatever its command (L1026, CUDA)
_SGLANG_BACKEND_PAGE = {"trtllm_mla": 64, "flashmla": 64, "cutlass_mla": 128, "trtllm_mha": 64}
_SGLANG_PAGE_KEPT = {"trtllm_mla": (32, 64), "trtllm_mha": (16, 32, 64)}
NSA_PAGE = 64


def cached_prefix(prompt: int, share: float, block: int) -> int:
    """Tokens of a ``prompt`` an engine reuses when its first ``share`` is cached: the hit floored to whole
    ``block``s, never the whole prompt (the last token is always computed)."""
    hit = min(int(prompt * share), prompt - 1)
    b = max(1, block)
    return max(0, hit // b * b)


def sglang_page(page_size: int | None, backend: str | None, nsa: bool = False) -> int:
    """SGLang's page (tokens the radix cache matches at a time) for the command's ``--page-size`` under the
    attention ``backend`` it runs (None: one that forces no page) and an NSA model (``nsa``)."""
    if nsa:
        return NSA_PAGE
    b = (backend or "").lower()
    forced = _SGLANG_BACKEND_PAGE.get(b)
    if forced is not None:
        return page_size if page_size in _SGLANG_PAGE_KEPT.get(b, ()) else forced
    return page_size or 1


def sglang_run_page(page_size: int | None, backend: str | None, capability: str,
                    architectures: tuple[str, ...] | None, *, mla: bool, nsa: bool,
                    eagle_topk: int | None) -> tuple[int, bool]:
    """SGLang's page for a command's ``--page-size`` and ``--attention-backend`` (None: SGLang picks) on a GPU of
    ``capability`` ("" where not CUDA), and whether the page is read (False: an ``assumed`` finding).  An MLA model
    runs the backend :func:`launchcard.predict._sglang_mla.mla_backend` reads (the one pick the extend rule reads).
    A model of other attention: on compute capability below 10 every backend SGLang picks leaves the page as given
    (fa3, flashinfer, triton: 0.5.6.post2 server_args.py L1374-1390, and the model-specific picks L1115-1126,
    L1227-1233, L1316-1317); on capability 10 its default pick is trtllm_mha without EAGLE top-k above 1
    (L1382-1383, ``is_no_spec_infer_or_topk_one``), page 64 assumed there, since model-specific picks (Qwen3Next:
    triton) are not read; elsewhere (capability 12, ROCm) page 1 assumed."""
    if mla:
        from launchcard.predict._sglang_mla import mla_backend

        run = mla_backend(capability, architectures, backend, nsa)
        if run:
            return sglang_page(page_size, run, nsa), True
    if backend:
        return sglang_page(page_size, backend, nsa), True
    cc = compute_capability(capability)
    if cc is None:
        return page_size or 1, False
    major = cc[0]
    if major > 10:
        return page_size or 1, False
    if major < 10:
        return page_size or 1, True
    topk_one = eagle_topk is None or (eagle_topk == 1 and page_size in (None, 1))
    return sglang_page(page_size, "trtllm_mha" if topk_one else None), False


def prefix_finding(engine: str, isl: int, share: float, block: int, read: bool) -> Finding:
    """The prefix-hit finding: the share given and the tokens simulated at --isl by the engine's rule."""
    cached = cached_prefix(isl, share, block)
    given = (f"{100 * share:g}% of every prompt found in the prefix cache ({int(isl * share):,} of {isl:,} tokens "
             "at --isl)")
    if not read:
        return Finding("assumed", "prefix-hit",
                       f"{given}: {cached:,} simulated as reused, SGLang's radix cache matching whole {block}-token "
                       "pages of the first prompt - 1 tokens; the attention backend SGLang picks for this model and "
                       "GPU is not read, and some force their page (trtllm_mha 64, its default for models without "
                       "MLA on compute capability 10; trtllm_mla 64, flashmla 64, cutlass_mla 128): pass "
                       "--attention-backend")
    rule = {"vllm": f"vLLM reuses whole {block}-token blocks, at most prompt - 1 tokens (v1 kv_cache_manager.py "
                    "get_computed_blocks, 0.32.0 L289-300)",
            "sglang": f"SGLang's radix cache matches whole {block}-token pages of the first prompt - 1 tokens "
                      "(radix_cache.py match_prefix)",
            "trtllm": "TensorRT-LLM reuses blocks of the first prompt - 1 tokens, a partly matched one too "
                      "(kv_cache_config.enable_partial_reuse, default True)"}.get(engine, "")
    if not rule:
        return Finding("assumed", "prefix-hit", f"{given}: {cached:,} simulated as reused (the engine's reuse "
                                                "granularity not read: every cached token but the last)")
    return Finding("info", "prefix-hit", f"{given}: {cached:,} simulated as reused, as {rule}")


def prefix_off(engine: str, *, enable_prefix_caching: bool | None = None, disable_radix_cache: bool = False,
               block_reuse: bool = True) -> str:
    """The setting that turns the plan's prefix cache off, as its ``engine`` names it ("" where the cache is on):
    vLLM's ``enable_prefix_caching`` False (--no-enable-prefix-caching; None, its default, keeps it), SGLang's
    --disable-radix-cache, TensorRT-LLM's options-file ``kv_cache_config.enable_block_reuse: false``.  The one
    derivation the plan facts (``ServingFacts.prefix_off``) and the plan search (``plansearch.prefix_cache_off``)
    read."""
    if engine == "vllm":
        return "--no-enable-prefix-caching" if enable_prefix_caching is False else ""
    if engine == "sglang":
        return "--disable-radix-cache" if disable_radix_cache else ""
    return "kv_cache_config.enable_block_reuse: false" if engine == "trtllm" and not block_reuse else ""


def prefix_off_error(off: str, share: float) -> InputError:
    """The refusal of a ``--prefix-hit`` of ``share`` for a plan whose prefix cache the option ``off`` turns off."""
    return InputError(f"a prefix hit ({share:g}) with {off}: the plan's prefix cache is off, so the engine reuses no "
                      "cached prefix", field="prefix_hit",
                      fix=f"drop --prefix-hit, or drop {off} from the plan to simulate the hit")


def prefix_off_finding(off: str, share: float) -> Finding:
    """What a plan search says of a plan whose prefix cache ``off`` turns off, its ``share`` simulated as 0."""
    return Finding("info", "prefix-hit", f"{100 * share:g}% of every prompt found in the prefix cache: none "
                                         f"simulated as reused, {off} turns the plan's prefix cache off")
