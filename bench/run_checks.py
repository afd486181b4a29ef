"""Checks of a calibration run's own measurements against its plan, applied by ``bench/predict_accuracy.py`` before
any fit: a run they flag is left out of the fit and the scores, under its stated reason (never for its error).

A closed loop of C clients (each sends its next request when the last one ends) holds, by Little's law, C x D / (TTFT
+ D) requests decoding on average, D = TPOT x (osl - 1) being a request's decode time: a run whose clients all run
at once has TTFT small beside D, one whose clients wait in a queue has TTFT many times D.  A queue is what a server
limit makes (KV blocks, max-num-seqs), but a server so limited still runs the batch it admits, which is at least as
slow a decode as a quarter of the clients on the same plan (a decode step does not get faster with more sequences)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

# the fraction of its clients a run must hold in service (Little's law on its means) before its queue is suspected
SERVED_SHARE = 0.5
# a sibling run with at most this fraction of the clients is one the queued run cannot decode faster than
SIBLING_SHARE = 0.25


@dataclass(frozen=True)
class RunMeans:
    """One run as the checks see it: its configuration (``layout``: model, GPU, engine, quant, lengths, parallel
    layout, the runs whose TPOT may be compared), clients, lengths, measured means and its plan's admission limits."""

    id: str
    layout: tuple[object, ...]
    clients: int
    replicas: int
    isl: int
    osl: int
    ttft_ms: float
    tpot_ms: float
    max_num_seqs: int
    kv_capacity_tokens: int


def in_service(r: RunMeans) -> float:
    """Requests decoding at once on average, from the run's own means (Little's law over a closed loop)."""
    decode = r.tpot_ms * max(0, r.osl - 1)
    return r.clients * decode / (r.ttft_ms + decode) if decode > 0 else float(r.clients)


def plan_admits_all(r: RunMeans) -> bool:
    """Whether the plan runs every client at once: each replica's share within max-num-seqs and its KV holding that
    many whole requests."""
    per = math.ceil(r.clients / max(1, r.replicas))
    return per <= r.max_num_seqs and per * (r.isl + r.osl) <= r.kv_capacity_tokens


def unserved_clients(runs: Iterable[RunMeans]) -> dict[str, str]:
    """Runs whose clients were not all served, by id, with the reason: their own means put fewer than half of them in
    service although the plan admits every one (no server limit the plan knows queues them), and they decode no
    slower than a run of the same layout with a quarter of the clients or fewer (so no limit the plan misses, which
    would still run a full admitted batch, queued them either: the server did not see the clients the run is
    labelled with)."""
    runs = list(runs)
    by_layout: dict[tuple[object, ...], list[RunMeans]] = {}
    for r in runs:
        by_layout.setdefault(r.layout, []).append(r)
    out = {}
    for r in runs:
        served = in_service(r)
        if served >= SERVED_SHARE * r.clients or not plan_admits_all(r):
            continue
        faster = [s for s in by_layout[r.layout] if s.clients <= SIBLING_SHARE * r.clients and r.tpot_ms <= s.tpot_ms]
        if faster:
            s = min(faster, key=lambda s: s.clients)
            out[r.id] = (f"{served:.0f} of its {r.clients} clients in service by its own means (TTFT {r.ttft_ms:,.0f} "
                         f"ms, TPOT {r.tpot_ms:.2f} ms) though its plan admits all, and TPOT no higher than {s.id} "
                         f"at {s.clients} clients ({s.tpot_ms:.2f} ms)")
    return out


def recorded_clients(source: str) -> int | None:
    """The clients a silicon_sample row's source field records (``silicon_concurrency=N``); None where it names none."""
    for part in source.split(";"):
        key, _, value = part.strip().partition("=")
        if key == "silicon_concurrency" and value.strip().isdigit():
            return int(value.strip())
    return None


def clients_disagree(source: str, batch_size: int, attention_dp: int) -> str | None:
    """Why a row's columns cannot be read as its run, or None: the CSV's clients are batch_size x attention_dp_size
    (what every other row records), and a row whose own source field records another count (30 of the wheel's
    aggregated rows: aiconfigurator's trtllm runs whose batch_size is the count over the TP ranks, c224 filed as 56 at
    TP 4 with no attention DP, and one InferenceX run filed at attention DP 64 on its 8 GPUs) leaves its clients or its
    layout unknown."""
    got = recorded_clients(source)
    if got is None or got == batch_size * attention_dp:
        return None
    return (f"batch_size {batch_size} x attention_dp_size {attention_dp} is not the {got} clients its source "
            "records (silicon_concurrency)")


def sweep_of(source: str, model: str, system: str, engine: str) -> tuple[str, ...]:
    """The sweep a silicon_sample row belongs to: its source file and measurement date, model, GPU and engine."""
    fields = dict(part.strip().partition("=")[::2] for part in source.split(";"))
    return fields.get("source_file", ""), fields.get("measured", "")[:10], model, system, engine


# Why a whole sweep is left out when one of its layouts has no aggregated server: the one such sweep in the wheel
# with rows the planner can build otherwise (2026-04-06.csv, measured 2025-11-17, DeepSeek-R1 on GB200 with
# TensorRT-LLM: 34 rows, 32 of them at TP 12-52, which do not divide the 128 attention heads) is filed "agg" at the
# GPU counts of Dynamo deployments of prefill and decode workers (the InferenceX GB200 DeepSeek scripts listed are
# Dynamo ones: benchmarks/dsr1_fp4_gb200_dynamo-trt_slurm.sh, dsr1_fp*_gb200_dynamo-sglang.sh), so its TP 32 and 64
# rows are no aggregated runs either
SPLIT_SWEEP = ("sweep holds a layout no aggregated server runs (TP not dividing the attention heads): its runs are "
               "not aggregated as filed")
