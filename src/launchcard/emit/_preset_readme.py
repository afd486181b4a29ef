"""The README next to an emitted preset's ``config.yaml``: set-up, deploy, what each flag does, client calls."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from launchcard.card import EngineEnv, LaunchCard
from launchcard.render import env_calls_markdown, flag_table

if TYPE_CHECKING:
    from launchcard.check import Verdict
    from launchcard.render import RecipeTexts

BASETEN_URL = "https://model-{model_id}.api.baseten.co/environments/production/sync/v1"


def _context(argv: Sequence[str], card: LaunchCard) -> str:
    from launchcard.argv import parse_command

    value = parse_command(argv).get_str("--max-model-len")
    if value:
        return f"{value} tokens (--max-model-len)"
    return f"{card.hardware.context_tokens:,} tokens (model limit; the engine default)" \
        if card.hardware.context_tokens else "the engine default"


def readme(card: LaunchCard, env: EngineEnv, config: Mapping[str, Any], argv: Sequence[str], verdict: Verdict,
           *, recipe: RecipeTexts | None = None, added: Mapping[str, str] | None = None,
           changes: Sequence[str] | None = None) -> str:
    """``added``: flag -> why it is there, for flags the source's command does not have (layout, options);
    ``changes``: for a provider's own preset, each setting changed from what the provider wrote, with why."""
    meta = config.get("model_metadata") or {}
    name = str(config.get("model_name") or card.model)
    folder = re.sub(r"[^\w.-]+", "-", name.replace("model:", "").replace(" preset:", "-")).strip("-").lower()
    served = env.model_copy(update={"argv": tuple(argv)})
    src = env.evidence.url if env.evidence and env.evidence.url else env.source.url or env.source.path
    res = config.get("resources") or {}
    image = (config.get("base_image") or {}).get("image")
    concurrency = (config.get("runtime") or {}).get("predict_concurrency")
    trt = config.get("trt_llm")
    context = (f"{trt['runtime']['max_seq_len']:,} tokens (trt_llm.runtime.max_seq_len)"
               if isinstance(trt, dict) and (trt.get("runtime") or {}).get("max_seq_len") else _context(argv, card))
    out = [f"# {card.model} on Baseten ({name})", ""]
    if meta.get("description"):
        out += [" ".join(str(meta["description"]).split()), ""]
    if meta.get("tags"):
        out += ["Tags: " + ", ".join(meta["tags"]), ""]
    out += [f"Made by launchcard from the card's {env.source.kind} environment ({src}).", ""]
    if changes is not None:
        out += (["Changed from the provider's preset (everything else is as the provider wrote it):", "",
                 *[f"- {c}" for c in changes], ""] if changes else ["The preset as its provider wrote it.", ""])
        comments = env.preset.comments if env.preset is not None else ()
        if comments:
            out += ["The provider's comments in its config (each with its line):", "",
                    *[f"- {c.split(': ', 1)[1]} ({env.source.path or 'config.yaml'}#{c.split(': ', 1)[0]})"
                      for c in comments], ""]
    out += ["| Hardware | Engine | Image | Context | Concurrency |", "|---|---|---|---|---|",
            (f"| {res.get('instance_type') or res.get('accelerator') or 'unknown'} | {env.engine} | "
             + (f"`{image}`" if image else "Baseten's TensorRT-LLM stack" if trt else "unknown")
             + f" | {context} | {concurrency if concurrency is not None else 'Baseten default'} |"), "",
            "## Verdict", "", f"`{verdict.summary()}`", ""]
    out += [f"- {f.one_line()}" for f in verdict.findings]
    out += ["", "## Set-up", "",
            "Install the Baseten CLI and sign in, then the OpenAI SDK for the calls below:", "",
            "```bash", "brew tap basetenlabs/baseten && brew install baseten   # macOS or Linux",
            "baseten auth login", "uv pip install openai", "```", "",
            "Without installing: `uvx truss login --browser`, then `uvx truss push` below.", "",
            *([(f"Store your Hugging Face token as the Baseten secret `{next(iter(config['secrets']))}` (the "
                "config names the secret; its value is never written into it)."), ""] if config.get("secrets")
              else []),
            "## Deploy", "", "```bash", f"mkdir {folder} && cd {folder}",
            "# put config.yaml (next to this README) here, then:", "baseten model push   # or: truss push",
            "```", "",
            ("`baseten model push` prints the model id; the calls below use it as `{model_id}` and read your API "
             "key from `BASETEN_API_KEY`."), "",
            *(["## Engine settings", "",
                ("Baseten builds the TensorRT-LLM server from `trt_llm` in config.yaml (no start command); its "
                 "runtime settings as the provider wrote them:"), "", "```json",
                json.dumps((trt or {}).get("runtime") or {}, indent=2, ensure_ascii=False), "```", ""] if trt else
              ["## What each flag does", "",
               ("The start command passes these flags to the engine (explanations: the recipe's own words for the "
                "recipe's flags, else the engine's captured `--help`, else \"no description\"):"), "",
               flag_table(served, recipe, added)]),
            "## Call the model", "",
            "The deployment serves an OpenAI-compatible API.", "",
            env_calls_markdown(served, card, recipe, base_url=BASETEN_URL, api_key_env="BASETEN_API_KEY",
                               model=str(meta.get("repo_id") or card.model))]
    return "\n".join(out).rstrip("\n") + "\n"
