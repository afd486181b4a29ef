"""A launch card as a Markdown page: notes, limits, deployment options, attributed facts, answers.

The prose is generated from the card's own data; every claim carries the
anchor of the source line it rests on.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter

from launchcard.card import Conflict, EngineEnv, Fact, LaunchCard
from launchcard.render._usage import RecipeTexts, env_calls_markdown, flag_table


def _anchor(f: Fact | None) -> str:
    if f is None or f.evidence is None:
        return "(no anchor)"
    return f.evidence.url or f"{f.evidence.path}#L{f.evidence.line}"


def _first(card: LaunchCard, name: str, kind: str | None = None) -> Fact | None:
    return next((f for f in card.facts if f.name == name and f.scope is None
                 and (kind is None or (f.evidence and f.evidence.kind == kind))), None) or next(
        (f for f in card.facts if f.name == name and (kind is None or (f.evidence and f.evidence.kind == kind))), None)


def _env_block(e: EngineEnv) -> str:
    env = "".join(f"{k}={v} \\\n" for k, v in e.env.items()) if e.env else ""
    cmd = e.command or " ".join(e.argv) or "(no command: the provider builds the server from its settings)"
    return f"```bash\n{env}{cmd}\n```"


def _conflict_line(c: Conflict) -> str:
    sides = "; ".join(
        f"`{s.value}` — {s.evidence.kind}{f' ({s.scope})' if s.scope else ''} {s.evidence.url or s.evidence.path or ''}"
        for s in c.sides)
    return f"- **{c.field}**: {sides}"


GB_PER_GIB = 2**30 / 1e9


def _gpus(card: LaunchCard) -> str:
    n = card.hardware.min_gpus
    f = _first(card, "min_gpus")
    if n is None:
        return "unknown (no source states a GPU count for a deployment that serves on its own)"
    return f"{n} GPU(s) — {f.scope if f else 'derived'}"


def _memory_lines(card: LaunchCard) -> list[str]:
    """The planner's figures with what they count, which command and GPU, and GiB against GB."""
    hw = card.hardware
    plan = _first(card, "memory_plan")
    if hw.min_total_vram_gib is None or plan is None or not isinstance(plan.value, dict):
        why = next((g.why for g in card.gaps if g.field == "hardware.min_total_vram_gib"), "not computed")
        return [f"- launchcard's own minimum: not computed — {why}."]
    p = plan.value
    cfg = _first(card, "min_total_vram_gib")
    problems = "; ".join(p.get("problems") or [])
    lines = [
        f"- launchcard's minimum for {plan.scope}: {hw.min_vram_per_gpu_gib} GiB per GPU, "
        f"{hw.min_total_vram_gib} GiB in total ({hw.min_total_vram_gib * GB_PER_GIB:.1f} GB). "
        "GiB = 2^30 bytes (what the planner and vLLM print); GB = 10^9 bytes (what recipes and GPU labels use).",
        f"  - Per GPU it counts weights {p.get('weights_gib')} + activation peak {p.get('activation_peak_gib')} "
        f"+ non-torch buffers {p.get('non_torch_gib')} + CUDA graphs {p.get('cuda_graph_gib')} + the KV cache of "
        f"one request of {p.get('max_model_len', 0):,} tokens {p.get('kv_one_request_gib')} GiB — the least vLLM "
        "needs to start; more concurrent requests need more KV.",
        f"  - It leaves out the share vLLM keeps unused (1 - gpu-memory-utilization): a device needs about "
        f"per-GPU / utilization. The {p.get('gpu')} in the plan reports {p.get('gpu_memory_gib')} GiB"
        f"{'' if p.get('fits_on_named_gpu') else ' and the command does NOT fit it: ' + problems}.",
        f"  - Not counted: {'; '.join(p.get('not_counted') or []) or 'nothing beyond the above'}.",
        f"  - It is the footprint of this layout (TP {p.get('tp')} x PP {p.get('pp')} x DP {p.get('dp')}), "
        "not the smallest layout the model could use.",
        f"  - Reproduce: `{' '.join(shlex.quote(a) for a in p.get('reproduce') or [])} --json`; planned command: "
        f"`{p.get('command')}`; config sha256 {cfg.evidence.sha256 if cfg and cfg.evidence else 'unknown'}.",
    ]
    return lines


def render_markdown(card: LaunchCard, recipe: RecipeTexts | None = None) -> str:
    """The card as Markdown; ``recipe`` (the model's vLLM recipe texts) lets the recipe's command explain its
    flags in the recipe's own words and its client calls use the guide's reasoning control."""
    name = card.model.split("/")[-1]
    kinds = Counter(e.source.kind for e in card.envs)
    root = card.checkpoints[0] if card.checkpoints else None
    hf = card.hf
    out: list[str] = [f"# {name}: launch card", ""]
    out.append(f"Launch options for {card.model} gathered from {len(card.evidence)} source document(s); "
               "each value is attributed, disagreements are listed rather than resolved.")
    out += ["", f"- Model: {card.model}",
            f"- Captured: {card.captured_at.isoformat() if card.captured_at else 'unknown'}",
            f"- Captured by: {card.captured_by}",
            "- Engine environments: " + ", ".join(f"{k} × {n}" for k, n in kinds.items()),
            f"- Hub revision: {hf.revision if hf and hf.revision else 'not captured'}",
            f"- Hardware named: {', '.join(card.hardware.gpu_models) or 'none'}",
            f"- Smallest published deployment: {_gpus(card)}",
            f"- TP rule: {card.hardware.tp_rule or 'no source states a TP'}",
            f"- Conflicts: {len(card.conflicts)}; gaps: {len(card.gaps)}", ""]
    out += ["## Sources", ""]
    for r in card.evidence:
        out.append(f"- {r.kind}: {r.url or r.path} "
                   f"(revision {r.revision or 'unknown'}, sha256 {r.sha256 or 'unknown'})")
    out += ["", "## Reading notes", ""]
    ctx = _first(card, "context_tokens", "vllm-recipes") or _first(card, "context_tokens")
    if ctx:
        out.append(f"- Declared context: {ctx.value:,} tokens ({ctx.evidence.kind if ctx.evidence else '?'}).")
    ver = _first(card, "min_engine_version")
    if ver:
        out.append(f"- Recipe minimum vLLM version: {ver.value}.")
    if root:
        out.append(f"- Default artifact: {root.name} (format {root.format or 'unknown'}).")
    out.append("- Commands are quoted as each source prints them; a source's hardware label is its own claim.")
    out += ["", "## Limits", "",
            "- Nothing here was run by launchcard; verification badges belong to the sources' maintainers.",
            "- Served context, concurrency and speculative settings are per-deployment choices, not model limits.",
            "- Gaps below list what no source states.", ""]
    out += ["## Deployment options", ""]
    for e in card.envs:
        head = f"### {e.engine} · {e.role}" + (f" · {e.hardware}" if e.hardware else "") + \
            (f" × {e.gpus}" if e.gpus else "") + f" — {e.source.kind}"
        out += [head, "", f"Source: {(e.evidence.url if e.evidence else None) or e.source.url or e.source.path}",
                f"Checkpoint: {e.checkpoint or 'unknown'}; image: {e.image or 'unknown'}", ""]
        if e.notes:
            out += [e.notes, ""]
        if e.flag_verdicts:
            out += ["Flag check (engine's own parser, per captured version): "
                    + ", ".join(f"{e.engine} {v}: {verdict}" for v, verdict in e.flag_verdicts.items()), ""]
        elif e.argv:
            out += [f"Flag check: no captured parser for {e.engine}.", ""]
        if e.verdict is not None:
            out += [f"Verdict: **{e.verdict.status}**", ""]
            out += [f"- {line}" for line in e.verdict.findings if not line.startswith("info")] or []
            out += [""] if any(not line.startswith("info") for line in e.verdict.findings) else []
        out += [_env_block(e), ""]
        if e.argv:
            out += ["What each flag does:", "", flag_table(e, recipe)]
        out += ["<details><summary>Client calls</summary>", "", env_calls_markdown(e, card, recipe),
                "</details>", ""]
    out += ["## Conflicts", ""]
    out += [_conflict_line(c) for c in card.conflicts] or ["- none found"]
    out += ["", "## Gaps", ""]
    out += [f"- {g.field}: {g.why}" for g in card.gaps] or ["- none"]
    out += ["", "## Which artifact and engine?", ""]
    fmt = root.format if root else None
    out.append(f"The card's default artifact is {root.name if root else card.model}"
               f"{f', whose format is {fmt}' if fmt else ''}. Engines offered: "
               + ", ".join(sorted({e.engine for e in card.envs})) + ". Conversions used by some sources: "
               + (", ".join(c.name for c in card.checkpoints[1:]) or "none") + ".")
    out += ["", f"Sources: {_anchor(_first(card, 'checkpoint_format'))}", ""]
    out += ["## What needs attention?", ""]
    if card.conflicts:
        for c in card.conflicts:
            out.append(f"- {c.field}: {c.note or ''}")
    else:
        out.append("- The sources agree on every compared fact.")
    out += ["", "## How do the settings apply?", "",
            "Pick one environment above and use it whole: its flags, environment and image belong together. "
            "Parser names and speculative settings differ between engines and sources; use the values of the "
            "environment you launch, not a mix.", ""]
    out += ["## What does the memory number mean?", ""]
    plan = [f for f in card.facts if f.name == "planning_minimum_gb"]
    if plan:
        for f in plan:
            out.append(f"- {f.scope}: {f.value} GB is the recipe's declared planning minimum, not a measured peak "
                       f"({_anchor(f)}).")
    else:
        out.append("- No source declares a memory minimum.")
    out += _memory_lines(card)
    if hf and hf.weight_gib:
        out.append(f"- Weights on the Hub: {hf.weight_gib} GiB in {hf.weight_files} file(s); KV cache, "
                   "activations and draft models come on top.")
    out += ["", "## What is needed to reproduce a deployment?", "",
            "Record the weight revision (see the weights_revision conflict, if any), the image digest, GPU model "
            "and count, the complete command with its environment, and the source revision it came from.", ""]
    out += ["## Attributed facts", "", "```json"]
    out.append(json.dumps([{"name": f.name, "value": f.value, "scope": f.scope,
                            "classification": f.classification, "evidence_url": _anchor(f),
                            "source_document_sha256": f.evidence.sha256 if f.evidence else None}
                           for f in card.facts], indent=2, default=str))
    out += ["```", ""]
    return "\n".join(out)
