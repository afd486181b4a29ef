"""The verdict on a plan: findings, each with the evidence it rests on and a fix.

Standard-library frozen dataclasses: a verdict rides along every plain
``launchcard resolve``, whose start-up budget has no room for pydantic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from launchcard.errors import NOT_STARTED

if TYPE_CHECKING:
    from launchcard.flags import Finding as FlagFinding
    from launchcard.memory import MemoryPlan

Severity = Literal["error", "warning", "info"]
_RANK = {"error": 0, "warning": 1, "info": 2}

# The one wording of a plan's verdict, by status: resolve, emit headers, card text, page and web all print it.
VERDICT_LABELS: dict[str, str] = {"ok": "ok", "warning": "ok, with warnings", "error": NOT_STARTED}


def verdict_label(status: str) -> str:
    """The wording of a verdict status (``ok`` / ``warning`` / ``error``) everywhere it is printed."""
    return VERDICT_LABELS.get(status, status)


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One judgement on a plan.

    ``evidence`` names what the finding rests on: a flag spec version, a
    config.json field, a hardware catalog or taxonomy entry, a recipe line
    (``models/org/name.yaml#L84``).  ``role`` is the command it concerns
    (``single``, ``head``, ``prefill`` ...), None for the whole plan.
    """

    severity: Severity
    code: str
    message: str
    evidence: str
    fix: str = ""
    role: str | None = None

    def one_line(self) -> str:
        """``error [code] role: message (evidence: ...); fix: ...`` on one line."""
        who = f" {self.role}:" if self.role else ""
        text = f"{self.severity} [{self.code}]{who} {self.message} (evidence: {self.evidence})"
        if self.fix:
            text += f"; fix: {self.fix}"
        return " ".join(text.split())

    def to_json(self) -> dict[str, Any]:  # Any: a JSON object for --json output
        return {"severity": self.severity, "code": self.code, "role": self.role, "message": self.message,
                "evidence": self.evidence, "fix": self.fix}

    @classmethod
    def from_line(cls, line: str) -> Finding | None:
        """A finding back from its :meth:`one_line`, as a card's EnvVerdict stores it (a role stays at the head
        of the message, so ``one_line`` gives the same line back); None for a line not in that form."""
        m = _LINE.match(line)
        if m is None:
            return None
        rest = m.group(3)
        at = rest.find(" (evidence: ")
        if at < 0:
            return None
        tail = rest[at + len(" (evidence: "):]
        evidence, _, fix = tail.partition("); fix: ")
        if not fix:
            evidence = evidence.removesuffix(")")
        return cls(severity=m.group(1), code=m.group(2), message=rest[:at],  # type: ignore[arg-type]
                   evidence=evidence, fix=fix)


# ``one_line``: ``severity [code] [role:] message (evidence: ...); fix: ...``
_LINE = re.compile(r"^(error|warning|info) \[([\w.-]+)\] (.*)$")


@dataclass(frozen=True)
class Verdict:
    """Every finding on one plan, errors first.  ``ok`` = no error (warnings allowed)."""

    findings: tuple[Finding, ...] = ()
    # What the rules computed on the way, per role, for callers that show it whole (``resolve --check`` /
    # ``--memory``) instead of computing it again; not part of the verdict's value.
    flag_findings: tuple[tuple[str, FlagFinding], ...] = field(default=(), compare=False, repr=False)
    memory_plans: tuple[tuple[str, MemoryPlan], ...] = field(default=(), compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def exit_code(self) -> int:
        """0 = the plan is fine (warnings allowed), 1 = it will not start or does not fit."""
        return 0 if self.ok else 1

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "warning")

    @property
    def status(self) -> Severity | Literal["ok"]:
        """The worst severity among errors and warnings, else ``ok``."""
        if self.errors:
            return "error"
        return "warning" if self.warnings else "ok"

    def summary(self) -> str:
        n_err, n_warn = len(self.errors), len(self.warnings)
        n_info = len(self.findings) - n_err - n_warn
        return f"verdict: {self.label} ({n_err} error(s), {n_warn} warning(s), {n_info} info)"

    @property
    def label(self) -> str:
        return verdict_label(self.status)

    def lines(self, *, info: bool = True) -> list[str]:
        """The summary, then a line per finding (``info=False``: errors and warnings only, for a surface whose
        own findings already say what the info ones do)."""
        return [self.summary(), *(f"  {f.one_line()}" for f in self.findings if info or f.severity != "info")]

    def to_json(self) -> dict[str, Any]:  # Any: a JSON object for --json output
        return {"ok": self.ok, "exit_code": self.exit_code, "status": self.status, "label": self.label,
                "findings": [f.to_json() for f in self.findings]}


def sort_findings(findings: list[Finding]) -> tuple[Finding, ...]:
    """Errors, then warnings, then info; first-seen order within each; exact duplicates dropped."""
    seen: set[Finding] = set()
    unique = []
    for f in findings:
        if f not in seen:
            seen.add(f)
            unique.append(f)
    return tuple(sorted(unique, key=lambda f: _RANK[f.severity]))
