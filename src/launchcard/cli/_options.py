"""Options shared by every command that resolves a recipe (resolve, emit, up, ...)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from launchcard.errors import InputError

if TYPE_CHECKING:
    from launchcard.resolve import ResolvedPlan
    from launchcard.sources.vllm_recipes import RecipeRepo

RecipesOpt = Annotated[Optional[Path], typer.Option("--recipes", help="A checkout of vllm-project/recipes.",
                                                    envvar="LAUNCHCARD_RECIPES")]
RevisionOpt = Annotated[Optional[str], typer.Option("--revision", help="Recipes revision for evidence URLs "
                                                    "(default: the checkout's git HEAD).")]
VariantOpt = Annotated[Optional[str], typer.Option("--variant", help="Variant key (default: default).")]
HardwareOpt = Annotated[Optional[str], typer.Option("--hardware", help="Hardware profile id, e.g. h100.")]
StrategyOpt = Annotated[Optional[str], typer.Option("--strategy", help="Serving strategy, e.g. single_node_tp.")]
NodesOpt = Annotated[Optional[int], typer.Option("--nodes", min=1, help="Node count (multi-node strategies).")]
FeatureOpt = Annotated[Optional[list[str]], typer.Option("--feature", help="Turn on a feature (repeatable).")]
NoFeatureOpt = Annotated[Optional[list[str]], typer.Option("--no-feature", help="Turn off a default feature.")]
ModeOpt = Annotated[Optional[list[str]], typer.Option("--mode", help="FEATURE=MODE for a modal feature.")]
KvOpt = Annotated[Optional[str], typer.Option("--kv-offload", help="KV offload option or kv_store id.")]
TaskOpt = Annotated[Optional[str], typer.Option("--task", help="Omni task id or key.")]


def parse_modes(values: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw in values or []:
        name, sep, mode = raw.partition("=")
        if not sep or not name or not mode:
            raise InputError(f"--mode expects FEATURE=MODE, got {raw!r}", where="--mode",
                             fix="write e.g. --mode spec_decoding=mtp")
        out[name.strip()] = mode.strip()
    return out


def open_recipes(recipes: Path | None, revision: str | None) -> RecipeRepo:
    from launchcard.sources.vllm_recipes import load_recipes

    if recipes is None:
        raise InputError("no recipes directory given", where="--recipes",
                         fix="pass --recipes DIR (a checkout of vllm-project/recipes) or set LAUNCHCARD_RECIPES")
    return load_recipes(recipes, revision)


def build_plan(model: str, recipes: Path | None, revision: str | None = None, variant: str | None = None,
               hardware: str | None = None, strategy: str | None = None, nodes: int | None = None,
               feature: list[str] | None = None, no_feature: list[str] | None = None,
               mode: list[str] | None = None, kv_offload: str | None = None, task: str | None = None,
               provenance: bool = True) -> ResolvedPlan:
    """Resolve MODEL with the shared options; defaults are what the recipes builder picks."""
    from launchcard.resolve import Choice, resolve

    repo = open_recipes(recipes, revision)
    features = None
    if no_feature or task:
        _known_choices(repo, model, no_feature or [], task)
    if no_feature:
        from launchcard.resolve._defaults import default_features

        doc = repo.recipe(model)
        base = default_features(doc.data, variant or "default", hardware or "")
        features = tuple(f for f in base if f not in set(no_feature))
    choice = Choice(model=model, variant=variant, hardware=hardware, strategy=strategy, node_count=nodes,
                    features=features, extra_features=tuple(feature or ()), feature_modes=parse_modes(mode),
                    kv_offload=kv_offload, omni_task=task)
    return resolve(repo, choice, provenance=provenance)


def _known_choices(repo: RecipeRepo, model: str, no_feature: list[str], task: str | None) -> None:
    """--no-feature names a feature of the recipe; --task is for omni recipes only."""
    import difflib

    data = repo.recipe(model).data
    data = data if isinstance(data, dict) else {}
    known = list(data.get("features") or {})
    for name in no_feature:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=3, cutoff=0.4)
            raise InputError(f"recipe {model} has no feature {name!r}", where="--no-feature",
                             fix=("did you mean " + ", ".join(close) + "?") if close else
                             ("choose one of: " + ", ".join(known) if known else "this recipe declares no features"))
    tasks = (data.get("meta") or {}).get("tasks") if isinstance(data.get("meta"), dict) else None
    if task is not None and "omni" not in (tasks or []):
        raise InputError(f"--task {task!r} is for omni recipes; {model} is not one (tasks: "
                         f"{', '.join(map(str, tasks or [])) or 'none'})", where="--task", fix="drop --task")
