"""vLLM's start-up refusals for one command, from :mod:`launchcard.limits` (vLLM's own wording as evidence)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from launchcard.check._config import ModelConfig
from launchcard.check._types import Finding


def heads_finding(cfg: ModelConfig, tp: int, role: str) -> Finding | None:
    """The error when TP does not divide the attention heads (vLLM refuses to start), quoting vLLM's check;
    the one wording of this rule for ``check`` on a command and on a plan."""
    from launchcard.limits import heads_refusal

    quote = heads_refusal(cfg.heads, tp)
    if not quote or not cfg.heads:
        return None
    good = [d for d in range(1, min(cfg.heads, 64) + 1) if cfg.heads % d == 0]
    return Finding(severity="error", code="tp-heads", role=role,
                   message=f"--tensor-parallel-size {tp} does not divide the {cfg.heads} attention heads "
                           "(vLLM refuses to start)",
                   evidence=f"{cfg.field('num_attention_heads')}; {quote}",
                   fix=f"use a TP that divides {cfg.heads}: {', '.join(map(str, good[-6:]))}")


def limit_rules(cfg: ModelConfig, argv: Sequence[str], role: str, env: Mapping[str, str] | None = None,
                capability: str | None = None, version: str | None = None, heads: bool = False) -> list[Finding]:
    """The start-up refusals :mod:`launchcard.limits` knows, for one command (vLLM's wording as evidence).

    ``heads`` adds the attention-heads / TP rule (plans judge it with their topology rules instead).
    """
    from launchcard.argv import parse_command
    from launchcard.errors import ArgvError
    from launchcard.flagspec import human_readable_int_or_auto
    from launchcard.limits import (
        ALLOW_LONG,
        length_refusal,
        max_len,
        quant_capability_refusal,
        quant_dtype_refusal,
    )

    try:
        cmd = parse_command(argv)
    except ArgvError:
        return []
    out: list[Finding] = []
    tp = cmd.get_int("--tensor-parallel-size", "-tp") or 1
    refused = heads_finding(cfg, tp, role) if heads else None
    if refused is not None:
        out.append(refused)
    raw = cmd.get_str("--max-model-len")
    limit = max_len(cfg.raw, version)
    if raw is not None and limit is not None:
        try:
            requested: int | None = human_readable_int_or_auto(raw)
        except ValueError:
            requested = None
        quote = length_refusal(requested, limit, env) if requested is not None else None
        if quote:
            out.append(Finding(
                severity="error", code="max-model-len-over-model", role=role,
                message=f"--max-model-len {requested:,} is above the {limit.limit:,} tokens vLLM derives from the "
                        f"config ({limit.how()}): vLLM refuses to start",
                evidence=f"{cfg.field(limit.key)}; {quote}",
                fix=f"use --max-model-len {limit.limit} or less (or set {ALLOW_LONG}=1 if the model really "
                    "handles longer inputs)"))
    method = (cmd.get_str("--quantization", "-q") or cfg.quant_method or "").lower() or None
    dtype = cmd.get_str("--dtype")
    quote = quant_dtype_refusal(method, dtype)
    if quote:
        out.append(Finding(severity="error", code="quant-dtype", role=role,
                           message=f"--dtype {dtype} with quantization {method}: vLLM refuses to start",
                           evidence=quote, fix="drop --dtype (auto) or use one the method supports"))
    quote = quant_capability_refusal(method, capability)
    if quote:
        out.append(Finding(severity="error", code="quant-gpu", role=role,
                           message=f"quantization {method} needs a newer GPU (compute capability {capability} "
                                   "here): vLLM refuses to start",
                           evidence=quote, fix="use a GPU the method supports, or a checkpoint in another format"))
    return out
