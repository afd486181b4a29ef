"""Accumulating argument tokens and environment assignments with their origin,
then normalising them as the reference builder does (spec §4.4, §4.5).

Tokens are kept as ``(token, block source, index)``: the per-token source (the
block's path plus the index) is only built when provenance is asked for, and
the plain argv path (:func:`argv_of`) never touches sources at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from launchcard.resolve._context import Derivation, Given, Src
from launchcard.sources import Token, is_flag, truthy

Item = tuple[Token, Src, int]  # index -1: the source is already the token's own


@dataclass
class Unit:
    """A flag with its value, a boolean flag, or a positional token."""

    flag: Any | None
    value: Any | None
    src: Src  # the flag's (or a lone token's) item
    overrides: list[Src] = field(default_factory=list)
    value_src: Src | None = None  # the value's own item, when flag and value are two tokens

    @property
    def tokens(self) -> list[Any]:
        if self.flag is None:
            return [self.value]
        return [self.flag] if self.value is None else [self.flag, self.value]


class Args:
    """Ordered tokens, each remembering the layer that added it.  Empty tokens are
    dropped on the way in: the reference drops them before pairing flags, so
    dropping them early is the same and keeps the lists short."""

    __slots__ = ("items",)

    def __init__(self, items: Iterable[Item] = ()) -> None:
        self.items: list[Item] = list(items) if items else []

    def add(self, tokens: Iterable[Token] | None, src: Src) -> None:
        if tokens:
            self.items += [
                (tok, src, i) for i, tok in enumerate(tokens) if tok and (tok.__class__ is str or truthy(tok))
            ]

    def add_raw(self, tokens: Iterable[Token], src: Src) -> None:
        self.items += [(tok, src, -1) for tok in tokens if tok and (tok.__class__ is str or truthy(tok))]

    def normalised(self) -> list[Unit]:
        return normalise(self.items)

    def argv(self) -> list[Token]:
        return argv_of(self.items)


def _src(item: Item) -> Src:
    return item[1].at(item[2]) if item[2] >= 0 else item[1]


def normalise(items: list[Item]) -> list[Unit]:
    """Pair flags with values, keep the last unit per flag (with the sources it replaced)."""
    units: list[Unit] = []
    i, n = 0, len(items)
    while i < n:
        tok = items[i][0]
        if is_flag(tok):
            if i + 1 < n and not is_flag(items[i + 1][0]):
                units.append(Unit(tok, items[i + 1][0], _src(items[i]), value_src=_src(items[i + 1])))
                i += 2
                continue
            units.append(Unit(tok, None, _src(items[i])))
        else:
            units.append(Unit(None, tok, _src(items[i])))
        i += 1
    survivors: list[Unit] = []
    seen: dict[Any, Unit] = {}
    for unit in reversed(units):
        if unit.flag is None:
            survivors.append(unit)
            continue
        winner = seen.get(unit.flag)
        if winner is not None:
            winner.overrides.append(unit.value_src or unit.src)  # where the replaced value was written
            continue
        seen[unit.flag] = unit
        survivors.append(unit)
    survivors.reverse()
    return survivors


def argv_of(items: list[Item]) -> list[Token]:
    """The normalised tokens alone: what :func:`normalise` then :func:`flatten` give, without sources."""
    toks = [it[0] for it in items]
    flags = [t for t in toks if t.__class__ is str and t[:1] == "-"]
    if len(set(flags)) == len(flags):
        # Every flag token heads its own unit and values are never flags, so when no flag
        # repeats nothing is replaced and the normalised argv is the token list itself.
        return toks
    n = len(toks)
    is_flag_at = [t.__class__ is str and t[:1] == "-" for t in toks]
    units: list[tuple[Token, ...]] = []
    i = 0
    while i < n:
        if is_flag_at[i] and i + 1 < n and not is_flag_at[i + 1]:
            units.append((toks[i], toks[i + 1]))
            i += 2
        else:
            units.append((toks[i],))
            i += 1
    seen: set[Token] = set()
    out: list[Token] = []
    for unit in reversed(units):
        head = unit[0]
        if head.__class__ is str and head[:1] == "-":
            if head in seen:
                continue
            seen.add(head)
        out.extend(reversed(unit))
    out.reverse()
    return out


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
    """Insertion-ordered assignments; a later write keeps the key's position.

    Kept as the ordered list of blocks written (a mapping and the source of its
    block): the values are then a few C-level ``dict.update`` calls, and the
    per-variable sources (``slots``) are only worked out when provenance is asked.
    """

    __slots__ = ("_slots", "_values", "blocks")

    def __init__(self) -> None:
        self.blocks: list[tuple[Mapping[str, Any], Src] | tuple[None, str]] = []  # (None, key): a deletion
        self._values: dict[str, Any] | None = None
        self._slots: dict[str, EnvSlot] | None = None

    def set(self, key: str, value: Any, src: Src) -> None:
        self.update({key: value}, src)

    def update(self, mapping: Mapping[str, Any] | None, src: Src) -> None:
        """Set every entry of ``mapping``; each entry's source is ``src`` at its key."""
        if mapping:
            self.blocks.append((mapping, src))
            self._values = self._slots = None

    def delete(self, key: str) -> bool:
        """Remove ``key``; True when it was set."""
        if key not in self.values():
            return False
        self.blocks.append((None, key))
        self._values = self._slots = None
        return True

    def values(self) -> dict[str, Any]:
        """The assignments (shared between callers: copy before changing)."""
        if self._values is None:
            out: dict[str, Any] = {}
            for mapping, src in self.blocks:
                if mapping is None:
                    out.pop(src, None)  # type: ignore[arg-type]  # a deletion names the key
                else:
                    out.update(mapping)
            self._values = out
        return self._values

    @property
    def slots(self) -> dict[str, EnvSlot]:
        """Each variable with the source that set it and the ones it replaced (provenance)."""
        if self._slots is None:
            slots: dict[str, EnvSlot] = {}
            for mapping, src in self.blocks:
                if mapping is None:
                    slots.pop(src, None)  # type: ignore[arg-type]
                    continue
                assert isinstance(src, Src)
                for key, value in mapping.items():
                    slot = slots.get(key)
                    if slot is None:
                        slots[key] = EnvSlot(value, src.at(key))
                    else:
                        slot.overrides.append(slot.src)
                        slot.value, slot.src = value, src.at(key)
            self._slots = slots
        return self._slots

    def with_values(self, values: dict[str, Any], rule: str) -> Env:
        """A copy whose variables take ``values`` (same keys): an unchanged one keeps its source, a changed
        one is derived by ``rule`` from the value its source wrote."""
        out = Env()
        out.blocks = list(self.blocks)
        out._values = values
        slots: dict[str, EnvSlot] = {}
        for k, s in self.slots.items():
            src = s.src
            if values[k] != s.value:
                written = Given(k, s.value, src.doc, src.path)
                src = Src(src.layer, src.key, None, (), Derivation(rule, (written,)))
            slots[k] = EnvSlot(values[k], src, list(s.overrides))
        out._slots = slots
        return out
