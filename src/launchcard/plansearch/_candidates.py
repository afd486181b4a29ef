"""The candidate plans of a search space, and the layout checks a candidate must pass before it is planned.

Every option x TP x PP (DP fills the GPUs) x EP x KV dtype x speculative decoding x batch limit, SGLang's DP
attention, and vLLM's prefill/decode pools by node (:func:`candidates`); a TP group that would span nodes
(:func:`spans_nodes`) and a model shape that does not split so (:func:`layout`) are refused here, before
:mod:`launchcard.plansearch._search` memory-plans and predicts what is left.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING

from launchcard.limits import pp_layers_refusal
from launchcard.plansearch._options import SGLANG_SPEC
from launchcard.plansearch._sglang import dp_attention as _sglang_dpa
from launchcard.plansearch._types import Candidate, SearchSpace

if TYPE_CHECKING:
    from launchcard.memory import Arch
    from launchcard.predict import Workload


@lru_cache(maxsize=64)
def model_arch(config: str) -> Arch:
    """The memory planner's reading of a config.json, once per process (cleared by ``clear_caches``)."""
    from launchcard.memory import load_arch

    return load_arch(config)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def kv_dtypes(space: SearchSpace) -> tuple[str, ...]:
    """The KV-cache dtypes searched: the space's, else auto and FP8 (by the engine's name) where the GPU has FP8."""
    if space.kv_dtypes is not None:
        return space.kv_dtypes
    from launchcard.hardware import find

    fp8 = "fp8" if space.engine == "vllm" else "fp8_e4m3"  # SGLang's name for the FP8 KV cache (its choices)
    return ("auto", fp8) if find(space.gpu).supports_fp8 else ("auto",)


def candidates(space: SearchSpace, clients: int | None = None) -> Iterator[Candidate]:
    """Every plan of the space: each option x TP x PP (DP fills the GPUs) x EP x KV dtype x spec x max-num-seqs,
    then prefill/decode pools split by node when there are several nodes.  ``clients``: the most requests the load
    ever has at once (:func:`load_clients`); splits whose pools both hold at least that many replicas serve the same
    run (the other replicas get no request), so only the first of them (the smallest prefill pool) is searched."""
    n, per_node = space.gpus, space.gpus_per_node
    kvs = kv_dtypes(space)
    sglang = space.engine == "sglang"
    chunks = space.chunked_prefill or (0,)
    for opt in space.options:
        arch = model_arch(opt.config)
        moe = arch.is_moe
        # SGLang: MTP of the config (its flags: options.sglang_spec_flags) and what the SGLang sources run the
        # checkpoint with (their own flags); a recipe's draft models are vLLM's
        specs: list[tuple[str | None, int]] = [(None, 0), *(s for s in opt.spec if not sglang or s[0] in SGLANG_SPEC)]
        if sglang:
            specs += [(m, k) for m, k, _, _ in opt.sglang_spec if (m, k) not in specs]
        for tp in _divisors(n):
            for pp in _divisors(n // tp):
                dp = n // (tp * pp)
                # EP spans TP x DP in vLLM; SGLang's --ep-size splits the experts over the TP group only
                for ep in ((False, True) if moe and (tp if sglang else tp * dp) > 1 else (False,)):
                    for kv in kvs:
                        for spec, k in specs:
                            for chunk in chunks:
                                for mns in space.max_num_seqs:
                                    yield Candidate(opt.name, tp, pp, dp, ep, kv, mns, spec, k, engine=space.engine,
                                                    chunk=chunk)
        if sglang and _sglang_dpa(arch, space.engine_version):
            yield from _dp_attention_candidates(space, opt.name, moe, kvs, specs, chunks)
        nodes = n // per_node
        # prefill/decode pools: vLLM's (the recipes' pd_cluster strategy); SGLang's are not searched
        if space.disaggregation and not sglang and nodes > 1 and n % per_node == 0:
            saturated: set[int] = set()  # TPs whose split with both pools >= clients replicas was yielded
            for prefill_nodes in range(1, nodes):
                p_gpus = prefill_nodes * per_node
                for tp in _divisors(per_node):
                    if clients is not None and min(p_gpus, n - p_gpus) // tp >= clients:
                        if tp in saturated:
                            continue
                        saturated.add(tp)
                    for ep in ((False, True) if moe else (False,)):
                        for kv in kvs:
                            for mns in space.max_num_seqs:
                                yield Candidate(opt.name, tp, 1, (n - p_gpus) // tp, ep, kv, mns,
                                                mode="disaggregated", prefill_gpus=p_gpus)


def _dp_attention_candidates(space: SearchSpace, option: str, moe: bool, kvs: tuple[str, ...],
                             specs: list[tuple[str | None, int]], chunks: tuple[int, ...]) -> Iterator[Candidate]:
    """SGLang's DP attention: one server of TP x PP GPUs whose attention runs as DP ranks of TP / DP GPUs each
    (``--dp-size`` dividing ``--tp-size``, server_args.py:1568-1574), an MoE model's experts over the whole TP
    group by expert parallelism (``--ep-size`` = ``--tp-size``) or by tensor parallelism (``--ep-size`` 1, SGLang's
    default).  SGLang takes DP attention at either: its only EP rule under it is ``ep_size * moe_dp_size`` dividing
    the TP group (0.5.6.post2 server_args.py L1563-1579 sets no EP; distributed/parallel_state.py L1636-1637 splits
    the experts moe_tp = tp / ep whatever the attention; 0.5.23 arg_groups/parallel_hook.py L175-182), and the
    experts' runner and format can follow the choice (gpt-oss's MXFP4 experts stay MXFP4 with triton_kernel at
    --ep-size 1 only: memory._sglang_mxfp4)."""
    n = space.gpus
    for tp in _divisors(n):
        pp = n // tp
        for dp in _divisors(tp)[1:]:
            for ep in ((True, False) if moe else (False,)):
                for kv in kvs:
                    for spec, k in specs:
                        for chunk in chunks:
                            for mns in space.max_num_seqs:
                                yield Candidate(option, tp, pp, dp, ep, kv, mns, spec, k, dp_attention=True,
                                                engine="sglang", chunk=chunk)


def count(space: SearchSpace, clients: int | None = None) -> int:
    return sum(1 for _ in candidates(space, clients))


def load_clients(work: Workload) -> int | None:
    """The most requests ``work`` ever has at once when that is fixed (a closed loop's clients, a burst's
    requests); None for Poisson arrivals."""
    if work.closed_loop:
        return work.concurrency
    return work.requests() if work.burst else None


def spans_nodes(c: Candidate, per_node: int) -> str | None:
    """Why a TP group would span two nodes (None: every group fits in one): the GPUs fill whole nodes and the
    rest sit on one more node, and each TP group must lie within a node (PP and DP may cross nodes)."""
    if c.tp > per_node:
        return f"TP {c.tp} spans nodes ({per_node} GPUs per node; use PP across nodes)"
    if c.mode != "aggregated":  # pools of whole nodes, TP a divisor of a node's GPUs
        return None
    groups, whole, rest = c.gpus // c.tp, c.gpus // per_node, c.gpus % per_node
    fit = whole * (per_node // c.tp) + rest // c.tp
    if fit < groups:
        return (f"{groups} groups of TP {c.tp} do not fit on {per_node}-GPU nodes without one spanning two "
                f"({whole} whole node(s) and {rest} more GPUs hold {fit}; use a TP that divides {per_node} and "
                f"{rest}, or --gpus a multiple of {per_node})" if rest else
                f"{groups} groups of TP {c.tp} do not fit on {per_node}-GPU nodes without one spanning two "
                f"({whole} nodes hold {fit}; use a TP that divides {per_node})")
    return None


def layout(c: Candidate, arch: Arch, engine: str = "vllm") -> str | None:
    """Why the model's shape cannot be split so (None: it can): KV heads over TP, layers over PP, experts over EP;
    the attention-heads rule and every other refusal vLLM states at start-up are
    :func:`launchcard.plansearch._startup.refusal`'s."""
    kvh = arch.num_kv_heads
    attn_tp = c.tp // c.dp if c.dp_attention else c.tp  # DP attention: each rank's attention over TP / DP GPUs
    if kvh and not arch.kv_lora_rank and kvh % attn_tp and attn_tp % kvh:
        return (f"attention TP {attn_tp} (TP {c.tp} / DP {c.dp})" if c.dp_attention else f"TP {c.tp}") + \
            f" and the {kvh} KV heads do not divide one another"
    layers_refused = pp_layers_refusal(c.pp, arch.num_layers)  # the one wording of check, memory and predict
    if layers_refused:
        return layers_refused[0]
    ep = c.tp if engine == "sglang" else c.tp * c.dp
    if c.ep and arch.num_experts < ep:
        return f"EP over {ep} GPUs exceeds the {arch.num_experts} experts"
    return None
