"""The reader of the SGLang cookbook's published runs (bench/sglang_tables.py): each run with its page's own
server and bench commands, the bench tool's defaults, checks against the printed result, and the pages
marked not comparable (with their evidence)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from launchcard.predict import accepted_per_step

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
sys.path.insert(0, str(ROOT / "bench"))

from sglang_tables import acceptance_from_length, corpus_points, read_page  # noqa: E402

RESULT = """```
============ Serving Benchmark Result ============
Backend:                                 sglang
Traffic request rate:                    {rate}
Max request concurrency:                 {conc}
Successful requests:                     {n}
Total input tokens:                      {tin}
Total generated tokens:                  {tout}
Output token throughput (tok/s):         1000.00
Peak output token throughput (tok/s):    1200.00
Accept length:                           2.50
Mean TTFT (ms):                          50.00
Mean TPOT (ms):                          5.00
Mean ITL (ms):                           4.00
==================================================
```
"""


def test_corpus_runs_use_their_own_commands() -> None:
    pts = corpus_points(CORPUS)
    assert len(pts) == 10  # 8 Kimi-K2.5 runs (the 1K/8K c64 one printed no result), 2 gpt-oss-120b
    oss = [p for p in pts if "gpt-oss" in p.page]
    # the benchmark's own server (--tp 8), not the --tp 2 tool-server commands above it on the page
    assert [p.server[-2:] for p in oss] == [("--tp", "8"), ("--tp", "8")]
    # bench_serving's defaults: ShareGPT when no --dataset-name; `--num-prompt` is argparse's prefix of --num-prompts
    assert [(p.dataset, p.concurrency, p.requests, p.rate, p.problems) for p in oss] == \
        [("sharegpt", 1, 100, None, []), ("sharegpt", 100, 1000, None, [])]
    assert [p.release for p in oss] == ["0.5.6", "0.5.6"] and oss[0].gpu == "b200" and oss[0].gpu_count == 8
    kimi = [p for p in pts if "Kimi" in p.page]
    assert {p.release for p in kimi} == {"0.5.6.post2"}
    assert [(p.isl, p.osl, p.concurrency) for p in kimi][:3] == [(610, 422, 1), (496, 510, 16), (500, 505, 100)]
    assert kimi[5].lengths == "random: input uniform 1..8000, output uniform 1..1000"  # range ratio 0 by default
    # ... fed to the predictor as its range ratio around the measured means: (8000 - 1) / (8000 + 1)
    assert kimi[5].range_ratio == round(7999 / 8001, 4) and oss[0].range_ratio == 0.0
    assert all(p.not_comparable and "KimiK25ForConditionalGeneration" in p.not_comparable for p in kimi)
    assert all(p.not_comparable is None for p in oss)


def test_a_page_with_rates_spec_and_mismatches(tmp_path: Path) -> None:
    page = tmp_path / "sglang-cookbook" / "M" / "M.mdx"
    page.parent.mkdir(parents=True)
    server = ("```bash\npython -m sglang.launch_server --model org/M --tp 8 --dp 8 --enable-dp-attention \\\n"
              "  --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-num-draft-tokens 4\n```\n")
    page.write_text(
        "- Hardware: NVIDIA H200 GPU (8x)\n- SGLang Version: 0.5.9\n" + server
        + "```bash\npython3 -m sglang.bench_serving --backend sglang --dataset-name random --random-input 2000 "
          "--random-output-len 500 --random-range-ratio 0.5 --num-prompts 64 --request-rate 4\n```\n"
        + RESULT.format(rate="4.0", conc="not set", n=60, tin=90000, tout=22500)
        + "```bash\npython3 -m sglang.bench_serving --backend sglang --dataset-name random --num-prompts 32 "
          "--max-concurrency 8 --request-rate 2\n```\n"
        + RESULT.format(rate="2.0", conc=16, n=32, tin=32768, tout=32768)
        + "```bash\npython3 -m sglang.bench_serving --backend sglang --num-prompts 32\n```\n"
        + RESULT.format(rate="inf", conc="not set", n=32, tin=32768, tout=32768),
        encoding="utf-8")
    a, b, c = read_page(page, tmp_path)
    assert (c.concurrency, c.rate, c.dataset) == (None, math.inf, "sharegpt")  # every request sent at once
    assert a.server == ("python", "-m", "sglang.launch_server", "--model", "org/M", "--tp", "8", "--dp", "8",
                        "--enable-dp-attention", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
                        "--speculative-num-draft-tokens", "4")
    assert (a.rate, a.concurrency, a.isl, a.osl, a.release) == (4.0, None, 1500, 375, "0.5.9")
    assert a.lengths == "random: input uniform 1000..2000, output uniform 250..500"
    assert a.range_ratio == round(1000 / 3000, 4)
    assert a.problems == ["60 successful requests, the command asked 64"]
    assert a.accept_length == 2.5 and a.peak_out_tok_s == 1200.0 and a.itl_ms == 4.0
    assert (b.concurrency, b.rate) == (8, 2.0)  # Poisson at 2 req/s, at most 8 in flight
    assert b.problems == ["printed concurrency 16, the command --max-concurrency 8"]
    header = "=" * 12 + " Serving Benchmark Result " + "=" * 12
    lines = page.read_text().splitlines()
    assert b.where == f"sglang-cookbook/M/M.mdx#L{lines.index(header, lines.index(header) + 1) + 1}"


@pytest.mark.parametrize(("steps", "a"), [(1, 0.5), (3, 0.7), (5, 0.85)])
def test_acceptance_from_accept_length_inverts_the_chain(steps: int, a: float) -> None:
    assert acceptance_from_length(accepted_per_step(steps, a), steps) == pytest.approx(a, abs=1e-3)
    assert acceptance_from_length(1.0, steps) == 0.0
    assert acceptance_from_length(steps + 1.0, steps) == 0.99


def test_corpus_scoring_predicts_each_page_command() -> None:
    from predict_accuracy import ENGINE
    from predict_corpus import corpus_summary, score_corpus

    from launchcard.predict import coefficients

    rows = score_corpus({e: coefficients("gpu", e) for e in ENGINE})
    pages = [r for r in rows if r["table"] == "pages"]
    assert len(pages) == 10 and not [r for r in pages if "error" in r]
    oss = [r for r in pages if r["comparable"]]
    assert [r["workload"] for r in oss] == ["332x213 c1", "297x192 c100"]
    # the plan is SGLang's for the page's command on 8 x B200: 16k prefill batches, its own KV pool
    assert all(r["plan"]["prefill_budget"] == 16384 and r["plan"]["tp"] == 8 for r in oss)
    assert any("--chunked-prefill-size not given: 16384" in a for a in oss[0]["assumed"])
    summ = corpus_summary(rows)
    assert (summ["pages, comparable"]["rows"], summ["pages, all"]["rows"]) == (2, 10)
    cells = [r for r in rows if r["table"] == "cells"]
    # predicted: the 12 DeepSeek-V4-Flash rows; the official checkpoint and GLM-5.3-Flash have no full config here
    assert sorted({r["model"] for r in cells if "error" in r}) == ["deepseek-ai/deepseek-v4-flash-official",
                                                                   "zai-org/glm-5.3-flash"]
    assert summ["cells, all"]["rows"] == 12
    dpa = next(r for r in cells if r["where"].endswith("#L32") and r["workload"].endswith("c64"))
    assert (dpa["plan"]["tp"], dpa["plan"]["dp"], dpa["plan"]["ep"], dpa["plan"]["spec_tokens"]) == (1, 4, True, 1)


def test_cell_tables_read_each_row_with_its_panel_cell() -> None:
    from sglang_tables import config_for, table_points

    pts = table_points()
    assert len(pts) == 23  # speed rows of the two fixture tables whose entry matches one panel cell
    by = {(p.where.rsplit("/", 1)[-1], p.concurrency): p for p in pts}
    low = by[("deepseek-v4-benchmarks.jsx#L22", 16)]
    assert low.server[3:9] == ("--trust-remote-code", "--model-path", "deepseek-ai/DeepSeek-V4-Flash", "--tp", "4",
                               "--moe-runner-backend")
    assert "--speculative-num-draft-tokens" in low.server and low.gpu_count == 4 and low.release == "0.5.15"
    # tokens_per_sec_per_gpu is total tok/s per GPU: output = 3059 x 4 GPUs x 1024 / 9216
    assert low.out_tok_s == pytest.approx(3059 * 4 * 1024 / 9216)
    assert low.problems == ["number of requests not published: 160 assumed (10 x concurrency)",
                            "length distribution not published: fixed lengths assumed"]
    dp = by[("deepseek-v4-benchmarks.jsx#L32", 256)]
    assert {"--dp", "--enable-dp-attention", "--moe-a2a-backend"} <= set(dp.server)
    # a speculative algorithm with no draft rule is not comparable; the official checkpoint has no config here
    off = by[("deepseek-v4-benchmarks.jsx#L12", 1)]
    assert off.not_comparable and "DSPARK" in off.not_comparable and config_for(off.model) is None
    # GLM: the run's own accept length (SGLANG_SIMULATE_ACC_LEN=3), its own request count, range ratio 1
    glm = by[("glm-5.3-flash-benchmarks.jsx#L119", 16)]
    assert (glm.accept_length, glm.requests, glm.problems) == (3.0, 32, [])
    # an entry whose own table says it ran BF16 KV (the cell, read at a later commit, has FP8)
    bf16 = by[("glm-5.3-flash-benchmarks.jsx#L27", 64)]
    assert bf16.server[bf16.server.index("--kv-cache-dtype") + 1] == "bfloat16"
    assert any("2.9-5.7% above BF16" in x for x in bf16.problems)


def test_an_image_run_spreads_its_outputs_as_the_random_dataset(tmp_path: Path) -> None:
    """sglang.bench_serving's image dataset draws text and output lengths by the random rule (0.5.6
    bench_serving.py L1441-1463) and adds its images to every prompt: the Qwen3-VL page's throughput run sent
    outputs of 1..1024 tokens around the printed mean, not 511 each."""
    page = tmp_path / "sglang-cookbook" / "V" / "V.mdx"
    page.parent.mkdir(parents=True)
    page.write_text(
        "- Hardware: NVIDIA B200 GPU (8x)\n- sglang version: 0.5.6\n"
        "```shell\npython -m sglang.launch_server --model org/V --tp 8\n```\n"
        "```shell\npython3 -m sglang.bench_serving --backend sglang-oai-chat --dataset-name image --image-count 2 "
        "--image-resolution 720p --random-input-len 128 --random-output-len 1024 --num-prompts 1000 "
        "--max-concurrency 100\n```\n"
        + RESULT.format(rate="inf", conc=100, n=1000, tin=1839015, tout=510855)
        + "```shell\npython3 -m sglang.bench_serving --backend sglang-oai-chat --dataset-name image "
          "--random-range-ratio 0.5 --random-output-len 400 --num-prompts 10 --max-concurrency 1\n```\n"
        + RESULT.format(rate="inf", conc=1, n=10, tin=20000, tout=3000),
        encoding="utf-8")
    a, b = read_page(page, tmp_path)
    assert a.lengths == "image: 2 x 720p images, text uniform 1..128, output uniform 1..1024"
    assert (a.isl, a.osl, a.concurrency) == (1839, 511, 100)
    assert a.range_ratio == round(1023 / 1025, 4)  # the outputs' own ratio: the images fix most of each prompt
    assert b.lengths == "image: 1 x 1080p images, text uniform 512..1024, output uniform 200..400"  # its defaults
    assert b.range_ratio == round(200 / 600, 4)
