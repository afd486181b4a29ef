"""Web catalog latency, in-process (no network): p50/p90 of the model page and the index.

    .venv/bin/python bench/web_latency.py [--corpus ../shared/corpus] [--rounds 50] [--synthetic 5000]

1. Ingests the corpus into a temporary catalog and times ``/`` (all models) and
   ``/zai-org/GLM-5.3-Flash`` (model page with the builder) over ``--rounds``
   requests each, after one warm-up request (first-request cost is reported apart).
2. Streams ``--synthetic`` corpus-shaped cards (bench/synth_cards.py, default 100,000) into a catalog with
   ``launchcard ingest --cards`` and times the index (pages, a hardware filter, facet filters, text searches,
   the JSON twin), each request a distinct URL so the response cache answers none of them: the index in SQL.
3. Also times the gpt-oss-120b page (verdict + memory bar: its config.json is in the corpus) and the
   GLM-5.3-Flash performance page (points from ``--benchmarks``, default the test fixtures).
Targets: model page p50 <= 30 ms, corpus index p50 <= 100 ms (issue 13); 100,000-model index p50 <= 150 ms per
page, in-process (issue 23).
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


def timed_distinct(client, urls: list[str]) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Each URL once (distinct queries: nothing is answered from a response cache), after one warm-up."""
    assert client.get(urls[0]).status_code == 200
    samples = []
    for url in urls[1:]:
        t0 = time.perf_counter()
        res = client.get(url)
        samples.append((time.perf_counter() - t0) * 1000)
        assert res.status_code == 200, (url, res.status_code)
    samples.sort()
    return {"n": len(samples), "p50_ms": round(statistics.median(samples), 1),
            "p90_ms": round(samples[int(0.9 * (len(samples) - 1))], 1), "max_ms": round(samples[-1], 1)}


def synthetic(corpus: Path, dst: Path, n: int, tmp: Path) -> dict[str, float]:
    """``n`` corpus-shaped cards (bench/synth_cards.py) streamed into ``dst`` by ``launchcard ingest --cards``."""
    lines = tmp / "synthetic.jsonl"
    subprocess.run([sys.executable, str(ROOT / "bench" / "synth_cards.py"), "--count", str(n), "--out", str(lines),
                    "--corpus", str(corpus)], check=True, capture_output=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "launchcard.cli", "ingest", "--cards", str(lines), "--catalog", str(dst),
                    "--quiet"], check=True, capture_output=True)
    wall = time.perf_counter() - t0
    lines.unlink()
    return {"ingest_s": round(wall, 1), "cards_per_s": round(n / wall)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--synthetic", type=int, default=100_000)
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
        report["synthetic_ingest"] = synthetic(args.corpus, big, args.synthetic, Path(tmp))
        t0 = time.perf_counter()
        app = create_app(big, args.corpus / "vllm-recipes")
        report["synthetic_models"] = app.state.catalog.count()
        report["synthetic_startup_s"] = round(time.perf_counter() - t0, 2)
        n = args.rounds + 1
        words = ["qwen", "llama", "glm", "deepseek", "kimi", "gemma", "mistral", "phi", "flash", "instruct", "30b",
                 "vl", "coder", "thinking", "moe", "fp8", "nemotron", "gpt-oss", "minimax", "ling"]
        with TestClient(app) as c:  # every request a different page or query: measured uncached, in SQL
            report["synthetic_index"] = timed_distinct(c, [f"/?page={k}" for k in range(1, n + 1)])
            report["synthetic_index_filtered"] = timed_distinct(
                c, [f"/?hardware=h200&sort=updated&page={k}" for k in range(1, n + 1)])
            report["synthetic_index_facets"] = timed_distinct(
                c, [f"/?task=text&arch={a}&sort=size&page={k}" for k in range(1, n + 1) for a in ("moe", "dense")][:n])
            report["synthetic_index_search"] = timed_distinct(
                c, [f"/?q={words[k % len(words)]}&page={1 + k // len(words)}" for k in range(n)])
            report["synthetic_index_json"] = timed_distinct(c, [f"/index.json?hardware=b200&page={k}"
                                                                for k in range(1, n + 1)])
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
