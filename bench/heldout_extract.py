"""Extract held-out published serving runs into ``tests/fixtures/predict_heldout.json``.

Only sources whose every field can be read from the page itself are extracted; nothing is
filled in by judgement (a field the page does not publish is ``null``, a run whose plan
cannot be stated is left out and counted by reason).

Sources, each read from a git snapshot at a pinned commit (the search tool's ``fetch``):

- GPUStack's "performance lab" pages (github.com/gpustack/gpustack, ``docs/performance-lab/<model>/<gpu>.md``):
  the serving command of every experiment and the full ``vllm bench serve`` result block under it, with the
  model, the GPU count and the engine releases in the page's "Experimental Setup".
- The SGLang cookbook repository (github.com/sgl-project/sgl-cookbook, ``docs/autoregressive/``): every
  ``sglang.bench_serving`` result block, read by bench/sglang_tables.py's page reader (the one the corpus
  cookbook pages are read with); the pages of models whose cookbook page is in ../shared/corpus are left out.
- dennislee22/vLLM-benchmarking (``README.md``): vLLM 0.10.1.1 on A100 80GB, each test's plan read from the
  ``non-default args`` line of the start-up log it links.
- Model configs: ai-dynamo/aiconfigurator's ``model_configs/`` (the bytes the aiconfigurator-core wheel ships);
  Qwen2-7B-Instruct's from bench/data/configs.json (with its own source).

    python bench/heldout_extract.py --gpustack SNAP --sgl-cookbook SNAP --dennislee SNAP --aiconfigurator SNAP [--write]

The fixture is committed; this script only shows how it was made (and re-makes it). The dennislee22 reader is
bench/heldout_dennislee.py; what the readers share (hardware, result-block fields, git) is bench/heldout_page.py.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from heldout_baseline import complete_baselines, start_refusal, summary_columns
from heldout_dennislee import DL_REPO, dennislee
from heldout_page import _FIELD, _RESULT, FIELDS, PLAN_KEYS, _git, hardware

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
# checkpoints read with a sibling's config (same layers, heads, experts and weight format; named in each row)
SIBLINGS: dict[str, tuple[str, str]] = {
    **{hf: (cfg, note) for hf, cfg, note in MODELS.values() if note},
    "deepseek-ai/DeepSeek-V3.1": ("deepseek-ai--DeepSeek-V3", "DeepSeek-V3's config (V3.1 has the same architecture "
                                                             "and FP8 block quantization)"),
}
# a checkpoint named in the serving command that is not the page's model -> its config, and the note naming the
# sibling whose config it is (None: the checkpoint's own config)
CHECKPOINTS: dict[str, tuple[str, str | None]] = {
    "Qwen/Qwen3-32B-FP8": ("Qwen--Qwen3-32B-FP8", None),
    "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8": (
        "Qwen--Qwen3-235B-A22B-FP8", "Qwen3-235B-A22B-FP8's config (-Instruct-2507-FP8 has the same layers; its "
        "max_position_embeddings is longer; the pages' 'TP8 only is not compatible with the model weight' fits this "
        "config's 128 x 128 FP8 blocks over 1536-row experts: 192 rows per GPU)"),
}
GPUS = {"H100 SXM": "h100", "H200 SXM": "h200", "A100 SXM 80GB": "a100_80gb"}
ENGINES = {"vLLM": "vllm", "SGLang": "sglang", "TensorRT-LLM": "trtllm"}

# flags that do not change what the engine computes per step (parsers, templates, addresses)
NEUTRAL = {"--host", "--port", "--reasoning-parser", "--tool-call-parser", "--chat-template", "--tokenizer-mode",
           "--trust-remote-code", "--served-model-name", "--enable-auto-tool-choice", "--model", "--model-path"}
SPEC = "speculative decoding (acceptance not published, or no launchcard predict option for the engine's spec flags)"
# flags that change the plan in ways the prediction cannot state: the run is left out
UNSTATABLE = {"--speculative-config": SPEC,
              "--speculative-algorithm": SPEC,
              "--decode-context-parallel-size": "decode context parallel (not modelled)", "-dcp": "decode context "
              "parallel (not modelled)", "--data-parallel-size-local": "DP across nodes"}
INT_FLAGS = {"-tp": "tp", "--tensor-parallel-size": "tp", "--tp-size": "tp", "--tp": "tp", "--tp_size": "tp",
             "-pp": "pp", "--pipeline-parallel-size": "pp", "--pp-size": "pp", "--pp_size": "pp",
             "-dp": "dp", "--data-parallel-size": "dp", "--dp-size": "dp", "--dp": "dp",
             "--max-num-seqs": "max_num_seqs", "--max-running-requests": "max_num_seqs",
             "--max_batch_size": "max_num_seqs", "--max-num-batched-tokens": "max_num_batched_tokens",
             "--max_num_tokens": "max_num_batched_tokens", "--chunked-prefill-size": "max_num_batched_tokens",
             "--max-model-len": "max_model_len", "--context-length": "max_model_len", "--max_seq_len": "max_model_len"}
STR_FLAGS = {"--quantization": "quantization", "-q": "quantization", "--kv-cache-dtype": "kv_cache_dtype"}
FLOAT_FLAGS = {"--gpu-memory-utilization": "gpu_memory_utilization", "--mem-fraction-static": "gpu_memory_utilization"}


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


def page_datasets(lines: list[str]) -> dict[str, Any]:
    """What the page says about its benchmark datasets: the line (1-based) and ``--num-prompts`` of its
    ``vllm bench serve --dataset-name sharegpt`` command, and the random dataset's input lengths its "Benchmark
    Dataset" section lists (each with its line), e.g. "Long prompt: 4000 input tokens" or "1K input tokens"."""
    out: dict[str, Any] = {"sharegpt": None, "random_isl": {}}
    at = next((i for i, ln in enumerate(lines) if ln.strip() == "### Benchmark Dataset"), None)
    for i, ln in enumerate(lines):
        if "vllm bench serve" in ln and re.search(r"--dataset-name[ =]sharegpt\b", ln) and out["sharegpt"] is None:
            m = re.search(r"--num-prompts[ =](\d+)", ln)
            out["sharegpt"] = (i + 1, int(m.group(1)) if m else 1000)  # vllm bench serve's default: 1000
        if at is not None and i > at and ln.startswith("#"):
            at = None  # the section ended
        if at is not None and i > at:
            for num, k in re.findall(r"(\d+(?:\.\d+)?)\s*(K?)\s+input tokens", ln):
                out["random_isl"][round(float(num) * (1000 if k else 1))] = i + 1
    return out


def predictor_reads(engine: str | None) -> frozenset[str]:
    """The flags launchcard's predictor reads from an ``engine`` serving command (``--command``), so a row does
    not list them as unmodelled: vLLM's, the ones ``settings_from_argv`` reads (``memory.vllm_flag`` of each
    Settings field); SGLang's, each ``cmd.get_*("--flag")`` of predict/_sglang.py's command reader; TensorRT-LLM's,
    ``predict._trtllm.OPTIONS_READ``."""
    import dataclasses

    if engine == "vllm":
        from launchcard.memory import Settings, vllm_flag

        return frozenset(f for f in (vllm_flag(x.name) for x in dataclasses.fields(Settings)) if f)
    if engine == "sglang":
        src = (ROOT / "src" / "launchcard" / "predict" / "_sglang.py").read_text()
        return frozenset(re.findall(r'cmd\.get_\w+\("(--[a-z0-9-]+)"', src))
    if engine == "trtllm":
        from launchcard.predict._trtllm import OPTIONS_READ

        return OPTIONS_READ
    return frozenset()


def _plan(cmd: str) -> tuple[dict[str, Any], list[str], str | None]:
    """Settings the serving command states, flags it sets that the prediction does not model (neither in the
    table below nor read by the predictor, :func:`predictor_reads`), and a reason to leave the run out (None:
    keep)."""
    read = predictor_reads(_engine(cmd))
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
        elif flag == "--enable-dp-attention":  # SGLang: attention data-parallel inside the TP group
            plan["dp_attention"] = True
            step = 1
        elif flag not in NEUTRAL and flag not in read:
            unmodelled.append(t if inline or not val or step == 1 else f"{t} {val}")
        i += step
    return plan, unmodelled, None


def gpus_used(plan: dict[str, Any]) -> int:
    """GPUs a plan occupies: SGLang's DP attention runs its DP ranks inside the TP group (tp GPUs), plain DP
    replicates the TP group."""
    dp = 1 if plan.get("dp_attention") else plan["dp"]
    return int(plan["tp"] * plan["pp"] * dp)


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


def gpustack(repo: Path, skipped: dict[str, int],
             refused: Callable[[dict[str, Any]], str | None]) -> tuple[list[dict[str, Any]], str]:
    """The rows of every page; ``refused``: why launchcard's start-up check refuses a row's plan (None: it
    starts), read by :func:`complete_baselines`."""
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
        at = next((i for i, ln in enumerate(lines) if ln.strip() == "### Hardware"), 0)
        hw_line = next((j + 1 for j in range(at + 1, len(lines)) if lines[j].strip()), 0)
        gpu = next((v for k, v in GPUS.items() if k in hw), None)
        count = re.match(r"(\d+)\s*×", hw)
        gpus = int(count.group(1)) if count else (1 if hw.startswith("A single") else None)
        datasets = page_datasets(lines)
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
        page: list[tuple[dict[str, Any], float | None]] = []  # the page's rows, each with its block's total TPS
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
                tps = None
                i += 1
                while i < len(lines) and not re.match(r"^\s*=+\s*$", lines[i]):
                    m = _FIELD.match(lines[i])
                    if m and m.group(1).strip() in FIELDS:
                        got[FIELDS[m.group(1).strip()]] = float(m.group(2))
                    if m and m.group(1).strip() == "Total Token throughput (tok/s)":
                        tps = float(m.group(2))
                    i += 1
                label = next((lines[b].strip().lstrip("# ").strip() for b in range(start - 1, max(0, start - 3), -1)
                              if lines[b].strip().startswith("# ")), None)
                row = _row(cmd, cmd_line, got, start + 1, label, path, commit, hf_id, config, config_note, gpu,
                           gpus, versions, skip, datasets)
                if row is not None:
                    row["hardware"] = hardware(hw, f"https://github.com/{REPO}/blob/{commit}/{path}#L{hw_line}")
                if row is not None:
                    rows.append(row)
                    page.append((row, tps))
                continue
            i += 1
        complete_baselines(page, summary_columns(lines), refused, _planned)
    return rows, commit


def _planned(cmd: str) -> dict[str, Any]:
    """A row's command fields for a serving command: the command on one line, its plan, its unmodelled flags."""
    plan, unmodelled, _ = _plan(cmd)
    return {"serve_command": " ".join(cmd.replace("\\\n", " ").split()),
            "plan": {**{k: plan.get(k) for k in PLAN_KEYS}, "dp_attention": bool(plan.get("dp_attention"))},
            "unmodelled_flags": unmodelled}


# a result block's label that is one flag's setting ("# --max-num-batched-tokens 4096")
_LABEL_SETTING = re.compile(r"^(--[a-z][a-z0-9_-]*)[ =](\S+)$")


def label_setting(cmd: str, label: str | None) -> str:
    """The command a result block ran: where the block's label is one flag's setting, that setting, in place of
    the one the serving script above shows (appended where the script sets none).  A page that sweeps one flag
    shows one serving script and labels each block with the value it ran: gpt-oss-20b/a100.md L198 shows
    ``--max-num-batched-tokens 8192`` above blocks labelled 4096 (L203) and 8192 (L227); gpt-oss-120b/a100.md
    L249 and qwen3-235b-a22b/a100.md L260 show 4096 above blocks labelled 4096 and 8192 (the 8192 blocks at L278
    and L290), at gpustack 47277d79."""
    m = _LABEL_SETTING.match(label or "")
    if m is None:
        return cmd
    flag, value = m.groups()
    pattern = re.compile(rf"(?<!\S){re.escape(flag)}(?:=|\s+)\S+")
    if pattern.search(cmd) is None:
        return f"{cmd} {flag} {value}"
    return pattern.sub(lambda _: f"{flag} {value}", cmd)


def _row(cmd: str, cmd_line: int, got: dict[str, float], line: int, label: str | None, path: str, commit: str,
         hf_id: str, config: str, config_note: str | None, gpu: str, gpus: int, versions: dict[str, str],
         skip: Any, datasets: dict[str, Any] | None = None) -> dict[str, Any] | None:
    cmd = label_setting(cmd, label)
    engine = _engine(cmd)
    if engine is None:
        skip("no serving command above the result")
        return None
    plan, _, why = _plan(cmd)
    if why:
        skip(why)
        return None
    n = int(got.get("requests", 0))
    if not n or "tpot_ms_mean" not in got or "ttft_ms_mean" not in got:
        skip("result block without requests, TTFT or TPOT")
        return None
    ckpt = _checkpoint(cmd) or hf_id
    cfg, cfg_note = CHECKPOINTS.get(ckpt, (config, config_note))
    if ckpt.startswith("/workspace") or ckpt == hf_id or ckpt.endswith(hf_id.split("/")[-1]):
        ckpt = hf_id
    elif ckpt in {m[0] for m in MODELS.values()}:
        skip("the serving command names another model than the page's")
        return None
    elif ckpt not in CHECKPOINTS:
        skip(f"checkpoint {ckpt} has no config at hand")
        return None
    if gpus_used(plan) > gpus:
        skip("command uses more GPUs than the page's hardware")
        return None
    url = f"https://github.com/{REPO}/blob/{commit}/{path}"
    conc = int(got["max_concurrency"]) if "max_concurrency" in got else None
    dataset, evidence = _dataset(label, n, got["input_tokens"] / n, datasets or {}, url)
    return {
        "id": f"gpustack:{path.removeprefix('docs/performance-lab/')}#L{line}",
        "source": {"repo": REPO, "commit": commit, "path": path, "line": line, "url": f"{url}#L{line}",
                   "command_url": f"{url}#L{cmd_line}", "label": label},
        "model": hf_id if ckpt == hf_id else ckpt,
        "config": {"file": f"{cfg}_config.json", "note": cfg_note},
        "gpu": gpu, "gpus": gpus, "engine": engine, "engine_version": versions.get(engine),
        **_planned(cmd),
        "workload": {
            # request rate: the page's bench command sets none (vllm bench serve's default: inf, all at once)
            "requests": n, "concurrency": conc if conc is not None else n, "request_rate": None,
            "arrivals": "closed loop" if conc is not None else "all at once (rate inf, no concurrency cap)",
            "isl_mean": round(got["input_tokens"] / n, 1), "osl_mean": round(got["output_tokens"] / n, 1),
            "dataset": dataset, **({"dataset_evidence": evidence} if evidence else {})},
        "measured": {k: got.get(k) for k in ("ttft_ms_mean", "ttft_ms_median", "tpot_ms_mean", "tpot_ms_median",
                                             "itl_ms_mean", "output_tok_per_s", "request_per_s", "duration_s")},
    }


def _dataset(label: str | None, n: int, isl: float, datasets: dict[str, Any], url: str) -> tuple[str | None,
                                                                                                str | None]:
    """The dataset a result block was run on, and the page line that says so where its label does not: the label
    when it names one ("ShareGPT batch size 4", "random ..."); else "random" when the block's mean prompt is exactly
    an input length the page's "Benchmark Dataset" section lists for its random dataset (vllm bench serve's random
    prompts have exact lengths); else "sharegpt" when the page runs ``vllm bench serve --dataset-name sharegpt``
    with at least as many prompts as the block has requests; else unknown (None)."""
    low = (label or "").lower()
    if "random" in low:
        return "random", None
    if "sharegpt" in low:
        return "sharegpt", None
    if isl.is_integer() and int(isl) in datasets.get("random_isl", {}):
        return "random", f"{url}#L{datasets['random_isl'][int(isl)]}"
    share = datasets.get("sharegpt")
    if share is not None and n <= share[1]:
        return "sharegpt", f"{url}#L{share[0]}"
    return None, None


SGL_REPO = "sgl-project/sgl-cookbook"
# cookbook pages of models whose SGLang cookbook page is in ../shared/corpus (test data already): left out whole
CORPUS_PAGES = ("OpenAI/GPT-OSS.md", "Moonshotai/Kimi-K2.5.md", "DeepSeek/DeepSeek-V4", "GLM/GLM-5.3-Flash")
# the pages word their hardware line several ways; the page reader reads "Hardware: NVIDIA <GPU> GPU (<N>x)".
# Only the wording is rewritten, on the same line (line numbers kept), never the GPU or the count.
_HW_WORDING = (
    (re.compile(r"Hardware:\s*(?:AMD\s+Instinct\s+|AMD\s+|NVIDIA\s+)?([A-Za-z]+\d+[A-Za-z]*)(?:\s+\d+GB)?(?:\s+HBM\w*)?"
                r"\s+GPUs?\s*\((\d+)x\)", re.IGNORECASE), r"Hardware: NVIDIA \1 GPU (\2x)"),
    (re.compile(r"Hardware:\s*(\d+)\s*[x×]\s*(?:AMD\s+Instinct\s+|AMD\s+|NVIDIA\s+)?([A-Za-z]+\d+[A-Za-z]*)\b"),
     r"Hardware: NVIDIA \2 GPU (\1x)"),
)
# any other hardware line ends the previous one's reach (else the reader would file the runs under it under
# the GPU named before): its runs are left out
_HW_OTHER = re.compile(r"^(\s*-?\s*\**)Hardware:(?!\s*NVIDIA \S+ GPU \(\d+x\)).*$", re.MULTILINE)


def sgl_cookbook(repo: Path, aic: Path, skipped: dict[str, int]) -> tuple[list[dict[str, Any]], str]:
    """Every ``sglang.bench_serving`` result block of the SGLang cookbook repository's pages (read by
    bench/sglang_tables.py's page reader, the one the corpus pages are read with), except the pages of models
    whose cookbook page is in the corpus. A model is taken only when aiconfigurator's model_configs/ holds its
    exact Hugging Face id."""
    import tempfile

    sys.path.insert(0, str(ROOT / "bench"))
    from sglang_tables import read_page

    commit = _git(repo, "rev-parse", "HEAD").strip()
    aic_commit = _git(aic, "rev-parse", "HEAD").strip()
    have = {p.rsplit("/", 1)[-1].removesuffix("_config.json")
            for p in _git(aic, "ls-tree", "-r", "--name-only", aic_commit, AIC_CONFIGS).split()}
    paths = [p for p in _git(repo, "ls-tree", "-r", "--name-only", commit, "docs/autoregressive").split()
             if p.endswith(".md")]
    rows: list[dict[str, Any]] = []

    def skip(why: str, n: int = 1) -> None:
        skipped[why] = skipped.get(why, 0) + n

    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(paths):
            text = _git(repo, "show", f"{commit}:{path}")
            n_results = text.count("Serving Benchmark Result")
            if not n_results:
                continue
            if any(c in path for c in CORPUS_PAGES):
                skip("page of a model whose cookbook page is in the corpus", n_results)
                continue
            dest = Path(tmp) / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            for pattern, repl in _HW_WORDING:
                text = pattern.sub(repl, text)
            text = _HW_OTHER.sub(r"\1Hardware: NVIDIA unstated GPU (1x)", text)
            dest.write_text(text, encoding="utf-8")
            points = read_page(dest, Path(tmp))
            if len(points) < n_results:
                skip("result block the page reader cannot tie to a server command, bench command and "
                     "'Hardware: NVIDIA <GPU> GPU (<N>x)' line", n_results - len(points))
            lines = text.split("\n")
            for pt in points:
                at = int(pt.where.rsplit("#L", 1)[1])
                server_line = max((i + 1 for i, ln in enumerate(lines[:at])
                                   if re.search(r"sglang\.launch_server|sglang\s+serve\b", ln)), default=0)
                row = _sgl_row(pt, path, commit, have, skip, server_line)
                if row is not None:
                    rows.append(row)
    return rows, commit


def _sgl_row(pt: Any, path: str, commit: str, have: set[str], skip: Any, server_line: int) -> dict[str, Any] | None:
    from launchcard.errors import LaunchcardError
    from launchcard.hardware import find

    if pt.gpu == "unstated":
        skip("hardware line without the GPU name and count in a form the reader takes")
        return None
    try:
        gpu = find(pt.gpu).id
    except LaunchcardError:
        skip(f"GPU {pt.gpu!r} not in the catalog or ambiguous (an A100's memory size is not stated)")
        return None
    cmd = " ".join(pt.server)
    plan, unmodelled, why = _plan(cmd)
    if why:
        skip(why)
        return None
    cfg, note = pt.model.replace("/", "--"), None
    if cfg not in have and pt.model in SIBLINGS:
        cfg, note = SIBLINGS[pt.model]
    if cfg not in have:
        skip("model id with no config in aiconfigurator's model_configs/")
        return None
    if pt.problems:
        skip("result block disagrees with its bench command")
        return None
    if gpus_used(plan) > pt.gpu_count:
        skip("command uses more GPUs than the page's hardware")
        return None
    line = int(pt.where.rsplit("#L", 1)[1])
    url = f"https://github.com/{SGL_REPO}/blob/{commit}/{path}"
    closed = pt.concurrency is not None and pt.concurrency < pt.requests
    return {
        "id": f"sgl-cookbook:{path.removeprefix('docs/autoregressive/')}#L{line}",
        "source": {"repo": SGL_REPO, "commit": commit, "path": path, "line": line, "url": f"{url}#L{line}",
                   "command_url": f"{url}#L{server_line}", "label": pt.lengths},
        "model": pt.model, "config": {"file": f"{cfg}_config.json", "note": note},
        "gpu": gpu, "gpus": pt.gpu_count, "engine": "sglang", "engine_version": pt.release,
        "serve_command": cmd,
        "plan": {**{k: plan.get(k) for k in PLAN_KEYS}, "dp_attention": bool(plan.get("dp_attention"))},
        "unmodelled_flags": unmodelled,
        "workload": {"requests": pt.requests, "concurrency": pt.concurrency if pt.concurrency is not None else None,
                     "request_rate": pt.rate, "arrivals": "closed loop" if closed else (
                         "Poisson" if pt.rate is not None else "all at once (rate inf, no concurrency cap)"),
                     "isl_mean": float(pt.isl), "osl_mean": float(pt.osl), "dataset": pt.dataset},
        "measured": {"ttft_ms_mean": pt.ttft_ms, "ttft_ms_median": None, "tpot_ms_mean": pt.tpot_ms,
                     "tpot_ms_median": None, "itl_ms_mean": pt.itl_ms, "output_tok_per_s": pt.out_tok_s,
                     "request_per_s": None, "duration_s": None},
    }


OWN_CONFIGS = {"Qwen--Qwen2-7B-Instruct_config.json": "Qwen/Qwen2-7B-Instruct"}


def _copy_configs(repo: Path, names: set[str]) -> dict[str, Any]:
    """The model configs the rows read, copied from ai-dynamo/aiconfigurator's model_configs/ (the same bytes
    the aiconfigurator-core 0.12.0 wheel ships), each with its source."""
    commit = _git(repo, "rev-parse", "HEAD").strip()
    CONFIGS.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {}
    own = json.loads((ROOT / "bench" / "data" / "configs.json").read_text(encoding="utf-8"))
    for name in sorted(names):
        path = f"{AIC_CONFIGS}/{name}"
        if name in OWN_CONFIGS:  # not in aiconfigurator: the copy launchcard's bench/data/configs.json holds
            entry = own[OWN_CONFIGS[name]]
            (CONFIGS / name).write_text(json.dumps(entry["config"], indent=2) + "\n", encoding="utf-8")
            m = re.match(r"https://github\.com/([^/]+/[^/]+)/blob/([0-9a-f]{40})/(.+)$", entry["source_urls"][0])
            assert m, entry["source_urls"]
            out[name] = {"repo": m.group(1), "commit": m.group(2), "path": m.group(3), "url": m.group(0),
                         "note": f"bench/data/configs.json entry {OWN_CONFIGS[name]}: {entry['source']}"}
            continue
        text = _git(repo, "show", f"{commit}:{path}")
        out[name] = {"repo": "ai-dynamo/aiconfigurator", "commit": commit, "path": path,
                     "url": f"https://github.com/ai-dynamo/aiconfigurator/blob/{commit}/{path}"}
        org, _, model = name.removesuffix("_config.json").partition("--")
        in_corpus = ROOT.parent / "shared" / "corpus" / "hf" / org / model / "config.json"
        if in_corpus.is_file() and in_corpus.read_text(encoding="utf-8") == text:
            out[name]["corpus"] = in_corpus.relative_to(ROOT.parent / "shared" / "corpus").as_posix()
            continue  # the same bytes are in the corpus: read there, never copied
        (CONFIGS / name).write_text(text, encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpustack", type=Path, required=True, help="git snapshot of github.com/gpustack/gpustack")
    ap.add_argument("--aiconfigurator", type=Path, required=True,
                    help="git snapshot of github.com/ai-dynamo/aiconfigurator (model configs)")
    ap.add_argument("--sgl-cookbook", type=Path, required=True,
                    help="git snapshot of github.com/sgl-project/sgl-cookbook")
    ap.add_argument("--dennislee", type=Path, required=True,
                    help="git snapshot of github.com/dennislee22/vLLM-benchmarking")
    ap.add_argument("--write", action="store_true", help=f"write {FIXTURE.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    for opt in ("gpustack", "aiconfigurator", "sgl_cookbook", "dennislee"):
        try:
            _git(getattr(args, opt), "rev-parse", "HEAD")
        except (subprocess.CalledProcessError, OSError):
            ap.error(f"--{opt.replace('_', '-')} {getattr(args, opt)}: not a git snapshot; pass a clone of the "
                     "repository (its checkout or its git directory)")
    skipped: dict[str, int] = {}
    refused = start_refusal(lambda name: _git(args.aiconfigurator, "show", f"HEAD:{AIC_CONFIGS}/{name}"))
    rows, commit = gpustack(args.gpustack, skipped, refused)
    for why, n in sorted(skipped.items(), key=lambda kv: -kv[1]):
        print(f"  left out {n:4d}: {why}", file=sys.stderr)
    print(f"{len(rows)} rows from {REPO}@{commit[:12]}", file=sys.stderr)
    sgl_skipped: dict[str, int] = {}
    sgl_rows, sgl_commit = sgl_cookbook(args.sgl_cookbook, args.aiconfigurator, sgl_skipped)
    for why, n in sorted(sgl_skipped.items(), key=lambda kv: -kv[1]):
        print(f"  left out {n:4d}: {why}", file=sys.stderr)
    print(f"{len(sgl_rows)} rows from {SGL_REPO}@{sgl_commit[:12]}", file=sys.stderr)
    dl_skipped: dict[str, int] = {}
    dl_rows, dl_commit = dennislee(args.dennislee, dl_skipped)
    for why, n in sorted(dl_skipped.items(), key=lambda kv: -kv[1]):
        print(f"  left out {n:4d}: {why}", file=sys.stderr)
    print(f"{len(dl_rows)} rows from {DL_REPO}@{dl_commit[:12]}", file=sys.stderr)
    if args.write:
        doc = json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {}
        doc["rows"] = rows + sgl_rows + dl_rows
        doc["left_out"] = {"gpustack": skipped, "sgl-cookbook": sgl_skipped, "dennislee": dl_skipped}
        doc["sources"] = {"gpustack": {"repo": REPO, "commit": commit, "path": "docs/performance-lab/"},
                          "sgl-cookbook": {"repo": SGL_REPO, "commit": sgl_commit, "path": "docs/autoregressive/"},
                          "dennislee": {"repo": DL_REPO, "commit": dl_commit, "path": "README.md"}}
        doc["configs"] = _copy_configs(args.aiconfigurator, {r["config"]["file"] for r in doc["rows"]})
        from launchcard import atomicfile

        atomicfile.write_text(FIXTURE, json.dumps(doc, indent=1) + "\n")
    else:
        print(json.dumps((rows + sgl_rows + dl_rows)[-2:], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
