"""SGLang's defaults that both the SGLang command reader (``_sglang``) and the plan facts (``_facts``) apply: the
rules of one release, each cited where it is defined."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

RULES_RELEASE = "0.5.6.post2"
_SA = f"SGLang {RULES_RELEASE} python/sglang/srt/server_args.py"
# ServerArgs._handle_gpu_memory_settings (server_args.py:752-835): (MiB below which, chunked_prefill_size,
# cuda_graph_max_bs for tp < 4, for tp >= 4), CUDA GPUs (the NPU rows are skipped)
_BY_MEMORY = ((20 * 1024, 2048, 8, 8), (35 * 1024, 2048, 24, 80), (60 * 1024, 4096, 32, 160),
              (90 * 1024, 8192, 256, 512), (160 * 1024, 8192, 256, 512), (math.inf, 16384, 512, 512))


def _memory_row(gpu_mib: float | None) -> tuple[float, int, int, int] | None:
    return next((r for r in _BY_MEMORY if gpu_mib is not None and gpu_mib < r[0]), None)


def default_graph_bs(gpu_gib: float | None, tp: int) -> tuple[int, str]:
    """SGLang's --cuda-graph-max-bs when a launch gives none, and why (the rule ``sglang_plan`` applies)."""
    row = _memory_row(gpu_gib * 1024 if gpu_gib else None)
    bs = (row[2] if tp < 4 else row[3]) if row else 160
    what = f"{gpu_gib:g} GiB per GPU" if gpu_gib else "GPU memory unknown (SGLang's fallback)"
    return bs, f"SGLang's --cuda-graph-max-bs default for {what}, TP {tp} ({_SA}:752-835)"


# When a closed-loop client's next request can first be received, counted in forward passes after the one whose
# output ended its last request (SGLang 0.5.9, same in 0.5.10.post1: python/sglang/srt/managers/scheduler.py).
# Every loop turn receives (recv_requests, L1217-1227) BEFORE it learns which requests ended: the normal loop
# (event_loop_normal, L1108-1132) processes a batch's output after running it and polls at once on the next turn,
# before the client's next request can be back (detokenizer, HTTP, client, tokenizer), so that request first meets
# the receive after the next pass: 1.  The overlap loop (event_loop_overlap, L1135-1186) launches the next batch
# before it processes the last one's output (L1164-1173), so the request misses the receive of the turn that
# processes the ending batch and the next one: 2.  With --scheduler-recv-interval only every R-th decode pass (or
# the one after a prefill batch) receives at all (scheduler_recv_skipper.py L26-38: DECODE / TARGET_VERIFY / no
# batch weigh 1, any other mode 1000, a receive at a count >= R, the count back to 0; a speculative step is one
# TARGET_VERIFY-then-DECODE batch, its draft passes inside it, eagle_worker.py L691-700, L776-778).
RECV_LAG_NORMAL = 1
RECV_LAG_OVERLAP = 2


def overlap_schedule(*, disabled: bool, pp: int, spec: bool, spec_v2: bool) -> bool:
    """Whether SGLang runs event_loop_overlap (scheduler.py L3166-3171): unless --disable-overlap-schedule, pipeline
    parallelism (server_args.py L2271-2276) or speculative decoding without SGLANG_ENABLE_SPEC_V2 (L2366-2388)."""
    return not disabled and pp <= 1 and (not spec or spec_v2)


def recv_lag(overlap: bool) -> int:
    """Passes a closed-loop client's next request misses (see :data:`RECV_LAG_OVERLAP`)."""
    return RECV_LAG_OVERLAP if overlap else RECV_LAG_NORMAL


def receive_note(interval: int, overlap: bool) -> str:
    """What ``--scheduler-recv-interval`` does to a prediction (the finding ``sglang-receive``)."""
    lag = recv_lag(overlap)
    return (f"--scheduler-recv-interval {interval}: SGLang's scheduler receives new requests only after a prefill "
            f"batch or every R decode passes (R = {interval}) since the last receive (scheduler_recv_skipper.py, "
            f"0.5.9), and a client's next request misses the {lag} pass(es) launched before the end of its last one is "
            f"known ({'overlap' if overlap else 'normal'} event loop, scheduler.py): in closed loops it waits about "
            f"{interval / 2:g} + {lag} decode passes for its prefill; arrivals at a rate are timed as received at "
            "the next pass")


# SGLang's admission budget and retraction: the same rules in 0.5.3.post3, 0.5.4.post3, 0.5.5.post3, 0.5.6.post2 and
# 0.5.9 (read in each; lines are 0.5.5.post3's python/sglang/srt/ unless named).
# - Admission: a prefill batch takes a waiting request only while its prompt plus its whole output (clipped at
#   SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION) is less than the free KV pool minus what the running requests are expected
#   to still need, their outputs left x new_token_ratio (managers/schedule_policy.py PrefillAdder L367-375, add_one_req
#   L571-581; 0.5.3.post3 counts a re-admitted request's whole output, L571-573); each request taken lowers the room
#   by its prompt and whole output (L434-441).  0.5.9: schedule_policy.py L439-446, L734-745.
# - The ratio starts at SGLANG_INIT_NEW_TOKEN_RATIO x --schedule-conservativeness (x 0.3 with DP attention,
#   server_args.py L1383; 0.5.9 L2115), falls by (init - floor) / SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS every decode
#   batch to the floor init x SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR (managers/scheduler.py L481-493, L1966-1970;
#   environ.py L165-168: 0.7, 0.14, 600; 0.5.9 scheduler.py L811-823, L2257-2260), and is back at init when the
#   scheduler idles (managers/scheduler_runtime_checker_mixin.py L251).
# - Retraction: a decode batch without KV for its next tokens (check_decode_mem) runs retract_decode
#   (managers/schedule_batch.py L1503-1573; 0.5.9 L1847-1905): the requests with the fewest output tokens go (the
#   longest prompt first among equals; with speculative decoding the newest), at least one and until the rest fit,
#   never the last; their KV is freed, not kept in the radix cache (release_req L1575-1587), they join the END of the
#   waiting queue (scheduler.py L1459-1466, FCFS) and are prefilled again from scratch, prompt and outputs; the
#   ratio becomes (outputs so far + SGLANG_RETRACT_DECODE_STEPS x requests) / (their max new tokens + 1) over the
#   requests left, at most 1 (scheduler.py L1943-1963).
# - A refused admission (no KV room, or no request slot) stops admissions until a request leaves the running batch
#   (batch_is_full: scheduler.py L1756-1772, L1815-1854; cleared at L1698, L1939, L1973).
@dataclass(frozen=True, slots=True)
class SglangBudget:
    """SGLang's admission estimate: the new-token ratio's start, floor and fall per decode batch, the clip on a
    request's outputs counted, and the decode steps a retraction adds per remaining request."""

    init: float = 0.7
    floor: float = 0.7 * 0.14
    decay: float = (0.7 - 0.7 * 0.14) / 600
    clip: int = 4096
    retract_steps: int = 20


DEFAULT_BUDGET = SglangBudget()
_ENV_FLOAT = {"SGLANG_INIT_NEW_TOKEN_RATIO": 0.7, "SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR": 0.14}
_ENV_INT = {"SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS": 600, "SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION": 4096,
            "SGLANG_RETRACT_DECODE_STEPS": 20}
DP_ATTENTION_CONSERVATIVENESS = 0.3  # server_args.py L1383 (0.5.9 L2115)


def sglang_budget(conservativeness: float = 1.0, *, dp_attention: bool = False,
                  env: Mapping[str, str] | None = None) -> SglangBudget:
    """The admission estimate of one SGLang server: --schedule-conservativeness (x 0.3 with DP attention) and the
    SGLANG_* environment variables of its command (SGLang's defaults where unset).  Raises ValueError on an
    environment value SGLang could not read (its args: the variable's name)."""
    e = env or {}
    f = {k: _read(e, k, v, float) for k, v in _ENV_FLOAT.items()}
    i = {k: int(_read(e, k, v, int)) for k, v in _ENV_INT.items()}
    cons = conservativeness * (DP_ATTENTION_CONSERVATIVENESS if dp_attention else 1.0)
    init = min(f["SGLANG_INIT_NEW_TOKEN_RATIO"] * cons, 1.0)
    floor = min(init * f["SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR"], 1.0)
    steps = max(1, i["SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS"])
    return SglangBudget(init=init, floor=floor, decay=(init - floor) / steps,
                        clip=i["SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION"], retract_steps=i["SGLANG_RETRACT_DECODE_STEPS"])


def _read(env: Mapping[str, str], key: str, default: float, kind: type[float] | type[int]) -> float:
    if key not in env:
        return default
    try:
        return kind(env[key])
    except ValueError:
        raise ValueError(key) from None


def admission_note(b: SglangBudget) -> str:
    """How SGLang admits and retracts requests, with the plan's figures (the finding ``sglang-admission``)."""
    return (f"SGLang admits a waiting request while its prompt + output (clipped at {b.clip}) fits the free KV pool "
            f"less the running requests' outputs left x a ratio that starts at {b.init:.3g}, falls by {b.decay:.3g} "
            f"every decode batch to {b.floor:.3g} and is back at {b.init:.3g} when the server idles; when a decode "
            "batch finds no KV room it retracts the requests with the fewest outputs to the end of the queue, to be "
            "prefilled again, and sets the ratio to the remaining requests' (outputs so far + "
            f"{b.retract_steps} each) / (their output lengths + 1) "
            "(schedule_policy.py PrefillAdder, schedule_batch.py retract_decode; the same in 0.5.3-0.5.9)")
