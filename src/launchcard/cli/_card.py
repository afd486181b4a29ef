"""``launchcard card MODEL``: one model's card from a corpus (every source) or from the catalog."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Annotated

import typer

from launchcard.cli._app import app
from launchcard.cli._options import (
    CatalogOpt,
    ConfigOpt,
    CorpusOpt,
    JsonOpt,
    RevisionOpt,
    WebUrlOpt,
    checked_revision,
    given_configs,
)
from launchcard.errors import InputError

if TYPE_CHECKING:
    from pathlib import Path

    from launchcard.card import EngineEnv, LaunchCard
    from launchcard.render import RecipeTexts


@app.command()
def card(
    model: Annotated[str, typer.Argument(help="HF repo id, e.g. zai-org/GLM-5.3-Flash.")],
    corpus: CorpusOpt = None,
    catalog: CatalogOpt = None,
    as_json: JsonOpt = False,
    fmt: Annotated[str, typer.Option("--format", help="json, md or text.")] = "text",
    store: Annotated[bool, typer.Option("--store", help="Also store the built card in the catalog.")] = False,
    hardware: Annotated[str | None, typer.Option("--hardware", help="Hardware for the vLLM env, e.g. h100 "
                                                    "(default: the one `resolve` picks).")] = None,
    hub: Annotated[bool, typer.Option("--hub", help="Also capture the Hugging Face Hub (HF_ENDPOINT).")] = False,
    revision: RevisionOpt = None,
    web_url: WebUrlOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Build (from --corpus) or load (from the catalog) a model's launch card."""
    fmt = "json" if as_json else fmt
    if fmt not in ("json", "md", "text"):
        raise InputError(f"unknown format {fmt!r}", where="--format", fix="use json, md or text")
    if corpus is not None:
        from launchcard.merge import build_corpus

        revision = checked_revision(corpus / "vllm-recipes", revision, model)
        result = build_corpus(corpus, models=[model], hardware=hardware, hub=hub, revision=revision,
                              web_url=web_url, configs=given_configs(model, config))
        found = result.card(model)
        assert found is not None  # build_corpus raised UnknownModelError otherwise
        the_card, model = found, found.model
        for line in result.problems:
            typer.echo(f"launchcard: skipped: {line}", err=True)
        if store:
            from launchcard.store import Catalog

            # the same rule as `ingest`: a card whose documents and content are unchanged is not stored again
            # (its check time moves on), so history and `diff` show real changes only
            with Catalog(catalog) as cat:
                done = cat.ingest([the_card])
                if done.stored:
                    typer.echo(f"stored capture {done.stored[0]} of {model} in {cat.where}", err=True)
                else:
                    newest = cat.captures(the_card.model)[-1].id
                    typer.echo(f"unchanged: capture {newest} of {model} in {cat.where} already holds these documents "
                               f"(checked {done.checked_at})", err=True)
    else:
        if store:
            raise InputError("--store needs --corpus", where="--store", fix="pass --corpus DIR to build the card")
        if config is not None:
            raise InputError("--config judges a card being built; a stored card keeps the verdict it was stored "
                             "with", where="--config", fix="add --corpus DIR to build the card with it")
        # the other options that build a card were ignored here: the stored card printed as it was built
        building = [name for name, given in (("--hardware", hardware), ("--hub", hub), ("--revision", revision))
                    if given]
        if building:
            raise InputError(f"{', '.join(building)} build(s) a card; a stored card is printed as it was built",
                             where=building[0], fix="add --corpus DIR to build the card with it, or drop "
                                                    f"{', '.join(building)}")
        from launchcard.store import Catalog

        with Catalog(catalog, create=False) as cat:
            the_card = cat.latest(model)
    if fmt == "json":
        typer.echo(json.dumps(the_card.model_dump(mode="json", by_alias=True), indent=2, ensure_ascii=False))
    elif fmt == "md":
        from launchcard.render import render_markdown

        typer.echo(render_markdown(the_card, recipe_texts_from(corpus, model)))
    else:
        typer.echo(card_text(the_card))


def recipe_texts_from(corpus: Path | None, model: str) -> RecipeTexts | None:
    """The model's vLLM recipe texts (feature descriptions, guide) from the corpus, when it has a recipe."""
    if corpus is None or not (corpus / "vllm-recipes" / "models" / f"{model}.yaml").is_file():
        return None
    from launchcard.render import recipe_texts
    from launchcard.sources.vllm_recipes import load_recipes

    doc = load_recipes(corpus / "vllm-recipes").recipe(model)
    return recipe_texts(doc.data, doc.path)


def card_text(c: LaunchCard) -> str:
    """Every environment (the resolved vLLM command first, in full), then every conflict with its sides."""
    from launchcard.check import verdict_label

    lines = [f"{c.model} — {len(c.envs)} environment(s) from {c.captured_by}"]
    index = {id(e): i for i, e in enumerate(c.envs)}  # `emit --env INDEX` picks by this number
    vllm = [e for e in c.envs if e.source.kind == "vllm-recipes"]
    for e in vllm:
        lines += ["", f"[{index[id(e)]}] vLLM ({e.role}, {e.hardware} × {e.gpus}) — {e.source.url}"]
        lines += [f"{k}={v} \\" for k, v in e.env.items()]
        lines.append(e.command or shlex.join(e.argv))
        if e.credits:  # the resolver's credit of each argument, as the card carries it
            lines.append("where each value came from:")
            lines += [f"  {' '.join(t for t in (a.flag, a.value) if t is not None)}: {a.where()}" for a in e.credits]
        if e.verdict is not None:
            lines += [f"verdict: {verdict_label(e.verdict.status)}", *(f"  {f}" for f in e.verdict.findings)]
    if not vllm:
        lines += ["", "no resolved vLLM command" + next((f": {g.why}" for g in c.gaps if g.field == "envs[vllm]"), "")]
    others = [e for e in c.envs if e.source.kind != "vllm-recipes"]
    if others:
        lines += ["", f"Other environments ({len(others)}), one command each:"]
        for e in others:
            lines += [f"- [{index[id(e)]}] {_env_title(e)}",
                      f"    {shlex.join(e.argv) if e.argv else e.command or '(no command)'}"]
    lines += ["", f"Conflicts ({len(c.conflicts)}):"]
    for k in c.conflicts:
        lines.append(f"- {k.field}:")
        for s in k.sides:
            where = s.evidence.url or s.evidence.path or ""
            lines.append(f"    {s.value!s:<20} {s.evidence.kind}{f' [{s.scope}]' if s.scope else ''}  {where}")
    return "\n".join(lines)


def _env_title(e: EngineEnv) -> str:
    where = (e.evidence.url if e.evidence else None) or e.source.url or e.source.path or ""
    gpus = f" × {e.gpus}" if e.gpus else ""
    return f"{e.source.kind}: {e.engine} {e.role} on {e.hardware or 'unstated hardware'}{gpus} — {where}"
