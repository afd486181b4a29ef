"""Release ranges of flags and environment variables, derived from the shipped specs.

For every flag (and every variable in vLLM's ``vllm.envs`` registry) of one
engine: the releases whose captured parser accepts it (first, last, and every
one in between that does), when it became deprecated (the parser's
``deprecated=`` or definite help wording) and its successor where the engine
names one (``flags/_successors.py``: read from the engine's own source, help
and parser by ``scripts/engine_successors.py``; never from name likeness).

Standard library only (``launchcard check`` start-up).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launchcard import atomicfile
from launchcard.flagspec import FlagSpec, packaged_json, shipped_index, shipped_specs, version_key


@dataclass(frozen=True, slots=True)
class Range:
    """Which captured releases of one engine accept one flag (or read one environment variable)."""

    name: str
    engine: str
    versions: tuple[str, ...]  # captured releases that accept it, ascending
    first: str
    last: str
    removed_in: str | None  # first captured release after ``last`` (None: still there in the newest)
    deprecated_from: str | None  # first captured release whose parser/help deprecates it
    successor: str | None  # the spelling to use instead, where one exists
    captured: tuple[str, ...] = ()  # every captured release of the engine (context for "since the oldest")

    def accepted_in(self, version: str) -> bool:
        return version in self.versions

    def span(self) -> str:
        """Runs of captured releases: ``0.10.2-0.16.0, 0.33.0+``.

        ``<=X`` runs from the oldest captured release, ``X+`` to the newest.
        """
        if not self.captured:
            return f"{self.first}-{self.last}" if self.first != self.last else self.first
        idx = sorted(self.captured.index(v) for v in self.versions if v in self.captured)
        runs: list[list[int]] = []
        for i in idx:
            if runs and i == runs[-1][1] + 1:
                runs[-1][1] = i
            else:
                runs.append([i, i])
        end = len(self.captured) - 1
        out = []
        for lo, hi in runs:
            a, b = self.captured[lo], self.captured[hi]
            out.append("all captured" if (lo, hi) == (0, end) else f"<={b}" if lo == 0 else f"{a}+" if hi == end
                       else a if lo == hi else f"{a}-{b}")
        return ", ".join(out)

    def where_added(self, version: str) -> str | None:
        """The first captured release after ``version`` that accepts it."""
        later = [v for v in self.versions if version_key(v) > version_key(version)]
        return later[0] if later else None

    def where_removed(self, version: str) -> str | None:
        """The first captured release, at or before ``version``, after the last one before it that accepted it."""
        earlier = [v for v in self.versions if version_key(v) < version_key(version)]
        if not earlier:
            return None
        after = [v for v in self.captured if version_key(earlier[-1]) < version_key(v) <= version_key(version)]
        return after[0] if after else None


def _successor(flag: str, last: FlagSpec, gone: FlagSpec | None) -> str | None:
    """What the engine itself names instead of ``flag`` (``data/flags/successors.json``, with its evidence)."""
    from launchcard.flags._successors import successor_use

    return successor_use(last.engine, flag)


def derive_ranges(specs: list[FlagSpec]) -> dict[str, Range]:
    """flag -> Range over ``specs`` (one engine's captured releases, any order)."""
    ordered = sorted(specs, key=lambda s: version_key(s.version))
    captured = tuple(s.version for s in ordered)
    seen: dict[str, list[FlagSpec]] = {}
    deprecated: dict[str, str] = {}
    for spec in ordered:
        for flag, o in spec.by_flag.items():
            seen.setdefault(flag, []).append(spec)
            if o.deprecated and flag not in deprecated:
                deprecated[flag] = spec.version
    out: dict[str, Range] = {}
    for flag, present in seen.items():
        last = present[-1]
        after = [s for s in ordered if version_key(s.version) > version_key(last.version)]
        gone = after[0] if after else None
        out[flag] = Range(flag, ordered[0].engine, tuple(s.version for s in present), present[0].version,
                          last.version, gone.version if gone else None, deprecated.get(flag),
                          _successor(flag, last, gone), captured)
    return out


def derive_env_ranges(specs: list[FlagSpec]) -> dict[str, Range]:
    """environment variable -> Range of the releases whose registry reads it (specs with a captured registry only)."""
    ordered = sorted((s for s in specs if s.envs), key=lambda s: version_key(s.version))
    captured = tuple(s.version for s in ordered)
    seen: dict[str, list[str]] = {}
    for spec in ordered:
        for name in spec.envs:
            seen.setdefault(name, []).append(spec.version)
    out: dict[str, Range] = {}
    for name, versions in seen.items():
        after = [v for v in captured if version_key(v) > version_key(versions[-1])]
        out[name] = Range(name, ordered[0].engine, tuple(versions), versions[0], versions[-1],
                          after[0] if after else None, None, None, captured)
    return out


@functools.cache
def flag_ranges(engine: str) -> Mapping[str, Range]:
    """Ranges of every flag of ``engine`` across the shipped specs (from the shipped index when current)."""
    index = _index(engine)
    if index is not None:
        return _from_index(engine, index, "flags")
    return derive_ranges(list(shipped_specs(engine)))


@functools.cache
def env_ranges(engine: str) -> Mapping[str, Range]:
    """Ranges of every environment variable ``engine``'s captured registries read."""
    index = _index(engine)
    if index is not None:
        return _from_index(engine, index, "envs")
    return derive_env_ranges(list(shipped_specs(engine)))


# ---------------------------------------------------------------- shipped index
# data/flags/index/<engine>.json: every range, so that `check` on an unknown flag reads one small file
# instead of every captured spec.  Written by scripts/capture_flags.py after each capture; used only
# when it lists exactly the shipped releases (tests compare it with the derived ranges).


def index_data(engine: str) -> dict[str, Any]:
    """The ranges of ``engine`` as the shipped index stores them (derived from the specs)."""
    specs = list(shipped_specs(engine))
    captured = [s.version for s in specs]
    env_captured = [s.version for s in specs if s.envs]

    def rows(ranges: dict[str, Range], pool: list[str]) -> dict[str, list[Any]]:
        return {n: [[pool.index(v) for v in r.versions], r.deprecated_from, r.successor]
                for n, r in sorted(ranges.items())}

    return {"engine": engine, "captured": captured, "env_captured": env_captured,
            "flags": rows(derive_ranges(specs), captured), "envs": rows(derive_env_ranges(specs), env_captured)}


def write_index(engine: str, folder: Path) -> Path:
    """Write ``folder/<engine>.json`` (``folder`` = src/launchcard/data/flags/index)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{engine}.json"
    atomicfile.write_text(out, json.dumps(index_data(engine), separators=(",", ":"), sort_keys=True) + "\n")
    return out


def _index(engine: str) -> dict[str, Any] | None:
    raw = packaged_json("flags", "index", f"{engine}.json")
    return raw if raw is not None and raw.get("captured") == list(shipped_index().get(engine, ())) else None


class _IndexRanges(Mapping[str, Range]):
    """The ranges the shipped index holds, each built on first lookup: a command asks about a few dozen of
    several thousand flags, and building them all was most of a cold ``card``'s flag checks."""

    def __init__(self, engine: str, index: dict[str, Any], kind: str) -> None:
        self._engine = engine
        self._rows: dict[str, Any] = index[kind]
        self._pool = tuple(index["captured"] if kind == "flags" else index["env_captured"])
        self._built: dict[str, Range] = {}

    def __getitem__(self, name: str) -> Range:
        r = self._built.get(name)
        if r is None:
            idx, deprecated, successor = self._rows[name]  # KeyError: not a flag of any shipped release
            pool = self._pool
            versions = tuple(pool[i] for i in idx)
            after = pool[idx[-1] + 1] if idx[-1] + 1 < len(pool) else None
            r = self._built[name] = Range(name, self._engine, versions, versions[0], versions[-1], after,
                                          deprecated, successor, pool)
        return r

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, name: object) -> bool:
        return name in self._rows


def _from_index(engine: str, index: dict[str, Any], kind: str) -> Mapping[str, Range]:
    return _IndexRanges(engine, index, kind)
