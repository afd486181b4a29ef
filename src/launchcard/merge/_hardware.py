"""Hardware needs of a card: GPUs named, the smallest deployment that serves, the TP rule, memory.

Memory comes from the memory planner, run on the vLLM recipe's resolved
command with the model's own ``config.json``; where no config is at hand the
figure stays a gap.  Everything here is ``derived``: each figure says which
command, which GPU and which document it rests on.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from launchcard.argv import TP_FLAGS, ParsedCommand, parse_command
from launchcard.card import EngineEnv, Evidence, Fact, Gap, HardwareNeeds, HfInfo
from launchcard.errors import ArgvError, LaunchcardError
from launchcard.hardware import catalog

# vLLM refuses to start when its KV pool cannot hold one request of
# max_model_len tokens, so that is the smallest KV a working launch has.
MEMORY_DEFINITION = (
    "per GPU: weights + activation peak + non-torch buffers + CUDA graphs + the KV cache of ONE request of "
    "max_model_len tokens (vLLM's start-up condition), as the memory planner accounts them for the command "
    "named in scope; total = per GPU x the command's GPUs (TP x PP x DP). GiB = 2**30 bytes. Not included: "
    "the (1 - gpu-memory-utilization) share vLLM leaves unused, so a device needs about per-GPU / utilization; "
    "this is the footprint of that layout, not the smallest layout the model could use")
_NOT_SERVING = ("frontend", "router", "encoder")


@dataclass(frozen=True)
class ModelConfig:
    """A checkpoint's config.json, parsed, with the document it came from."""

    repo: str
    config: dict[str, Any]  # Any: config.json as read (JSON values)
    evidence: Evidence


@dataclass(frozen=True)
class Deployment:
    gpus: int
    label: str
    evidence: Evidence | None
    checkpoint: str | None = None


def _cmd(e: EngineEnv) -> ParsedCommand:
    """The env's command as its engine reads it (bare flags as the env's engine's)."""
    return parse_command(e.argv, engine=e.engine)


def _where(e: EngineEnv) -> str:
    ev = e.evidence
    line = f"#L{ev.line}" if ev and ev.line else ""
    return f"{e.source.kind} {e.source.path or e.source.url}{line}"


def _env_ev(e: EngineEnv) -> Evidence:
    s = e.source
    return e.evidence or Evidence(kind=s.kind, url=s.url, path=s.path, revision=s.revision, sha256=s.sha256)


def _own_gpus(e: EngineEnv, envs: Sequence[EngineEnv]) -> int | None:
    """GPUs one deployment led by ``e`` occupies.  A resolved recipe env's ``gpus`` is what its process holds
    (the plan's facts, ``launchcard.check.plan_facts``), so a recipe head adds its workers' GPUs; any other
    source's head states its whole deployment."""
    if e.source.kind == "vllm-recipes" and e.role == "head" and e.gpus:
        workers = [w.gpus or 0 for w in envs if w.role == "worker" and w.source.kind == e.source.kind
                   and w.source.path == e.source.path and w.checkpoint == e.checkpoint]
        return e.gpus + sum(workers)
    return e.gpus


def deployments(envs: Sequence[EngineEnv]) -> list[Deployment]:
    """Deployments that serve on their own, with the GPUs each needs.

    single / instance: one env; head: the env's GPUs already count every node,
    its workers belong to it; prefill + decode from one source section: the
    sum of the roles' GPUs unless their stated GPU ranges overlap on a single
    node.  Routers, frontends and encoders hold no serving GPUs here.
    """
    out: list[Deployment] = []
    # (source kind, source path, checkpoint, section) -> the prefill/decode roles of one deployment
    pd: dict[tuple[str, str | None, str | None, str], list[EngineEnv]] = defaultdict(list)
    for e in envs:
        if e.role in _NOT_SERVING or e.role == "worker":
            continue
        if e.role in ("prefill", "decode"):
            section = (e.notes or "").split(" / ")[0] if " / " in (e.notes or "") else ""
            pd[(e.source.kind, e.source.path, e.checkpoint, section)].append(e)
            continue
        n = _own_gpus(e, envs)
        if n:
            out.append(Deployment(n, f"{_where(e)} ({e.role}{f', {e.hardware}' if e.hardware else ''}, "
                                     f"{e.checkpoint or 'checkpoint unknown'})", _env_ev(e), e.checkpoint))
    for (kind, path, ckpt, section), members in pd.items():
        roles = {m.role for m in members}
        if roles != {"prefill", "decode"} or any(not m.gpus for m in members):
            continue  # half of a disaggregated set cannot serve
        ranges = [(_cmd(m).try_int("--base-gpu-id") or 0, m.gpus or 0) for m in members]
        used: set[int] = set()
        for base, n in ranges:
            used |= set(range(base, base + n))
        single_node = "single node" in section.lower()
        total = len(used) if single_node else sum(n for _, n in ranges)
        head = members[0]
        out.append(Deployment(total, f"{kind} {path}#L{head.evidence.line if head.evidence else '?'} "
                                     f"(prefill+decode set{f' {section!r}' if section else ''}, "
                                     f"{ckpt or 'checkpoint unknown'})", _env_ev(head), ckpt))
    return out


def tp_rule(envs: Sequence[EngineEnv], config: ModelConfig | None) -> str | None:
    """Narrowest and widest TP stated in any argv, with the sources stating each."""
    by_tp: dict[int, list[str]] = defaultdict(list)
    no_tp: dict[int, list[str]] = defaultdict(list)
    for e in envs:
        if e.role in _NOT_SERVING:
            continue
        tp = _cmd(e).try_int(*TP_FLAGS)
        where = _where(e) + (f" ({e.role})" if e.role != "single" else "")
        if tp and where not in by_tp[tp]:
            by_tp[tp].append(where)
        elif not tp and e.gpus and _where(e) not in no_tp[e.gpus]:
            no_tp[e.gpus].append(_where(e))  # e.g. TRT-LLM: TP lives in a file the source does not show
    if not by_tp:
        return None

    def who(tp: int) -> str:
        names = by_tp[tp]
        return "; ".join(names[:3]) + (f" (+{len(names) - 3} more)" if len(names) > 3 else "")

    lo, hi = min(by_tp), max(by_tp)
    rule = (f"published TP {lo} only: {who(lo)}" if lo == hi else
            f"narrowest published TP {lo}: {who(lo)}; widest published TP {hi}: {who(hi)}")
    if no_tp:
        rule += "; GPU counts published without a TP in the argv: " + "; ".join(
            f"{n} ({', '.join(w[:2])}{f' +{len(w) - 2} more' if len(w) > 2 else ''})" for n, w in sorted(no_tp.items()))
    heads = _heads(config)
    if heads and config is not None:
        rule += f"; TP must divide the {heads} attention heads ({config.evidence.path})"
    return rule


def _heads(config: ModelConfig | None) -> int | None:
    if config is None:
        return None
    c = config.config
    raw = c.get("num_attention_heads") or (c.get("text_config") or {}).get("num_attention_heads")
    return int(raw) if isinstance(raw, int) else None


def _plan_target(envs: Sequence[EngineEnv], plan_envs: Sequence[EngineEnv], model: str,
                 configs: Mapping[str, ModelConfig]) -> tuple[EngineEnv | None, ModelConfig | None, str]:
    """The recipe command to plan and its checkpoint's config; else why not."""
    recipe = [e for e in (*envs, *plan_envs) if e.source.kind == "vllm-recipes" and e.engine == "vllm"
              and e.role in ("single", "head") and e.argv]
    if not recipe:
        return None, None, "no vLLM recipe command to plan (the planner models vLLM's accounting)"
    for e in recipe:
        cfg = configs.get(e.checkpoint or model)
        if cfg is not None:
            return e, cfg, ""
    loads = ", ".join(sorted({e.checkpoint or model for e in recipe}))
    have = ", ".join(sorted(configs)) or "none"
    return None, None, (f"no config.json for the checkpoint the vLLM recipe command loads ({loads}); configs at hand: "
                        f"{have}. The planner reads <corpus>/hf/<org>/<name>/config.json or a Hub "
                        "capture's (--hub)")


# argv flags that move memory and that ``launchcard memory`` accepts under the same name
_MEMORY_FLAGS = {"--tensor-parallel-size": "--tp", "--pipeline-parallel-size": "--pp", "--data-parallel-size": "--dp",
                 "--decode-context-parallel-size": "--dcp", "--max-model-len": "--max-model-len",
                 "--max-num-seqs": "--max-num-seqs", "--max-num-batched-tokens": "--max-num-batched-tokens",
                 "--block-size": "--block-size", "--kv-cache-dtype": "--kv-cache-dtype", "--dtype": "--dtype",
                 "--quantization": "--quantization", "--gpu-memory-utilization": "--gpu-memory-utilization",
                 "--speculative-config": "--speculative-config"}
_MEMORY_SWITCHES = ("--enable-expert-parallel", "--enforce-eager")


def reproduce_args(argv: Sequence[str], gpu: str, config_path: str) -> list[str]:
    """``launchcard memory`` arguments that plan the same command (flags it does not take are left out).

    Each flag appears once, with the value vLLM reads (its last occurrence), where that occurrence stands.
    """
    out = ["launchcard", "memory", "--config", config_path, "--gpu", gpu]
    cmd = parse_command(argv, engine="vllm")
    for occ in cmd.occurrences:
        if cmd.last(occ.flag) is not occ:
            continue  # a later occurrence decides this flag
        if occ.flag in _MEMORY_SWITCHES and occ.value is True:
            out.append(occ.flag)
        elif occ.flag in _MEMORY_FLAGS:
            value = cmd.get_str(occ.flag)
            if value is not None:
                out += [_MEMORY_FLAGS[occ.flag], value]
    return out


def _gib_up(x: float) -> float:
    return math.ceil(round(x * 100, 6)) / 100


# Any: the figures become a fact value: a JSON object of numbers, strings and lists
def plan_figures(env: EngineEnv, cfg: ModelConfig) -> dict[str, Any]:
    """Plan ``env``'s argv on its hardware; the minimum per GPU and in total, and how they were reached."""
    from launchcard.memory import arch_from_config, find_gpu, plan_memory, settings_from_argv

    arch = arch_from_config(cfg.config, where=cfg.evidence.path or cfg.repo)
    settings = settings_from_argv(list(env.argv))
    gpu = find_gpu(env.hardware or "", where=f"hardware of {_where(env)}")
    plan = plan_memory(arch, settings, gpu=gpu)
    kv_plan = plan
    if plan.kv_cache_tokens <= 0:
        # the command does not fit: plan it again on an unbounded device with the
        # same engine defaults, only to learn one request's KV
        fixed = replace(settings, max_num_seqs=plan.max_num_seqs, max_num_batched_tokens=plan.max_num_batched_tokens)
        kv_plan = plan_memory(arch, fixed, gpu=gpu, gpu_memory_gib=plan.weights_gib_per_gpu + 4096.0)
    not_counted: list[str] = []
    try:
        spec = _cmd(env).get_json("--speculative-config")
    except ArgvError:
        spec = None
    draft = spec.get("model") if isinstance(spec, dict) else None
    method = str(spec.get("method") or "") if isinstance(spec, dict) else ""
    if draft and "eagle" not in method.lower():  # MTP and EAGLE/EAGLE3 heads are planned; other drafts not
        not_counted.append(f"the separate draft model {draft} (its weights and KV)")
    b = plan.breakdown
    kv_one = kv_plan.kv_cache_gib_per_gpu * kv_plan.max_model_len / max(1, kv_plan.kv_cache_tokens)
    per_gpu = b.weights_gib + b.activation_peak_gib + b.non_torch_gib + b.cuda_graph_gib + kv_one
    return {
        "per_gpu_gib": _gib_up(per_gpu), "total_gib": _gib_up(per_gpu * plan.gpu_count),
        "gpu": plan.gpu, "gpu_memory_gib": b.gpu_memory_gib, "gpu_count": plan.gpu_count,
        "tp": settings.tp, "pp": settings.pp, "dp": settings.dp, "max_model_len": plan.max_model_len,
        "weights_gib": b.weights_gib, "activation_peak_gib": b.activation_peak_gib,
        "non_torch_gib": b.non_torch_gib, "cuda_graph_gib": b.cuda_graph_gib,
        "kv_one_request_gib": round(kv_one, 3), "fits_on_named_gpu": plan.fits,
        "problems": list(plan.problems), "vllm_version": plan.vllm_version, "checkpoint": env.checkpoint,
        "command": " ".join(env.argv), "not_counted": not_counted,
        "reproduce": reproduce_args(env.argv, plan.gpu, f"<corpus>/{cfg.evidence.path}"),
    }


def _memory(envs: Sequence[EngineEnv], plan_envs: Sequence[EngineEnv], model: str,
            configs: Mapping[str, ModelConfig]) -> tuple[dict[str, Any] | None, list[Fact], list[Gap]]:
    env, cfg, why = _plan_target(envs, plan_envs, model, configs)
    if env is None or cfg is None:
        return None, [], [Gap(field=f, why=f"memory planner not run: {why}")
                          for f in ("hardware.min_vram_per_gpu_gib", "hardware.min_total_vram_gib")]
    try:
        fig = plan_figures(env, cfg)
    except LaunchcardError as exc:
        return None, [], [Gap(field=f, why=f"memory planner failed on {_where(env)}: {exc.one_line()}")
                          for f in ("hardware.min_vram_per_gpu_gib", "hardware.min_total_vram_gib")]
    variant = re.search(r"variant ([^,\s]+)", env.notes or "")
    fig["recipe_choice"] = env.notes
    scope = (f"vLLM recipe command{f', variant {variant.group(1)}' if variant else ''} ({env.checkpoint}) "
             f"on {fig['gpu_count']}x {fig['gpu']} "
             f"(TP {fig['tp']}, PP {fig['pp']}, DP {fig['dp']}), one request of {fig['max_model_len']:,} tokens")
    facts = [
        Fact(name="min_vram_per_gpu_gib", value=fig["per_gpu_gib"], classification="derived",
             evidence=cfg.evidence, unit="GiB", scope=scope),
        Fact(name="min_total_vram_gib", value=fig["total_gib"], classification="derived",
             evidence=cfg.evidence, unit="GiB", scope=scope),
        # the plan's inputs rest on the recipe: its evidence is the recipe document
        Fact(name="memory_plan", value={**fig, "definition": MEMORY_DEFINITION}, classification="derived",
             evidence=_env_ev(env), scope=scope),
    ]
    return fig, facts, []


def hardware_needs(model: str, envs: Sequence[EngineEnv], facts: Sequence[Fact], hf: HfInfo, *,
                   configs: Mapping[str, ModelConfig] | None = None,
                   plan_envs: Sequence[EngineEnv] = ()) -> tuple[HardwareNeeds, list[Fact], list[Gap]]:
    """The card's hardware needs, the derived facts behind them, and the gaps left."""
    configs = configs or {}
    gaps: list[Gap] = []
    new: list[Fact] = []
    named: set[str] = set()
    other: set[str] = set()
    arch: set[str] = set()
    for e in envs:
        for hw in (e.hardware, *e.validated_hardware):
            hits = catalog().candidates(hw) if hw else ()
            if len(hits) == 1 and hits[0].kind == "gpu":
                named.add(hits[0].id)
                arch.add(hits[0].arch)
            elif hits and all(a.kind == "gpu" for a in hits):
                arch.update(a.arch for a in hits)  # an ambiguous name ("a100"): the model is not named, the family is
            elif hw:
                other.add(hw.lower())
    context = next((int(f.value) for f in facts if f.name == "context_tokens" and f.scope is None
                    and f.evidence and f.evidence.kind == "vllm-recipes"), None) or next(
        (int(f.value) for f in facts if f.name == "context_tokens" and f.scope is None), None)
    # The floor a host needs: the checkpoint's weight files themselves (the Hub's file sizes), rounded up.
    # No headroom is added: none of the sources states one, so the rule says what the figure counts.
    disk = math.ceil(hf.weight_gib) if hf.weight_gib else None
    disk_rule = (f"ceil(weights {hf.weight_gib:g} GiB, the Hub's file sizes of {hf.repo}): the weight files alone; "
                 "downloads in flight, caches and logs need room beyond it") if disk is not None else None
    if other:
        gaps.append(Gap(field="hardware.npu", why=f"sources name non-GPU accelerators too: {', '.join(sorted(other))} "
                                                  "(not carded)"))
    if disk is None:
        gaps.append(Gap(field="hardware.min_disk_gib", why="no source gives the weight bytes (needs a Hub capture)"))
    deps = deployments(envs)
    fig, mem_facts, mem_gaps = _memory(envs, plan_envs, model, configs)
    # min_gpus and the memory figures describe the same weights: with a memory plan, the smallest deployment of
    # the planned checkpoint (a smaller one of another checkpoint, e.g. an NVFP4 conversion, is named beside it);
    # else, among equals, one that loads the model's own checkpoint names it best
    planned = fig.get("checkpoint") if fig else None
    same = [d for d in deps if planned and d.checkpoint == planned] or deps
    smallest = min(same, key=lambda d: (d.gpus, d.checkpoint not in (None, model))) if same else None
    if smallest:
        ties = sum(d.gpus == smallest.gpus for d in same)
        fewer = min((d for d in deps if d.gpus < smallest.gpus), key=lambda d: d.gpus, default=None)
        new.append(Fact(name="min_gpus", value=smallest.gpus, classification="derived", evidence=smallest.evidence,
                        scope=f"smallest deployment that serves on its own: {smallest.label}"
                              + (f" (one of {ties} published at {smallest.gpus} GPUs)" if ties > 1 else "")
                              + (f"; a deployment of another checkpoint uses {fewer.gpus}: {fewer.label}"
                                 if fewer is not None else "")))
    else:
        gaps.append(Gap(field="hardware.min_gpus", why="no source states a GPU count for a deployment that serves "
                                                       "on its own"))
    new += mem_facts
    gaps += mem_gaps
    vram_from = next((f.scope for f in mem_facts if f.name == "min_total_vram_gib"), None)
    if fig and smallest and fig["gpu_count"] != smallest.gpus and vram_from:
        vram_from += (f"; per GPU at {fig['gpu_count']} GPUs, while min_gpus counts a deployment of "
                      f"{smallest.gpus}")
    cfg = configs.get(model) or next(iter(configs.values()), None)
    for field in ("interconnect", "cuda_min", "driver_min", "min_host_ram_gib"):
        gaps.append(Gap(field=f"hardware.{field}", why="no source states it"))
    return HardwareNeeds(
        gpu_models=tuple(sorted(named)),
        gpu_arch=tuple(sorted(arch)),
        min_gpus=smallest.gpus if smallest else None,
        min_gpus_from=smallest.label if smallest else None,
        tp_rule=tp_rule(envs, cfg),
        min_vram_per_gpu_gib=fig["per_gpu_gib"] if fig else None,
        min_total_vram_gib=fig["total_gib"] if fig else None,
        min_vram_from=vram_from,
        min_disk_gib=disk, min_disk_rule=disk_rule, context_tokens=context,
    ), new, gaps

