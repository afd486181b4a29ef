"""Web catalog latency, in-process (no network): p50/p90 of the model page and the index.

    .venv/bin/python bench/web_latency.py [--corpus ../shared/corpus] [--rounds 50] [--synthetic 5000]

1. Ingests the corpus into a temporary catalog and times ``/`` (all models) and
   ``/zai-org/GLM-5.3-Flash`` (model page with the builder) over ``--rounds``
   requests each, after one warm-up request (first-request cost is reported apart).
2. Builds a synthetic catalog of ``--synthetic`` models (copies of the corpus
   cards under new ids) and times the index (first page, a hardware filter, a
   text search) the same way.
3. Also times the gpt-oss-120b page (verdict + memory bar: its config.json is in the corpus) and the
   GLM-5.3-Flash performance page (points from ``--benchmarks``, default the test fixtures).
Targets (issue 13): model page p50 <= 30 ms, corpus index p50 <= 100 ms, 5,000-model index p50 <= 150 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(client, url: str, rounds: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    first = client.get(url)
    cold = (time.perf_counter() - t0) * 1000
    assert first.status_code == 200, (url, first.status_code)
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        client.get(url)
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    return {"first_ms": round(cold, 1), "p50_ms": round(statistics.median(samples), 1),
            "p90_ms": round(samples[int(0.9 * (len(samples) - 1))], 1)}


def synthetic(src: Path, dst: Path, n: int) -> None:
    from launchcard.card import LaunchCard
    from launchcard.store import Catalog

    with Catalog(src) as cat:
        cards = [LaunchCard.model_validate_json(j) for _, _, j in cat.latest_json()]
    out = []
    for i in range(n):
        base = cards[i % len(cards)]
        out.append(base.model_copy(update={"model": f"synthetic-{i // len(cards)}/{base.model.split('/')[-1]}-{i}"}))
    with Catalog(dst) as cat:
        cat.add(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--synthetic", type=int, default=5000)
    ap.add_argument("--benchmarks", type=Path, default=ROOT / "tests" / "fixtures" / "sglang-benchmarks",
                    help="folder of SGLang *-benchmarks.jsx files for the performance pages")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    from fastapi.testclient import TestClient

    from launchcard.web import create_app

    report: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cat = Path(tmp) / "corpus.sqlite3"
        subprocess.run([sys.executable, "-m", "launchcard.cli", "ingest", "--corpus", str(args.corpus), "--catalog",
                        str(cat), "--quiet"], check=True, capture_output=True)
        t0 = time.perf_counter()
        app = create_app(cat, args.corpus / "vllm-recipes", [args.benchmarks])
        report["corpus_startup_s"] = round(time.perf_counter() - t0, 2)
        with TestClient(app) as c:
            report["corpus_index"] = timed(c, "/", args.rounds)
            report["corpus_index_filtered"] = timed(c, "/?hardware=b200&hw_status=verified&sort=size", args.rounds)
            report["model_page"] = timed(c, "/zai-org/GLM-5.3-Flash", args.rounds)
            report["model_page_b200_spec"] = timed(
                c, "/zai-org/GLM-5.3-Flash?hardware=b200&feature=spec_decoding&mode=spec_decoding=mtp", args.rounds)
            report["model_twin"] = timed(c, "/zai-org/GLM-5.3-Flash.json", args.rounds)
            report["model_page_memory_bar"] = timed(c, "/openai/gpt-oss-120b", args.rounds)
            report["performance_page"] = timed(c, "/zai-org/GLM-5.3-Flash/performance", args.rounds)
        big = Path(tmp) / "synthetic.sqlite3"
        synthetic(cat, big, args.synthetic)
        t0 = time.perf_counter()
        app = create_app(big, args.corpus / "vllm-recipes")
        report["synthetic_models"] = len(app.state.catalog.rows)
        report["synthetic_startup_s"] = round(time.perf_counter() - t0, 2)
        with TestClient(app) as c:
            report["synthetic_index"] = timed(c, "/", args.rounds)
            report["synthetic_index_filtered"] = timed(c, "/?hardware=h200&sort=updated&page=3", args.rounds)
            report["synthetic_index_search"] = timed(c, "/?q=qwen", args.rounds)
            report["synthetic_index_json"] = timed(c, "/index.json?hardware=b200", args.rounds)
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
