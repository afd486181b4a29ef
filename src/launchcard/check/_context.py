"""What every rule of ``check_plan`` reads: the plan, its hardware, its recipe document, the model's config.

Also the roles a plan's commands play: one command per role, its name in findings, and one finding for
the plan where every role has the same one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from launchcard.check._config import ModelConfig
from launchcard.check._facts import process_name
from launchcard.check._hardware import Hardware, hardware_of
from launchcard.check._types import Finding

if TYPE_CHECKING:
    from launchcard.resolve import Command, ResolvedPlan
    from launchcard.sources.vllm_recipes import RecipeDoc, RecipeRepo

# Any in this module: recipe documents are YAML values of every type.

# the roles that run a serving engine (a router or a frontend does not)
SERVING = ("single", "head", "worker", "prefill", "decode", "instance", "omni")


class PlanContext:
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


def dedupe_roles(findings: list[Finding]) -> list[Finding]:
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
