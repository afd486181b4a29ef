"""A candidate plan's command and the start-up checks it must pass before it is memory-planned.

vLLM's commands go through ``launchcard check``'s start-up rules (:func:`launchcard.check.limit_rules`), SGLang's
through SGLang's captured parser of the release. Each answer is cached per process (a plan search asks about the
same command shapes again for every batch limit, a sweep or the web server for every search).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

from launchcard.idmemo import IdMemo
from launchcard.plansearch._types import Candidate, Option, SearchSpace

if TYPE_CHECKING:
    from launchcard.check import ModelConfig


@lru_cache(maxsize=64)
def _model_config(config: str) -> ModelConfig:
    from launchcard.check import load_config

    return load_config(config)


# (config, argv, gpu, engine version) -> vLLM's start-up refusal of that command, or None
_REFUSALS: dict[tuple[object, ...], str | None] = {}
# the plan search's identity memos hold what its caches hold until it drops them whole (plansearch._search:
# _drop_caches, its bound CACHE_ENTRIES counts their entries): no bound of their own (predictions keyed by a memory
# plan's id must not outlive the plan an identity memo keeps alive)
UNBOUNDED = sys.maxsize
# space -> {(option, the plan's shape but its batch limit): (vLLM's first start-up refusal of the shape's commands
# at a batch limit no rule refuses, or None; --max-num-batched-tokens as they give it)}: of vLLM's start-up rules
# only max_num_batched_tokens >= max_num_seqs reads the batch limit, so the ~8 limits of one shape share one check
# (refusal); by the space's identity (IdMemo: an id another object reuses never hits)
_SHAPES: IdMemo[SearchSpace, dict[tuple[object, ...], tuple[str | None, int | None]]] = IdMemo(UNBOUNDED)


def _no_shapes(space: SearchSpace) -> dict[tuple[object, ...], tuple[str | None, int | None]]:
    return {}


def command_argv(space: SearchSpace, opt: Option, c: Candidate) -> tuple[str, ...]:
    """The ``vllm serve`` command of an aggregated candidate (one of a pool's, for a disaggregated one): the
    option's resolved flags with the searched ones replaced, as ``--emit`` would write them."""
    from launchcard.plansearch._options import candidate_flags, searched_flags, with_flags

    release = None
    if space.engine == "sglang":  # written in the flags of the release its parser is checked at
        from launchcard.check import sglang_parser_release

        release = sglang_parser_release(space.engine_version)[0]
    flags = with_flags(candidate_flags(opt, c), searched_flags(c, opt, space.max_model_len, space.engine, release))
    if space.engine == "sglang":
        model = () if "--model-path" in flags else ("--model-path", opt.model_id)
        return ("python3", "-m", "sglang.launch_server", *model, *flags)
    return ("vllm", "serve", opt.model_id, *flags)


def refusal(space: SearchSpace, opt: Option, c: Candidate) -> str | None:
    """The first start-up refusal ``launchcard check`` finds in the candidate's command (vLLM's rules from
    :mod:`launchcard.limits`, through :func:`launchcard.check.limit_rules`: length, heads over TP, quantization
    against dtype and GPU, and whatever rules it learns), as ``[code] message``; None when vLLM would start.
    An SGLang command is judged by SGLang's captured parser of the release (flags and values it accepts), never
    by vLLM's rules."""
    if space.engine == "sglang":
        return _sglang_refusal(space, opt, c)
    if space.engine != "vllm":
        return None
    shapes = _SHAPES.get(space, _no_shapes)
    shape = (c.option, c.mode, c.tp, c.pp, c.dp, c.ep, c.kv_cache_dtype, c.spec, c.spec_tokens, c.prefill_gpus,
             c.dp_attention, c.chunk)
    known = shapes.get(shape)
    if known is None:
        # checked at batch limit 1, which no --max-num-batched-tokens of at least 1 refuses
        one = replace(c, max_num_seqs=1)
        known = shapes[shape] = (_limit_refusal(space, opt, one), _batched_tokens(command_argv(space, opt, one)))
    why, budget = known
    if budget is not None and c.max_num_seqs > budget:  # the rule that reads the batch limit may refuse it
        return _limit_refusal(space, opt, c)
    return why


def _batched_tokens(argv: tuple[str, ...]) -> int | None:
    """--max-num-batched-tokens as vLLM's scheduler rules read it from ``argv`` (None: not given or unread)."""
    from launchcard.argv import parse_command
    from launchcard.errors import ArgvError

    try:
        return parse_command(argv).get_int("--max-num-batched-tokens")
    except ArgvError:
        return None


def _limit_refusal(space: SearchSpace, opt: Option, c: Candidate) -> str | None:
    """:func:`refusal` of a vLLM candidate, checked on its own commands (a disaggregated plan's two pools)."""
    pools = [c] if c.mode == "aggregated" else [replace(c, mode="aggregated", dp=c.prefill_gpus // c.tp),
                                                  replace(c, mode="aggregated")]
    for one in pools:
        argv = command_argv(space, opt, one)
        key = (opt.config, argv, space.gpu, space.engine_version)
        if key in _REFUSALS:
            hit = _REFUSALS[key]
        else:
            from launchcard.check import startup_refusal
            from launchcard.hardware import find

            first = startup_refusal(_model_config(opt.config), argv, find(space.gpu), space.engine_version)
            hit = f"[{first.code}] {first.message}" if first else None
            _REFUSALS[key] = hit
        if hit is not None:
            return hit
    return None


def _sglang_refusal(space: SearchSpace, opt: Option, c: Candidate) -> str | None:
    """The first error SGLang's captured parser spec finds in the candidate's command (unknown flag, a value
    outside its choices ...), as ``[flag-rule] flag: message``, else SGLang's heads split refusal (``[tp-heads]``,
    ``[tp-kv-heads]``)."""
    argv = command_argv(space, opt, c)
    key = ("sglang", argv, space.engine_version)
    if key in _REFUSALS:
        return _REFUSALS[key]
    from launchcard.check import sglang_parser_release
    from launchcard.flags import check_argv

    # the stated release's parser (the newest when none is stated); none captured: not judged, the note says so
    version = sglang_parser_release(space.engine_version)[0]
    errors = [] if version is None else [f for f in check_argv(list(argv), engine="sglang", version=version)
                                         if f.severity == "error"]
    hit = f"[flag-{errors[0].rule}] {errors[0].flag}: {errors[0].message}" if errors else None
    if hit is None:  # SGLang's heads split over its attention TP size, as `launchcard check` words it
        from launchcard.check import startup_refusal

        first = startup_refusal(_model_config(opt.config), argv, None, space.engine_version)
        hit = f"[{first.code}] {first.message}" if first else None
    _REFUSALS[key] = hit
    return hit


def clear() -> None:
    """Forget every start-up answer (and the model configs read for them)."""
    _REFUSALS.clear()
    _SHAPES.clear()
    _model_config.cache_clear()


def entries() -> int:
    """The answers held now (counted in the plan search's cache bound)."""
    return len(_REFUSALS) + sum(map(len, _SHAPES.values()))
