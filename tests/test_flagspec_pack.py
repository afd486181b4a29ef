"""The shipped flag-spec pack (``data/flags/pack/<engine>.json``): derived data that must equal the spec files.

``shipped_specs(engine)`` reads every release through the pack (one file, each distinct option decoded once);
a release rebuilt from it must be the spec its own file gives, field for field and in the same order, and a
pack that no longer lists the shipped files (a re-captured spec) must be ignored, never believed.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from launchcard.flagspec import FlagSpec, _shipped, shipped_index, shipped_specs, spec_from_dict

ROOT = Path(__file__).resolve().parents[1]
PACKS = ROOT / "src" / "launchcard" / "data" / "flags" / "pack"


def _fields(spec: FlagSpec) -> dict[str, object]:
    out: dict[str, object] = {}
    for f in dataclasses.fields(FlagSpec):
        value = getattr(spec, f.name)
        out[f.name] = list(value.items()) if isinstance(value, dict) else value  # order counts too
    return out


@pytest.mark.parametrize("engine", sorted(shipped_index()))
def test_pack_is_current_and_rebuilds_every_release_exactly(engine: str) -> None:
    stored = json.loads((PACKS / f"{engine}.json").read_text(encoding="utf-8"))
    assert stored == json.loads(json.dumps(_shipped.pack_data(engine))), "stale: run scripts/capture_flags.py"
    pack = _shipped._current_pack(engine)
    assert pack is not None
    for version in shipped_index()[engine]:
        path = ROOT / "src" / "launchcard" / "data" / "flags" / f"{engine}-{version}.json"
        own = spec_from_dict(json.loads(path.read_text(encoding="utf-8")),
                             where=f"launchcard/data/flags/{engine}-{version}.json")
        assert _fields(pack.spec(version)) == _fields(own), version


def test_releases_share_option_objects_and_one_spec_per_release(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_shipped, "_loaded", {})  # as in a fresh process (other tests read single files)
    specs = shipped_specs("vllm")
    assert [s.version for s in specs] == list(shipped_index()["vllm"])
    a, b = specs[-2], specs[-1]
    shared = {id(o) for o in a.options} & {id(o) for o in b.options}
    assert len(shared) > len(b.options) // 2  # consecutive releases share most options: decoded once
    from launchcard.flagspec import shipped_spec

    assert shipped_spec("vllm") is shipped_spec("vllm", specs[-1].version) is specs[-1]


def test_a_pack_that_does_not_list_the_shipped_files_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    real = _shipped.packaged_json

    def stale(*parts: str) -> dict[str, object] | None:
        raw = real(*parts)
        if raw is not None and parts[:2] == ("flags", "pack"):
            raw["releases"][0]["bytes"] += 1  # as after re-capturing that release without re-packing
        return raw

    monkeypatch.setattr(_shipped, "packaged_json", stale)
    assert _shipped._current_pack("vllm") is None
    assert _shipped._current_pack("sglang") is None
    monkeypatch.setattr(_shipped, "packaged_json", real)
    assert _shipped._current_pack("vllm") is not None
