"""Extract held-out published serving runs into ``tests/fixtures/predict_heldout.json``.

Only sources whose every field can be read from the page itself are extracted; nothing is
filled in by judgement (a field the page does not publish is ``null``, a run whose plan
cannot be stated is left out and counted by reason).

Source so far: GPUStack's "performance lab" pages (github.com/gpustack/gpustack,
``docs/performance-lab/<model>/<gpu>.md``): the serving command of every experiment and the
full ``vllm bench serve`` result block under it, with the model, the GPU count and the engine
releases in the page's "Experimental Setup".  Read from a git snapshot at a pinned commit
(the search tool's ``fetch github:gpustack/gpustack``)::

    python bench/heldout_extract.py --gpustack /work/.mirror/gpustack+gpustack/repo [--write]

The fixture is committed; this script only shows how it was made (and re-makes it).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "predict_heldout.json"
CONFIGS = ROOT / "tests" / "fixtures" / "predict_heldout_configs"
AIC_CONFIGS = "aic-core/src/aiconfigurator_core/model_configs"
REPO = "gpustack/gpustack"

# the page's "### Model" -> the Hugging Face id, and the config.json launchcard reads for it:
# (file in aiconfigurator-core 0.12.0's model_configs/, note when it is a sibling checkpoint's)
MODELS: dict[str, tuple[str, str, str | None]] = {
    "deepseek-ai/DeepSeek-R1-0528": ("deepseek-ai/DeepSeek-R1-0528", "deepseek-ai--DeepSeek-R1",
                                     "DeepSeek-R1's config (R1-0528 has the same architecture and quantization)"),
    "deepseek-ai/DeepSeek-V3.2": ("deepseek-ai/DeepSeek-V3.2", "deepseek-ai--DeepSeek-V3.2", None),
    "GPT-OSS-120B": ("openai/gpt-oss-120b", "openai--gpt-oss-120b", None),
    "GPT-OSS-20B": ("openai/gpt-oss-20b", "openai--gpt-oss-20b", None),
    "Qwen3-32B": ("Qwen/Qwen3-32B", "Qwen--Qwen3-32B", None),
    "Qwen/Qwen3-8B": ("Qwen/Qwen3-8B", "Qwen--Qwen3-8B", None),
    "Qwen3-235B-A22B-Instruct-2507": ("Qwen/Qwen3-235B-A22B-Instruct-2507", "Qwen--Qwen3-235B-A22B",
                                      "Qwen3-235B-A22B's config (-Instruct-2507 has the same layers; its "
                                      "max_position_embeddings is longer)"),
}
# a checkpoint named in the serving command that is not the page's model -> its config
CHECKPOINTS = {"Qwen/Qwen3-32B-FP8": "Qwen--Qwen3-32B-FP8", "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8":
               "Qwen--Qwen3-235B-A22B-FP8"}
GPUS = {"H100 SXM": "h100", "H200 SXM": "h200", "A100 SXM 80GB": "a100_80gb"}
ENGINES = {"vLLM": "vllm", "SGLang": "sglang", "TensorRT-LLM": "trtllm"}

# flags that do not change what the engine computes per step (parsers, templates, addresses)
NEUTRAL = {"--host", "--port", "--reasoning-parser", "--tool-call-parser", "--chat-template", "--tokenizer-mode",
           "--trust-remote-code", "--served-model-name", "--enable-auto-tool-choice", "--model", "--model-path"}
# flags that change the plan in ways the prediction cannot state: the run is left out
UNSTATABLE = {"--speculative-config": "speculative decoding (acceptance not published)",
              "--speculative-algorithm": "speculative decoding (acceptance not published)",
              "--enable-dp-attention": "SGLang DP attention (not modelled)",
              "--decode-context-parallel-size": "decode context parallel (not modelled)", "-dcp": "decode context "
              "parallel (not modelled)", "--data-parallel-size-local": "DP across nodes"}
INT_FLAGS = {"-tp": "tp", "--tensor-parallel-size": "tp", "--tp-size": "tp", "--tp": "tp", "--tp_size": "tp",
             "-pp": "pp", "--pipeline-parallel-size": "pp", "--pp-size": "pp", "--pp_size": "pp",
             "-dp": "dp", "--data-parallel-size": "dp", "--dp-size": "dp",
             "--max-num-seqs": "max_num_seqs", "--max-running-requests": "max_num_seqs",
             "--max_batch_size": "max_num_seqs", "--max-num-batched-tokens": "max_num_batched_tokens",
             "--max_num_tokens": "max_num_batched_tokens", "--chunked-prefill-size": "max_num_batched_tokens",
             "--max-model-len": "max_model_len", "--context-length": "max_model_len", "--max_seq_len": "max_model_len"}
STR_FLAGS = {"--quantization": "quantization", "-q": "quantization", "--kv-cache-dtype": "kv_cache_dtype"}
FLOAT_FLAGS = {"--gpu-memory-utilization": "gpu_memory_utilization", "--mem-fraction-static": "gpu_memory_utilization"}

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


def _section(lines: list[str], title: str) -> list[str]:
    out: list[str] = []
    on = False
    for ln in lines:
        if ln.startswith("#"):
            on = ln.strip() == f"### {title}"
            continue
        if on and ln.strip():
            out.append(ln.strip())
    return out


def _plan(cmd: str) -> tuple[dict[str, Any], list[str], str | None]:
    """Settings the serving command states, flags it sets that the prediction does not model, and a reason
    to leave the run out (None: keep)."""
    toks = shlex.split(cmd.replace("\\\n", " "))
    env = [t for t in toks if re.match(r"^[A-Z_][A-Z0-9_]*=", t)]
    toks = [t for t in toks if t not in env]
    plan: dict[str, Any] = {"tp": 1, "pp": 1, "dp": 1, "ep": False}
    unmodelled = list(env)
    i = 0
    while i < len(toks):
        t = toks[i]
        flag, _, inline = t.partition("=") if t.startswith("-") else (t, "", "")
        val = inline or (toks[i + 1] if i + 1 < len(toks) and not toks[i + 1].startswith("-") else "")
        step = 1 if inline or not val else 2
        if not t.startswith("-") or t == "-m":  # positional words, python's -m MODULE
            i += 2 if t == "-m" else 1
            continue
        if flag in UNSTATABLE:
            return plan, unmodelled, UNSTATABLE[flag]
        if flag in INT_FLAGS:
            plan[INT_FLAGS[flag]] = int(val)
        elif flag in STR_FLAGS:
            plan[STR_FLAGS[flag]] = val
        elif flag in FLOAT_FLAGS:
            plan[FLOAT_FLAGS[flag]] = float(val)
        elif flag in ("--enable-expert-parallel", "--enable-ep-moe"):
            plan["ep"] = True
            step = 1
        elif flag in ("--ep-size", "--ep_size", "--ep"):
            plan["ep"] = int(val) > 1
        elif flag == "--enforce-eager":
            plan["enforce_eager"] = True
            step = 1
        elif flag not in NEUTRAL:
            unmodelled.append(t if inline or not val or step == 1 else f"{t} {val}")
        i += step
    return plan, unmodelled, None


def _engine(cmd: str) -> str | None:
    if "vllm serve" in cmd:
        return "vllm"
    if "sglang.launch_server" in cmd:
        return "sglang"
    if "trtllm-serve" in cmd:
        return "trtllm"
    return None


def _checkpoint(cmd: str) -> str | None:
    toks = shlex.split(cmd.replace("\\\n", " "))
    for i, t in enumerate(toks):
        if t in ("serve", "trtllm-serve") and i + 1 < len(toks):
            return toks[i + 1]
        if t in ("--model", "--model-path") and i + 1 < len(toks):
            return toks[i + 1]
        if t.startswith(("--model=", "--model-path=")):
            return t.split("=", 1)[1]
    return None


def gpustack(repo: Path, skipped: dict[str, int]) -> tuple[list[dict[str, Any]], str]:
    commit = _git(repo, "rev-parse", "HEAD").strip()
    paths = [p for p in _git(repo, "ls-tree", "-r", "--name-only", commit, "docs/performance-lab").split()
             if p.endswith(".md") and "/references/" not in p and not p.endswith("overview.md")]
    rows: list[dict[str, Any]] = []

    def skip(why: str, n: int = 1) -> None:
        skipped[why] = skipped.get(why, 0) + n

    for path in sorted(paths):
        text = _git(repo, "show", f"{commit}:{path}")
        lines = text.split("\n")
        n_results = len(_RESULT.findall(text))
        if "vllm bench serve" not in text or "guidellm" in text:
            skip("guidellm runs (its TPOT counts the first token; constant-rate arrivals)", n_results)
            continue
        model_line = (_section(lines, "Model") or [""])[0].lstrip("- ")
        hw = " ".join(_section(lines, "Hardware"))
        gpu = next((v for k, v in GPUS.items() if k in hw), None)
        count = re.match(r"(\d+)\s*×", hw)
        gpus = int(count.group(1)) if count else (1 if hw.startswith("A single") else None)
        versions = {}
        for v in _section(lines, "Engine Version"):
            m = re.match(r"-\s*([\w-]+):?\s+v?(\S+)", v)
            if m and m.group(1) in ENGINES:
                versions[ENGINES[m.group(1)]] = m.group(2)
        if gpu is None or gpus is None:
            skip(f"accelerator not modelled or count not stated ({hw})", n_results)
            continue
        if model_line not in MODELS:
            skip(f"no config.json at hand for {model_line}", n_results)
            continue
        hf_id, config, config_note = MODELS[model_line]
        cmd, cmd_line = "", 0
        i = 0
        while i < len(lines):
            ln = lines[i]
            if re.search(r'\?\?\? info ".*[Ss]erving script"', ln):
                j = i + 1
                while j < len(lines) and "```" not in lines[j]:
                    j += 1
                k = j + 1
                while k < len(lines) and "```" not in lines[k]:
                    k += 1
                cmd = "\n".join(x.strip() for x in lines[j + 1:k])
                cmd_line = j + 2
                i = k + 1
                continue
            if _RESULT.search(ln):
                start = i
                got: dict[str, float] = {}
                i += 1
                while i < len(lines) and not re.match(r"^\s*=+\s*$", lines[i]):
                    m = _FIELD.match(lines[i])
                    if m and m.group(1).strip() in FIELDS:
                        got[FIELDS[m.group(1).strip()]] = float(m.group(2))
                    i += 1
                label = next((lines[b].strip().lstrip("# ").strip() for b in range(start - 1, max(0, start - 3), -1)
                              if lines[b].strip().startswith("# ")), None)
                row = _row(cmd, cmd_line, got, start + 1, label, path, commit, hf_id, config, config_note, gpu,
                           gpus, versions, skip)
                if row is not None:
                    rows.append(row)
                continue
            i += 1
    return rows, commit


def _row(cmd: str, cmd_line: int, got: dict[str, float], line: int, label: str | None, path: str, commit: str,
         hf_id: str, config: str, config_note: str | None, gpu: str, gpus: int, versions: dict[str, str],
         skip: Any) -> dict[str, Any] | None:
    engine = _engine(cmd)
    if engine is None:
        skip("no serving command above the result")
        return None
    plan, unmodelled, why = _plan(cmd)
    if why:
        skip(why)
        return None
    n = int(got.get("requests", 0))
    if not n or "tpot_ms_mean" not in got or "ttft_ms_mean" not in got:
        skip("result block without requests, TTFT or TPOT")
        return None
    ckpt = _checkpoint(cmd) or hf_id
    cfg = CHECKPOINTS.get(ckpt, config)
    if ckpt.startswith("/workspace") or ckpt == hf_id or ckpt.endswith(hf_id.split("/")[-1]):
        ckpt = hf_id
    elif ckpt in {m[0] for m in MODELS.values()}:
        skip("the serving command names another model than the page's")
        return None
    elif ckpt not in CHECKPOINTS:
        skip(f"checkpoint {ckpt} has no config at hand")
        return None
    used = plan["tp"] * plan["pp"] * plan["dp"]
    if used > gpus:
        skip("command uses more GPUs than the page's hardware")
        return None
    url = f"https://github.com/{REPO}/blob/{commit}/{path}"
    conc = int(got["max_concurrency"]) if "max_concurrency" in got else None
    return {
        "id": f"gpustack:{path.removeprefix('docs/performance-lab/')}#L{line}",
        "source": {"repo": REPO, "commit": commit, "path": path, "line": line, "url": f"{url}#L{line}",
                   "command_url": f"{url}#L{cmd_line}", "label": label},
        "model": hf_id if ckpt == hf_id else ckpt,
        "config": {"file": f"{cfg}_config.json", "note": None if cfg != config else config_note},
        "gpu": gpu, "gpus": gpus, "engine": engine, "engine_version": versions.get(engine),
        "serve_command": " ".join(cmd.replace("\\\n", " ").split()),
        "plan": {k: plan.get(k) for k in ("tp", "pp", "dp", "ep", "quantization", "kv_cache_dtype", "max_num_seqs",
                                           "max_num_batched_tokens", "max_model_len", "gpu_memory_utilization")},
        "unmodelled_flags": unmodelled,
        "workload": {
            # request rate: the page's bench command sets none (vllm bench serve's default: inf, all at once)
            "requests": n, "concurrency": conc if conc is not None else n, "request_rate": None,
            "arrivals": "closed loop" if conc is not None else "all at once (rate inf, no concurrency cap)",
            "isl_mean": round(got["input_tokens"] / n, 1), "osl_mean": round(got["output_tokens"] / n, 1),
            "dataset": None if label is None else ("random" if "random" in label.lower() else
                                                   "sharegpt" if "sharegpt" in label.lower() else None)},
        "measured": {k: got.get(k) for k in ("ttft_ms_mean", "ttft_ms_median", "tpot_ms_mean", "tpot_ms_median",
                                             "itl_ms_mean", "output_tok_per_s", "request_per_s", "duration_s")},
    }


def _copy_configs(repo: Path, names: set[str]) -> dict[str, Any]:
    """The model configs the rows read, copied from ai-dynamo/aiconfigurator's model_configs/ (the same bytes
    the aiconfigurator-core 0.12.0 wheel ships), each with its source."""
    commit = _git(repo, "rev-parse", "HEAD").strip()
    CONFIGS.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {}
    for name in sorted(names):
        path = f"{AIC_CONFIGS}/{name}"
        (CONFIGS / name).write_text(_git(repo, "show", f"{commit}:{path}"), encoding="utf-8")
        out[name] = {"repo": "ai-dynamo/aiconfigurator", "commit": commit, "path": path,
                     "url": f"https://github.com/ai-dynamo/aiconfigurator/blob/{commit}/{path}"}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpustack", type=Path, required=True, help="git snapshot of github.com/gpustack/gpustack")
    ap.add_argument("--aiconfigurator", type=Path, help="git snapshot of github.com/ai-dynamo/aiconfigurator "
                    "(model configs; needed with --write)")
    ap.add_argument("--write", action="store_true", help=f"write {FIXTURE.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    skipped: dict[str, int] = {}
    rows, commit = gpustack(args.gpustack, skipped)
    for why, n in sorted(skipped.items(), key=lambda kv: -kv[1]):
        print(f"  left out {n:4d}: {why}", file=sys.stderr)
    print(f"{len(rows)} rows from {REPO}@{commit[:12]}", file=sys.stderr)
    if args.write:
        doc = json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {}
        doc["rows"] = [r for r in doc.get("rows", []) if not r["id"].startswith("gpustack:")] + rows
        doc.setdefault("left_out", {})["gpustack"] = skipped
        doc.setdefault("sources", {})["gpustack"] = {"repo": REPO, "commit": commit, "path": "docs/performance-lab/"}
        doc["configs"] = _copy_configs(args.aiconfigurator, {r["config"]["file"] for r in doc["rows"]})
        tmp = FIXTURE.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, indent=1) + "\n")
        tmp.replace(FIXTURE)
    else:
        print(json.dumps(rows[:2], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
