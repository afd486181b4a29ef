"""Line credit over the corpus: the share of credited arguments and variables whose line holds the value.

Walks every recipe of the corpus, every variant, at its default hardware, h100 and mi300x (where the recipe
allows it), and judges each credit with ``tests/credit_support.py`` (the recipe files read as text).

    PYTHONPATH=src python bench/credit_coverage.py [--recipes DIR] [--misses N]
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from credit_support import judge_choices, judge_corpus, judge_strategies  # noqa: E402
from launchcard.sources.vllm_recipes import load_recipes  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recipes", type=Path, default=ROOT.parent / "shared" / "corpus" / "vllm-recipes")
    ap.add_argument("--misses", type=int, default=15, help="show this many misses")
    ap.add_argument("--strategies", action="store_true",
                    help="every strategy each recipe offers, at its default hardware (instead of the hardware walk)")
    ap.add_argument("--choices", action="store_true",
                    help="each feature, mode, KV offload option and advanced presets (instead of the hardware walk)")
    args = ap.parse_args()
    walk = judge_strategies if args.strategies else judge_choices if args.choices else judge_corpus
    judged = walk(args.recipes, load_recipes(args.recipes))
    credited = [j for j in judged if j.ok is not None]
    held = [j for j in credited if j.ok]
    plans = len({j.where for j in judged})
    print(f"{len(held)}/{len(credited)} credited values held by their line "
          f"({100 * len(held) / max(1, len(credited)):.2f}%), {len(judged) - len(credited)} user choices, "
          f"{plans} commands")
    misses = [j for j in credited if not j.ok]
    kinds = collections.Counter(j.what.split(" ")[0].split("=")[0] for j in misses)
    if kinds:
        print("misses by flag/variable:", ", ".join(f"{k} {n}" for k, n in kinds.most_common(12)))
    for j in misses[: args.misses]:
        print(f"  {j.where}: {j.what} credited to {j.credit}")


if __name__ == "__main__":
    main()
