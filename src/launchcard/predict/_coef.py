"""Coefficient sets: the fitted efficiency and overhead terms of one platform, and the measured host terms.

Each set (``gpu:vllm``, ``cpu:vllm``, ...) is read from data/predict_coefficients.json with the data it was
fitted on; the streaming stages and the engine's per-sequence host cost are measured on the engines' own code
(bench/measure_host_stream.py, bench/measure_engine_seq.py), never fitted.  ``theta``/``from_theta`` are the
vector form the calibration fits (bench/predict_accuracy.py).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Any, NamedTuple

from launchcard.errors import InputError
from launchcard.hardware import find
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
    # per step: scheduler, input preparation, launch (gpu:vllm: measured, the "engine_seq" "step"; beside the
    # kernels with the per-sequence part under async scheduling)
    step_us: float = 1000.0
    seq_us: float = 10.0  # per sequence per step: sampling, detokenizing, bookkeeping
    # per kernel group per step (StepWork.layers): kernel tails even inside CUDA graphs
    layer_us: float = 0.0
    eager_layer_us: float = 0.0  # more per layer when kernels are launched one by one (no CUDA graphs)
    # more per op a step that carries prefill tokens launches without CUDA graphs (SGLang's extend batches, always
    # eager in 0.5.3-0.5.9; the ops counted from the model's structure: ServingFacts.extend_ops, _sglang_ops), per
    # kernel group where the facts count no ops: the prefill cost the calibration runs show beyond the modelled
    # kernels, kept apart so that it does not land on eager decode batches; 0 where not fitted (vLLM, TensorRT-LLM)
    extend_layer_us: float = 0.0
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
    # per request ahead of one in the opening burst (requests sent together at the start): request-path work the
    # API server's event loop does for each in turn before the engine sees it (measured, predict._endpoint; the
    # sets have none); added to TTFT and E2E
    ingest_us: float = 0.0


_NOT_PARAMS = ("key", "fitted_on", "host_op_us", "front_in_schedule", "domain", "stages", "seq_rise", "ingest_us")
PARAMS = tuple(f.name for f in fields(Coefficients) if f.name not in _NOT_PARAMS)
# the fitted terms spent on the host (Python scheduler, input preparation, per-kernel dispatch, HTTP), not in
# kernels; the streaming stages are host time too (on_host scales them alike)
HOST_TERMS = ("step_us", "seq_us", "layer_us", "eager_layer_us", "extend_layer_us", "request_ms", "inflight_us")
# of those, the ones spent on a request's path through the API server's front end and the benchmark client
FRONT_TERMS = ("request_ms", "inflight_us")


# (kind, engine, vendor, arch) -> (the table it was read from, its set): every prediction asks (a plan search
# ~1,000 times); kept with its table, so a table read again (or a test's own) is never answered from another
_SETS: dict[tuple[str, str, str | None, str], tuple[dict[str, Any], Coefficients]] = {}
# a GPU vendor whose runs have a set of their own ("rocm:<engine>", fitted on that platform's public runs by
# bench/predict_amd.py), taken on the architectures its runs measured (the catalog's arch of its domain's GPUs);
# an engine without one there, or another architecture, takes the NVIDIA-fitted gpu set.  The architecture gate is
# measured: rocm:sglang, fitted on CDNA3 (MI300X, MI325X), predicts InferenceX's MI355X (CDNA4) SGLang runs 2x slow
# (TPOT), gpu:sglang with a median TPOT error of 8% (tests/fixtures/predict_amd_runs.json, bench/predict_amd.py)
PLATFORM_SETS = {"AMD": "rocm"}


def coefficients(kind: str, engine: str, vendor: str | None = None, arch: str = "") -> Coefficients:
    """The recorded set for ``kind`` (gpu/cpu) and ``engine``: an AMD GPU's engine with a ROCm set takes it
    (``PLATFORM_SETS``) where the set's runs measured the GPU's architecture ``arch`` (or ``arch`` is not known),
    any other GPU the gpu set."""
    doc = _table()
    hit = _SETS.get((kind, engine, vendor, arch))
    if hit is None or hit[0] is not doc:
        hit = _SETS[(kind, engine, vendor, arch)] = (doc, _coefficients(kind, engine, vendor, arch))
    return hit[1]


def platform_arches(entry: dict[str, Any]) -> frozenset[str]:
    """The architectures (the catalog's) of the GPUs a platform set's runs measured (its domain's ``gpus``)."""
    gpus = (entry.get("domain") or {}).get("gpus") or ()
    return frozenset(find(g).arch for g in gpus)


def platform_set(engine: str, vendor: str | None, arch: str = "") -> tuple[str | None, bool]:
    """The vendor's own set for ``engine`` (``PLATFORM_SETS``: its key, None where there is none) and whether a GPU
    of architecture ``arch`` takes it (its runs measured that architecture, or ``arch`` is not known): the one gate
    :func:`coefficients` picks by and the ``domain-platform`` finding explains."""
    own = PLATFORM_SETS.get(vendor or "")
    sets = _table()["sets"]
    if not own or f"{own}:{engine}" not in sets:
        return None, False
    key = f"{own}:{engine}"
    return key, not arch or arch in platform_arches(sets[key])


def _coefficients(kind: str, engine: str, vendor: str | None = None, arch: str = "") -> Coefficients:
    sets = _table()["sets"]
    base = "cpu" if kind == "cpu" else "gpu"
    own_key, taken = platform_set(engine, vendor, arch) if kind != "cpu" else (None, False)
    key = own_key if own_key and taken else \
        f"{base}:{engine}" if f"{base}:{engine}" in sets else f"{base}:vllm"
    if key not in sets:
        raise InputError(f"no coefficients for {key}", where=f"launchcard/data/{COEFFICIENTS_FILE}",
                         fix="regenerate it with bench/predict_accuracy.py --write")
    entry = sets[key]
    # a platform set records only the terms its runs pin; the rest are the set it falls back to (read now, so a
    # refit of that set reaches them)
    vals = {**sets[str(entry["falls_back_to"])]["values"], **entry["values"]} if "falls_back_to" in entry \
        else entry["values"]
    host_op = float(entry.get("host_op_us") or 0.0)
    # a term a set predates keeps the class default (a set written before the term existed)
    got = {k: float(vals[k]) for k in PARAMS if k in vals}
    seq = engine_seq(engine, host_op) if key == f"gpu:{engine}" or (key == own_key and taken) else None
    if seq is not None:  # measured on the engine's own code, held in every fit (bench/predict_accuracy.py SEQ_HELD)
        got["seq_us"] = seq.seq_us
        if seq.step_us is not None:  # and the part every step pays (STEP_HELD)
            got["step_us"] = seq.step_us
    return Coefficients(**got, key=key,
                        fitted_on=str(entry.get("fitted_on", "")), host_op_us=host_op,
                        front_in_schedule=bool(entry.get("front_in_schedule", False)), domain=_domain(key),
                        stages=streaming(engine, host_op), seq_rise=seq.rise if seq else _NO_RISE)


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


class EngineSeq(NamedTuple):
    """The engine's measured host work (:func:`engine_seq`), in microseconds at one host op time."""

    seq_us: float  # per running sequence per step, at the smallest batch measured
    rise: SeqRise  # its growth up to the largest
    # the part every step pays whatever its batch (the intercept the per-sequence figures leave out); None: not
    # recorded
    step_us: float | None = None


def engine_seq(engine: str, host_op_us: float = 0.0) -> EngineSeq | None:
    """The engine's measured host microseconds per running sequence per step (the table's "engine_seq":
    bench/measure_engine_seq.py on the engine's own server), at the smallest batch measured and its growth up to
    the largest, and the host microseconds every step pays (its "step": the intercept through the two smallest
    batches), each stated at :func:`_ref_op`'s host op time; None where not measured."""
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
    step = (doc or {}).get("step") or {}
    s_us = (step.get("step_us") or {}).get(engine)
    s_at = (None if s_us is None else float(s_us) * (ref / float(step["host_op_us"])
                                                       if ref and step.get("host_op_us") else 1.0))
    if len(pts) == 1 or not u0:
        return EngineSeq(u0, _NO_RISE, s_at)
    return EngineSeq(u0, SeqRise(int(pts[0]["batch"]), int(pts[-1]["batch"]), at(pts[-1]) / u0 - 1.0), s_at)


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
    return replace(c, **{k: getattr(c, k) * (rq if k in FRONT_TERMS else r) for k in HOST_TERMS}, stages=st,
                   ingest_us=c.ingest_us * rq)


def seq_count(c: Coefficients, seqs: int) -> float:
    """``seqs`` weighted by the per-sequence host cost's measured growth with the batch (``Coefficients.seq_rise``:
    linear between the measured batches, flat beyond)."""
    r = c.seq_rise
    if r.hi > r.lo and seqs > r.lo:
        return seqs * (1.0 + r.growth * min(1.0, (seqs - r.lo) / (r.hi - r.lo)))
    return float(seqs)


def theta(c: Coefficients) -> tuple[float, ...]:
    return (1.0 / c.bw_eff, 1.0 / c.flops_eff, 1.0 / c.attn_eff, 1.0 / c.link_eff, c.collective_us, c.step_us,
            c.seq_us, c.layer_us, c.eager_layer_us, c.extend_layer_us)


def request_theta(c: Coefficients) -> tuple[float, float]:
    """The per-request TTFT terms, whose features are (1e-3, requests in flight at arrival x 1e-6)."""
    return (c.request_ms, c.inflight_us)


def from_theta(th: tuple[float, ...] | list[float], base: Coefficients) -> Coefficients:
    """Coefficients from ``theta(c) + request_theta(c)`` values."""
    from dataclasses import replace

    return replace(base, bw_eff=1.0 / th[0], flops_eff=1.0 / th[1], attn_eff=1.0 / th[2], link_eff=1.0 / th[3],
                   collective_us=th[4], step_us=th[5], seq_us=th[6], layer_us=th[7], eager_layer_us=th[8],
                   extend_layer_us=th[9], request_ms=th[10], inflight_us=th[11])
