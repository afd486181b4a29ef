"""``launchcard resolve``: one plan, or a batch of reference cases."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from launchcard.cli._app import app
from launchcard.cli._options import (FeatureOpt, HardwareOpt, KvOpt, ModeOpt, NodesOpt, NoFeatureOpt, RecipesOpt,
                                     RevisionOpt, StrategyOpt, TaskOpt, VariantOpt, build_plan, open_recipes)
from launchcard.errors import InputError


@app.command()
def resolve(
    model: Annotated[Optional[str], typer.Argument(help="Recipe id, e.g. zai-org/GLM-5.3-Flash.")] = None,
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
    explain: Annotated[bool, typer.Option("--explain", help="Add where each flag came from.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result object as JSON.")] = False,
    cases: Annotated[Optional[Path], typer.Option("--cases", help="Batch: JSONL of reference cases.")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Batch: write results here (default stdout).")] = None,
) -> None:
    """Resolve the launch command of a recipe, as the recipes builder would."""
    if cases is not None:
        _batch(cases, recipes, revision, out)
        return
    if model is None:
        raise InputError("missing MODEL", where="resolve", fix="pass a recipe id such as zai-org/GLM-5.3-Flash, "
                         "or --cases FILE for a batch")
    plan = build_plan(model, recipes, revision, variant, hardware, strategy, nodes, feature, no_feature, mode,
                      kv_offload, task, provenance=explain or as_json)
    if as_json:
        typer.echo(json.dumps(plan.model_dump(mode="json"), indent=2, ensure_ascii=False))
        return
    from launchcard.cli._explain import plan_text

    typer.echo(plan_text(plan))
    if explain:
        from rich.console import Console

        from launchcard.cli._explain import print_explain

        typer.echo("")
        print_explain(Console(), plan)
    else:
        for warning in plan.warnings:
            typer.echo(f"warning: {warning}", err=True)


def _batch(cases: Path, recipes: Path | None, revision: str | None, out: Path | None) -> None:
    from launchcard.errors import LaunchcardError
    from launchcard.resolve import resolve_case

    repo = open_recipes(recipes, revision)
    try:
        lines = cases.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read cases file ({exc})", where=str(cases), fix="pass a UTF-8 JSONL file") from None
    sink = open(out, "w", encoding="utf-8") if out else sys.stdout  # noqa: SIM115
    try:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            record = _one_case(repo, line, f"{cases}:{number}", resolve_case, LaunchcardError)
            sink.write(json.dumps(record, ensure_ascii=False) + "\n")
    finally:
        if out:
            sink.close()


def _one_case(repo: Any, line: str, where: str, resolve_case: Any, error_type: type[Exception]) -> dict[str, Any]:
    try:
        case = json.loads(line)
    except json.JSONDecodeError as exc:
        return {"id": None, "error": f"{where}: not JSON ({exc.msg}); write one JSON object per line"}
    if not isinstance(case, dict) or "model" not in case:
        return {"id": case.get("id") if isinstance(case, dict) else None,
                "error": f"{where}: a case needs 'id', 'model' and 'inputs'"}
    try:
        return {"id": case.get("id"), "result": resolve_case(repo, case)}
    except error_type as exc:
        return {"id": case.get("id"), "error": str(exc)}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return {"id": case.get("id"), "error": f"{where}: cannot resolve this case ({type(exc).__name__}: {exc})"}
