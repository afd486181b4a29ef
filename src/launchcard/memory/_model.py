"""vLLM's memory accounting, step by step, for one GPU of a deployment.

What the V1 engine does at start-up (and what this module mirrors):

1. load weights ("Model loading took X GiB");
2. profile one forward pass at ``max_num_batched_tokens`` plus a dummy sampler
   pass over ``max_num_seqs`` rows of full-vocabulary fp32 logits; the peak is
   the activation figure.  The sampler dominates for large vocabularies and
   got cheaper in 0.17;
3. KV pool = utilization x device memory - weights - activation peak -
   non-torch memory (NCCL / custom all-reduce buffers).  Before 0.21 CUDA
   graphs were captured afterwards and lived *outside* that budget; since
   0.21 their profiled estimate is taken out of the pool as well;
4. split the pool into blocks: layers are grouped by KV kind; one block holds
   ``block_size`` tokens for every layer of a group; hybrid models pad the
   linear-attention state page to the attention page, which is why their
   attention block size grows to hundreds of tokens;
5. print ``GPU KV cache size`` (tokens per rank, times the decode-context-
   parallel size) and the maximum concurrency at ``max_model_len``.

The old V0 engine (before 0.8) profiled a batch that held a full
``max_model_len`` sequence, so its activation peak grew with context length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from launchcard.flagspec import default_release_note
from launchcard.idmemo import IdMemo
from launchcard.limits import MaxLen, compute_capability
from launchcard.limits import max_len as derive_max_len
from launchcard.memory._arch import FULL, LINEAR, MLA, NONE, SLIDING, Arch
from launchcard.memory._hardware import Gpu
from launchcard.memory._settings import MEMORY_READ_UNTIL, GiB, Settings, parse_version
from launchcard.memory._weights import (
    CHECKPOINT_KV_DTYPE_FROM,
    checkpoint_kv_applies,
    draft_layers,
    dsa_fp8_default,
    dtype_bytes,
    kv_dtype_bytes,
    kv_layer_bytes,
    state_bytes,
    weight_bytes_per_gpu,
    without_batch_limit,
)


@dataclass(frozen=True)
class Constant:
    """A number the accounting uses that vLLM does not print: where it comes from and for which releases."""

    name: str
    value: float
    vllm: str  # releases it applies to
    source: str  # vLLM source it mirrors, or the rows it was tuned on (sample rows only)


SAMPLER_COPIES_OLD = Constant(
    "sampler_copies_before_0_17", 9.6, "<0.17",
    "tuned on sample rows obs-068 (0.10.2) and obs-021..023: dummy sampler pass (gpu_model_runner."
    "_dummy_sampler_run) peaks at ~9.6 fp32 copies of max_num_seqs x vocab logits (sort values + int64 indices, "
    "softmax, cumsum, scatter of the PyTorch top-k/top-p path)")
SAMPLER_COPIES = Constant(
    "sampler_copies", 3.8, ">=0.17",
    "tuned on sample rows obs-035, obs-043 (0.17-0.19): logits fp32 + Triton top-k/top-p buffers")
SAMPLER_COPIES_FLASHINFER = Constant(
    "sampler_copies_flashinfer", 3.5, ">=0.8 with FlashInfer's sampler in use",
    "counted in the source, not tuned: the dummy pass holds the model's 16-bit logits (0.5 fp32 copy, "
    "gpu_model_runner._dummy_sampler_run), v1/sample/sampler.py:87 makes an fp32 copy (1), and vLLM's "
    "flashinfer_sample (0.10.2 topk_topp_sampler.py:249-252, the same call through 0.32) runs FlashInfer's "
    "top_k_top_p_sampling_from_logits, which allocates the top-k masked logits (1) and their softmax (1) "
    "side by side (flashinfer-python 0.3.0 flashinfer/sampling.py:979-982, :374)")
MOE_WORKSPACE = Constant(
    "fused_moe_workspace_factor", 1.5, ">=0.8",
    "fused_moe intermediate caches (topk x (2 x inter + hidden) per token, plus the sorted-token copy); "
    "tuned on sample row obs-068")
VISION_PROFILE_TOKENS = Constant(
    "encoder_profile_tokens", 16384, ">=0.8",
    "encoder cache budget of the multimodal dummy run (scheduler encoder_cache_size default max(8192, "
    "max_num_batched_tokens) doubled for the patch tokens); not tuned")
NON_TORCH_SINGLE = Constant("non_torch_single_gib", 0.15, ">=0.8",
                            "what vLLM's profile adds outside torch past its baseline, which already holds the CUDA "
                            "context (memory_profiling's non_torch_increase): the kernels' modules and workspaces; "
                            "sample rows obs-021, obs-035")
NON_TORCH_NVLINK = Constant("non_torch_nvlink_gib", 0.55, ">=0.8",
                            "NCCL + custom all-reduce IPC buffers with NVLink/P2P; sample row obs-023")
NON_TORCH_PCIE = Constant("non_torch_pcie_gib", 0.21, ">=0.8",
                          "NCCL buffers without custom all-reduce (PCIe); sample row obs-067")
GRAPH_PER_LAYER = Constant("cuda_graph_gib_per_layer_at_67_sizes", 0.0036, ">=0.8",
                           "CUDA-graph pools by captured batch sizes (x10 for MoE layers); sample rows obs-022/023")
V0_CHUNK = Constant("v0_long_context_chunk_tokens", 2048, "0.6-0.7 (512 before 0.6)",
                    "vllm/engine/arg_utils.py (V0): chunked prefill switched on above 32K context; not tuned")
BIG_GPU_TIER = Constant("gpu_memory_tier_160_gib_from", 0.29, ">=0.29 (assumed release of vLLM PR #51726)",
                        "vllm/engine/arg_utils.py: >=160 GiB devices default to 16384 batched tokens")
MXFP4_PAD = Constant("mxfp4_pad_intermediate_hidden", 128, ">=0.10",
                     "fused_moe/oracle/mxfp4.py mxfp4_round_up_hidden_size_and_intermediate_size: "
                     "Marlin/TRT-LLM pad intermediate to 128 and hidden to 256; not tuned")

# Every constant the planner still uses, each with the releases it applies to and its source.
CONSTANTS: tuple[Constant, ...] = (
    SAMPLER_COPIES_OLD,
    SAMPLER_COPIES,
    SAMPLER_COPIES_FLASHINFER,
    MOE_WORKSPACE,
    VISION_PROFILE_TOKENS,
    NON_TORCH_SINGLE,
    NON_TORCH_NVLINK,
    NON_TORCH_PCIE,
    GRAPH_PER_LAYER,
    V0_CHUNK,
    BIG_GPU_TIER,
    MXFP4_PAD,
)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Group:
    kind: str
    layers: int  # layers of this kind on the worst rank
    bytes_per_token: float  # per layer, per rank
    blocks_per_request: int = 0
    block_size: int = 0  # tokens per block of this group (0: the plan's block size)


# the codes of the notes that state a vLLM default the plan was made with (Assumed.code; every other note is
# ASSUMED): predict drops or rewords them for another engine by these codes, never by their words
ASSUMED = "assumed"
ASSUMED_MAX_MODEL_LEN = "default-max-model-len"
ASSUMED_KV_CACHE_DTYPE = "default-kv-cache-dtype"
ASSUMED_UTILIZATION = "default-gpu-memory-utilization"
ASSUMED_ENGINE_LIMITS = "default-engine-limits"
ASSUMED_VLLM_RELEASE = "default-vllm-release"
# a TPU, Gaudi HPU or Ascend NPU planned with vLLM's CUDA accounting (vLLM serves it through a platform plugin): said
# of vLLM, so dropped for another engine, whose own findings say what its plan rests on there
ASSUMED_PLUGIN_PLATFORM = "plugin-platform"
# the length vLLM serves a config with no length key at (max_position_embeddings, n_positions, seq_length, ...)
NO_LENGTH_KEY_LEN = 2048
# the words of the ASSUMED_MAX_MODEL_LEN note that name vLLM's flag and default: ``context_default_as`` restates
# them for another engine, so the note is written and restated from these two only
_LEN_UNSET = "--max-model-len not given:"
_LEN_VLLM_DEFAULT = "(vLLM's default: the length it derives"


# the words of the ASSUMED_KV_CACHE_DTYPE note of the model-dtype default that are vLLM's (``kv_default_as``)
_KV_AUTO = "--kv-cache-dtype auto:"
_KV_VLLM_DEFAULT = ", vLLM's default); pass --kv-cache-dtype to plan another"


def kv_default_as(what: str, *, given: str, default: str, advice: str) -> str:
    """An ASSUMED_KV_CACHE_DTYPE note of the model-dtype default as another engine's launch states it: ``given``
    for vLLM's flag, ``default`` (closing the bytes-per-element parenthesis) for whose default it is, ``advice``
    for how to plan another dtype.  Any other such note (vLLM's own FP8 rule for DeepSeek Sparse Attention, which
    names vLLM itself) is returned as it is."""
    if _KV_VLLM_DEFAULT not in what:
        return what
    return what.replace(_KV_AUTO, given, 1).replace(_KV_VLLM_DEFAULT, f"{default}){advice}", 1)


def context_default_as(what: str, flag: str) -> str:
    """An ASSUMED_MAX_MODEL_LEN note as another engine's launch states it: that engine's ``flag`` not given, and
    the length the one vLLM derives, not that engine's default (its own rule is the caller's to add)."""
    return what.replace(_LEN_UNSET, f"{flag} not given:", 1).replace(_LEN_VLLM_DEFAULT, "(the length vLLM derives", 1)


@dataclass(frozen=True)
class EngineWords:
    """How another engine's launch states the planner's vLLM-worded defaults (:func:`assumption_as`)."""

    context_flag: str  # its flag for the context length
    context_rule: str  # what its own default comes from, appended to the context note
    kv_given: str  # replaces "--kv-cache-dtype auto:" in the model-dtype KV note
    kv_default: str  # whose default the model dtype is (closing the bytes-per-element parenthesis)
    kv_advice: str  # how to plan another KV dtype


def assumption_as(code: str, what: str, words: EngineWords) -> str | None:
    """A memory-plan assumption (its ``code`` and text) as it applies to another engine's launch: the context and
    KV-dtype defaults restated in ``words``; None for vLLM's memory share and batching defaults and its platform
    plugins (the engine's own replace them, in its findings); any other as it is."""
    if code in (ASSUMED_UTILIZATION, ASSUMED_ENGINE_LIMITS, ASSUMED_VLLM_RELEASE, ASSUMED_PLUGIN_PLATFORM):
        return None
    if code == ASSUMED_MAX_MODEL_LEN:
        return context_default_as(what, words.context_flag) + words.context_rule
    if code == ASSUMED_KV_CACHE_DTYPE:
        return kv_default_as(what, given=words.kv_given, default=words.kv_default, advice=words.kv_advice)
    return what


@dataclass(frozen=True)
class Accounting:
    """Raw figures; ``MemoryPlan`` is the public, rounded view."""

    gpu_memory_gib: float
    budget_gib: float
    weights_gib: float
    activation_gib: float
    non_torch_gib: float
    cuda_graph_gib: float
    kv_pool_gib: float
    kv_bytes_per_token: float  # all layers of one rank, full-attention equivalent
    block_size: int
    num_blocks: int
    kv_cache_tokens: int
    max_model_len: int
    max_concurrency: float
    request_gib: float
    estimated_max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    groups: tuple[Group, ...]
    notes: tuple[str, ...]
    problems: tuple[str, ...] = ()  # refusals of the device's own start-up checks (CPU backend)
    # (code, note) of each note that states one of vLLM's own defaults (codes ASSUMED_*): another engine's plan
    # replaces or rewords these, by code
    defaults: tuple[tuple[str, str], ...] = ()


def engine_defaults(gpu_memory_gib: float, gpu: Gpu | None, s: Settings) -> tuple[int, int]:
    """vLLM's default (max_num_seqs, max_num_batched_tokens) for ``vllm serve``."""
    if s.version < (0, 8):  # V0: no chunked prefill by default
        return s.max_num_seqs or 256, s.max_num_batched_tokens or 0
    if s.device == "cpu":
        from launchcard.memory._cpu import cpu_engine_defaults

        return cpu_engine_defaults(s)
    big = gpu_memory_gib >= 70 and not (gpu and gpu.key.startswith("a100"))
    huge = gpu_memory_gib >= 160 and s.version >= (0, 29)  # BIG_GPU_TIER
    seqs = s.max_num_seqs or (1024 if big or huge else 256)
    tokens = s.max_num_batched_tokens or (16384 if huge else 8192 if big else 2048)
    return seqs, tokens


def activation_bytes(a: Arch, s: Settings, seqs: int, tokens: int) -> float:
    tp = s.tp
    b = dtype_bytes(a, s)
    h = a.hidden_size
    inter = a.intermediate_size / tp
    fwd = tokens * (2 * inter + 4 * h + (a.num_heads + 2 * a.num_kv_heads) * a.head_dim / tp) * b
    if a.is_moe:
        # fused-MoE workspace: every token fans out to top-k experts
        fwd = max(
            fwd, tokens * max(1, a.experts_per_tok) * (2 * a.moe_intermediate_size / tp + h) * b * MOE_WORKSPACE.value
        )
    copies = (SAMPLER_COPIES_OLD if s.version < (0, 17) else SAMPLER_COPIES).value
    if s.flashinfer_sampler:
        copies = min(copies, SAMPLER_COPIES_FLASHINFER.value)
    sampler = copies * seqs * a.vocab_size * 4 if a.has_lm_head else 0.0
    vision = 0.0
    if a.vision_params and not s.language_model_only:
        # encoder-cache profiling: one max-size image batch through the tower
        enc = VISION_PROFILE_TOKENS.value
        vision = max(tokens, enc) * h * b * 2 + enc * 1152 * b * 8 / tp
    return max(fwd, sampler, vision)


def non_torch_gib(s: Settings, gpu: Gpu | None) -> float:
    if s.tp * s.pp * s.dp == 1:
        return NON_TORCH_SINGLE.value
    if s.gpu_p2p is False and s.tp > 1:
        # no peer access: vLLM's custom all-reduce (the TP group's alone: 0.10.1.1 device_communicators/
        # cuda_communicator.py:26-32) returns before creating its IPC buffers (custom_all_reduce.py:146-151, "your
        # platform lacks GPU P2P capability"), so the figure measured without custom all-reduce applies whatever
        # link the catalog names
        return NON_TORCH_PCIE.value
    nvlink = gpu is not None and "nvlink" in gpu.interconnect.lower() and "bridge" not in gpu.interconnect.lower()
    return (NON_TORCH_NVLINK if nvlink else NON_TORCH_PCIE).value  # custom all-reduce needs NVLink/P2P


def cuda_graph_gib(a: Arch, s: Settings, seqs: int) -> float:
    if s.enforce_eager or s.device == "cpu":
        return 0.0
    sizes = min(67, 3 + max(1, min(seqs, 512)) // 8)
    per_layer = GRAPH_PER_LAYER.value * (10 if a.is_moe else 1)
    return round(a.num_layers / s.pp * per_layer * sizes / 67, 3)


# First release assumed to derive vLLM's mamba_cache_mode from prefix caching (MambaModelConfig:
# "all" for models whose Mamba2 state supports prefix caching, "align" for the others, such as
# gated-delta-net layers; "none" without prefix caching).  Before it, hybrids kept one state
# block per request (two with prefix caching from 0.11).
MAMBA_CACHE_MODE_FROM = (0, 14)


def mamba_cache_mode(a: Arch, s: Settings) -> str:
    """"none", "align", "all", or "legacy" (releases before mamba_cache_mode)."""
    if s.enable_prefix_caching is False:
        return "none"
    if s.version < MAMBA_CACHE_MODE_FROM:
        return "legacy"
    return "all" if a.linear_attn is not None and a.linear_attn.kind == "mamba2" else "align"


def state_blocks_per_request(a: Arch, s: Settings, max_len: int, block: int) -> int:
    """State pages one request holds in a linear-attention group (MambaSpec.max_memory_usage_bytes)."""
    mode = mamba_cache_mode(a, s)
    if mode == "all":
        return _cdiv(max_len, block)  # a state is kept at every block boundary, like KV
    spec = s.num_speculative_tokens if s.speculative_method else 0
    if mode == "align" or (mode == "legacy" and s.enable_prefix_caching is not False and s.version >= (0, 11)):
        return 2 + spec  # the running state and the last block-aligned one
    return 1 + spec


def _block_size(a: Arch, s: Settings, gpu: Gpu | None, attn_tok: float, state: float) -> int:
    if s.block_size:
        base = s.block_size
    elif s.device == "cpu":
        base = 16 if MLA in a.layer_kinds else 128  # the CPU MLA kernel is built for 16 only
    elif MLA in a.layer_kinds:
        base = 128 if gpu is not None and (compute_capability(gpu.compute_capability) or (0, 0))[0] == 10 else 64
    else:
        base = 16
    if state and attn_tok:
        # hybrid: grow the attention block until its page holds one state page
        align = 64 if MLA in a.layer_kinds else 16
        la = a.linear_attn
        if la is not None and la.chunk_size and mamba_cache_mode(a, s) == "all":
            # prefix-cached Mamba2 state: the block is also a whole number of SSD chunks
            # (lcm of the chunk and the kernel alignment), so states land on block ends
            chunk = math.lcm(la.chunk_size, max(align, s.block_size or 0))
            return chunk * _cdiv(_cdiv(int(state), int(attn_tok)), chunk)
        return (
            align * _cdiv(int(state), int(align * attn_tok))
            if not s.block_size
            else max(base, align * _cdiv(int(state), int(align * attn_tok)))
        )
    return base


def _layout(a: Arch, s: Settings, gpu: Gpu | None) -> _Layout:
    """:func:`account`'s notes, weights and KV layout (what it derives before the budget)."""
    # the config's missing (or unknown) dtype is an assumption only while --dtype is auto: a dtype given is planned
    notes: list[str] = [n for n in a.assumptions
                        if (s.dtype or "auto").lower() == "auto" or n != a.precision_note]
    defaults: list[tuple[str, str]] = []

    def default(code: str, note: str) -> None:
        notes.append(note)
        defaults.append((code, note))

    v = s.version
    latest = f"{MEMORY_READ_UNTIL[0]}.{MEMORY_READ_UNTIL[1]}"
    newer = f"newer than the newest release the memory planner reads ({latest}); planned with {latest}'s accounting"
    if not s.vllm_version:  # the one default every surface takes (flagspec.default_release), said as assumed
        default(ASSUMED_VLLM_RELEASE, default_release_note("vllm") + (f"; {newer}" if v > MEMORY_READ_UNTIL else ""))
    elif v > MEMORY_READ_UNTIL:  # the accounting read from releases up to MEMORY_READ_UNTIL; a newer one is not read
        notes.append(f"vLLM {s.vllm_version}: {newer}")
    limit = model_max_len(a, s)
    # no length key in the config: vLLM assumes 2048 and warns (0.32.0 vllm/config/model.py L2571,
    # _get_and_verify_max_len's default_max_len)
    max_len = s.max_model_len or (limit.derived if limit else None) or a.max_position_embeddings or NO_LENGTH_KEY_LEN
    if not s.max_model_len:
        default(
            ASSUMED_MAX_MODEL_LEN,
            f"{_LEN_UNSET} {max_len} "
            + (
                f"{_LEN_VLLM_DEFAULT} from the config, {limit.how()})"
                if limit
                else f"(the config has no length key: vLLM assumes {NO_LENGTH_KEY_LEN}, vllm/config/model.py "
                     "_get_and_verify_max_len)"
            )
        )
    # --- weights -------------------------------------------------------
    wbytes, wnotes = weight_bytes_per_gpu(a, s)
    notes += wnotes
    if dsa_fp8_default(a, s):
        default(ASSUMED_KV_CACHE_DTYPE,
                "--kv-cache-dtype auto: vLLM 0.11.0 serves a DeepSeek Sparse Attention checkpoint with its FP8 "
                "record (fp8_ds_mla, 656 bytes a layer; model_executor/models/config.py 0.11.0 L416-422); "
                "pass --kv-cache-dtype bfloat16 for the model dtype")
    elif (s.kv_cache_dtype or "auto").lower() == "auto" and not checkpoint_kv_applies(a, s):
        default(ASSUMED_KV_CACHE_DTYPE,
                f"{_KV_AUTO} KV cache in the model dtype ({kv_dtype_bytes(a, s)} bytes per element{_KV_VLLM_DEFAULT}")
    if checkpoint_kv_applies(a, s):
        notes.append(
            "KV cache FP8: --kv-cache-dtype auto takes the checkpoint's ModelOpt KV scheme "
            f"(vLLM >= {CHECKPOINT_KV_DTYPE_FROM[0]}.{CHECKPOINT_KV_DTYPE_FROM[1]} assumed)"
        )
    weights = wbytes / GiB
    # --- KV layout -----------------------------------------------------
    kinds = [k for k in a.layer_kinds if k != NONE]  # MLP / MoE-only layers hold no cache
    kinds += [MLA if MLA in kinds else FULL] * draft_layers(a, s)  # MTP / EAGLE layers keep their own KV
    per_stage = _cdiv(len(kinds), s.pp)
    counts: dict[str, int] = {}
    for k in kinds:
        counts[k] = counts.get(k, 0) + 1
    attn_kinds = [k for k in (FULL, MLA, SLIDING) if counts.get(k)]
    per_tok = {k: kv_layer_bytes(a, s, k) for k in attn_kinds}
    state = state_bytes(a, s) if counts.get(LINEAR) else 0.0
    unify_sw = v < (0, 10) and SLIDING in counts and len(attn_kinds) > 1  # no hybrid allocator yet
    attn_tok = max(per_tok.values()) if per_tok else 0.0
    bs = _block_size(a, s, gpu, attn_tok, state)
    page = max([bs * t for t in per_tok.values()] + [state])
    return _Layout(tuple(notes), tuple(defaults), limit, max_len, weights, tuple(kinds), per_stage, counts,
                   tuple(attn_kinds), per_tok, unify_sw, bs, page)


# the arch, with the GPU (pinned) and the settings without max_num_seqs -> _layout; see account
_LAYOUTS: IdMemo[Arch, _Layout] = IdMemo(4096)


class _Layout(NamedTuple):
    """What :func:`account` derives before the memory budget: none of it reads the batch limit."""

    notes: tuple[str, ...]
    defaults: tuple[tuple[str, str], ...]
    limit: MaxLen | None
    max_len: int
    weights: float
    kinds: tuple[str, ...]
    per_stage: int
    counts: dict[str, int]  # read only
    attn_kinds: tuple[str, ...]
    per_tok: dict[str, float]  # read only
    unify_sw: bool
    bs: int
    page: float


def account(a: Arch, s: Settings, *, gpu: Gpu | None, gpu_memory_gib: float) -> Accounting:
    # what comes before the budget is remembered for every max_num_seqs at once (a plan search plans one model at
    # ~8 limits), keyed by the arch's and GPU's identity, kept with the value so that a reused id never hits
    lay = _LAYOUTS.get(a, lambda arch: _layout(arch, s, gpu),
                       s if s.max_num_seqs is None else without_batch_limit(s), pin=gpu)
    notes, defaults = list(lay.notes), list(lay.defaults)
    limit, max_len, weights, kinds, per_stage = lay.limit, lay.max_len, lay.weights, lay.kinds, lay.per_stage
    counts, attn_kinds, per_tok, unify_sw = lay.counts, lay.attn_kinds, lay.per_tok, lay.unify_sw
    bs, page = lay.bs, lay.page

    def default(code: str, note: str) -> None:
        notes.append(note)
        defaults.append((code, note))

    v = s.version
    # --- memory budget -------------------------------------------------
    seqs, tokens = engine_defaults(gpu_memory_gib, gpu, s)
    if s.gpu_memory_utilization is None:
        default(ASSUMED_UTILIZATION, f"--gpu-memory-utilization not given: {s.utilization:g}, the default of vLLM "
                                     f"{v[0]}.{v[1]} ({_utilization_basis(v)}); pass it to plan another share")
    # only the limits not given are defaults (one given is the user's, not vllm serve's)
    missing = [(name, value) for name, value, given in (("max_num_seqs", seqs, s.max_num_seqs),
                                                        ("max_num_batched_tokens", tokens, s.max_num_batched_tokens))
               if not given]
    if missing:
        default(
            ASSUMED_ENGINE_LIMITS,
            "engine defaults for this device: " + ", ".join(f"{n} {v}" for n, v in missing) + " "
            + ("(vllm serve's CPU default per TP x PP worker)" if s.device == "cpu"
               else "(vllm serve's default for its memory size)")
            + "; pass " + " / ".join(f"--{n.replace('_', '-')}" for n, _ in missing) + " to give the real "
            + ("ones" if len(missing) > 1 else "one")
        )
    if v < (0, 8) and not s.max_num_batched_tokens:
        # V0 turned chunked prefill on by itself above 32K context (no sliding
        # window, no multimodal) and then profiled a 2048-token chunk
        # (512 before 0.6); otherwise it profiled one full-length sequence.
        long_ctx = max_len > 32768 and SLIDING not in a.layer_kinds and not a.vision_params
        tokens = (int(V0_CHUNK.value) if v >= (0, 6) else 512) if long_ctx else max(tokens, max_len)
    act = activation_bytes(a, s, seqs, tokens) / GiB
    nt = non_torch_gib(s, gpu)
    graphs = cuda_graph_gib(a, s, seqs)
    problems: tuple[str, ...] = ()
    if s.device == "cpu":
        from launchcard.memory._cpu import cpu_budget

        nt = 0.0
        cpu = cpu_budget(s, gpu, gpu_memory_gib, weights, act)
        budget, pool, problems = cpu.budget_gib, cpu.pool_gib, cpu.problems
        notes += cpu.notes
    else:
        budget = s.utilization * gpu_memory_gib
        pool = budget - weights - act - nt
        if v >= (0, 21):
            # since 0.21 the worker profiles CUDA-graph memory first and takes it out of
            # the KV pool (gpu_worker.determine_available_memory,
            # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 by default)
            pool -= graphs
    pool_bytes = max(0, int(pool * GiB))
    # --- groups and blocks ---------------------------------------------
    groups: list[Group] = []
    if unify_sw or len(counts) == 1 or (not counts.get(LINEAR) and len(attn_kinds) == 1):
        n_rank = min(per_stage, len(kinds))
        tok = sum(per_tok.get(k, 0.0) * c for k, c in counts.items()) / max(1, len(kinds))
        block_bytes = int(bs * tok * n_rank)
        num_blocks = pool_bytes // block_bytes if tok else 0
        groups.append(Group(attn_kinds[0] if attn_kinds else LINEAR, n_rank, tok, _cdiv(max_len, bs)))
        n_groups = 1
        per_request_blocks = _cdiv(max_len, bs)
    else:
        lo, hi = min(counts.values()), max(counts.values())
        gsize = hi if hi < lo * 1.5 else lo
        gsize_rank = _cdiv(gsize, s.pp)
        block_bytes = int(page * gsize_rank)
        num_blocks = pool_bytes // block_bytes
        n_groups = 0
        per_request_blocks = 0
        for k, c in counts.items():
            ng = _cdiv(c, gsize)
            # every group's page is the largest one (kv_cache_utils.unify_kv_cache_spec_page_size):
            # a kind with a smaller page per token (Gemma 4's global layers: 4 KV heads of 512
            # against 16 of 256) gets a proportionally larger block, not a larger cost per token
            kbs = max(bs, int(page // (bs * per_tok[k])) * bs) if per_tok.get(k) else bs
            if k == LINEAR:
                need = state_blocks_per_request(a, s, max_len, bs)
            elif k == SLIDING and a.sliding_window:
                need = _cdiv(min(a.sliding_window - 1 + tokens, max_len), kbs) + 1
            else:
                need = _cdiv(max_len, kbs * s.dcp)
            groups.append(Group(k, c, per_tok.get(k, 0.0), need, kbs))
            n_groups += ng
            per_request_blocks += ng * need
    if n_groups == 1:
        per_request_blocks = _cdiv(max_len, bs * s.dcp)
    concurrency = num_blocks / per_request_blocks if per_request_blocks else 0.0
    # newer engines (0.21+) print the pool as tokens servable at max_model_len:
    # concurrency x max_model_len, which for hybrids depends on that length
    kv_tokens = int(concurrency * max_len) if v >= (0, 21) else num_blocks // max(1, n_groups) * bs * s.dcp
    gsize_bytes = page * (gsize_rank if n_groups > 1 else 1)
    request_bytes = per_request_blocks * (
        gsize_bytes if n_groups > 1 else bs * groups[0].bytes_per_token * groups[0].layers
    )
    est_len = max_len
    if request_bytes > pool_bytes:
        est_len = _estimate_len(pool_bytes, groups, n_groups, gsize_bytes, bs, s, tokens, a, max_len)
    if limit is not None and not s.allow_long_max_model_len:
        est_len = min(est_len, limit.limit)  # never a length vLLM refuses at start-up
    # one figure feeds every rendering: a block of ``bs`` tokens costs block_bytes on this rank,
    # so num_blocks x bs x bytes/token is the allocated pool (never more than the budget's rest)
    tok_all = block_bytes / bs if bs else 0.0
    return Accounting(
        gpu_memory_gib=gpu_memory_gib,
        budget_gib=budget,
        weights_gib=weights,
        activation_gib=act,
        non_torch_gib=nt,
        cuda_graph_gib=graphs,
        kv_pool_gib=max(0.0, pool),
        kv_bytes_per_token=tok_all,
        block_size=bs,
        num_blocks=int(num_blocks),
        kv_cache_tokens=int(kv_tokens),
        max_model_len=max_len,
        max_concurrency=concurrency,
        request_gib=request_bytes / GiB,
        estimated_max_model_len=est_len,
        max_num_seqs=seqs,
        max_num_batched_tokens=tokens,
        groups=tuple(groups),
        notes=tuple(notes),
        problems=problems,
        defaults=tuple(defaults),
    )


def model_max_len(a: Arch, s: Settings) -> MaxLen | None:
    """The longest --max-model-len vLLM accepts for this model at the plan's vLLM version (None: no length key)."""
    if not a.length_config:
        return None
    # by what it reads (a plan search plans one model ~1,000 times); its fields may hold a dict (rope_scaling), so
    # keyed by their identity
    version = s.vllm_version
    return _MAX_LEN.get(a.length_config, lambda config: derive_max_len(dict(config), version), version)


_MAX_LEN: IdMemo[tuple[tuple[str, Any], ...], MaxLen | None] = IdMemo(256)


def _estimate_len(
    pool: int,
    groups: list[Group],
    n_groups: int,
    gbytes: float,
    bs: int,
    s: Settings,
    tokens: int,
    a: Arch,
    max_len: int,
) -> int:
    """Largest max_model_len whose one request fits the pool (vLLM's binary search)."""

    def need(length: int) -> float:
        if n_groups == 1:
            g = groups[0]
            return _cdiv(length, bs * s.dcp) * bs * g.bytes_per_token * g.layers
        blocks = 0
        for g in groups:
            ng = n_groups if len(groups) == 1 else None
            gbs = g.block_size or bs
            if g.kind == LINEAR:
                b = state_blocks_per_request(a, s, length, gbs)
            elif g.kind == SLIDING and a.sliding_window:
                b = _cdiv(min(a.sliding_window - 1 + tokens, length), gbs) + 1
            else:
                b = _cdiv(length, gbs * s.dcp)
            blocks += b * (ng or max(1, math.ceil(g.layers / max(1, min(x.layers for x in groups)))))
        return blocks * gbytes

    lo, hi, best = 1, max_len, 0
    while lo <= hi:
        mid = (lo + hi) // 2
        if need(mid) <= pool:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


@lru_cache(maxsize=64)
def _utilization_basis(v: tuple[int, int]) -> str:
    """Where the default --gpu-memory-utilization of vLLM ``v`` comes from: that release's captured parser spec, or,
    for a release launchcard holds no spec of, the captured releases' rule (never "captured" for one it lacks)."""
    from launchcard.flagspec import shipped_index
    from launchcard.memory._settings import UTILIZATION_092_FROM

    if any(parse_version(r) == v for r in shipped_index().get("vllm", ())):
        return "captured parser spec"
    cut = ".".join(map(str, UTILIZATION_092_FROM))
    return f"no captured parser spec of {v[0]}.{v[1]}: the captured releases' rule, 0.9 before {cut}, 0.92 from it"

