"""The plan search plans each vLLM candidate's memory at its own --max-num-seqs, as `memory` and `predict` do: vLLM's
profile run samples max_num_seqs rows and its CUDA graphs follow it, so a small batch limit leaves more KV cache."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace

from helpers import run_cli
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.plansearch import Slo, search
from launchcard.predict import Workload
from plansearch_support import GPT_OSS, MODEL, gpt_oss_space


def test_a_one_gpu_plan_with_a_small_batch_limit_fits_as_memory_plans_it() -> None:
    """gpt-oss-120b on one H100 at --max-num-seqs 16: `memory` leaves ~6 GiB of KV cache (a 131,072-token request
    fits); planned at vLLM's default limit (1024) it left 2.67 GiB and the search called the plan 'does not fit'."""
    own = plan_memory(arch_from_config(json.loads(GPT_OSS.read_text())), Settings(tp=1, max_num_seqs=16), gpu="h100")
    assert own.fits
    space = replace(gpt_oss_space(gpus=1), max_num_seqs=(16,), kv_dtypes=("auto",)).validate()
    r = search(space, Workload(16000, 1000, concurrency=16), Slo.parse("tpot=1000"))
    best = r.winner
    assert best is not None and best.figures is not None, [o.reason for o in r.outcomes]
    assert best.figures.kv_tokens == own.kv_cache_tokens


def test_the_winner_figures_are_what_predict_gives_for_its_command() -> None:
    out = run_cli("plan", MODEL, "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "1", "--isl", "16000",
                  "--osl", "1000", "--concurrency", "16", "--max-num-seqs", "16", "--kv-cache-dtype", "auto",
                  "--slo", "tpot=1000", "--json")
    assert out.returncode == 0, out.stderr

    won = json.loads(out.stdout)["winner"]
    again = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", "--command", shlex.join(won["command"]),
                    "--isl", "16000", "--osl", "1000", "--concurrency", "16", "--json")
    assert again.returncode == 0, again.stderr
    p = json.loads(again.stdout)
    for key in ("ttft_ms_mean", "tpot_ms_mean", "output_tok_per_s"):
        assert won["figures"][key] == p[key], key
