"""bench/heldout_extract.py: a row lists as unmodelled only the flags the predictor does not read from its command
(the predictor's own readers say which it reads), and the committed fixture agrees with the extractor."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from heldout_dennislee import dl_engine_log  # noqa: E402
from heldout_extract import _plan, label_setting, predictor_reads  # noqa: E402


def test_flags_the_predictor_reads_are_not_unmodelled() -> None:
    # each read from the command by its engine's reader: trtllm-serve's by predict._trtllm.read_serve_command,
    # vLLM's --async-scheduling by settings_from_argv, SGLang's backends and graph limit by predict._sglang
    assert _plan("trtllm-serve Qwen/Qwen3-32B --max_seq_len=40960 --enable_chunked_prefill")[1] == []
    assert _plan("vllm serve m --async-scheduling --max-num-seqs 8")[1] == []
    assert _plan("python3 -m sglang.launch_server --model-path m --attention-backend nsa --nsa-decode-backend fa3 "
                 "--cuda-graph-max-bs 8")[1] == []
    # what no reader takes stays listed
    assert _plan("python3 -m sglang.launch_server --model-path m --enable-torch-compile")[1] == [
        "--enable-torch-compile"]
    assert _plan("export TRTLLM_DG_ENABLED=0 trtllm-serve m")[1] == ["TRTLLM_DG_ENABLED=0"]
    assert "--enable_chunked_prefill" in predictor_reads("trtllm")
    assert "--enable_chunked_prefill" not in predictor_reads("vllm")


def test_the_fixture_lists_what_the_extractor_lists() -> None:
    rows = json.loads((ROOT / "tests" / "fixtures" / "predict_heldout.json").read_text(encoding="utf-8"))["rows"]
    commands = [r for r in rows if not r["id"].startswith("dennislee:")]  # dennislee's notes are the page's own
    assert len(commands) > 150
    for r in commands:
        assert r["unmodelled_flags"] == _plan(r["serve_command"])[1], r["id"]


def test_engine_log_says_which_sampler_vllm_took() -> None:
    """vLLM 0.10.1.1's 'Using FlashInfer for top-p & top-k sampling' (topk_topp_sampler.py:51) is read with its line;
    a log without it states nothing (None), never the PyTorch path."""
    log = "INFO a\n(EngineCore_0 pid=1) INFO [topk_topp_sampler.py:50] Using FlashInfer for top-p & top-k sampling.\n"
    got = dl_engine_log(log, "https://x/log/a.log")
    assert got["flashinfer_sampler"] is True and got["flashinfer_sampler_url"] == "https://x/log/a.log#L2"
    none = dl_engine_log("INFO a\nINFO b\n", "https://x/log/a.log")
    assert none["flashinfer_sampler"] is None and none["flashinfer_sampler_url"] is None


def test_a_block_labelled_with_a_setting_ran_with_it() -> None:
    """A page sweeping one flag shows one serving script and labels each result block with the value it ran:
    gpt-oss-20b/a100.md (gpustack 47277d79) shows --max-num-batched-tokens 8192 (L198) above blocks labelled
    '# --max-num-batched-tokens 4096' (L203) and 8192 (L227); the 4096 block is planned at 4096."""
    cmd = "vllm serve openai/gpt-oss-20b --async-scheduling --max-num-batched-tokens 8192"
    assert label_setting(cmd, "--max-num-batched-tokens 4096") == (
        "vllm serve openai/gpt-oss-20b --async-scheduling --max-num-batched-tokens 4096")
    assert label_setting(cmd, "--max-num-batched-tokens 8192") == cmd
    assert label_setting("vllm serve m --max-num-batched-tokens=8192 -tp 2", "--max-num-batched-tokens 4096") == (
        "vllm serve m --max-num-batched-tokens 4096 -tp 2")
    assert label_setting("vllm serve m", "--max-num-batched-tokens 4096") == (
        "vllm serve m --max-num-batched-tokens 4096")
    # a label that is not a setting leaves the script's command
    assert label_setting(cmd, "random 128 input") == cmd and label_setting(cmd, None) == cmd
    rows = json.loads((ROOT / "tests" / "fixtures" / "predict_heldout.json").read_text(encoding="utf-8"))["rows"]
    labelled = [r for r in rows if re.fullmatch(r"--max-num-batched-tokens \d+", r["source"]["label"] or "")]
    assert len(labelled) == 7  # gpt-oss-120b/a100, gpt-oss-20b/a100, qwen3-235b-a22b/a100 and /h100
    for r in labelled:
        value = int(r["source"]["label"].split()[1])
        assert r["plan"]["max_num_batched_tokens"] == value, r["id"]
        assert r["serve_command"].endswith(f"--max-num-batched-tokens {value}"), r["id"]

