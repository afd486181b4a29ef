"""What changed between two captures of a card, fact by fact, each with its anchor."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from launchcard.argv import parse_command
from launchcard.card import LaunchCard
from launchcard.errors import CatalogError
from launchcard.store._catalog import Capture, Catalog

# Any in this module: fact values as stored (JSON values of every type).

ChangeKind = Literal["added", "removed", "changed"]


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    what: str  # fact name, env key, source path, conflict field
    old: Any
    new: Any
    anchor: str | None  # URL#Lline of the new (or removed) value

    def line(self) -> str:
        def show(v: object) -> str:
            if v is None:
                return "(not set)"
            return json.dumps(v, default=str) if not isinstance(v, str) else v
        if self.kind == "changed" and isinstance(self.old, dict) and isinstance(self.new, dict):
            # an object value (a memory plan): only the keys that differ, never both objects whole
            keys = [k for k in dict.fromkeys([*self.old, *self.new]) if self.old.get(k) != self.new.get(k)]
            body = f"~ {self.what}: " + "; ".join(f"{k} {show(self.old.get(k))} -> {show(self.new.get(k))}"
                                                   for k in keys)
        else:
            body = {"added": f"+ {self.what} = {show(self.new)}", "removed": f"- {self.what} = {show(self.old)}",
                    "changed": f"~ {self.what}: {show(self.old)} -> {show(self.new)}"}[self.kind]
        return body + (f"  [{self.anchor}]" if self.anchor else "")


_Key = tuple[str | int | None, ...]  # what identifies one fact or env across captures


def _facts(card: LaunchCard) -> dict[_Key, tuple[Any, str | None]]:
    out: dict[_Key, tuple[Any, str | None]] = {}
    for f in card.facts:
        ev = f.evidence
        key: _Key = (f.name, f.scope, ev.kind if ev else None, ev.path if ev else None)
        if key in out:  # same fact twice in one document: keep them apart by line
            key = (*key, ev.line if ev else None)
        anchor = (ev.url or (f"{ev.path}#L{ev.line}" if ev and ev.line else None)) if ev else None
        out[key] = (f.value, anchor)
    return out


def _envs(card: LaunchCard) -> dict[_Key, tuple[tuple[str, ...], str | None]]:
    out: dict[_Key, tuple[tuple[str, ...], str | None]] = {}
    for e in card.envs:
        key = (e.source.kind, e.source.path, e.role, e.hardware, e.checkpoint)
        n = 1
        while (*key, n) in out:
            n += 1
        anchor = e.evidence.url if e.evidence else e.source.url
        out[(*key, n)] = (tuple(e.argv), anchor)
    return out


SWITCH = "(on)"  # a flag without a value


def argv_flags(argv: tuple[str, ...]) -> dict[str, str]:
    """Option -> value of a command as its engine reads it (canonical spellings, the winning value; ``SWITCH``
    for a flag without one), in the order the options first appear; the rest (env prefix, entry point,
    model, positionals) under ``""``."""
    cmd = parse_command(argv)
    out: dict[str, str] = {}
    for occ in cmd.occurrences:
        value = cmd.options[occ.dest]
        winner = cmd.last(occ.flag) or occ
        if isinstance(value, tuple):
            out.setdefault(winner.flag, " ".join(value))
        else:
            out.setdefault(winner.flag, value if isinstance(value, str) else SWITCH)
    head = [*(f"{k}={v}" for k, v in cmd.env), *cmd.entry, *([cmd.model] if cmd.model else []), *cmd.positionals]
    if head:
        out[""] = " ".join(head)
    return out


def _env_changes(name: str, old: tuple[str, ...], new: tuple[str, ...], anchor: str | None) -> list[Change]:
    """One change per flag that differs, never the whole command twice."""
    a, b = argv_flags(old), argv_flags(new)
    out: list[Change] = []
    for flag in [*a, *(f for f in b if f not in a)]:
        what = f"{name} {flag or 'command'}"
        if flag not in b:
            out.append(Change("removed", what, a[flag], None, anchor))
        elif flag not in a:
            out.append(Change("added", what, None, b[flag], anchor))
        elif a[flag] != b[flag]:
            out.append(Change("changed", what, a[flag], b[flag], anchor))
    return out


def _fact_label(key: _Key) -> str:
    """``fact context_tokens [h100] (vllm-recipes models/m.yaml)``: name, scope, source document."""
    name, scope, kind, path = key[:4]
    return (f"fact {name}" + (f" [{scope}]" if scope else "")
            + (f" ({' '.join(str(x) for x in (kind, path) if x)})" if kind or path else ""))


def _env_label(key: _Key) -> str:
    """``env vllm-recipes models/m.yaml (single, h100, org/m)``; ``#2`` for a second command of that kind."""
    kind, path, role, hardware, checkpoint, n = key
    what = ", ".join(str(x) for x in (role, hardware, checkpoint) if x)
    return f"env {kind} {path}" + (f" ({what})" if what else "") + (f" #{n}" if n != 1 else "")


def _pairs(a: dict[_Key, Any], b: dict[_Key, Any], loose: Any) -> dict[_Key, _Key]:
    """Removed key -> added key where exactly one of each shares ``loose(key)`` (one item whose scope or
    hardware changed), so it reads as one change, not the same value removed and added."""
    gone = [k for k in a if k not in b]
    came = [k for k in b if k not in a]
    out: dict[_Key, _Key] = {}
    for k in gone:
        olds = [g for g in gone if loose(g) == loose(k)]
        news = [c for c in came if loose(c) == loose(k)]
        if len(olds) == 1 and len(news) == 1:
            out[k] = news[0]
    return out


def diff_cards(old: LaunchCard, new: LaunchCard) -> list[Change]:
    changes: list[Change] = []
    fa, fb = _facts(old), _facts(new)
    moved = _pairs(fa, fb, lambda k: (k[0], *k[2:]))  # same fact of the same document, other scope
    # then a fact the card holds once, now stated elsewhere (a derived minimum's deciding deployment moved)
    rest_a = {k: v for k, v in fa.items() if k not in moved}
    rest_b = {k: v for k, v in fb.items() if k not in moved.values()}
    moved |= _pairs(rest_a, rest_b, lambda k: k[0])
    for key in sorted(set(fa) | set(fb), key=str):
        name = _fact_label(key)
        if key in moved:
            to = moved[key]
            where = f"[{to[1]}]" if to[2:] == key[2:] else _fact_label(to).removeprefix(f"fact {to[0]} ")
            what = f"{name} -> {where}" if to != key else name
            if fa[key][0] != fb[to][0] or to != key:
                changes.append(Change("changed", what, fa[key][0], fb[to][0], fb[to][1]))
        elif key in moved.values():
            continue
        elif key not in fa:
            changes.append(Change("added", name, None, fb[key][0], fb[key][1]))
        elif key not in fb:
            changes.append(Change("removed", name, fa[key][0], None, fa[key][1]))
        elif fa[key][0] != fb[key][0]:
            changes.append(Change("changed", name, fa[key][0], fb[key][0], fb[key][1]))
    ea, eb = _envs(old), _envs(new)
    moved = _pairs(ea, eb, lambda k: (k[0], k[1], k[2], k[4]))  # same command of a document, other hardware
    for key in sorted(set(ea) | set(eb), key=str):
        name = _env_label(key)
        if key in moved:
            to = moved[key]
            if to[3] != key[3]:
                changes.append(Change("changed", f"{name} hardware", key[3], to[3], eb[to][1]))
            changes += _env_changes(name, ea[key][0], eb[to][0], eb[to][1])
        elif key in moved.values():
            continue
        elif key not in ea:
            changes.append(Change("added", name, None, " ".join(eb[key][0]), eb[key][1]))
        elif key not in eb:
            changes.append(Change("removed", name, " ".join(ea[key][0]), None, ea[key][1]))
        elif ea[key][0] != eb[key][0]:
            changes += _env_changes(name, ea[key][0], eb[key][0], eb[key][1])
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
    for field in sorted(set(ca) | set(cb)):
        if field not in ca:
            changes.append(Change("added", f"conflict {field}", None, sorted(set(cb[field])), None))
        elif field not in cb:
            changes.append(Change("removed", f"conflict {field}", sorted(set(ca[field])), None, None))
        elif set(ca[field]) != set(cb[field]):
            changes.append(Change("changed", f"conflict {field}", sorted(set(ca[field])), sorted(set(cb[field])),
                                  None))
    return changes


@dataclass(frozen=True)
class CaptureDiff:
    model: str
    old: Capture
    new: Capture
    changes: list[Change]


def diff_captures(catalog: Catalog, model: str, old: int | None = None, new: int | None = None) -> CaptureDiff:
    """``model``'s captures ``old`` -> ``new`` (default: the two newest); ids of other models are bad input."""
    caps = catalog.captures(model)
    if not caps:
        catalog.latest(model)  # raises: no card, with suggestions
    by_id = {c.id: c for c in caps}
    if new is None:
        new = caps[-1].id
    if old is None:
        older = [c.id for c in caps if c.id < new]
        if not older:
            upto = sum(c.id <= new for c in caps)  # --to an older capture: those up to it, not all of them
            raise CatalogError(f"{model!r} has {upto} capture(s) up to {new}; a diff needs an older one",
                               where=catalog.where, field="capture",
                               fix="ingest again after the sources change, or name both captures")
        old = older[-1]
    a, b = catalog.model_card(model, old), catalog.model_card(model, new)
    return CaptureDiff(model=model, old=by_id[old], new=by_id[new], changes=diff_cards(a, b))
