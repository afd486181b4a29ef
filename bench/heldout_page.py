"""What every held-out source's reader shares (bench/heldout_extract.py's): the hardware a run states, the plan's
keys, a ``Serving Benchmark Result`` block's fields, and reading a file from a git snapshot."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

# the board a hardware line names: SXM modules join their GPUs over NVLink (NVIDIA's A100/H100/H200 datasheets), PCIe
# cards over PCIe unless a bridge is named
FORM_FACTORS = (("SXM", "SXM"), ("PCIe", "PCIe"), ("NVL", "NVL"))


def hardware(stated: str, url: str, *, link: str | None = None, link_url: str | None = None,
             note: str | None = None, p2p: bool | None = None) -> dict[str, Any]:
    """What a source states of the hardware a run used, each with its line: the words, the board (form factor:
    None when the words do not name one), what the run shows of the GPU-to-GPU link (None: not shown) and whether
    its GPUs had peer-to-peer access (``gpu_p2p``: False where the run's log says they had none; None: not shown)."""
    form = next((v for k, v in FORM_FACTORS if re.search(rf"\b{k}\b", stated)), None)
    return {"stated": stated, "url": url, "form_factor": form, "gpu_link": link, "gpu_link_url": link_url,
            "gpu_p2p": p2p, "note": note}

PLAN_KEYS = ("tp", "pp", "dp", "ep", "quantization", "kv_cache_dtype", "max_num_seqs", "max_num_batched_tokens",
             "max_model_len", "gpu_memory_utilization")
_RESULT = re.compile(r"=+ Serving Benchmark Result =+")
_FIELD = re.compile(r"^\s*([^:]+?):\s+([\d.]+)\s*$")
FIELDS = {"Successful requests": "requests", "Maximum request concurrency": "max_concurrency",
          "Total input tokens": "input_tokens", "Total generated tokens": "output_tokens",
          "Request throughput (req/s)": "request_per_s", "Output token throughput (tok/s)": "output_tok_per_s",
          "Mean TTFT (ms)": "ttft_ms_mean", "Median TTFT (ms)": "ttft_ms_median", "Mean TPOT (ms)": "tpot_ms_mean",
          "Median TPOT (ms)": "tpot_ms_median", "Mean ITL (ms)": "itl_ms_mean", "Median ITL (ms)": "itl_ms_median",
          "Benchmark duration (s)": "duration_s"}



def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(repo / ".git") if (repo / ".git").exists() else str(repo), *args],
                          check=True, capture_output=True, text=True).stdout
