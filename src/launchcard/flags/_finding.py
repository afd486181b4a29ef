"""What a flag check reports: :class:`Finding`, its severities and stages, and its one-line form.

Every judging module of the package (values, unknown flags, environment) builds these, so they
sit below all of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from launchcard.flagspec import FlagSpec

ERROR, WARNING, INFO = "error", "warning", "info"
ARGPARSE, STARTUP, RECIPE, ENV = "argparse", "startup", "recipe", "env"

History = dict[str, tuple[str, str, "str | None"]]


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem with one flag: the rule it breaks, the bad value, the evidence and how to fix it."""

    severity: str  # "error" | "warning" | "info"
    rule: str  # unknown-flag, removed-flag, bad-choice, bad-json, bad-type, out-of-range, abbreviation, ...
    flag: str
    message: str
    fix: str
    stage: str = ARGPARSE  # "argparse" | "startup" | "recipe" (engine version rules) | "env" (environment variables)
    value: str | None = None  # the bad value as given (None when the flag itself is the problem)
    evidence: str = ""  # "vllm 0.32.0 spec: CacheConfig.gpu_memory_utilization (gt=0, le=1)"

    @property
    def code(self) -> str:
        """The rule id (the name the plan-verdict findings use)."""
        return self.rule

    def one_line(self) -> str:
        return format_finding(self)


def format_finding(f: Finding) -> str:
    """``error: --flag: what is wrong [rule-id]; fix (evidence: ...)`` on one line."""
    stage = "" if f.stage == ARGPARSE else f", {f.stage}"
    text = f"{f.severity}: {f.flag}: {f.message} [{f.rule}{stage}]"
    if f.fix:
        text += f"; {f.fix}"
    if f.evidence:
        text += f" (evidence: {f.evidence})"
    return " ".join(text.split())


def spec_ev(spec: FlagSpec, detail: str) -> str:
    """Evidence that names the captured spec: ``vllm 0.32.0 spec: <detail>``."""
    return f"{spec.engine} {spec.version} spec: {detail}"
