"""The calibration rows of bench/predict_accuracy.py: aiconfigurator-core 0.12.0's ``silicon_sample.csv`` read
from the wheel, each aggregated run turned into launchcard's serving facts (``load_rows``), and one run simulated
with a set of coefficients (``run``).  predict_accuracy.py fits and scores them; it re-exports these names."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from launchcard.errors import LaunchcardError  # noqa: E402
from launchcard.hardware import find  # noqa: E402
from launchcard.memory import Settings, arch_from_config, plan_memory  # noqa: E402
from launchcard.predict import (  # noqa: E402
    Coefficients,
    HardwareFigures,
    ServingFacts,
    TrtllmLaunch,
    facts_from_memory_plan,
    lockstep_group,
    simulate,
)
from launchcard.predict._sglang import DENSE_OVER_TP  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from inferencex_runs import (  # noqa: E402
    client,
    inferencex_budget,
    inferencex_kv_fraction,
    inferencex_recv_interval,
)
from run_checks import SPLIT_SWEEP, RunMeans, clients_disagree, sweep_of, unserved_clients  # noqa: E402

WHEEL_SPEC = "aiconfigurator-core==0.12.0"
WHEEL_DIR = ROOT / ".cache" / "aic"
CSV_PATH = "aiconfigurator_core/systems/silicon_sample.csv"
WHEEL_URL = "https://pypi.org/project/aiconfigurator-core/0.12.0/"
SYSTEMS = {"h100_sxm": "h100", "h200_sxm": "h200", "b200_sxm": "b200", "b300_sxm": "b300", "gb200": "gb200",
           "gb300": "gb300"}
# silicon_sample model_path -> model_configs file of the same wheel
CONFIGS = {
    "meta-llama/Llama-3.1-70B": "meta-llama--Meta-Llama-3.1-70B",
    "meta-llama/Llama-3.1-8B-Instruct": "meta-llama--Meta-Llama-3.1-8B",
    "nvidia/Llama-3.1-8B-Instruct-FP8": "meta-llama--Meta-Llama-3.1-8B",
    "zhipuai/GLM-5": "zai-org--GLM-5",
    "nvidia/DeepSeek-R1-NVFP4": "deepseek-ai--DeepSeek-R1",
    "nvidia/DeepSeek-V3.1-NVFP4": "deepseek-ai--DeepSeek-V3",
    "nvidia/Qwen3-32B-NVFP4": "Qwen--Qwen3-32B",
}
FAMILIES = (("deepseek", "deepseek"), ("llama", "llama"), ("qwen3.5", "qwen3.5"), ("qwen3", "qwen3"),
            ("minimax", "minimax"), ("gpt-oss", "gpt-oss"), ("kimi", "kimi"), ("glm", "glm"))
# weight format each quant mode of the CSV stands for (a config.json quantization_config)
QUANT = {"fp8": {"quant_method": "fp8"}, "fp8_block": {"quant_method": "fp8", "weight_block_size": [128, 128]},
         "nvfp4": {"quant_method": "modelopt", "quant_algo": "NVFP4"}}
ENGINE = {"vllm": "vllm", "sglang": "sglang", "trtllm": "trtllm"}


def engine_budget(engine: str, acc: Any) -> int | None:
    """The engine's own default when the launch passes none (vLLM's comes from the memory planner, by release)."""
    if engine == "sglang":  # python/sglang/srt/server_args.py: 8192 below 160 GiB of GPU memory, 16384 from it
        return 16384 if (acc.memory_gib or 0) >= 160 else 8192
    if engine == "trtllm":
        return 8192  # the bench's standing assumption (TensorRT-LLM's max_num_tokens default)
    return None


def family(model: str) -> str:
    low = model.lower()
    for key, fam in FAMILIES:
        if key in low:
            return fam
    return low.split("/")[-1]


def wheel() -> Path:
    hits = sorted(WHEEL_DIR.glob("aiconfigurator_core-0.12.0-*.whl"))
    if not hits:
        WHEEL_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", WHEEL_SPEC, "-d", str(WHEEL_DIR)],
                       check=True, stdout=sys.stderr)
        hits = sorted(WHEEL_DIR.glob("aiconfigurator_core-0.12.0-*.whl"))
    return hits[0]


@dataclass
class Row:
    id: str
    model: str
    family: str
    engine: str
    system: str
    isl: int
    osl: int
    concurrency: int
    gpus: int
    ttft_ms: float
    tpot_ms: float
    facts: ServingFacts
    group: str  # model, GPU, engine, workload: configurations compared for ranking
    spread: float = 0.0  # request lengths uniform in [(1 - spread) L, L] (see ``client``)
    rounds: int = 10  # requests per client
    release: str = ""  # the CSV's backend_version, as recorded ("" or a nightly tag: not a release)


def load_rows(limit: int | None = None) -> tuple[list[Row], dict[str, int], dict[str, str]]:
    """Aggregated rows the model can be built for; skip counts by reason; provenance."""
    whl = wheel()
    z = zipfile.ZipFile(whl)
    raw = z.read(CSV_PATH)
    prov = {"wheel": whl.name, "wheel_url": WHEEL_URL, "csv": CSV_PATH,
            "csv_sha256": hashlib.sha256(raw).hexdigest(), "license": "Apache-2.0"}
    names = set(z.namelist())
    rows: list[Row] = []
    skipped: dict[str, int] = {}
    facts_cache: dict[tuple[Any, ...], ServingFacts | str] = {}
    sweep: dict[str, tuple[str, ...]] = {}  # run id -> its sweep (bench/run_checks.py sweep_of)
    split: set[tuple[str, ...]] = set()  # sweeps with a layout no aggregated server runs

    def skip(why: str) -> None:
        skipped[why] = skipped.get(why, 0) + 1

    for r in csv.DictReader(io.StringIO(raw.decode("utf-8"))):
        if r["mode"] != "agg":
            skip("disaggregated run (not modelled)")
            continue
        try:
            ttft, tpot = float(r["silicon_ttft_ms"]), float(r["silicon_tpot_ms"])
            isl, osl, bs = int(r["isl"]), int(r["osl"]), int(r["batch_size"])
            tp, pp = int(r["tp_size"]), int(r["pp_size"] or 1)
            dp = max(1, int(r["attention_dp_size"] or 1))
            ep = int(r["moe_ep_size"] or 1)
        except ValueError:
            skip("unreadable numbers")
            continue
        if not (ttft > 0 and tpot > 0) or r["system"] not in SYSTEMS:
            skip("no measurement or unknown system")
            continue
        if clients_disagree(r["silicon_data_source"], bs, dp):  # bench/run_checks.py: clients or layout unknown
            skip("batch_size x attention_dp_size contradicts the row's own silicon_concurrency")
            continue
        cfg_name = CONFIGS.get(r["model_path"], r["model_path"].replace("/", "--"))
        path = f"aiconfigurator_core/model_configs/{cfg_name}_config.json"
        if path not in names:
            skip("no model config in the wheel")
            continue
        qmode = r["moe_quant_mode"] or r["gemm_quant_mode"]
        # the CSV's quant mode is the run's bucket, not a checkpoint: an "nvfp4" run of a model NVIDIA publishes
        # in NVFP4 used that checkpoint, whose config (its exclude list: what stays 16-bit) the wheel ships too
        nv = f"aiconfigurator_core/model_configs/nvidia--{cfg_name.split('--')[-1]}-NVFP4_config.json"
        if qmode == "nvfp4" and nv in names and "quantization_config" in json.loads(z.read(nv)):
            path, qmode = nv, "checkpoint"
        kv = "fp8" if r["precision"] in ("fp8", "fp4") else "auto"
        spread, rounds = client(r["silicon_data_source"])
        budget = None
        kv_share = None
        if spread:  # an InferenceX run: its script's flags
            budget = inferencex_budget(family(r["model_path"]), r["backend"], SYSTEMS.get(r["system"], ""),
                                       r["moe_quant_mode"] or r["gemm_quant_mode"], tp, isl, bs * dp)
            kv_share = inferencex_kv_fraction(family(r["model_path"]), r["backend"], SYSTEMS.get(r["system"], ""),
                                              r["moe_quant_mode"] or r["gemm_quant_mode"], tp, isl, osl, bs * dp)
        version = r["backend_version"] if re.fullmatch(r"\d+\.\d+(\.\d+)?", r["backend_version"] or "") else None
        key = (path, qmode, r["system"], tp, pp, dp, ep > 1, kv, r["backend"], budget, version, kv_share)
        if key not in facts_cache:
            facts_cache[key] = _facts(z.read(path), qmode, r, tp, pp, dp, ep > 1, kv, budget, version, kv_share)
        f = facts_cache[key]
        if isinstance(f, str):
            if "does not divide" in f and "attention heads" in f:
                split.add(sweep_of(r["silicon_data_source"], r["model_path"], r["system"], r["backend"]))
            skip(f)
            continue
        sweep[r["id"]] = sweep_of(r["silicon_data_source"], r["model_path"], r["system"], r["backend"])
        conc = bs * dp
        if isl + osl > f.kv_capacity_tokens:
            skip("plan holds less KV than one request")
            continue
        if spread:
            recv = inferencex_recv_interval(family(r["model_path"]), r["backend"], SYSTEMS.get(r["system"], ""),
                                            r["moe_quant_mode"] or r["gemm_quant_mode"], tp, dp, conc)
            f = replace(f, recv_interval=recv) if recv > 1 else f
        rows.append(Row(id=r["id"], model=r["model_path"], family=family(r["model_path"]), engine=r["backend"],
                        system=r["system"], isl=isl, osl=osl, concurrency=conc, gpus=tp * pp * dp, ttft_ms=ttft,
                        tpot_ms=tpot, facts=f,
                        group=f"{r['model_path']}|{r['system']}|{r['backend']}|{qmode}|{isl}x{osl}",
                        spread=spread, rounds=rounds, release=r["backend_version"] or ""))
        if limit and len(rows) >= limit:
            break
    for _ in [r for r in rows if sweep[r.id] in split]:
        skip(SPLIT_SWEEP)
    rows = [r for r in rows if sweep[r.id] not in split]
    # runs whose own means say the server did not see the clients they are labelled with (bench/run_checks.py): left
    # out of the fit and the scores, each with its reason in the provenance
    unserved = unserved_clients(RunMeans(
        id=r.id, layout=(r.group, r.facts.tp, r.facts.pp, r.facts.ep, r.facts.replicas, r.gpus), clients=r.concurrency,
        replicas=r.facts.replicas, isl=r.isl, osl=r.osl, ttft_ms=r.ttft_ms, tpot_ms=r.tpot_ms,
        max_num_seqs=r.facts.max_num_seqs, kv_capacity_tokens=r.facts.kv_capacity_tokens) for r in rows)
    for _ in unserved:
        skip("clients not all served (bench/run_checks.py: queued by the run's own means though its plan admits "
             "all, decoding no slower than a quarter of the clients)")
    if unserved:
        prov["unserved_runs"] = "; ".join(f"{k}: {v}" for k, v in sorted(unserved.items()))
    return [r for r in rows if r.id not in unserved], skipped, prov


def sample(rows: list[Row], stride: int) -> list[Row]:
    """One row in ``stride``, chosen by a hash of the run's id: the same runs whatever else becomes usable
    (taking every n-th row reshuffled the whole sample when a fix made a few more rows buildable)."""
    if stride <= 1:
        return rows
    return [r for r in rows if int(hashlib.sha256(r.id.encode()).hexdigest()[:8], 16) % stride == 0]


def _facts(raw: bytes, qmode: str, r: dict[str, str], tp: int, pp: int, dp: int, ep: bool,
           kv: str, budget: int | None, version: str | None, kv_share: float | None = None) -> ServingFacts | str:
    cfg = json.loads(raw)
    own = cfg.get("quantization_config") or (cfg.get("text_config") or {}).get("quantization_config") or {}
    # gpt-oss is published in MXFP4 only (experts 4-bit, attention and router bf16): the CSV files its runs under
    # "nvfp4" (and a few under "fp8"), the checkpoint served was its own
    if qmode in QUANT and str(own.get("quant_method", "")).lower() != "mxfp4":
        cfg["quantization_config"] = QUANT[qmode]
    try:
        arch = arch_from_config(cfg, where=r["model_path"])
        acc = find(SYSTEMS[r["system"]])
        hw = HardwareFigures.from_accelerator(acc)
        # vLLM's own default comes from the planner for the run's release (the dated runs without one used
        # vLLM 0.11-0.19: their images; the planner's newest rules would give another default on B200)
        budget = budget or engine_budget(r["backend"], acc)
        # TensorRT-LLM runs capture CUDA graphs for every batch they reach, padded: InferenceX's *_trt.sh write
        # cuda_graph_config enable_padding true, max_batch_size $CONC (dsr1_fp8_b200_trt.sh L29, L55-57 at
        # SemiAnalysisAI/InferenceX 843c6254f), aiconfigurator's generator the same (generator/rule_plugin/
        # trtllm.rule L2-4 at ai-dynamo/aiconfigurator 095f58a5): a limit no step reaches (its token budget), not
        # trtllm-serve's default (128, no padding)
        # SGLang DP attention on its DeepSeek model files keeps only attention whole per rank: dense MLPs, shared
        # experts and the LM head span the whole TP group (tp x attention DP here), as predict plans such a command
        # (predict._sglang DENSE_OVER_TP; deepseek_v2.py 0.5.6.post2 L2984-2988, L3237-3243, L2754-2767, L688-705)
        archs = cfg.get("architectures") or [""]
        dense_tp = tp * dp if r["backend"] == "sglang" and dp > 1 and archs[0] in DENSE_OVER_TP else None
        # only vLLM's MoE is read to go tensor-parallel over TP x DP without EP (memory.moe_split)
        s = Settings(tp=tp, pp=pp, dp=dp, expert_parallel=ep, moe_dp_flat=r["backend"] == "vllm",
                     kv_cache_dtype=kv, dense_tp=dense_tp,
                     max_model_len=32768, vllm_version=(version or "0.19") if r["backend"] == "vllm" else None,
                     max_num_batched_tokens=budget,
                     max_cudagraph_capture_size=budget if r["backend"] == "trtllm" else None)
        plan = plan_memory(arch, s, gpu=acc)
        if not plan.fits:
            return "plan does not fit (memory planner)"
        # TensorRT-LLM: its KV pool is a share of the memory left free (predict._trtllm), the script's share or
        # trtllm-serve's default
        launch = TrtllmLaunch(kv_fraction=kv_share) if kv_share is not None else None
        f = facts_from_memory_plan(arch, s, plan, hw, model=r["model_path"], engine=ENGINE[r["backend"]],
                                   trtllm=launch)
        if r["backend"] == "sglang" and dp > 1:
            # an SGLang run's attention DP is --enable-dp-attention: its ranks step together, as predict times
            # such a plan (sglang_serving_facts' lockstep; predict.lockstep_group)
            f = replace(f, lockstep=dp)
            if dense_tp:  # and gathers every layer's and the LM head's tokens to the whole group, as predict times
                # such a command without --moe-a2a-backend / --moe-dense-tp-size / --enable-dp-lm-head
                # (predict._sglang.dp_gather_parts)
                f = replace(f, dp_gather_layers=f.layers, dp_gather_moe=f.moe_layers > 0,
                            dp_gather_vocab=arch.vocab_size)
    except LaunchcardError as exc:
        return f"not modelled: {exc.rule.split('(')[0].strip()}"
    return f


def workload_lengths(row: Row) -> tuple[int, int, float]:
    """(isl, osl, range ratio) in vllm bench serve's terms (lengths uniform in [L(1 - r), L(1 + r)]) for a row's
    lengths: a spread s over [(1 - s) L, L] is centred on (1 - s/2) L with ratio (s/2) / (1 - s/2)."""
    if not row.spread:
        return row.isl, row.osl, 0.0
    mid = 1.0 - row.spread / 2.0
    return round(row.isl * mid), round(row.osl * mid), (row.spread / 2.0) / mid


def run(row: Row, c: Coefficients, *, trace: bool = False, requests: int | None = None) -> Any:
    f = row.facts
    isl, osl, ratio = workload_lengths(row)
    f, reps = lockstep_group(f)  # ranks stepping together: one scheduler (as predict)
    conc = max(1, math.ceil(row.concurrency / reps))
    return simulate(f, c, isl=isl, osl=osl, concurrency=conc, rate=None,
                    requests=requests or row.rounds * conc, trace=trace, range_ratio=ratio)
