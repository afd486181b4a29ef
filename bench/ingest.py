"""Time to ingest the whole corpus into a fresh catalog (target: under 10 s), and a second, unchanged ingest.

The second ingest must store 0 captures (the documents did not change) and only move ``checked_at``.

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
            path = Path(tmp) / "c.sqlite3"
            t0 = time.perf_counter()
            result = build_corpus(Path(args.corpus))
            t1 = time.perf_counter()
            with Catalog(path) as cat:
                first = cat.ingest(result.cards.values())
            t2 = time.perf_counter()
            size = path.stat().st_size
            again = build_corpus(Path(args.corpus))
            t3 = time.perf_counter()
            with Catalog(path) as cat:
                second = cat.ingest(again.cards.values())
            t4 = time.perf_counter()
            grown = path.stat().st_size - size
        times.append((t2 - t0, t1 - t0, t2 - t1))
        print(f"ingest: {len(result.cards)} cards from {result.documents} documents, "
              f"{len(result.problems)} skipped: total {t2 - t0:.2f} s (build {t1 - t0:.2f} s, store {t2 - t1:.2f} s), "
              f"{len(first.stored)} captures, {size / 1e6:.1f} MB")
        print(f"  again (unchanged): {len(second.stored)} new captures, {len(second.unchanged)} checked, "
              f"catalog +{grown / 1e3:.0f} kB: total {t4 - t2:.2f} s (store {t4 - t3:.2f} s)")
    best = min(t[0] for t in times)
    print(f"best of {args.repeat}: {best:.2f} s (target < 10 s): {'OK' if best < 10 else 'TOO SLOW'}")


if __name__ == "__main__":
    main()
