"""The typed records of a plan search: the SLO asked for, one candidate plan, its outcome, the result.

Frozen dataclasses (no pydantic): a search builds thousands of these a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from launchcard.errors import InputError

if TYPE_CHECKING:
    from launchcard.predict import Finding, HardwareFigures, Phase, Workload

MAX_NUM_SEQS = (8, 16, 32, 64, 128, 256, 512, 1024)


@dataclass(frozen=True, slots=True)
class Slo:
    """Service-level objective: mean TTFT and mean TPOT limits in ms (as ``vllm bench serve`` reports them)."""

    ttft_ms: float | None = None
    tpot_ms: float | None = None

    @classmethod
    def parse(cls, text: str) -> Slo:
        """``ttft=MS,tpot=MS`` (either may be left out, not both)."""
        values: dict[str, float] = {}
        fix = "write --slo ttft=MS,tpot=MS, e.g. --slo ttft=2000,tpot=50"
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            key, sep, raw = part.partition("=")
            key = key.strip().lower()
            if not sep or key not in ("ttft", "tpot"):
                raise InputError(f"SLO term {part!r} is not ttft=MS or tpot=MS", where="--slo", fix=fix,
                                 field="slo")
            if key in values:
                raise InputError(f"SLO term {key} given twice", where="--slo", fix=fix, field="slo")
            try:
                v = float(raw.strip().removesuffix("ms"))
            except ValueError:
                raise InputError(f"SLO {key} value {raw.strip()!r} is not a number of milliseconds", where="--slo",
                                 fix=fix, field="slo") from None
            if not (v > 0 and math.isfinite(v)):
                raise InputError(f"SLO {key} must be a positive number of milliseconds ({raw.strip()})",
                                 where="--slo", fix=fix, field="slo")
            values[key] = v
        if not values:
            raise InputError(f"empty SLO ({text!r})", where="--slo", fix=fix, field="slo")
        return cls(ttft_ms=values.get("ttft"), tpot_ms=values.get("tpot"))

    def check(self, work: Workload) -> Slo:
        """This SLO judged against ``work``: a TPOT limit on a workload whose requests have no second output token
        (``osl`` 1: predict's TPOT is none, never 0) has nothing to judge, so every plan would "meet" it; refused
        (exit 2) instead of ranking plans by a figure they do not have."""
        if self.tpot_ms is not None and work.dataset is None and work.longest()[1] <= 1:
            raise InputError(f"SLO tpot={self.tpot_ms:g} with output length {work.osl}: no request has a second "
                             "output token, so there is no TPOT to judge", where="--slo",
                             fix="drop tpot from the SLO (e.g. --slo ttft=MS), or raise --osl", field="slo")
        return self

    def misses(self, ttft_ms: float, tpot_ms: float) -> list[str]:
        """Why figures miss the SLO ([] when they meet it)."""
        out = []
        if self.ttft_ms is not None and ttft_ms > self.ttft_ms:
            out.append(f"TTFT {ttft_ms:,.1f} ms > {self.ttft_ms:g} ms")  # as the figures print it
        if self.tpot_ms is not None and tpot_ms > self.tpot_ms:
            out.append(f"TPOT {tpot_ms:.2f} ms > {self.tpot_ms:g} ms")
        return out

    def excess(self, ttft_ms: float, tpot_ms: float) -> float:
        """How far figures are from the SLO: the largest ratio figure / limit (<= 1 meets it)."""
        r = [ttft_ms / self.ttft_ms] if self.ttft_ms else []
        r += [tpot_ms / self.tpot_ms] if self.tpot_ms else []
        return max(r) if r else 0.0

    def text(self) -> str:
        parts = [f"ttft={self.ttft_ms:g}"] if self.ttft_ms is not None else []
        parts += [f"tpot={self.tpot_ms:g}"] if self.tpot_ms is not None else []
        return ",".join(parts)


@dataclass(frozen=True, slots=True)
class Option:
    """One model build the sources offer: a recipe variant (its checkpoint and config) or the checkpoint itself.

    ``flags`` are the variant's own serving flags that decide memory and speed (``--quantization``,
    ``--kv-cache-dtype``, ``--speculative-config`` ...), as the resolved command has them."""

    name: str  # variant key, or "checkpoint"
    model_id: str
    config: str  # config.json path
    quantization: str | None = None
    spec: tuple[tuple[str, int], ...] = ()  # speculative methods offered: (method, num_speculative_tokens)
    spec_config: tuple[str, ...] = ()  # each spec's --speculative-config JSON as the source writes it (draft model)
    base_flags: tuple[str, ...] = ()  # the resolved command's argv after the model (memory-relevant flags read)
    # each spec's own command flags where the source gives it a command of its own (a recipe feature resolved on:
    # every arg of the feature and mode, e.g. Qwen3-Next's --no-enable-chunked-prefill), () where the spec is
    # written onto ``base_flags``; its recipe (feature, mode) to resolve a winner with; where it comes from
    spec_flags: tuple[tuple[str, ...], ...] = ()
    spec_choice: tuple[tuple[str, str | None] | None, ...] = ()
    spec_source: tuple[str, ...] = ()
    # the recipe features of ``base_flags``' plan (every speculative feature off); None: not a recipe's
    off_features: tuple[str, ...] | None = None
    # SGLang's speculative offers of the sources: (method, draft tokens, the source's --speculative-* flags as
    # shell words, where): what an SGLang candidate of that method writes
    sglang_spec: tuple[tuple[str, int, str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Candidate:
    """One plan: an option of the model and how it is laid out and batched on the GPUs."""

    option: str
    tp: int
    pp: int
    dp: int
    ep: bool
    kv_cache_dtype: str
    max_num_seqs: int
    spec: str | None = None  # speculative method (None: off)
    spec_tokens: int = 0
    mode: str = "aggregated"  # or "disaggregated" (prefill/decode pools)
    prefill_gpus: int = 0  # disaggregated: GPUs of the prefill pool (the rest decode)
    # SGLang --enable-dp-attention: ``dp`` attention ranks inside the TP group (not replicas: the GPUs are TP x PP)
    dp_attention: bool = False
    engine: str = "vllm"  # whose option names the label uses
    chunk: int = 0  # SGLang --chunked-prefill-size (0: the engine's default for the GPU)

    @property
    def gpus(self) -> int:
        if self.mode != "aggregated":
            return self.prefill_gpus + self.tp * self.dp
        return self.tp * self.pp * (1 if self.dp_attention else self.dp)

    def label(self) -> str:
        par = f"TP{self.tp}" + (f" PP{self.pp}" if self.pp > 1 else "")
        if self.dp > 1:
            par += f" DP{self.dp}" + ("-attention" if self.dp_attention else "")
        if self.ep:
            par += " EP"
        limit = "max-running-requests" if self.engine == "sglang" else "max-num-seqs"
        bits = [self.option, par, f"kv={self.kv_cache_dtype}", f"{limit}={self.max_num_seqs}"]
        if self.chunk:
            bits.append(f"chunked-prefill-size={self.chunk}")
        if self.spec:
            bits.append(f"spec={self.spec}x{self.spec_tokens}")
        if self.mode == "disaggregated":
            bits.append(f"P/D {self.prefill_gpus}+{self.gpus - self.prefill_gpus} GPUs")
        return " ".join(bits)

    def to_json(self) -> dict[str, Any]:
        return {"option": self.option, "tp": self.tp, "pp": self.pp, "dp": self.dp, "expert_parallel": self.ep,
                "kv_cache_dtype": self.kv_cache_dtype, "max_num_seqs": self.max_num_seqs,
                "speculative": ({"method": self.spec, "num_speculative_tokens": self.spec_tokens}
                                if self.spec else None),
                "mode": self.mode, "prefill_gpus": self.prefill_gpus if self.mode == "disaggregated" else None,
                "dp_attention": self.dp_attention, "chunked_prefill_size": self.chunk or None, "engine": self.engine,
                "gpus": self.gpus, "label": self.label()}


@dataclass(frozen=True, slots=True)
class Figures:
    """The predicted figures a search ranks by (means, as ``vllm bench serve`` reports them)."""

    ttft_ms: float
    tpot_ms: float
    tok_s: float
    tok_s_per_gpu: float
    tok_s_per_user: float
    request_per_s: float
    bound: str  # what bounds decode (and prefill), one line for the text form
    # the prediction's findings that it stands outside its coefficient set's calibrated domain (predict._domain):
    # the search counts them over its plans and says each cause once
    outside: tuple[Finding, ...] = field(default=(), compare=False)
    kv_tokens: int = 0  # KV cache capacity of one replica (scheduler), tokens: the engine's own pool
    # the phases ``bound`` says, with every term's share (predict's ``bound`` object in JSON): a prefill/decode
    # plan's prefill pool's prefill and decode pool's decode
    phases: tuple[Phase, Phase] | None = field(default=None, compare=False)
    kv_transfer_ms: float | None = None  # a prefill/decode plan's KV transfer between the pools

    def to_json(self) -> dict[str, Any]:
        from launchcard.predict import bound_json, figures_json, outside_json

        per_token = self.tpot_ms > 0  # no second output token (osl 1): no TPOT nor tokens/s per user (null)
        # predict's own rounding of each figure: the winner reads as `predict --json` gives it
        return {**figures_json(ttft_ms_mean=self.ttft_ms, tpot_ms_mean=self.tpot_ms if per_token else None,
                               output_tok_per_s=self.tok_s, output_tok_per_s_per_gpu=self.tok_s_per_gpu,
                               output_tok_per_s_per_user=self.tok_s_per_user if per_token else None,
                               request_per_s=self.request_per_s),
                "bound": bound_json(*self.phases) if self.phases else None,
                **({"kv_transfer_ms": round(self.kv_transfer_ms, 3)} if self.kv_transfer_ms is not None else {}),
                "outside_calibration": outside_json(self.outside),
                "kv_cache_tokens_per_replica": self.kv_tokens}


@dataclass(frozen=True, slots=True)
class Outcome:
    """A candidate and what the search found: figures (when it could be predicted) and why it was rejected."""

    candidate: Candidate
    figures: Figures | None = None
    stage: str = "ok"  # ok | layout | memory | workload | slo
    reason: str | None = None  # None: meets the SLO
    # why launchcard cannot decide whether the plan starts or fits (None: decided); its figures assume it does
    undecided: str | None = None
    # the requests of the screening run its figures come from (None: the whole run's, or no figures): a plan
    # outside the rows a search refines (the best --top, the Pareto front, the closest misses) keeps them
    screening_requests: int | None = None

    @property
    def meets(self) -> bool:
        return self.reason is None and self.figures is not None

    @property
    def decided(self) -> bool:
        return self.undecided is None

    def to_json(self) -> dict[str, Any]:
        return {**self.candidate.to_json(), "figures": self.figures.to_json() if self.figures else None,
                "meets_slo": self.meets, "stage": self.stage, "reason": self.reason, "decided": self.decided,
                "undecided": self.undecided, "screening_requests": self.screening_requests}


@dataclass(frozen=True)
class SearchResult:
    """Every candidate's outcome, the ranking of those meeting the SLO and the Pareto front."""

    model: str
    gpu: str
    gpus: int
    slo: Slo
    outcomes: tuple[Outcome, ...]
    ranked: tuple[Outcome, ...]  # meeting the SLO, best first: decided plans before undecided ones
    # predicted plans no other beats on both tokens/s per GPU and per user: the decided plans' front, with the
    # undecided plans that front does not cover (each marked by its ``undecided``)
    pareto: tuple[Outcome, ...]
    closest: tuple[Outcome, ...]  # predicted plans missing the SLO, nearest first
    seconds: float
    findings: tuple[str, ...] = field(default=())
    # the server command of the aggregated plans listed (the best ranked, the Pareto front, the closest), in the
    # engine's own flags: the searched flags as --emit writes them
    commands: dict[Candidate, tuple[str, ...]] = field(default_factory=dict, hash=False, compare=False)

    @property
    def winner(self) -> Outcome | None:
        return self.ranked[0] if self.ranked else None

    @property
    def meeting(self) -> int:
        """The candidates meeting the SLO, each batch limit counted (``ranked`` lists them as distinct runs: those
        differing only in a max-num-seqs above what the run ever holds are one)."""
        return sum(1 for o in self.outcomes if o.meets)

    @property
    def per_second(self) -> float:
        return len(self.outcomes) / self.seconds if self.seconds > 0 else math.inf

    def example(self, reason: str) -> Outcome | None:
        """The first outcome rejected for ``reason`` (a key of :meth:`rejected_by_reason`)."""
        return next((o for o in self.outcomes if o.reason is not None
                     and f"{o.stage}: {_reason_kind(o.reason)}" == reason), None)

    def rejected_by_reason(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for o in self.outcomes:
            if o.reason is not None:
                key = f"{o.stage}: {_reason_kind(o.reason)}"
                counts[key] = counts.get(key, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def _reason_kind(reason: str) -> str:
    """A reason without its numbers, for counting (``TPOT 31.2 ms > 20 ms`` -> ``TPOT over the SLO``)."""
    if reason.startswith("["):  # a start-up refusal: its rule's code
        return reason[1:].split("]")[0]
    if reason.startswith(("TTFT", "TPOT")):
        return " and ".join(f"{p.split()[0]} over the SLO" for p in reason.split("; "))
    return reason.split(" (")[0]


@dataclass(frozen=True)
class SearchSpace:
    """What may vary: the options the sources offer and the batching limits tried; the GPUs are fixed."""

    model: str
    gpu: str
    gpus: int
    gpus_per_node: int
    options: tuple[Option, ...]
    engine: str = "vllm"
    kv_dtypes: tuple[str, ...] | None = None  # None: auto, plus fp8 where the hardware computes in FP8
    max_num_seqs: tuple[int, ...] = MAX_NUM_SEQS
    disaggregation: bool = True  # prefill/decode pools when the GPUs span several nodes
    max_model_len: int | None = None
    engine_version: str | None = None
    chunked_prefill: tuple[int, ...] = ()  # SGLang --chunked-prefill-size values to try (none: its default)
    # what `predict` takes too: the MXFP4 MoE kernel vLLM runs (None: the release's default, or the recipe's
    # command's), and figures that replace the catalog's of `gpu` (--hardware-figures / --no-gpu-p2p)
    mxfp4_backend: str | None = None
    figures: HardwareFigures | None = None

    def validate(self) -> SearchSpace:
        from launchcard.hardware import find

        if self.gpus < 1:
            raise InputError(f"GPU count must be >= 1 ({self.gpus})", where="--gpus", fix="pass a positive count")
        if self.gpus_per_node < 1:
            raise InputError(f"GPUs per node must be >= 1 ({self.gpus_per_node})", where="--gpus-per-node",
                             fix="pass a positive count")
        if not self.options:
            raise InputError("no model option to search", where="MODEL", fix="pass --config or --recipes")
        acc = find(self.gpu)
        if self.figures is None:  # a catalog entry without the bandwidth or FLOP/s a step is timed against: bad
            # input, as predict says it, before the search (not each candidate's rejection, exit 1)
            from launchcard.predict import HardwareFigures

            HardwareFigures.from_accelerator(acc).require_flops()
        from launchcard.memory import Settings

        if self.engine == "sglang" and self.kv_dtypes:
            from launchcard.flagspec import shipped_spec

            opt = shipped_spec("sglang", None).by_flag.get("--kv-cache-dtype")
            choices = tuple(map(str, opt.choices or ())) if opt is not None else ()
            bad = [kv for kv in self.kv_dtypes if choices and kv not in choices]
            if bad:
                raise InputError(f"SGLang has no --kv-cache-dtype {bad[0]}", where="--kv-cache-dtype",
                                 fix=f"use one of {', '.join(choices)}")
        for kv in self.kv_dtypes or ():
            Settings(kv_cache_dtype=kv).validate()  # an unknown dtype is bad input, not a plan that fails
        if self.chunked_prefill and self.engine != "sglang":
            raise InputError("--chunked-prefill-size is SGLang's option; vLLM's prefill budget "
                             "(--max-num-batched-tokens) is not searched", where="--chunked-prefill-size",
                             fix="leave it out, or search SGLang plans with --engine sglang")
        if low := [n for n in self.chunked_prefill if n < 1]:  # the value typed, not the tuple's repr: "((0,))"
            raise InputError(f"prefill chunks must be positive token counts ({low[0]})",
                             where="--chunked-prefill-size", fix="pass e.g. --chunked-prefill-size 4096")
        Settings(mxfp4_backend=self.mxfp4_backend).validate()
        if self.mxfp4_backend is not None and self.engine != "vllm":  # as predict says it of an SGLang plan
            raise InputError("--mxfp4-backend has no SGLang counterpart", where="--mxfp4-backend",
                             fix="leave it out of an SGLang plan")
        # as predict refuses it: a release older than the oldest predict times (vLLM before V1's scheduler)
        from launchcard.predict import release_refusal

        too_old = release_refusal(self.engine, self.engine_version)
        if too_old:
            raise InputError(too_old[0], where="--engine-version", fix=too_old[1])
        if any(n < 1 for n in self.max_num_seqs) or not self.max_num_seqs:
            raise InputError(f"batch limits must be positive ({self.max_num_seqs})", where="--max-num-seqs",
                             fix="pass e.g. --max-num-seqs 64")
        return self
