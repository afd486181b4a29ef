"""Typed results of `launchcard verify`."""

from __future__ import annotations

from typing import Literal

from launchcard.card import Frozen

Status = Literal["pass", "fail", "skipped"]


class CheckEvidence(Frozen):
    """What was sent, what came back, and the part of it that decided."""

    request: str
    status: int | None = None
    decided_by: str | None = None


class CheckResult(Frozen):
    name: str
    status: Status
    reason: str
    evidence: CheckEvidence | None = None
    seconds: float | None = None


class Expect(Frozen):
    """Which optional features the plan enables; None = not known, so skipped."""

    tools: bool | None = None
    reasoning: bool | None = None
    vision: bool | None = None

    @classmethod
    def from_argv(cls, argv: tuple[str, ...] | list[str], *, vision: bool | None = None) -> Expect:
        """Read the parsers a vLLM command line enables (absent flag = disabled), as the client calls do."""
        from launchcard.clients import capabilities_from_argv

        caps = capabilities_from_argv(argv, engine="vllm")
        return cls(tools=caps.tools, reasoning=caps.reasoning, vision=vision)

    def merged(self, other: Expect) -> Expect:
        """Explicit values in ``other`` win over ours."""
        return Expect(**{k: (getattr(other, k) if getattr(other, k) is not None else getattr(self, k))
                         for k in ("tools", "reasoning", "vision")})


class VerifyReport(Frozen):
    endpoint: str
    model: str | None
    max_model_len: int | None
    checks: tuple[CheckResult, ...]

    @property
    def ok(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    def counts(self) -> dict[str, int]:
        out = {"pass": 0, "fail": 0, "skipped": 0}
        for c in self.checks:
            out[c.status] += 1
        return out
