"""Rendering a resolved plan for people: commands, then why each token is there."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from launchcard.explain import FlagNote
    from launchcard.resolve import Command, Origin, ResolvedPlan


def _overrides(origins: tuple[Origin, ...]) -> str:
    return "; ".join(f"{o.label()} {o.credit()}" for o in origins)


def plan_text(plan: ResolvedPlan) -> str:
    """The shell form of every command of the plan, role by role."""
    from launchcard.resolve import command_blocks

    blocks = command_blocks(plan)
    if len(blocks) == 1:
        return blocks[0][1]
    return "\n\n".join(f"# {title}\n{text}" for title, text in blocks)


def _title(plan: ResolvedPlan, cmd: Command) -> str:
    from launchcard.resolve import command_title

    return command_title(plan, cmd)


# "source line": the line holding the value (or how it was derived); "flag line": the line naming the flag
# where that is another line (a strategy's parallel_flag, a flag and its value written as two list items)
_COLUMNS = ("argument", "value", "what it does", "layer", "source line", "flag line", "overrides")
_ENV_COLUMNS = ("variable", "value", "layer", "source line", "overrides")


def what_it_does(note: FlagNote) -> str:
    """A flag's explanation, then its value's, each with where it was read (the recipe's key, the engine's
    captured --help, the engine source line describing the value)."""
    return note.text()


def _note(flag: str, value: str | None, recipe: Mapping[str, str], where: Mapping[str, str],
          engine: str = "vllm") -> FlagNote:
    from launchcard.explain import engine_spec, explain_flag

    # the plan's own engine: a derived SGLang plan's flags read SGLang's help and SGLang's value docs
    return explain_flag(flag, value, spec=engine_spec(engine), recipe=recipe, recipe_where=where)


def explain_json(plan: ResolvedPlan, features: Mapping[str, object] | None = None) -> list[dict[str, object]]:
    """``resolve --explain --json``: what each argument of each command does, the same notes the tables show
    (``what``/``cited`` for the flag, ``value_what``/``value_cited``/``value_url`` for its value)."""
    from launchcard.explain import recipe_flag_descriptions

    recipe, where = recipe_flag_descriptions(features or {}, dict(plan.feature_modes))
    out: list[dict[str, object]] = []
    for i, cmd in enumerate(plan.commands):
        for unit in cmd.units:
            if unit.flag:
                n = _note(unit.flag, unit.value, recipe, where, plan.engine)
                out.append({"command": i, "role": cmd.role, "flag": n.flag, "value": n.value, "what": n.what,
                            "what_source": n.source, "cited": n.cited, "value_what": n.value_what,
                            "value_source": n.value_source, "value_cited": n.value_cited, "value_url": n.value_url})
    return out


def _tables(plan: ResolvedPlan, features: Mapping[str, object] | None = None,
            ) -> list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]]:
    """(title, columns, rows) of every table --explain shows, commands repeated per node shown once.

    ``features`` (the recipe's ``features`` mapping) lets a flag's "what it does" use the recipe's own words."""
    from launchcard.explain import recipe_flag_descriptions

    recipe, where = recipe_flag_descriptions(features or {}, dict(plan.feature_modes))
    out: list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]] = []
    seen: set[tuple[object, ...]] = set()
    for cmd in plan.commands:
        key = tuple(u.flag for u in cmd.units), tuple(cmd.env)
        if cmd.role in ("worker", "instance") and cmd.node_rank and key in seen:
            continue
        seen.add(key)
        out.append((f"{_title(plan, cmd)}: why each argument is there", _COLUMNS, [
            (unit.flag or "", unit.value or "",
             what_it_does(_note(unit.flag, unit.value, recipe, where, plan.engine)) if unit.flag else "",
             unit.origin.label(), unit.origin.credit(), unit.origin.flag_credit(), _overrides(unit.overrides))
            for unit in cmd.units]))
        if cmd.env_entries:
            out.append((f"{_title(plan, cmd)}: environment", _ENV_COLUMNS, [
                (e.name, str(e.value), e.origin.label(), e.origin.credit(), _overrides(e.overrides))
                for e in cmd.env_entries]))
    return out


def _header(plan: ResolvedPlan) -> list[str]:
    from launchcard.check import plan_facts

    what = (f"on {plan.hardware}: {plan.derived}, engine {plan.engine}" if plan.derived
            else f"variant {plan.variant} on {plan.hardware}, strategy {plan.strategy}")
    lines = [f"{plan.model} {what}, deploy type {plan.deploy_type}",
             plan_facts(plan).gpus_line(),
             f"image: {plan.docker_image}   served checkpoint: {plan.model_id}"]
    if plan.features:
        modes = ", ".join(f"{k}={v}" for k, v in plan.feature_modes.items())
        lines.append(f"features: {', '.join(plan.features)}" + (f" (modes: {modes})" if modes else ""))
    if plan.source and plan.source.sha256:
        lines.append(f"recipe: {plan.source.url}  sha256 {plan.source.sha256[:16]}…")
    return lines


def explain_text(plan: ResolvedPlan, features: Mapping[str, object] | None = None) -> str:
    """--explain as plain text: tab-separated rows, every path and URL whole (copyable, greppable)."""
    lines = _header(plan)
    for title, columns, rows in _tables(plan, features):
        lines += ["", f"# {title}", "\t".join(columns)]
        lines += ["\t".join(row) for row in rows]
    lines += [f"warning: {w}" for w in plan.warnings]
    return "\n".join(lines)


def print_explain(console: Console, plan: ResolvedPlan, features: Mapping[str, object] | None = None) -> None:
    """Tables on a terminal; off a terminal (pipe, file) plain rows, since folding would cut URLs mid-word."""
    if not console.is_terminal:
        console.file.write(explain_text(plan, features) + "\n")
        return
    from rich.table import Table

    for line in _header(plan):  # the same lines as off a terminal (one wording of the plan's facts)
        console.print(line, markup=False, highlight=False)
    for title, columns, rows in _tables(plan, features):
        table = Table(title=title, show_lines=False, title_justify="left")
        for col in columns:
            table.add_column(col, overflow="fold")
        for row in rows:
            table.add_row(*row)
        console.print(table)
    for warning in plan.warnings:
        console.print(f"[yellow]warning:[/] {warning}")
