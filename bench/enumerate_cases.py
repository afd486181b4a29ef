"""A large case set for the reference builder: every model x variant x usable hardware x usable
strategy x node counts x feature sets (+ each spec mode, each usable KV offload option, the
advanced presets, PD pools), in the golden case format without results.

Feed it to the reference JS builder for the golden results, then check launchcard against them
and time both (``bench.sh --golden``):

    .venv/bin/python bench/enumerate_cases.py ../shared/corpus/vllm-recipes /tmp/cases.jsonl
    node ../shared/tools/refbuilder/run.mjs --recipes ../shared/corpus/vllm-recipes \\
        --cases /tmp/cases.jsonl --out /tmp/js.jsonl

Only combinations the builder offers are written (usable hardware, spec §3.1; usable strategies,
§3.2; usable KV options, §3.5; PD pool modes the UI offers): outside them the UI, not the
builder, decides, and the golden generator never asks.  On the corpus here: 164,831 cases (launchcard
matches the reference on all of them).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from typing import Any, TextIO

from launchcard.resolve import _pd, default_features
from launchcard.resolve._defaults import effective_compatible, strategy_reasons, usable_hardware
from launchcard.resolve._run import _context, _kv_selection
from launchcard.sources.vllm_recipes import load_recipes

KV_OPTIONS = ("simple", "lmcache", "offloading_cpu", "offloading_fs", "kv_store_centralized_mooncake",
              "kv_store_distributed_mooncake")
ADVANCED = ["max_batched_8k", "gpu_mem_095", "dcp_8"]


def _emit(out: TextIO, model: str, kind: str, inputs: dict[str, Any]) -> None:
    cid = hashlib.sha1(json.dumps([model, kind, inputs], sort_keys=True).encode()).hexdigest()[:16]
    out.write(json.dumps({"id": cid, "model": model, "source_file": f"models/{model}.yaml", "kind": kind,
                          "inputs": inputs}) + "\n")


def _feature_sets(defaults: list[str], features: list[str]) -> list[list[str]]:
    sets = [defaults, [], features] + [defaults + [f] for f in features if f not in defaults]
    sets += [[f for f in defaults if f != g] for g in defaults[:2]]
    seen: set[tuple[str, ...]] = set()
    return [s for s in sets if not (tuple(s) in seen or seen.add(tuple(s)))]  # type: ignore[func-returns-value]


def enumerate_cases(recipes: str, out: TextIO) -> int:
    repo = load_recipes(recipes)
    n = 0
    for model in repo.model_ids():
        doc = repo.recipe(model)
        r = doc.recipe
        for v in list(r.variants) or ["default"]:
            for hw in usable_hardware(repo, r, v):
                if r.is_omni:
                    for task in [t.key or t.id for t in (r.omni.tasks if r.omni else ())] or [None]:
                        _emit(out, model, "omni", {"variant": v, "hardware": hw, "omni_task": task})
                        n += 1
                    continue
                defaults = default_features(r, v, hw)
                modes: list[dict[str, str]] = [{}] + [{f: m} for f, feat in r.features.items()
                                                       for m in (feat.modes or {})]
                offered = effective_compatible(repo, r)
                for s in offered:
                    ctx = _context(repo, doc, v, hw, s, 1)
                    if strategy_reasons(ctx, s):
                        continue
                    deploy = repo.strategies[s].deploy_type
                    nodes = [2, 3, 4] if deploy == "multi_node" else [1]
                    base = {"variant": v, "hardware": hw, "strategy": s, "node_count": nodes[0],
                            "features": defaults, "feature_modes": {}, "pd_nodes": None, "kv_offload": None,
                            "kv_instances": None, "advanced": []}
                    for nc in nodes:
                        for i, fs in enumerate(_feature_sets(defaults, list(r.features))):
                            for fm in modes if i == 0 else [{}]:
                                _emit(out, model, "serve", {**base, "node_count": nc, "features": fs,
                                                            "feature_modes": fm})
                                n += 1
                    for kv in KV_OPTIONS:
                        if _kv_selection(ctx, kv) != (None, None):
                            _emit(out, model, "serve", {**base, "kv_offload": kv,
                                                        "kv_instances": 3 if kv.startswith("kv_store") else None})
                            n += 1
                    _emit(out, model, "serve", {**base, "advanced": ADVANCED})
                    n += 1
                    if deploy == "pd_cluster":
                        layouts: list[Any] = [{"prefill": 1, "decode": 1}, {"prefill": 2, "decode": 3}]
                        layouts += [{"prefill": {"nodes": 2, "rank": 1, "parallelism": m},
                                     "decode": {"nodes": 3, "rank": 2, "parallelism": m}}
                                    for m in _pd.pool_modes(ctx, offered)]
                        for pd in layouts:
                            _emit(out, model, "serve", {**base, "pd_nodes": pd})
                            n += 1
    return n


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("recipes", help="a vllm-project/recipes checkout (e.g. ../shared/corpus/vllm-recipes)")
    ap.add_argument("out", help="the JSONL case file to write")
    args = ap.parse_args()
    with open(args.out, "w", encoding="utf-8") as sink:
        print(f"{enumerate_cases(args.recipes, sink)} cases", file=sys.stderr)
