"""Weight bytes per GPU under TP / PP / EP / DP, component by component.

vLLM shards attention heads and MLP columns by TP, but a KV projection is
replicated once TP exceeds the KV head count, and MLA's down-projection to the
latent is replicated on every rank.  Routed experts are split across the
expert-parallel group (TP x DP) with ``--enable-expert-parallel`` and sharded
by TP otherwise.  The vocabulary is padded to a multiple of 64 and split by TP;
a tied lm_head is one tensor, not two.  Under PP each stage holds its slice of
layers, the first stage the embedding and the last the lm_head; the plan
reports the heaviest stage.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from launchcard.idmemo import IdMemo
from launchcard.limits import experts_per_rank
from launchcard.memory._arch import FULL, LINEAR, MLA, NONE, SLIDING, Arch
from launchcard.memory._quant import Quant
from launchcard.memory._settings import GiB, Settings, settings_with


def dtype_bytes(arch: Arch, s: Settings) -> int:
    """Bytes per element of the weights and activations vLLM runs: --dtype float32 keeps 4; --dtype auto downcasts
    a float32 checkpoint to the platform's first supported dtype (vLLM 0.32.0 vllm/config/model.py
    _resolve_auto_dtype L2422-2424, bfloat16 on CUDA) from 0.6 on."""
    d = (s.dtype or "auto").lower()
    if d in ("float32", "fp32", "float"):
        return 4
    if d in ("auto",) and arch.torch_dtype == "float32" and s.version < (0, 6):
        return 4
    return 2


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Components:
    """Parameter counts on one rank (or the full model with tp = pp = 1)."""

    embed: float
    lm_head: float
    attn: float
    linear_attn: float
    mlp: float
    shared_experts: float
    experts: float
    router: float
    vision: float

    def bytes(self, quant: Quant, wbytes: int) -> float:
        total = 0.0
        for name in ("attn", "linear_attn", "mlp", "shared_experts", "experts"):
            n = getattr(self, name)
            total += n * quant.bytes_for(name, wbytes)
        return total + (self.embed + self.lm_head + self.router + self.vision) * wbytes


def _attn_params(a: Arch, kind: str, tp: int) -> float:
    h = a.hidden_size
    if kind == NONE:
        return 0.0  # an MLP / MoE-only layer (Nemotron-H "-" / "E")
    if kind == MLA:
        qk = a.qk_nope_head_dim + a.qk_rope_head_dim
        heads = a.num_heads / tp
        q = (h * a.q_lora_rank + a.q_lora_rank * heads * qk) if a.q_lora_rank else h * heads * qk
        kv_a = h * (a.kv_lora_rank + a.qk_rope_head_dim)  # replicated on every rank
        kv_b = a.kv_lora_rank * heads * (a.qk_nope_head_dim + a.v_head_dim)
        return q + kv_a + kv_b + heads * a.v_head_dim * h + _indexer_params(a)
    if kind == LINEAR and a.linear_attn is not None:
        la = a.linear_attn
        if la.kind == "mamba1":  # in_proj, conv1d, x_proj, dt_proj, A and D, out_proj of mamba_mixer.py
            inner, ds, dt = la.num_v_heads, la.ssm_state_size, la.num_k_heads
            return (h * 2 * inner + inner * la.conv_kernel + inner * (dt + 2 * ds) + dt * inner
                    + inner * (ds + 1) + inner * h) / tp
        if la.kind == "mamba2":
            inner = la.num_v_heads * la.v_head_dim
            proj = 2 * inner + 2 * la.n_groups * la.ssm_state_size + la.num_v_heads
            conv = (inner + 2 * la.n_groups * la.ssm_state_size) * la.conv_kernel
            return (h * proj + conv + inner * h) / tp
        kd, vd = la.num_k_heads * la.k_head_dim, la.num_v_heads * la.v_head_dim
        return (h * (2 * kd + 2 * vd + 2 * la.num_v_heads) + (2 * kd + vd) * la.conv_kernel + vd * h) / tp
    heads, kvh, hd = a.num_heads, a.num_kv_heads, a.head_dim
    if kind == FULL and a.full_head_dim:
        # Gemma 4 global layers: with attention_k_eq_v the checkpoint has no v_proj, but
        # vLLM's QKVParallelLinear keeps the V slot and loads K into it (gemma4.py), so
        # the rank holds both
        hd, kvh = a.full_head_dim, a.full_kv_heads or kvh
    kv_rank = max(1.0, kvh / tp)  # KV heads replicate once TP exceeds them
    return h * heads * hd / tp * 2 + 2 * h * kv_rank * hd


def _indexer_params(a: Arch) -> float:
    """The DSA lightning indexer's projections, whole on every rank: vLLM's ``Indexer`` builds ``wq_b`` (q latent ->
    heads x dim), ``wk`` (hidden -> dim) and ``weights_proj`` (hidden -> heads) as ReplicatedLinear ("no tensor
    parallel, just replicated", vllm/model_executor/models/deepseek_v2.py, 0.13.0 L821)."""
    if not a.index_topk:
        return 0.0
    return (a.q_lora_rank * a.index_n_heads * a.index_head_dim + a.hidden_size * a.index_head_dim
            + a.hidden_size * a.index_n_heads)


def _round_up(x: int, m: int) -> int:
    return _cdiv(x, m) * m


def moe_split(s: Settings) -> tuple[int, int]:
    """(ranks the experts are divided among, ranks each expert's intermediate size is divided among) on one rank.

    vLLM: with --enable-expert-parallel the experts go whole to the TP x DP ranks; without it, under
    --data-parallel-size > 1 as well, FusedMoEParallelConfig.make flattens TP across DP (vllm 0.11.0
    model_executor/layers/fused_moe/config.py ``flatten_tp_across_dp``: tp_size = dp_size x tp_size; 0.24.0 the same
    with PCP), so every rank holds 1/(tp x dp) of every expert and its MoE runs every DP rank's tokens
    (ServingFacts.moe_dp).  ``Settings.moe_dp_flat`` False keeps the split over ``tp`` (engines not read)."""
    if s.expert_parallel:
        return s.tp * s.dp, 1
    return 1, s.tp * (s.dp if s.moe_dp_flat else 1)



def experts_on_rank(a: Arch, s: Settings) -> float:
    """Routed experts one rank holds: the heaviest rank's where the group does not divide them (vLLM's placement,
    limits.VLLM_EP_RULE); SGLang's MoE-TP over a DP-attention group (``Settings.moe_tp_group``) splits every expert,
    an exact share."""
    ep = moe_split(s)[0]
    return a.num_experts / ep if s.moe_tp_group else experts_per_rank(a.num_experts, ep)

# vLLM's MXFP4 MoE backends on CUDA (Marlin on GPUs without native FP4, TRT-LLM on Blackwell) allocate the experts
# with the per-rank intermediate size rounded up to 128 and the hidden size up to 256
# (``mxfp4_round_up_hidden_size_and_intermediate_size``, vLLM 0.10-0.32): (intermediate multiple, hidden multiple)
VLLM_MXFP4_PAD = (128, 256)


def _mlp_split(a: Arch, layer: int, s: Settings,
               pad_mxfp4: tuple[int, int] | None = None) -> tuple[float, float, float, float]:
    """(dense mlp, shared experts, routed experts, router) params of one layer on one rank.

    MXFP4 experts are allocated padded (``pad_mxfp4``: the multiples the per-rank intermediate and the hidden size
    are rounded up to): vLLM's ``VLLM_MXFP4_PAD``, e.g. gpt-oss 2880 -> 3072 hidden, 720 -> 768 intermediate at TP 4;
    an SGLang plan's own (``Settings.mxfp4_pad``, memory._sglang_mxfp4.sglang_mxfp4_pad).
    """
    h, tp = a.hidden_size, s.tp
    # SGLang DP attention (dense_tp): dense MLPs and shared experts over the whole TP group, or whole on every rank
    # (Settings.dense_local)
    mlp_tp = (1 if "mlp" in s.dense_local else s.dense_tp) if s.dense_tp else tp
    shared_tp = (1 if "shared_experts" in s.dense_local else s.dense_tp) if s.dense_tp else tp
    if not a.is_moe or layer < a.dense_layers:
        return 3 * h * a.intermediate_size / mlp_tp, 0.0, 0.0, 0.0
    dense = 3 * h * a.intermediate_size / mlp_tp if a.moe_dense_mlp else 0.0  # Gemma 4: MLP beside the MoE block
    inter_tp = moe_split(s)[1]
    experts_rank = experts_on_rank(a, s)
    inter_rank = a.moe_intermediate_size / inter_tp
    hid = float(h)
    if pad_mxfp4:
        inter_rank = float(_round_up(math.ceil(inter_rank), pad_mxfp4[0]))
        hid = float(_round_up(h, pad_mxfp4[1]))
    routed = experts_rank * 3 * hid * inter_rank
    return dense, 3 * h * a.shared_expert_intermediate / shared_tp, routed, h * a.num_experts


def components(a: Arch, s: Settings, *, stage: int = 0, include_mtp: bool = False,
               quant: Quant | None = None) -> Components:
    """Parameters held by one rank of PP stage ``stage`` (the full model when tp = pp = 1)."""
    tp, pp = s.tp, s.pp
    n = a.num_layers
    per = _cdiv(n, pp)
    layers = range(stage * per, min(n, (stage + 1) * per))
    vocab_pad = _cdiv(a.vocab_size, 64) * 64
    emb = vocab_pad * a.hidden_size / tp
    first, last = stage == 0, stage == pp - 1
    # SGLang DP attention (dense_tp): the embedding whole on every rank, the LM head over the whole TP group; either
    # over the attention's tp where Settings.dense_local says
    whole = vocab_pad * a.hidden_size
    embed = ((emb if "embed" in s.dense_local else whole) if s.dense_tp else emb) if first else 0.0
    lm = 0.0
    if a.has_lm_head and last and (not a.tie_word_embeddings or not first):
        lm = (emb if "lm_head" in s.dense_local else whole / s.dense_tp) if s.dense_tp else emb
    attn = lin = mlp = shared = experts = router = 0.0
    # (BF16 experts upcast from MXFP4 keep the shape they were allocated at: Settings.mxfp4_upcast)
    pad = ((s.mxfp4_pad or VLLM_MXFP4_PAD)
           if (quant is not None and quant.name == "mxfp4" and "experts" in quant.covers
               and (quant.expert_bytes_per_param is None or s.mxfp4_upcast) and s.device != "cpu") else None)
    extra = list(layers)
    if include_mtp and last:
        extra += [n - 1] * a.mtp_layers  # an MTP block is one more decoder layer
    for i in extra:
        kind = a.layer_kinds[i] if i < n else FULL
        p = _attn_params(a, kind, tp)
        if kind == LINEAR:
            lin += p
        else:
            attn += p
        d, sh, ex, r = _mlp_split(a, i, s, pad_mxfp4=pad)
        mlp, shared, experts, router = mlp + d, shared + sh, experts + ex, router + r
    vision = a.vision_params / tp if first and not s.language_model_only else 0.0
    return Components(embed, lm, attn, lin, mlp, shared, experts, router, vision)


# Methods whose format vLLM reads from the checkpoint (config.json ``quantization_config``, else a quant config
# file such as quantize_config.json / hf_quant_config.json; model_loader/weight_utils.py get_quant_config): with
# no quantization_config in the config.json at hand, their bits, groups and coverage are unknown here.
CHECKPOINT_FORMAT_METHODS = frozenset({
    "awq", "auto_awq", "awq_marlin", "gptq", "auto_gptq", "gptq_marlin", "gptq_marlin_24", "gptq_bitblas",
    "compressed-tensors", "modelopt", "modelopt_fp4", "modelopt_mxfp8", "modelopt_mixed", "quark", "moe_wna16",
    "gguf", "marlin", "aqlm", "bitblas", "qqq", "squeezellm", "humming", "deepseek_v4_fp8", "petit_nvfp4",
    "gpt_oss_mxfp4", "fp_quant", "inc"})


def effective_quant(a: Arch, s: Settings) -> tuple[Quant, str | None]:
    """The weight format planned, and an assumption to report when the format had to be supplied: MXFP4 experts
    the engine converts to BF16 at load (``Settings.mxfp4_upcast``) at 2 bytes a parameter."""
    q, why = _format(a, s)
    if s.mxfp4_upcast and q.name == "mxfp4" and "experts" in q.covers and q.expert_bytes_per_param is None:
        from launchcard.memory import _quant

        return _quant.with_expert_dtype(q, "bf16"), why
    return q, why


def _format(a: Arch, s: Settings) -> tuple[Quant, str | None]:
    """The weight format of the checkpoint or the command (see :func:`effective_quant`)."""
    from launchcard.memory import _quant

    if a.quant.is_quantized:
        return a.quant, None
    method = (s.quantization or "").lower()
    if not method or method in ("none", "auto"):
        return a.quant, None
    if method in CHECKPOINT_FORMAT_METHODS:
        fix = ("give the checkpoint's config.json with its quantization_config (or --safetensors-index for "
               "exact weight bytes)")
        try:
            q = _quant.scheme(method)
        except ValueError:
            return _quant.NONE, (
                f"weights planned 16-bit, unknown format: --quantization {s.quantization} reads its scheme from the "
                f"checkpoint (quantization_config or its quant config file), and this config.json has no "
                f"quantization_config; {fix}")
        return q, (f"weights planned as {q.detail}, the usual packing, not read: --quantization {s.quantization} "
                   f"reads bits and group size from the checkpoint, and this config.json has no "
                   f"quantization_config; {fix}")
    try:
        q = _quant.scheme(method)
    except ValueError:
        q = _quant.from_text(method)
    if not q.is_quantized:
        return q, (f"weights planned 16-bit: launchcard has no packing for --quantization {s.quantization} "
                   "(unknown format); pass --safetensors-index for exact weight bytes")
    return q, None  # an online method: vLLM quantizes the 16-bit checkpoint at load (fp8, int8, ...)


EAGLE3_DRAFT_VOCAB = 32000  # draft_vocab_size of the published EAGLE3 heads (Llama 3.x, Qwen3)


def draft_kind(s: Settings) -> str | None:
    """"eagle3", "eagle", "mtp", "draft" (a separate checkpoint) or None, from --speculative-config."""
    m = (s.speculative_method or "").lower()
    if not m or m in ("ngram", "suffix", "ngram_gpu"):
        return None
    for kind in ("eagle3", "eagle", "mtp"):
        if kind in m:
            return kind
    return "draft"


def draft_layers(a: Arch, s: Settings) -> int:
    """Decoder layers the drafter adds to the KV cache (on the last PP stage)."""
    kind = draft_kind(s)
    if kind == "mtp":
        return a.mtp_layers
    return 1 if kind in ("eagle", "eagle3") else 0


def draft_bytes_per_gpu(a: Arch, s: Settings) -> tuple[float, list[str]]:
    """Weights of an EAGLE / EAGLE3 head on one rank (draft TP = target TP, 16-bit).

    vLLM loads the head next to the target and shares the target's embedding
    (and, for EAGLE, its lm_head).  The head is one decoder layer of the
    target's width; EAGLE fuses [embedding, hidden] with a 2h x h fc, EAGLE3
    fuses three hidden states with a 3h x h fc, feeds 2h into its attention
    and has its own lm_head over a reduced draft vocabulary.
    """
    kind = draft_kind(s)
    if kind not in ("eagle", "eagle3"):
        if kind == "draft":
            return 0.0, [(f"draft model {s.speculative_method!r}: its weights and KV are not counted "
                          "(pass the draft's config to plan it)")]
        return 0.0, []
    tp, h = s.tp, a.hidden_size
    wb = dtype_bytes(a, s)
    layer = _attn_params(a, FULL, tp) + 3 * h * a.intermediate_size / tp
    if kind == "eagle3":
        qkv_extra = h * (a.num_heads * a.head_dim + 2 * max(1.0, a.num_kv_heads / tp) * a.head_dim) / tp
        params = layer + qkv_extra + 3 * h * h / tp + EAGLE3_DRAFT_VOCAB * h / tp
        note = (f"EAGLE3 draft: one decoder layer of the target's width, a 3h x h fc and a {EAGLE3_DRAFT_VOCAB}-token "
                "lm_head (draft config not read)")
    else:
        params = layer + 2 * h * h / tp
        note = "EAGLE draft: one decoder layer of the target's width and a 2h x h fc (draft config not read)"
    return params * wb, [note]


_T = TypeVar("_T")
# the arch, with (function, settings without max_num_seqs) -> the function's value; see _per_batch_limits
_MEMO: IdMemo[Arch, Any] = IdMemo(4096)


_LAST: list[tuple[Settings, Settings]] = []


def without_batch_limit(s: Settings) -> Settings:
    """``s`` without its batch limit; the last one asked again (one plan's three splits) costs no copy."""
    last = _LAST[0] if _LAST else None  # one read: another thread (the web server's) may replace it meanwhile
    if last is not None and last[0] is s:
        return last[1]
    pair = (s, settings_with(s, max_num_seqs=None))
    _LAST[:] = [pair]
    return pair[1]


def _per_batch_limits(fn: Callable[[Arch, Settings], _T]) -> Callable[[Arch, Settings], _T]:
    """``fn`` remembered for every ``max_num_seqs`` at once: nothing in this module reads the batch limit (the
    weights and the KV bytes a token takes do not follow it), and a plan search plans one model at each of ~8
    limits.  Keyed by the arch's identity (:class:`launchcard.idmemo.IdMemo`), one memo for every function."""

    def memo(a: Arch, s: Settings) -> _T:
        extra = (fn, s if s.max_num_seqs is None else without_batch_limit(s))
        value: _T = _MEMO.get(a, lambda arch: fn(arch, s), extra)
        return value

    memo.__doc__, memo.__name__ = fn.__doc__, fn.__name__
    return memo


@_per_batch_limits
def _stages(a: Arch, s: Settings) -> tuple[Components, ...]:
    """Each PP stage's :func:`components` in the weight format planned (:func:`effective_quant`), the MTP block on the
    last stage where a MTP drafter runs: what the weight bytes and the weight split both read (once per plan)."""
    quant, _ = effective_quant(a, s)
    mtp = bool(s.speculative_method and "mtp" in s.speculative_method.lower() and a.mtp_layers)
    return tuple(components(a, s, stage=k, include_mtp=mtp, quant=quant) for k in range(s.pp))


def weight_bytes_per_gpu(a: Arch, s: Settings) -> tuple[float, list[str]]:
    """Bytes of weights on the heaviest rank, and notes on how they were counted (a list of the caller's own)."""
    wbytes, notes = _weight_bytes_per_gpu(a, s)
    return wbytes, list(notes)


@_per_batch_limits
def _weight_bytes_per_gpu(a: Arch, s: Settings) -> tuple[float, tuple[str, ...]]:
    wbytes, notes = _weight_bytes(a, s)
    return wbytes, tuple(notes)


def _weight_bytes(a: Arch, s: Settings) -> tuple[float, list[str]]:
    """Bytes of weights on the heaviest rank, and notes on how they were counted."""
    quant, assumed = effective_quant(a, s)
    notes: list[str] = [assumed] if assumed else []
    wb = dtype_bytes(a, s)
    per_stage = [c.bytes(quant, wb) for c in _stages(a, s)]
    draft, dnotes = draft_bytes_per_gpu(a, s)
    per_stage[-1] += draft  # the drafter runs on the last stage
    notes += dnotes
    worst = max(per_stage)
    if a.exact_weight_bytes:
        # The index gives the checkpoint's exact bytes; scale the analytic
        # split by it (MTP and vision weights are in the file either way).
        full_s = Settings(language_model_only=False)
        est_full = components(a, full_s, include_mtp=True).bytes(a.quant, 2)
        if a.quant.is_quantized or wb == 2:
            worst *= a.exact_weight_bytes / est_full
            notes.append("weights scaled to the safetensors index total_size")
    if quant.is_quantized:
        notes.append(f"weights: {quant.detail} on {', '.join(sorted(quant.covers)) or 'nothing'}")
    return worst, notes


def kv_layer_bytes(a: Arch, s: Settings, kind: str) -> float:
    """KV bytes per token of one layer on one rank (0 for state layers)."""
    kvb = kv_dtype_bytes(a, s)
    if kind == MLA:
        if a.index_topk:
            return sparse_mla_bytes(a, s) + index_cache_bytes(a)
        return (a.kv_lora_rank + a.qk_rope_head_dim) * kvb  # latent: one copy per rank
    if kind == LINEAR:
        return 0.0
    kvh, hd = a.num_kv_heads, a.head_dim
    if kind == FULL and a.full_head_dim:
        hd, kvh = a.full_head_dim, a.full_kv_heads or kvh
    return 2 * max(1, _cdiv(kvh, s.tp) if kvh >= s.tp else 1) * hd * kvb


def sparse_mla_bytes(a: Arch, s: Settings) -> float:
    """Latent KV bytes per token of one sparse-MLA (DSA) layer.  An 8-bit cache is FlashMLA's "FP8 with scale"
    record: the latent in FP8, one float32 scale per 128 values, the RoPE part left bf16 (656 bytes for
    DeepSeek-V3.2; vLLM 0.13.0 v1/attention/backends/mla/flashmla_sparse.py L61-L70, its fp8_ds_mla; SGLang's
    NSA pool sizes the same record for fp8_e4m3, 0.5.5.post3 srt/mem_cache/memory_pool.py L1664-L1671)."""
    if kv_dtype_bytes(a, s) == 1:
        return a.kv_lora_rank + a.kv_lora_rank // 128 * 4 + a.qk_rope_head_dim * 2
    return (a.kv_lora_rank + a.qk_rope_head_dim) * kv_dtype_bytes(a, s)


def index_cache_bytes(a: Arch) -> float:
    """Bytes per token of one DSA layer's indexer key cache, whatever the KV dtype: FP8 keys with one float32
    scale per 128 values (vLLM's ``Indexer`` sizes its cache ``head_dim + head_dim // quant_block_size * 4``
    uint8, quant_block_size 128: 132 bytes for DeepSeek-V3.2; deepseek_v2.py 0.13.0 L849-L850; SGLang's
    NSA pool the same, memory_pool.py 0.5.5.post3 L1699-L1714).  It is a cache of its own beside the latent's
    (vLLM: its own layer in the KV spec), so a token costs both."""
    if not a.index_topk:
        return 0.0
    return a.index_head_dim + a.index_head_dim // 128 * 4


# First release assumed to resolve --kv-cache-dtype auto to a ModelOpt checkpoint's
# FP8 KV scheme (vLLM issue #34752 fix, early 2026).
CHECKPOINT_KV_DTYPE_FROM = (0, 17)


def checkpoint_kv_applies(a: Arch, s: Settings) -> bool:
    """``--kv-cache-dtype auto`` on a checkpoint that asks for an FP8 cache (see ``_quant.checkpoint_kv_dtype``)."""
    return ((s.kv_cache_dtype or "auto").lower() == "auto" and a.checkpoint_kv_dtype == "fp8"
            and s.version >= CHECKPOINT_KV_DTYPE_FROM)


def dsa_fp8_default(a: Arch, s: Settings) -> bool:
    """``--kv-cache-dtype auto`` on a DSA checkpoint under vLLM 0.11.0, which serves it as its custom FP8 record
    (``fp8_ds_mla``: model_executor/models/config.py 0.11.0 L416-422, "we use a custom fp8 format as default");
    from 0.11.1 "auto" keeps the model dtype and only an fp8 dtype becomes the record (0.11.1 L475-481).  0.11.0
    is the first release with DeepseekV32ForCausalLM's config rule (0.10.2 has none)."""
    import re

    return (bool(a.index_topk) and (s.kv_cache_dtype or "auto").lower() == "auto"
            and re.fullmatch(r"v?0\.11\.0(?:\.post\d+)?", (s.vllm_version or "").strip()) is not None)


def kv_dtype_bytes(a: Arch, s: Settings) -> int:
    k = (s.kv_cache_dtype or "auto").lower()
    if checkpoint_kv_applies(a, s) or dsa_fp8_default(a, s):
        return 1
    if k.startswith(("fp8", "int8")) or k == "nvfp4":
        return 1
    if k in ("float32", "fp32"):
        return 4
    if k in ("bfloat16", "float16", "half", "bf16", "fp16"):
        return 2
    return dtype_bytes(a, s)


def state_bytes(a: Arch, s: Settings) -> float:
    """Fixed per-request state of one linear-attention layer on one rank."""
    la = a.linear_attn
    if la is None:
        return 0.0
    mb = dtype_bytes(a, s)
    sb = la.state_dtype_bytes or mb
    tp = s.tp
    if la.kind == "mamba1":
        inner = la.num_v_heads // tp
        return inner * (la.conv_kernel - 1) * mb + inner * la.ssm_state_size * sb
    if la.kind == "mamba2":
        inner = la.num_v_heads * la.v_head_dim
        conv = (inner + 2 * la.n_groups * la.ssm_state_size) // tp * (la.conv_kernel - 1) * mb
        return conv + la.num_v_heads // tp * la.v_head_dim * la.ssm_state_size * sb
    conv_dim = (2 * la.num_k_heads * la.k_head_dim + la.num_v_heads * la.v_head_dim) // tp
    # with speculative decoding the gated-delta-net conv state keeps the draft tokens' inputs
    # too: (conv_kernel - 1 + num_spec) rows (mamba_utils.gated_delta_net_state_shape)
    spec = s.num_speculative_tokens if s.speculative_method else 0
    rows = la.conv_kernel - 1 + spec
    return conv_dim * rows * mb + max(1, la.num_v_heads // tp) * la.k_head_dim * la.v_head_dim * sb




@dataclass(frozen=True)
class WeightSplit:
    """Weights of one rank (first PP stage) split the way a forward step reads them.

    ``dense_*``: read by every step whatever the batch (attention, dense MLP, shared
    experts, router, embeddings, lm_head); ``expert_*``: the routed experts this rank
    holds, of which a step reads only those its tokens are routed to.  Bytes are as
    stored (quantization and scales included), parameters for FLOPs.
    """

    dense_bytes: float
    dense_params: float
    expert_bytes: float
    expert_params: float
    experts_local: float  # routed experts held by one rank (a fraction under TP-sharding is not used)
    lm_head_params: float
    quant: str  # the weight format's name ("none", "fp8", "nvfp4", ...)
    # which components the format covers (the rest stays 16-bit): a MoE checkpoint may quantize its experts only
    covers: frozenset[str] = frozenset()
    block: bool = False  # FP8 scaled per 128 x 128 block (Quant.block)
    # the part of dense_params in the attention layers' projections (q / kv / o, a DSA indexer's): per rank even
    # where SGLang's DP attention gathers the rest (predict times them at the busiest rank's prefill tokens)
    attn_params: float = 0.0


@_per_batch_limits
def mxfp4_experts(a: Arch, s: Settings) -> bool:
    """Whether MXFP4 experts run: a MoE model whose planned weight format (:func:`effective_quant`: the
    checkpoint's, else ``--quantization``'s, so ``--quantization mxfp4`` on a 16-bit checkpoint counts) is MXFP4.
    The one test ``predict`` (the experts' kernel, or the note that ``--mxfp4-backend`` has no effect) and
    ``plan`` (that note per checkpoint) make."""
    return a.is_moe and effective_quant(a, s)[0].name == "mxfp4"


@_per_batch_limits
def weight_split(a: Arch, s: Settings) -> WeightSplit:
    """Per-rank weight bytes and parameters by how a step reads them (see :class:`WeightSplit`); one frozen value
    for every batch limit of a plan (``_per_batch_limits``: a plan search asks it once per memory plan)."""
    quant, _ = effective_quant(a, s)
    wb = dtype_bytes(a, s)
    c = max(_stages(a, s), key=lambda x: x.bytes(quant, wb))
    # embeddings are a lookup, not a GEMM: bytes read only for the rows used (ignored).  A tied lm_head
    # (one stage holding both ends) is stored once, as the embedding, yet its GEMM reads the whole
    # vocab x hidden matrix every step like an untied one
    head = c.lm_head or (c.embed if a.has_lm_head and a.tie_word_embeddings and s.pp == 1 else 0.0)
    # FLOPs: a part SGLang splits over the whole TP group under DP attention (dense_tp) runs every DP rank's tokens,
    # gathered (the LM head, dense MLPs and shared experts of its DeepSeek file), so a rank's tokens cost it the part
    # split over the attention's tp; the bytes stay as held
    k = s.dense_tp / s.tp if s.dense_tp else 1.0
    mlp_f, shared_f = (c.mlp if "mlp" in s.dense_local else c.mlp * k,
                       c.shared_experts if "shared_experts" in s.dense_local else c.shared_experts * k)
    head_f = head * k if c.lm_head and "lm_head" not in s.dense_local else head
    dense_params = c.attn + c.linear_attn + mlp_f + shared_f + c.router + head_f
    dense_bytes = (sum(getattr(c, n) * quant.bytes_for(n, wb) for n in ("attn", "linear_attn", "mlp",
                                                                         "shared_experts"))
                   + (c.router + head) * wb)
    draft, _ = draft_bytes_per_gpu(a, s)
    return WeightSplit(dense_bytes=dense_bytes + draft, dense_params=dense_params + draft / wb,
                       expert_bytes=c.experts * quant.bytes_for("experts", wb), expert_params=c.experts,
                       experts_local=experts_on_rank(a, s) if a.is_moe else 0.0, lm_head_params=head_f,
                       quant=quant.name, covers=quant.covers if quant.is_quantized else frozenset(),
                       block=quant.block, attn_params=c.attn + c.linear_attn)


@_per_batch_limits
def kv_read_split(a: Arch, s: Settings) -> tuple[float, float, int]:
    """KV bytes per token one rank reads per step: (layers attending the whole context, sliding-window
    layers, the window).  A step reads a sliding layer's cache only over the last ``window`` tokens."""
    per = _cdiv(a.num_layers, s.pp) / max(1, a.num_layers)  # one PP stage's share of the layers
    # a layer's bytes follow its kind alone (kv_layer_bytes of the arch, the settings and the kind): each kind's once,
    # summed layer by layer in the same order as before (the same float terms, the same sums)
    by_kind = {k: kv_layer_bytes(a, s, k) for k in set(a.layer_kinds) if k in (FULL, MLA, SLIDING)}
    full = sum(by_kind[k] for k in a.layer_kinds if k in (FULL, MLA)) * per
    sliding = sum(by_kind[k] for k in a.layer_kinds if k == SLIDING) * per
    return full, sliding, a.sliding_window or 0


__all__ = ["SLIDING", "GiB", "WeightSplit", "components", "dsa_fp8_default", "index_cache_bytes", "kv_layer_bytes",
           "kv_read_split", "sparse_mla_bytes", "state_bytes",
           "weight_bytes_per_gpu", "weight_split"]
