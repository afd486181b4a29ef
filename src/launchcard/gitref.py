"""What git accepts as the name of a revision (a commit id, branch or tag), read once for every option that takes
one: ``--revision`` (the recipes commit written into evidence URLs), ``sync --revision`` / a sync config's
``revision`` (fetched as ``+REV:ref``), ``emit --weights-revision`` (the Hub's git revision)."""

from __future__ import annotations

import re

# what `git check-ref-format` refuses in a ref name (git/Documentation/git-check-ref-format.adoc rules 1, 3-10:
# rule 1's dot and .lock apply to every slash-separated component); a commit id passes
_REF_BAD = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|^@$|^/|(^|/)\.|[/.]$|\.lock(/|$)|//")

# the characters to name in a refusal, after the words "no spaces, '..'"
REF_RULE = "a commit id, branch or tag (no spaces, '..' or ~^:?*[\\)"


def is_ref_name(revision: str) -> bool:
    """Whether git could name a commit, branch or tag ``revision`` (not empty, no character a ref name refuses)."""
    return bool(revision) and _REF_BAD.search(revision) is None
