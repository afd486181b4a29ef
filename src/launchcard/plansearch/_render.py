"""Text and JSON of a search result: the winner, the ranking, the Pareto front, and why the others fail."""

from __future__ import annotations

from typing import Any

from launchcard.plansearch._types import Outcome, SearchResult


def _row(o: Outcome, first: str = " ") -> str:
    f = o.figures
    if f is None:
        return f"  {o.candidate.label()}: {o.reason}"
    tail = f"  [{o.reason}]" if o.reason else ""
    if o.screening_requests:  # a row the search did not predict again on the whole run: its figures say so
        tail += f"  [figures of the {o.screening_requests}-request screening run]"
    mark = "?" if o.undecided else " "  # its verdict cannot be decided: the "Undecided plans" lines say why
    from launchcard.predict import figure_text as t

    per_token = (f"{t(f.tok_s_per_user, 1, ',')} tok/s/user, TTFT {f.ttft_ms:,.1f} ms, TPOT {f.tpot_ms:.2f} ms"
                 if f.tpot_ms > 0 else f"TTFT {f.ttft_ms:,.1f} ms, no TPOT (no second output token)")
    return f"{first}{mark}{o.candidate.label()}: {t(f.tok_s_per_gpu, 1, ',')} tok/s/GPU, {per_token} ({f.bound}){tail}"


def _meeting(r: SearchResult) -> str:
    """How many candidates meet the SLO (``--json``'s ``meeting_slo``) and, where batch limits the run never
    reaches made some the same run, how many distinct runs they are (``meeting_slo_runs``, the rows ranked)."""
    if not r.meeting:
        return "none meet it"
    if r.meeting == len(r.ranked):
        return f"{r.meeting} meet it"
    return (f"{r.meeting} meet it as {len(r.ranked)} distinct runs (plans differing only in a max-num-seqs above what "
            "they run at once are one)")


def result_to_text(r: SearchResult, *, top: int = 10, header: str = "") -> str:
    lines = [header] if header else []
    held = sum(1 for o in r.ranked if o.undecided)
    lines.append(f"{len(r.outcomes)} candidate plans of {r.model} on {r.gpus} x {r.gpu} searched in {r.seconds:.2f} s "
                 f"({r.per_second:,.0f}/s); SLO {r.slo.text()} (means); {_meeting(r)}"
                 + (f" ({held} undecided, ranked last)" if held else ""))
    w = r.winner
    shown: list[Outcome] = []
    if w is not None:
        what = ("Best plan (most output tokens/s per GPU, then per user):" if w.decided else
                "Best plan (UNDECIDED: no decided plan meets the SLO; it may not start or fit):")
        lines += ["", what, _row(w)]
        cmd = r.commands.get(w.candidate)
        if cmd is not None:
            import shlex

            lines.append(f"    {shlex.join(cmd)}")
        lines += ["", f"Plans meeting the SLO (top {min(top, len(r.ranked))} of {len(r.ranked)} distinct runs; "
                      "? = undecided, ranked after every decided plan):"]
        lines += [_row(o) for o in r.ranked[:top]]
        shown += r.ranked[:top]
    else:
        lines += ["", "No plan meets the SLO. Closest plans and why they miss it:"]
        lines += [_row(o) for o in r.closest] or ["  (none could be predicted: see the rejections below)"]
        shown += r.closest
    lines += ["", "Pareto front (tokens/s per GPU against tokens/s per user; * meets the SLO, ? undecided):"]
    lines += [_row(o, "*" if o.meets else " ") for o in r.pareto] or ["  (no plan could be predicted)"]
    shown += r.pareto
    why = list(dict.fromkeys(o.undecided for o in shown if o.undecided))
    if why:
        lines += ["", "Undecided plans (?): launchcard cannot decide whether they start or fit; their figures "
                      "assume they do:"]
        lines += [f"  - {text}" for text in why]
    rej = r.rejected_by_reason()
    if rej:
        lines += ["", "Rejected plans, by reason:"]
        for reason, n in rej.items():
            example = r.example(reason)
            assert example is not None
            lines.append(f"  {n:>5}  {reason}  (e.g. {example.candidate.label()}: {example.reason})")
    if r.findings:
        lines += ["", "Findings:"] + [f"  - {f}" for f in r.findings]
    return "\n".join(lines)


def result_to_json(r: SearchResult, *, all_outcomes: bool = True) -> dict[str, Any]:
    def listed(o: Outcome) -> dict[str, Any]:
        cmd = r.commands.get(o.candidate)
        return {**o.to_json(), "command": list(cmd) if cmd is not None else None}

    return {
        "model": r.model, "gpu": r.gpu, "gpus": r.gpus,
        "slo": {"ttft_ms": r.slo.ttft_ms, "tpot_ms": r.slo.tpot_ms},
        "candidates": len(r.outcomes), "seconds": round(r.seconds, 4), "candidates_per_second": round(r.per_second, 1),
        # candidates meeting the SLO (as the outcomes' meets_slo count them) and the distinct runs they are (ranked)
        "meeting_slo": r.meeting, "meeting_slo_runs": len(r.ranked),
        "meeting_slo_undecided": sum(1 for o in r.ranked if o.undecided),
        "winner": listed(r.winner) if r.winner else None,
        "ranked": [listed(o) for o in r.ranked],
        "pareto": [listed(o) for o in r.pareto],
        "closest": [listed(o) for o in r.closest],
        "rejected_by_reason": r.rejected_by_reason(),
        "findings": list(r.findings),
        **({"outcomes": [o.to_json() for o in r.outcomes]} if all_outcomes else {}),
    }
