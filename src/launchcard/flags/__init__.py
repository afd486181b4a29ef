"""Version-aware flag validation against the engines' own argument parsers.

``capture`` (run inside an engine's environment) writes a JSON spec of the
engine's server parser; ``check_argv`` checks a launch command against the
shipped specs offline.  Standard library only, so checking starts fast.
"""

from launchcard.flags._check import (
    ARGPARSE,
    RECIPE,
    STARTUP,
    Finding,
    check_argv,
    check_with_spec,
    derive_history,
    flag_history,
    format_finding,
    has_errors,
    split_command,
    verdict,
    verdicts,
)
from launchcard.flags._dialect import human_readable_int, human_readable_int_or_auto, merge_json
from launchcard.flags._drift import commands_from_cards, drift, summary_line, to_markdown
from launchcard.flags._ranges import Range, env_ranges, flag_ranges
from launchcard.flags._spec import FlagSpec, Option, load_spec_file, shipped_index, shipped_spec, version_key

__all__ = [
    "ARGPARSE",
    "RECIPE",
    "STARTUP",
    "Finding",
    "FlagSpec",
    "Option",
    "Range",
    "check_argv",
    "check_with_spec",
    "commands_from_cards",
    "derive_history",
    "drift",
    "env_ranges",
    "flag_history",
    "flag_ranges",
    "format_finding",
    "has_errors",
    "human_readable_int",
    "human_readable_int_or_auto",
    "load_spec_file",
    "merge_json",
    "shipped_index",
    "shipped_spec",
    "split_command",
    "summary_line",
    "to_markdown",
    "verdict",
    "verdicts",
    "version_key",
]
