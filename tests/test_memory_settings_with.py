"""``memory.settings_with`` is ``dataclasses.replace`` on Settings without the generated ``__init__``: the same
record field for field, only while Settings keeps every field an init field and no ``__post_init__``."""

from __future__ import annotations

import dataclasses

import pytest

from launchcard.memory import Settings, settings_with


def test_settings_init_only_sets_its_fields() -> None:
    """What makes the copy the same as replace's: nothing but field assignment in construction."""
    assert not hasattr(Settings, "__post_init__")
    assert all(f.init and not isinstance(f.type, dataclasses.InitVar) for f in dataclasses.fields(Settings))
    assert not hasattr(Settings, "__slots__")  # the copy writes the instance dict


@pytest.mark.parametrize("changes", [{}, {"max_num_seqs": None}, {"tp": 4, "dp": 2, "expert_parallel": True},
                                     {"max_num_seqs": 8, "max_num_batched_tokens": None, "kv_cache_dtype": "fp8"}])
def test_settings_with_equals_replace(changes: dict[str, object]) -> None:
    s = Settings(tp=2, max_num_seqs=64, max_num_batched_tokens=4096, vllm_version="0.11.0")
    got, want = settings_with(s, **changes), dataclasses.replace(s, **changes)  # type: ignore[arg-type]
    assert type(got) is Settings and got == want and hash(got) == hash(want)
    for field in dataclasses.fields(Settings):
        assert getattr(got, field.name) is getattr(want, field.name), field.name
    assert vars(got) == vars(want)
    assert s == Settings(tp=2, max_num_seqs=64, max_num_batched_tokens=4096, vllm_version="0.11.0")  # untouched


def test_settings_with_refuses_an_unknown_field_and_stays_frozen() -> None:
    with pytest.raises(TypeError, match="no_such_field"):
        settings_with(Settings(), no_such_field=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings_with(Settings()).tp = 3  # type: ignore[misc]


def test_a_copy_carries_no_cached_value_of_the_original() -> None:
    """A value derived from the original's fields and cached in its instance dict (``functools.cached_property``
    stores it there under its own name) is not carried into a copy with changed fields: replace would compute it
    afresh.  Every cached_property Settings has is computed first, then one is planted as such a cache would be."""
    import functools

    s = Settings(tp=2, max_num_seqs=64)
    cached = [n for n, v in vars(Settings).items() if isinstance(v, functools.cached_property)]
    for name in cached:
        getattr(s, name)
    s.__dict__["_derived_from_tp"] = s.tp * 10  # what `@cached_property def _derived_from_tp` leaves behind
    got, want = settings_with(s, tp=4), dataclasses.replace(s, tp=4)
    assert "_derived_from_tp" not in vars(got) and vars(got) == vars(want)
    for name in cached:
        assert getattr(got, name) == getattr(Settings(**{f.name: getattr(want, f.name)
                                                         for f in dataclasses.fields(Settings)}), name), name
