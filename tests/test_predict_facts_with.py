"""``predict.facts_with`` is ``dataclasses.replace`` on ServingFacts without the generated ``__init__``: the same
record field for field, only while ServingFacts keeps every field an init field and no ``__post_init__``."""

from __future__ import annotations

import dataclasses

import pytest

from config_support import LLAMA8B
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, ServingFacts, facts_from_memory_plan, facts_with


def _facts() -> ServingFacts:
    arch, s, acc = arch_from_config(dict(LLAMA8B)), Settings(max_model_len=16384), find("h100")
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine="vllm")


def test_servingfacts_init_only_sets_its_fields() -> None:
    """What makes the copy the same as replace's: nothing but field assignment in construction."""
    assert not hasattr(ServingFacts, "__post_init__")
    assert all(f.init and not isinstance(f.type, dataclasses.InitVar) for f in dataclasses.fields(ServingFacts))


@pytest.mark.parametrize("changes", [{}, {"kv_capacity_tokens": 1234}, {"max_num_seqs": 8, "findings": ()},
                                     {"graph_tokens": None, "kv_pool_tokens": 0}])
def test_facts_with_equals_replace(changes: dict[str, object]) -> None:
    f = _facts()
    got, want = facts_with(f, **changes), dataclasses.replace(f, **changes)  # type: ignore[arg-type]
    assert type(got) is ServingFacts and got == want and hash(got) == hash(want)
    for field in dataclasses.fields(ServingFacts):
        assert getattr(got, field.name) is getattr(want, field.name), field.name
    assert f == _facts()  # the original untouched


def test_facts_with_refuses_an_unknown_field() -> None:
    with pytest.raises(TypeError, match="no_such_field"):
        facts_with(_facts(), no_such_field=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts_with(_facts()).max_num_seqs = 3  # type: ignore[misc]
