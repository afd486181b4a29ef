"""Accumulating argument tokens and environment assignments with their origin,
then normalising them as the reference builder does (spec §4.4, §4.5)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from launchcard.resolve._context import Src, as_dict, as_list


@dataclass
class Unit:
    """A flag with its value, a boolean flag, or a positional token."""

    flag: Any | None
    value: Any | None
    src: Src
    overrides: list[Src] = field(default_factory=list)

    @property
    def tokens(self) -> list[Any]:
        if self.flag is None:
            return [self.value]
        return [self.flag] if self.value is None else [self.flag, self.value]


class Args:
    """Ordered tokens, each remembering the layer that added it."""

    def __init__(self) -> None:
        self.items: list[tuple[Any, Src]] = []

    def add(self, tokens: Any, src: Src) -> None:
        for i, tok in enumerate(as_list(tokens)):
            self.items.append((tok, Src(src.layer, src.key, src.doc, src.path + (i,)) if src.path else src))

    def add_raw(self, tokens: list[Any], src: Src) -> None:
        for tok in tokens:
            self.items.append((tok, src))

    def normalised(self) -> list[Unit]:
        return normalise(self.items)


def _is_flag(tok: Any) -> bool:
    return isinstance(tok, str) and tok.startswith("-")


def _truthy(tok: Any) -> bool:
    """JavaScript truthiness, which the reference uses to drop empty tokens ("", null, 0, false)."""
    return tok is not None and tok is not False and tok != "" and not (isinstance(tok, (int, float)) and tok == 0)


def normalise(items: list[tuple[Any, Src]]) -> list[Unit]:
    """Drop falsy tokens, pair flags with values, keep the last unit per flag."""
    kept = [(t, s) for t, s in items if _truthy(t)]
    units: list[Unit] = []
    i = 0
    while i < len(kept):
        tok, src = kept[i]
        if _is_flag(tok):
            if i + 1 < len(kept) and not _is_flag(kept[i + 1][0]):
                units.append(Unit(tok, kept[i + 1][0], src))
                i += 2
                continue
            units.append(Unit(tok, None, src))
        else:
            units.append(Unit(None, tok, src))
        i += 1
    survivors: list[Unit] = []
    seen: dict[Any, Unit] = {}
    for unit in reversed(units):
        if unit.flag is None:
            survivors.append(unit)
            continue
        winner = seen.get(unit.flag)
        if winner is not None:
            winner.overrides.append(unit.src)
            continue
        seen[unit.flag] = unit
        survivors.append(unit)
    survivors.reverse()
    return survivors


def flatten(units: list[Unit]) -> list[Any]:
    out: list[Any] = []
    for unit in units:
        out.extend(unit.tokens)
    return out


@dataclass
class EnvSlot:
    value: Any
    src: Src
    overrides: list[Src] = field(default_factory=list)


class Env:
    """Insertion-ordered assignments; a later write keeps the key's position."""

    def __init__(self) -> None:
        self.slots: dict[str, EnvSlot] = {}

    def set(self, key: str, value: Any, src: Src) -> None:
        slot = self.slots.get(key)
        if slot is None:
            self.slots[key] = EnvSlot(value, src)
        else:
            slot.overrides.append(slot.src)
            slot.value, slot.src = value, src

    def update(self, mapping: Any, src_for: Any) -> None:
        for key, value in as_dict(mapping).items():
            self.set(str(key), value, src_for(key))

    def delete(self, key: str) -> EnvSlot | None:
        return self.slots.pop(key, None)

    def values(self) -> dict[str, Any]:
        return {k: s.value for k, s in self.slots.items()}
