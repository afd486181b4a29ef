"""``launchcard emit``: launch artifacts (shell, docker, compose, kubernetes, truss) for a plan."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from launchcard.cli._app import app
from launchcard.cli._options import (
    ConfigOpt,
    CorpusOpt,
    EngineOpt,
    FeatureOpt,
    GpusPerNodeOpt,
    HardwareOpt,
    KvOpt,
    MaxModelLenOpt,
    ModeOpt,
    NodesOpt,
    NoFeatureOpt,
    PlanOptions,
    RecipesOpt,
    RevisionOpt,
    StrategyOpt,
    TaskOpt,
    VariantOpt,
    checked_revision,
    open_recipes,
    plan_and_config,
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
    cache_size: Annotated[str | None, typer.Option("--cache-size", help="kubernetes: the model-cache volume "
                                                      "per GPU pod, a storage quantity (default 1Ti).")] = None,
    weights_revision: Annotated[str | None, typer.Option("--weights-revision", help="Pin the model "
                                                            "weights to this revision (truss).")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the files into this folder "
                                                "(default: print them).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Write the artifacts even when the plan's verdict has "
                                        "an error finding.")] = False,
    corpus: CorpusOpt = None,
    env: Annotated[str | None, typer.Option("--env", help="With --corpus: the card environment to emit, by source "
                                            "kind (provider-preset, vllm-recipes ...) or index as `card` lists "
                                            "them (truss target: a whole preset with README).")] = None,
    concurrency: Annotated[int | None, typer.Option("--concurrency", min=1, help="--env: requests Baseten sends "
                                                    "at once (predict_concurrency).")] = None,
    extra_args: Annotated[str | None, typer.Option("--extra-args", help="--env: engine flags to add or replace, "
                                                   "as one shell-quoted string.")] = None,
    parser: Annotated[list[str] | None, typer.Option("--parser", help="--env: reasoning=NAME or tool-call=NAME "
                                                     "(repeatable).")] = None,
    config: ConfigOpt = None,
    engine: EngineOpt = "vllm",
    max_model_len: MaxModelLenOpt = None,
    gpus_per_node: GpusPerNodeOpt = None,
) -> None:
    """Write launch artifacts for a resolved recipe or a card environment; every file says how it was made and
    the verdict it was judged with."""
    if env is not None and config is not None:
        from launchcard.check import load_config, locate_config

        config_json = dict(load_config(locate_config(config)).raw)
    else:
        config_json = None
    if env is not None:
        if cache_size is not None:
            from launchcard.errors import InputError

            raise InputError("--cache-size sizes a resolved plan's kubernetes cache; a card environment (--env) is "
                             "emitted as its source wrote it", where="--cache-size", fix="drop --cache-size")
        _emit_env(model, target, corpus, env, hardware=hardware, image=image, weights_revision=weights_revision,
                  concurrency=concurrency, extra_args=extra_args, parsers=parser or [], out=out, force=force,
                  revision=revision, config_json=config_json)
        return
    if corpus is not None or concurrency is not None or extra_args is not None or parser:
        from launchcard.errors import InputError

        raise InputError("--corpus, --concurrency, --extra-args and --parser go with --env", where="--env",
                         fix="add --env KIND|INDEX (e.g. --env provider-preset), or drop them")
    from launchcard.check import check_plan
    from launchcard.emit import check_image, write_files
    from launchcard.emit import emit as emit_files

    if image is not None:
        check_image(image)
    plan, config_path = plan_and_config(PlanOptions.from_cli(
        model, recipes, revision=revision, variant=variant, hardware=hardware, strategy=strategy, nodes=nodes,
        feature=feature, no_feature=no_feature, mode=mode, kv_offload=kv_offload, task=task),
        config, engine=engine, max_model_len=max_model_len, gpus_per_node=gpus_per_node)
    verdict = check_plan(plan, config=config_path,
                         recipes=None if plan.derived else open_recipes(recipes, revision))
    if not verdict.ok and not force:
        first = verdict.errors[0]
        more = f" (+{len(verdict.errors) - 1} more error(s))" if len(verdict.errors) > 1 else ""
        typer.echo(f"launchcard: refused: the plan will not start or does not fit: {first.one_line()}{more}; "
                   "`launchcard resolve` with the same options lists every finding; --force writes anyway", err=True)
        raise typer.Exit(1)
    files = emit_files(plan, target, card_name=plan.model, image=image, revision=weights_revision, verdict=verdict,
                       cache_size=cache_size)
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


def _emit_env(model: str, target: str, corpus: Path | None, key: str, *, hardware: str | None, image: str | None,
              weights_revision: str | None, concurrency: int | None, extra_args: str | None, parsers: list[str],
              out: Path | None, force: bool, revision: str | None,
              config_json: dict[str, object] | None = None) -> None:
    """A whole provider preset (config.yaml + README.md) from one environment of the model's card."""
    import shlex

    from launchcard.cli._card import recipe_texts_from
    from launchcard.emit import (
        PresetOptions,
        check_image,
        check_weights_revision,
        emit_preset,
        parse_parser_overrides,
        select_env,
        write_files,
    )
    from launchcard.errors import InputError
    from launchcard.merge import build_corpus

    if target != "truss":
        raise InputError(f"--env emits a provider preset; target {target!r} is not one", where="--target",
                         fix="use --target truss (or drop --env and pass --recipes for the other targets)")
    if corpus is None:
        raise InputError("--env needs --corpus", where="--corpus", fix="pass --corpus DIR (or set LAUNCHCARD_CORPUS)")
    if image is not None:
        check_image(image)
    if weights_revision is not None:
        check_weights_revision(weights_revision)
    try:
        extra = tuple(shlex.split(extra_args or ""))
    except ValueError as exc:
        raise InputError(f"--extra-args is not shell-quoted text ({exc})", where="--extra-args",
                         fix="quote the flags as you would in a shell") from None
    options = PresetOptions(concurrency=concurrency, extra_args=extra, parsers=parse_parser_overrides(parsers),
                            image=image, weights_revision=weights_revision)
    revision = checked_revision(corpus / "vllm-recipes", revision, model)
    found = build_corpus(corpus, models=[model], hardware=hardware, revision=revision).card(model)
    assert found is not None  # build_corpus raised UnknownModelError otherwise
    card, model = found, found.model
    index, chosen = select_env(card, key)
    files, verdict = emit_preset(card, chosen, options, index=index, recipe=recipe_texts_from(corpus, model),
                                 config_json=config_json or _corpus_config(corpus, chosen.checkpoint or model))
    if not verdict.ok and not force:
        first = verdict.errors[0]
        typer.echo(f"launchcard: refused: the preset will not start or does not fit: {first.one_line()}; "
                   "--force writes anyway", err=True)
        raise typer.Exit(1)
    if out is not None:
        for path in write_files(files, out):
            typer.echo(f"wrote {path}")
        return
    for name, text in files.items():
        typer.echo(f"# ===== {name} =====")
        typer.echo(text)


def _corpus_config(corpus: Path, repo: str) -> dict[str, object] | None:
    """The checkpoint's config.json from <corpus>/hf/, for the verdict's model-split and memory rules."""
    return _read_config(corpus / "hf" / repo / "config.json")


def _read_config(file: Path) -> dict[str, object] | None:
    import json

    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
