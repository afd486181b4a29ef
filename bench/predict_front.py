"""What TTFT's front-end term stands for: the evidence behind the GPU sets' ``request_ms`` / ``inflight_us``.

    python bench/predict_front.py --residuals          # calibration rows at light load (~30 s CPU)
    .cache/vllm-venv/bin/python bench/predict_front.py --tokenize PATH/tokenizer.json   # needs ``tokenizers``

``--residuals``: every aggregated run of the aiconfigurator-core 0.12.0 wheel's silicon_sample.csv (the GPU
sets' calibration data, read as bench/predict_accuracy.py reads it) at <= 64 clients, predicted with the shipped
set of its engine but its front-end terms at 0 (the engine alone: queueing, prefill steps, the first token), and
the measured TTFT minus that prediction summarized by engine, prompt length and clients, next to the measured
TPOT (how many decode steps the gap is).  What a per-request front end (HTTP, tokenizing the prompt, streaming)
costs does not depend on the model or grow with the decode step; the gap on these runs does both.

``--tokenize``: server-side tokenizing, the part of an API server's front end that grows with the prompt,
timed in CPU time (``time.process_time``, robust to a busy machine) with the Hugging Face ``tokenizers`` library
on a real tokenizer file, for prompts made as the calibration clients make them (random token ids decoded to
text, re-tokenized by the server: vllm bench serve / InferenceX's RandomDataset).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def tokenize(path: str, lengths: tuple[int, ...] = (128, 1024, 8192), repeats: int = 15) -> list[dict[str, Any]]:
    """CPU microseconds to encode one prompt of about each length in tokens (median of ``repeats``)."""
    from tokenizers import Tokenizer  # the library vLLM's and SGLang's fast tokenizers run on

    tok = Tokenizer.from_file(path)
    rng = random.Random(0)
    vocab = tok.get_vocab_size()
    out = []
    for n in lengths:
        text = tok.decode([rng.randrange(256, vocab) for _ in range(n)])
        times = []
        got = 0
        for _ in range(repeats):
            t0 = time.process_time()
            got = len(tok.encode(text).ids)
            times.append(time.process_time() - t0)
        us = statistics.median(times) * 1e6
        out.append({"tokens": got, "cpu_us": round(us, 1), "cpu_us_per_token": round(us / got, 3)})
    return out


def residuals(max_clients: int = 64) -> dict[str, Any]:
    """Measured TTFT minus the engine-only prediction on the calibration runs, by (engine, ISL, clients)."""
    from dataclasses import replace

    sys.path.insert(0, str(ROOT / "bench"))
    sys.path.insert(0, str(ROOT / "src"))
    import predict_accuracy as pa

    from launchcard.predict import Workload, coefficients, predict

    rows, _, prov = pa.load_rows()
    sets = {e: replace(coefficients("gpu", e), request_ms=0.0, inflight_us=0.0) for e in pa.ENGINE}
    groups: dict[tuple[str, int, int], list[tuple[float, float]]] = {}
    for r in rows:
        if r.concurrency > max_clients:
            continue
        isl, osl, ratio = pa.workload_lengths(r)
        p = predict(r.facts, Workload(isl=isl, osl=osl, concurrency=r.concurrency, range_ratio=ratio,
                                      num_requests=r.rounds * r.concurrency), sets[r.engine])
        groups.setdefault((r.engine, r.isl, r.concurrency), []).append((r.ttft_ms - p.ttft_ms_mean, r.tpot_ms))
    table = []
    for (engine, isl, conc), v in sorted(groups.items()):
        if len(v) < 5:  # the grid's own points (1k/8k prompts at 4-64 clients); stray lengths are too few
            continue
        gap = sorted(g for g, _ in v)
        table.append({"engine": engine, "isl": isl, "clients": conc, "runs": len(v),
                      "gap_ms_median": round(statistics.median(gap), 1),
                      "gap_ms_quartiles": [round(gap[len(gap) // 4], 1), round(gap[3 * len(gap) // 4], 1)],
                      "gap_in_tpots": round(statistics.median(g / t for g, t in v), 1)})
    return {"provenance": prov, "rows": table}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokenize", metavar="TOKENIZER_JSON", help="time tokenizing with this tokenizer.json")
    ap.add_argument("--residuals", action="store_true", help="light-load TTFT gap on the calibration runs")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not (args.tokenize or args.residuals):
        ap.error("pass --tokenize TOKENIZER_JSON and/or --residuals")
    out: dict[str, Any] = {}
    if args.tokenize:
        out["tokenize"] = {"tokenizer": args.tokenize, "prompts": tokenize(args.tokenize)}
    if args.residuals:
        out["residuals"] = residuals()
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for t in out.get("tokenize", {}).get("prompts", []):
        print(f"tokenize {t['tokens']:6d} tokens: {t['cpu_us']:9.1f} us CPU ({t['cpu_us_per_token']:.2f} us/token)")
    if "residuals" in out:
        print("| engine | ISL | clients | runs | measured - engine-only TTFT, ms (median, quartiles) | in TPOTs |")
        print("|---|---|---|---|---|---|")
        for r in out["residuals"]["rows"]:
            q = r["gap_ms_quartiles"]
            print(f"| {r['engine']} | {r['isl']} | {r['clients']} | {r['runs']} | {r['gap_ms_median']:+.0f} "
                  f"({q[0]:+.0f} .. {q[1]:+.0f}) | {r['gap_in_tpots']:+.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
