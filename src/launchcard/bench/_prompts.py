"""Synthetic prompts of a fixed token length.

Exact when a tokenizer of the served model is at hand: the model directory's
``tokenizer.json`` through the ``tokenizers`` library when it is installed, or
the server's own ``/tokenize``.  Then each prompt is sent as token ids, so the
server sees exactly ``input_tokens``.  Otherwise prompts are word strings of the
requested length and the result says "approximate"; the prompt tokens the
server reports are still recorded.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from launchcard.bench._types import Sizing

if TYPE_CHECKING:
    import httpx

Tokenize = Callable[[str], list[int]]

_WORDS = ("river", "stone", "lamp", "garden", "north", "copper", "window", "seven", "cloud", "paper",
          "bridge", "orange", "silent", "market", "winter", "engine", "forest", "signal", "harbor", "violet",
          "candle", "meadow", "planet", "thunder", "basket", "mirror", "falcon", "velvet", "summit", "lantern")


def local_tokenizer(model_dir: Path) -> Tokenize | None:
    """The model directory's fast tokenizer, if ``tokenizers`` is installed."""
    path = model_dir / "tokenizer.json"
    if not path.is_file():
        return None
    try:
        from tokenizers import Tokenizer
    except ImportError:
        return None
    tok = Tokenizer.from_file(str(path))
    return lambda text: tok.encode(text, add_special_tokens=False).ids


def server_tokenizer(client: httpx.Client, endpoint: str, model: str) -> Tokenize | None:
    """vLLM's ``/tokenize`` (the served model's tokenizer), if it answers."""
    import httpx

    def tokenize(text: str) -> list[int]:
        resp = client.post(f"{endpoint}/tokenize", json={"model": model, "prompt": text,
                                                           "add_special_tokens": False})
        resp.raise_for_status()
        return [int(t) for t in resp.json()["tokens"]]

    try:
        tokenize("probe")
    except (httpx.HTTPError, KeyError, ValueError, TypeError):
        return None
    return tokenize


def make_prompts(n: int, input_tokens: int, *, seed: int = 0,
                 tokenize: Tokenize | None = None) -> tuple[list[str] | list[list[int]], Sizing]:
    """n distinct prompts (no shared prefix, so no prefix-cache hits between them)."""
    rng = random.Random(seed)
    texts: list[str] = []
    token_ids: list[list[int]] = []
    for i in range(n):
        words = [f"doc{i}"] + [rng.choice(_WORDS) for _ in range(input_tokens)]
        if tokenize is None:
            texts.append(" ".join(words[:input_tokens]))
            continue
        ids = tokenize(" ".join(words))
        while len(ids) < input_tokens:
            words += [rng.choice(_WORDS) for _ in range(input_tokens)]
            ids = tokenize(" ".join(words))
        token_ids.append(ids[:input_tokens])
    # one kind of prompt per run: text without a tokenizer, exact token ids with one
    prompts: list[str] | list[list[int]] = texts if tokenize is None else token_ids
    return prompts, ("approximate" if tokenize is None else "exact")
