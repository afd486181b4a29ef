"""The text form of a prediction: the figures, what bounds each phase, and the step breakdown."""

from __future__ import annotations

from launchcard.predict._types import Prediction


def figure_text(value: float, decimals: int, spec: str = "") -> str:
    """``value`` at ``decimals`` (``spec``: the width and grouping before the precision, e.g. ``"10,"``), or at three
    significant digits where those decimals would print a non-zero figure as zero (``--rate 1e-9``: 2.56e-07 tok/s,
    not 0.0): every text surface writes figures by it."""
    text = f"{value:{spec}.{decimals}f}"
    if value != 0 and float(f"{value:.{decimals}f}") == 0:
        return f"{value:{spec.rstrip(',')}.3g}"
    return text


def prediction_to_text(p: Prediction, *, title: str = "") -> str:
    f = figure_text
    lines = [title] if title else []
    none = "      none   (no request has a second output token)"
    lines += [
        f"TTFT        mean {p.ttft_ms_mean:10.2f} ms   median {p.ttft_ms_median:.2f} ms",
        f"TPOT        mean {p.tpot_ms_mean:10.3f} ms   (excluding the first token, as vllm bench serve)"
        if p.has_tpot else f"TPOT        mean {none}",
        f"ITL         mean {p.itl_ms_mean:10.3f} ms" if p.has_tpot else f"ITL         mean {none}",
        f"E2E         mean {p.e2e_ms_mean:10.1f} ms",
        f"output      {f(p.output_tok_per_s, 1, '10')} tok/s   {f(p.output_tok_per_s_per_gpu, 1)} tok/s per GPU "
        f"({p.gpus} GPU{'' if p.gpus == 1 else 's'})"
        + (f"   {f(p.output_tok_per_s_per_user, 1)} tok/s per user" if p.has_tpot else ""),
        f"requests    {f(p.request_per_s, 3, '10')} /s",
        f"batch       {p.mean_batch:10.1f} decode sequences per step, {p.mean_step_ms:.3f} ms per step on average",
        f"KV cache    {p.kv_cache_tokens:10,} tokens per replica (the engine's pool)"
        + (f", {p.kv_cache_tokens_simulated:,} simulated for this workload's requests (finding kv-sliding-window)"
           if p.kv_cache_tokens_simulated != p.kv_cache_tokens else ""),
        "",
    ]
    for ph in (p.prefill, p.decode):
        shares = ", ".join(f"{k} {v:.0%}" for k, v in sorted(ph.shares.items(), key=lambda kv: -kv[1]) if v >= 0.005)
        if ph.bound is None:
            lines.append(f"{ph.name:<8} bound: none           (no time in this phase)")
            continue
        lines.append(f"{ph.name:<8} bound: {ph.bound:<14} ({shares})")
    if p.steps:
        lines += ["", "representative steps (ms):"]
        for s in p.steps:
            kind = "mixed/prefill" if s.get("prefill_tokens") else "decode"
            lines.append(
                f"  {kind:<13} {int(s['decode_seqs'])} decode seqs + {int(s['prefill_tokens'])} prefill tokens, "
                f"{int(s['context_tokens'])} context tokens: {s['ms']:.3f} = memory {s['memory_ms']:.3f} + compute "
                f"{s['compute_ms']:.3f} + communication {s['communication_ms']:.3f} + overhead {s['overhead_ms']:.3f}")
    if p.findings:
        lines += [""] + [f"{f.severity:<8} {f.message}" for f in p.findings]
    return "\n".join(lines)
