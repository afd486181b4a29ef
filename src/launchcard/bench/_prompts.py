"""Synthetic prompts of a fixed token length.

Prompts are text, as real clients send them: the server tokenizes them on its
usual path (that cost is part of TTFT), and its prefix cache sees them as it
sees a client's (on vLLM 0.32 a token-id prompt never hit the cache, even when
sent twice).  vLLM's own `bench serve` and guidellm send text too.

Exact when a tokenizer of the served model is at hand: the model directory's
``tokenizer.json`` through the ``tokenizers`` library when it is installed, or
the server's own ``/tokenize`` and ``/detokenize``.  Each prompt is then cut to
``input_tokens`` token ids, decoded, and kept only if the text encodes back to
exactly that many tokens.  Otherwise prompts are word strings of the requested
length and the result says "approximate"; the prompt tokens the server reports
are still recorded.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from launchcard.bench._types import Sizing

if TYPE_CHECKING:
    import httpx


class Tokenizer(NamedTuple):
    """The served model's tokenizer, without special tokens."""

    encode: Callable[[str], list[int]]
    decode: Callable[[list[int]], str]


_WORDS = ("river", "stone", "lamp", "garden", "north", "copper", "window", "seven", "cloud", "paper",
          "bridge", "orange", "silent", "market", "winter", "engine", "forest", "signal", "harbor", "violet",
          "candle", "meadow", "planet", "thunder", "basket", "mirror", "falcon", "velvet", "summit", "lantern")


def local_tokenizer(model_dir: Path) -> Tokenizer | None:
    """The model directory's fast tokenizer, if ``tokenizers`` is installed."""
    path = model_dir / "tokenizer.json"
    if not path.is_file():
        return None
    try:
        from tokenizers import Tokenizer as Fast
    except ImportError:
        return None
    tok = Fast.from_file(str(path))
    return Tokenizer(encode=lambda text: tok.encode(text, add_special_tokens=False).ids,
                     decode=lambda ids: tok.decode(ids, skip_special_tokens=False))


def server_tokenizer(client: httpx.Client, endpoint: str, model: str) -> Tokenizer | None:
    """vLLM's ``/tokenize`` and ``/detokenize`` (the served model's tokenizer), if they answer."""
    import httpx

    def encode(text: str) -> list[int]:
        resp = client.post(f"{endpoint}/tokenize", json={"model": model, "prompt": text,
                                                           "add_special_tokens": False})
        resp.raise_for_status()
        return [int(t) for t in resp.json()["tokens"]]

    def decode(ids: list[int]) -> str:
        resp = client.post(f"{endpoint}/detokenize", json={"model": model, "tokens": ids})
        resp.raise_for_status()
        return str(resp.json()["prompt"])

    try:
        decode(encode("probe"))
    except (httpx.HTTPError, KeyError, ValueError, TypeError):
        return None
    return Tokenizer(encode, decode)


# How far from input_tokens a cut may go to find ids whose text encodes back
# to exactly input_tokens (a cut inside a word can re-merge differently).
_CUT_SLACK = 8


def exact_text(ids: list[int], n: int, tok: Tokenizer) -> str | None:
    """A text that encodes to exactly n tokens, decoded from a prefix of ``ids`` (None if none is found)."""
    for delta in range(_CUT_SLACK + 1):
        for cut in dict.fromkeys((n - delta, n + delta)):
            if 0 < cut <= len(ids):
                text = tok.decode(ids[:cut])
                if len(tok.encode(text)) == n:
                    return text
    return None


def make_prompts(n: int, input_tokens: int, *, seed: int = 0,
                 tokenizer: Tokenizer | None = None) -> tuple[list[str], Sizing]:
    """n distinct text prompts (no shared prefix, so no prefix-cache hits between them)."""
    rng = random.Random(seed)
    prompts: list[str] = []
    exact = tokenizer is not None
    for i in range(n):
        words = [f"doc{i}"] + [rng.choice(_WORDS) for _ in range(input_tokens)]
        if tokenizer is None:
            prompts.append(" ".join(words[:input_tokens]))
            continue
        ids = tokenizer.encode(" ".join(words))
        while len(ids) < input_tokens + _CUT_SLACK:
            words += [rng.choice(_WORDS) for _ in range(input_tokens)]
            ids = tokenizer.encode(" ".join(words))
        text = exact_text(ids, input_tokens, tokenizer)
        if text is None:  # no cut round-trips: send the nearest and let the server's count stand
            exact, text = False, tokenizer.decode(ids[:input_tokens])
        prompts.append(text)
    return prompts, ("exact" if exact else "approximate")
