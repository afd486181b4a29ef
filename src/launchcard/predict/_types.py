"""The typed records of a prediction: the workload asked about and the answer.

Frozen dataclasses (no pydantic): a plan search builds thousands of these a second.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from launchcard.errors import InputError

# the terms a phase's time is made of (``bound`` shares)
# "streaming": the time the API server and the benchmark client, each a pipeline stage in its own process, keep the
# client's view of a step's tokens behind the engine (predict._sim's stage clocks)
TERMS = ("memory", "compute", "communication", "overhead", "streaming", "queueing")
# requests in a burst unless given: ``vllm bench serve --num-prompts``'s default (vLLM 0.11.2
# vllm/benchmarks/serve.py; its --request-rate defaults to inf: "all the requests are sent at time 0")
BURST_REQUESTS = 1000
# a Poisson run's fewest requests (launchcard's choice, not the client's: 10 s of a slow rate is a request or none)
RATE_MIN_REQUESTS = 32
# the most requests one prediction simulates: every request is simulated (100,000 closed-loop requests of a 4k
# prompt take ~10 s of CPU here, ten times the steps of a 32k prompt ~ten times that); a workload above it is
# refused before any number rather than left running for hours (a plan search simulates it per candidate)
MAX_REQUESTS = 100_000
# the longest run of arrivals the simulation's clock (float seconds from the run's start, 52-bit mantissa) still
# counts to the microsecond its figures are written in: 2^52 us, about 143 years.  Past it steps were lost in the
# clock's rounding (gpt-oss-120b TP2 --rate 1e-16: TPOT 0.245 ms where one request alone runs 4.33 ms; 1e-20: none)
CLOCK_SPAN_S = 2.0 ** 52 * 1e-6
# the decimals each serving figure is written with in JSON: one rounding for every surface that writes it (predict
# --json, plan --json's figures, the web's prediction panel), so one value reads the same everywhere
FIGURE_DIGITS = {"ttft_ms_mean": 3, "ttft_ms_median": 3, "tpot_ms_mean": 4, "itl_ms_mean": 4, "e2e_ms_mean": 3,
                 "output_tok_per_s": 3, "output_tok_per_s_per_gpu": 3, "output_tok_per_s_per_user": 3,
                 "request_per_s": 5}
# where the client sends its requests: "completions" (a text prompt: vllm bench serve's default --backend openai,
# --endpoint /v1/completions) or "chat" (one user message, rendered by the model's chat template on the server:
# --backend openai-chat --endpoint /v1/chat/completions); predict._endpoint says what the chat endpoint costs
ENDPOINTS = ("completions", "chat")


# the words an option that takes infinity (--rate: every request at once) reads as it
INFINITY_WORDS = ("inf", "+inf", "infinity", "+infinity")


def read_number(text: str, *, where: str, fix: str, infinity: bool = False) -> float:
    """A number option's text: finite, or infinity where the option takes it and says it as a word.

    ``float()`` reads ``1e400`` as infinity (and ``nan`` as a number): ``--rate 1e400`` ran as a burst."""
    word = text.strip().lower()
    if infinity and word in INFINITY_WORDS:
        return math.inf
    try:
        value = float(word)
    except ValueError:
        raise InputError(f"{text!r} is not a number", where=where, fix=fix) from None
    if math.isnan(value):
        raise InputError(f"{text!r} is not a number", where=where, fix=fix)
    if math.isinf(value) and "inf" in word:
        raise InputError(f"{text!r}: infinity is not a value this option takes", where=where, fix=fix)
    if math.isinf(value):
        said = ", which this option takes only as the word inf" if infinity else ""
        raise InputError(f"{text!r} is beyond a float's range (it would be read as infinity{said})",
                         where=where, fix=fix)
    return value


@dataclass(frozen=True, slots=True)
class Workload:
    """Traffic: input/output lengths and how requests arrive, in ``vllm bench serve``'s terms.

    Arrivals: ``concurrency`` alone is a closed loop (``--max-concurrency C`` at the default
    request rate inf); ``rate`` alone is Poisson (``--request-rate R``); both are Poisson
    arrivals with at most ``concurrency`` in flight (``--request-rate R --max-concurrency C``:
    a request finding C in flight waits in the client, and its TTFT starts when it is sent);
    ``rate=math.inf`` alone sends all ``num_requests`` at once (a burst: the client's default).
    ``num_requests`` defaults to 10 x concurrency (closed loop), 1000 for a burst (the client's
    ``--num-prompts`` default) or 10 s of arrivals at ``rate`` (at least 32); ``range_ratio``
    draws each request's lengths uniformly from ``[L(1 - r), L(1 + r)]`` around ``isl``/``osl``
    (the client's ``--random-range-ratio``; 0: exact); ``dataset`` ("sharegpt") gives each request the lengths
    that dataset's sampler sends, scaled so that their means are ``isl``/``osl``
    (:mod:`launchcard.predict._lengths`); ``prefix_hit`` is the share of each prompt found in the
    prefix cache; ``acceptance`` the per-token draft acceptance rate of speculative
    decoding (default: from the method, stated as an assumption); ``endpoint`` where the requests go (``ENDPOINTS``:
    ``completions``, the client's default, or ``chat``).
    """

    isl: int
    osl: int
    concurrency: int | None = None
    rate: float | None = None
    num_requests: int | None = None
    prefix_hit: float = 0.0
    acceptance: float | None = None
    range_ratio: float = 0.0
    endpoint: str = "completions"
    dataset: str | None = None

    @property
    def burst(self) -> bool:
        """Every request sent at once: request rate inf with no cap on requests in flight."""
        return self.concurrency is None and self.rate is not None and math.isinf(self.rate)

    @property
    def closed_loop(self) -> bool:
        """``concurrency`` clients, each sending its next request when the last one ended (rate inf or none)."""
        return self.concurrency is not None and (self.rate is None or math.isinf(self.rate))

    @property
    def arrivals(self) -> str:
        """How requests arrive, in words: ``closed loop``, ``all at once``, ``poisson`` or ``poisson, capped``."""
        if self.closed_loop:
            return "closed loop"
        if self.burst:
            return "all at once"
        return "poisson, capped" if self.concurrency is not None else "poisson"

    def lengths(self, requests: int | None = None) -> tuple[tuple[int, int], ...]:
        """Each request's (prompt, output) lengths when a ``dataset`` sets them (empty: every request alike, or
        ``range_ratio``'s classes); ``requests`` of them (default :meth:`requests`)."""
        if self.dataset is None:
            return ()
        from launchcard.predict._lengths import dataset_lengths

        return dataset_lengths(self.dataset, requests or self.requests(), self.isl, self.osl)

    def longest(self) -> tuple[int, int]:
        """The longest prompt and output a request can have (``range_ratio`` widens them upward); with a ``dataset``
        its longest request's (prompt, output): vLLM's ShareGPT sampler keeps no pair over 2048 tokens together, so a
        2048-token context holds every request even where the longest prompt and the longest reply add to more."""
        if self.dataset is not None:
            return max(self.lengths(), key=lambda po: po[0] + po[1])
        if not self.range_ratio:
            return self.isl, self.osl
        return math.ceil(self.isl * (1.0 + self.range_ratio)), math.ceil(self.osl * (1.0 + self.range_ratio))

    def validate(self) -> Workload:
        for name in ("isl", "osl"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise InputError(
                    f"{name} must be a positive token count ({v!r})", fix="pass an integer such as 1024", field=name
                )
        if self.concurrency is None and self.rate is None:
            raise InputError(
                "no load given: neither concurrency nor rate",
                fix="pass --concurrency C (closed loop), --rate R (Poisson requests/s), both (Poisson with at most C "
                "in flight) or --rate inf --num-requests N (all sent at once)",
                field="concurrency",
            )
        if self.concurrency is not None and self.concurrency < 1:
            raise InputError(
                f"concurrency must be >= 1 ({self.concurrency})",
                fix="pass a positive number of clients",
                field="concurrency",
            )
        if self.rate is not None and not self.rate > 0:  # inf: a burst; nan fails here too
            raise InputError(
                f"rate must be a positive number of requests/s or inf ({self.rate})",
                fix="pass e.g. --rate 4, --rate inf (all requests at once), or --concurrency for a closed loop",
                field="rate",
            )
        if self.num_requests is not None and self.num_requests < 1:
            raise InputError(
                f"num_requests must be >= 1 ({self.num_requests})", fix="pass a positive count", field="num_requests"
            )
        # 10 s of arrivals counted as a float first: requests() rounds it, and 10 x 1e308 has no int
        arrivals = 10 * (self.rate or 0.0) if self.num_requests is None and not self.closed_loop else 0.0
        n = self.requests() if arrivals <= MAX_REQUESTS or self.burst else MAX_REQUESTS + 1
        if n > MAX_REQUESTS:
            if self.num_requests is not None:
                name, why = "num_requests", f"{n:,} requests"
            elif self.closed_loop:
                name, why = "concurrency", f"10 x concurrency {self.concurrency:,} = {n:,} requests"
            else:
                name, why = "rate", f"10 s of arrivals at rate {self.rate:g}" + (
                    f" = {round(arrivals):,} requests" if arrivals < 1e15 else "")
            raise InputError(f"{why}: more than the {MAX_REQUESTS:,} requests launchcard simulates in one prediction",
                             fix=f"pass --num-requests N of at most {MAX_REQUESTS:,}", field=name)
        poisson = self.rate is not None and not self.closed_loop and not self.burst
        span = n / self.rate if poisson and self.rate is not None else 0.0
        if span > CLOCK_SPAN_S:
            least = float(f"{n / CLOCK_SPAN_S * 1.05:.2g}")  # two digits, rounded up
            raise InputError(f"{n:,} arrivals at rate {self.rate:g} span {span:.3g} s, longer than the simulation's "
                             "clock counts to the microsecond (2^52 us, about 143 years)", field="rate",
                             fix=f"pass --rate {least:g} or more, or fewer --num-requests")
        if self.endpoint not in ENDPOINTS:
            raise InputError(f"unknown endpoint {self.endpoint!r}", field="endpoint",
                             fix="pass --endpoint completions (vllm bench serve's default) or chat (--backend "
                                 "openai-chat --endpoint /v1/chat/completions)")
        if not 0.0 <= self.prefix_hit < 1.0:
            raise InputError(
                f"prefix hit share must be in [0, 1) ({self.prefix_hit})",
                fix="pass a fraction such as 0.5",
                field="prefix_hit",
            )
        if not 0.0 <= self.range_ratio < 1.0:  # vllm bench serve refuses the same (its random dataset)
            raise InputError(
                f"range ratio must be in [0, 1) ({self.range_ratio})",
                fix="pass e.g. --random-range-ratio 0.5 (lengths uniform in [0.5 L, 1.5 L]); 0 keeps them exact",
                field="range_ratio",
            )
        if self.dataset is not None:
            from launchcard.predict._lengths import DATASETS

            if self.dataset not in DATASETS:
                raise InputError(f"unknown dataset {self.dataset!r}", field="dataset",
                                 fix=f"pass one of: {', '.join(DATASETS)} (or leave it out for exact lengths)")
            if self.range_ratio:
                raise InputError(f"a range ratio ({self.range_ratio}) with dataset {self.dataset}: the dataset sets "
                                 "each request's lengths", field="range_ratio",
                                 fix="pass either --dataset or --random-range-ratio (vllm bench serve's random "
                                     "dataset), not both")
        # 1 is every draft token accepted (k + 1 tokens a step, predict._sim.accepted_per_step), which an n-gram
        # drafter on repeated text reaches: a rate, not bad input
        if self.acceptance is not None and not 0.0 <= self.acceptance <= 1.0:
            raise InputError(
                f"acceptance must be in [0, 1] ({self.acceptance})",
                fix="pass the per-token acceptance rate, e.g. 0.7",
                field="acceptance",
            )
        return self

    def to_json(self) -> dict[str, Any]:
        """The workload as every surface's JSON says it (predict's and plan's ``workload``, a sweep row's)."""
        return {"isl": self.isl, "osl": self.osl, "concurrency": self.concurrency,
                # JSON has no inf: a burst says so in "arrivals"
                "rate": self.rate if self.rate is None or math.isfinite(self.rate) else None,
                "num_requests": self.requests(), "prefix_hit": self.prefix_hit, "arrivals": self.arrivals,
                "range_ratio": self.range_ratio, "endpoint": self.endpoint, "dataset": self.dataset}

    def requests(self) -> int:
        if self.num_requests is not None:
            return self.num_requests
        if self.closed_loop:
            return 10 * (self.concurrency or 1)
        if self.burst:
            return BURST_REQUESTS
        return max(RATE_MIN_REQUESTS, round(10 * (self.rate or 1.0)))

    def requests_rule(self) -> str:
        """How :meth:`requests` chose the run's size when ``--num-requests`` is not given, in words."""
        if self.closed_loop:
            return f"10 x concurrency {self.concurrency or 1}"
        if self.burst:
            return f"{BURST_REQUESTS} sent at once, vllm bench serve's --num-prompts default"
        return f"10 s of arrivals at {self.rate:g}/s, at least {RATE_MIN_REQUESTS}"


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the reader must know: an assumption (``assumed``), a limit hit (``warning``) or a note."""

    severity: str  # assumed | warning | info
    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"severity": self.severity, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class Phase:
    """Where a phase's time goes: seconds per term and the dominant one."""

    name: str
    seconds: dict[str, float] = field(hash=False)

    @property
    def shares(self) -> dict[str, float]:
        total = sum(self.seconds.values())
        return {k: (v / total if total > 0 else 0.0) for k, v in self.seconds.items()}

    @property
    def bound(self) -> str | None:
        """The term with the largest share; None for a phase that took no time (osl 1: no decode at all), where
        no term bounds anything."""
        sh = self.shares
        if not any(v > 0 for v in sh.values()):
            return None
        return max(TERMS, key=lambda k: sh.get(k, 0.0))

    def to_json(self) -> dict[str, Any]:
        return {"bound": self.bound, "shares": {k: round(v, 4) for k, v in self.shares.items()}}


def bound_json(prefill: Phase, decode: Phase) -> dict[str, Any]:
    """``bound`` in every surface's JSON (predict, plan's figures, a sweep row's winner): each phase's dominant
    term and every term's share."""
    return {"prefill": prefill.to_json(), "decode": decode.to_json()}


@dataclass
class SimResult:
    """A simulated run (predict._sim's): every request's figures, as cohorts of requests alike, and the step terms."""

    ttft: list[tuple[float, int]]  # (seconds, requests)
    tpot: list[tuple[float, int]]
    e2e: list[tuple[float, int]]
    makespan: float
    requests: int
    output_tokens: float
    prefill: dict[str, float]
    decode: dict[str, float]
    batch_steps: float  # sum over decode steps of decode sequences
    decode_steps: float
    busy: float  # seconds with work
    steps: int
    preemptions: int
    tokens_per_step: float  # output tokens per decode step of one sequence
    samples: list[dict[str, float]]
    ttft_fv: list[tuple[list[float], int]]  # traced runs: step features summed over each TTFT
    tpot_fv: list[tuple[list[float], int]]  # ... over each decode, per output token after the first
    # most requests running at once: a run with any max_num_seqs from this up to the one simulated is the same run
    # (sequence slots never bound the scheduler), which lets a plan search share it
    running_max: int = 0
    # the CUDA graph limits (tokens a step) that would time every step of this run as it was timed, from the first
    # up to (not including) the second: a plan search shares the run with a batch limit whose graph limit is within
    graph_span: tuple[float, float] = (0.0, math.inf)
    # every request's decode time (first token to last, as the client sees it) and its tokens after the first, summed
    # over requests: vllm bench serve's mean ITL is over every gap of every request (vllm/benchmarks/serve.py 0.32.0
    # L599-632, L766), a mean weighted by output tokens, where its mean TPOT weighs each request alike
    decode_s: float = 0.0
    decode_tokens: float = 0.0
    # the smallest KV capacity (tokens per replica, as the simulation counts them) from which every KV decision of
    # this run (admission, preemption, decode run length) falls as with unlimited KV: a plan that differs only in
    # its KV pool, holding at least this, runs the same (a plan search shares the run); inf: KV decided something
    kv_free_from: float = math.inf


@dataclass(frozen=True, slots=True)
class Prediction:
    """Mean figures as ``vllm bench serve`` reports them (TPOT excludes the first token)."""

    ttft_ms_mean: float
    ttft_ms_median: float
    tpot_ms_mean: float
    itl_ms_mean: float
    e2e_ms_mean: float
    output_tok_per_s: float
    output_tok_per_s_per_gpu: float
    output_tok_per_s_per_user: float
    request_per_s: float
    gpus: int
    prefill: Phase
    decode: Phase
    mean_batch: float  # sequences per decode step
    mean_step_ms: float
    preemptions: int
    findings: tuple[Finding, ...] = ()
    steps: tuple[dict[str, float], ...] = ()  # representative steps (the text output's breakdown)
    # the KV cache of one replica (scheduler), tokens: the engine's own pool as the plan gives it (ServingFacts.
    # kv_capacity_tokens: what vLLM prints as "GPU KV cache size", SGLang's and TensorRT-LLM's own pools; plan
    # --json's kv_cache_tokens_per_replica), and what the simulation charged requests against: the same, except a
    # vLLM sliding-window hybrid's, whose pool of every layer's tokens holds more of the window-bounded requests
    # (finding kv-sliding-window)
    kv_cache_tokens: int = 0
    kv_cache_tokens_simulated: int = 0
    max_running: int = 0  # most requests running at once on a replica (max_num_seqs at or above it: same run)
    # CUDA graph limits (tokens a step) that time every step of the run alike: from the first up to the second
    graph_span: tuple[float, float] = (0.0, math.inf)
    # the simulated run itself (a SimResult, with the KV capacity from which it is the same: ``kv_free_from``): a plan
    # search hands it to :func:`predict` of a plan differing only in its KV pool (never shown, never compared)
    run: SimResult | None = field(default=None, compare=False, repr=False)

    @property
    def has_tpot(self) -> bool:
        """Whether some request has a second output token (osl 1: none, so no time per output token at all)."""
        return self.tpot_ms_mean > 0

    def to_json(self) -> dict[str, Any]:
        r = round
        # no second token: TPOT, ITL and tokens/s per user are undefined (null), never 0 read as a prediction
        per_token = self.has_tpot
        return {
            **figures_json(ttft_ms_mean=self.ttft_ms_mean, ttft_ms_median=self.ttft_ms_median,
                           tpot_ms_mean=self.tpot_ms_mean if per_token else None,
                           itl_ms_mean=self.itl_ms_mean if per_token else None, e2e_ms_mean=self.e2e_ms_mean,
                           output_tok_per_s=self.output_tok_per_s,
                           output_tok_per_s_per_gpu=self.output_tok_per_s_per_gpu,
                           output_tok_per_s_per_user=self.output_tok_per_s_per_user if per_token else None,
                           request_per_s=self.request_per_s),
            "gpus": self.gpus,
            "bound": bound_json(self.prefill, self.decode),
            "mean_batch": r(self.mean_batch, 3),
            "mean_step_ms": r(self.mean_step_ms, 4),
            "preemptions": self.preemptions,
            "max_running": self.max_running,
            "kv_cache_tokens_per_replica": self.kv_cache_tokens,
            "kv_cache_tokens_simulated": self.kv_cache_tokens_simulated,
            "findings": [f.to_json() for f in self.findings],
            "outside_calibration": outside_json(self.findings),
            "steps": [{k: r(v, 4) for k, v in s.items()} for s in self.steps],
        }


# the codes of the findings that say where a prediction stands outside its coefficient set's calibrated domain
# (predict._domain writes them; bench/predict_heldout.py splits its rows by them)
DOMAIN_CODES = ("domain-batch", "domain-lengths", "domain-release", "domain-gpu", "domain-platform")


def outside_json(findings: Iterable[Finding]) -> list[dict[str, str]]:
    """The ``outside_calibration`` list of every JSON that gives one (a plan's figures, the web's predicted
    points): the domain findings among ``findings``, one per cause (the first said), as findings
    (severity, code, message), in DOMAIN_CODES' order."""
    first: dict[str, Finding] = {}
    for f in findings:
        if f.code in DOMAIN_CODES:
            first.setdefault(f.code, f)
    return [first[c].to_json() for c in DOMAIN_CODES if c in first]


def outside_read(listed: Iterable[Mapping[str, object]]) -> tuple[Finding, ...]:
    """:func:`outside_json`'s list read back as findings (a page's note counts them over its points)."""
    return tuple(Finding(str(f.get("severity", "assumed")), str(f["code"]), str(f["message"])) for f in listed)


def figures_json(**figures: float | None) -> dict[str, float | None]:
    """Serving figures as JSON writes them, each at its :data:`FIGURE_DIGITS` (None stays null); a non-zero figure
    those decimals would write as 0 keeps four significant digits instead (``--rate 1e-9``: 3.2e-09 requests/s)."""
    return {k: None if v is None else _rounded(v, FIGURE_DIGITS[k]) for k, v in figures.items()}


def _rounded(value: float, decimals: int) -> float:
    r = round(value, decimals)
    return float(f"{value:.4g}") if r == 0 and value != 0 else r


@dataclass(frozen=True, slots=True)
class Domain:
    """The span of the runs a coefficient set was fitted on."""

    source: str  # which runs (the set's own rows) and how the figures below were read from them
    runs: int
    batch_max: int  # clients per replica (the largest decode batch a run could reach)
    batch_runs: tuple[tuple[str, int], ...]  # runs by clients per replica ("<=8", ...)
    isl: tuple[int, int]  # shortest and longest prompt sent (the client's own draw)
    osl: tuple[int, int]
    releases: tuple[str, ...]  # the engine releases the runs name
    releases_unnamed: int  # runs whose release is a nightly tag or not recorded
    gpus: tuple[str, ...]  # hardware catalog ids
    vendors: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "runs": self.runs, "batch_max": self.batch_max,
                "batch_runs": dict(self.batch_runs), "isl": list(self.isl), "osl": list(self.osl),
                "releases": list(self.releases), "releases_unnamed": self.releases_unnamed, "gpus": list(self.gpus),
                "vendors": list(self.vendors)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Domain:
        return cls(source=str(d["source"]), runs=int(d["runs"]), batch_max=int(d["batch_max"]),
                   batch_runs=tuple((str(k), int(v)) for k, v in dict(d["batch_runs"]).items()),
                   isl=(int(d["isl"][0]), int(d["isl"][1])), osl=(int(d["osl"][0]), int(d["osl"][1])),
                   releases=tuple(str(x) for x in d["releases"]), releases_unnamed=int(d["releases_unnamed"]),
                   gpus=tuple(str(x) for x in d["gpus"]), vendors=tuple(str(x) for x in d["vendors"]))


def config_name(config: str | Path) -> str:
    """What a plan of this config.json is called when no model id is given: its folder's name where the file is a
    checkpoint's ``config.json`` (``.../Qwen3-8B/config.json``), else the path as given (a loose file's folder names
    nothing about the model)."""
    path = Path(config)
    if path.is_dir():
        return path.name or str(config)
    return (path.parent.name if path.name == "config.json" else "") or str(config)

