"""Drift: every card environment against every captured release of its engine.

For each launch command (one card environment) and each captured release:
pass / fail / n/a from ``check_with_spec`` (argparse and start-up stages;
environment-variable findings are warnings and never fail a command), the
first release that breaks a command that worked before (and why: the error
findings there), the first release that accepts it, and the recipe's own
version claims (``min_vllm_version``, ``nightly_required``) against the flags'
release ranges.  A per-release summary counts failing and newly broken
commands and models, with the top reasons.

Library only: nothing here prints.  Standard library plus launchcard.flags.
"""

from __future__ import annotations

import collections
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from launchcard.flags._check import check_with_spec, min_version_findings, split_command, verdict
from launchcard.flags._env import check_env
from launchcard.flags._finding import ERROR, RECIPE, Finding, format_finding
from launchcard.flagspec import shipped_index, shipped_spec, shipped_specs, version_key


@dataclass(frozen=True, slots=True)
class Command:
    """One card environment to judge: the launch command and where it comes from."""

    model: str
    engine: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    source: str = ""  # source kind: vllm-recipes, sglang-cookbook, provider-preset, dynamo ...
    role: str = "single"
    where: str = ""  # the source URL or path
    min_version: str | None = None  # the recipe's declared minimum engine version
    nightly_required: bool = False

    @property
    def key(self) -> str:
        """Stable id of the command (model, source, role, argv, env)."""
        text = json.dumps([self.model, self.source, self.role, self.argv, self.env])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class CommandDrift:
    """One command across every captured release of its engine."""

    command: Command
    verdicts: tuple[tuple[str, str], ...]  # (release, pass|fail|n/a), ascending
    reasons: tuple[tuple[str, tuple[str, ...]], ...]  # (release, error findings one line each) where it fails
    works_from: str | None  # first captured release that accepts it
    breaks_in: str | None  # first release that fails after one that passed
    recipe_findings: tuple[str, ...] = ()  # min_vllm_version / nightly_required against the flag ranges

    def verdict_at(self, release: str) -> str:
        return dict(self.verdicts).get(release, "n/a")

    def reasons_at(self, release: str) -> tuple[str, ...]:
        return dict(self.reasons).get(release, ())

    @property
    def newest(self) -> str:
        return self.verdicts[-1][1] if self.verdicts else "n/a"

    @property
    def broken_now(self) -> bool:
        """The newest captured release refuses the command."""
        return self.newest == "fail"

    @property
    def pattern(self) -> str:
        """One letter per release, oldest first: P pass, F fail, - not applicable (``FFFPPPFFFF``)."""
        return "".join({"pass": "P", "fail": "F"}.get(v, "-") for _, v in self.verdicts)

    @property
    def broken_spans(self) -> tuple[tuple[str, str, bool], ...]:
        """Every run of failing releases after one that passed: (first, last, runs to the newest release)."""
        out: list[tuple[str, str, bool]] = []
        seen_pass = False
        start: str | None = None
        last = ""
        for r, v in self.verdicts:
            if v == "fail" and seen_pass and start is None:
                start = r
            if v == "fail":
                last = r
            elif start is not None:
                out.append((start, last, False))
                start = None
            seen_pass = seen_pass or v == "pass"
        if start is not None:
            out.append((start, last, True))
        return tuple(out)

    def history(self) -> str:
        """``works from 0.13.0, breaks in 0.16.0 (to 0.18.1), broken again from 0.30.0 to the newest (0.34.0)``."""
        if self.works_from is None:
            return (f"never accepted ({self.verdicts[0][0]} to {self.verdicts[-1][0]})" if self.verdicts
                    else "no release")
        parts = [f"works from {self.works_from}"]
        for i, (first, last, open_end) in enumerate(self.broken_spans):
            lead = "breaks in" if i == 0 else "broken again from"
            end = f" to the newest ({last})" if open_end else (f" (to {last})" if last != first else "")
            parts.append(f"{lead} {first}{end}")
        if self.broken_spans and not self.broken_now:
            parts.append(f"works in the newest ({self.verdicts[-1][0]})")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class ReleaseSummary:
    """How one release treats the whole corpus."""

    engine: str
    release: str
    passing: int
    failing: int
    failing_models: int
    newly_broken: int  # commands that pass in the previous captured release and fail here
    newly_broken_models: int
    top_reasons: tuple[tuple[str, int], ...]  # ("--disable-log-requests [removed-flag]", commands), most first
    not_applicable: int = 0


@dataclass(frozen=True)
class DriftReport:
    engine: str
    releases: tuple[str, ...]
    commands: tuple[CommandDrift, ...]
    summaries: tuple[ReleaseSummary, ...]
    seconds: float = 0.0
    problems: tuple[str, ...] = field(default=())

    def summary(self, release: str) -> ReleaseSummary | None:
        return next((s for s in self.summaries if s.release == release), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "releases": list(self.releases),
            "seconds": round(self.seconds, 2),
            "summaries": [{
                "release": s.release, "passing": s.passing, "failing": s.failing,
                "failing_models": s.failing_models, "newly_broken": s.newly_broken,
                "newly_broken_models": s.newly_broken_models, "not_applicable": s.not_applicable,
                "top_reasons": [{"reason": r, "commands": n} for r, n in s.top_reasons],
            } for s in self.summaries],
            "commands": [{
                "key": d.command.key, "model": d.command.model, "source": d.command.source,
                "role": d.command.role, "where": d.command.where, "argv": list(d.command.argv),
                "min_version": d.command.min_version, "nightly_required": d.command.nightly_required,
                "newest": d.newest, "works_from": d.works_from, "breaks_in": d.breaks_in,
                "broken_now": d.broken_now, "pattern": d.pattern,
                "broken_spans": [{"from": a, "to": b, "to_newest": c} for a, b, c in d.broken_spans],
                "why": list(d.reasons_at(d.breaks_in)) if d.breaks_in else [],
                "why_now": list(d.reasons_at(d.verdicts[-1][0])) if d.broken_now else [],
                "verdicts": dict(d.verdicts),
                "recipe": list(d.recipe_findings),
            } for d in self.commands],
            "problems": list(self.problems),
        }


def _reason(f: Finding) -> str:
    return f"{f.flag} [{f.rule}]"


def drift_command(cmd: Command, releases: Sequence[str], cache: dict[Any, Any] | None = None) -> CommandDrift:
    """``cmd`` against each of ``releases`` (captured releases of its engine)."""
    cache = {} if cache is None else cache
    verdicts: list[tuple[str, str]] = []
    reasons: list[tuple[str, tuple[str, ...]]] = []
    env = dict(cmd.env)
    for release in releases:
        k = (cmd.engine, release, cmd.argv, cmd.env)
        if k not in cache:
            spec = shipped_spec(cmd.engine, release)
            # the env-less check is what card building already ran (memoised); env findings come on top
            findings = check_with_spec(list(cmd.argv), spec)
            if env and split_command(list(cmd.argv), spec)[0] != "other":
                findings += check_env(env, spec)
            errors = tuple(format_finding(f) for f in findings if f.severity == ERROR)
            cache[k] = (verdict(findings), errors, tuple(_reason(f) for f in findings if f.severity == ERROR))
        v, errors, _ = cache[k]
        verdicts.append((release, v))
        if v == "fail":
            reasons.append((release, errors))
    works_from = next((r for r, v in verdicts if v == "pass"), None)
    breaks_in = None
    seen_pass = False
    for r, v in verdicts:
        seen_pass = seen_pass or v == "pass"
        if seen_pass and v == "fail":
            breaks_in = r
            break
    return CommandDrift(cmd, tuple(verdicts), tuple(reasons), works_from, breaks_in,
                        tuple(_recipe_claims(cmd, verdicts, works_from)))


def _recipe_claims(cmd: Command, verdicts: list[tuple[str, str]], works_from: str | None) -> list[str]:
    """The recipe's minimum and nightly claims against the captured releases."""
    out: list[str] = []
    if cmd.min_version:
        flagged = [format_finding(f) for f in min_version_findings(list(cmd.argv), cmd.engine, cmd.min_version)]
        out += flagged
        at_min = next((v for r, v in verdicts if version_key(r) >= version_key(cmd.min_version)), None)
        if not flagged and at_min == "fail" and works_from and version_key(works_from) > version_key(cmd.min_version):
            out.append(format_finding(Finding(
                "warning", "min-version-too-low", f"{cmd.engine} {cmd.min_version}",
                f"the recipe's minimum, but the first captured release that accepts the command is {works_from}",
                f"raise the minimum to {works_from}", stage=RECIPE, value=cmd.min_version,
                evidence=f"{cmd.engine} specs: drift verdicts")))
    if cmd.nightly_required and works_from is not None:
        out.append(format_finding(Finding(
            "info", "nightly-not-needed", f"{cmd.engine} {works_from}",
            f"the recipe requires a nightly build, but release {works_from} accepts every flag of the command",
            f"consider min_vllm_version {works_from} instead of nightly_required (parser-level only)",
            stage=RECIPE, value=works_from, evidence=f"{cmd.engine} {works_from} spec: options")))
    return out


def summarise(engine: str, drifts: Sequence[CommandDrift], releases: Sequence[str],
              top: int = 5) -> tuple[ReleaseSummary, ...]:
    out: list[ReleaseSummary] = []
    previous: str | None = None
    for release in releases:
        counts: collections.Counter[str] = collections.Counter()
        failing = [d for d in drifts if d.verdict_at(release) == "fail"]
        broken = [d for d in failing if previous is not None and d.verdict_at(previous) == "pass"]
        for d in failing:
            for reason in dict.fromkeys(_short(line) for line in d.reasons_at(release)):
                counts[reason] += 1
        out.append(ReleaseSummary(
            engine, release,
            passing=sum(d.verdict_at(release) == "pass" for d in drifts),
            failing=len(failing), failing_models=len({d.command.model for d in failing}),
            newly_broken=len(broken), newly_broken_models=len({d.command.model for d in broken}),
            top_reasons=tuple(counts.most_common(top)),
            not_applicable=sum(d.verdict_at(release) == "n/a" for d in drifts)))
        previous = release
    return tuple(out)


def _short(line: str) -> str:
    """``--flag [rule]`` from a one-line finding (``error: --flag: message [rule]; fix``)."""
    body = line.split(": ", 1)[1] if ": " in line else line
    flag = body.split(": ", 1)[0]
    rule = body.rsplit("[", 1)[1].split("]", 1)[0] if "[" in body else ""
    return f"{flag} [{rule.split(',')[0]}]"


def drift(commands: Iterable[Command], engine: str, releases: Sequence[str] | None = None) -> DriftReport:
    """Every command of ``engine`` against every captured release (or ``releases``)."""
    import time

    start = time.perf_counter()
    captured = shipped_index().get(engine, ())
    chosen = tuple(sorted(releases or captured, key=version_key))
    if len(chosen) > 1:
        shipped_specs(engine)  # every release through the engine's pack: each shared option decoded once
    cache: dict[Any, Any] = {}
    drifts = tuple(drift_command(c, chosen, cache) for c in commands if c.engine == engine)
    summaries = summarise(engine, drifts, chosen)
    return DriftReport(engine, chosen, drifts, summaries, time.perf_counter() - start)


def commands_from_cards(cards: Iterable[Any], recipe_claims: dict[str, tuple[str | None, bool]] | None = None,
                        engines: Sequence[str] = ("vllm", "sglang")) -> list[Command]:
    """Commands of every environment of ``cards`` (LaunchCard objects) whose engine has captured specs.

    ``recipe_claims``: model -> (min_vllm_version, nightly_required) from its vLLM recipe.
    """
    out: list[Command] = []
    claims = recipe_claims or {}
    for card in cards:
        for e in card.envs:
            if e.engine not in engines or not e.argv:
                continue
            recipe_env = e.source.kind == "vllm-recipes"
            minimum, nightly = claims.get(card.model, (None, False)) if recipe_env else (None, False)
            out.append(Command(card.model, e.engine, tuple(e.argv), tuple(sorted(e.env.items())), str(e.source.kind),
                               e.role, e.source.url or e.source.path or "", minimum, nightly))
    return out


def to_markdown(report: DriftReport, limit: int = 40) -> str:
    """Per-release summary table, then each command that breaks (first breaking release and why)."""
    e = report.engine
    lines = [f"# Drift: {e} ({len(report.commands)} commands, {len(report.releases)} captured releases)", "",
             "| release | pass | fail (models) | newly broken (models) | top reasons |", "|---|---|---|---|---|"]
    for s in report.summaries:
        reasons = "; ".join(f"`{r}` ({n})" for r, n in s.top_reasons) or "-"
        lines.append(f"| {s.release} | {s.passing} | {s.failing} ({s.failing_models}) | "
                     f"{s.newly_broken} ({s.newly_broken_models}) | {reasons} |")
    lines += ["", *[summary_line(s) for s in report.summaries if s.newly_broken], ""]
    # every command that broke after working, and every one the newest release refuses (broken today)
    broken = [d for d in report.commands if d.breaks_in or d.broken_now]
    newest = report.releases[-1] if report.releases else "?"
    lines += [f"## Commands that break ({len(broken)}; {sum(d.broken_now for d in broken)} broken in the newest "
              f"release {newest})", "",
              f"Pattern: one letter per captured release, {report.releases[0] if report.releases else '?'} to "
              f"{newest}: P passes, F fails, - not applicable.", ""]
    for d in broken[:limit]:
        c = d.command
        at = d.verdicts[-1][0] if d.broken_now else (d.breaks_in or "")
        lines.append(f"- **{c.model}** ({c.source}, {c.role}) `{d.pattern}`: {d.history()}: "
                     + "; ".join(_short(x) for x in d.reasons_at(at)))
    if len(broken) > limit:
        lines.append(f"- ... {len(broken) - limit} more (see --format json)")
    na = [d for d in report.commands if all(v == "n/a" for _, v in d.verdicts)]
    if na:
        lines += ["", f"## Not applicable ({len(na)}): not {e}'s server, or an entry point whose parser is not "
                      "captured, so no release is checked", ""]
        for d in na[:limit]:
            c = d.command
            lines.append(f"- **{c.model}** ({c.source}, {c.role}): `{' '.join(c.argv[:3])}`")
        if len(na) > limit:
            lines.append(f"- ... {len(na) - limit} more (see --format json)")
    claims = [(d.command.model, x) for d in report.commands for x in d.recipe_findings if not x.startswith("info:")]
    notes = sum(x.startswith("info:") for d in report.commands for x in d.recipe_findings)
    if claims or notes:
        lines += ["", f"## Recipe version claims ({len(claims)})", ""]
        lines += [f"- **{m}**: {x}" for m, x in dict.fromkeys(claims)]
        if notes:
            lines.append(f"- {notes} nightly-only recipe commands are accepted by a captured release's parser "
                         "(info; see --format json)")
    return "\n".join(lines) + "\n"


def summary_line(s: ReleaseSummary) -> str:
    """``vllm 0.34.0 breaks 3 commands in 2 models (vs the previous release): --x [removed-flag] (2), ...``."""
    reasons = ", ".join(f"{r} ({n})" for r, n in s.top_reasons) or "no error findings"
    return (f"{s.engine} {s.release} breaks {s.newly_broken} commands in {s.newly_broken_models} models "
            f"(fails {s.failing} in {s.failing_models}): {reasons}")
