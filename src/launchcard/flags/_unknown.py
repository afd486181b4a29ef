"""Judge a flag the release's parser does not know: renamed, removed, not yet added, or misspelt.

The evidence is the shipped specs: each flag's range of releases (``_ranges``), the diff of consecutive
captured specs (:func:`derive_history`), and a successor only where the engine itself names one.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

from launchcard.flags._close import closest
from launchcard.flags._finding import ERROR, Finding, History, spec_ev
from launchcard.flags._successors import no_successor, successor
from launchcard.flagspec import FlagSpec, Option, shipped_spec, shipped_specs, version_key


def _suggest(flag: str, spec: FlagSpec, fuzzy: bool = True) -> str | None:
    name = flag.split("=", 1)[0]
    base = name.lstrip(spec.prefix_chars)
    candidates = []
    # negation synonyms first: --disable-x is spelled --no-enable-x by BooleanOptionalAction
    for old, new in (("disable-", "no-enable-"), ("disable-", "no-"), ("no-", "disable-"), ("enable-", "no-disable-"),
                     ("no-", "no-enable-"), ("disable-", "enable-")):
        if base.startswith(old):
            candidates.append("--" + new + base[len(old) :])
    candidates += ["--" + base.replace("_", "-"), "-" + base]  # --tp -> -tp
    for c in candidates:
        if c in spec.by_flag and c != name:
            return c
    if not fuzzy:
        return None
    return closest(name, (f for f in spec.by_flag if f.startswith("--")))


def derive_history(specs: list[FlagSpec]) -> History:
    """flag -> (change, version, replacement), by diffing consecutive captured specs.

    change is "removed", "renamed" or "added".  A removed flag counts as
    renamed only when the next version stores into the same dest with the same
    action (the engine kept the field and renamed its flag); a similar name or
    help line is no evidence.
    """
    ordered = sorted(specs, key=lambda s: version_key(s.version))
    history: History = {}
    for old, new in itertools.pairwise(ordered):
        added = [f for f in new.by_flag if f not in old.by_flag]
        for flag, o in old.by_flag.items():
            if flag in new.by_flag:
                continue
            target = None
            same = new.by_dest.get(o.dest)
            if same is not None and flag not in same.flags and same.action == o.action and same.type == o.type:
                target = same.name if not _negative(o, flag) else next(
                    (f for f in same.flags if _negative(same, f)), None)
            history[flag] = ("renamed", new.version, target) if target else ("removed", new.version, None)
        for flag in added:
            # a flag that comes back after a removal is simply available again
            history[flag] = ("added", new.version, None)
    return history


@functools.lru_cache(maxsize=8)
def flag_history(engine: str) -> History:
    """History of ``engine``'s flags across the shipped specs."""
    return derive_history(list(shipped_specs(engine)))


def _ranged(name: str, spec: FlagSpec, value: str | None = None) -> Finding | None:
    """removed in X (use Y) / not yet in X (added in Z), from the flag's range over the shipped specs.

    A successor is named only where the engine names one (``_successors``), quoting that evidence;
    otherwise the finding says the engine names none.
    """
    from launchcard.flags._ranges import flag_ranges

    r = flag_ranges(spec.engine).get(name)
    if r is None or r.accepted_in(spec.version):
        return None
    e = spec.engine
    ev = f"{e} specs {r.first}..{r.last}: options"
    removed, added = r.where_removed(spec.version), r.where_added(spec.version)
    if removed is not None:
        before = [v for v in r.versions if version_key(v) < version_key(removed)]
        text = f"removed in {e} {removed} (last accepted in {before[-1] if before else r.last}; accepted in {r.span()})"
        s = successor(e, name)
        if value is None and s is not None and s.use and "VALUE" in s.use:
            # given bare: a switch in the release that added it (--guided-decoding-disable-fallback), so on
            first = _option_in(e, name, r.first)
            if first is not None and first.nargs == 0:
                value = "false" if _negative(first, name) else "true"
        if s is not None and s.use:
            fix = f"use {s.render(value)}"
            if s.flag not in spec.by_flag:
                fix += f" (named by {e} {s.evidence.get('release', '')}; not accepted by {e} {spec.version} either)"
            return Finding(ERROR, "renamed-flag", name, text, fix, value=spec.version,
                           evidence=f"{s.quote()}; {ev}")
        if s is not None and s.per_value:
            return Finding(ERROR, "removed-flag", name, text, f"drop it; {s.several(value)}",
                           value=spec.version, evidence=f"{s.quote()}; {ev}")
        return Finding(ERROR, "removed-flag", name, f"{text}; {no_successor(e)}", "drop it",
                       value=spec.version, evidence=ev)
    if added is not None:
        older = _same_switch(name, spec, added)  # the same switch spelled as this release spells it
        return Finding(ERROR, "too-new-flag", name,
                       f"not yet in {e} {spec.version} (added in {added}; accepted in {r.span()})",
                       f"use {e} >= {added}" + (f", or {older} in {spec.version}" if older else " or drop the flag"),
                       value=spec.version, evidence=ev)
    return None


def _option_in(engine: str, name: str, version: str) -> Option | None:
    """``name`` as shipped release ``version`` of ``engine`` parses it (a release of the flag's own range)."""
    return shipped_spec(engine, version).by_flag.get(name)


def _negative(o: Option, flag: str) -> bool:
    """Whether ``flag`` is the switch's off spelling (``--no-x``, a recorded negation, store_false)."""
    return flag in o.negation or o.action == "store_false" or (
        o.action == "bool_pair" and flag.startswith("--no-") and flag != o.flags[0])


def _same_switch(name: str, spec: FlagSpec, added: str) -> str | None:
    """The spelling in ``spec`` of the option ``name`` sets in release ``added``: same field, same sense."""
    older = _suggest(name, spec, fuzzy=False)
    if older is None:
        return None
    try:
        newer = shipped_spec(spec.engine, added).by_flag.get(name)
    except (OSError, ValueError, KeyError):
        return None
    mine = spec.by_flag[older]
    if newer is None or newer.dest != mine.dest or _negative(newer, name) != _negative(mine, older):
        return None
    return older


_UNKNOWN: dict[tuple[Any, ...], tuple[FlagSpec, History, Finding]] = {}


def unknown_flag(flag: str, spec: FlagSpec, history: History, ranges: bool, value: str | None,
                  suggest: bool = True) -> Finding:
    """:func:`_unknown`, kept per spec and history: the same unknown flag recurs across a corpus's commands."""
    key = (flag, id(spec), id(history), ranges, value, suggest)
    hit = _UNKNOWN.get(key)
    if hit is not None and hit[0] is spec and hit[1] is history:
        return hit[2]
    found = _unknown(flag, spec, history, ranges, value, suggest)
    if len(_UNKNOWN) > 20000:
        _UNKNOWN.clear()
    _UNKNOWN[key] = (spec, history, found)
    return found


def _unknown(flag: str, spec: FlagSpec, history: History, ranges: bool = False, value: str | None = None,
             suggest: bool = True) -> Finding:
    name = flag.split("=", 1)[0]
    if " " in name and name.split(" ", 1)[0] in spec.by_flag:
        head, rest = name.split(" ", 1)
        return Finding(ERROR, "one-token", name,
                       "flag and value are one argv item, so the parser sees an unknown positional",
                       f"split it into two items: {head} {rest}", value=rest,
                       evidence=spec_ev(spec, f"option {head} takes its value as the next item"))
    given = flag.split("=", 1)[1] if "=" in flag else value
    ranged = _ranged(name, spec, given) if ranges else None
    if ranged is not None:
        return ranged
    change = history.get(name)
    if change:
        kind, at, target = change
        if kind == "added" and version_key(at) > version_key(spec.version):
            return Finding(ERROR, "too-new-flag", name,
                           f"only exists from {spec.engine} {at}; {spec.version} rejects it",
                           f"use {spec.engine} >= {at} or drop the flag",
                           evidence=f"{spec.engine} {spec.version} and {at} specs: options")
        if kind in ("renamed", "removed") and version_key(at) <= version_key(spec.version):
            ev = f"{spec.engine} {at} spec vs the one before: options"
            if target:
                return Finding(ERROR, "renamed-flag", name, f"renamed in {spec.engine} {at}", f"use {target}",
                               evidence=ev)
            return Finding(ERROR, "removed-flag", name, f"removed in {spec.engine} {at}", "drop it", evidence=ev)
    # without ``suggest`` (a verdict reads only rule and severity) the closest spelling is not looked for
    suggestion = _suggest(name, spec) if suggest else None
    prefix = " ".join(spec.command_prefix) or spec.engine
    fix = f"did you mean {suggestion}?" if suggestion else f"see `{prefix} --help`"
    return Finding(ERROR, "unknown-flag", name, f"{spec.engine} {spec.version} has no such option", fix,
                   evidence=spec_ev(spec, "options"))
