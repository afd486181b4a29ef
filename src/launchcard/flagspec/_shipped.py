"""The flag specs shipped in ``launchcard/data/flags``: one file per captured release, and one pack per engine.

A card's flag verdicts read every captured release of an engine (25 of vLLM); decoding 33 spec files of
~10,000 options in all was most of a cold ``card``.  Consecutive releases share almost every option, so
``data/flags/pack/<engine>.json`` holds each distinct option, environment variable and JSON class once,
and each release as indices into those pools: one file read, each distinct option decoded once and the
same frozen :class:`Option` shared by every release that has it.  The pack is derived data (written by
``scripts/capture_flags.py`` after each capture, ``write_pack``); it is used only when it lists exactly
the shipped releases with each spec file's byte size, else the spec files themselves are read, so a
stale pack costs speed, never a wrong verdict (tests compare every release it rebuilds with its file).
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from launchcard import atomicfile
from launchcard.datadir import data_path
from launchcard.flagspec._spec import FlagSpec, Option, assemble_spec, option_from_dict, spec_from_dict, version_key

PACK_SCHEMA = "launchcard.flag-spec-pack/v1"
# the per-release lists a pack stores as indices into one pool each (options and positionals share one)
_POOLED = ("options", "positionals", "envs", "json_classes")

_lock = threading.Lock()  # one FlagSpec per release per process: caches downstream key on identity
_loaded: dict[tuple[str, str], FlagSpec] = {}
_index: dict[str, tuple[str, ...]] = {}


def _data_dir() -> Path:
    return data_path("flags")


def packaged_json(*parts: str) -> dict[str, Any] | None:
    """The JSON object shipped as ``launchcard/data/<parts...>``; None when it is missing or unreadable (callers
    then work without the captured table, as on an install that lacks it)."""
    entry = data_path(*parts)
    try:
        raw = json.loads(entry.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return raw if isinstance(raw, dict) else None


def shipped_index() -> dict[str, tuple[str, ...]]:
    """engine -> captured versions (ascending), from the shipped file names."""
    if not _index:
        found: dict[str, list[str]] = {}
        for entry in _data_dir().iterdir():
            m = re.match(r"^([a-z0-9_]+)-(.+)\.json$", entry.name)
            if m:
                found.setdefault(m.group(1), []).append(m.group(2))
        _index.update({e: tuple(sorted(v, key=version_key)) for e, v in sorted(found.items())})
    return _index


ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}


def default_release(engine: str) -> str | None:
    """The release every surface (memory, predict, check, plan, sweep, the web) takes for ``engine`` when none is
    given: the newest whose flags launchcard captured (``check`` reads the flags there, so the rules the others gate
    by release read the same one); None for an engine with no captured spec (TensorRT-LLM)."""
    versions = shipped_index().get(engine)
    return versions[-1] if versions else None


def default_release_note(engine: str) -> str:
    """How every surface says which release it took for ``engine`` when none was given (one wording)."""
    name = ENGINE_NAMES.get(engine, engine)
    taken = default_release(engine)
    if taken is None:
        return f"no {name} release given: its defaults are not read by release (no captured {name} flag spec)"
    return f"no {name} release given: {name} {taken}, the newest release whose flags launchcard captured"


def _versions(engine: str, version: str | None) -> str:
    """``version`` (the newest captured when None), checked against the shipped releases of ``engine``."""
    from launchcard.errors import InputError

    versions = shipped_index().get(engine)
    if not versions:
        known = ", ".join(shipped_index()) or "none"
        raise InputError(f"no captured flag spec for engine {engine!r}", field="engine", fix=f"use one of: {known}")
    if version is None:
        return versions[-1]  # the newest captured: flagspec.default_release
    if version not in versions:
        raise InputError(
            f"no captured flag spec for {engine} {version}",
            field="engine_version",
            fix=f"use one of: {', '.join(versions)} (or capture it with `launchcard flags capture`)",
        )
    return version


def _where(engine: str, version: str) -> str:
    return f"launchcard/data/flags/{engine}-{version}.json"


def _read_file(engine: str, version: str) -> FlagSpec:
    raw = json.loads((_data_dir() / f"{engine}-{version}.json").read_text(encoding="utf-8"))
    return spec_from_dict(raw, where=_where(engine, version))


def shipped_spec(engine: str, version: str | None = None) -> FlagSpec:
    """The shipped spec for ``engine`` at ``version`` (latest captured when None); one object per release."""
    version = _versions(engine, version)
    spec = _loaded.get((engine, version))
    if spec is None:
        with _lock:
            spec = _loaded.get((engine, version))
            if spec is None:
                spec = _loaded[(engine, version)] = _read_file(engine, version)
    return spec


def shipped_specs(engine: str) -> tuple[FlagSpec, ...]:
    """Every captured release of ``engine``, oldest first (empty for an engine with none), read through the
    engine's pack when it is current: what a command checked against every release asks for first."""
    versions = shipped_index().get(engine, ())
    if any((engine, v) not in _loaded for v in versions):
        with _lock:
            missing = [v for v in versions if (engine, v) not in _loaded]
            pack = _current_pack(engine) if len(missing) > 1 else None
            for v in missing:
                _loaded[(engine, v)] = pack.spec(v) if pack is not None else _read_file(engine, v)
    return tuple(_loaded[(engine, v)] for v in versions)


# ---------------------------------------------------------------- the pack


class _Pack:
    """One engine's pack, each pooled option decoded on first use."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self._raw = raw
        self._releases = {r["head"]["version"]: r for r in raw["releases"]}
        self._options: list[Option | None] = [None] * len(raw["options"])

    def _option(self, i: int, where: str) -> Option:
        o = self._options[i]
        if o is None:
            o = self._options[i] = option_from_dict(self._raw["options"][i], where)
        return o

    def spec(self, version: str) -> FlagSpec:
        rel = self._releases[version]
        where = _where(rel["head"]["engine"], version)
        raw = dict(rel["head"])
        for key in ("envs", "json_classes"):
            if key in rel:
                pool = self._raw[key]
                raw[key] = dict(pool[i] for i in rel[key])
        return assemble_spec(raw, tuple(self._option(i, where) for i in rel["options"]),
                             tuple(self._option(i, where) for i in rel.get("positionals", ())), where)


def _current_pack(engine: str) -> _Pack | None:
    """The engine's pack when it lists exactly the shipped releases, each with its spec file's byte size."""
    raw = packaged_json("flags", "pack", f"{engine}.json")
    if raw is None or raw.get("schema") != PACK_SCHEMA:
        return None
    listed = [(r["file"], r["bytes"]) for r in raw.get("releases", ())]
    files = [f"{engine}-{v}.json" for v in shipped_index()[engine]]
    shipped = [(name, (_data_dir() / name).stat().st_size) for name in files]
    return _Pack(raw) if listed == shipped else None


def pack_data(engine: str) -> dict[str, Any]:
    """The pack of ``engine`` built from its shipped spec files (never from an older pack)."""
    # keyed by the item's JSON with its own key order: a release gets back exactly what its file holds
    pools: dict[str, dict[str, tuple[int, Any]]] = {"options": {}, "envs": {}, "json_classes": {}}

    def at(pool: str, item: Any) -> int:
        return pools[pool].setdefault(json.dumps(item, separators=(",", ":")), (len(pools[pool]), item))[0]

    releases = []
    for version in shipped_index().get(engine, ()):
        entry = _data_dir() / f"{engine}-{version}.json"
        data = entry.read_bytes()
        raw = json.loads(data)
        rel: dict[str, Any] = {"file": entry.name, "bytes": len(data),
                               "head": {k: v for k, v in raw.items() if k not in _POOLED}}
        for key in _POOLED:
            if key in raw:
                items = raw[key].items() if isinstance(raw[key], dict) else raw[key]
                rel[key] = [at("options" if key == "positionals" else key, list(i) if isinstance(raw[key], dict)
                               else i) for i in items]
        releases.append(rel)
    return {"schema": PACK_SCHEMA, "engine": engine, "releases": releases,
            **{name: [item for _, item in pool.values()] for name, pool in pools.items()}}


def write_pack(engine: str, folder: Path) -> Path:
    """Write ``folder/<engine>.json`` (``folder`` = src/launchcard/data/flags/pack)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{engine}.json"
    atomicfile.write_text(out, json.dumps(pack_data(engine), separators=(",", ":")) + "\n")
    return out
