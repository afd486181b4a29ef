"""The memory rules of ``check_plan``: the recipe's own VRAM minimum, and the memory planner per role.

The planner (pydantic) is imported only when a plan is made (``memory=True`` with a config).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from launchcard.check._argv import read_argv, speculative_model
from launchcard.check._context import SERVING, PlanContext, role_of
from launchcard.check._hardware import catalog_gpu
from launchcard.check._sizing import oversized
from launchcard.check._types import Finding

if TYPE_CHECKING:
    from launchcard.memory import Arch, Gpu, MemoryPlan, Settings
    from launchcard.resolve import Command


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def declared_vram(ctx: PlanContext) -> list[Finding]:
    """The recipe's own ``vram_minimum_gb`` against the GPUs holding one copy of the weights."""
    need = _num(ctx.variant.get("vram_minimum_gb"))
    per_gpu = ctx.hw.vram_per_gpu_gb
    if not need or not per_gpu:
        return []
    # a vLLM MoE model's experts are split over TP x DP without --enable-expert-parallel too: FusedMoEParallelConfig
    # .make flattens TP across DP (vllm 0.11.0 model_executor/layers/fused_moe/config.py flatten_tp_across_dp; the
    # memory planner's memory.moe_split). Counting one copy per DP rank refused `--tp 1 --dp 8` of gpt-oss-120b on
    # H100 (96 GB "on 1 GPU") that `plan` ranks and `memory` fits at 12 GiB a GPU. SGLang's --dp-size replicas each
    # hold the whole model; a config-less plan's experts are unknown: neither is counted so.
    flat = ctx.plan.engine != "sglang" and ctx.cfg is not None and bool(ctx.cfg.experts)
    out = []
    for cmd in ctx.commands:
        if cmd.role not in SERVING or cmd.role == "worker":
            continue
        v = read_argv(cmd.argv)
        holders = v.world * (v.dp if v.expert_parallel or flat else 1)
        have = holders * per_gpu
        if need > have + 1e-6:
            out.append(Finding(
                severity="error", code="vram-shortfall", role=role_of(cmd),
                message=f"variant {ctx.plan.variant} ({ctx.plan.model_id}) needs {need:g} GB; this command holds one "
                        f"copy of the weights on {holders} {ctx.hw.key} GPU(s) = {have:g} GB",
                evidence=f"{ctx.recipe_line('variants', ctx.plan.variant, 'vram_minimum_gb')} (vram_minimum_gb); "
                         f"{ctx.hw.evidence}",
                fix=_vram_fix(ctx, need)))
    return out


def _vram_fix(ctx: PlanContext, need: float) -> str:
    import math

    node = ctx.hw.node_vram_gb or 0
    nodes = math.ceil(need / node) if node else 0
    smaller = []
    variants = ctx.data.get("variants")
    for name, v in (variants.items() if isinstance(variants, Mapping) else []):
        gb = _num(v.get("vram_minimum_gb")) if isinstance(v, Mapping) else None
        if gb is not None and gb <= node and name != ctx.plan.variant:
            smaller.append(f"{name} ({gb:g} GB)")
    parts = []
    if nodes > 1 and ctx.hw.scalable:
        parts.append(f"use a multi-node strategy with --nodes {nodes}")
    parts.append("hardware with more memory per node")
    if smaller:
        parts.append("or a smaller variant: " + ", ".join(smaller))
    return "; ".join(parts)


def memory_findings(ctx: PlanContext, memory: bool, version: str | None, index: str | Path | None,
            plans: list[tuple[str, MemoryPlan]], reported: Sequence[Finding] = ()) -> list[Finding]:
    """The memory rule; ``plans`` receives the plan of each role planned (a worker: its head's)."""
    plan, cfg = ctx.plan, ctx.cfg
    if cfg is None:
        return [Finding(severity="info", code="memory-not-checked",
                        message=f"memory not checked: no config.json for {plan.model_id} "
                                "(attention-head and expert splits not checked either)",
                        evidence=f"looked in: {ctx.cfg_where}",
                        fix="give the checkpoint's config.json (--config FILE or a cached Hub id on resolve, emit, "
                            "card, page; or <corpus>/hf/ORG/NAME/config.json next to the recipes)")]
    if not memory:
        return [Finding(severity="info", code="memory-not-planned",
                        message=f"memory not planned (config.json at {cfg.path})",
                        evidence=cfg.path, fix="pass --memory to plan it per role")]
    out: list[Finding] = []
    gpu, gpu_ev = catalog_gpu(plan.hardware)  # a CPU profile: its catalog entry is one NUMA node's host memory
    if ctx.hw.is_cpu:
        gpu_ev = f"CPU backend, {gpu_ev}" if gpu is not None else "CPU backend (no catalog entry: node memory unknown)"
    if gpu is None and not ctx.hw.is_cpu:
        return [Finding(severity="info", code="memory-not-planned",
                        message=f"memory not planned: {plan.hardware} is not in the hardware catalog",
                        evidence=gpu_ev, fix="plan it with launchcard memory --gpu-memory-gib X")]
    head: MemoryPlan | None = None
    for cmd in ctx.commands:
        if cmd.role == "worker" and head is not None:
            plans.append((role_of(cmd), head))  # a worker differs from its head in rank flags only: the same plan
            continue
        if cmd.role not in SERVING or cmd.role == "worker":
            continue
        found, mplan = _memory_one(ctx, cmd, gpu, gpu_ev, version, index, reported)
        out += found
        if mplan is not None:
            plans.append((role_of(cmd), mplan))
            head = mplan if cmd.role == "head" else head
    return out


def _engine_places(text: str) -> set[str]:
    """The engine lines (``vllm/config/model.py:2646``) a refusal quotes as its evidence."""
    import re

    return set(re.findall(r"\bvllm/[\w/]+\.py:\d+", text))


def _said_elsewhere(problem: str, role: str, reported: Sequence[Finding]) -> bool:
    """Whether ``problem`` (a memory plan's start-up refusal) is already an error finding for ``role``: the same
    engine lines quoted by an error of that role (its own rule reports it with its own code)."""
    from launchcard.memory import STARTUP_REFUSAL

    places = _engine_places(problem) if problem.startswith(STARTUP_REFUSAL) else set()
    if not places:
        return False
    said: set[str] = set()
    for f in reported:
        if f.severity == "error" and (f.role is None or role in f.role.split(", ")):
            said |= _engine_places(f.evidence)
    return places <= said


def _memory_one(ctx: PlanContext, cmd: Command, gpu: Gpu | None, gpu_ev: str, version: str | None,
                index: str | Path | None, reported: Sequence[Finding] = ()) -> tuple[list[Finding], MemoryPlan | None]:
    from dataclasses import replace

    from launchcard.errors import LaunchcardError
    from launchcard.limits import allows_long, uneven_ep_note
    from launchcard.memory import (
        Settings,
        arch_from_config,
        load_arch,
        plan_memory,
        sampler_from_env,
        settings_from_argv,
    )

    cfg = ctx.cfg
    assert cfg is not None
    role = role_of(cmd)
    try:
        if ctx.plan.engine == "sglang":  # SGLang's flags (--tp-size, --context-length) read by the argv model
            v = read_argv(cmd.argv)
            # experts over --ep-size as predict plans them (expert_parallel over the TP group: the same bytes a GPU)
            settings = Settings(vllm_version=version, tp=v.tp, pp=v.pp, max_model_len=_sglang_context(cmd.argv),
                                expert_parallel=v.ep_size > 1)
        else:
            settings = settings_from_argv(list(cmd.argv), Settings(vllm_version=version))
        settings = replace(settings, allow_long_max_model_len=allows_long(cmd.env_str),
                           flashinfer_sampler=sampler_from_env(cmd.env_str, version))
        if ctx.hw.is_cpu:
            space = cmd.env.get("VLLM_CPU_KVCACHE_SPACE")
            settings = replace(settings, device="cpu",
                               cpu_kvcache_space_gib=float(str(space)) if space is not None else None)
        if index is not None and Path(cfg.path).is_file():
            arch = load_arch(cfg.path, index)
        else:
            arch = arch_from_config(dict(cfg.raw), where=cfg.path)
        upcast: Finding | None = None
        if ctx.plan.engine == "sglang" and gpu is not None:  # MXFP4 experts as SGLang holds them (predict's rule)
            settings, upcast = _sglang_mxfp4(arch, settings, cmd, gpu, role)
        mplan = plan_memory(arch, settings, gpu=gpu)
    except (LaunchcardError, ValueError) as exc:
        why = exc.one_line() if isinstance(exc, LaunchcardError) else str(exc)
        return [Finding(severity="info", code="memory-not-planned", role=role,
                        message=f"memory planner could not plan this command: {why}", evidence=cfg.path)], None
    evidence = f"{cfg.path}; {gpu_ev}; memory planner (vLLM {mplan.vllm_version} accounting)"
    draft = speculative_model(read_argv(cmd.argv))
    out: list[Finding] = [upcast] if upcast is not None else []
    problems = [p for p in mplan.problems if not _said_elsewhere(p, role, reported)]
    if not mplan.fits and not problems:  # only start-up refusals, each already its own rule's error
        out.append(Finding(severity="info", code="memory-not-judged", role=role,
                           message=f"memory on {mplan.gpu} not judged: vLLM refuses to start these settings (the "
                                   "errors above say why)", evidence=evidence,
                           fix=mplan.advice[0] if mplan.advice else ""))
    elif not mplan.fits:  # a start-up refusal is a memory problem too (the memory verdict agrees with check's)
        out.append(Finding(severity="error", code="memory-does-not-fit", role=role,
                           message=f"does not fit on {mplan.gpu}: " + "; ".join(problems),
                           evidence=evidence,
                           fix=mplan.advice[0] if mplan.advice else "use more GPUs, a smaller variant or a shorter "
                                                                     "--max-model-len"))
    else:
        out.append(Finding(severity="info", code="memory-fits", role=role,
                           message=f"fits on {mplan.gpu}: weights {mplan.weights_gib_per_gpu:.1f} GiB/"
                                   f"{'NUMA node' if mplan.device == 'cpu' else 'GPU'}, KV cache "
                                   f"{mplan.kv_cache_tokens:,} tokens, {mplan.max_concurrency:g} request(s) of "
                                   f"{mplan.max_model_len:,} tokens at once",
                           evidence=evidence))
    # the limit rules' info says the undecided; vLLM's uneven-EP note is not SGLang's (it refuses: ep-uneven)
    vllm_only = {uneven_ep_note(arch.num_experts, settings.tp * settings.dp)} if ctx.plan.engine == "sglang" else set()
    out += [Finding(severity="warning", code="memory-warning", role=role, message=w, evidence=evidence)
            for w in mplan.warnings if w not in mplan.startup_undecided and w not in vllm_only]
    if not ctx.hw.is_cpu:
        out += oversized(ctx.plan, role, arch, settings, mplan, gpu, ctx.hw.gpus_per_node, evidence)
    if draft:
        out.append(Finding(severity="info", code="memory-draft-not-counted", role=role,
                           message=f"the separate draft model {draft} is not counted", evidence="--speculative-config"))
    return out, mplan


def _sglang_mxfp4(arch: Arch, settings: Settings, cmd: Command, gpu: Gpu,
                  role: str) -> tuple[Settings, Finding | None]:
    """``settings`` with an SGLang command's MXFP4 experts padded and typed as SGLang holds them
    (memory.sglang_mxfp4_settings, at the newest rules read: check takes no SGLang release), and a
    finding where SGLang converts them to BF16 at load."""
    from launchcard.argv import parse_command
    from launchcard.memory import sglang_mxfp4_settings

    sg = parse_command(cmd.argv, engine="sglang")
    out, said = sglang_mxfp4_settings(arch, settings, None, gpu.compute_capability or None,
                                      sg.get_str("--moe-runner-backend"), ep=read_argv(cmd.argv).ep_size,
                                      piecewise=bool(sg.get_bool("--enable-piecewise-cuda-graph", default=False)))
    if said is None or not out.mxfp4_upcast:
        return out, None
    return out, Finding(severity="info", code="memory-sglang-bf16-experts", role=role, message=said.message,
                        evidence="sglang/srt/layers/quantization/mxfp4.py process_weights_after_loading")


def _sglang_context(argv: Sequence[str]) -> int | None:
    from launchcard.argv import parse_command

    return parse_command(argv, engine="sglang").get_int("--context-length")
