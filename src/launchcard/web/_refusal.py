"""A library refusal on the web: the line the CLI prints, with the query parameter named where the CLI names its
flag, and the HTTP status of the CLI's exit code.

* exit 2 (bad input: unknown hardware for the recipe, strategy, KV option or variant, a workload longer than the
  context, a GPU without figures, ...) is **422**, as the builder's other query errors;
* exit 1 (a plan that fails its check where there is no answer to give: the predictor's refusal of a plan that will
  not start or has no KV room for one request) is **409**; a plan that resolves with an error verdict is a plan,
  answered 200 with its ``verdict`` (``exit_code`` 1), as ``launchcard resolve --json`` prints it and exits 1.

The library names a wrong input by ``field`` (the CLI spells it with ``cli._errors.FLAGS``) or, in older
messages, by the CLI flag as its location (the resolver's ``where="--hardware"``): :data:`PARAMS` gives the
builder's query parameter for both, so one rule rewrites either.  :func:`query_spelling` is the same table applied
to a finding's text, where a fix names a selection option (``--feature X`` is ``feature=X`` on the web).
"""

from __future__ import annotations

import re
from typing import Any

from launchcard.errors import LaunchcardError

# the builder's query parameter for each input, by the library's field name and by the CLI flag
PARAMS: dict[str, str] = {
    "hardware": "hardware", "--hardware": "hardware", "gpu": "hardware", "--gpu": "hardware",
    "variant": "variant", "--variant": "variant", "strategy": "strategy", "--strategy": "strategy",
    "nodes": "nodes", "--nodes": "nodes", "kv": "kv", "--kv-offload": "kv",
    "features": "features", "feature": "feature", "--feature": "feature", "no_feature": "no_feature",
    "--no-feature": "no_feature", "mode": "mode", "--mode": "mode",
    "feature/no_feature": "feature/no_feature", "mode/no_feature": "mode/no_feature",
    "isl": "isl", "--isl": "isl", "osl": "osl", "--osl": "osl", "concurrency": "concurrency",
    "--concurrency": "concurrency", "dataset": "dataset", "--dataset": "dataset", "endpoint": "endpoint",
    "--endpoint": "endpoint", "q": "q",  # the index's text search
}

# a selection option with its value in a finding's text: `--strategy multi_node_tp`, `--mode spec_decoding=mtp`
_OPTION = re.compile(r"(?<![\w-])(--(?:hardware|variant|strategy|nodes|kv-offload|feature|no-feature|mode)) "
                     r"(?!-)([^\s,;)]+)")


def query_line(exc: LaunchcardError) -> str:
    """The CLI's line for ``exc`` with the query parameter named in place of the flag."""
    param = PARAMS.get(exc.where or "")
    if param is not None:  # the location is the flag itself: the parameter in its place
        return exc.one_line(param)
    return exc.named(PARAMS.get(exc.field or ""))


def status_of(exc: LaunchcardError) -> int:
    """422 for bad input (the CLI's exit 2), 409 for a plan that fails its check (exit 1)."""
    return 409 if exc.exit_code == 1 else 422


def refused(exc: LaunchcardError) -> dict[str, Any]:
    """The ``error`` and ``status`` a builder result carries for a refusal (the route answers with them)."""
    return {"error": query_line(exc), "status": status_of(exc)}


def query_spelling(text: str) -> str:
    """``text`` with each selection option the CLI spells as a flag spelled as the query string spells it."""
    return _OPTION.sub(lambda m: f"{PARAMS[m.group(1)]}={m.group(2)}", text)


def spell_findings(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Verdict findings (JSON) with their message and fix in the query's spelling (:func:`query_spelling`)."""
    return [{**f, "message": query_spelling(f["message"]), "fix": f["fix"] and query_spelling(f["fix"])}
            for f in findings]
