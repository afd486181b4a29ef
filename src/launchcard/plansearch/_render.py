"""Text and JSON of a search result: the winner, the ranking, the Pareto front, and why the others fail."""

from __future__ import annotations

from typing import Any

from launchcard.plansearch._types import Outcome, SearchResult


def _row(o: Outcome) -> str:
    f = o.figures
    if f is None:
        return f"  {o.candidate.label()}: {o.reason}"
    tail = f"  [{o.reason}]" if o.reason else ""
    return (f"  {o.candidate.label()}: {f.tok_s_per_gpu:,.1f} tok/s/GPU, {f.tok_s_per_user:,.1f} tok/s/user, "
            f"TTFT {f.ttft_ms:,.1f} ms, TPOT {f.tpot_ms:.2f} ms ({f.bound}){tail}")


def result_to_text(r: SearchResult, *, top: int = 10, header: str = "") -> str:
    lines = [header] if header else []
    lines.append(f"{len(r.outcomes)} candidate plans of {r.model} on {r.gpus} x {r.gpu} searched in {r.seconds:.2f} s "
                 f"({r.per_second:,.0f}/s); SLO {r.slo.text()} (means); {len(r.ranked)} meet it")
    w = r.winner
    if w is not None:
        lines += ["", "Best plan (most output tokens/s per GPU, then per user):", _row(w)]
        lines += ["", f"Plans meeting the SLO (top {min(top, len(r.ranked))} of {len(r.ranked)}):"]
        lines += [_row(o) for o in r.ranked[:top]]
    else:
        lines += ["", "No plan meets the SLO. Closest plans and why they miss it:"]
        lines += [_row(o) for o in r.closest] or ["  (none could be predicted: see the rejections below)"]
    lines += ["", "Pareto front (tokens/s per GPU against tokens/s per user; * meets the SLO):"]
    lines += [("* " if o.meets else "  ") + _row(o).strip() for o in r.pareto] or ["  (no plan could be predicted)"]
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
    return {
        "model": r.model, "gpu": r.gpu, "gpus": r.gpus,
        "slo": {"ttft_ms": r.slo.ttft_ms, "tpot_ms": r.slo.tpot_ms},
        "candidates": len(r.outcomes), "seconds": round(r.seconds, 4), "candidates_per_second": round(r.per_second, 1),
        "meeting_slo": len(r.ranked),
        "winner": r.winner.to_json() if r.winner else None,
        "ranked": [o.to_json() for o in r.ranked],
        "pareto": [o.to_json() for o in r.pareto],
        "closest": [o.to_json() for o in r.closest],
        "rejected_by_reason": r.rejected_by_reason(),
        "findings": list(r.findings),
        **({"outcomes": [o.to_json() for o in r.outcomes]} if all_outcomes else {}),
    }
