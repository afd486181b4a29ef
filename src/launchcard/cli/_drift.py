"""``launchcard drift``: every card environment against every captured release of its engine."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from launchcard.cli._app import app
from launchcard.cli._options import CatalogOpt, CorpusOpt


@app.command("drift")
def drift_cmd(
    corpus: CorpusOpt = None,
    engine: Annotated[str, typer.Option("--engine", help="vllm or sglang.")] = "vllm",
    fmt: Annotated[str, typer.Option("--format", help="md or json.")] = "md",
    fail_on: Annotated[str | None, typer.Option(
        "--fail-on", help="Exit 1 when this captured release fails any command.")] = None,
    store: Annotated[bool, typer.Option("--store", help="Store the verdicts in the catalog (drift_verdicts).")] = False,
    catalog: CatalogOpt = None,
) -> None:
    """For every card environment x every captured release of ENGINE: verdict, first breaking release and why.

    Commands come from the corpus (--corpus, default $LAUNCHCARD_CORPUS), else from the newest card of
    each model in --catalog; recipes' min_vllm_version (and, from a corpus, nightly_required) are
    checked against the flags' release ranges.
    """
    import time
    from datetime import UTC, datetime

    from launchcard.errors import InputError
    from launchcard.flags import commands_from_cards, drift, summary_line, to_markdown
    from launchcard.flagspec import shipped_index

    releases = shipped_index().get(engine)
    if not releases:
        raise InputError(f"no captured flag specs for engine {engine!r}", where="--engine",
                         fix=f"use one of: {', '.join(shipped_index())}")
    if fmt not in ("md", "json"):
        raise InputError(f"unknown format {fmt!r}", where="--format", fix="use md or json")
    if fail_on is not None and fail_on not in releases:
        raise InputError(f"{engine} {fail_on} is not a captured release", where="--fail-on",
                         fix=f"use one of: {', '.join(releases)}")
    env_corpus = os.environ.get("LAUNCHCARD_CORPUS")
    root = corpus or (Path(env_corpus) if env_corpus and catalog is None else None)  # --catalog alone: its cards
    if root is None and catalog is None:
        raise InputError("no corpus or catalog given", where="--corpus",
                         fix="pass --corpus DIR (or set LAUNCHCARD_CORPUS), or --catalog FILE to read its cards")
    start = time.perf_counter()
    problems: tuple[str, ...] = ()
    if root is not None:
        from launchcard.merge import build_corpus

        result = build_corpus(root)
        cards = list(result.cards.values())
        claims = _recipe_claims(root / "vllm-recipes", list(result.cards))
        problems = tuple(result.problems)
    else:
        from launchcard.store import Catalog

        with Catalog(catalog, create=False) as cat:  # each model's newest capture
            cards = cat.latest_cards()
        claims = {c.model: (_fact(c, "min_engine_version"), False) for c in cards}
    report = drift(commands_from_cards(cards, claims, (engine,)), engine)
    import dataclasses

    report = dataclasses.replace(report, seconds=time.perf_counter() - start, problems=problems)
    if store:
        from launchcard.store import default_catalog_path, store_drift

        store_drift(catalog or default_catalog_path(), report, datetime.now(UTC).replace(microsecond=0).isoformat())
    if fmt == "json":
        import json

        typer.echo(json.dumps(report.to_json(), indent=1))
    else:
        typer.echo(to_markdown(report), nl=False)
        typer.echo(f"\n{len(report.commands)} commands x {len(report.releases)} releases in {report.seconds:.1f} s")
    if fail_on is not None:
        s = report.summary(fail_on)
        if s is not None and s.failing:
            typer.echo(f"drift: --fail-on {fail_on}: {s.failing} {engine} command(s) in {s.failing_models} model(s) "
                       f"fail; {summary_line(s)}", err=True)
            raise typer.Exit(1)


def _fact(card: Any, name: str) -> str | None:
    """A stored card's vLLM-scoped fact value (the recipe's minimum), as text."""
    value = next((f.value for f in card.facts if f.name == name and f.scope in (None, "vllm")), None)
    return str(value) if value is not None and str(value)[:1].isdigit() else None


def _recipe_claims(recipes: Path, models: list[str]) -> dict[str, tuple[str | None, bool]]:
    """model -> (min_vllm_version, nightly_required) from each model's vLLM recipe."""
    if not recipes.is_dir():
        return {}
    from launchcard.errors import LaunchcardError
    from launchcard.sources.vllm_recipes import RecipeRepo

    repo = RecipeRepo(recipes)
    out: dict[str, tuple[str | None, bool]] = {}
    for model in models:
        try:
            m = repo.recipe(model).data.get("model") or {}
        except (LaunchcardError, OSError):
            continue
        if isinstance(m, dict):
            minimum = m.get("min_vllm_version")
            numeric = minimum is not None and str(minimum)[:1].isdigit()  # "nightly" is not a release
            nightly = bool(m.get("nightly_required")) or str(minimum) == "nightly"
            out[model] = (str(minimum) if numeric else None, nightly)
    return out
