"""``check_plan``: judge a resolved plan before anyone launches it.

Rule families, each finding naming what it rests on:

* flags      - every command against the engine's captured parser spec;
* topology   - TP x PP x DP against the node and the node count the hardware allows, TP against the
               model's attention and KV heads, PP against its layers, expert parallelism against its experts;
* memory     - the recipe's own VRAM minimum per copy of the weights, and (with a config.json) the memory
               planner per role;
* sizing     - GPUs the processes use against the GPUs of the node the plan names;
* quirks     - the resolver's recipe warnings, with their recipe line;
* install    - the recipe's install notes (``model.install.docker|pip.note``), which the resolver ignores;
* quantization - environment variables and flags that target a quantization the checkpoint does not have.

Cheap rules always run; the memory planner (pydantic) only when ``memory=True``.  The memory rules live in
``_vram``, the quantization rule in ``_quant``, what every rule reads (:class:`PlanContext`) in ``_context``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launchcard.check._argv import ArgvView, read_argv
from launchcard.check._config import ModelConfig, config_dirs, find_config, load_config, parse_config
from launchcard.check._context import SERVING, PlanContext, dedupe_roles, role_of
from launchcard.check._facts import visible_devices
from launchcard.check._hardware import MAX_NODES, MAX_NODES_EVIDENCE
from launchcard.check._limits import (
    ep_findings,
    limit_rules,
    pp_layers_findings,
    sglang_draft_rules,
    sglang_runner_findings,
    sglang_split_findings,
    tp_findings,
    without_repeated_flags,
)
from launchcard.check._quant import quantization_findings
from launchcard.check._sizing import memory_assumptions, plan_assumptions
from launchcard.check._types import Finding, Severity, Verdict, sort_findings
from launchcard.check._vram import declared_vram, memory_findings

if TYPE_CHECKING:
    from launchcard.flags import Finding as FlagFinding
    from launchcard.hardware import Accelerator
    from launchcard.memory import MemoryPlan
    from launchcard.resolve import ResolvedPlan
    from launchcard.sources.vllm_recipes import RecipeRepo

# Any in this module: recipe documents and config.json are YAML/JSON values of every type.


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
    and the recipe's version requirements are reported as info); an SGLang plan's: its SGLang release (its flags
    against that release's captured parser, its heads split by that release's model code).  ``memory=False`` skips the
    memory planner (it imports pydantic), which is then reported as an info finding.
    ``flag_report`` keeps every command's own flag findings on the verdict (``flag_findings``), with the
    recipe's engine requirements applied even without ``engine_version`` (``resolve --check``); the
    memory plans made are kept too (``memory_plans``).
    Raises InputError for an unreadable config or an uncaptured engine version.
    """
    cfg, where = _config(plan, config, recipes, config_search)
    ctx = PlanContext(plan, recipes, cfg, where)
    findings: list[Finding] = []
    findings += _quirks(ctx)
    findings += install_notes(ctx)
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
        findings += declared_vram(ctx)
    plans: list[tuple[str, MemoryPlan]] = []
    if plan.deploy_type != "omni":
        findings += _model_split(ctx, engine_version)
        findings += _engine_limits(ctx, engine_version)
        findings = without_repeated_flags(findings)  # a fact a start-up rule says again (check.said_by_limits)
        # a start-up refusal the rules above report is not repeated in the memory finding (one per rule, process)
        findings += memory_findings(ctx, memory, None if plan.engine == "sglang" else engine_version,
                                    safetensors_index, plans, reported=findings)
    findings += quantization_findings(ctx)
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


# The codes of the rules that read the recipe document, not the command: a verdict on a command alone
# (check_command, e.g. a preset's start command emitted from a card environment) cannot say them again.
RECIPE_CODES = ("recipe-quirk", "install-note", "engine-version")


# -- recipe quirks -------------------------------------------------------------------------------------

_QUIRK_PATH = re.compile(r"^((?:meta|variants|strategy_overrides|hardware_overrides|features|model)(?:\.[\w\-]+)+)")


def _quirks(ctx: PlanContext) -> list[Finding]:
    out = []
    for text in ctx.plan.warnings:
        m = _QUIRK_PATH.match(text)
        path = m.group(1).split(".") if m else []
        out.append(Finding(severity="warning", code="recipe-quirk", message=text,
                           evidence=ctx.recipe_line(*path) if path else ctx.recipe_line(),
                           fix="read the recipe entry at the evidence line; the command is what the recipes builder "
                               "renders from it"))
    return out


# -- install notes --------------------------------------------------------------------------------------

def install_notes(ctx: PlanContext) -> list[Finding]:
    """The recipe's install notes (``RecipeDoc.install_notes``), one info finding each.

    The recipes builder leaves ``model.install`` out of the command; a note often says which image or build the
    model needs (GLM-5.3-Flash L29: "NVIDIA: use vllm/vllm-openai:glm53-flash until support lands in the standard
    image"), so it rides with the plan's verdict on every surface that prints it, the docker one with the plan's image.
    """
    out = []
    for mode, note, line in ctx.doc.install_notes() if ctx.doc is not None else ():
        image = f" (this plan's image: {ctx.plan.docker_image})" if mode == "docker" and ctx.plan.docker_image else ""
        out.append(Finding(severity="info", code="install-note",
                           message=f"the recipe's {mode} install note: {note}{image}",
                           evidence=f"{ctx.doc.path}#L{line}" if ctx.doc is not None and line else ctx.recipe_line(),
                           fix=("where the note names another image, run that one (emit --image IMAGE)"
                                if mode == "docker" else "")))
    return out


# -- flags -----------------------------------------------------------------------------------------------

def _flags(ctx: PlanContext, version: str | None, report: list[tuple[str, FlagFinding]] | None) -> list[Finding]:
    """The flag rule; ``report`` (when given) receives every command's own findings, the recipe's engine
    requirements applied whether or not ``version`` is given."""
    from launchcard.flags import RECIPE, check_argv
    from launchcard.flagspec import shipped_spec

    spec = shipped_spec("vllm", None if ctx.plan.engine == "sglang" else version)
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
    other = sglang_parser_release(version)[1] if ctx.plan.engine == "sglang" else None
    if other is not None:
        out.append(Finding(severity="info", code="flags-not-checked", message=other, evidence="launchcard/data/flags",
                           fix="capture that release's parser (`launchcard flags capture`), or state a captured one"))
    evidence = f"vllm {spec.version} captured parser spec (launchcard/data/flags)"
    strict = bool(version) or report is not None
    for cmd in ctx.commands:
        # vLLM-Omni's parser (--omni ...) is not captured
        judged = tuple(cmd.argv[:2]) == ("vllm", "serve") and ctx.plan.deploy_type != "omni"
        if ctx.plan.engine == "sglang":  # a derived SGLang plan: SGLang's own captured parser of its release
            release = sglang_parser_release(version)[0]
            if release is None:  # said once above
                continue
            found = check_argv(list(cmd.argv), engine="sglang", version=release)
            if report is not None:
                report += [(role_of(cmd), f) for f in found]
            out += [Finding(severity=_flag_severity(f), code=f"flag-{f.rule}", message=f"{f.flag}: {f.message}",
                            evidence=f"sglang {release} captured parser spec (launchcard/data/flags)", fix=f.fix,
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


def sglang_parser_release(version: str | None) -> tuple[str | None, str | None]:
    """The captured SGLang parser a plan stated at SGLang ``version`` is checked against: that release's (the
    newest captured when none is stated; each finding names it), or None with the line saying why the flags are not
    judged: another release's parser could call a flag unknown that the stated release has (or the reverse), as
    ``predict --command`` leaves a release without a captured parser unjudged."""
    from launchcard.flagspec import default_release, shipped_index

    captured = shipped_index()["sglang"]
    if not version:
        return default_release("sglang"), None
    stated = version.removeprefix("v")
    if stated in captured:
        return stated, None
    return None, (f"flags not checked: no captured parser of SGLang {version} (captured: {', '.join(captured)}); "
                  "another release's could call a flag unknown that it has")


def _flag_severity(f: FlagFinding) -> Severity:
    if f.rule == "not-a-server-command" or f.severity == "info":
        return "info"  # a router or frontend, or an entry point whose parser is not captured: nothing checked
    return "error" if f.severity == "error" else "warning"


# -- nodes and topology ----------------------------------------------------------------------------------

def _nodes(ctx: PlanContext) -> list[Finding]:
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


def _topology(ctx: PlanContext) -> list[Finding]:
    plan, hw = ctx.plan, ctx.hw
    out: list[Finding] = []
    for cmd in ctx.commands:
        if cmd.role not in SERVING:
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
        visible = visible_devices(cmd)
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


def _model_split(ctx: PlanContext, version: str | None = None) -> list[Finding]:
    """TP against heads, PP against layers, EP against experts (the engine's start-up checks; ``version``: its
    release)."""
    cfg = ctx.cfg
    if cfg is None:
        return []
    out: list[Finding] = []
    for cmd in ctx.commands:
        if cmd.role not in SERVING:
            continue
        out += _split_rules(cfg, read_argv(cmd.argv), role_of(cmd), ctx.plan.engine, version)
        if ctx.plan.engine == "sglang":  # EAGLE drafting with a checkpoint without MTP layers, gpt-oss's
            # triton_kernel at --ep-size > 1: as a bare check says
            out += sglang_draft_rules(cfg, cmd.argv, role_of(cmd))
            out += sglang_runner_findings(cfg, cmd.argv, role_of(cmd), _accelerator(ctx), version)
    return dedupe_roles(out)


def _engine_limits(ctx: PlanContext, version: str | None = None) -> list[Finding]:
    """vLLM's start-up refusals from the config, the flags and the GPU (:mod:`launchcard.limits`), at the release
    the plan's flags are checked at (``version``; None: the default release), as a bare `check --version` judges."""
    cfg = ctx.cfg
    if cfg is None or ctx.plan.engine != "vllm":
        return []
    acc = _accelerator(ctx)
    out: list[Finding] = []
    for cmd in ctx.commands:
        if cmd.role in SERVING:
            out += limit_rules(cfg, cmd.argv, role_of(cmd), cmd.env_str, acc, version)
    return dedupe_roles(out)


def _accelerator(ctx: PlanContext) -> Accelerator | None:
    """The catalog accelerator of the plan's hardware (None: none named, or not in the catalog)."""
    from launchcard.hardware import catalog

    return catalog().lookup(ctx.plan.hardware) if ctx.plan.hardware else None


def _split_rules(cfg: Any, v: ArgvView, role: str, engine: str = "vllm", version: str | None = None) -> list[Finding]:
    """How the command splits the model: heads over TP (SGLang's attention TP size under DP attention, by its
    release ``version``), layers over PP, experts over EP."""
    out = sglang_split_findings(cfg, v, role, version) if engine == "sglang" else tp_findings(cfg, v.tp, role, engine)
    out += pp_layers_findings(cfg, v.pp, role)
    return out + ep_findings(cfg, v, role, engine)


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
        findings += _split_rules(cfg, v, role, engine, spec.version if spec is not None else None)
        if engine == "vllm":  # vLLM's own start-up rules, at the release the flags were read by
            findings += limit_rules(cfg, argv, role, version=spec.version if spec is not None else None)
        elif engine == "sglang":
            findings += sglang_draft_rules(cfg, argv, role)
            findings += sglang_runner_findings(cfg, argv, role, None, spec.version if spec is not None else None)
    return Verdict(sort_findings(findings))
