"""Time to ingest the whole corpus into a fresh catalog, and a second, unchanged ingest; or, with
``--synthetic N``, a Hub-scale streaming ingest.

The second ingest must store 0 captures (the documents did not change) and only move ``checked_at``.

``--synthetic N`` (e.g. 100000): N corpus-shaped cards (bench/synth_cards.py) streamed by
``launchcard ingest --cards`` as whole processes: cards/s (target >= 2,000), peak RSS of the ingest and its
workers (target <= 300 MB), the unchanged second run, and a run killed with SIGKILL part-way then run again
(every card stored exactly once).

Usage: .venv/bin/python bench/ingest.py [--corpus ../shared/corpus] [--repeat 3] [--synthetic 100000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from launchcard.merge import build_corpus
from launchcard.store import Catalog


def _ingest(lines: Path, catalog: Path, *extra: str) -> tuple[float, float, int, str]:
    """(wall s, CPU s of the process and its workers, peak RSS in MB, last output line) of one ingest."""
    import resource
    import subprocess
    import sys

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "launchcard.cli", "ingest", "--cards", str(lines), "--catalog",
                          str(catalog), "--quiet", *extra], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss // 1024, run.stdout.strip().splitlines()[-1]


def synthetic(corpus: Path, n: int) -> None:
    import signal
    import sqlite3
    import subprocess
    import sys

    with tempfile.TemporaryDirectory() as tmp:
        lines = Path(tmp) / "cards.jsonl"
        t0 = time.perf_counter()
        subprocess.run([sys.executable, str(Path(__file__).with_name("synth_cards.py")), "--count", str(n), "--out",
                        str(lines), "--corpus", str(corpus)], check=True, capture_output=True)
        print(f"generated {n} synthetic cards ({lines.stat().st_size / 1e6:.0f} MB JSONL) in "
              f"{time.perf_counter() - t0:.0f} s")
        cat = Path(tmp) / "c.sqlite3"
        wall, cpu, rss, out = _ingest(lines, cat)
        print(f"streaming ingest: {n / wall:.0f} cards/s wall ({wall:.1f} s), {n / cpu:.0f} cards per CPU-second "
              f"(ingest + workers {cpu:.1f} s), peak RSS {rss} MB: {out}")
        wall2, cpu2, _, out2 = _ingest(lines, cat)
        print(f"again, unchanged: {wall2:.1f} s wall, {cpu2:.1f} s CPU: {out2}")
        killed = Path(tmp) / "k.sqlite3"
        proc = subprocess.Popen([sys.executable, "-m", "launchcard.cli", "ingest", "--cards", str(lines), "--catalog",
                                 str(killed), "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(wall * 0.4)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with sqlite3.connect(killed) as db:
            partial = db.execute("SELECT COUNT(*) FROM captures").fetchone()[0]
        _, _, _, out3 = _ingest(lines, killed)
        with sqlite3.connect(killed) as db:
            total, distinct = db.execute("SELECT COUNT(*), COUNT(DISTINCT model) FROM captures").fetchone()
        print(f"kill -9 after {wall * 0.4:.1f} s: {partial} committed; run again: {out3}; "
              f"{total} captures of {distinct} models ({'OK' if total == distinct == n else 'DUPLICATES/MISSING'})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "corpus"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--synthetic", type=int, help="stream N synthetic corpus-shaped cards instead (Hub scale)")
    args = ap.parse_args()
    if args.synthetic:
        synthetic(Path(args.corpus), args.synthetic)
        return
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
