"""The public memory plan: rounded figures, the verdict and fit advice."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any, ClassVar, Self

from launchcard.errors import InputError, SplitError
from launchcard.limits import PP_LAYERS_RULE, pp_layers_refusal, uneven_ep_note
from launchcard.memory._arch import Arch
from launchcard.memory._hardware import Gpu, find_gpu
from launchcard.memory._model import ASSUMED, ASSUMED_PLUGIN_PLATFORM, Accounting, account, model_max_len
from launchcard.memory._settings import GiB, Settings


class _Record:
    """pydantic's ``model_dump`` / ``model_copy`` on the planner's frozen dataclasses, which were pydantic models:
    ``predict`` and ``plan`` build plans by the hundred and never render one as a model, and importing pydantic
    for them cost every such command ~0.1 s.  The figures read and dumped are those pydantic gave (a float field
    holds a float: ``round(0, 3)`` is the int 0; the JSON mode writes lists for tuples, null for inf and nan)."""

    _FLOATS: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        for name in self._FLOATS:
            v = getattr(self, name)
            if type(v) is not float:
                object.__setattr__(self, name, float(v))

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return {f.name: _dump(getattr(self, f.name), mode) for f in fields(self)}  # type: ignore[arg-type]

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Self:
        return replace(self, **(update or {}))  # type: ignore[type-var]


def _dump(v: object, mode: str) -> object:
    if isinstance(v, _Record):
        return v.model_dump(mode)
    if isinstance(v, tuple):
        items = [_dump(x, mode) for x in v]
        return items if mode == "json" else tuple(items)
    if mode == "json" and isinstance(v, float) and not math.isfinite(v):
        return None
    return v


@dataclass(frozen=True, kw_only=True)
class Breakdown(_Record):
    _FLOATS: ClassVar[tuple[str, ...]] = (
        "gpu_memory_gib", "budget_gib", "weights_gib", "activation_peak_gib", "non_torch_gib", "cuda_graph_gib",
        "kv_cache_gib", "free_gib", "free_after_graphs_gib")

    gpu_memory_gib: float  # device memory as reported (GiB)
    budget_gib: float  # utilization x device memory (GiB); CPU: VLLM_CPU_KVCACHE_SPACE
    weights_gib: float
    activation_peak_gib: float
    non_torch_gib: float
    # CUDA-graph pools: outside the budget before vLLM 0.21, taken out of the KV pool since (profiled first)
    cuda_graph_gib: float
    kv_cache_gib: float
    free_gib: float  # device memory left outside the budget, before CUDA graphs
    free_after_graphs_gib: float = 0.0  # free_gib less the CUDA graphs (what the text bar shows)


@dataclass(frozen=True, kw_only=True)
class Assumed(_Record):
    """An input the plan had to default or infer, and how much to trust it."""

    what: str
    confidence: str  # high: a documented default; medium: inferred; low: guessed
    # what it is: one of vLLM's own defaults (_model.ASSUMED_*: another engine's plan replaces or rewords it), else
    # ASSUMED (an input defaulted or inferred from the config)
    code: str = ASSUMED


@dataclass(frozen=True, kw_only=True)
class MemoryPlan(_Record):
    """Memory of one GPU of the deployment, as vLLM would account it."""

    _FLOATS: ClassVar[tuple[str, ...]] = ("weights_gib_per_gpu", "kv_cache_gib_per_gpu",
                                          "kv_bytes_per_token_per_gpu", "max_concurrency")

    gpu: str
    gpu_count: int
    # cuda, or cpu (vLLM's CPU backend: gpu_count counts workers, one per NUMA node; memory figures are host memory
    # of one node)
    device: str = "cuda"
    vllm_version: str
    weights_gib_per_gpu: float
    kv_cache_gib_per_gpu: float
    kv_bytes_per_token_per_gpu: float
    kv_cache_tokens: int  # what vLLM prints as 'GPU KV cache size' (per replica)
    block_size: int
    num_blocks: int
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    max_concurrency: float  # requests of max_model_len tokens the pool holds at once
    estimated_max_model_len: int
    fits: bool
    problems: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    advice: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()
    assumed: tuple[Assumed, ...] = ()  # every defaulted or inferred input, with a confidence
    # the warnings that say the planner cannot decide whether the plan fits (MEMORY_UNDECIDED: a kernel package
    # the command does not show), also in warnings
    undecided: tuple[str, ...] = ()
    # the warnings that say vLLM's start-up rules cannot be decided offline (STARTUP_UNDECIDED: a KV dtype or a
    # quantization on a platform whose backends or lists were not captured), also in warnings
    startup_undecided: tuple[str, ...] = ()
    breakdown: Breakdown


def _tp_choices(a: Arch, s: Settings, g: Gpu | None, mem: float) -> tuple[list[int], list[int]]:
    """TP sizes vLLM accepts for this model (heads divisible, KV heads divisible or replicated),
    and those of them whose plan fits."""
    from launchcard.memory._advice import fits_with, tp_ok

    valid = [t for t in range(1, 65) if tp_ok(a, t)]
    fitting = [t for t in valid if fits_with(a, replace(s, tp=t), g, mem)]
    return valid, fitting


def _check(a: Arch, s: Settings, g: Gpu | None, mem: float) -> None:
    heads = a.num_heads
    if heads % s.tp:
        valid, fitting = _tp_choices(a, s, g, mem)
        near = sorted(fitting or valid, key=lambda t: (abs(t - s.tp), t))[:3]
        what = "fit" if fitting else "are valid (none fits this GPU)"
        raise SplitError(
            f"tensor parallel size does not divide the {heads} attention heads (tp={s.tp})",
            where="--tp", fix=f"TP sizes that divide {heads} heads and {what}: {', '.join(map(str, sorted(near)))}",
        )
    layers_refused = pp_layers_refusal(s.pp, a.num_layers)
    if layers_refused:  # the split fails its check (exit 1), as `check` says of the same command and plan
        raise SplitError(f"{layers_refused[0]} ({PP_LAYERS_RULE})", where="--pp", fix=layers_refused[1])
    # an expert count TP x DP does not divide is vLLM's to start (its first ranks hold one expert more: the heaviest
    # rank is planned, launchcard.limits.VLLM_EP_RULE); SGLang's refusal is read where its plan is (predict._sglang)


def plan_memory(arch: Arch, settings: Settings, *, gpu: str | Gpu | None = None,
                gpu_memory_gib: float | None = None) -> MemoryPlan:
    """Plan one GPU of a deployment.  ``gpu`` names a catalog entry; an explicit
    ``gpu_memory_gib`` (what the device reports) overrides its memory."""
    from launchcard.memory._advice import advise
    from launchcard.memory._limits import startup_refusals

    s = settings.validate()
    g = find_gpu(gpu) if isinstance(gpu, str) else gpu
    cpu_note: tuple[str, ...] = ()
    if g is not None and g.is_cpu and s.device != "cpu":
        # a CPU profile runs vLLM's CPU backend: no utilization share, no CUDA graphs
        s = replace(s, device="cpu")
        cpu_note = (f"{g.key} is a CPU: planned with vLLM's CPU backend, one worker per NUMA node of "
                    f"{g.memory_gib:g} GiB (the catalog's figure; --gpu-memory-gib gives your node's)",)
    if g is not None and g.kind not in ("gpu", "cpu") and s.device != "cpu":
        # TPUs, Gaudi HPUs and Ascend NPUs run vLLM through platform plugins whose memory accounting (graph
        # capture, runtime reserve) is not captured here: the CUDA model is all there is, and it is said
        cpu_note = (f"{g.key} is a{'n' if g.kind[0] in 'aehinoru' else ''} {g.kind.upper()} ({g.name}): vLLM "
                    "serves it through a platform plugin whose memory accounting is unknown to launchcard; "
                    "planned as a CUDA GPU (CUDA graphs, non-torch memory, activation profile), an estimate",)
    # finite in bytes too: 1e308 GiB is a float, its bytes are not (the pool's int() overflowed)
    if gpu_memory_gib is not None and not (math.isfinite(gpu_memory_gib * GiB) and gpu_memory_gib > 0):
        raise InputError(f"device memory must be a positive, finite number of GiB ({gpu_memory_gib})",
                         where="--gpu-memory-gib", fix="pass the GiB the device reports, e.g. 79.19")
    if s.device == "cpu":
        mem = gpu_memory_gib or (g.memory_gib if g is not None and g.is_cpu else 0.0)  # 0: node memory unknown
    elif gpu_memory_gib is not None:
        mem = gpu_memory_gib
    elif g is not None:
        mem = g.memory_gib
    else:
        raise InputError("no GPU given", where="--gpu", fix="pass --gpu NAME or --gpu-memory-gib X")
    _check(arch, s, g, mem)
    acc = account(arch, s, gpu=g, gpu_memory_gib=mem)
    if cpu_note:
        acc = replace(acc, notes=cpu_note + acc.notes)
        if g is not None and g.kind not in ("gpu", "cpu") and s.device != "cpu":  # said of vLLM: coded (assumption_as)
            acc = replace(acc, defaults=(*acc.defaults, (ASSUMED_PLUGIN_PLATFORM, cpu_note[0])))
    problems, warnings = _verdict(acc, s)
    undecided: list[str] = []
    if problems:
        acc, problems, warnings, undecided = _undecided(arch, s, g, mem, acc, problems, warnings)
    refused = length_refusal(arch, s)
    if refused:
        problems.insert(0, refused)
    # vLLM fills a --max-num-seqs left out before SchedulerConfig verifies --max-num-batched-tokens against it
    # (0.32.0 engine/arg_utils.py L3123-3127, then config/scheduler.py L328-333): judged at the filled-in value
    judged = s if s.max_num_seqs is not None or s.max_num_batched_tokens is None else \
        replace(s, max_num_seqs=acc.max_num_seqs)
    startup = startup_refusals(arch, judged, g)
    problems[:0] = startup.problems
    warnings += startup.warnings
    # vLLM's uneven placement; SGLang's MoE-TP over a DP-attention group splits every expert (Settings.moe_tp_group)
    uneven = (uneven_ep_note(arch.num_experts, s.tp * s.dp) if arch.is_moe and s.expert_parallel
              and not s.moe_tp_group else None)
    if uneven:
        warnings.append(uneven)
    plan = _to_plan(acc, s, g, mem, problems, warnings, undecided, startup.warnings)
    low = [a.what.split(":")[0] for a in plan.assumed if a.confidence == "low"]
    if low:
        plan = plan.model_copy(update={"warnings": plan.warnings + (
            f"this verdict rests on low-confidence assumptions ({'; '.join(low)}): see assumed",)})
    limit = model_max_len(arch, s)
    if startup.problems:
        # a setting vLLM refuses: its fixes first; memory advice planned on a refused setting would mislead
        plan = plan.model_copy(update={"advice": startup.fixes})
    elif refused and limit is not None:
        # every piece of advice is planned at a length vLLM accepts
        capped = replace(s, max_model_len=limit.limit)
        got = account(arch, capped, gpu=g, gpu_memory_gib=mem)
        if not _verdict(got, capped)[0]:
            advice = [f"--max-model-len {limit.limit} (the longest vLLM accepts for this model; fits)"]
        else:
            advice = advise(arch, capped, g, mem, got)
        plan = plan.model_copy(update={"advice": tuple(advice)})
    elif problems:
        plan = plan.model_copy(update={"advice": tuple(advise(arch, s, g, mem, acc))})
    return plan


# vLLM's own refusal of a KV pool that is empty or cannot hold one max_model_len request (same check and wording
# in every V1 release read: "No available memory for the cache blocks" / "To serve at least one request with the
# model's max seq len ...")
KV_CHECK = (" (vLLM's start-up check check_enough_kv_cache_memory, vllm/v1/core/kv_cache_utils.py 0.10.2 :690/:709, "
            "0.11.0 :698/:717, 0.32.0 :1009/:1031)")


def _gib(x: float) -> str:
    """A GiB figure as every rendering prints it: the plan's stored value (rounded to 3 decimals), to 2.
    Formatting the raw figure instead can differ in the last digit (5.015 vs 5.0151)."""
    return f"{round(x, 3):.2f}"


def length_refusal(a: Arch, s: Settings) -> str | None:
    """vLLM's start-up refusal of a --max-model-len above the model's derived maximum, in one line."""
    from launchcard.limits import ALLOW_LONG
    from launchcard.limits import length_refusal as refusal
    from launchcard.memory._limits import STARTUP_REFUSAL

    limit = model_max_len(a, s)
    if s.max_model_len is None or limit is None:
        return None
    quote = refusal(s.max_model_len, limit, {ALLOW_LONG: "1"} if s.allow_long_max_model_len else None)
    if quote is None:
        return None
    return (f"{STARTUP_REFUSAL}: --max-model-len {s.max_model_len:,} is above the {limit.limit:,} tokens it "
            f"derives from the config ({limit.how()}); use --max-model-len {limit.limit} or less, or set "
            f"{ALLOW_LONG}=1 if the model really handles longer inputs (evidence: {quote})")


def _undecided(a: Arch, s: Settings, g: Gpu | None, mem: float, acc: Accounting, problems: list[str],
               warnings: list[str]) -> tuple[Accounting, list[str], list[str], list[str]]:
    """A memory refusal that rests on a kernel package the plan does not show: when the plan fits with it
    installed, the plan is kept with those figures, an assumption and a cannot-decide warning (never a
    refusal the evidence does not hold; also returned on its own, last); when it is refused either way, the refusal
    says so."""
    from launchcard.memory._kernels import sampler_alternative, sampler_note, sampler_warning

    alt = sampler_alternative(s, g)
    if alt is None:
        return acc, problems, warnings, []
    got = account(a, alt, gpu=g, gpu_memory_gib=mem)
    alt_problems, alt_warnings = _verdict(got, alt)
    if alt_problems:
        # refused either way: the refusal does not rest on the unknown package, and says so
        problems = [problems[0] + f"; refused with the flashinfer package installed too (its sampler pass: "
                    f"activations {_gib(got.activation_gib)} GiB, {_gib(got.kv_pool_gib)} GiB for the KV cache)",
                    *problems[1:]]
        return acc, problems, warnings, []
    note = sampler_note(s, acc.activation_gib, got.activation_gib)
    got = replace(got, notes=(*got.notes, note))  # only CUDA GPUs get here: no CPU / plugin note to keep
    undecided = sampler_warning(problems[0])
    return got, [], [*alt_warnings, undecided], [undecided]


def _verdict(acc: Accounting, s: Settings) -> tuple[list[str], list[str]]:
    problems: list[str] = list(acc.problems)
    warnings: list[str] = []
    if acc.problems and acc.kv_pool_gib <= 0:
        pass  # the device's own refusal says why there is no pool
    elif acc.kv_pool_gib <= 0:
        problems.append(
            f"no memory left for the KV cache: weights {_gib(acc.weights_gib)} + activations "
            f"{_gib(acc.activation_gib)} + non-torch {_gib(acc.non_torch_gib)} GiB exceed the "
            f"{_gib(acc.budget_gib)} GiB budget{KV_CHECK if s.device != 'cpu' else ''}")
    elif acc.max_concurrency < 1:
        problems.append(
            f"one request of max_model_len {acc.max_model_len:,} needs {_gib(acc.request_gib)} GiB of KV cache, "
            f"more than the {_gib(acc.kv_pool_gib)} GiB available (largest that fits: {acc.estimated_max_model_len:,})"
            + (KV_CHECK if s.device != "cpu" else ""))
    free = acc.gpu_memory_gib - acc.budget_gib
    if s.device != "cpu" and s.version < (0, 21) and acc.cuda_graph_gib > free:
        warnings.append(
            f"CUDA graphs (~{_gib(acc.cuda_graph_gib)} GiB) are captured outside the budget and may not fit in the "
            f"{_gib(free)} GiB left; lower --gpu-memory-utilization or add --enforce-eager")
    return problems, warnings


def _to_plan(acc: Accounting, s: Settings, g: Gpu | None, mem: float, problems: list[str],
             warnings: list[str], undecided: list[str], startup_undecided: tuple[str, ...] = ()) -> MemoryPlan:
    codes = {note: code for code, note in acc.defaults}

    def r(x: float) -> float:
        return round(x, 3)

    name = g.key if g else f"{mem:g} GiB device"
    return MemoryPlan(
        gpu=g.key if g else ("cpu" if s.device == "cpu" else name),  # the catalog entry (e.g. xeon6) when named
        gpu_count=s.tp * s.pp * s.dp,
        device=s.device,
        vllm_version=s.vllm_version or "0.32 (latest modelled)",
        weights_gib_per_gpu=r(acc.weights_gib),
        kv_cache_gib_per_gpu=r(acc.kv_pool_gib),
        kv_bytes_per_token_per_gpu=r(acc.kv_bytes_per_token),
        kv_cache_tokens=max(0, acc.kv_cache_tokens),
        block_size=acc.block_size,
        num_blocks=max(0, acc.num_blocks),
        max_model_len=acc.max_model_len,
        max_num_seqs=acc.max_num_seqs,
        max_num_batched_tokens=acc.max_num_batched_tokens,
        max_concurrency=round(max(0.0, acc.max_concurrency), 2),
        estimated_max_model_len=acc.estimated_max_model_len,
        fits=not problems,
        problems=tuple(problems),
        warnings=tuple(warnings),
        assumptions=acc.notes,
        assumed=tuple(_assumed(n, codes.get(n, ASSUMED)) for n in acc.notes
                      if not n.startswith(("weights:", "weights scaled"))),
        undecided=tuple(undecided),
        startup_undecided=startup_undecided,
        breakdown=Breakdown(
            gpu_memory_gib=r(mem), budget_gib=r(acc.budget_gib), weights_gib=r(acc.weights_gib),
            activation_peak_gib=r(acc.activation_gib), non_torch_gib=r(acc.non_torch_gib),
            cuda_graph_gib=r(acc.cuda_graph_gib), kv_cache_gib=r(acc.kv_pool_gib),
            free_gib=r(max(0.0, mem - acc.budget_gib)),
            free_after_graphs_gib=r(max(0.0, mem - acc.budget_gib
                                        - (acc.cuda_graph_gib if s.version < (0, 21) else 0.0))),
        ),
    )


@lru_cache(maxsize=1024)
def _assumed(note: str, code: str = ASSUMED) -> Assumed:
    """The note as an assumption with its confidence: a function of the two strings alone, to a frozen value, so
    remembered (a plan search plans ~500 plans a cold search, each stating the same few notes)."""
    t = note.lower()
    if "guessed" in t or "unknown" in t or "name" in t:
        conf = "low"
    elif "not read" in t or ("not given" in t and "host memory" in t):
        conf = "medium"
    elif "default" in t or "cpu backend" in t or "is a cpu" in t:
        conf = "high"
    else:
        conf = "medium"
    return Assumed(what=note, confidence=conf, code=code)
