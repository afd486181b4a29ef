"""What the `launchcard plan` tests share: the corpus paths, gpt-oss-120b's search space on one H100 node."""

from __future__ import annotations

from pathlib import Path

from launchcard.plansearch import SearchSpace, checkpoint_option

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
RECIPES = SHARED / "corpus" / "vllm-recipes"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"
MODEL = "openai/gpt-oss-120b"
SMALL = ("--max-num-seqs", "16", "--max-num-seqs", "64")


def gpt_oss_space(gpus: int = 8, **kw: object) -> SearchSpace:
    return SearchSpace(model=MODEL, gpu="h100", gpus=gpus, gpus_per_node=8,
                       options=(checkpoint_option(MODEL, GPT_OSS),), max_num_seqs=(16, 64), **kw)  # type: ignore[arg-type]
