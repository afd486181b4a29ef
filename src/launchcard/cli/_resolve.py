"""``launchcard resolve``: one plan, or a batch of reference cases."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from launchcard.cli._app import app
from launchcard.cli._options import (FeatureOpt, HardwareOpt, KvOpt, ModeOpt, NodesOpt, NoFeatureOpt, RecipesOpt,
                                     JsonOpt, PlanOptions, RevisionOpt, StrategyOpt, TaskOpt, VariantOpt, build_plan,
                                     open_recipes)
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
    as_json: JsonOpt = False,
    check: Annotated[bool, typer.Option("--check", help="Check every command against the engine's captured "
                                        "flags; exit 1 on an error.")] = False,
    engine_version: Annotated[Optional[str], typer.Option("--engine-version", help="vLLM version for --check "
                                                          "and --memory (default: newest captured).")] = None,
    memory: Annotated[bool, typer.Option("--memory", help="Plan GPU memory for the resolved command.")] = False,
    config: Annotated[Optional[Path], typer.Option("--config", help="The model's config.json (for --memory).")] = None,
    safetensors_index: Annotated[Optional[Path], typer.Option("--safetensors-index",
                                                              help="model.safetensors.index.json (for --memory).")] = None,
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
    if (config is not None or safetensors_index is not None) and not memory:
        raise InputError("--config/--safetensors-index are only read with --memory", where="--config",
                         fix="add --memory to plan memory with them, or drop them")
    plan = build_plan(PlanOptions.from_cli(
        model, recipes, revision=revision, variant=variant, hardware=hardware, strategy=strategy, nodes=nodes,
        feature=feature, no_feature=no_feature, mode=mode, kv_offload=kv_offload, task=task,
        provenance=explain or as_json))
    verdict, config = _verdict(plan, recipes, revision, engine_version, memory, config, safetensors_index)
    findings = _check(plan, recipes, revision, engine_version) if check else []
    mem = _memory(plan, config, safetensors_index, engine_version) if memory else []
    if as_json:
        payload = plan.to_json()
        if check:
            import dataclasses

            payload["check"] = [{"role": role, **dataclasses.asdict(f)} for role, f in findings]
        if memory:
            payload["memory"] = [{"role": role, **m.model_dump(mode="json")} for role, m in mem]
        payload["verdict"] = verdict.to_json()
        typer.echo(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
        _exit_on_errors(findings)
        raise typer.Exit(verdict.exit_code)
    from launchcard.cli._explain import plan_text

    typer.echo(plan_text(plan))
    typer.echo("\n" + "\n".join("# " + line for line in verdict.lines()))  # comments: the output stays runnable
    if explain:
        from rich.console import Console

        from launchcard.cli._explain import print_explain

        typer.echo("")
        features = open_recipes(recipes, revision).recipe(plan.model).data.get("features")
        print_explain(Console(), plan, features if isinstance(features, dict) else None)
    if memory:
        from rich.console import Console

        from launchcard.memory import plan_to_text

        console = Console()
        for role, mplan in mem:
            console.print(f"\n[bold]memory plan ({role}, {plan.hardware})[/]")
            console.print(plan_to_text(mplan))
    if check:
        from launchcard.flags import format_finding

        for role, finding in findings:
            typer.echo(f"check {role}: {format_finding(finding)}")
        if not findings:
            typer.echo("check: every command passes the engine's own flag specification")
        _exit_on_errors(findings)
    raise typer.Exit(verdict.exit_code)


def _verdict(plan: Any, recipes: Path | None, revision: str | None, version: str | None, memory: bool,
             config: Path | None, index: Path | None) -> tuple[Any, Path | None]:
    """The plan's verdict; with --memory the config.json is --config, else the corpus hf/ copy."""
    from launchcard.check import check_plan, corpus_config

    repo = open_recipes(recipes, revision)
    if memory and config is None:
        config = corpus_config(plan.model_id, repo.root)
        if config is None:
            raise InputError(f"--memory needs the model's config.json (none for {plan.model_id} in the corpus hf/)",
                             where="--config", fix="pass --config path/to/config.json (and --safetensors-index "
                             "for exact weight bytes)")
    return check_plan(plan, config=config, engine_version=version, recipes=repo, memory=memory,
                      safetensors_index=index), config


def _check(plan: Any, recipes: Path | None, revision: str | None, version: str | None) -> list[tuple[str, Any]]:
    from launchcard.check import distinct_roles, role_of
    from launchcard.flags import check_argv
    from launchcard.resolve._context import as_dict

    repo = open_recipes(recipes, revision)
    model = as_dict(repo.recipe(plan.model).data.get("model"))
    out = []
    for cmd in distinct_roles(plan.commands):
        for finding in check_argv(list(cmd.argv), engine="vllm", version=version,
                                  min_version=model.get("min_vllm_version"),
                                  nightly_required=bool(model.get("nightly_required"))):
            out.append((role_of(cmd), finding))
    return out


def _memory(plan: Any, config: Path | None, index: Path | None, version: str | None) -> list[tuple[str, Any]]:
    from launchcard.check import distinct_roles, role_of
    from launchcard.memory import plan_for_argv

    return [(role_of(cmd), plan_for_argv(list(cmd.argv), config, gpu=plan.hardware,
                                       gpus_per_node=plan.gpus_per_node, safetensors_index=index,
                                       vllm_version=version))
            for cmd in distinct_roles(plan.commands)]


def _exit_on_errors(findings: list[tuple[str, Any]]) -> None:
    from launchcard.flags import has_errors

    if findings and has_errors([f for _, f in findings]):
        raise typer.Exit(1)


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
