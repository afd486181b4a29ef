"""Which features a plan turns on: one meaning per spelling, on every surface.

* ``--feature X`` (CLI) and ``feature=X`` (web query): X is turned on *in addition to* the recipe's defaults
  (:attr:`Choice.extra_features`);
* ``--no-feature Y`` and ``no_feature=Y``: Y is turned off (:attr:`Choice.removed_features`);
* a whole set (the web form's ``features=`` checkbox state, a reference case's ``features``) replaces the
  defaults (:attr:`Choice.features`; None: the defaults);
* ``--mode F=M`` / ``mode=F=M`` turns F on in mode M.

:func:`selected_features` is the one computation both the CLI's ``build_plan`` and the web builder reach
(through :func:`launchcard.resolve.resolve`); :func:`check_features` is its bad-input half, which the web also
runs before resolving to answer 422.  Errors name the input by ``field`` (the web's query parameter name,
``feature/no_feature`` for a conflict); the CLI maps each field to its flag (``cli._errors.FLAGS``).
"""

from __future__ import annotations

from collections.abc import Sequence

from launchcard.errors import ResolveError
from launchcard.resolve._choice import Choice, suggest


def check_features(choice: Choice, known: Sequence[str], recipe: str) -> None:
    """ResolveError when ``choice`` names a feature the recipe (``recipe``: its path, for the message) does not
    declare, or both adds and removes one (a mode chosen for a feature turns it on: a removed feature's mode is the
    same conflict)."""
    asked = (("features", choice.features or ()), ("feature", choice.extra_features),
             ("no_feature", choice.removed_features), ("mode", tuple(choice.feature_modes)))
    for field, names in asked:
        for name in names:
            if name not in known:
                raise ResolveError(f"recipe {recipe} has no feature {name!r}", field=field,
                                   fix=suggest(name, list(known)) if known else "this recipe declares no features")
    removed = set(choice.removed_features)
    pairs = (("feature/no_feature", choice.extra_features), ("mode/no_feature", tuple(choice.feature_modes)))
    for field, names in pairs:
        both = next((n for n in names if n in removed), None)
        if both is not None:
            rule = "both added and removed" if field == "feature/no_feature" else \
                "removed, yet given a mode (a mode turns its feature on)"
            raise ResolveError(f"feature {both!r} is {rule}", field=field,
                               fix=f"name {both} in only one of the two")


def selected_features(choice: Choice, known: Sequence[str], recipe: str, defaults: Sequence[str]) -> list[str]:
    """The features ``choice`` turns on, in order: the whole set it gives (else ``defaults``, the recipe's
    defaults for the resolved variant and hardware), then each added one, less each removed one, then each
    feature a mode is chosen for.  Bad input: :func:`check_features`."""
    check_features(choice, known, recipe)
    base = list(choice.features) if choice.features is not None else list(defaults)
    removed = set(choice.removed_features)
    names = [n for n in dict.fromkeys([*base, *choice.extra_features]) if n not in removed]
    return names + [n for n in choice.feature_modes if n not in names]
