"""``check_plan``: judge a resolved plan before anyone launches it.

Rule families, each finding naming what it rests on:

* flags      - every command against the engine's captured parser spec;
* topology   - TP x PP x DP against the node and the node count the hardware allows, TP against the
               model's attention and KV heads, PP against its layers, expert parallelism against its experts;
* memory     - the recipe's own VRAM minimum per copy of the weights, and (with a config.json) the memory
               planner per role;
* sizing     - GPUs the processes use against the GPUs of the node the plan names;
* quirks     - the resolver's recipe warnings, with their recipe line;
* quantization - environment variables and flags that target a quantization the checkpoint does not have.

Cheap rules always run; the memory planner (pydantic) only when ``memory=True``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchcard.check._argv import ArgvView, read_argv, speculative_model
from launchcard.check._config import ModelConfig, config_dirs, find_config, load_config, parse_config
from launchcard.check._facts import process_name, visible_devices
from launchcard.check._hardware import MAX_NODES, MAX_NODES_EVIDENCE, Hardware, catalog_gpu, hardware_of
from launchcard.check._limits import limit_rules, tp_findings
from launchcard.check._sizing import memory_assumptions, oversized, plan_assumptions
from launchcard.check._types import Finding, Severity, Verdict, sort_findings

if TYPE_CHECKING:
    from launchcard.flags import Finding as FlagFinding
    from launchcard.memory import Gpu, MemoryPlan
    from launchcard.resolve import Command, ResolvedPlan
    from launchcard.sources.vllm_recipes import RecipeDoc, RecipeRepo

# Any in this module: recipe documents and config.json are YAML/JSON values of every type.

_TRUE = {"1", "true", "yes", "on"}
_SERVING = ("single", "head", "worker", "prefill", "decode", "instance", "omni")


class _Ctx:
    """What every rule reads: the plan, its hardware, its recipe document and the model's config."""

    def __init__(self, plan: ResolvedPlan, repo: RecipeRepo | None, cfg: ModelConfig | None, cfg_where: str) -> None:
        self.plan = plan
        self.repo = repo
        self.hw: Hardware = hardware_of(plan, repo)
        self.doc: RecipeDoc | None = None
        if repo is not None:
            from launchcard.errors import LaunchcardError

            try:
                self.doc = repo.recipe(plan.model)
            except LaunchcardError:  # a plan built elsewhere may name no recipe file here
                self.doc = None
        self.cfg = cfg
        self.cfg_where = cfg_where
        self.commands = distinct_roles(plan.commands)

    @property
    def data(self) -> Mapping[str, Any]:
        data = self.doc.data if self.doc is not None else None
        return data if isinstance(data, Mapping) else {}

    @property
    def variant(self) -> Mapping[str, Any]:
        variants = self.data.get("variants")
        v = variants.get(self.plan.variant) if isinstance(variants, Mapping) else None
        return v if isinstance(v, Mapping) else {}

    def recipe_line(self, *path: object) -> str:
        """``models/org/name.yaml#L84`` for a path in the recipe (deepest known prefix)."""
        if self.doc is None:
            return f"recipe {self.plan.model}"
        line = self.doc.line(*path) if path else None
        return f"{self.doc.path}#L{line}" if line else self.doc.path


def distinct_roles(commands: Sequence[Command]) -> list[Command]:
    """One command per role: the workers of a multi-node plan differ only in rank flags."""
    seen: set[str] = set()
    out = []
    for cmd in commands:
        if cmd.role in seen and cmd.role in ("worker", "instance"):
            continue
        seen.add(cmd.role)
        out.append(cmd)
    return out


def role_of(cmd: Command) -> str:
    """``head``, ``worker[rank 1]`` ...: the process's name in findings, as in the plan's facts."""
    return process_name(cmd)


def check_plan(plan: ResolvedPlan, *, config: str | Path | Mapping[str, Any] | None = None,
               engine_version: str | None = None, recipes: RecipeRepo | None = None, memory: bool = True,
               flags: bool = True, config_search: Sequence[str | Path] = (),
               safetensors_index: str | Path | None = None, flag_report: bool = False) -> Verdict:
    """Every finding on ``plan``; see the module docstring for the rule families.

    ``config`` is the model's config.json (a path or the parsed mapping); without it the
    checkpoint's ``<dir>/<org>/<name>/config.json`` is looked up in ``config_search`` and in
    the corpus ``hf/`` folder next to ``recipes``.  ``recipes`` (the checkout the plan came
    from) gives recipe lines, the taxonomy profile and the recipe's engine requirements.
    ``engine_version`` = the vLLM version the plan will run on (None: the newest captured spec,
    and the recipe's version requirements are reported as info).  ``memory=False`` skips the
    memory planner (it imports pydantic), which is then reported as an info finding.
    ``flag_report`` keeps every command's own flag findings on the verdict (``flag_findings``), with the
    recipe's engine requirements applied even without ``engine_version`` (``resolve --check``); the
    memory plans made are kept too (``memory_plans``).
    Raises InputError for an unreadable config or an uncaptured engine version.
    """
    cfg, where = _config(plan, config, recipes, config_search)
    ctx = _Ctx(plan, recipes, cfg, where)
    findings: list[Finding] = []
    findings += _quirks(ctx)
    raw: list[tuple[str, FlagFinding]] = []
    if flags:
        findings += _flags(ctx, engine_version, raw if flag_report else None)
    if plan.deploy_type == "omni":
        findings.append(Finding(
            severity="info", code="omni-not-sized",
            message="omni pipeline: its stages place themselves on GPUs (stage configs), so the flag, GPU topology, "
                    "sizing, VRAM and memory rules for one vllm serve process are not applied",
            evidence=ctx.recipe_line("meta", "tasks")))
    elif ctx.hw.is_cpu:
        findings.append(Finding(
            severity="info", code="cpu-backend",
            message=f"{plan.hardware} is a CPU profile: its gpu_count ({ctx.hw.gpus_per_node}) counts NUMA nodes, "
                    "so GPU topology, GPU sizing and the recipe's VRAM minimum are not applied",
            evidence=ctx.hw.evidence))
    else:
        findings += _nodes(ctx)
        findings += _topology(ctx)
        findings += _declared_vram(ctx)
    plans: list[tuple[str, MemoryPlan]] = []
    if plan.deploy_type != "omni":
        findings += _model_split(ctx)
        findings += _engine_limits(ctx)
        # a start-up refusal the rules above report is not repeated in the memory finding (one per rule, process)
        findings += _memory(ctx, memory, engine_version, safetensors_index, plans, reported=findings)
    findings += _quantization(ctx)
    findings += plan_assumptions(plan)
    if plans:
        findings += memory_assumptions(plans, f"memory planner; {ctx.cfg.path if ctx.cfg else 'config.json'}")
    return Verdict(sort_findings(findings), flag_findings=tuple(raw), memory_plans=tuple(plans))


def _config(plan: ResolvedPlan, config: str | Path | Mapping[str, Any] | None, repo: RecipeRepo | None,
            search: Sequence[str | Path]) -> tuple[ModelConfig | None, str]:
    if isinstance(config, Mapping):
        return parse_config(config, f"config.json of {plan.model_id}"), ""
    if config is not None:
        return load_config(config), ""
    dirs = config_dirs(repo.root if repo is not None else None, search)
    found = find_config(plan.model_id, dirs)
    if found is None:
        looked = ", ".join(str(d / plan.model_id / "config.json") for d in dirs) or "no config folder given"
        return None, looked
    return load_config(found), ""


# -- recipe quirks -------------------------------------------------------------------------------------

_QUIRK_PATH = re.compile(r"^((?:meta|variants|strategy_overrides|hardware_overrides|features|model)(?:\.[\w\-]+)+)")


def _quirks(ctx: _Ctx) -> list[Finding]:
    out = []
    for text in ctx.plan.warnings:
        m = _QUIRK_PATH.match(text)
        path = m.group(1).split(".") if m else []
        out.append(Finding(severity="warning", code="recipe-quirk", message=text,
                           evidence=ctx.recipe_line(*path) if path else ctx.recipe_line(),
                           fix="read the recipe entry at the evidence line; the command is what the recipes builder "
                               "renders from it"))
    return out


# -- flags -----------------------------------------------------------------------------------------------

def _flags(ctx: _Ctx, version: str | None, report: list[tuple[str, FlagFinding]] | None) -> list[Finding]:
    """The flag rule; ``report`` (when given) receives every command's own findings, the recipe's engine
    requirements applied whether or not ``version`` is given."""
    from launchcard.flags import RECIPE, check_argv
    from launchcard.flagspec import shipped_spec

    spec = shipped_spec("vllm", version)
    model = ctx.data.get("model")
    model = model if isinstance(model, Mapping) else {}
    min_version = str(model["min_vllm_version"]) if model.get("min_vllm_version") else None
    nightly = bool(model.get("nightly_required"))
    out: list[Finding] = []
    if version is None and (min_version or nightly):
        need = "a nightly vLLM build" if nightly else f"vLLM >= {min_version}"
        out.append(Finding(severity="info", code="engine-version",
                           message=f"the recipe needs {need}; flags checked against the newest captured spec "
                                   f"(vllm {spec.version})",
                           evidence=ctx.recipe_line("model", "nightly_required" if nightly else "min_vllm_version"),
                           fix="pass --engine-version V to check the version you will run"))
    evidence = f"vllm {spec.version} captured parser spec (launchcard/data/flags)"
    strict = bool(version) or report is not None
    for cmd in ctx.commands:
        # vLLM-Omni's parser (--omni ...) is not captured
        judged = tuple(cmd.argv[:2]) == ("vllm", "serve") and ctx.plan.deploy_type != "omni"
        if ctx.plan.engine == "sglang":  # a derived SGLang plan: SGLang's own captured parser
            found = check_argv(list(cmd.argv), engine="sglang", version=shipped_spec("sglang", None).version)
            if report is not None:
                report += [(role_of(cmd), f) for f in found]
            out += [Finding(severity=_flag_severity(f), code=f"flag-{f.rule}", message=f"{f.flag}: {f.message}",
                            evidence="sglang captured parser spec (launchcard/data/flags)", fix=f.fix,
                            role=role_of(cmd)) for f in found]
            continue
        if not judged and report is None:
            continue
        found = check_argv(list(cmd.argv), engine="vllm", version=spec.version,
                           min_version=min_version if strict else None, nightly_required=nightly and strict)
        if report is not None:
            report += [(role_of(cmd), f) for f in found]
        if not judged:
            continue
        for f in found:
            if not version and f.stage == RECIPE:
                continue  # without a version the recipe's requirements are the info above
            out.append(Finding(severity=_flag_severity(f), code=f"flag-{f.rule}",
                               message=f"{f.flag}: {f.message}", evidence=evidence, fix=f.fix, role=role_of(cmd)))
    return out


def _flag_severity(f: FlagFinding) -> Severity:
    if f.rule == "not-a-server-command" or f.severity == "info":
        return "info"  # a router or frontend, or an entry point whose parser is not captured: nothing checked
    return "error" if f.severity == "error" else "warning"


# -- nodes and topology ----------------------------------------------------------------------------------

def _nodes(ctx: _Ctx) -> list[Finding]:
    plan, hw = ctx.plan, ctx.hw
    out = []
    if plan.node_count > MAX_NODES:
        out.append(Finding(severity="error", code="too-many-nodes",
                           message=f"{plan.node_count} nodes of {hw.key}: the recipes builder plans at most "
                                   f"{MAX_NODES} nodes per deployment",
                           evidence=MAX_NODES_EVIDENCE, fix=f"use --nodes {MAX_NODES} or fewer"))
    if plan.node_count > 1 and plan.deploy_type in ("multi_node", "pd_cluster") and not hw.scalable:
        out.append(Finding(severity="error", code="not-scalable",
                           message=f"{hw.key} is not scalable (a single box): it cannot join a "
                                   f"{plan.node_count}-node deployment",
                           evidence=hw.evidence + " scalable: false", fix="use one node or scalable hardware"))
    if plan.node_count > 1 and (hw.generation or "").lower() == "xpu":
        out.append(Finding(severity="warning", code="xpu-multi-node",
                           message=f"{hw.key} (Intel XPU) is offered on one node only by the recipes builder",
                           evidence=hw.evidence, fix="use --nodes 1"))
    return out


def _visible(cmd: Command) -> list[str] | None:
    return visible_devices(cmd)


def _topology(ctx: _Ctx) -> list[Finding]:
    plan, hw = ctx.plan, ctx.hw
    out: list[Finding] = []
    for cmd in ctx.commands:
        if cmd.role not in _SERVING:
            continue
        v = read_argv(cmd.argv)
        role = role_of(cmd)
        for bad in v.unreadable:
            out.append(Finding(severity="warning", code="unreadable-parallelism", role=role,
                               message=f"{bad}: not a number, so the GPUs this command uses cannot be counted",
                               evidence="the resolved argv", fix="substitute the value before launching"))
        if v.dp_local is not None and v.dp_local > v.dp:
            out.append(Finding(severity="error", code="dp-local-exceeds-dp", role=role,
                               message=f"--data-parallel-size-local {v.dp_local} exceeds --data-parallel-size {v.dp}",
                               evidence="vLLM ParallelConfig: data_parallel_size_local <= data_parallel_size",
                               fix=f"use --data-parallel-size-local {v.dp}"))
        if v.nnodes > 1:
            if v.world % v.nnodes:
                out.append(Finding(severity="error", code="world-not-divisible-by-nodes", role=role,
                                   message=f"TP x PP = {v.world} GPUs cannot be spread evenly over --nnodes {v.nnodes}",
                                   evidence="vLLM multi-node launch: world_size / nnodes GPUs per node",
                                   fix=f"make TP x PP a multiple of {v.nnodes}"))
            if v.nnodes > plan.node_count:
                out.append(Finding(severity="error", code="nnodes-exceeds-plan", role=role,
                                   message=f"--nnodes {v.nnodes} but the plan has {plan.node_count} node(s)",
                                   evidence="the resolved argv", fix=f"use --nodes {v.nnodes}"))
        used = v.gpus_on_node
        if used > hw.gpus_per_node:
            out.append(Finding(severity="error", code="exceeds-node", role=role,
                               message=f"this process needs {used} GPUs on its node (TP {v.tp} x PP {v.pp}"
                                       f"{f' / {v.nnodes} nodes' if v.nnodes > 1 else ''}"
                                       f"{f' x {v.local_dp} local DP ranks' if v.local_dp > 1 else ''}); "
                                       f"a {hw.key} node has {hw.gpus_per_node}",
                               evidence=hw.evidence,
                               fix=f"lower TP/PP/DP to fit {hw.gpus_per_node} GPUs per node, or spread it with a "
                                   f"multi-node strategy"))
            continue
        visible = _visible(cmd)
        if visible is not None and len(visible) < used:
            out.append(Finding(severity="error", code="visible-devices-short", role=role,
                               message=f"needs {used} GPUs but CUDA_VISIBLE_DEVICES lists {len(visible)} "
                                       f"({','.join(visible)})",
                               evidence="the resolved environment", fix=f"list {used} devices or lower TP/PP/DP"))
        elif visible is not None and len(visible) > used:
            out.append(Finding(severity="warning", code="idle-gpus", role=role,
                               message=f"CUDA_VISIBLE_DEVICES lists {len(visible)} GPUs; the process uses {used}",
                               evidence="the resolved environment", fix=f"list {used} devices"))
        elif visible is None and used < hw.gpus_per_node and cmd.role in ("single", "head", "worker", "omni"):
            out.append(Finding(
                severity="warning", code="idle-gpus", role=role,
                message=f"uses {used} of the {hw.gpus_per_node} GPUs of a {hw.key} node "
                        f"(TP {v.tp} x PP {v.pp}{f' x DP {v.local_dp}' if v.local_dp > 1 else ''}); "
                        f"{hw.gpus_per_node - used} stay idle",
                evidence=hw.evidence,
                fix=f"emitted artifacts request only the {used} GPU(s) used; run more replicas on the rest, "
                    "or raise TP/DP"))
    return out


def _model_split(ctx: _Ctx) -> list[Finding]:
    """TP against heads, PP against layers, EP against experts (vLLM's start-up checks)."""
    cfg = ctx.cfg
    if cfg is None:
        return []
    out: list[Finding] = []
    for cmd in ctx.commands:
        if cmd.role not in _SERVING:
            continue
        out += _split_rules(cfg, read_argv(cmd.argv), role_of(cmd))
    return _dedupe_roles(out)


def _engine_limits(ctx: _Ctx) -> list[Finding]:
    """vLLM's start-up refusals from the config, the flags and the GPU (:mod:`launchcard.limits`)."""
    cfg = ctx.cfg
    if cfg is None or ctx.plan.engine != "vllm":
        return []
    from launchcard.hardware import catalog

    acc = catalog().lookup(ctx.plan.hardware) if ctx.plan.hardware else None
    out: list[Finding] = []
    for cmd in ctx.commands:
        if cmd.role in _SERVING:
            out += limit_rules(cfg, cmd.argv, role_of(cmd), cmd.env_str, acc)
    return _dedupe_roles(out)


def _split_rules(cfg: Any, v: ArgvView, role: str) -> list[Finding]:
    """How the command splits the model: heads over TP, layers over PP, experts over EP."""
    out = _heads(cfg, v, role)
    if cfg.layers and v.pp > cfg.layers:
        out.append(Finding(severity="error", code="pp-exceeds-layers", role=role,
                           message=f"--pipeline-parallel-size {v.pp} exceeds the {cfg.layers} layers",
                           evidence=cfg.field("num_hidden_layers"), fix=f"use PP <= {cfg.layers}"))
    if v.expert_parallel:
        out += _experts(cfg, v, role)
    return out


def _heads(cfg: ModelConfig, v: ArgvView, role: str) -> list[Finding]:
    return tp_findings(cfg, v.tp, role)


def _experts(cfg: ModelConfig, v: ArgvView, role: str) -> list[Finding]:
    if not cfg.experts:
        return [Finding(severity="warning", code="ep-dense-model", role=role,
                        message="--enable-expert-parallel on a model without routed experts has no effect",
                        evidence=cfg.field("n_routed_experts/num_local_experts/num_experts"),
                        fix="drop --enable-expert-parallel")]
    ep = v.ep_size
    if ep > cfg.experts:
        return [Finding(severity="error", code="ep-exceeds-experts", role=role,
                        message=f"expert-parallel size TP x DP = {ep} exceeds the {cfg.experts} experts "
                                "(some ranks would hold none)",
                        evidence=cfg.field("experts"), fix=f"keep TP x DP <= {cfg.experts}")]
    if cfg.experts % ep:
        return [Finding(severity="warning", code="ep-uneven", role=role,
                        message=f"{cfg.experts} experts over an expert-parallel size of {ep} (TP x DP): ranks hold "
                                "unequal expert counts, the fullest rank sets the pace",
                        evidence=cfg.field("experts"), fix=f"pick TP x DP dividing {cfg.experts}")]
    return []


def _dedupe_roles(findings: list[Finding]) -> list[Finding]:
    """The same finding for every role becomes one finding for the plan."""
    by_key: dict[tuple[str, str, str], list[Finding]] = {}
    for f in findings:
        by_key.setdefault((f.code, f.message, f.severity), []).append(f)
    out = []
    for group in by_key.values():
        roles = [f.role for f in group if f.role]
        first = group[0]
        out.append(first if len(group) == 1 else Finding(
            severity=first.severity, code=first.code, message=first.message, evidence=first.evidence, fix=first.fix,
            role=", ".join(dict.fromkeys(r for r in roles if r)) or None))
    return out


# -- memory ----------------------------------------------------------------------------------------------

def _num(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _declared_vram(ctx: _Ctx) -> list[Finding]:
    """The recipe's own ``vram_minimum_gb`` against the GPUs holding one copy of the weights."""
    need = _num(ctx.variant.get("vram_minimum_gb"))
    per_gpu = ctx.hw.vram_per_gpu_gb
    if not need or not per_gpu:
        return []
    out = []
    for cmd in ctx.commands:
        if cmd.role not in _SERVING or cmd.role == "worker":
            continue
        v = read_argv(cmd.argv)
        holders = v.world * (v.dp if v.expert_parallel else 1)
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


def _vram_fix(ctx: _Ctx, need: float) -> str:
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


def _memory(ctx: _Ctx, memory: bool, version: str | None, index: str | Path | None,
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
        if cmd.role not in _SERVING or cmd.role == "worker":
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


def _memory_one(ctx: _Ctx, cmd: Command, gpu: Gpu | None, gpu_ev: str, version: str | None,
                index: str | Path | None, reported: Sequence[Finding] = ()) -> tuple[list[Finding], MemoryPlan | None]:
    from dataclasses import replace

    from launchcard.errors import LaunchcardError
    from launchcard.limits import allows_long
    from launchcard.memory import (
        STARTUP_UNDECIDED,
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
            settings = Settings(vllm_version=version, tp=v.tp, pp=v.pp, max_model_len=_sglang_context(cmd.argv))
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
        mplan = plan_memory(arch, settings, gpu=gpu)
    except (LaunchcardError, ValueError) as exc:
        why = exc.one_line() if isinstance(exc, LaunchcardError) else str(exc)
        return [Finding(severity="info", code="memory-not-planned", role=role,
                        message=f"memory planner could not plan this command: {why}", evidence=cfg.path)], None
    evidence = f"{cfg.path}; {gpu_ev}; memory planner (vLLM {mplan.vllm_version} accounting)"
    draft = speculative_model(read_argv(cmd.argv))
    out: list[Finding] = []
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
    out += [Finding(severity="warning", code="memory-warning", role=role, message=w, evidence=evidence)
            for w in mplan.warnings if STARTUP_UNDECIDED not in w]  # the limit rules' info says it
    if not ctx.hw.is_cpu:
        out += oversized(ctx.plan, role, arch, settings, mplan, gpu, ctx.hw.gpus_per_node, evidence)
    if draft:
        out.append(Finding(severity="info", code="memory-draft-not-counted", role=role,
                           message=f"the separate draft model {draft} is not counted", evidence="--speculative-config"))
    return out, mplan


def _sglang_context(argv: Sequence[str]) -> int | None:
    from launchcard.argv import parse_command

    return parse_command(argv, engine="sglang").get_int("--context-length")


# -- quantization ----------------------------------------------------------------------------------------

def _family(name: str | None) -> str | None:
    n = (name or "").lower()
    for key, fam in (("nvfp4", "nvfp4"), ("mxfp4", "mxfp4"), ("mxfp8", "mxfp8"), ("fp4", "nvfp4"), ("fp8", "fp8")):
        if key in n:
            return fam  # a bare "fp4" (modelopt_fp4, the recipes' fp4) is NVIDIA's FP4 format
    if any(k in n for k in ("int4", "int8", "awq", "gptq", "w4a16", "w8a8", "bitsandbytes", "int2")):
        return "int"
    if "compressed-tensors" in n:
        return "compressed-tensors"
    return None


def _env_targets(name: str) -> set[str] | None:
    """Quantizations an environment variable is for, judged by its name; None = not quantization-specific."""
    n = name.upper()
    if any(k in n for k in ("KV", "ATTN", "ATTENTION", "CACHE")):
        return None
    if "NVFP4" in n:
        return {"nvfp4"}
    if "MXFP4" in n:
        return {"mxfp4"}
    if "FP4" in n:
        return {"nvfp4", "mxfp4"}
    if "MXFP8" in n:
        return {"mxfp8"}
    if "FP8" in n:
        return {"fp8", "mxfp8"}
    return None


def _checkpoint_quant(ctx: _Ctx) -> tuple[str | None, str, str]:
    """(family, label, evidence) of the checkpoint's weights: config.json first, else the recipe's precision."""
    cfg = ctx.cfg
    if cfg is not None:
        method = cfg.quant_method
        if method:
            return _family(method), method, cfg.field("quantization_config.quant_method")
        return None, "unquantized", cfg.field("no quantization_config")
    precision = ctx.variant.get("precision")
    if isinstance(precision, str) and precision:
        return _family(precision), precision, ctx.recipe_line("variants", ctx.plan.variant, "precision")
    return None, "", ""


def _env_line(ctx: _Ctx, cmd: Command, name: str) -> str:
    for entry in cmd.env_entries:
        if entry.name == name:
            ev = entry.origin.evidence
            if ev is not None and ev.path:
                return f"{ev.path}#L{ev.line} ({entry.origin.label()})" if ev.line else ev.path
            return f"{ctx.recipe_line()} ({entry.origin.label()})"
    if ctx.doc is not None:
        lines = getattr(getattr(ctx.doc, "loaded", None), "lines", {}) or {}
        hits = [(_place_rank(ctx, path), line, path) for path, line in lines.items() if path and path[-1] == name]
        hits = [h for h in hits if h[0] < 9]
        if hits:
            _, line, path = min(hits)
            return f"{ctx.doc.path}#L{line} ({'.'.join(str(p) for p in path[:-1])})"
    return ctx.recipe_line()


def _place_rank(ctx: _Ctx, path: tuple[object, ...]) -> int:
    """How likely a recipe path put an env var into this plan (0 best, 9 = another variant's block)."""
    parts = [str(p) for p in path]
    if len(parts) > 1 and parts[0] == "variants" and parts[1] != ctx.plan.variant:
        return 9
    for rank, key in enumerate((ctx.plan.hardware, ctx.plan.generation, ctx.plan.brand)):
        if key and key.lower() in (p.lower() for p in parts):
            return rank + 1
    return 5


def _quantization(ctx: _Ctx) -> list[Finding]:
    family, label, ck_ev = _checkpoint_quant(ctx)
    if not label:
        return []
    out: list[Finding] = []
    for cmd in ctx.commands:
        v = read_argv(cmd.argv)
        runtime = _family(v.quantization)
        have = {f for f in (family, runtime) if f}
        for name, value in cmd.env.items():
            targets = _env_targets(name)
            if targets is None or str(value).strip().lower() not in _TRUE or have & targets:
                continue
            if family == "compressed-tensors":
                continue  # the scheme inside compressed-tensors is not read here
            out.append(Finding(
                severity="warning", code="quant-env-mismatch", role=role_of(cmd),
                message=f"{name}={value} is for {'/'.join(sorted(targets)).upper()} weights, but checkpoint "
                        f"{ctx.plan.model_id} is {label}",
                evidence=f"{_env_line(ctx, cmd, name)}; checkpoint: {ck_ev}",
                fix=f"drop {name} for this variant (it belongs to a variant with {min(targets)} weights)"))
        if v.quantization and family and runtime and runtime != family and family != "compressed-tensors":
            out.append(Finding(
                severity="warning", code="quant-flag-mismatch", role=role_of(cmd),
                message=f"--quantization {v.quantization} on a {label} checkpoint ({ctx.plan.model_id}); vLLM "
                        "rejects a method that differs from the checkpoint's",
                evidence=ck_ev, fix="drop --quantization (vLLM reads the method from the checkpoint)"))
    return _dedupe_roles(out)


# -- one command from any source (cards) -----------------------------------------------------------------

def check_command(argv: Sequence[str], *, engine: str = "vllm", gpus: int | None = None, role: str = "single",
                  config: str | Path | Mapping[str, Any] | None = None, model_id: str = "") -> Verdict:
    """The verdict on one published launch command (an SGLang cookbook line, a Dynamo worker ...).

    What a bare command allows: its flags against the newest captured parser of ``engine``, TP x PP x
    local DP against the ``gpus`` its source states, and (with the model's config) TP against the
    attention and KV heads, PP against the layers, expert parallelism against the experts.
    """
    from launchcard.errors import InputError
    from launchcard.flags import check_argv
    from launchcard.flagspec import shipped_spec

    findings: list[Finding] = []
    try:
        spec = shipped_spec(engine, None)
    except InputError:
        spec = None
        findings.append(Finding(severity="info", code="flags-not-checked", role=role,
                                message=f"no captured parser for {engine}", evidence="launchcard/data/flags"))
    if spec is not None:
        for f in check_argv(list(argv), engine=engine, version=spec.version):
            findings.append(Finding(severity=_flag_severity(f), code=f"flag-{f.rule}",
                                    message=f"{f.flag}: {f.message}", fix=f.fix, role=role,
                                    evidence=f"{engine} {spec.version} captured parser spec (launchcard/data/flags)"))
    v = read_argv(argv)
    if gpus and not v.unreadable and role not in ("router", "frontend", "encoder"):
        used = v.gpus_on_node
        if used > gpus:
            findings.append(Finding(severity="error", code="exceeds-gpus", role=role,
                                    message=f"the command needs {used} GPUs (TP {v.tp} x PP {v.pp} x DP {v.local_dp}); "
                                            f"its source states {gpus}",
                                    evidence="the source's GPU count", fix=f"lower TP/PP/DP to {gpus} GPUs"))
    cfg = None
    if isinstance(config, Mapping):
        cfg = parse_config(config, f"config.json of {model_id or 'the model'}")
    elif config is not None:
        cfg = load_config(config)
    if cfg is None:
        findings.append(Finding(severity="info", code="memory-not-checked", role=role,
                                message=f"memory not checked: no config.json for {model_id or 'the model'}",
                                evidence="no config.json at hand"))
    else:
        findings += _split_rules(cfg, v, role)
        if engine == "vllm":  # vLLM's own start-up rules
            findings += limit_rules(cfg, argv, role)
    return Verdict(sort_findings(findings))
