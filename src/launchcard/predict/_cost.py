"""The time of one engine step, from the work it does.

A step runs the plan's GEMMs over every token scheduled in it (decode tokens and
prefill chunks alike) and attention over each sequence's context.  Each part takes
the longer of its bytes over the memory bandwidth and its FLOPs over the dense FLOP/s
of the dtype it runs in (a roofline per part, summed: GEMMs and attention, decode and
prefill attention, are separate kernels).  FLOP/s are scaled by the share the engine's
kernels of that class reach on that GPU in that dtype (:class:`KernelEff`, fitted on public
measured kernel tables by bench/predict_kernels.py, never on end-to-end runs): FP8/FP4 GEMMs
reach about half of their datasheet rate, grouped MoE GEMMs a fifth to a third, and fewer
tokens than a tile's rows (per running expert, for MoE; keys per query for prefill
attention) cost a whole tile.  Memory time is scaled by the coefficient set's shares,
fitted on served steps (a served decode step also moves what the modelled kernels do not:
norms, rotary, KV writes).  Tensor-parallel all-reduces and expert-parallel all-to-alls move
activations over the interconnect; a few overhead terms cover what is not data movement (the
scheduler and sampler per step and per sequence, kernel launches without CUDA graphs,
the HTTP/tokenizer path of a request).  The efficiency and overhead terms are the only
fitted numbers (:class:`Coefficients`, each set with the data it was fitted on).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, NamedTuple

from launchcard.errors import InputError
from launchcard.predict._facts import HardwareFigures, ServingFacts
from launchcard.predict._table import COEFFICIENTS_FILE
from launchcard.predict._table import coefficient_table as _table
from launchcard.predict._types import Domain


class Stages(NamedTuple):
    """The measured streaming stages of one engine, not fitted (data/predict_coefficients.json "streaming",
    bench/measure_host_stream.py; :func:`streaming`): CPU time per request per step that produced output, of the
    API server (its output processing and SSE chunk: a pipeline stage in its own process, beside the engine) and of
    the benchmark client (one asyncio process reading every stream); each stage's clock runs behind the engine's
    when a step's outputs take it longer than the step."""

    api_us: float = 0.0
    client_us: float = 0.0
    # ... at up to ``lo`` outputs in a step; from there to ``hi`` (and beyond) each grows linearly by its measured
    # fraction (more streams, more of the process's time per stream); hi 0: no growth
    lo: int = 0
    hi: int = 0
    api_growth: float = 0.0
    client_growth: float = 0.0


_NO_STAGES = Stages()  # not measured: no stage behind the engine


class SeqRise(NamedTuple):
    """How a measured ``seq_us`` grows with the sequences of a step (gpu:vllm: the table's "engine_seq",
    bench/measure_engine_seq.py; :func:`engine_seq`): as measured up to ``lo`` sequences, then linearly by
    ``growth`` up to ``hi`` and flat beyond; hi 0: no growth (a fitted seq_us)."""

    lo: int = 0
    hi: int = 0
    growth: float = 0.0


_NO_RISE = SeqRise()


@dataclass(frozen=True, slots=True)
class Coefficients:
    """Efficiency and overhead terms of one platform (``gpu:vllm``, ``cpu:vllm``, ...)."""

    bw_eff: float = 0.8  # share of datasheet memory bandwidth the GEMMs' weight reads reach in a served step
    # share of the FLOP/s left after the kernels' own (KernelEff): 1 in the GPU sets (their FLOP/s shares come
    # from the measured kernel tables); the CPU set's figures are measured with the engine's own kernels
    flops_eff: float = 0.6
    attn_eff: float = 0.5  # share of datasheet bandwidth attention's KV reads reach in a served step
    link_eff: float = 0.7  # share of interconnect bandwidth reached by collectives
    collective_us: float = 10.0  # fixed latency of one all-reduce / all-to-all
    step_us: float = 1000.0  # per step: scheduler, input preparation, launch
    seq_us: float = 10.0  # per sequence per step: sampling, detokenizing, bookkeeping
    # per kernel group per step (StepWork.layers): kernel tails even inside CUDA graphs
    layer_us: float = 0.0
    eager_layer_us: float = 0.0  # more per layer when kernels are launched one by one (no CUDA graphs)
    request_ms: float = 5.0  # per request outside the engine loop (HTTP, tokenizer): added to TTFT
    # per request already in the server when one arrives: the API server's queue (tokenizing, streaming the
    # others' tokens) before the engine sees the new one; added to TTFT
    inflight_us: float = 0.0
    key: str = "default"
    fitted_on: str = "not fitted"
    # the host op time (HardwareFigures.host_op_us) the overhead terms were fitted at; 0: not recorded
    host_op_us: float = 0.0
    # a closed loop's next request reaches the engine only ``request_ms`` after the last one ended (the API
    # server's front end: detokenizing, streaming, tokenizing the next prompt); False keeps the term outside the
    # schedule, added to TTFT only, as the GPU sets were fitted
    front_in_schedule: bool = False
    # the span of the runs the set was fitted on (batch, lengths, releases, GPUs): predictions beyond it say so
    # (predict._domain); None: not recorded
    domain: Domain | None = None
    # the API server's and the benchmark client's streaming stages (measured, not fitted)
    stages: Stages = _NO_STAGES
    # the growth of a measured seq_us with the step's sequences (fitted ones: none)
    seq_rise: SeqRise = _NO_RISE


_NOT_PARAMS = ("key", "fitted_on", "host_op_us", "front_in_schedule", "domain", "stages", "seq_rise")
PARAMS = tuple(f.name for f in fields(Coefficients) if f.name not in _NOT_PARAMS)
# the fitted terms spent on the host (Python scheduler, input preparation, per-kernel dispatch, HTTP), not in
# kernels; the streaming stages are host time too (on_host scales them alike)
HOST_TERMS = ("step_us", "seq_us", "layer_us", "eager_layer_us", "request_ms", "inflight_us")
# of those, the ones spent on a request's path through the API server's front end and the benchmark client
FRONT_TERMS = ("request_ms", "inflight_us")


def coefficients(kind: str, engine: str) -> Coefficients:
    """The recorded set for ``kind`` (gpu/cpu) and ``engine``; GPU kinds other than NVIDIA's use the gpu set."""
    sets = _table()["sets"]
    base = "cpu" if kind == "cpu" else "gpu"
    key = f"{base}:{engine}" if f"{base}:{engine}" in sets else f"{base}:vllm"
    if key not in sets:
        raise InputError(f"no coefficients for {key}", where=f"launchcard/data/{COEFFICIENTS_FILE}",
                         fix="regenerate it with bench/predict_accuracy.py --write")
    entry = sets[key]
    vals = entry["values"]
    host_op = float(entry.get("host_op_us") or 0.0)
    # a term a set predates keeps the class default (a set written before the term existed)
    got = {k: float(vals[k]) for k in PARAMS if k in vals}
    seq = engine_seq(engine, host_op) if key == f"gpu:{engine}" else None
    if seq is not None:  # measured on the engine's own code, held in every fit (bench/predict_accuracy.py SEQ_HELD)
        got["seq_us"] = seq[0]
    return Coefficients(**got, key=key,
                        fitted_on=str(entry.get("fitted_on", "")), host_op_us=host_op,
                        front_in_schedule=bool(entry.get("front_in_schedule", False)), domain=_domain(key),
                        stages=streaming(engine, host_op), seq_rise=seq[1] if seq else _NO_RISE)


@lru_cache(maxsize=16)
def _domain(key: str) -> Domain | None:
    """The recorded span of the runs set ``key`` was fitted on (its "domain"; None: not recorded)."""
    raw = _table()["sets"][key].get("domain")
    return Domain.from_json(raw) if isinstance(raw, dict) else None


def streaming(engine: str, host_op_us: float = 0.0) -> Stages:
    """The measured API server and benchmark client microseconds per request per step with output (the table's
    "streaming": bench/measure_host_stream.py on the engine's own code, one point per burst size measured), at
    the smallest burst measured and their growth up to the largest; none where not measured.  Every point is
    stated at the host op time of the first (the speed the serving host is assumed to run them at), or at the
    set's own host op time when it has one."""
    doc = _table().get("streaming")
    pts = sorted((p for p in (doc or {}).get("points", ()) if isinstance(p, dict)), key=lambda p: int(p["outputs"]))
    if not pts:
        return Stages()
    ref = _ref_op(host_op_us)

    def at(p: dict[str, Any]) -> tuple[float, float]:
        r = ref / float(p["host_op_us"]) if ref and p.get("host_op_us") else 1.0
        return float((p.get("api_us") or {}).get(engine) or 0.0) * r, float(p.get("client_us") or 0.0) * r

    a0, c0 = at(pts[0])
    if len(pts) == 1:
        return Stages(a0, c0)
    a1, c1 = at(pts[-1])
    return Stages(a0, c0, int(pts[0]["outputs"]), int(pts[-1]["outputs"]), a1 / a0 - 1.0 if a0 else 0.0,
                  c1 / c0 - 1.0 if c0 else 0.0)


def _ref_op(host_op_us: float) -> float:
    """The host op time every measured host term is stated at: the set's own, else the first streaming point's
    (one host speed for all of them), else 0 (each point as measured)."""
    if host_op_us:
        return host_op_us
    pts = sorted((p for p in (_table().get("streaming") or {}).get("points", ()) if isinstance(p, dict)),
                 key=lambda p: int(p["outputs"]))
    return float(pts[0].get("host_op_us") or 0.0) if pts else 0.0


def engine_seq(engine: str, host_op_us: float = 0.0) -> tuple[float, SeqRise] | None:
    """The engine's measured host microseconds per running sequence per step (the table's "engine_seq":
    bench/measure_engine_seq.py on the engine's own server), at the smallest batch measured and its growth up to
    the largest (microseconds, growth), each point stated at :func:`_ref_op`'s host op time; None where not
    measured."""
    doc = _table().get("engine_seq")
    pts = sorted((p for p in (doc or {}).get("points", ()) if isinstance(p, dict)
                  and (p.get("seq_us") or {}).get(engine) is not None), key=lambda p: int(p["batch"]))
    if not pts:
        return None
    ref = _ref_op(host_op_us)

    def at(p: dict[str, Any]) -> float:
        r = ref / float(p["host_op_us"]) if ref and p.get("host_op_us") else 1.0
        return float(p["seq_us"][engine]) * r

    u0 = at(pts[0])
    if len(pts) == 1 or not u0:
        return u0, _NO_RISE
    return u0, SeqRise(int(pts[0]["batch"]), int(pts[-1]["batch"]), at(pts[-1]) / u0 - 1.0)


def stage_seconds(c: Coefficients, outs: int) -> tuple[float, float]:
    """Seconds the API server and the client spend on the ``outs`` outputs of one step."""
    st = c.stages
    api, client = st.api_us, st.client_us
    if st.hi > st.lo and outs > st.lo:
        x = min(1.0, (outs - st.lo) / (st.hi - st.lo))
        api, client = api * (1.0 + st.api_growth * x), client * (1.0 + st.client_growth * x)
    return outs * api * 1e-6, outs * client * 1e-6


@lru_cache(maxsize=16)
def light_load_ttft(key: str) -> tuple[int, int, tuple[float, ...]] | None:
    """What the fit of set ``key`` recorded of its own light-load TTFT miss (bench/predict_accuracy.py --write):
    (clients at most, runs, measured minus predicted TTFT quartiles in ms); None when not recorded."""
    got = (_table()["sets"].get(key) or {}).get("light_load_ttft")
    if not isinstance(got, dict):
        return None
    q = got.get("measured_minus_predicted_ms")
    if not isinstance(q, list) or len(q) != 3:
        return None
    return int(got.get("clients", 0)), int(got.get("runs", 0)), tuple(float(x) for x in q)


def on_host(c: Coefficients, host_op_us: float | None, front_op_us: float | None = None, *,
            client_op_us: float | None = None, request_op_us: float | None = None) -> Coefficients:
    """``c`` with its host terms scaled to a host whose measured op time is ``host_op_us``: a core that runs
    Python 2x slower (shared with other work, or simply slower) spends 2x on the scheduler and dispatch.  The
    terms spent outside the engine scale by the op time measured for the process that spends them, when given
    (each runs in its own process, at the share of a core it gets, which can differ from the engine's):
    ``front_op_us`` the API server's (its streaming stage), ``client_op_us`` the benchmark client's (its stage),
    ``request_op_us`` the request's path through both (``request_ms``/``inflight_us``: the client sends and reads,
    the API server parses, tokenizes and streams); ``request_op_us`` falls back to ``front_op_us``, every one to
    ``host_op_us``."""
    if not c.host_op_us or not host_op_us:
        return c
    from dataclasses import replace

    r = host_op_us / c.host_op_us
    rf = front_op_us / c.host_op_us if front_op_us else r
    rc = client_op_us / c.host_op_us if client_op_us else r
    rq = request_op_us / c.host_op_us if request_op_us else rf
    # each stage at its own process's speed: the API server's and the client's
    st = c.stages._replace(api_us=c.stages.api_us * rf, client_us=c.stages.client_us * rc)
    return replace(c, **{k: getattr(c, k) * (rq if k in FRONT_TERMS else r) for k in HOST_TERMS}, stages=st)


class KernelEff(NamedTuple):
    """Share of the dtype's datasheet FLOP/s one engine's kernels reach on one GPU once the machine is full, by
    kernel class: ``g_`` dense GEMMs, ``x_`` the grouped GEMMs of routed experts, ``ap_`` attention (prefill; a
    compute-bound decode, as MLA's, too); ``*_half`` the tile height in tokens (dense), tokens per running expert
    (MoE) or keys per query (prefill attention): fewer cost a whole tile's FLOPs.  ``x_t0``: seconds a grouped
    MoE call takes on top of its roofline whatever its tokens (routing, sorting and permuting them), measured in
    the same tables."""

    g_comp: float = 1.0
    g_half: float = 0.0
    x_comp: float = 1.0
    x_half: float = 0.0
    x_t0: float = 0.0
    ap_comp: float = 1.0
    ap_half: float = 0.0
    source: str = "none"
    borrowed: tuple[str, ...] = ()  # classes the GPU's own tables lack, taken from the median ("default")
    # the GPU's few-row GEMM weight-read share of its datasheet bandwidth over the calibrated GPUs' (the sets' bw_eff
    # is fitted on their runs): its weight reads are timed at bw_eff x this (1: no table, or a CPU)
    w_read: float = 1.0


NO_KERNELS = KernelEff()


def _entry(by_cls: dict[str, Any], cls: str, dtype: str) -> dict[str, Any] | None:
    got = by_cls.get(cls) or {}
    e = got.get(dtype) or got.get("bf16")  # a dtype without a table (int8): its class's 16-bit kernels
    return e if isinstance(e, dict) else None


@lru_cache(maxsize=256)
def kernel_eff(hw_id: str, kind: str, engine: str, dtype: str, expert_dtype: str,
               moe_kernel: str | None = None) -> KernelEff:
    """The recorded kernel FLOP/s shares for a GPU (catalog id) and engine (data/predict_coefficients.json
    "kernels"); a GPU without tables gets the median of the GPUs that have them (``default``), a GPU whose tables
    lack a class (MoE, prefill attention) that class's median; CPUs none (their figures are measured with the
    engine's own kernels).  ``moe_kernel`` names the routed experts' own kernel where it is not their dtype's
    grouped GEMM (MXFP4: ``mxfp4``, ``mxfp4_marlin``, recorded per GPU from the engine's own kernel rows); a GPU
    without that record keeps its dtype's grouped-GEMM class."""
    if kind != "gpu":
        return NO_KERNELS
    gpus = (_table().get("kernels") or {}).get("gpus") or {}
    fallback = (gpus.get("default") or {}).get(engine) or (gpus.get("default") or {}).get("vllm") or {}
    for where in (hw_id, "default"):
        by_engine = gpus.get(where) or {}
        by_cls = by_engine.get(engine) or by_engine.get("vllm")
        if not by_cls:
            continue
        g = _entry(by_cls, "gemm", dtype)
        if g is None:
            continue
        # a class the GPU's tables lack takes the median's (the A100's vLLM 0.14.0 / TRT-LLM 1.0.0 MoE rows hold
        # skewed routing only)
        x, ap = _entry(by_cls, "moe", expert_dtype), _entry(by_cls, "attn_prefill", "bf16")
        borrowed = tuple(c for c, e in (("moe", x), ("attn_prefill", ap)) if e is None and where != "default")
        x = x or _entry(fallback, "moe", expert_dtype)
        ap = ap or _entry(fallback, "attn_prefill", "bf16")
        own = ((gpus.get(hw_id) or {}).get(engine) or {}).get("moe") or {}
        if moe_kernel and isinstance(own.get(moe_kernel), dict):
            x = own[moe_kernel]
            borrowed = tuple(c for c in borrowed if c != "moe")  # the GPU's own record, not the median's
        x_t0 = x.get("t0_us", 0.0) * 1e-6 if x else 0.0  # a GEMM's latency is not a MoE call's
        x = x or g
        return KernelEff(g_comp=g["e_comp"], g_half=g["s_half"], x_comp=x["e_comp"], x_half=x["s_half"],
                         x_t0=x_t0,
                         ap_comp=ap["e_comp"] if ap else 1.0, ap_half=ap["s_half"] if ap else 0.0,
                         source=f"{where}/{engine if engine in by_engine else 'vllm'}", borrowed=borrowed,
                         w_read=weight_read_ratio(hw_id, engine))
    return NO_KERNELS


def weight_read_ratio(hw_id: str, engine: str) -> float:
    """A GPU's measured weight-read share (BF16 GEMMs of a few rows, "kernels" -> "weight_read") over the median of
    the GPUs the gpu sets are calibrated on, for ``engine``'s kernels; 1 where either is not measured."""
    wr = (_table().get("kernels") or {}).get("weight_read") or {}
    own = ((wr.get("gpus") or {}).get(engine) or {}).get(hw_id)
    basis = (wr.get("basis") or {}).get(engine)
    if not own or not basis:
        return 1.0
    return float(own["share"]) / float(basis["share"])


def max_weight_read_ratio(engine: str) -> float:
    """The largest :func:`weight_read_ratio` of ``engine``'s kernels over every GPU with a measured share (1 when none
    is above 1): a set's ``bw_eff`` times it must stay <= 1, or some GPU's weight reads would beat its datasheet
    bandwidth (bench/predict_accuracy.py bounds the fit with it)."""
    wr = (_table().get("kernels") or {}).get("weight_read") or {}
    own = (wr.get("gpus") or {}).get(engine) or {}
    return max([1.0] + [weight_read_ratio(g, engine) for g in own])


def kernel_basis(engine: str, dtype: str) -> tuple[str, ...]:
    """The GPUs whose measured tables the median dense-GEMM share of ``engine``'s kernels in ``dtype`` (what a GPU
    without tables takes) comes from ("kernels" -> "default")."""
    by_cls = (((_table().get("kernels") or {}).get("gpus") or {}).get("default") or {}).get(engine) or {}
    e = _entry(by_cls, "gemm", dtype)
    return tuple(str(x) for x in (e or {}).get("from") or ())


@lru_cache(maxsize=64)
def dsa_kernel_eff(hw_id: str, kind: str, engine: str) -> tuple[float, float] | None:
    """(sparse MLA, indexer FP8 logits) FLOP/s shares measured for DeepSeek Sparse Attention's kernels on a GPU
    ("kernels" ``dsa_attn`` / ``dsa_logits``, from SGLang's kernel-level tables: FlashMLA sparse and DeepGEMM's MQA
    logits, which vLLM runs too); a GPU without them the median of those that have them; None on CPUs."""
    if kind != "gpu":
        return None
    gpus = (_table().get("kernels") or {}).get("gpus") or {}
    for where in (hw_id, "default"):
        by_engine = gpus.get(where) or {}
        by_cls = by_engine.get(engine) if "dsa_attn" in (by_engine.get(engine) or {}) else by_engine.get("sglang")
        a, i = _entry(by_cls or {}, "dsa_attn", "bf16"), _entry(by_cls or {}, "dsa_logits", "fp8")
        if a is not None and i is not None:
            return float(a["e_comp"]), float(i["e_comp"])
    return None


def facts_kernels(f: ServingFacts) -> KernelEff:
    hw = f.hardware
    return kernel_eff(hw.id, hw.kind, f.engine, f.compute_dtype, f.expert_dtype or f.compute_dtype, f.moe_kernel)


class StepWork(NamedTuple):
    """Seconds a step would take at 100% of the datasheet bandwidth and at the share of the datasheet FLOP/s its
    kernels reach (:class:`KernelEff`), by part.  A named tuple, not a frozen
    dataclass: a plan search builds one per simulated step (tens of thousands a search), and a frozen
    dataclass's field-by-field ``__init__`` cost as much as the arithmetic."""

    gemm_mem: float  # weights every token goes through (attention projections, dense MLP, shared experts, lm_head)
    gemm_flop: float
    attn_mem: float  # attention parts bound by memory (decode's KV reads, as a rule)
    attn_flop: float  # attention parts bound by compute (prefill, as a rule): added to attn_mem, not maxed with it
    comm: float
    collectives: int
    seqs: int
    # kernel groups: decoder layers, MoE layers (once where their call's latency is timed: moe_fixed) and DSA
    # layers (the indexer) counted twice
    layers: int
    moe_mem: float = 0.0  # routed experts: their own grouped-GEMM kernels, so their own roofline
    moe_flop: float = 0.0
    moe_fixed: float = 0.0  # their calls' measured latency above that roofline (KernelEff.x_t0)
    # kernel groups launched one by one without CUDA graphs (eager_layer_us): ``layers`` plus the MoE layers
    # whose call latency is measured (moe_fixed), which ``layers`` then counts once
    eager_layers: int = 0
    # the per-sequence host work runs beside the kernels (vLLM's async scheduling: ServingFacts.host_overlap)
    overlap: bool = False


def step_work(f: ServingFacts, dec_seqs: int, dec_ctx: float, pf_tokens: int, pf_pairs: float,
              pf_ctx_read: float = 0.0) -> StepWork:
    """Work of one step: ``dec_seqs`` decode sequences holding ``dec_ctx`` context tokens in all,
    ``pf_tokens`` prefill tokens whose attention covers ``pf_pairs`` (query, key) pairs and reads
    ``pf_ctx_read`` cached tokens (prefix hits, earlier chunks).  See :func:`work_fn`."""
    return work_fn(f)(dec_seqs, dec_ctx, pf_tokens, pf_pairs, pf_ctx_read)


StepFn = Callable[[int, float, int, float, float], StepWork]
# facts -> (facts, its step function): a plan search times ~40,000 steps of a few hundred plans; the facts object
# is kept with its function, so an id that another object reuses never hits
_FNS: dict[int, tuple[ServingFacts, StepFn]] = {}


def work_fn(f: ServingFacts) -> StepFn:
    """:func:`step_work` of ``f`` as a function of the step's ``(dec_seqs, dec_ctx, pf_tokens, pf_pairs,
    pf_ctx_read)`` (what a simulation calls once per step)."""
    hit = _FNS.get(id(f))
    if hit is None or hit[0] is not f:
        if len(_FNS) >= 4096:
            _FNS.clear()
        hit = _FNS[id(f)] = (f, _work_fn(f))
    return hit[1]


def _work_fn(f: ServingFacts) -> StepFn:
    """The step function of ``f``: what depends on the plan alone is computed here, once; each constant is the
    left part of a product as the step writes it (``2.0 * params * tokens`` is ``(2.0 * params) * tokens``), so a
    step does the same operations in the same order as computing it all per step would (the same figures, to the
    last bit), in half the time.

    With pipeline parallelism a step is one round of the pipeline: the batch is split into ``pp``
    micro-batches in flight at once (vLLM keeps ``pp`` batches scheduled), each stage runs every
    micro-batch in turn (reading its weights once per micro-batch), so a token waits ``pp`` stage
    times: the round costs ``pp`` times one stage's work on ``1/pp`` of the batch."""
    hw = f.hardware
    k = facts_kernels(f)
    m = max(1, f.pp)
    per_seq = 1 + f.spec_tokens  # a speculative step verifies k draft tokens plus one
    bw = hw.bandwidth_bps
    wbw = bw * k.w_read  # weight reads: the GPU's measured share relative to the calibrated GPUs'
    # FLOP/s at the share the kernels reach (attention's matmuls in the activations' dtype whatever the weights)
    fl, attn_fl, expert_fl = (f.flops_per_s * k.g_comp, f.attn_flops_per_s * k.ap_comp,
                              f.expert_flops_per_s * k.x_comp)
    g_half, x_half, ap_half = k.g_half, k.x_half, k.ap_half
    dense_bytes = f.dense_bytes
    dense_2 = 2.0 * f.dense_params
    lm_head_2 = 2.0 * f.lm_head_params
    experts = f.experts
    glob_per_token = f.replicas if f.ep else 1  # with EP every DP rank's tokens reach the experts
    p = f.experts_per_token / experts if experts else 0.0
    miss = 1.0 - p
    expert_bytes = f.expert_bytes
    expert_2p = 2.0 * f.expert_params * p
    # the drafter runs k single-token forwards of ~one target layer each
    draft = f.draft_fraction
    draft_bytes = f.spec_tokens * f.draft_fraction * f.dense_bytes
    draft_2 = 2.0 * f.spec_tokens * f.draft_fraction * f.dense_params
    kv_bytes, pair = f.kv_bytes_per_token, f.attn_flops_per_pair
    pf_pair = f.attn_flops_per_pair if f.prefill_flops_per_pair is None else f.prefill_flops_per_pair
    window, sliding_kv, sliding_pair = f.window, f.sliding_kv_bytes, f.sliding_flops_per_pair
    # DSA: the indexer's FP8 logits at the FP8 GEMM class's share (DeepGEMM's MQA-logits kernels are FP8 matmuls)
    dsa_attn = None
    if f.dsa is not None:
        from launchcard.predict._dsa import dsa_attention

        # the shares measured on DSA's own kernels; else the attention and FP8 GEMM classes'
        shares = dsa_kernel_eff(hw.id, hw.kind, f.engine)
        idx_share = kernel_eff(hw.id, hw.kind, f.engine, "fp8", "fp8").g_comp if "fp8" in hw.flops else k.g_comp
        sparse_fl = f.attn_flops_per_s * shares[0] if shares else attn_fl
        dsa_attn = dsa_attention(f.dsa, kv_bytes, pf_pair, bw, attn_fl, sparse_fl,
                                 (hw.flops.get("fp8") or f.attn_flops_per_s) * (shares[1] if shares else idx_share),
                                 ap_half, per_seq)
    link = hw.link_bps or bw
    domain, out = hw.link_domain, hw.scale_out_bps
    tp, pp, replicas, hidden, act_bytes = f.tp, f.pp, f.replicas, f.hidden, f.act_bytes
    ar_coll = 2 * f.layers
    ep = tp * replicas
    a2a = bool(f.ep and experts and ep > 1)
    a2a_coll = 2 * f.moe_layers // max(1, pp)
    a2a_2 = 2 * (f.moe_layers / pp)
    ept = f.experts_per_token
    layers = f.layers + f.moe_layers // max(1, pp) + (f.dsa.kernel_groups if f.dsa is not None else 0)
    # a MoE layer's second kernel group stood for its grouped call's tails inside CUDA graphs; where the kernel
    # tables time that call (moe_fixed), the group counts once for layer_us (still twice for eager launches)
    eager = layers
    if k.x_t0:
        layers -= f.moe_layers // max(1, pp)
    moe_fixed = (f.moe_layers / m) * k.x_t0  # each MoE layer's grouped call: its measured fixed latency
    # measured against row counts (CPU figures of the model's own layer; never a catalog GPU's): see _measured_rows
    measured = bool(hw.decode_rows or hw.gemm_half_rows)
    overlap = f.host_overlap

    def step(dec_seqs: float, dec_ctx: float, pf_tokens: float, pf_pairs: float, pf_ctx_read: float) -> StepWork:
        if m > 1:  # one stage's work on one micro-batch
            seqs = round(dec_seqs) + (1 if pf_tokens else 0)  # dec_seqs is a whole number here
            dec_seqs, dec_ctx, pf_tokens, pf_pairs, pf_ctx_read = (dec_seqs / m, dec_ctx / m, pf_tokens / m,
                                                                   pf_pairs / m, pf_ctx_read / m)
        tokens = dec_seqs * per_seq + pf_tokens
        wbytes = dense_bytes
        # the lm_head runs only for the positions sampled: every decode token; of a prefill, the last position
        # (counted once per step: a few rows against thousands of tokens)
        sampled = dec_seqs * per_seq + (1 if pf_tokens else 0)
        flops = dense_2 * tokens + lm_head_2 * sampled
        moe_bytes = moe_flops = moe_fix = 0.0
        x_tile = 1.0
        if experts and tokens:
            moe_fix = moe_fixed
            glob = tokens * glob_per_token
            touched = 1.0 - miss ** glob if glob else 0.0
            moe_bytes = expert_bytes * touched
            moe_flops = expert_2p * glob
            # tokens each expert that runs gets (balanced routing; few tokens: only the touched experts run)
            per_expert = glob * p / touched if touched else 0.0
            if 0.0 < per_expert < x_half:
                x_tile = x_half / per_expert
        if draft and dec_seqs:
            wbytes += draft_bytes
            flops += draft_2 * dec_seqs
        # KV is read once per step whatever the queries (a speculative step's k+1 share the reads); sliding-window
        # layers only over their window.  Decode and prefill attention are separate kernels: a roofline each
        pf_ctx = pf_ctx_read + pf_tokens
        dec_bytes, pf_bytes = dec_ctx * kv_bytes, pf_ctx * kv_bytes
        dec_flops, pf_flops = pair * dec_ctx * per_seq, pf_pair * pf_pairs
        if window:
            dec_over = max(0.0, dec_ctx - dec_seqs * window)
            dec_bytes -= dec_over * sliding_kv
            pf_bytes -= max(0.0, pf_ctx - (pf_tokens + window)) * sliding_kv
            dec_flops -= sliding_pair * dec_over * per_seq
            pf_flops -= sliding_pair * max(0.0, pf_pairs - pf_tokens * window)
        attn_mem = attn_flop = 0.0
        a_m, a_c = dec_bytes / bw, dec_flops / attn_fl
        if a_m >= a_c:
            attn_mem = a_m
        else:
            attn_flop = a_c
        if pf_tokens:
            a_m, a_c = pf_bytes / bw, pf_flops / attn_fl
            keys = pf_pairs / pf_tokens  # keys per query: fewer than a tile's cost the tile
            if 0.0 < keys < ap_half:
                a_c *= ap_half / keys
            if a_m >= a_c:
                attn_mem += a_m
            else:
                attn_flop += a_c
        if dsa_attn is not None:  # sparse attention: the indexer and top-k MLA instead
            attn_mem, attn_flop = dsa_attn(dec_seqs, dec_ctx, pf_tokens, pf_pairs, pf_ctx_read)
        gemm_flop, moe_flop = flops / fl, moe_flops / expert_fl * x_tile
        if 0.0 < tokens < g_half:  # fewer tokens than a tile's rows cost the whole tile
            gemm_flop *= g_half / tokens
        comm = 0.0
        coll = 0
        act = tokens * hidden * act_bytes
        if tp > 1:
            coll += ar_coll
            comm += ar_coll * _all_reduce(act, tp, link, domain, out)
        if a2a:
            coll += a2a_coll
            # the attention TP ranks hold the same tokens: each dispatches (and combines) its 1/tp share of them
            comm += a2a_2 * _all_to_all(ept * act / tp, ep, link, domain, out)
        if pp > 1:
            comm += act / link  # this stage's activations to the next
        g_mem = wbytes / wbw
        if measured:  # CPU figures measured against row counts (no kernel table: gemm_flop is flops / FLOP/s)
            g_mem, gemm_flop = _measured_rows(hw, g_mem, gemm_flop, tokens)
        if m == 1:
            return StepWork(g_mem, gemm_flop, attn_mem, attn_flop, comm, coll,
                            round(dec_seqs) + (1 if pf_tokens else 0), layers, moe_bytes / wbw, moe_flop, moe_fix,
                            eager, overlap)
        return StepWork(g_mem * m, gemm_flop * m, attn_mem * m, attn_flop * m, comm * m,
                        coll * m + (m - 1), seqs, layers * m, moe_bytes / wbw * m, moe_flop * m, moe_fix * m, eager * m,
                        overlap)

    return step


def _measured_rows(hw: HardwareFigures, g_mem: float, g_flop: float, rows: float) -> tuple[float, float]:
    """The dense GEMMs' (memory, compute) seconds timed by the figures measured against row counts (CPU:
    bench/measure_cpu.py on the model's own layer): the weight pass lengthened by the extra rows
    (``decode_rows``), the FLOP/s short of its full figure for a chunk too short to fill the core
    (``gemm_half_rows``)."""
    if hw.decode_rows:
        g_mem *= rows_factor(hw.decode_rows, rows)
    if hw.gemm_half_rows and rows > 0:
        g_flop *= (rows + hw.gemm_half_rows) / rows
    return g_mem, g_flop


def rows_factor(table: tuple[tuple[int, float], ...], tokens: float) -> float:
    """The measured weight pass at ``tokens`` rows over the one-row pass (``HardwareFigures.decode_rows``):
    linear between measured row counts, never below 1 nor falling with more rows; past the last one it stays
    there (more rows run into the compute roofline, which the step's max() takes from there)."""
    out = 1.0
    prev_m, prev_x = 1, 1.0
    for m, x in table:
        if tokens <= m:
            if m == prev_m:
                return max(out, x)
            return max(out, prev_x + (x - prev_x) * (tokens - prev_m) / (m - prev_m))
        out = max(out, x)
        prev_m, prev_x = m, out
    return out


def _all_reduce(nbytes: float, g: int, link: float, domain: int | None, out: float | None) -> float:
    """Seconds of an all-reduce of ``nbytes`` per GPU over ``g`` GPUs: a ring on the scale-up link; across link
    domains hierarchical (reduce-scatter inside a domain, all-reduce of each GPU's 1/d share between the n
    domains over the network, all-gather inside), as NCCL does."""
    if domain is None or out is None or g <= domain:
        return 2 * (g - 1) / g * nbytes / link
    d = domain
    n = math.ceil(g / d)
    return 2 * (d - 1) / d * nbytes / link + 2 * (n - 1) / n * (nbytes / d) / out


def _all_to_all(nbytes: float, g: int, link: float, domain: int | None, out: float | None) -> float:
    """Seconds of an all-to-all where each of ``g`` GPUs sends ``nbytes`` spread evenly over the group: what
    goes to GPUs of another link domain crosses the network, the rest the scale-up link, both at once."""
    if domain is None or out is None or g <= domain:
        return nbytes * (g - 1) / g / link
    return max(nbytes * (domain - 1) / g / link, nbytes * (g - domain) / g / out)


def step_terms(w: StepWork, c: Coefficients, graphs: bool) -> tuple[float, float, float, float]:
    """(memory, compute, communication, overhead) seconds of a step under coefficients ``c``."""
    mem = comp = 0.0
    # the GEMMs, then the routed experts' (written out: a step of every simulation calls it)
    g_m, g_c = w.gemm_mem / c.bw_eff, w.gemm_flop / c.flops_eff
    if g_m >= g_c:
        mem += g_m
    else:
        comp += g_c
    g_m, g_c = w.moe_mem / c.bw_eff, w.moe_flop / c.flops_eff
    if g_m >= g_c:
        mem += g_m
    else:
        comp += g_c
    # attention: KV reads at the set's share, compute at the kernels' (already in the work) times flops_eff; the
    # MoE calls' measured fixed latency with the kernel terms (flops_eff is 1 where the kernel tables apply)
    mem += w.attn_mem / c.attn_eff
    comp += (w.attn_flop + w.moe_fixed) / c.flops_eff
    comm = w.comm / c.link_eff + w.collectives * c.collective_us * 1e-6
    ovh = (c.step_us + c.layer_us * w.layers
           + (0.0 if graphs else c.eager_layer_us * (w.eager_layers or w.layers))) * 1e-6
    n, rise = w.seqs, c.seq_rise  # seq_count(c, n), written out (a step of every simulation calls it)
    if rise.hi > rise.lo and n > rise.lo:
        seq = c.seq_us * n * (1.0 + rise.growth * min(1.0, (n - rise.lo) / (rise.hi - rise.lo))) * 1e-6
    else:
        seq = c.seq_us * n * 1e-6
    if not w.overlap:
        return mem, comp, comm, ovh + seq
    # async scheduling: the host's per-sequence work of the next step runs while this one's kernels do
    rest = mem + comp + comm + ovh
    return mem, comp, comm, ovh + (seq - rest if seq > rest else 0.0)


def seq_count(c: Coefficients, seqs: int) -> float:
    """``seqs`` weighted by the per-sequence host cost's measured growth with the batch (``Coefficients.seq_rise``:
    linear between the measured batches, flat beyond)."""
    r = c.seq_rise
    if r.hi > r.lo and seqs > r.lo:
        return seqs * (1.0 + r.growth * min(1.0, (seqs - r.lo) / (r.hi - r.lo)))
    return float(seqs)


# A step's time is linear in these terms once the roofline branch of the GEMMs is known:
# t = features(w) . theta(c).  The calibration fits theta by least squares over whole runs.
def features(w: StepWork, c: Coefficients, graphs: bool) -> tuple[float, ...]:
    """Seconds (GEMM memory, compute at the kernels' FLOP/s shares, attention memory, communication), then counts x 1e-6
    (collectives, step, sequences, layers, eager layers): the step time is ``features . theta``."""
    seqs = seq_count(c, w.seqs) * 1e-6
    if w.overlap:  # the host's per-sequence work hides behind the kernels, or the kernels behind it (piecewise)
        seq = c.seq_us * seqs
        if seq > sum(step_terms(w._replace(overlap=False), c, graphs)) - seq:
            return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, seqs, 0.0, 0.0)
        seqs = 0.0
    g_mem = w.gemm_mem / c.bw_eff >= w.gemm_flop / c.flops_eff
    e_mem = w.moe_mem / c.bw_eff >= w.moe_flop / c.flops_eff
    return ((w.gemm_mem if g_mem else 0.0) + (w.moe_mem if e_mem else 0.0),
            (0.0 if g_mem else w.gemm_flop) + (0.0 if e_mem else w.moe_flop) + w.attn_flop + w.moe_fixed, w.attn_mem,
            w.comm,
            w.collectives * 1e-6, 1e-6, seqs, w.layers * 1e-6,
            0.0 if graphs else (w.eager_layers or w.layers) * 1e-6)


def theta(c: Coefficients) -> tuple[float, ...]:
    return (1.0 / c.bw_eff, 1.0 / c.flops_eff, 1.0 / c.attn_eff, 1.0 / c.link_eff, c.collective_us, c.step_us,
            c.seq_us, c.layer_us, c.eager_layer_us)


def request_theta(c: Coefficients) -> tuple[float, float]:
    """The per-request TTFT terms, whose features are (1e-3, requests in flight at arrival x 1e-6)."""
    return (c.request_ms, c.inflight_us)


def from_theta(th: tuple[float, ...] | list[float], base: Coefficients) -> Coefficients:
    """Coefficients from ``theta(c) + request_theta(c)`` values."""
    from dataclasses import replace

    return replace(base, bw_eff=1.0 / th[0], flops_eff=1.0 / th[1], attn_eff=1.0 / th[2], link_eff=1.0 / th[3],
                   collective_us=th[4], step_us=th[5], seq_us=th[6], layer_us=th[7], eager_layer_us=th[8],
                   request_ms=th[9], inflight_us=th[10])
