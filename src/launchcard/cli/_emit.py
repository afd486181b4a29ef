"""``launchcard emit``: launch artifacts (shell, docker, compose, kubernetes, truss) for a plan."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from launchcard.cli._app import app
from launchcard.cli._options import (
    FeatureOpt,
    HardwareOpt,
    KvOpt,
    ModeOpt,
    NodesOpt,
    NoFeatureOpt,
    PlanOptions,
    RecipesOpt,
    RevisionOpt,
    StrategyOpt,
    TaskOpt,
    VariantOpt,
    build_plan,
    open_recipes,
)

_TARGETS = "shell, docker, compose, kubernetes, truss"


@app.command()
def emit(
    model: Annotated[str, typer.Argument(help="Recipe id, e.g. zai-org/GLM-5.3-Flash.")],
    target: Annotated[str, typer.Option("--target", "-t", help=f"One of: {_TARGETS}.")],
    recipes: RecipesOpt = None,
    revision: RevisionOpt = None,
    variant: VariantOpt = None,
    hardware: HardwareOpt = None,
    strategy: StrategyOpt = None,
    nodes: NodesOpt = None,
    feature: FeatureOpt = None,
    no_feature: NoFeatureOpt = None,
    mode: ModeOpt = None,
    kv_offload: KvOpt = None,
    task: TaskOpt = None,
    image: Annotated[str | None, typer.Option("--image", help="Container image to use instead of the "
                                                 "plan's, e.g. with a pinned @sha256 digest.")] = None,
    weights_revision: Annotated[str | None, typer.Option("--weights-revision", help="Pin the model "
                                                            "weights to this revision (truss).")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the files into this folder "
                                                "(default: print them).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Write the artifacts even when the plan's verdict has "
                                        "an error finding.")] = False,
) -> None:
    """Write launch artifacts for a resolved recipe; every file says how it was made and the plan's verdict."""
    from launchcard.check import check_plan
    from launchcard.emit import emit as emit_files
    from launchcard.emit import write_files
    from launchcard.emit._common import check_image

    if image is not None:
        check_image(image)
    plan = build_plan(PlanOptions.from_cli(
        model, recipes, revision=revision, variant=variant, hardware=hardware, strategy=strategy, nodes=nodes,
        feature=feature, no_feature=no_feature, mode=mode, kv_offload=kv_offload, task=task))
    verdict = check_plan(plan, recipes=open_recipes(recipes, revision))
    if not verdict.ok and not force:
        first = verdict.errors[0]
        more = f" (+{len(verdict.errors) - 1} more error(s))" if len(verdict.errors) > 1 else ""
        typer.echo(f"launchcard: refused: the plan will not start or does not fit: {first.one_line()}{more}; "
                   "`launchcard resolve` with the same options lists every finding; --force writes anyway", err=True)
        raise typer.Exit(1)
    files = emit_files(plan, target, card_name=plan.model, image=image, revision=weights_revision, verdict=verdict)
    if out is not None:
        for path in write_files(files, out):
            typer.echo(f"wrote {path}")
        return
    if len(files) == 1:
        typer.echo(next(iter(files.values())), nl=False)
        return
    for name, text in files.items():
        typer.echo(f"# ===== {name} =====")
        typer.echo(text)
