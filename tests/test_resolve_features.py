"""resolve._features: the one reading of feature choices (``--feature``/``feature=`` add to the recipe's defaults,
``--no-feature``/``no_feature=`` remove, a whole set replaces them) and its bad input."""

from __future__ import annotations

import pytest

from launchcard.errors import ResolveError
from launchcard.resolve import Choice, check_features, selected_features

KNOWN = ("tool_calling", "reasoning", "spec_decoding", "text_only")
DEFAULTS = ("tool_calling", "reasoning")
RECIPE = "models/org/m.yaml"


def _pick(**kw: object) -> list[str]:
    return selected_features(Choice(model="org/m", **kw), KNOWN, RECIPE, DEFAULTS)  # type: ignore[arg-type]


def test_added_features_join_the_defaults_in_order() -> None:
    assert _pick() == ["tool_calling", "reasoning"]
    assert _pick(extra_features=("spec_decoding",)) == ["tool_calling", "reasoning", "spec_decoding"]
    assert _pick(extra_features=("reasoning", "text_only", "text_only")) == ["tool_calling", "reasoning", "text_only"]


def test_removed_features_leave_the_defaults_and_a_removed_off_feature_is_no_change() -> None:
    assert _pick(removed_features=("reasoning",)) == ["tool_calling"]
    assert _pick(removed_features=("spec_decoding",)) == ["tool_calling", "reasoning"]
    assert _pick(extra_features=("spec_decoding",), removed_features=("tool_calling",)) == ["reasoning",
                                                                                             "spec_decoding"]


def test_a_whole_set_replaces_the_defaults_and_takes_adds_and_removes_on_top() -> None:
    assert _pick(features=()) == []
    assert _pick(features=("spec_decoding",)) == ["spec_decoding"]
    assert _pick(features=("spec_decoding", "reasoning"), extra_features=("text_only",),
                 removed_features=("reasoning",)) == ["spec_decoding", "text_only"]


def test_a_mode_turns_its_feature_on() -> None:
    assert _pick(feature_modes={"spec_decoding": "mtp"}) == ["tool_calling", "reasoning", "spec_decoding"]
    assert _pick(features=(), feature_modes={"spec_decoding": "mtp"}) == ["spec_decoding"]


@pytest.mark.parametrize(("kw", "field", "text"), [
    ({"extra_features": ("reasonin",)}, "feature", "has no feature 'reasonin'; did you mean reasoning?"),
    ({"removed_features": ("bogus",)}, "no_feature", "has no feature 'bogus'; choose one of: tool_calling"),
    ({"features": ("nope",)}, "features", "has no feature 'nope'"),
    ({"feature_modes": {"nope": "x"}}, "mode", "has no feature 'nope'"),
    ({"extra_features": ("reasoning",), "removed_features": ("reasoning",)}, "feature/no_feature",
     "feature 'reasoning' is both added and removed; name reasoning in only one of the two"),
    ({"feature_modes": {"spec_decoding": "mtp"}, "removed_features": ("spec_decoding",)}, "mode/no_feature",
     "feature 'spec_decoding' is removed, yet given a mode"),
])
def test_bad_feature_input_is_one_line_naming_its_input(kw: dict[str, object], field: str, text: str) -> None:
    for call in (lambda c: check_features(c, KNOWN, RECIPE), lambda c: selected_features(c, KNOWN, RECIPE, DEFAULTS)):
        with pytest.raises(ResolveError) as err:
            call(Choice(model="org/m", **kw))  # type: ignore[arg-type]
        assert err.value.field == field and err.value.where is None
        assert text in err.value.one_line() and "\n" not in err.value.one_line()


def test_unknown_names_are_reported_before_a_conflict_and_a_recipe_without_features_says_so() -> None:
    with pytest.raises(ResolveError) as err:
        check_features(Choice(model="org/m", extra_features=("x",), removed_features=("x",)), KNOWN, RECIPE)
    assert err.value.field == "feature" and RECIPE in err.value.one_line()
    with pytest.raises(ResolveError, match="this recipe declares no features"):
        check_features(Choice(model="org/m", removed_features=("x",)), (), RECIPE)
