"""Version-aware flag validation against the engines' own argument parsers.

``capture`` (run inside an engine's environment) writes a JSON spec of the
engine's server parser; ``check_argv`` checks a launch command against the
shipped specs offline (the specs themselves: :mod:`launchcard.flagspec`).
Standard library only, so checking starts fast.  The corpus drift report (``drift``, ``commands_from_cards``,
``summary_line``, ``to_markdown``) is loaded on first use (PEP 562): a card's verdicts do not need it.
"""

from typing import TYPE_CHECKING, Any

from launchcard.flags._check import check_argv, check_with_spec, has_errors, split_command, verdict, verdicts
from launchcard.flags._env import check_env
from launchcard.flags._finding import ARGPARSE, RECIPE, STARTUP, Finding, format_finding
from launchcard.flags._ranges import Range, env_ranges, flag_ranges
from launchcard.flags._successors import Successor, no_successor, successor
from launchcard.flags._unknown import derive_history, flag_history

_LAZY: dict[str, tuple[str, str]] = {
    "commands_from_cards": ("_drift", "commands_from_cards"),
    "drift": ("_drift", "drift"),
    "summary_line": ("_drift", "summary_line"),
    "to_markdown": ("_drift", "to_markdown"),
}

if TYPE_CHECKING:  # pragma: no cover
    # `X as X`: explicit re-exports (what type checkers and linters see instead of __getattr__)
    from launchcard.flags._drift import commands_from_cards as commands_from_cards
    from launchcard.flags._drift import drift as drift
    from launchcard.flags._drift import summary_line as summary_line
    from launchcard.flags._drift import to_markdown as to_markdown


def __getattr__(name: str) -> Any:  # PEP 562 lazy re-export; Any: the attribute is one of __all__
    entry = _LAZY.get(name)
    if entry is None:
        raise AttributeError(f"module 'launchcard.flags' has no attribute {name!r}")
    import importlib

    module, attr = entry
    return getattr(importlib.import_module(f"launchcard.flags.{module}"), attr)


__all__ = [
    "ARGPARSE",
    "RECIPE",
    "STARTUP",
    "Finding",
    "Range",
    "Successor",
    "check_argv",
    "check_env",
    "check_with_spec",
    "commands_from_cards",
    "derive_history",
    "drift",
    "env_ranges",
    "flag_history",
    "flag_ranges",
    "format_finding",
    "has_errors",
    "no_successor",
    "split_command",
    "successor",
    "summary_line",
    "to_markdown",
    "verdict",
    "verdicts",
]
