"""A memo keyed by an object's identity: for values computed from objects that are not hashable (dicts, lists)
or costly to hash and compare (frozen plans, coefficient sets, simulated runs), asked again with the very same
object (a plan search asks ~1,000 times with a handful of them).

Each value is kept with its object, so the object stays alive while its value is held: its id cannot pass to
another object meanwhile, and an entry whose object is not the one asked (a stale id) is never a hit.  Bounded:
once it holds ``bound`` entries the next miss drops them all (no per-entry bookkeeping on the hot path; the
plan search's own caches are dropped whole alike).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K")  # the keyed object
V = TypeVar("V")  # its value


class IdMemo(Generic[K, V]):
    """``make(obj)`` remembered per ``(id(obj), id(pin), extra)``; ``extra``: whatever else the value follows
    (hashable); ``pin``: a second object (unhashable, or costly to compare) the value follows by identity, kept alive
    and checked as ``obj`` is."""

    __slots__ = ("_entries", "bound")

    def __init__(self, bound: int) -> None:
        if bound < 1:
            raise ValueError(f"IdMemo bound must be at least 1 (got {bound})")
        self.bound = bound
        self._entries: dict[tuple[int, int, Hashable], tuple[K, object, V]] = {}

    def get(self, obj: K, make: Callable[[K], V], extra: Hashable = None, pin: object = None) -> V:
        """The value for ``obj`` (and ``extra``, ``pin``), ``make(obj)`` on a miss."""
        key = (id(obj), id(pin), extra)
        hit = self._entries.get(key)
        if hit is None or hit[0] is not obj or hit[1] is not pin:
            if len(self._entries) >= self.bound:
                self._entries.clear()
            hit = self._entries[key] = (obj, pin, make(obj))
        return hit[2]

    def values(self) -> Iterator[V]:
        """The values held (a plan search counts what its memos of dicts hold against its cache bound)."""
        return (v for _, _, v in self._entries.values())

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
