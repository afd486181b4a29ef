"""The SGLang cookbook's published benchmark output in ../shared/corpus, scored (test data: never fitted on).

Split from bench/predict_accuracy.py, whose ``--corpus-only`` prints this table: each published run predicted for
its own server command and bench workload (bench/sglang_tables.py reads them) with the shipped gpu sets.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from predict_accuracy import ROOT, ape, fmt, pct

from launchcard.errors import LaunchcardError
from launchcard.hardware import find
from launchcard.memory import Settings
from launchcard.predict import Coefficients, Workload, predict

CORPUS = ROOT.parent / "shared" / "corpus"


def score_corpus(sets: dict[str, Coefficients]) -> list[dict[str, Any]]:
    """Each published run predicted for its own server command (SGLang's defaults filled by
    ``launchcard.predict.sglang_plan``) under its own bench workload (bench/sglang_tables.py): the cookbook
    pages' result blocks ("pages") and the per-cell benchmark tables ("cells")."""
    from sglang_tables import acceptance_from_length, config_for, corpus_points, table_points

    from launchcard.predict import serving_facts, sglang_model_traits, sglang_plan, sglang_serving_facts

    rows = []
    for table, pts in (("pages", corpus_points(CORPUS)), ("cells", table_points())):
        for p in pts:
            load = " ".join(x for x in (f"c{p.concurrency}" if p.concurrency is not None else "",
                                         f"{p.rate:g} req/s" if p.rate is not None else "") if x)
            entry: dict[str, Any] = {"table": table, "where": p.where, "model": p.model, "gpu": p.gpu,
                                     "gpus": p.gpu_count, "release": p.release, "workload": f"{p.isl}x{p.osl} {load}",
                                     "lengths": p.lengths, "server": " ".join(p.server), "problems": p.problems,
                                     "comparable": p.not_comparable is None, "why_not": p.not_comparable}
            rows.append(entry)
            cfg = config_for(p.model)
            if cfg is None:
                entry["error"] = f"no config.json for {p.model} in the corpus hf/"
                continue
            try:
                acc = find(p.gpu)
                arch, vision = sglang_model_traits(cfg)
                plan = sglang_plan(p.server, gpu_memory_gib=acc.memory_gib, version=p.release, vision=vision,
                                   architecture=arch)
                f = sglang_serving_facts(cfg, plan, gpu=p.gpu, model=p.model)
                a = None
                if p.accept_length is not None and f.spec_tokens:  # the run's own acceptance, when published
                    a = acceptance_from_length(p.accept_length, f.spec_tokens)
                w = Workload(isl=p.isl, osl=p.osl, concurrency=p.concurrency, rate=p.rate, num_requests=p.requests,
                             acceptance=a, range_ratio=p.range_ratio)
                pr = predict(f, w, sets["sglang"])
                # the old reading, for comparison: the command's --tp only, vLLM's defaults, no DP/EP/spec flags
                tp_only = serving_facts(cfg, Settings(tp=plan.settings.tp * (plan.settings.dp if plan.dp_attention
                                                                              else 1)),
                                        gpu=p.gpu, engine="sglang", model=p.model)
                old = predict(tp_only, replace(w, acceptance=None), sets["sglang"])
            except LaunchcardError as exc:
                entry["error"] = exc.one_line()
                continue
            entry["old"] = {"tpot": ape(old.tpot_ms_mean, p.tpot_ms), "ttft": ape(old.ttft_ms_mean, p.ttft_ms),
                            "tput": ape(old.output_tok_per_s, p.out_tok_s)}
            entry.update({"tpot": ape(pr.tpot_ms_mean, p.tpot_ms), "ttft": ape(pr.ttft_ms_mean, p.ttft_ms),
                          "tput": ape(pr.output_tok_per_s, p.out_tok_s),
                          "signed": [pr.ttft_ms_mean / p.ttft_ms - 1, pr.tpot_ms_mean / p.tpot_ms - 1,
                                     pr.output_tok_per_s / p.out_tok_s - 1],
                          "measured": [p.ttft_ms, p.tpot_ms, round(p.out_tok_s, 1)],
                          "predicted": [round(pr.ttft_ms_mean, 2), round(pr.tpot_ms_mean, 3),
                                        round(pr.output_tok_per_s, 1)],
                          "plan": {"tp": f.tp, "dp": f.replicas, "ep": f.ep, "kv_tokens": f.kv_capacity_tokens,
                                   "max_running": f.max_num_seqs, "prefill_budget": f.max_num_batched_tokens,
                                   "spec": f.spec_method, "spec_tokens": f.spec_tokens, "acceptance": a,
                                   "kv_dtype": plan.settings.kv_cache_dtype},
                          "assumed": [x.message for x in pr.findings if x.severity == "assumed"]})
    return rows


def corpus_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Median APE per metric, per table and both, over the comparable rows and over all scored rows."""
    out: dict[str, Any] = {}
    for table in ("pages", "cells", "both"):
        for name in ("comparable", "all"):
            ok = [r for r in rows if "error" not in r and (name == "all" or r["comparable"])
                  and table in ("both", r["table"])]
            out[f"{table}, {name}"] = {"rows": len(ok),
                                       **{m: pct([r[m] for r in ok], 0.5) for m in ("tpot", "ttft", "tput")}}
        ok = [r for r in rows if "old" in r and r["comparable"] and table in ("both", r["table"])]
        out[f"{table}, comparable, old reading (--tp only, vLLM defaults)"] = {
            "rows": len(ok), **{m: pct([r["old"][m] for r in ok], 0.5) for m in ("tpot", "ttft", "tput")}}
    return out


def print_corpus(result: dict[str, Any]) -> None:
    print("\nSGLang cookbook tables (corpus, test data; the gpu:sglang set fitted on the wheel's runs):")
    print("| run | model | GPUs | workload | TTFT ms meas / pred | TPOT ms meas / pred "
          "| output tok/s meas / pred | comparable |")
    print("|---|---|---|---|---|---|---|---|")
    for r in result["corpus_sglang"]:
        mark = "yes" if r["comparable"] else "no (below)"
        if "error" in r:
            print(f"| {r['where']} | {r['model']} | {r['gpus']}x {r['gpu']} | {r['workload']} | {r['error']} "
                  f"| | | {mark} |")
            continue
        me, pr = r["measured"], r["predicted"]
        print(f"| {r['where']} | {r['model']} | {r['gpus']}x {r['gpu']} | {r['workload']} | {me[0]:g} / "
              f"{pr[0]:g} | {me[1]:g} / {pr[1]:g} | {me[2]:g} / {pr[2]:g} | {mark} |")
    for name, v in result["corpus_sglang_summary"].items():
        print(f"corpus medians, {name} rows ({v['rows']}): TPOT {fmt(v['tpot'])}, TTFT {fmt(v['ttft'])}, "
              f"throughput {fmt(v['tput'])}")
    for why in sorted({r["why_not"] for r in result["corpus_sglang"] if r["why_not"]}):
        print(f"not comparable: {why}")
    print()
