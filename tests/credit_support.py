"""An independent judge of line credit: does the line a plan credits hold the value it credits?

It reads the recipe files as text (not through launchcard's YAML loader), so it cannot share a
mistake with the resolver: a credited line holds a value when the value is a scalar of that line,
of the YAML block the line opens, or of the next list item when flag and value are two items.
A derived value holds when every input it cites is held by the line it cites.

Used by ``tests/test_resolve_credit.py`` and ``bench/credit_coverage.py`` (the before/after numbers).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from launchcard.errors import LaunchcardError
from launchcard.resolve import Choice, ResolvedPlan, resolve
from launchcard.sources.vllm_recipes import RecipeRepo

HARDWARE = (None, "h100", "mi300x")  # None: the recipe's default hardware


@dataclass(frozen=True)
class Judged:
    where: str  # model variant hardware role
    what: str  # flag / variable and its value
    credit: str  # path#Lline, or "derived: ..." or "choice"
    ok: bool | None  # None: a user's choice, not credited to a file


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _block(lines: list[str], at: int) -> list[str]:
    """Line ``at`` (0-based) and the lines of the block it opens (more indented, or blank)."""
    own = _indent(lines[at])
    out = [lines[at]]
    for text in lines[at + 1:]:
        if text.strip() and _indent(text) <= own:
            break
        out.append(text)
    return out


def _scalars(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _scalars(v)
    elif isinstance(value, list):
        for v in value:
            yield from _scalars(v)
    else:
        yield value


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _same(a: Any, want: str) -> bool:
    text = _text(a)
    if text == want or text.startswith(want + "=") or (want.startswith("--") and text.endswith("=" + want)):
        return True
    if "=" in want and text == want.split("=", 1)[1]:
        return True
    try:
        return bool(json.loads(text) == json.loads(want))
    except ValueError:
        return False


def _parse(block: list[str]) -> Any:
    cut = min(_indent(t) for t in block if t.strip())
    text = "\n".join(t[cut:] for t in block)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None


def holds(file: Path, line: int, want: str, *, paired: bool = False) -> bool:
    """Whether 1-based ``line`` of ``file`` (or the block it opens) holds ``want``; with ``paired``, the
    next list item counts too (a flag's line, its value the following item)."""
    lines = file.read_text(encoding="utf-8").splitlines()
    at = line - 1
    if not 0 <= at < len(lines):
        return False
    block = _block(lines, at)
    parsed = _parse(block)
    if parsed is not None and any(_same(s, want) for s in _scalars(parsed)):
        return True
    if parsed is None and want in "\n".join(block):
        return True
    if paired and lines[at].lstrip().startswith("- "):
        own = _indent(lines[at])
        for nxt in range(at + 1, len(lines)):
            text = lines[nxt]
            if not text.strip():
                continue
            if _indent(text) == own and text.lstrip().startswith("- "):
                return holds(file, nxt + 1, want)
            if _indent(text) <= own:
                break
    return False


def _ev_text(ev: Any) -> str:
    return f"{ev.path}#L{ev.line}" if ev is not None and ev.line else (getattr(ev, "path", None) or "none")


def judge_unit(root: Path, flag: str | None, value: str | None, origin: Any) -> tuple[str, bool | None]:
    """(credit shown, held?) for one argument or variable."""
    derived = getattr(origin, "derived", None)
    if derived:
        inputs = getattr(origin, "inputs", ())
        ok = bool(inputs) and all(
            i.evidence is None or (i.evidence.line is not None and holds(root / i.evidence.path, i.evidence.line,
                                                                         i.value))
            for i in inputs)
        return f"derived: {derived} <- " + ", ".join(f"{i.name}={i.value} {_ev_text(i.evidence)}" for i in inputs), ok
    ev = origin.evidence
    if ev is None:
        if origin.layer in ("advanced", "choice"):
            return "choice", None
        return f"{origin.label()} (no line)", False
    if ev.line is None or ev.path is None:
        return _ev_text(ev), False
    want = value if value is not None else flag
    assert want is not None
    flag_ev = getattr(origin, "flag_evidence", None)
    ok = holds(root / ev.path, ev.line, want, paired=flag is not None and value is not None and flag_ev is None)
    if ok and flag is not None and value is not None and flag_ev is not None and flag_ev.line:
        # the line naming the flag must name it (or the parallelism it stands for)
        ok = holds(root / flag_ev.path, flag_ev.line, flag) or _names_rule(root / flag_ev.path, flag_ev.line)
    return _ev_text(ev), ok


def _names_rule(file: Path, line: int) -> bool:
    """A strategy's ``parallelism:``/``parallel_flag:`` line names the builder rule that writes the flags."""
    text = file.read_text(encoding="utf-8").splitlines()[line - 1].strip()
    return text.startswith(("parallelism:", "parallel_flag:", "deploy_type:"))


def judge_plan(root: Path, plan: ResolvedPlan) -> list[Judged]:
    out: list[Judged] = []
    for cmd in plan.commands:
        where = f"{plan.model} {plan.variant} {plan.hardware} {cmd.role}{cmd.node_rank or ''}"
        for unit in cmd.units:
            credit, ok = judge_unit(root, unit.flag, unit.value, unit.origin)
            out.append(Judged(where, f"{unit.flag or ''} {unit.value or ''}".strip(), credit, ok))
        for entry in cmd.env_entries:
            credit, ok = judge_unit(root, entry.name, _text(entry.value), entry.origin)
            out.append(Judged(where, f"{entry.name}={_text(entry.value)}", credit, ok))
    return out


def corpus_plans(repo: RecipeRepo) -> Iterator[ResolvedPlan]:
    """Every recipe, every variant, at its default hardware, h100 and mi300x (where the recipe allows it)."""
    for model in repo.model_ids():
        variants = list(repo.recipe(model).recipe.variants) or [None]
        for variant in variants:
            seen: set[str] = set()
            for hw in HARDWARE:
                try:
                    plan = resolve(repo, Choice(model=model, variant=variant, hardware=hw))
                except LaunchcardError:
                    continue
                if plan.hardware in seen:
                    continue
                seen.add(plan.hardware)
                yield plan


def judge_corpus(root: Path, repo: RecipeRepo) -> list[Judged]:
    return [j for plan in corpus_plans(repo) for j in judge_plan(root, plan)]


def strategy_plans(repo: RecipeRepo) -> Iterator[ResolvedPlan]:
    """Every recipe at its default hardware under each strategy it offers (multi-node and
    prefill/decode layouts included), default variant."""
    from launchcard.resolve._defaults import effective_compatible

    for model in repo.model_ids():
        for strategy in effective_compatible(repo, repo.recipe(model).recipe):
            try:
                yield resolve(repo, Choice(model=model, strategy=strategy))
            except LaunchcardError:
                continue


def judge_strategies(root: Path, repo: RecipeRepo) -> list[Judged]:
    return [j for plan in strategy_plans(repo) for j in judge_plan(root, plan)]


def choice_plans(repo: RecipeRepo) -> Iterator[ResolvedPlan]:
    """Every recipe with each of its features (and each mode of a modal one), each KV offload option and
    KV store, and two advanced presets turned on, at its default hardware."""
    kv = [*repo.hardware.kv_offload, *(s for s in repo.strategies if s.startswith("kv_store"))]
    for model in repo.model_ids():
        recipe = repo.recipe(model).recipe
        choices = [Choice(model=model, advanced=("max_batched_8k", "gpu_mem_095"))]
        for name, feat in recipe.features.items():
            choices.append(Choice(model=model, extra_features=(name,)))
            choices += [Choice(model=model, extra_features=(name,), feature_modes={name: mode})
                        for mode in (feat.modes or {})]
        choices += [Choice(model=model, kv_offload=k) for k in kv]
        for choice in choices:
            try:
                yield resolve(repo, choice)
            except LaunchcardError:
                continue


def judge_choices(root: Path, repo: RecipeRepo) -> list[Judged]:
    return [j for plan in choice_plans(repo) for j in judge_plan(root, plan)]
