"""What changed between two captures of a card, fact by fact, each with its anchor."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from launchcard.card import LaunchCard

ChangeKind = Literal["added", "removed", "changed"]


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    what: str  # fact name, env key, source path, conflict field
    old: Any
    new: Any
    anchor: str | None  # URL#Lline of the new (or removed) value

    def line(self) -> str:
        def show(v: Any) -> str:
            return json.dumps(v, default=str) if not isinstance(v, str) else v
        body = {"added": f"+ {self.what} = {show(self.new)}", "removed": f"- {self.what} = {show(self.old)}",
                "changed": f"~ {self.what}: {show(self.old)} -> {show(self.new)}"}[self.kind]
        return body + (f"  [{self.anchor}]" if self.anchor else "")


def _facts(card: LaunchCard) -> dict[tuple, tuple[Any, str | None]]:
    out: dict[tuple, tuple[Any, str | None]] = {}
    for f in card.facts:
        ev = f.evidence
        key = (f.name, f.scope, ev.kind if ev else None, ev.path if ev else None)
        if key in out:  # same fact twice in one document: keep them apart by line
            key = (*key, ev.line if ev else None)
        anchor = (ev.url or (f"{ev.path}#L{ev.line}" if ev and ev.line else None)) if ev else None
        out[key] = (f.value, anchor)
    return out


def _envs(card: LaunchCard) -> dict[tuple, tuple[str, str | None]]:
    out: dict[tuple, tuple[str, str | None]] = {}
    for e in card.envs:
        key = (e.source.kind, e.source.path, e.role, e.hardware, e.checkpoint)
        n = 1
        while (*key, n) in out:
            n += 1
        anchor = e.evidence.url if e.evidence else e.source.url
        out[(*key, n)] = (" ".join(e.argv), anchor)
    return out


def diff_cards(old: LaunchCard, new: LaunchCard) -> list[Change]:
    changes: list[Change] = []
    for label, a, b in (("fact", _facts(old), _facts(new)), ("env", _envs(old), _envs(new))):
        for key in sorted(set(a) | set(b), key=str):
            name = f"{label} " + "/".join(str(k) for k in key if k is not None)
            if key not in a:
                changes.append(Change("added", name, None, b[key][0], b[key][1]))
            elif key not in b:
                changes.append(Change("removed", name, a[key][0], None, a[key][1]))
            elif a[key][0] != b[key][0]:
                changes.append(Change("changed", name, a[key][0], b[key][0], b[key][1]))
    src_a = {(r.kind, r.path): r for r in old.evidence}
    src_b = {(r.kind, r.path): r for r in new.evidence}
    for key in sorted(set(src_a) | set(src_b), key=str):
        name = f"source {key[0]} {key[1]}"
        ra, rb = src_a.get(key), src_b.get(key)
        if ra is None and rb is not None:
            changes.append(Change("added", name, None, rb.sha256, rb.url))
        elif rb is None and ra is not None:
            changes.append(Change("removed", name, ra.sha256, None, ra.url))
        elif ra and rb and (ra.sha256, ra.revision) != (rb.sha256, rb.revision):
            changes.append(Change("changed", name, f"{ra.revision} sha256:{ra.sha256}",
                                  f"{rb.revision} sha256:{rb.sha256}", rb.url))
    ca = {c.field: sorted(json.dumps(s.value, default=str) for s in c.sides) for c in old.conflicts}
    cb = {c.field: sorted(json.dumps(s.value, default=str) for s in c.sides) for c in new.conflicts}
    for key in sorted(set(ca) | set(cb)):
        if key not in ca:
            changes.append(Change("added", f"conflict {key}", None, sorted(set(cb[key])), None))
        elif key not in cb:
            changes.append(Change("removed", f"conflict {key}", sorted(set(ca[key])), None, None))
        elif set(ca[key]) != set(cb[key]):
            changes.append(Change("changed", f"conflict {key}", sorted(set(ca[key])), sorted(set(cb[key])), None))
    return changes
