"""``launchcard page MODEL``: the recipe index page (Markdown, HTML, or its JSON twin)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from launchcard.cli._app import app
from launchcard.cli._options import ConfigOpt, RecipesOpt, RevisionOpt, checked_revision, given_configs
from launchcard.errors import InputError

FORMATS = ("md", "html", "json")


@app.command()
def page(
    model: Annotated[str, typer.Argument(help="Recipe id, e.g. zai-org/GLM-5.3-Flash.")],
    recipes: RecipesOpt = None,
    corpus: Annotated[Path | None, typer.Option("--corpus", help="Corpus folder (its vllm-recipes/ is read).",
                                                   envvar="LAUNCHCARD_CORPUS")] = None,
    revision: RevisionOpt = None,
    fmt: Annotated[str, typer.Option("--format", help="md, html or json (the page's data).")] = "md",
    out: Annotated[Path | None, typer.Option("--out", help="Write to this file (atomically) instead of stdout.")]
    = None,
    config: ConfigOpt = None,
) -> None:
    """Render every section of a recipe's index page, each value linked to its recipe line."""
    if fmt not in FORMATS:
        raise InputError(f"unknown page format ({fmt!r})", where="--format", fix="use md, html or json")
    if recipes is None and corpus is not None:
        recipes = corpus / "vllm-recipes"
    if recipes is None:
        raise InputError("no recipes given", where="--recipes",
                         fix="pass --recipes DIR, or --corpus DIR holding vllm-recipes/ (or set LAUNCHCARD_CORPUS)")
    if config is not None and corpus is None:
        raise InputError("--config judges the card's plans, which the page shows with --corpus", where="--config",
                         fix="add --corpus DIR (or set LAUNCHCARD_CORPUS)")
    revision = checked_revision(recipes, revision, model)
    if out is not None:  # asked before the card is built (seconds with --corpus)
        from launchcard.cli._outfile import check_out_file

        check_out_file(out, what="page file")
    from launchcard.page import page_data, page_html, page_json, page_markdown
    from launchcard.sources.vllm_recipes import load_recipes

    card = None
    if corpus is not None:  # the multi-source card: sources side by side, conflicts, gaps
        from launchcard.merge import build_corpus

        card = build_corpus(corpus, models=[model], revision=revision,
                            configs=given_configs(model, config)).card(model)
    repo = load_recipes(recipes, None)
    data = page_data(repo, repo.canonical(model), revision=revision, card=card)
    text = {"md": page_markdown, "html": page_html, "json": page_json}[fmt](data)
    if out is None:
        typer.echo(text, nl=False)
        return
    from launchcard.cli._outfile import out_file

    with out_file(out) as fh:
        fh.write(text)
    typer.echo(f"wrote {out}", err=True)
