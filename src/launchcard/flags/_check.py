"""Check a launch command against a captured flag spec, offline.

Tokenisation is done by the standard library's argparse, rebuilt from the
spec (``_tokenise``: same option strings, nargs, prefix chars and abbreviation
rule as the engine's parser), with every action replaced by a recorder.  So which token
is a flag, which is its value and which is left over is decided exactly as
the engine's argparse decides it; the recorded values are then judged
against the captured types, choices, JSON schemas and parser registries.
Unlike argparse, which stops at the first problem, every finding is kept.

Two stages are judged, and every finding says which:

* ``argparse``: what the engine's parser (and the launcher's parser-name
  checks that run with it) rejects; comparable one to one with the real
  parser (``tests/test_flags_live.py``).
* ``startup``: what the engine rejects after parsing, when it builds its
  config classes (field bounds such as ``gt=0, le=1``, Literal/enum values,
  JSON config keys and types), from the ``startup`` field types the capture
  recorded per option.

The judging lives beside this module, a concern each: ``_values`` (the values given), ``_unknown``
(flags the release does not know), ``_env`` (environment variables); ``_finding`` is what they report.
"""

from __future__ import annotations

import re
from typing import Any

from launchcard.argv import parse_command, split_entry, split_env
from launchcard.flags._env import check_env
from launchcard.flags._finding import ERROR, INFO, RECIPE, WARNING, Finding, History, spec_ev
from launchcard.flags._tokenise import parse_words
from launchcard.flags._unknown import flag_history, unknown_flag
from launchcard.flags._values import judge_values
from launchcard.flagspec import FlagSpec, Rewritten, rewrite, shipped_index, shipped_spec, shipped_specs, version_key

# Flags that hand `vllm serve` to another project's entry point with its own
# parser (vllm-omni's `vllm serve MODEL --omni`): flag -> that entry point.
# Checked against its captured spec when one is shipped, else not checked.
_ENTRY_POINT_FLAGS = {"vllm": {"--omni": "vllm-omni"}}
# Their console scripts: `vllm-omni serve` without --omni falls through to stock `vllm serve`.
_ENTRY_POINT_SCRIPTS = {"vllm": ("vllm-omni",)}


def split_command(argv: list[str], spec: FlagSpec) -> tuple[str, list[str]]:
    """("server" | "wrapper" | "other", the args after the launcher prefix).

    The entry point is read by ``launchcard.argv`` (one reading for every module);
    a wrapper (``python -m dynamo.vllm``) hands the engine's own flags through,
    plus flags of its own whose parser we have not captured.
    """
    _, engine, _, kind, rest = split_entry(argv, engine=spec.engine)
    if kind == "bare" and rest:
        return "server", rest  # bare flags: assume the server's
    if engine in _ENTRY_POINT_SCRIPTS.get(spec.engine, ()) and rest[:1] == ["serve"]:
        return "server", rest[1:]
    if engine != spec.engine or kind not in ("serve", "module", "wrapper"):
        return "other", rest
    return ("wrapper" if kind == "wrapper" else "server"), rest


_REWRITTEN: dict[tuple[tuple[str, ...], str], Rewritten] = {}


def _rewritten(args: list[str], dialect: str) -> Rewritten:
    """``rewrite`` once per command and dialect (not once per release); callers only read the result."""
    key = (tuple(args), dialect)
    done = _REWRITTEN.get(key)
    if done is None:
        if len(_REWRITTEN) > 20000:
            _REWRITTEN.clear()
        done = _REWRITTEN[key] = rewrite(args, dialect)
    return done


def _parse_problem(flag: str, message: str) -> tuple[str, str, str]:
    """(flag, message, concrete fix) for a structural argparse error."""
    later = "; later flags were not checked"
    ambiguous = re.match(r"ambiguous option: (\S+?)(?:=\S*)? could match (.+)$", message)
    if ambiguous:
        return ambiguous.group(1), "ambiguous abbreviation" + later, "spell out one of: " + ambiguous.group(2)
    primary = flag.split("/", 1)[0]
    if "expected" in message and "argument" in message:
        return primary, message + later, f"give a value after {primary}"
    return primary, message + later, "fix this argument as the message says, then re-check"


def _entry_point(args: list[str], spec: FlagSpec) -> tuple[str, str] | None:
    """(flag, entry point) when a flag hands the command to another project's parser."""
    for flag, entry in _ENTRY_POINT_FLAGS.get(spec.engine, {}).items():
        if flag not in spec.by_flag and any(a == flag or a.startswith(flag + "=") for a in args):
            return flag, entry
    return None


# ---------------------------------------------------------------- main


def check_with_spec(
    argv: list[str], spec: FlagSpec, history: History | None = None, env: dict[str, str] | None = None,
    suggest: bool = True,
) -> list[Finding]:
    """Findings for ``argv`` against ``spec``.

    Without ``history``, a shipped spec's unknown flags are judged against the
    flags' release ranges over every shipped spec of the engine (removed in X,
    use Y / not yet in X, added in Z).  ``env`` (plus the command's own leading
    ``VAR=value`` words) is checked against the release's environment registry.  ``suggest=False`` leaves
    the closest spelling of an unknown flag out of its fix (same findings otherwise: what a verdict needs).
    """
    key = (tuple(argv), spec.engine, spec.version, spec.source, tuple(sorted((env or {}).items())), suggest)
    # .get, not `in` then [ ]: another thread (the web server's pool) may clear the memo in between
    hit = _MEMO.get(key) if history is None and spec.source.startswith("launchcard/data") else None
    if hit is not None:
        return list(hit)  # shipped specs never change within a process: same command, same findings
    findings = _check_with_spec(argv, spec, history, env, suggest)
    if history is None and spec.source.startswith("launchcard/data"):
        if len(_MEMO) > 20000:
            _MEMO.clear()
        _MEMO[key] = tuple(findings)
    return findings


_MEMO: dict[tuple[Any, ...], tuple[Finding, ...]] = {}


def _check_with_spec(
    argv: list[str], spec: FlagSpec, history: History | None, env: dict[str, str] | None, suggest: bool = True
) -> list[Finding]:
    findings: list[Finding] = []
    shipped = spec.source.startswith("launchcard/data")
    use_ranges = history is None and shipped
    kind, args = split_command(argv, spec)
    if kind != "other":
        findings += check_env({**split_env(argv)[0], **(env or {})}, spec, shipped)
    if kind == "other":
        program = " ".join(argv[:3]) if argv else "(empty)"
        return [Finding(WARNING, "not-a-server-command", program, f"not a {spec.engine} server command; not checked",
                        f"check only `{spec.engine} serve`-style commands",
                        evidence=spec_ev(spec, "command_prefix " + " ".join(spec.command_prefix)))]
    handoff = _entry_point(args, spec) if kind == "server" else None
    if handoff is not None:
        flag, entry = handoff
        if entry in shipped_index():
            return check_with_spec([*spec.command_prefix, *[a for a in args if a != flag]], shipped_spec(entry),
                                   suggest=suggest)
        return [Finding(INFO, "not-checked", flag, f"not checked: {entry} entry point parser not captured "
                        f"({flag} makes `{' '.join(spec.command_prefix)}` run {entry}'s own server)",
                        f"capture {entry}'s parser to check this command, or check it with `vllm serve --omni --help`"
                        if flag == "--omni" else f"capture {entry}'s parser to check this command",
                        evidence=spec_ev(spec, f"options (no {flag}); no captured {entry} spec"))]
    rw = _rewritten(args, spec.dialect)
    findings += [Finding(ERROR, "parse", flag, msg, fix, evidence=spec_ev(spec, f"dialect {spec.dialect}"))
                 for flag, msg, fix in rw.problems]
    if rw.config_file is not None:
        findings.append(Finding(WARNING, "config-file", "--config", f"options in {rw.config_file!r} are not checked",
                                "check that file separately", value=rw.config_file,
                                evidence=spec_ev(spec, f"dialect {spec.dialect}")))
    for key in rw.duplicate_keys:
        if "." in key:
            findings.append(Finding(WARNING, "duplicate", key, "dotted key given twice; the engine keeps the last",
                                    "give it once", evidence=spec_ev(spec, f"dialect {spec.dialect}")))
    parsed = parse_words(spec, rw.args)
    if parsed.stopped is not None:
        findings.append(Finding(ERROR, "parse", *_parse_problem(*parsed.stopped), evidence=spec_ev(spec, "options")))
    extras = parsed.extras
    for given, full in dict.fromkeys(parsed.expanded):
        findings.append(Finding(WARNING, "abbreviation", given, f"argparse expands this abbreviation to {full}",
                                f"spell it out: {full} (a future option with the same prefix would make it ambiguous)",
                                evidence=spec_ev(spec, "allow_abbrev=true")))
    previous_unknown = False
    for tok in extras:
        if tok.startswith(spec.prefix_chars[0]) and len(tok) > 1 and not re.match(r"^-\d", tok):
            if history is None:
                history = flag_history(spec.engine) if spec.source.startswith("launchcard/data") else {}
            at = extras.index(tok)
            after = extras[at + 1] if at + 1 < len(extras) else None
            found = unknown_flag(tok, spec, history, use_ranges,
                                  after if after is not None and not after.startswith(spec.prefix_chars[0]) else None,
                                  suggest)
            if kind == "wrapper" and found.rule == "unknown-flag":
                # e.g. dynamo.vllm adds its own flags; its parser is not captured
                found = Finding(WARNING, "wrapper-flag", found.flag,
                                f"not a {spec.engine} {spec.version} flag; may belong to the wrapper ({argv[2]})",
                                found.fix, evidence=found.evidence)
            findings.append(found)
            previous_unknown = True
        elif not previous_unknown:
            findings.append(Finding(ERROR, "extra-positional", tok, "unexpected positional argument",
                                    "remove it or attach it to its flag", value=tok,
                                    evidence=spec_ev(spec, "positionals")))
        else:
            previous_unknown = False  # the unknown flag's value; already reported
    findings += judge_values(list(parsed.seen), spec, rw.dotted)
    return findings


def check_argv(
    argv: list[str],
    engine: str = "vllm",
    version: str | None = "0.32.0",
    min_version: str | None = None,
    nightly_required: bool = False,
    env: dict[str, str] | None = None,
    suggest: bool = True,
) -> list[Finding]:
    """Findings for one launch command against the shipped spec of engine+version.

    ``argv`` may include the launcher prefix (``vllm serve``).  ``min_version``
    is the recipe's minimum engine version; ``nightly_required`` marks a recipe
    that needs a nightly build.  Raises InputError for an uncaptured version.
    """
    spec = shipped_spec(engine, version)
    findings = check_with_spec(argv, spec, env=env, suggest=suggest)
    if min_version:
        findings += min_version_findings(argv, engine, min_version)
    if min_version and version_key(spec.version) < version_key(min_version):
        findings.insert(0, Finding(ERROR, "engine-too-old", f"{engine} {spec.version}",
                                   f"below the recipe's minimum {min_version}", f"use {engine} >= {min_version}",
                                   stage=RECIPE, value=spec.version, evidence=spec_ev(spec, "version")))
    if nightly_required and not spec.nightly:
        findings.insert(0, Finding(ERROR, "needs-nightly", f"{engine} {spec.version}",
                                   "the recipe needs a nightly build but this is a release",
                                   "use the nightly image/wheel", stage=RECIPE, value=spec.version,
                                   evidence=spec_ev(spec, "nightly=false")))
    return findings


def min_version_findings(argv: list[str], engine: str, min_version: str) -> list[Finding]:
    """A flag added after the recipe's declared minimum (the first captured release at or above it lacks it)."""
    from launchcard.flags._ranges import flag_ranges

    if not re.match(r"^v?\d", min_version):
        return []  # "nightly" and the like: no release to compare with
    captured = [v for v in shipped_index().get(engine, ()) if version_key(v) >= version_key(min_version)]
    if not captured:
        return []
    base, ranges = captured[0], flag_ranges(engine)
    out: list[Finding] = []
    written = (occ.written for occ in parse_command(argv, engine=engine, version=base).occurrences)
    for word in dict.fromkeys(w for w in written if w.startswith("--")):
        r = ranges.get(word)
        added = r.where_added(base) if r is not None and not r.accepted_in(base) else None
        if r is None or added is None:
            continue
        out.append(Finding(WARNING, "min-version-too-low", word,
                           f"only accepted from {engine} {added}, but the recipe's minimum is {min_version} "
                           f"({base} rejects it)", f"raise the minimum to {added}", stage=RECIPE, value=min_version,
                           evidence=f"{engine} specs {base} and {added}: options"))
    return out


def has_errors(findings: list[Finding], stage: str | None = None) -> bool:
    """Any error (of ``stage`` only, when given: "argparse" is what the engine's parser itself rejects)."""
    return any(f.severity == ERROR and (stage is None or f.stage == stage) for f in findings)


def verdict(findings: list[Finding], stage: str | None = None) -> str:
    """"fail" on any error, "n/a" when the command is not the engine's server or not checked, else "pass"."""
    if has_errors(findings, stage):
        return "fail"
    if any(f.rule in ("not-a-server-command", "not-checked") for f in findings):
        return "n/a"
    return "pass"


def verdicts(env_argv: list[str], engine: str) -> dict[str, str]:
    """version -> "pass" | "fail" | "n/a" for every captured version of ``engine``.

    Empty when no spec of ``engine`` was captured (e.g. trtllm).  "n/a" marks
    a command that is not the engine's server (a router, a benchmark...) or
    one handed to an entry point whose parser is not captured (vllm-omni).
    """
    return {s.version: verdict(check_argv(list(env_argv), engine, s.version, suggest=False))
            for s in shipped_specs(engine)}
