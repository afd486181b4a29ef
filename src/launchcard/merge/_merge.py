"""Merge what every source declares about one model into one launch card.

Nothing is reconciled silently: when two sources give one fact different
values the card carries a :class:`Conflict` with each side's evidence; when no
source gives a field the card carries a :class:`Gap` saying why.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from launchcard.card import (
    Checkpoint,
    Conflict,
    ConflictSide,
    EngineEnv,
    EnvVerdict,
    Evidence,
    Fact,
    Gap,
    HfInfo,
    LaunchCard,
    Pin,
    SourceRef,
    performance_ref,
)
from launchcard.errors import LaunchcardError
from launchcard.facts import VOCABULARY, comparable, compared
from launchcard.merge._hardware import ModelConfig, hardware_needs
from launchcard.sources import Extract

UNPINNED = "unpinned (loads the repo's current main)"
_ORDER = ("vllm-recipes", "hf-api", "hf-config", "sglang-cookbook", "provider-preset", "dynamo", "launchcard")


def belongs(checkpoint: str | None, model: str) -> bool:
    """A checkpoint is the model's own, or a conversion of it (name contains the model's name)."""
    if not checkpoint:
        return True
    name = model.split("/")[-1].lower()
    return checkpoint == model or name in checkpoint.split("/")[-1].lower()


def merge_card(model: str, extracts: Sequence[Extract], *, captured_at: datetime | None = None,
               extra_gaps: Iterable[Gap] = (), configs: Mapping[str, ModelConfig] | None = None,
               plan_envs: Sequence[EngineEnv] = (), web_url: str | None = None) -> LaunchCard:
    """One card from every extract about ``model`` (vLLM recipe extract included).

    ``configs`` (checkpoint repo -> parsed config.json) let the memory planner
    size the recipe's command; ``plan_envs`` are extra recipe commands resolved
    only for planning (a variant whose checkpoint has a config), not listed as envs; ``web_url`` is the
    web catalog's base URL for ``performance`` (None: the path alone).
    """
    facts = _dedupe(f for x in extracts for f in x.facts)
    envs = tuple(e for x in extracts for e in x.envs if belongs(e.checkpoint, model))
    envs = tuple(sorted(envs, key=lambda e: (source_rank(e.source.kind), e.source.path or "")))
    envs = tuple(_with_verdicts(e, configs or {}, model) for e in envs)
    hub = next((x.hf for x in extracts if x.hf is not None and x.doc.kind == "hf-api"), None)
    hf = hub or next((x.hf for x in extracts if x.hf is not None), None) or _partial_hf(model, facts)
    checkpoints, pin_gaps = _pinned(_checkpoints(model, extracts, facts, envs), facts, envs, hf if hub else None)
    conflicts = _conflicts(model, facts, envs)
    hardware, hw_facts, hw_gaps = hardware_needs(model, envs, facts, hf, configs=configs, plan_envs=plan_envs)
    facts = [*facts, *hw_facts]
    evidence = _evidence(extracts)
    kinds = sorted({r.kind for r in evidence}, key=source_rank)
    gaps = [*_gaps(hf, hub is not None, checkpoints), *pin_gaps, *_unpinned(evidence), *hw_gaps, *extra_gaps]
    return LaunchCard(
        model=model, hf=hf, checkpoints=checkpoints, envs=envs, hardware=hardware,
        performance=performance_ref(model, web_url), facts=tuple(facts),
        evidence=evidence, gaps=tuple(gaps), conflicts=conflicts,
        captured_at=captured_at or datetime.now(UTC).replace(microsecond=0),
        captured_by=" + ".join(kinds) or None)


def _with_verdicts(env: EngineEnv, configs: Mapping[str, ModelConfig], model: str) -> EngineEnv:
    """Attach, per captured engine version, whether the engine's own parser accepts the argv; and the
    environment's verdict (a recipe env already carries its resolved plan's)."""
    from launchcard.flags import verdicts

    if not env.argv:
        return env
    # Any: pydantic model_copy(update=...) takes field values of every type
    update: dict[str, Any] = {"flag_verdicts": verdicts(list(env.argv), env.engine)}
    if env.verdict is None:
        from launchcard.check import check_command
        from launchcard.merge._vllm import env_verdict

        cfg = configs.get(env.checkpoint or model)
        try:
            update["verdict"] = env_verdict(check_command(
                env.argv, engine=env.engine, gpus=env.gpus, role=env.role, model_id=env.checkpoint or model,
                config=cfg.config if cfg is not None else None))
        except LaunchcardError as exc:
            update["verdict"] = EnvVerdict(status="ok", findings=(f"info [not-judged] {exc.one_line()}",))
    return env.model_copy(update=update)


def source_rank(kind: str) -> int:
    """Where a source kind's extracts and envs come on a card (the recipe first, launchcard's own last)."""
    return _ORDER.index(kind) if kind in _ORDER else len(_ORDER)


def _dedupe(facts: Iterable[Fact]) -> list[Fact]:
    seen: set[tuple[object, ...]] = set()
    out: list[Fact] = []
    for f in facts:
        ev = f.evidence
        key = (f.name, repr(f.value), f.scope, ev.path if ev else None, ev.line if ev else None)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def _evidence(extracts: Sequence[Extract]) -> tuple[SourceRef, ...]:
    seen: dict[tuple[object, ...], SourceRef] = {}
    for x in extracts:
        seen.setdefault((x.doc.kind, x.doc.path, x.doc.url), x.doc)
    return tuple(sorted(seen.values(), key=lambda r: (source_rank(r.kind), r.path or "")))


def _side(f: Fact) -> ConflictSide:
    return ConflictSide(value=f.value, evidence=f.evidence or Evidence(kind="launchcard"), scope=f.scope)


def _conflicts(model: str, facts: Sequence[Fact], envs: Sequence[EngineEnv]) -> tuple[Conflict, ...]:
    out: list[Conflict] = []
    by_name: dict[str, list[Fact]] = defaultdict(list)
    for f in facts:
        # the vocabulary's rule decides (launchcard.facts): numbers within tolerance, parsers through
        # their engine's registry, derived and per-deployment figures never
        if f.evidence is not None and f.name in VOCABULARY and compared(f.name):
            by_name[f.name].append(f)
    for name, group in by_name.items():
        values: dict[object, list[Fact]] = defaultdict(list)
        for f in group:
            try:
                values[comparable(name, f.value, f.engine)].append(f)
            except (TypeError, ValueError):  # a value the rule cannot read is not a side of a conflict
                continue
        if len(values) < 2:
            continue
        summary = " vs ".join(
            f"{_shown(fs)} ({', '.join(sorted({_label(f) for f in fs}))})" for fs in values.values())
        out.append(Conflict(field=name, sides=tuple(_side(f) for fs in values.values() for f in fs),
                            note=summary + (" — scoped values are one deployment's setting, not the model limit"
                                            if any(f.scope for f in group) else "")))
    out += _revision_conflicts(model, facts, envs)
    return tuple(out)


def _shown(group: Sequence[Fact]) -> str:
    """The values of one side as the sources wrote them (``openai = gpt-oss`` when equivalent names differ)."""
    return " = ".join(dict.fromkeys(str(f.value) for f in group))


def _label(f: Fact) -> str:
    kind = f.evidence.kind if f.evidence else "?"
    return f"{kind}: {f.scope}" if f.scope else kind


def _revision_conflicts(model: str, facts: Sequence[Fact], envs: Sequence[EngineEnv]) -> list[Conflict]:
    """Pinned weight revisions per repo; sources that load the repo without a pin count as 'unpinned'."""
    out: list[Conflict] = []
    pins: dict[str, list[Fact]] = defaultdict(list)
    for f in facts:
        if f.name == "weights_revision" and f.scope:
            pins[f.scope].append(f)
    for repo, group in pins.items():
        concrete = {str(f.value) for f in group if str(f.value) not in ("main", "HEAD")}
        if not concrete:
            continue
        sides = [_side(f) for f in group]
        pinned_kinds = {f.evidence.kind for f in group if f.evidence}
        seen: set[str] = set()
        for e in envs:
            if e.checkpoint == repo and e.source.kind not in pinned_kinds and e.source.path not in seen:
                seen.add(e.source.path or "")
                sides.append(ConflictSide(value=UNPINNED, evidence=e.evidence or Evidence(kind=e.source.kind),
                                          scope=e.hardware))
        values = list(dict.fromkeys(s.value for s in sides))  # first-seen order: stable across processes
        if len(values) >= 2:
            out.append(Conflict(field=f"weights_revision[{repo}]", sides=tuple(sides), note=(
                "sources load different weight revisions: " + " vs ".join(
                    f"{v} ({', '.join(sorted({s.evidence.kind for s in sides if s.value == v}))})" for v in values))))
    return out


def _checkpoints(model: str, extracts: Sequence[Extract], facts: Sequence[Fact],
                 envs: Sequence[EngineEnv]) -> tuple[Checkpoint, ...]:
    # Any: Checkpoint fields by name, of their several types, before model validation
    merged: dict[str, dict[str, Any]] = {}
    for x in extracts:
        for c in x.checkpoints:
            # a provider's own conversion is kept too: it is what that deployment loads
            cur = merged.setdefault(c.repo or c.name, {"name": c.repo or c.name, "repo": c.repo})
            for key, value in c.model_dump(exclude={"name", "repo"}).items():
                if value is not None and cur.get(key) is None:
                    cur[key] = value
    for e in envs:
        if e.checkpoint and e.checkpoint not in merged:
            merged[e.checkpoint] = {"name": e.checkpoint, "repo": e.checkpoint}
    fmt_facts = {f.scope or model: f.value for f in facts if f.name == "checkpoint_format"}
    for repo, cur in merged.items():
        if cur.get("format") is None and repo in fmt_facts:
            cur["format"] = fmt_facts[repo]
    merged.setdefault(model, {"name": model, "repo": model})
    order = sorted(merged.values(), key=lambda c: (c["name"] != model, c["name"]))
    return tuple(Checkpoint(**c) for c in order)


def _pinned(checkpoints: Sequence[Checkpoint], facts: Sequence[Fact], envs: Sequence[EngineEnv],
            hub: HfInfo | None) -> tuple[tuple[Checkpoint, ...], list[Gap]]:
    """Each checkpoint with every source's pin (``main`` for a source that loads it unpinned); its ``revision``
    is the Hub capture's, else the one pin every source agrees on, else null with a gap naming who pins what."""
    out: list[Checkpoint] = []
    gaps: list[Gap] = []
    for c in checkpoints:
        repo = c.repo or c.name
        pins = [Pin(revision=str(f.value), kind=f.evidence.kind, url=f.evidence.url) for f in facts
                if f.name == "weights_revision" and f.scope == repo and f.evidence is not None]
        pinned = {p.kind for p in pins}
        pins += [Pin(revision="main", kind=e.source.kind, url=e.source.url) for e in envs
                 if e.checkpoint == repo and e.source.kind not in pinned and e.argv]
        unique = tuple(dict.fromkeys(pins))
        revs = {p.revision for p in unique}
        concrete = sorted(revs - {"main", "HEAD"})
        hub_rev = hub.revision if hub is not None and hub.repo == repo else None
        revision = hub_rev or (concrete[0] if len(revs) == 1 and concrete else None if unique else c.revision)
        if concrete and (len(revs) > 1 or (hub_rev is not None and concrete != [hub_rev])):
            said = "; ".join(dict.fromkeys(f"{p.kind} loads {p.revision}" for p in unique))
            gaps.append(Gap(field=f"checkpoints[{c.name}].revision", why=(
                f"sources load different weight revisions ({said}"
                + (f"; the Hub's main is {hub_rev}" if hub_rev else "") + "); "
                + ("the card's revision is the Hub capture's" if hub_rev else "the card's revision is left null")
                + ": pin the one you deploy (emit --weights-revision)")))
        out.append(c.model_copy(update={"pins": unique, "revision": revision}))
    return tuple(out), gaps


def _unpinned(evidence: Sequence[SourceRef]) -> list[Gap]:
    """A document read with no knowable revision: its URL (``blob/HEAD`` or a page) may show other text today."""
    return [Gap(field=f"evidence[{r.path or r.url}].revision", why=(
        f"no revision knowable for this {r.kind} document (no --revision, no git checkout, no SOURCES*.md row with "
        "a commit)" + ("; its URL points at HEAD, which moves" if r.url and "/blob/HEAD/" in r.url else
                       "; its URL is a page that may change")))
        for r in evidence if r.revision is None and r.kind not in ("launchcard", "endpoint")]


def _partial_hf(model: str, facts: Sequence[Fact]) -> HfInfo:
    arch = next((f.value for f in facts if f.name == "architecture"), None)
    return HfInfo(repo=model, architecture=arch)


def _gaps(hf: HfInfo, from_hub: bool, checkpoints: Sequence[Checkpoint]) -> list[Gap]:
    gaps: list[Gap] = []
    if not from_hub:
        missing = [k for k in ("revision", "license", "gated", "params_b", "weight_gib", "downloads")
                   if getattr(hf, k) is None]
        if missing:
            gaps.append(Gap(field="hf", why=(
                f"no Hub capture: {', '.join(missing)} unknown; capture with --hub (HF_ENDPOINT selects the server) "
                "or keep the Hub's model info as <corpus>/hf/ORG/NAME/model_info.json")))
    for c in checkpoints:
        if c.format is None:
            gaps.append(Gap(field=f"checkpoints[{c.name}].format",
                            why="no source gives this checkpoint's quantization config"))
    return gaps
