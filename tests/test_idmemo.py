"""The identity memo (idmemo.py): a value per object (and extra key), its object kept alive, bounded, cleared whole."""

from __future__ import annotations

import gc
import weakref

import pytest

from launchcard.idmemo import IdMemo


class _Obj:
    """An unhashable object, as the memo's keyed objects are (dicts, plans holding dicts)."""

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, n: int) -> None:
        self.n = n


def test_a_second_ask_with_the_same_object_is_a_hit() -> None:
    made: list[int] = []
    memo: IdMemo[_Obj, int] = IdMemo(3)

    def make(o: _Obj) -> int:
        made.append(o.n)
        return o.n * 10

    a = _Obj(1)
    assert memo.get(a, make) == 10
    assert memo.get(a, make) == 10
    assert made == [1] and len(memo) == 1


def test_an_equal_other_object_or_another_extra_is_a_miss() -> None:
    made: list[_Obj] = []
    memo: IdMemo[_Obj, int] = IdMemo(8)

    def make(o: _Obj) -> int:
        made.append(o)
        return len(made)

    a, b = _Obj(1), _Obj(1)
    assert [memo.get(o, make, extra) for o, extra in ((a, None), (b, None), (a, "x"), (a, "x"), (a, None))] == [
        1, 2, 3, 3, 1]
    assert made == [a, b, a] and len(memo) == 3


def test_the_object_stays_alive_while_its_value_is_held_so_its_id_is_never_anothers() -> None:
    memo: IdMemo[_Obj, int] = IdMemo(3)
    a = _Obj(1)
    gone = weakref.ref(a)
    memo.get(a, lambda o: o.n)
    del a
    gc.collect()
    assert gone() is not None  # held by the memo: no new object can take its id
    memo.clear()
    gc.collect()
    assert gone() is None and len(memo) == 0


def test_an_entry_of_another_object_under_the_same_id_is_never_a_hit() -> None:
    memo: IdMemo[_Obj, int] = IdMemo(3)
    a, stale = _Obj(1), _Obj(2)
    memo._entries[(id(a), id(None), None)] = (stale, None, 2)  # as if a dead object's id had passed to ``a``
    assert memo.get(a, lambda o: o.n) == 1
    assert memo.get(a, lambda o: -1) == 1  # and the right value replaced it


def test_a_miss_at_the_bound_drops_every_entry_and_a_hit_drops_none() -> None:
    memo: IdMemo[_Obj, int] = IdMemo(3)
    objs = [_Obj(i) for i in range(4)]
    for o in objs[:3]:
        memo.get(o, lambda o: o.n)
    assert len(memo) == 3
    assert memo.get(objs[0], lambda o: -1) == 0 and len(memo) == 3  # a hit at the bound keeps them all
    assert memo.get(objs[3], lambda o: o.n) == 3 and len(memo) == 1  # a miss at the bound: dropped whole
    assert memo.get(objs[0], lambda o: -1) == -1  # made again


def test_a_bound_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        IdMemo(0)


def test_a_pinned_second_object_is_part_of_the_key_and_kept_alive() -> None:
    memo: IdMemo[_Obj, int] = IdMemo(8)
    a, g1, g2 = _Obj(1), _Obj(10), _Obj(20)
    assert memo.get(a, lambda o: o.n + 10, pin=g1) == 11
    assert memo.get(a, lambda o: -1, pin=g1) == 11  # a hit: the same object and pin
    assert memo.get(a, lambda o: o.n + 20, pin=g2) == 21  # another pin: a miss
    gone = weakref.ref(g1)
    del g1
    gc.collect()
    assert gone() is not None  # held with its value: its id cannot pass to another object
    (key,) = [k for k, v in memo._entries.items() if v[1] is gone()]
    memo._entries[key] = (a, _Obj(99), 5)  # as if another pin had had this one's id
    assert memo.get(a, lambda o: 7, pin=gone()) == 7


def test_values_are_those_held_and_go_with_a_clear() -> None:
    memo: IdMemo[_Obj, list[int]] = IdMemo(8)
    a, b = _Obj(1), _Obj(2)
    memo.get(a, lambda o: [o.n]).append(10)
    memo.get(b, lambda o: [o.n])
    assert sorted(memo.values()) == [[1, 10], [2]]
    memo.clear()
    assert list(memo.values()) == []
