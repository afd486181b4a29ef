"""Rendering a resolved plan for people: commands, then why each token is there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from launchcard.resolve import Command, Origin, ResolvedPlan


def _anchor(origin: Origin) -> str:
    ev = origin.evidence
    if ev is None:
        return "(computed)" if origin.layer in ("parallelism", "pd_layout") else "(your choice)"
    return f"{ev.path}#L{ev.line}" if ev.line else (ev.path or "")


def _overrides(origins: tuple[Origin, ...]) -> str:
    return "; ".join(f"{o.label()} {_anchor(o)}" for o in origins)


def plan_text(plan: ResolvedPlan) -> str:
    """The shell form of every command of the plan, role by role."""
    from launchcard.resolve._render import shell_command

    blocks = []
    for cmd in plan.commands:
        title = _title(plan, cmd)
        env = " ".join(f"{k}={_q(v)}" for k, v in cmd.env_str.items())
        text = shell_command(list(cmd.argv))
        if env:
            text = f"{env} \\\n{text}" if len(env) < 100 else "\n".join(
                f"export {k}={_q(v)}" for k, v in cmd.env_str.items()) + "\n" + text
        blocks.append(f"# {title}\n{text}" if len(plan.commands) > 1 or plan.router else text)
    if plan.router:
        blocks.append(f"# router ({plan.router.install or ''})\n{plan.router.command}")
    return "\n\n".join(blocks)


def _q(value: str) -> str:
    from launchcard.resolve._render import quote

    return quote(value)


def _title(plan: ResolvedPlan, cmd: Command) -> str:
    if cmd.role in ("head", "worker"):
        return f"node rank {cmd.node_rank} ({'head' if cmd.node_rank == 0 else 'worker'})"
    if cmd.role == "instance":
        return f"instance node rank {cmd.node_rank}"
    return cmd.role


def print_explain(console: Console, plan: ResolvedPlan) -> None:
    from rich.table import Table

    console.print(f"[bold]{plan.model}[/] variant [bold]{plan.variant}[/] on [bold]{plan.hardware}[/] "
                  f"({plan.gpus_per_node} GPUs/node × {plan.node_count}), strategy [bold]{plan.strategy}[/], "
                  f"deploy type {plan.deploy_type}")
    console.print(f"image: {plan.docker_image}   served checkpoint: {plan.model_id}")
    if plan.features:
        modes = ", ".join(f"{k}={v}" for k, v in plan.feature_modes.items())
        console.print(f"features: {', '.join(plan.features)}" + (f" (modes: {modes})" if modes else ""))
    if plan.source and plan.source.sha256:
        console.print(f"recipe: {plan.source.url}  sha256 {plan.source.sha256[:16]}…")
    seen: set[tuple[Any, ...]] = set()
    for cmd in plan.commands:
        key = tuple(u.flag for u in cmd.units), tuple(cmd.env)
        if cmd.role in ("worker", "instance") and cmd.node_rank and key in seen:
            continue
        seen.add(key)
        table = Table(title=f"{_title(plan, cmd)}: why each argument is there", show_lines=False,
                      title_justify="left")
        for col in ("argument", "value", "layer", "source line", "overrides"):
            table.add_column(col, overflow="fold")
        for unit in cmd.units:
            table.add_row(unit.flag or "", unit.value or "", unit.origin.label(), _anchor(unit.origin),
                          _overrides(unit.overrides))
        console.print(table)
        if cmd.env_entries:
            etable = Table(title=f"{_title(plan, cmd)}: environment", title_justify="left")
            for col in ("variable", "value", "layer", "source line", "overrides"):
                etable.add_column(col, overflow="fold")
            for entry in cmd.env_entries:
                etable.add_row(entry.name, str(entry.value), entry.origin.label(), _anchor(entry.origin),
                               _overrides(entry.overrides))
            console.print(etable)
    for warning in plan.warnings:
        console.print(f"[yellow]warning:[/] {warning}")
