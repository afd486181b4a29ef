"""Shell target: one bash script per process that exports the env and execs the argv.

Placeholders stay shell variables the user exports (``HEAD_IP``, ``IFACE_NAME``,
``PREFILL_NODE_1`` ...); each script checks they are set before starting.
Secrets (``HF_TOKEN``) are never written: the process inherits them.
"""

from __future__ import annotations

from collections.abc import Mapping

from launchcard.emit import _sh
from launchcard.emit._common import env_items, units
from launchcard.emit._header import comment_safe, header
from launchcard.resolve import ResolvedPlan


def file_name(unit_name: str, single: bool) -> str:
    return "launch.sh" if single else f"launch-{unit_name}.sh"


def emit_shell(plan: ResolvedPlan, *, card_name: str | None, inputs: Mapping[str, object] | None,
               **_: object) -> dict[str, str]:
    all_units = units(plan)
    single = len(all_units) == 1
    files: dict[str, str] = {}
    for unit in all_units:
        notes = [f"process: {unit.name}" + (f" (node rank {unit.command.node_rank})"
                                             if unit.command and unit.command.node_rank is not None else ""),
                 "HF_TOKEN (if the model is gated) is read from your environment, never stored here."]
        comments: list[str] = []
        if unit.command is None and plan.router and plan.router.install:
            comments.append("# install the router first: " + comment_safe(plan.router.install))
        env = env_items(unit.command) if unit.command else []
        text = _sh.script(header(plan, "shell", card_name=card_name, inputs=inputs, notes=notes),
                          env=env, argv=unit.argv, lead=_sh.lead(unit.argv), comments=comments,
                          where=f"plan.commands[{unit.name}].env")
        files[file_name(unit.name, single)] = text
    return files
