"""What a card environment's flags do and how a client calls it: shared by card Markdown and the preset README.

Explanations come from :mod:`launchcard.explain` (the recipe's own words for the recipe's command, else the
engine's captured ``--help``, else "no description"); client calls from :mod:`launchcard.clients`, for what the
command itself turns on (reasoning parser, automatic tool choice, the guide's reasoning control, image input when
the model takes images).  Nothing here reads files: :func:`recipe_texts` takes the already-loaded recipe data.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from launchcard.argv import parse_command
from launchcard.card import EngineEnv, LaunchCard
from launchcard.clients import (
    Capabilities,
    ClientCall,
    ClientTarget,
    ReasoningControl,
    calls_markdown,
    capabilities_from_argv,
    client_calls,
    guide_control,
)
from launchcard.explain import FlagNote, explain_argv, markdown_table, recipe_flag_descriptions

DEFAULT_PORTS = {"vllm": 8000, "sglang": 30000, "dynamo": 8000, "trtllm": 8000}
# processes a client never calls itself: the deployment's router or frontend fronts them
BEHIND_A_FRONT = ("prefill", "decode", "worker", "encoder")


@dataclass(frozen=True)
class RecipeTexts:
    """The recipe's own words for its flags (``features`` descriptions) and its guide (reasoning control)."""

    features: Mapping[str, object] = field(default_factory=dict)
    guide: str | None = None
    where: str | None = None  # the recipe file, for the guide control's evidence


def recipe_texts(data: Mapping[str, object] | None, where: str | None = None) -> RecipeTexts | None:
    """From a recipe's parsed YAML (``RecipeDoc.data``)."""
    if not isinstance(data, Mapping):
        return None
    features = data.get("features")
    guide = data.get("guide")
    return RecipeTexts(features=features if isinstance(features, Mapping) else {},
                       guide=guide if isinstance(guide, str) else None, where=where)


def _same_token(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return bool(json.loads(a) == json.loads(b))
    except ValueError:
        return False


def modes_in_argv(features: Mapping[str, object], argv: Sequence[str]) -> dict[str, str]:
    """Feature -> the mode whose args all appear in ``argv`` (``""``: none does, so no mode's sentence applies)."""
    out: dict[str, str] = {}
    for name, feat in features.items():
        modes = feat.get("modes") if isinstance(feat, Mapping) else None
        if not isinstance(modes, Mapping):
            continue
        out[name] = ""
        for mode, body in modes.items():
            args = body.get("args") if isinstance(body, Mapping) else None
            if isinstance(args, list) and args and all(
                    any(_same_token(str(t), a) for a in argv) for t in args):
                out[name] = str(mode)
                break
    return out


def env_flag_notes(env: EngineEnv, recipe: RecipeTexts | None = None) -> list[FlagNote]:
    """One note per flag of the environment's command; the recipe's words only for the recipe's own command."""
    if not env.argv:
        return []
    texts: dict[str, str] = {}
    where: dict[str, str] = {}
    if recipe is not None and env.source.kind == "vllm-recipes":
        texts, where = recipe_flag_descriptions(recipe.features, modes_in_argv(recipe.features, env.argv))
    return explain_argv(env.argv, engine=env.engine, recipe=texts, recipe_where=where)


def flag_table(env: EngineEnv, recipe: RecipeTexts | None = None, origins: Mapping[str, str] | None = None) -> str:
    """The seed preset's table (flag, value, what it does) plus where each flag came from: the environment's
    source document, unless ``origins`` names another (e.g. flags an emitter added)."""
    notes = env_flag_notes(env, recipe)
    if not notes:
        return "No command: the provider builds the server from its settings.\n"
    ev = env.evidence
    where = (ev.url or (f"{ev.path}#L{ev.line}" if ev.line else ev.path) if ev else None) or env.source.url \
        or env.source.path or env.source.kind
    shown = dict.fromkeys((n.flag for n in notes), f"{env.source.kind}: {where}")
    # a resolved recipe command credits each argument itself (the resolver's credit, carried by the card)
    # (only where the command still has that value: an emitter may have changed it)
    values = {n.flag: n.value for n in notes}
    shown.update({c.flag: c.where() for c in env.credits
                  if c.flag and c.flag in values and values[c.flag] == c.value})
    return markdown_table(notes, {**shown, **(origins or {})})


def takes_images(card: LaunchCard) -> bool:
    """Whether the model takes image input: the Hub's task tag, the recipe's tasks, or a command's mm limits."""
    if card.hf is not None and any("image" in m or "video" in m for m in card.hf.modality):
        return True
    for f in card.facts:
        if f.name == "tasks" and isinstance(f.value, list) and {"multimodal", "vision", "image"} & set(f.value):
            return True
    return any(a.startswith("--limit-mm-per-prompt") for e in card.envs for a in e.argv)


def served_name(env: EngineEnv, card: LaunchCard) -> str:
    """The model name clients send: ``--served-model-name`` (first), else the model the server loads."""
    cmd = parse_command(env.argv)
    names = cmd.get_list("--served-model-name")
    return str((names[0] if names else None) or cmd.model_path() or card.model)


def env_target(env: EngineEnv, card: LaunchCard, *, base_url: str | None = None,
               api_key_env: str | None = None, model: str | None = None) -> ClientTarget:
    if base_url is None:
        port = parse_command(env.argv).get_str("--port") or DEFAULT_PORTS.get(env.engine, 8000)
        base_url = f"http://localhost:{port}/v1"
    return ClientTarget(base_url, model or served_name(env, card), api_key_env)


def env_capabilities(env: EngineEnv, card: LaunchCard, recipe: RecipeTexts | None = None) -> Capabilities:
    """What the command enables, read through the argv model; SGLang's tool parser implies automatic tool
    choice (SGLang has no separate switch)."""
    control: ReasoningControl | None = None
    if recipe is not None and recipe.guide:
        control = guide_control(recipe.guide, where=recipe.where)
    caps = capabilities_from_argv(env.argv, images=takes_images(card), control=control)
    if env.engine == "sglang" and not caps.tools and parse_command(env.argv).get_str("--tool-call-parser"):
        caps = dataclasses.replace(caps, tools=True)
    return caps


def env_client_calls(env: EngineEnv, card: LaunchCard, recipe: RecipeTexts | None = None, *,
                     base_url: str | None = None, api_key_env: str | None = None,
                     model: str | None = None) -> list[ClientCall]:
    """Python and curl calls for what this environment's command enables."""
    return client_calls(env_target(env, card, base_url=base_url, api_key_env=api_key_env, model=model),
                        env_capabilities(env, card, recipe))


def env_calls_markdown(env: EngineEnv, card: LaunchCard, recipe: RecipeTexts | None = None, **target: str) -> str:
    if env.role in BEHIND_A_FRONT:
        return (f"Clients do not call this {env.role} process; they call the deployment's router or frontend "
                "(its environment on this card lists the calls).\n")
    if not env.argv and not target:
        return "No command on this card: call the provider's endpoint as its documentation says.\n"
    return calls_markdown(env_client_calls(env, card, recipe, **target))
