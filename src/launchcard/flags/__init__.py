"""Version-aware flag validation against the engines' own argument parsers.

``capture`` (run inside an engine's environment) writes a JSON spec of the
engine's server parser; ``check_argv`` checks a launch command against the
shipped specs offline (the specs themselves: :mod:`launchcard.flagspec`).
Standard library only, so checking starts fast.
"""

from launchcard.flags._check import (
    ARGPARSE,
    RECIPE,
    STARTUP,
    Finding,
    check_argv,
    check_env,
    check_with_spec,
    derive_history,
    flag_history,
    format_finding,
    has_errors,
    split_command,
    verdict,
    verdicts,
)
from launchcard.flags._drift import commands_from_cards, drift, summary_line, to_markdown
from launchcard.flags._ranges import Range, env_ranges, flag_ranges
from launchcard.flags._successors import Successor, no_successor, successor

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
