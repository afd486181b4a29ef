"""Calibrate and score ``launchcard predict`` on public measured runs.

Calibration data: ``systems/silicon_sample.csv`` of the ``aiconfigurator-core`` 0.12.0 wheel
on PyPI (Apache-2.0; NVIDIA's measured vLLM / SGLang / TensorRT-LLM runs on H100, H200, B200,
B300, GB200), read from the wheel itself (downloaded once with ``pip download`` into
``.cache/aic/``, never copied into the repository), with the model configs the same wheel
ships (``model_configs/``).  Only aggregated (non-disaggregated) rows are used.

    python bench/predict_accuracy.py                # leave-one-family-out table + corpus SGLang table
    python bench/predict_accuracy.py --write        # refit on every row, write data/predict_coefficients.json
    python bench/predict_accuracy.py --json

Method: the step model's schedule of a closed loop does not depend on the step times, so
each run is simulated once with traced step features; the efficiency/overhead terms are
then fitted per engine by iteratively reweighted least squares on relative error (an L1
fit: medians matter, not outliers), the runs re-simulated with the fit, and fitted again.
Leave-one-family-out: the family's rows are scored with coefficients fitted on the other
families only.  The SGLang cookbook tables in ../shared/corpus are test data: they are
scored, never fitted.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import math
import re
import statistics
import subprocess
import sys
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from launchcard import atomicfile  # noqa: E402
from launchcard.errors import LaunchcardError  # noqa: E402
from launchcard.hardware import find  # noqa: E402
from launchcard.memory import Settings, arch_from_config, plan_memory  # noqa: E402
from launchcard.predict import (  # noqa: E402
    PARAMS,
    Coefficients,
    HardwareFigures,
    ServingFacts,
    TrtllmLaunch,
    Workload,
    coefficients,
    facts_from_memory_plan,
    lockstep_group,
    predict,
    simulate,
)
from launchcard.predict._arrivals import length_range  # noqa: E402
from launchcard.predict._coef import SeqRise, engine_seq, from_theta, request_theta, theta  # noqa: E402
from launchcard.predict._domain import domain_from_runs  # noqa: E402
from launchcard.predict._kernels import (  # noqa: E402
    attn_read_basis,
    max_attn_read_ratio,
    max_weight_read_ratio,
    weight_read_basis,
)
from launchcard.predict._sglang import DENSE_OVER_TP  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from inferencex_runs import (  # noqa: E402  (re-exported: other scripts and tests read them here)
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


def _mean_vec(pairs: list[tuple[list[float], int]]) -> list[float]:
    n = sum(k for _, k in pairs)
    out = [0.0] * len(pairs[0][0])
    for v, k in pairs:
        for i, x in enumerate(v):
            out[i] += x * k / n
    return out


@dataclass
class Trace:
    row: Row
    a_tpot: list[float]  # mean TPOT = a_tpot . theta
    a_ttft: list[float]  # mean TTFT = a_ttft . (theta + request_theta)


def traces(rows: list[Row], sets: dict[str, Coefficients]) -> list[Trace]:
    out = []
    for row in rows:
        res = run(row, sets[row.engine], trace=True)
        if res.tpot_fv and res.ttft_fv:
            out.append(Trace(row, _mean_vec(res.tpot_fv), _mean_vec(res.ttft_fv)))
    return out


# bounds of theta + request_theta = (1/bw_eff, 1/flops_eff, 1/attn_eff, 1/link_eff, collective_us, step_us,
# seq_us, layer_us, eager_layer_us, extend_layer_us, request_ms, inflight_us)
LOWER = (1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
UPPER = (10.0, 20.0, 20.0, 20.0, 200.0, 50_000.0, 500.0, 1000.0, 5000.0, 5000.0, 500.0, 20_000.0)


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        if abs(m[col][col]) < 1e-300:
            continue
        for r in range(n):
            if r != col:
                fac = m[r][col] / m[col][col]
                for k in range(col, n + 1):
                    m[r][k] -= fac * m[col][k]
    return [m[i][n] / m[i][i] if abs(m[i][i]) > 1e-300 else 0.0 for i in range(n)]


def fit(tr: list[Trace], start: Coefficients, *, rounds: int = 12, hold: tuple[int, ...] = (),
        upper: tuple[float, ...] = UPPER, lower: tuple[float, ...] = LOWER) -> Coefficients:
    """IRLS (L1 on relative error) of theta and request_ms on TPOT and TTFT, within bounds (``lower``,
    ``upper``); ``hold``: indices of theta kept at their start values."""
    th = list(theta(start)) + list(request_theta(start))
    nparam = len(th)
    eqs: list[tuple[list[float], float]] = []  # (coefficients, measured): relative residual rows
    for t in tr:
        eqs.append(([x / t.row.tpot_ms * 1e3 for x in t.a_tpot], 1.0))
        eqs.append(([x / t.row.ttft_ms * 1e3 for x in t.a_ttft], 1.0))
    fixed: dict[int, float] = {i: th[i] for i in hold}
    for _ in range(rounds):
        ata = [[0.0] * nparam for _ in range(nparam)]
        atb = [0.0] * nparam
        for coef, y in eqs:
            pred = sum(c * v for c, v in zip(coef, th, strict=True))
            w = 1.0 / max(abs(pred - y), 0.02)  # L1 by reweighting; 2% floor
            for i in range(nparam):
                if coef[i] == 0.0:
                    continue
                atb[i] += w * coef[i] * y
                for j in range(nparam):
                    ata[i][j] += w * coef[i] * coef[j]
        scale = [max(ata[i][i], 1e-30) for i in range(nparam)]
        for i in range(nparam):  # light ridge toward the previous value keeps unseen terms put
            ata[i][i] += 1e-3 * scale[i]
            atb[i] += 1e-3 * scale[i] * th[i]
        for i, v in fixed.items():
            ata[i] = [0.0] * nparam
            ata[i][i] = 1.0
            atb[i] = v
        new = _solve(ata, atb)
        lo, hi = lower, upper
        for i in range(nparam):
            if new[i] < lo[i] or new[i] > hi[i]:
                fixed[i] = min(max(new[i], lo[i]), hi[i])
                new[i] = fixed[i]
        th = new
    return from_theta(th, start)


def ape(pred: float, meas: float) -> float:
    return abs(pred - meas) / meas


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return math.nan
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, math.ceil(q * len(xs)) - 1))]


def spearman(a: list[float], b: list[float]) -> float:
    def ranks(x: list[float]) -> list[float]:
        order = sorted(range(len(x)), key=lambda i: x[i])
        r = [0.0] * len(x)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and x[order[j + 1]] == x[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2.0
            i = j + 1
        return r

    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    den = math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))
    return num / den if den else math.nan


def measured_tput_per_gpu(r: Row) -> float:
    """Closed-loop output tokens/s per GPU implied by the measured means (C x OSL per request time)."""
    return r.concurrency * r.osl / ((r.ttft_ms + r.tpot_ms * (r.osl - 1)) / 1e3) / r.gpus


def score(rows: list[Row], sets: dict[str, Coefficients]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        isl, osl, ratio = workload_lengths(r)
        p = predict(r.facts, Workload(isl=isl, osl=osl, concurrency=r.concurrency, range_ratio=ratio,
                                      num_requests=r.rounds * r.concurrency), sets[r.engine])
        tput_pred = r.concurrency * r.osl / ((p.ttft_ms_mean + p.tpot_ms_mean * (r.osl - 1)) / 1e3) / r.gpus
        out.append({"id": r.id, "family": r.family, "engine": r.engine, "group": r.group, "release": r.release,
                    "system": r.system, "tpot_signed": (p.tpot_ms_mean - r.tpot_ms) / r.tpot_ms,
                    "tpot": ape(p.tpot_ms_mean, r.tpot_ms), "ttft": ape(p.ttft_ms_mean, r.ttft_ms),
                    "tput": ape(tput_pred, measured_tput_per_gpu(r)), "tput_pred": tput_pred,
                    "tput_meas": measured_tput_per_gpu(r), "sim_tput": p.output_tok_per_s_per_gpu})
    return out


def summarize(scored: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for s in scored:
        groups.setdefault(s["group"], []).append(s)
    rho = [spearman([x["tput_pred"] for x in g], [x["tput_meas"] for x in g]) for g in groups.values() if len(g) >= 3]
    rho = [x for x in rho if not math.isnan(x)]
    return {"rows": len(scored),
            "tpot_median": pct([s["tpot"] for s in scored], 0.5), "tpot_p90": pct([s["tpot"] for s in scored], 0.9),
            "ttft_median": pct([s["ttft"] for s in scored], 0.5),
            "tput_median": pct([s["tput"] for s in scored], 0.5),
            "spearman_median": statistics.median(rho) if rho else math.nan, "ranking_groups": len(rho)}


def release_group(engine: str, release: str) -> str:
    """``engine major.minor`` of a row's backend_version; a nightly tag or none stays as recorded ("-": none)."""
    m = re.match(r"(\d+)\.(\d+)", release or "")
    return f"{engine} {m.group(1)}.{m.group(2)}" if m else f"{engine} {release or '-'}"


def by_release(scored: list[dict[str, Any]]) -> dict[str, Any]:
    """The held-out rows' errors by engine release (major.minor) and GPU: where the misses sit, with the signed
    TPOT median (positive: predicted too slow)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for s in scored:
        groups.setdefault(f"{release_group(s['engine'], s['release'])} {s['system']}", []).append(s)
    return {k: {**summarize(g), "tpot_signed_median": statistics.median(x["tpot_signed"] for x in g)}
            for k, g in sorted(groups.items())}


def domain_of(rows: list[Row], engine: str, stride: int, prov: dict[str, str]) -> dict[str, Any]:
    """The span of the runs ``engine``'s set is fitted on (``predict._domain.Domain``, written with the set): clients
    per replica, the shortest and longest lengths each run's client sent, releases, GPUs."""
    mine = [r for r in rows if r.engine == engine]
    runs = []
    for r in mine:
        isl, osl, ratio = workload_lengths(r)
        (i0, i1), (o0, o1) = length_range(isl, ratio), length_range(osl, ratio)
        gpu = SYSTEMS[r.system]
        runs.append((math.ceil(r.concurrency / max(1, r.facts.replicas)), i0, i1, o0, o1, r.release, gpu,
                     find(gpu).vendor))
    source = (f"the {len(mine)} aggregated {engine} runs this set is fitted on (one usable row in {max(1, stride)} "
              f"by run-id hash; {prov['csv']} in {prov['wheel']}, sha256 {prov['csv_sha256'][:16]}): clients per "
              "replica (batch_size x attention DP over the replicas), the lengths each run's client sent "
              "(InferenceX: uniform in [0.8 L, L]; aiconfigurator's own: exact), backend_version as recorded; "
              "bench/predict_accuracy.py")
    return domain_from_runs(runs, source).to_json()


def write_domains(rows: list[Row], stride: int, prov: dict[str, str]) -> dict[str, Any]:
    """Record each gpu set's domain in data/predict_coefficients.json without refitting (``--domain-only``): the
    rows must be those the shipped sets were fitted on (the same ``--stride``)."""
    path = ROOT / "src/launchcard/data/predict_coefficients.json"
    doc = json.loads(path.read_text())
    out = {}
    for e in ENGINE:
        key = f"gpu:{e}"
        if key in doc["sets"] and any(r.engine == e for r in rows):
            doc["sets"][key]["domain"] = out[key] = domain_of(rows, e, stride, prov)
    atomicfile.write_text(path, json.dumps(doc, indent=2) + "\n")
    return out


def prior_sets() -> dict[str, Coefficients]:
    """The starting point of every fit: the recorded gpu:vllm set for each engine, its FLOP/s share at 1: the
    kernels' own (data/predict_coefficients.json "kernels", fitted on measured kernel tables by
    bench/predict_kernels.py) are in the step work already."""
    base = replace(coefficients("gpu", "vllm"), flops_eff=1.0, domain=None, request_ms=0.0, inflight_us=0.0)
    # each engine's measured streaming stages ("streaming") and, where measured ("engine_seq", held: SEQ_HELD), its
    # per-sequence host cost, never fitted (an engine without one fits seq_us from the vLLM start, without its rise)
    # an engine without a measured per-step part fits step_us from 0
    return {e: replace(base, key=f"gpu:{e}", stages=coefficients("gpu", e).stages,
                       seq_rise=base.seq_rise if engine_seq(e) else SeqRise(),
                       step_us=base.step_us if step_measured(e) else 0.0) for e in ENGINE}


def step_measured(engine: str) -> bool:
    """Whether ``engine``'s per-step host part is measured ("engine_seq" "step"; held: STEP_HELD)."""
    got = engine_seq(engine)
    return got is not None and got.step_us is not None


# theta index held at its prior (1.0): 1/flops_eff (the kernels' FLOP/s shares come from the kernel tables).  The
# memory shares (a served step moves more than the modelled kernels), the interconnect and the host/overhead terms
# are fitted on end-to-end runs
KERNEL_HELD = (1,)
# theta + request_theta indices held at 0: request_ms and inflight_us, the API server's front end.  These runs
# cannot tell it apart from the engine's own light-load cost, and what a free fit put there is not a front end
# (bench/predict_front.py): measured minus engine-only TTFT at 4-8 clients is ~0 for vLLM but 150-300 ms for
# SGLang, about 20 decode steps at every load from 4 to 64 clients, on 1k and 8k prompts alike, while tokenizing
# a prompt costs ~1 us a token; a fixed per-request term fitted on it (SGLang 172 ms) then lands on every
# request of every model.  What the gap is remains unexplained (README "TTFT's front end"); held at 0, the fit
# puts it into the eager terms of the steps that carry prefill tokens (SGLang: extend_layer_us): a proxy, not a
# launch cost
FRONT_HELD = (10, 11)
# theta index of extend_layer_us, an extend batch's cost per op it launches (ServingFacts.extend_ops, counted from
# the model's structure by predict._sglang_ops) beside the launches per kernel group (eager_layer_us), fitted for
# SGLang only: its extend batches always run eagerly (enable_piecewise_cuda_graph off by default in 0.5.3-0.5.9,
# server_args.py 0.5.6.post2 L530) and its decode batches above --cuda-graph-max-bs too (cuda_graph_runner.py
# can_run), so the calibration runs' eager decode batches (Llama-3.1-8B on H200 at TP 1-2, 352-512 clients over
# the 256 captured) time the launches alone and the extend batches the rest.  vLLM's and TensorRT-LLM's sets keep
# one eager term (held at 0 here: their prefill steps are not split by this change)
EXTEND_HELD = (9,)
# theta index held at its measured value where measured (seq_us: bench/measure_engine_seq.py, "engine_seq"; vLLM):
# these runs, almost none above 256 sequences, cannot identify it (a free fit put 0 there)
SEQ_HELD = (6,)
# theta index held at its measured value where measured (step_us: the host time every step pays, the intercept of
# bench/measure_engine_seq.py's steps, "engine_seq" "step"; vLLM): in series with the kernels without async
# scheduling, beside them with it.  A free fit cannot tell it from layer_us (both are paid once a step by one model)
STEP_HELD = (5,)


def read_bounds(engine: str) -> tuple[float, float, float]:
    """Lower bounds of (1/bw_eff, 1/flops_eff, 1/attn_eff) for ``engine``'s set.  A served decode step's weight
    and KV reads are made by the kernels the tables time (few-row GEMMs, decode attention), so no GPU's reads are
    timed faster than its own kernels measure: bw_eff x share / basis <= share, i.e. bw_eff <= the calibrated GPUs'
    median share (0.835 for vLLM, where the datasheet bound alone, 1 / the largest ratio, let the fit put H100's reads
    at 0.99 of 3.35 TB/s against its GEMMs' 0.88); the same for attn_eff; neither above any GPU's datasheet."""
    return (max(max_weight_read_ratio(engine), 1.0 / weight_read_basis(engine)), LOWER[1],
            max(max_attn_read_ratio(engine), 1.0 / attn_read_basis(engine)))


def fit_sets(tr: list[Trace], start: dict[str, Coefficients]) -> dict[str, Coefficients]:
    out = dict(start)
    for e in ENGINE:
        mine = [t for t in tr if t.row.engine == e]
        if len(mine) >= 8:
            low = read_bounds(e) + LOWER[3:]
            hold = (KERNEL_HELD + FRONT_HELD + (SEQ_HELD if engine_seq(e) else ())
                    + (STEP_HELD if step_measured(e) else ())
                    + (() if e == "sglang" else EXTEND_HELD))
            out[e] = fit(mine, start[e], hold=hold, lower=low)
    return out


def light_load_gap(rows: list[Row], c: Coefficients, clients: int = 8) -> dict[str, Any] | None:
    """Measured minus predicted TTFT (ms) on the runs of ``c``'s engine at <= ``clients`` clients, under ``c``
    itself (in-sample: how far the fitted set misses light-load TTFT on its own data), as quartiles."""
    engine = c.key.split(":")[-1]
    mine = [r for r in rows if r.engine == engine and r.concurrency <= clients]
    if len(mine) < 8:
        return None
    gaps = []
    for r in mine:
        isl, osl, ratio = workload_lengths(r)
        p = predict(r.facts, Workload(isl=isl, osl=osl, concurrency=r.concurrency, range_ratio=ratio,
                                      num_requests=r.rounds * r.concurrency), c)
        gaps.append(r.ttft_ms - p.ttft_ms_mean)
    return {"clients": clients, "runs": len(gaps), "measured_minus_predicted_ms": [
        round(pct(gaps, q), 1) for q in (0.25, 0.5, 0.75)]}


def roofline_sets() -> dict[str, Coefficients]:
    plain = Coefficients(bw_eff=1.0, flops_eff=1.0, attn_eff=1.0, link_eff=1.0, collective_us=0.0, step_us=0.0,
                         seq_us=0.0, layer_us=0.0, eager_layer_us=0.0, request_ms=0.0, key="roofline",
                         fitted_on="none: datasheet bandwidth, FLOP/s at the kernel tables' shares")
    return dict.fromkeys(ENGINE, plain)


def fmt(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x * 100:.1f}%"


def main(argv: list[str] | None = None) -> int:
    from predict_corpus import corpus_summary, print_corpus, score_corpus  # it imports this module's helpers

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="refit on every row and write the coefficient table")
    ap.add_argument("--limit", type=int, default=None, help="first N usable rows only (quick look)")
    ap.add_argument("--stride", type=int, default=1, help="one usable row in N, by run id (the README's tables: 3)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--domain-only", action="store_true",
                    help="record each gpu set's calibrated domain (batch, lengths, releases, GPUs of the rows it is "
                         "fitted on: pass the --stride it was fitted with) without refitting")
    ap.add_argument("--corpus-only", action="store_true",
                    help="only the corpus SGLang tables, with the shipped coefficient sets (no wheel, no fit)")
    args = ap.parse_args(argv)
    if args.corpus_only:
        shipped = {e: coefficients("gpu", e) for e in ENGINE}
        corpus = score_corpus(shipped)
        res: dict[str, Any] = {"corpus_sglang": corpus, "corpus_sglang_summary": corpus_summary(corpus)}
        if args.json:
            print(json.dumps(res, indent=2, default=str))
        else:
            print_corpus(res)
        return 0
    rows, skipped, prov = load_rows(args.limit)
    rows = sample(rows, args.stride)
    prov["rows_used"] = f"{len(rows)} (one usable aggregated row in {max(1, args.stride)}, by run id)"
    if args.domain_only:
        print(json.dumps(write_domains(rows, args.stride, prov), indent=2))
        return 0
    fams = sorted({r.family for r in rows})
    print(f"{len(rows)} aggregated rows usable from {prov['wheel']} ({prov['csv']}, sha256 {prov['csv_sha256'][:12]})",
          file=sys.stderr)
    for why, n in sorted(skipped.items(), key=lambda kv: -kv[1]):
        print(f"  skipped {n:5d}: {why}", file=sys.stderr)
    table: dict[str, Any] = {}
    all_scored: list[dict[str, Any]] = []
    prior = prior_sets()
    tr_all = traces(rows, prior)  # schedules traced once, under the prior terms
    for fam in fams:
        sets = fit_sets([t for t in tr_all if t.row.family != fam], prior)
        sc = score([r for r in rows if r.family == fam], sets)
        all_scored += sc
        table[fam] = summarize(sc)
        print(f"  held out {fam}: {table[fam]}", file=sys.stderr)
    table["all (held out)"] = summarize(all_scored)
    releases = by_release(all_scored)
    for k, v in releases.items():
        print(f"  by release {k}: {v['rows']} rows, TPOT {fmt(v['tpot_median'])} / {fmt(v['tpot_p90'])} "
              f"(signed median {v['tpot_signed_median'] * 100:+.0f}%)", file=sys.stderr)
    table["kernel roofline (no end-to-end terms)"] = summarize(score(rows, roofline_sets()))
    engines = {e: summarize([s for s in all_scored if s["engine"] == e])
               for e in sorted({s["engine"] for s in all_scored})}
    result: dict[str, Any] = {"provenance": prov, "skipped": skipped, "leave_one_family_out": table,
                              "leave_one_family_out_by_engine": engines,
                              "leave_one_family_out_by_release": releases}
    if args.write:
        sets = fit_sets(tr_all, prior)
        sets = fit_sets(traces(rows, sets), sets)  # once more with the roofline branches the fit implies
        doc = {"about": "Efficiency and overhead terms of launchcard.predict, by platform. Written by "
                        "bench/predict_accuracy.py --write; each set names the public data it was fitted on.",
               "sets": {}}
        old = json.loads((ROOT / "src/launchcard/data/predict_coefficients.json").read_text())
        for e, c in sets.items():
            n = sum(1 for r in rows if r.engine == e)
            doc["sets"][f"gpu:{e}"] = {
                "values": {k: round(getattr(c, k), 6) for k in PARAMS},
                "fitted_on": f"{n} aggregated (one usable row in {max(1, args.stride)} by run-id hash; "
                             "bench/predict_accuracy.py "
                             f"--stride {max(1, args.stride)} --write) {e} runs of {prov['csv']} in {prov['wheel']} "
                             f"({prov['license']}, "
                             f"{prov['wheel_url']}, sha256 {prov['csv_sha256'][:16]}); families "
                             f"{', '.join(sorted({r.family for r in rows if r.engine == e}))}; flops_eff held at 1 "
                             "(the kernels' FLOP/s shares of \"kernels\", fitted on the wheel's measured kernel "
                             "tables by bench/predict_kernels.py, are in the step work); request_ms and inflight_us "
                             "held at 0 (FRONT_HELD: not identifiable in these runs, bench/predict_front.py)"
                             + ("; seq_us held at its measured value (SEQ_HELD: \"engine_seq\", "
                                "bench/measure_engine_seq.py)" if engine_seq(e) else "")
                             + ("; step_us held at its measured value (STEP_HELD: \"engine_seq\" \"step\")"
                                if step_measured(e) else "")
                             + ("; eager_layer_us (launches, every step without CUDA graphs) apart from "
                                "extend_layer_us (an extend batch's own cost per op it launches, "
                                "predict._sglang_ops)" if e == "sglang" else
                                "; extend_layer_us held at 0 (EXTEND_HELD: one eager term)"),
                "domain": domain_of(rows, e, args.stride, prov)}
            gap = light_load_gap(rows, c)
            if gap is not None:
                doc["sets"][f"gpu:{e}"]["light_load_ttft"] = gap
        for k, v in old["sets"].items():
            if k.startswith(("cpu:", "rocm:")):  # this machine's CPU runs; bench/predict_amd.py's AMD set (its
                doc["sets"][k] = v  # unfitted terms are read from the gpu set it falls back to)
        # every other section is another writer's (bench/predict_kernels.py "kernels", measure_host_stream.py
        # "streaming", measure_engine_seq.py "engine_seq", measure_chat_request.py "chat", ...): kept whole, so a
        # refit never drops a section it does not know of
        for key, value in old.items():
            if key not in doc:
                doc[key] = value
        path = ROOT / "src/launchcard/data/predict_coefficients.json"
        atomicfile.write_text(path, json.dumps(doc, indent=2) + "\n")
        result["written"] = {k: v["values"] for k, v in doc["sets"].items()}
        shipped = sets
    else:
        shipped = {e: coefficients("gpu", e) for e in ENGINE}  # the recorded sets (fitted on the wheel's runs only)
    result["corpus_sglang"] = score_corpus(shipped)
    result["corpus_sglang_summary"] = corpus_summary(result["corpus_sglang"])
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        print_corpus(result)
        print("| held-out family | rows | TPOT median / p90 | TTFT median | throughput median "
              "| ranking (Spearman, groups) |")
        print("|---|---|---|---|---|---|")
        for fam, s in table.items():
            print(f"| {fam} | {s['rows']} | {fmt(s['tpot_median'])} / {fmt(s['tpot_p90'])} | {fmt(s['ttft_median'])} | "
                  f"{fmt(s['tput_median'])} | {s['spearman_median']:.2f} ({s['ranking_groups']}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
