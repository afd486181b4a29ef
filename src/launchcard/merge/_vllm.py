"""The vLLM recipe's side of a card: its declared facts and its resolved default command.

The recipe file is parsed once by :mod:`launchcard.sources.vllm_recipes`; this
module reads the parsed document (values with their lines) and asks the
resolver for the default launch on the recipe's hardware.
"""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Any, Literal

from launchcard.card import ArgCredit, Checkpoint, CreditInput, EngineEnv, EnvVerdict, Evidence, Fact, Gap, SourceRef
from launchcard.errors import LaunchcardError
from launchcard.facts import check, spec
from launchcard.sources import Extract, parse_params_b

if TYPE_CHECKING:
    from collections.abc import Mapping

    from launchcard.check import Verdict
    from launchcard.resolve import Origin, ResolvedPlan
    from launchcard.sources.vllm_recipes import RecipeDoc, RecipeRepo

# Any in this module: recipe documents hold YAML values of every type; a fact's value is one of them.


def _f(doc: RecipeDoc, name: str, value: Any, *path: object, unit: str | None = None,
       scope: str | None = None) -> Fact:
    check(name, unit)  # one vocabulary (launchcard.facts); parsers named here are vLLM's
    return Fact(name=name, value=value, evidence=doc.evidence(*path), unit=unit, scope=scope,
                engine="vllm" if spec(name).compare == "registry" else None)


def _credit(flag: str | None, value: str | None, o: Origin) -> ArgCredit:
    """The resolver's credit of one argument, as the card records it (not re-derived)."""
    return ArgCredit(flag=flag, value=value, layer=o.label(), credit=o.credit(), evidence=o.evidence,
                     flag_evidence=o.flag_evidence, derived=o.derived,
                     inputs=tuple(CreditInput(name=i.name, value=i.value, evidence=i.evidence) for i in o.inputs))


def recipe_extract(repo: RecipeRepo, model: str, *, hardware: str | None = None,
                   configs: Mapping[str, str] | None = None) -> tuple[Extract, list[Gap]]:
    """Facts, checkpoints and the resolved env of one recipe; gaps where it cannot resolve."""
    doc = repo.recipe(model)
    data: dict[str, Any] = doc.data or {}
    m = data.get("model") or {}
    meta = data.get("meta") or {}
    facts: list[Fact] = []
    gaps: list[Gap] = []
    if m.get("parameter_count") is not None:
        b = parse_params_b(str(m["parameter_count"]))
        if b is not None:
            facts.append(_f(doc, "params_total_b", b, "model", "parameter_count", unit="B"))
    if m.get("active_parameters") is not None:
        b = parse_params_b(str(m["active_parameters"]))
        if b is not None:
            facts.append(_f(doc, "params_active_b", b, "model", "active_parameters", unit="B"))
    if isinstance(m.get("context_length"), int):
        facts.append(_f(doc, "context_tokens", m["context_length"], "model", "context_length", unit="tokens"))
    if m.get("architecture"):
        facts.append(_f(doc, "architecture_family", m["architecture"], "model", "architecture"))
    if m.get("min_vllm_version"):
        facts.append(_f(doc, "min_engine_version", str(m["min_vllm_version"]), "model", "min_vllm_version",
                        scope="vllm"))
    if isinstance(meta.get("tasks"), list) and meta["tasks"]:
        facts.append(_f(doc, "tasks", [str(t) for t in meta["tasks"]], "meta", "tasks"))
    if isinstance(meta.get("description"), str) and meta["description"].strip():
        facts.append(_f(doc, "description", " ".join(meta["description"].split()), "meta", "description"))
    if isinstance(meta.get("title"), str) and meta["title"].strip():
        facts.append(_f(doc, "title", meta["title"].strip(), "meta", "title"))
    if meta.get("date_updated"):
        facts.append(_f(doc, "recipe_updated_on", str(meta["date_updated"]), "meta", "date_updated"))
    features = data.get("features") or {}
    for feat, flag, name in (("reasoning", "--reasoning-parser", "reasoning_parser"),
                             ("tool_calling", "--tool-call-parser", "tool_call_parser")):
        args = [str(a) for a in ((features.get(feat) or {}).get("args") or [])]
        if flag in args and args.index(flag) + 1 < len(args):
            facts.append(_f(doc, name, args[args.index(flag) + 1], "features", feat, "args"))
    spec = features.get("spec_decoding") or {}
    mode = spec.get("default_mode")
    args = [str(a) for a in (((spec.get("modes") or {}).get(mode) or {}).get("args") or spec.get("args") or [])]
    if "--speculative-config" in args:
        try:
            cfg = json.loads(args[args.index("--speculative-config") + 1])
            if "num_speculative_tokens" in cfg:
                path = ("features", "spec_decoding", "modes", mode, "args") if mode else (
                    "features", "spec_decoding", "args")
                facts.append(_f(doc, "num_speculative_tokens", int(cfg["num_speculative_tokens"]), *path))
        except (ValueError, IndexError):
            pass
    checkpoints: list[Checkpoint] = []
    for vname, v in (data.get("variants") or {}).items():
        v = v or {}
        mid = v.get("model_id") or m.get("model_id") or model
        if v.get("precision"):
            facts.append(_f(doc, "checkpoint_format", str(v["precision"]), "variants", vname, "precision", scope=mid))
        if v.get("vram_minimum_gb") is not None:
            facts.append(_f(doc, "planning_minimum_gb", v["vram_minimum_gb"], "variants", vname, "vram_minimum_gb",
                            unit="GB", scope=mid))
        checkpoints.append(Checkpoint(name=mid, repo=mid, format=v.get("precision"),
                                      notes=f"vLLM recipe variant {vname!r}"))
    # The recipe page's prose-named declarations (``launchcard facts``) are not card facts: each YAML key
    # becomes one fact of the vocabulary (launchcard.facts) here, never a second one under a label.

    # validated: what the recipe marks verified (meta.hardware: {profile: verified | ...})
    validated = tuple(str(k) for k, v in (meta.get("hardware") or {}).items() if str(v).lower() == "verified")
    envs: list[EngineEnv] = []
    # no hardware given: the resolver's own default (resolve.default_hardware), so `card` and `resolve` agree
    hw = hardware
    src = SourceRef(kind="vllm-recipes", url=doc.url(), path=doc.path, revision=doc.revision, sha256=doc.sha256,
                    committed_at=doc.committed_at)
    try:
        from launchcard.check import plan_facts
        from launchcard.resolve import Choice, resolve

        plan = resolve(repo, Choice(model=model, hardware=hw))
        ev = plan.source or doc.evidence()
        verdict = _plan_verdict(repo, plan, configs or {})
        for cmd, proc in zip(plan.commands, plan_facts(plan, verdict).processes, strict=True):
            argv = tuple(cmd.argv)
            envs.append(EngineEnv(
                engine="vllm", role=cmd.role, checkpoint=plan.model_id, image=plan.docker_image, argv=argv,
                command=_pretty(argv), env=cmd.env_str, validated_hardware=validated, hardware=plan.hardware,
                gpus=proc.gpus, engine_version=None,
                notes=f"resolved default: variant {plan.variant}, strategy {plan.strategy}, "
                      f"features {', '.join(plan.features) or 'none'}",
                source=src, evidence=ev if isinstance(ev, Evidence) else None,
                verdict=env_verdict(verdict, cmd.role) if verdict is not None else None,
                credits=tuple(_credit(u.flag, u.value, u.origin) for u in cmd.units)))
    except LaunchcardError as exc:
        gaps.append(Gap(field="envs[vllm]",
                        why=f"the recipe does not resolve on {hw or 'its default hardware'}: {exc.one_line()}"))
    return Extract(doc=src, models=(model,), facts=tuple(facts), envs=tuple(envs),
                   checkpoints=tuple(checkpoints)), gaps


def _plan_verdict(repo: RecipeRepo, plan: ResolvedPlan, configs: Mapping[str, str]) -> Verdict | None:
    """The resolved plan's verdict (memory planned with the user's config.json for the checkpoint, else the
    corpus hf/ copy)."""
    from launchcard.check import check_plan

    try:
        return check_plan(plan, recipes=repo, config=configs.get(plan.model_id) or configs.get(plan.model))
    except LaunchcardError:
        return None


def env_verdict(verdict: Verdict, role: str | None = None) -> EnvVerdict:
    """A ``launchcard.check`` verdict as the card's EnvVerdict: the findings about ``role`` or the whole plan."""
    import re

    found = [f for f in verdict.findings if role is None or f.role is None or role in re.findall(r"[a-z]+", f.role)]
    status: Literal["ok", "warning", "error"] = "ok"
    if any(f.severity == "error" for f in found):
        status = "error"
    elif any(f.severity == "warning" for f in found):
        status = "warning"
    return EnvVerdict(status=status, findings=tuple(f.one_line() for f in found))


def variant_env(repo: RecipeRepo, model: str, want: set[str], hardware: str | None) -> EngineEnv | None:
    """The recipe's command for the first variant that loads a checkpoint in ``want``, on ``hardware``.

    Used when the default variant loads a checkpoint whose config.json is not at
    hand but another variant loads one that is: the memory planner then sizes a
    command the recipe really publishes rather than guessing from a sibling.
    """
    from launchcard.check import plan_facts
    from launchcard.resolve import Choice, resolve

    data: dict[str, Any] = repo.recipe(model).data or {}
    base_id = (data.get("model") or {}).get("model_id") or model
    for vname, v in (data.get("variants") or {}).items():
        if ((v or {}).get("model_id") or base_id) not in want:
            continue
        try:
            plan = resolve(repo, Choice(model=model, variant=vname, hardware=hardware))
        except LaunchcardError:
            continue
        doc = repo.recipe(model)
        src = SourceRef(kind="vllm-recipes", url=doc.url(), path=doc.path, revision=doc.revision, sha256=doc.sha256,
                        committed_at=doc.committed_at)
        ev = plan.source if isinstance(plan.source, Evidence) else None
        for cmd, proc in zip(plan.commands, plan_facts(plan).processes, strict=True):
            if cmd.role in ("single", "head"):
                return EngineEnv(engine="vllm", role=cmd.role, checkpoint=plan.model_id, argv=tuple(cmd.argv),
                                 hardware=plan.hardware, gpus=proc.gpus,
                                 notes=f"resolved for memory planning: variant {vname}", source=src, evidence=ev)
    return None


def _pretty(argv: tuple[str, ...]) -> str:
    """``vllm serve MODEL \\`` then one flag (with its value) per line, as recipe pages print it."""
    parts: list[str] = []
    cur: list[str] = []
    for tok in argv:
        if tok.startswith("--") and cur and len(parts) + len(cur) > 0 and (cur[0].startswith("--") or len(cur) >= 3):
            parts.append(" ".join(shlex.quote(t) for t in cur))
            cur = []
        cur.append(tok)
    if cur:
        parts.append(" ".join(shlex.quote(t) for t in cur))
    return " \\\n  ".join(parts)


__all__ = ["env_verdict", "recipe_extract", "variant_env"]
