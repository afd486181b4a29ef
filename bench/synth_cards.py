"""Synthetic launch cards at Hub scale, shaped like the corpus's: JSON Lines for ``launchcard ingest --cards``.

    .venv/bin/python bench/synth_cards.py --count 100000 --out /tmp/cards.jsonl [--corpus ../shared/corpus]

Each synthetic card copies the shape of one corpus card (round robin): its Hub
block, checkpoints, first command, the facts the index reads (architecture,
parameters, tasks, checkpoint format) and the evidence of those facts; the
model id is new (``synthetic-ORG/NAME-N``), the parameter count is scaled by a
seeded factor so the size facet spreads, and the capture time moves on so the
"updated" sort has work to do.  Written one line at a time (flat memory): a
stand-in for a platform's inventory or a Hub crawl, not real models.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_KEEP_FACTS = {"architecture_family", "params_total_b", "params_active_b", "tasks", "checkpoint_format",
               "context_tokens", "description", "tool_call_parser", "reasoning_parser"}
_ORGS = ("acme", "northwind", "contoso", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "tyrell")


def corpus_shapes(corpus: Path) -> list[dict[str, Any]]:
    """The corpus's cards as JSON, trimmed to what a Hub-scale catalog row carries."""
    from launchcard.merge import build_corpus

    out = []
    for card in build_corpus(corpus).cards.values():
        data = json.loads(card.model_dump_json(by_alias=True))
        facts = [f for f in data.get("facts") or [] if f.get("name") in _KEEP_FACTS]
        cited = {json.dumps(f.get("evidence"), sort_keys=True) for f in facts if f.get("evidence")}
        evidence = [e for e in data.get("evidence") or [] if json.dumps(e, sort_keys=True) in cited][:3] or \
            (data.get("evidence") or [])[:1]
        envs = []
        for env in (data.get("envs") or [])[:1]:
            envs.append({k: env[k] for k in ("engine", "role", "checkpoint", "argv", "command", "env",
                                              "validated_hardware", "hardware", "gpus", "source") if k in env})
        out.append({"schema": data.get("schema"), "model": data["model"], "hf": data.get("hf") or {},
                    "checkpoints": (data.get("checkpoints") or [])[:2], "envs": envs, "evidence": evidence,
                    "facts": facts, "captured_by": "bench/synth_cards.py"})
    return out


def synthetic(shapes: list[dict[str, Any]], count: int, seed: int = 7) -> Iterator[str]:
    rng = random.Random(seed)
    for i in range(count):
        base = shapes[i % len(shapes)]
        name = base["model"].split("/")[-1]
        model = f"synthetic-{_ORGS[(i // len(shapes)) % len(_ORGS)]}/{name}-{i}"
        scale = rng.choice((0.05, 0.1, 0.25, 0.5, 1.0, 1.0, 2.0, 4.0))
        facts = []
        for f in base["facts"]:
            f = dict(f)
            if f["name"] in ("params_total_b", "params_active_b") and isinstance(f.get("value"), (int, float)):
                f["value"] = round(float(f["value"]) * scale, 2)
            facts.append(f)
        hf = dict(base["hf"], repo=model)
        card = dict(base, model=model, hf=hf, facts=facts,
                    captured_at=f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T00:00:00+00:00")
        yield json.dumps(card, separators=(",", ":"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--out", type=Path, help="JSON Lines file (default: standard output)")
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    shapes = corpus_shapes(args.corpus)
    fh = args.out.open("w", encoding="utf-8") if args.out else sys.stdout
    try:
        for line in synthetic(shapes, args.count, args.seed):
            fh.write(line + "\n")
    finally:
        if args.out:
            fh.close()
    print(f"{args.count} synthetic card(s) from {len(shapes)} corpus shape(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
