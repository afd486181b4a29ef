"""``launchcard plan``: the best plan the sources allow on N GPUs for a workload under an SLO."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from launchcard.cli._app import app
from launchcard.cli._options import (
    AcceptanceOpt,
    ConcurrencyOpt,
    ConfigOpt,
    DatasetOpt,
    EndpointOpt,
    EngineOpt,
    HardwareFiguresOpt,
    IslOpt,
    JsonOpt,
    MaxModelLenOpt,
    Mxfp4BackendOpt,
    NoGpuP2pOpt,
    NumRequestsOpt,
    OslOpt,
    PrefixHitOpt,
    RangeRatioOpt,
    RateOpt,
    RecipesOpt,
    RevisionOpt,
    hardware_figures,
    workload_json,
    workload_lengths,
)
from launchcard.errors import InputError

if TYPE_CHECKING:
    from launchcard.plansearch import Option, SearchResult, Slo
    from launchcard.predict import Workload
    from launchcard.resolve import ResolvedPlan
    from launchcard.sources.vllm_recipes import RecipeRepo


@app.command()
def plan(
    model: Annotated[str, typer.Argument(help="Recipe id or Hugging Face model id (with --config).")],
    gpu: Annotated[str, typer.Option("--gpu", help="Accelerator from the hardware catalog.")],
    gpus: Annotated[int, typer.Option("--gpus", help="GPUs to plan for (all of them are used).")],
    slo: Annotated[str, typer.Option("--slo", help="ttft=MS,tpot=MS (mean TTFT and TPOT limits; one may be left "
                                                   "out).")],
    isl: IslOpt = None,
    osl: OslOpt = None,
    dataset: DatasetOpt = None,
    concurrency: ConcurrencyOpt = None,
    rate: RateOpt = None,
    num_requests: NumRequestsOpt = None,
    prefix_hit: PrefixHitOpt = 0.0,
    acceptance: AcceptanceOpt = None,
    range_ratio: RangeRatioOpt = 0.0,
    endpoint: EndpointOpt = "completions",
    recipes: RecipesOpt = None,
    corpus: Annotated[Path | None, typer.Option("--corpus", help="Also search the checkpoints the model's launch "
                                                "card lists (built from this corpus folder), each with its own "
                                                "config.json.")] = None,
    revision: RevisionOpt = None,
    config: ConfigOpt = None,
    gpus_per_node: Annotated[int | None, typer.Option("--gpus-per-node", min=1, help="Default: the catalog's node "
                                                                                     "profile of --gpu.")] = None,
    engine: EngineOpt = "vllm",
    engine_version: Annotated[str | None, typer.Option("--engine-version", help="vLLM release for the memory "
                                                                                 "accounting (--engine sglang: the "
                                                                                 "SGLang release whose parser checks "
                                                                                 "the flags).")] = None,
    max_model_len: MaxModelLenOpt = None,
    mxfp4_backend: Mxfp4BackendOpt = None,
    hardware_figures_file: HardwareFiguresOpt = None,
    no_gpu_p2p: NoGpuP2pOpt = False,
    kv_cache_dtype: Annotated[list[str] | None, typer.Option("--kv-cache-dtype", help="KV dtypes to try "
                                                             "(repeatable; default auto, and fp8 where the GPU "
                                                             "has it).")] = None,
    max_num_seqs: Annotated[list[int] | None, typer.Option("--max-num-seqs", min=1, help="Batch limits to try "
                                                           "(repeatable; default 8 ... 1024).")] = None,
    chunked_prefill_size: Annotated[list[int] | None, typer.Option("--chunked-prefill-size", help="--engine sglang: "
                                    "prefill chunks to try (repeatable; default SGLang's own for the GPU).")] = None,
    no_disaggregation: Annotated[bool, typer.Option("--no-disaggregation", help="Aggregated plans only (no "
                                                    "prefill/decode pools).")] = False,
    emit: Annotated[str | None, typer.Option("--emit", help="Write the winner: shell, docker, compose, kubernetes "
                                                            "or truss.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="--emit: write the files into this folder (default: "
                                                           "print them).")] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Plans meeting the SLO to list (each predicted "
                                                            "again on the whole run).")] = 10,
    progress: Annotated[bool | None, typer.Option("--progress/--no-progress", help="Progress bar (default: on a "
                                                  "terminal, for searches over 2,000 plans).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Search every plan the sources allow (variants, TP/PP/DP/EP, KV dtype, max-num-seqs, speculative decoding,
    prefill/decode pools; SGLang: DP attention, --max-running-requests, --chunked-prefill-size); rank those meeting
    the SLO by output tokens/s per GPU, then per user (plans launchcard cannot decide after every decided one)."""
    from launchcard.emit import TARGETS
    from launchcard.plansearch import (
        SearchSpace,
        Slo,
        candidates,
        count,
        load_clients,
        prefix_cache_off,
        result_to_json,
        result_to_text,
    )
    from launchcard.predict import Workload

    target = _target(emit, TARGETS)
    if target is not None:  # before the search: a target that cannot write this engine's command is bad input
        from launchcard.emit import check_target_engine, check_target_hardware

        check_target_engine(target, engine)
        check_target_hardware(target, gpu)  # a GPU the target cannot request: no winner could be written
    if out is not None and target is None:  # it was ignored: the answer printed, nothing written
        raise InputError("--out is the folder --emit writes the winner's files into; no --emit given", where="--out",
                         fix="add --emit TARGET (shell, docker, compose, kubernetes or truss), or drop --out")
    goal = Slo.parse(slo)
    if target is not None and out is not None:  # before the search: never a failed write after seconds of work
        from launchcard.cli._outfile import check_out_dir
        from launchcard.emit import check_out_files

        check_out_dir(out)
        check_out_files(out, target)
    if gpus < 1:
        raise InputError(f"GPU count must be >= 1 ({gpus})", where="--gpus", fix="pass a positive count")
    per_node = _per_node(gpu, gpus, gpus_per_node)
    figures = hardware_figures(gpu, hardware_figures_file, no_gpu_p2p)  # before the search, as predict reads them
    work = Workload(*workload_lengths(isl, osl, None, 0), concurrency=concurrency, rate=rate,
                    num_requests=num_requests, prefix_hit=prefix_hit, acceptance=acceptance, range_ratio=range_ratio,
                    dataset=dataset, endpoint=endpoint)
    if concurrency is None and rate is None:
        raise InputError("no load given", where="--concurrency",
                         fix="pass --concurrency C (closed loop) or --rate R (Poisson requests/s)")
    isl, osl = workload_lengths(isl, osl, dataset, work.validate().requests())
    work = replace(work, isl=isl, osl=osl).validate()
    try:
        options, plans, skipped, repo = _options(model, gpu, recipes, revision, config, engine, max_model_len,
                                                 gpus_per_node)
    except InputError as exc:  # the derived plan's rule names resolve's --hardware: here the option typed is --gpu
        if exc.where != "--hardware":
            raise
        raise InputError(exc.rule, where="--gpu", fix=exc.fix, field=exc.field) from None
    if corpus is not None:
        more, left = _card_options(model, corpus, options, skipped, engine)
        options, skipped = [*options, *more], [*skipped, *left]
    if target is not None:
        _emit_layout_first(options, plans, repo, gpus)
    space = SearchSpace(model=model, gpu=gpu, gpus=gpus, gpus_per_node=per_node, options=tuple(options),
                        engine=engine, kv_dtypes=tuple(kv_cache_dtype) if kv_cache_dtype else None,
                        max_num_seqs=tuple(sorted(set(max_num_seqs))) if max_num_seqs else SearchSpace.max_num_seqs,
                        disaggregation=not no_disaggregation, max_model_len=max_model_len,
                        engine_version=engine_version,
                        chunked_prefill=tuple(sorted(set(chunked_prefill_size))) if chunked_prefill_size else (),
                        mxfp4_backend=mxfp4_backend, figures=figures)
    space.validate()
    total = count(space, load_clients(work))
    if acceptance is not None and not any(c.spec for c in candidates(space, load_clients(work))):
        # as predict refuses it: a rate for drafts no plan of this search makes would be silently ignored
        raise InputError(f"an acceptance rate ({acceptance:g}) applies to speculative decoding, which no plan of "
                         "this search uses", field="acceptance",
                         fix="drop --acceptance (the searched plans come from the recipe or checkpoint: none offers "
                             "a speculative method)")
    offs = [prefix_cache_off(space, o) for o in space.options] if prefix_hit else []
    if offs and all(offs):
        # as --acceptance above: a share no plan of this search can reuse (a plan that turns its cache off among
        # others that keep it is predicted with none reused, predict._prefix)
        from launchcard.predict import prefix_off_error

        raise prefix_off_error(offs[0], prefix_hit)
    result = _run(space, work, goal, total, progress, top)
    result = _with_notes(result, skipped)
    # with --emit and no --out the files are the output (as `launchcard emit` prints them): the report goes to stderr
    to_err = target is not None and out is None
    if as_json:
        import json

        doc = result_to_json(result)  # the workload searched, as predict --json says it (with --dataset: its means)
        head = {k: doc.pop(k) for k in ("model", "gpu", "gpus", "slo")}
        typer.echo(json.dumps({**head, "workload": workload_json(work), **doc}, indent=2), err=to_err)
    else:
        typer.echo(result_to_text(result, top=top), err=to_err)
    if result.winner is None:
        typer.echo(_no_plan_line(result, total), err=True)
        raise typer.Exit(1)
    if target is not None:
        opt = next(o for o in options if o.name == result.winner.candidate.option)
        base = plans.get(opt.name)
        if base is None and opt.name != "checkpoint":  # a card's checkpoint: the derived plan of its own config
            base = _derived_base(opt.model_id, opt.config, gpu, engine, max_model_len, gpus_per_node)
        _emit_winner(base, opt, result, work, goal, target, out, repo, max_model_len,
                     engine_version if engine == "sglang" else None)


def _emit_layout_first(options: list[Option], plans: dict[str, ResolvedPlan], repo: RecipeRepo | None,
                       gpus: int) -> None:
    """Before the search, what --emit would refuse after it: every plan searched uses all ``gpus``, so where each
    option's base plan is one launchcard derives (no recipe pd_cluster for a prefill/decode winner) and none can
    be laid out on that many GPUs, no winner can be written (it ran the whole search, then exited 2)."""
    from launchcard.plansearch import emit_layout_refusal

    if repo is not None or not options or any(o.name not in plans for o in options):
        return
    refusals = [emit_layout_refusal(plans[o.name], gpus) for o in options]
    first = refusals[0]
    if first is not None and all(refusals):
        raise first


def _no_plan_line(result: SearchResult, total: int) -> str:
    """The one closing line when no plan meets the SLO: the closest are listed above; when none could even be
    predicted, the commonest reason (with an example) is the answer."""
    if result.closest:
        return f"launchcard: no plan of {total} meets the SLO {result.slo.text()}: see the closest plans above"
    reason, n = next(iter(result.rejected_by_reason().items()), ("", 0))
    example = result.example(reason)
    tail = f" (e.g. {example.candidate.label()}: {example.reason})" if example is not None else ""
    return f"launchcard: none of the {total} plans can run or be predicted: {n} rejected by {reason}{tail}"


def _target(emit: str | None, targets: tuple[str, ...]) -> str | None:
    if emit is not None and emit not in targets:
        raise InputError(f"unknown emit target {emit!r}", where="--emit", fix=f"choose one of {', '.join(targets)}")
    return emit


def _per_node(gpu: str, gpus: int, given: int | None) -> int:
    from launchcard.hardware import node_size

    return node_size(gpu, gpus, given)


def _options(model: str, gpu: str, recipes: Path | None, revision: str | None, config: str | None, engine: str,
             max_model_len: int | None, gpus_per_node: int | None = None,
             ) -> tuple[list[Option], dict[str, ResolvedPlan], list[str], RecipeRepo | None]:
    """The options to search, the resolved base plan of each (for --emit), the variants left out, the recipes.

    ``gpus_per_node`` (the user's) sizes the derived base plan's node as the search's, so an emitted winner
    is laid out on the same nodes it was searched on."""
    from launchcard.cli._options import has_recipe, open_recipes
    from launchcard.plansearch import derived_option, recipe_options

    if engine == "vllm" and recipes is not None and has_recipe(recipes, revision, model):
        from launchcard.check import locate_config

        repo = open_recipes(recipes, revision)
        options, plans, skipped = recipe_options(repo, repo.canonical(model) or model, gpu, recipes,
                                                 locate_config(config) if config else None)
        if not options:
            raise InputError(f"no variant of {model}'s recipe can be planned on {gpu}: " + "; ".join(skipped),
                             where="--config", fix="pass --config (the checkpoint's config.json) or another --gpu")
        return options, plans, skipped, repo
    if engine == "sglang" and recipes is not None and has_recipe(recipes, revision, model):
        return (*_sglang_recipe_options(model, gpu, recipes, revision, config), None)
    from launchcard.check import locate_config

    if config is None:
        raise InputError(f"{model} has no recipe here: the search needs its config.json", where="--config",
                         fix="pass --config FILE|FOLDER|HUB_ID (or --recipes DIR holding its recipe)")
    cfg = locate_config(config)
    option, base, left = derived_option(model, cfg, gpu, engine, max_model_len=max_model_len,
                                        gpus_per_node=gpus_per_node)  # the option `sweep` searches too
    return [option], ({"checkpoint": base} if base is not None else {}), left, None


def _sglang_recipe_options(model: str, gpu: str, recipes: Path, revision: str | None, config: str | None,
                           ) -> tuple[list[Option], dict[str, ResolvedPlan], list[str]]:
    """An SGLang search of a model with a (vLLM) recipe: each variant's checkpoint (its precision: the quantized
    builds the recipe offers) as SGLang serves it, from its own config.json; the recipe's flags are vLLM's and
    are not carried over (a winner is emitted as the SGLang plan launchcard derives for that checkpoint)."""
    from dataclasses import replace

    from launchcard.check import locate_config
    from launchcard.cli._options import open_recipes
    from launchcard.plansearch import checkpoint_option, recipe_options

    repo = open_recipes(recipes, revision)
    variants, _, skipped = recipe_options(repo, repo.canonical(model) or model, gpu, recipes,
                                          locate_config(config) if config else None)
    options: dict[str, Option] = {}
    for v in variants:
        if v.model_id in options:
            skipped.append(f"variant {v.name}: the checkpoint of variant {options[v.model_id].name} "
                           f"({v.model_id}); its vLLM flags are not SGLang's")
            continue
        options[v.model_id] = replace(checkpoint_option(v.model_id, v.config), name=v.name)
    if not options:
        raise InputError(f"no variant of {model}'s recipe can be planned on {gpu}: " + "; ".join(skipped),
                         where="--config", fix="pass --config (the checkpoint's config.json) or another --gpu")
    return list(options.values()), {}, skipped


def _derived_base(model: str, config: str, gpu: str, engine: str, max_model_len: int | None,
                  gpus_per_node: int | None) -> ResolvedPlan:
    """The plan launchcard derives for checkpoint ``model`` from its own ``config`` (no recipe): the base a
    winner's searched flags replace (the search's node size, so the winner is laid out as it was searched)."""
    from launchcard.cli._options import PlanOptions, plan_and_config

    base, _ = plan_and_config(PlanOptions.from_cli(model, None, hardware=gpu), config, engine=engine,
                              max_model_len=max_model_len, gpus_per_node=gpus_per_node)
    return base


def _card_options(model: str, corpus: Path, options: list[Option], skipped: list[str],
                  engine: str = "vllm") -> tuple[list[Option], list[str]]:
    """The card's other checkpoints (``--corpus``), as the search's options; lines for those it cannot plan
    (a recipe variant already left out with its reason is not named twice). With ``engine`` sglang every option
    (``options`` in place, and the card's) also offers the speculative decoding the card's SGLang commands run
    its checkpoint with (:func:`launchcard.plansearch.sglang_spec_offers`)."""
    from launchcard.merge import build_corpus
    from launchcard.plansearch import card_options, sglang_spec_offers, with_sglang_specs

    card = build_corpus(corpus, models=[model]).card(model)
    if card is None:
        return [], [f"--corpus: no launch card of {model} in {corpus}"]
    said = f" {' '.join(skipped)} "
    known = {o.model_id for o in options} | {r for cp in card.checkpoints if (r := cp.repo or cp.name)
                                             and f" {r} " in said}
    more, left = card_options(card, known, corpus)
    if engine == "sglang":
        options[:] = [with_sglang_specs(o, sglang_spec_offers(card, o.model_id, o.config)) for o in options]
        more = [with_sglang_specs(o, sglang_spec_offers(card, o.model_id, o.config)) for o in more]
    return more, left


def _run(space: object, work: Workload, goal: Slo, total: int, progress: bool | None, top: int) -> SearchResult:
    from launchcard.cli._console import console
    from launchcard.plansearch import SearchSpace, search

    assert isinstance(space, SearchSpace)
    # a bar when the search is long: many plans, or long runs (a plan's prediction simulates every request); rich
    # (~0.06 s to import) only where a bar may show
    long = total > 2000 or total * work.requests() > 10**6
    if progress is False or (progress is None and not long):
        return search(space, work, goal, top=top)
    err = console(stderr=True)
    if progress is None and not err.is_terminal:
        return search(space, work, goal, top=top)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("searching plans"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=err, transient=True) as bar:
        task = bar.add_task("search", total=total)
        # the total grows when the shown plans are predicted again on the whole run
        return search(space, work, goal, top=top,
                      progress=lambda done, n: bar.update(task, completed=done, total=n))


def _with_notes(result: SearchResult, skipped: list[str]) -> SearchResult:
    from dataclasses import replace

    return replace(result, findings=(*result.findings, *(f"left out: {s}" for s in skipped)))


def _emit_winner(base: ResolvedPlan | None, opt: Option, result: SearchResult, work: Workload, goal: Slo,
                 target: str, out: Path | None, repo: RecipeRepo | None, max_model_len: int | None,
                 sglang_version: str | None = None) -> None:
    from launchcard.check import check_plan, sglang_parser_release
    from launchcard.emit import emit as emit_files
    from launchcard.emit import write_files
    from launchcard.plansearch import winner_plan

    winner = result.winner
    assert winner is not None
    if base is None:
        raise InputError(f"option {opt.name} has no resolved plan to emit", where="--emit",
                         fix="resolve the model with launchcard emit, passing the winner's flags")
    plan = winner_plan(base, winner.candidate, work, goal, opt, max_model_len=max_model_len, repo=repo,
                       release=sglang_parser_release(sglang_version)[0] if base.engine == "sglang" else None)
    # an SGLang winner is checked against its stated release (flags, heads split), as the search checked it
    verdict = check_plan(plan, config=opt.config, recipes=None if plan.derived else repo, engine_version=sglang_version)
    if not verdict.ok:
        typer.echo(f"launchcard: refused: the winning plan will not start or does not fit: "
                   f"{verdict.errors[0].one_line()}", err=True)
        raise typer.Exit(1)
    files = emit_files(plan, target, card_name=plan.model, verdict=verdict)
    if out is not None:
        for path in write_files(files, out):
            typer.echo(f"wrote {path}", err=True)
        return
    for name, text in files.items():
        typer.echo(f"# ===== {name} =====")
        typer.echo(text)
