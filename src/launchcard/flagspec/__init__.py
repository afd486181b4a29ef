"""The engines' captured argument parsers: typed flag specs and the argv rewriting done before argparse.

The bottom of the command-line stack: :mod:`launchcard.argv` reads a command
through these specs and :mod:`launchcard.flags` checks it against them.
Standard library only, so reading a command starts fast.
"""

from launchcard.flagspec._dialect import Rewritten, human_readable_int, human_readable_int_or_auto, merge_json, rewrite
from launchcard.flagspec._release import ReleaseKey, final_release, release_key, release_numbers
from launchcard.flagspec._shipped import (
    ENGINE_NAMES,
    default_release,
    default_release_note,
    packaged_json,
    shipped_index,
    shipped_spec,
    shipped_specs,
    write_pack,
)
from launchcard.flagspec._spec import (
    SCHEMA,
    FlagSpec,
    Option,
    deprecated_by_help,
    spec_from_dict,
    version_key,
)

__all__ = [
    "ENGINE_NAMES",
    "SCHEMA",
    "FlagSpec",
    "Option",
    "ReleaseKey",
    "Rewritten",
    "default_release",
    "default_release_note",
    "deprecated_by_help",
    "final_release",
    "human_readable_int",
    "human_readable_int_or_auto",
    "merge_json",
    "packaged_json",
    "release_key",
    "release_numbers",
    "rewrite",
    "shipped_index",
    "shipped_spec",
    "shipped_specs",
    "spec_from_dict",
    "version_key",
    "write_pack",
]
