"""Time to ingest the whole corpus into a fresh catalog (target: under 10 s).

Usage: .venv/bin/python bench/ingest.py [--corpus ../shared/corpus] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from launchcard.merge import build_corpus
from launchcard.store import Catalog


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "corpus"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    times = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            result = build_corpus(Path(args.corpus))
            t1 = time.perf_counter()
            with Catalog(Path(tmp) / "c.sqlite3") as cat:
                cat.add(result.cards.values())
            t2 = time.perf_counter()
        times.append((t2 - t0, t1 - t0, t2 - t1))
        print(f"ingest: {len(result.cards)} cards from {result.documents} documents, "
              f"{len(result.problems)} skipped: total {t2 - t0:.2f} s (build {t1 - t0:.2f} s, store {t2 - t1:.2f} s)")
    best = min(t[0] for t in times)
    print(f"best of {args.repeat}: {best:.2f} s (target < 10 s): {'OK' if best < 10 else 'TOO SLOW'}")


if __name__ == "__main__":
    main()
