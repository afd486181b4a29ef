"""SGLang plans in a search: each candidate's command read as ``predict --engine sglang`` reads it, the DP
attention SGLang's model code allows, its running-request limit per scheduler, and the note a result carries."""

from __future__ import annotations

from typing import TYPE_CHECKING

from launchcard.errors import NOT_STARTED, LaunchcardError

if TYPE_CHECKING:
    from launchcard.memory import Arch
    from launchcard.plansearch._types import Candidate, Option
    from launchcard.predict import HardwareFigures, ServingFacts


def sglang_facts(opt: Option, argv: tuple[str, ...], gpu: str, version: str | None,
                 figures: HardwareFigures | None = None) -> ServingFacts | str:
    """The facts of an SGLang candidate as ``predict --engine sglang`` reads its command
    (:func:`launchcard.predict.sglang_command_facts`: SGLang's memory share, KV pool, chunk and graph defaults),
    or SGLang's reason it cannot serve (in SGLang's terms; vLLM's memory verdict is never applied)."""
    from launchcard.errors import PredictError
    from launchcard.predict import sglang_command_facts

    try:
        facts = sglang_command_facts(argv, opt.config, gpu, hardware=figures, model=opt.model_id,
                                     version=version)
    except PredictError as exc:
        return f"{NOT_STARTED} ({exc.rule})"
    except LaunchcardError as exc:
        return f"cannot be planned ({exc.rule})"
    return facts


def dp_attention(arch: Arch, version: str | None) -> bool:
    """Whether SGLang ``version`` serves the model's architecture with DP attention
    (:func:`launchcard.limits.dp_attention_serves`)."""
    from launchcard.limits import dp_attention_serves

    return any(dp_attention_serves(a, version) for a in arch.architectures[:1])


def running(facts: ServingFacts, c: Candidate, given: int) -> int:
    """The requests one SGLang scheduler of ``c`` runs at once for ``--max-running-requests given``: split over
    DP-attention ranks, capped by the request pool (:func:`launchcard.predict.sglang_running`)."""
    from launchcard.predict import sglang_running

    return sglang_running(given, facts.kv_capacity_tokens, facts.max_model_len, c.dp if c.dp_attention else 1)


def sglang_note(version: str | None, dpa: bool) -> str:
    """How SGLang plans are searched and read (one line of the result's findings); ``dpa``: DP attention was
    searched for some option."""
    from launchcard.check import sglang_parser_release
    from launchcard.limits import dp_attention_flags, dp_attention_release
    from launchcard.predict import SGLANG_RULES_RELEASE

    parser, other = sglang_parser_release(version)
    return ("sglang plans: each command is checked against "
            + (f"SGLang {parser}'s captured parser spec and " if parser else "")
            + "SGLang's split of the heads over its attention TP size (not vLLM's start-up rules"
            + (f"; {other}" if other else "") + "), and "
              f"read as SGLang {SGLANG_RULES_RELEASE} serves it (predict --engine sglang: "
            "--mem-fraction-static, --chunked-prefill-size and --cuda-graph-max-bs defaults by GPU memory and TP, "
            "its KV pool, --max-running-requests per scheduler capped by the request pool); expert parallelism as "
            "--ep-size = --tp-size (experts over the TP group), with DP attention too as --ep-size 1 (the experts "
            "TP-split over the group); "
            + ("DP attention (" + " ".join(f if v is None else f"{f} D" for f, v in dp_attention_flags(2, parser))
               + ", D dividing --tp-size) searched: the architecture's "
               f"model code in SGLang {dp_attention_release(version)} splits attention over DP ranks; "
               if dpa else "DP attention not searched: the architecture's SGLang model code does not split "
                           "attention over DP ranks (or it is not known); ")
            + "speculative decoding as MTP (--speculative-algorithm EAGLE) where the checkpoint has MTP layers, and "
              "as the SGLang sources run the checkpoint (--corpus: the card's SGLang commands); prefill/decode "
              "pools are not searched")
