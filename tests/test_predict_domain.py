"""predict._domain: a prediction outside the runs its coefficient set was fitted on says so, once per cause, in
every surface that shows it (predict text/JSON, plan search aggregated, sweep rows), and no figure changes."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from config_support import LLAMA8B
from helpers import run_cli
from launchcard.flagspec import default_release, release_key
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import (
    DOMAIN_CODES,
    HardwareFigures,
    ServingFacts,
    Workload,
    coefficients,
    facts_from_memory_plan,
    predict,
)
from launchcard.predict._domain import batch_bucket

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"


def facts(gpu: str = "h100", version: str | None = "0.12.0", **kw: object) -> ServingFacts:
    s = Settings(max_model_len=16384, vllm_version=version, **kw)  # type: ignore[arg-type]
    arch = arch_from_config(dict(LLAMA8B))
    acc = find(gpu)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc))


def codes(f: ServingFacts, w: Workload) -> list[str]:
    return [x.code for x in predict(f, w).findings if x.code in DOMAIN_CODES]


INSIDE = Workload(isl=1024, osl=256, concurrency=16)  # the calibration runs' lengths and batches


def test_every_gpu_set_records_the_span_of_the_runs_it_was_fitted_on() -> None:
    for engine in ("vllm", "sglang", "trtllm"):
        c = coefficients("gpu", engine)
        d = c.domain
        assert d is not None, engine
        assert f"{d.runs} aggregated {engine} runs" in d.source and c.fitted_on.startswith(f"{d.runs} aggregated")
        assert sum(n for _, n in d.batch_runs) == d.runs
        assert d.batch_max >= 64 and d.isl[0] <= d.isl[1] and d.osl[0] <= d.osl[1]
        assert d.releases and "h100" in d.gpus and d.vendors == ("NVIDIA",)
    assert coefficients("cpu", "vllm").domain is None  # fitted on this machine's live runs: no span recorded


def test_a_plan_inside_the_domain_has_no_domain_finding() -> None:
    assert codes(facts(), INSIDE) == []


def test_a_decode_batch_beyond_the_calibration_runs_is_assumed_once() -> None:
    d = coefficients("gpu", "vllm").domain
    assert d is not None
    f = facts(gpu="h200", max_num_seqs=1024)
    p = predict(f, Workload(isl=1024, osl=128, rate=float("inf"), num_requests=1000))
    assert p.max_running > d.batch_max
    found = [x for x in p.findings if x.code == "domain-batch"]
    assert len(found) == 1 and found[0].severity == "assumed"
    assert f"up to {p.max_running} requests" in found[0].message and f"at most {d.batch_max}" in found[0].message
    # the same plan at a batch the runs had: no finding
    assert "domain-batch" not in codes(f, INSIDE)


def test_findings_only_no_figure_changes() -> None:
    f = facts(gpu="a100_80gb", version="0.10.1.1", max_num_seqs=1024)
    w = Workload(isl=128, osl=128, rate=float("inf"), num_requests=1000)
    c = coefficients("gpu", "vllm")
    with_domain, without = predict(f, w, c), predict(f, w, replace(c, domain=None))
    assert {x.code for x in with_domain.findings} - {x.code for x in without.findings} == set(DOMAIN_CODES) - {
        "domain-platform"}
    a, b = with_domain.to_json(), without.to_json()
    for said in ("findings", "outside_calibration"):  # what is said differs, never a figure
        a.pop(said), b.pop(said)
    assert a == b


def test_a_gpu_without_kernel_tables_names_the_share_assumed_and_where_it_comes_from() -> None:
    msgs = [x.message for x in predict(facts(gpu="a100_80gb_pcie"), INSIDE).findings if x.code == "domain-gpu"]
    assert len(msgs) == 1
    assert "a100_80gb_pcie has no measured kernel tables" in msgs[0] and "median of" in msgs[0] and "h100" in msgs[0]
    assert "dense GEMM 0." in msgs[0] and "no calibration run of gpu:vllm on it" in msgs[0]


def test_a_gpu_with_tables_but_no_calibration_run_says_so() -> None:
    d = coefficients("gpu", "vllm").domain
    assert d is not None and "gb200" not in d.gpus
    msgs = [x.message for x in predict(facts(gpu="gb200"), INSIDE).findings if x.code == "domain-gpu"]
    assert msgs == [f"gb200: kernel tables measured, but no calibration run of gpu:vllm on it (its runs: "
                    f"{', '.join(d.gpus)})"]


def test_another_platform_is_named() -> None:
    msgs = [x.message for x in predict(facts(gpu="mi300x"), INSIDE).findings if x.code == "domain-platform"]
    assert len(msgs) == 1 and msgs[0].startswith("AMD GPU (ROCm): gpu:vllm was calibrated on NVIDIA (CUDA)")


def test_sglang_on_rocm_names_the_kernels_no_run_calibrates() -> None:
    vllm = [x.message for x in predict(facts(gpu="mi300x"), INSIDE).findings if x.code == "domain-platform"]
    assert "SGLang on ROCm" not in vllm[0]  # the kernels read are SGLang's: vLLM's ROCm paths are not claimed
    sgl = replace(facts(gpu="mi300x"), engine="sglang")
    msg = next(x.message for x in predict(sgl, INSIDE).findings if x.code == "domain-platform")
    assert "e4m3fnuz" in msg and "SGLANG_USE_AITER=1" in msg and "mla_decode_fwd" not in msg  # Llama: no MLA
    as_mla = replace(sgl, prefill_flops_per_pair=sgl.attn_flops_per_pair * 2)  # what marks MLA in the facts
    mla = next(x.message for x in predict(as_mla, INSIDE).findings if x.code == "domain-platform")
    assert "aiter's mla_decode_fwd where a rank has 16 or 128 heads" in mla
    nvidia = replace(facts(gpu="h100"), engine="sglang")
    assert "domain-platform" not in codes(nvidia, INSIDE)


def test_an_engine_release_outside_the_calibrated_ones_or_not_stated() -> None:
    d = coefficients("gpu", "vllm").domain
    assert d is not None
    old = [x.message for x in predict(facts(version="0.10.1.1"), INSIDE).findings if x.code == "domain-release"]
    assert old == [f"vLLM 0.10.1.1: outside the releases gpu:vllm was calibrated on (vLLM {d.releases[0]} to "
                   f"{d.releases[-1]}; {d.releases_unnamed} of its runs name a nightly build or no release)"]
    unstated = [x.message for x in predict(facts(version=None), INSIDE).findings if x.code == "domain-release"]
    # the one default release every surface takes, named (flagspec.default_release), with the option that states one
    assert len(unstated) == 1 and unstated[0].startswith(
        f"no vLLM release given: vLLM {default_release('vllm')}, the newest release whose flags launchcard captured "
        "(pass --engine-version); gpu:vllm was calibrated on")
    assert "domain-release" not in codes(facts(version="0.13.0"), INSIDE)  # between two calibrated releases
    # TensorRT-LLM: --engine-version plans no TensorRT-LLM defaults, so the finding does not advise it
    trt = replace(facts(version=None), engine="trtllm")
    msg = [x.message for x in predict(trt, INSIDE).findings if x.code == "domain-release"]
    assert len(msg) == 1 and msg[0].startswith("no TensorRT-LLM release given: its defaults are not read by release")
    assert "--engine" not in msg[0]


def test_lengths_outside_the_calibrated_range() -> None:
    d = coefficients("gpu", "vllm").domain
    assert d is not None
    msgs = [x.message for x in predict(facts(), Workload(isl=128, osl=128, concurrency=4)).findings
            if x.code == "domain-lengths"]
    assert msgs == [f"prompts of 128 and outputs of 128 tokens: outside gpu:vllm's calibration runs (prompts "
                    f"{d.isl[0]}-{d.isl[1]}, outputs {d.osl[0]}-{d.osl[1]})"]
    # a spread of lengths is judged by its shortest and longest request
    assert "domain-lengths" in codes(facts(), Workload(isl=d.isl[1], osl=256, concurrency=4, range_ratio=0.5))


def test_release_order_and_batch_buckets() -> None:
    order = ["0.5.1.post1", "0.5.6", "0.5.6.post2", "0.5.10.post1", "1.0.0rc3", "1.0.0", "1.0.0.post1",
             "1.2.0rc2", "1.2.0rc6.post3", "1.3.0rc1"]
    keys = [release_key(v) for v in order]
    assert all(k is not None for k in keys)
    assert sorted(order, key=lambda v: release_key(v) or ()) == order
    assert release_key("0.10.1.1") > release_key("0.10.1")  # type: ignore[operator]
    assert release_key("nightly-dev") is None and release_key("glm5-hopper") is None and release_key(None) is None
    assert [batch_bucket(n) for n in (1, 8, 9, 256, 512, 513)] == ["<=8", "<=8", "<=64", "<=256", "<=512", ">512"]


def test_cli_json_carries_the_domain_findings() -> None:
    res = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "a100_80gb_pcie", "--gpus-per-node", "8", "--tp", "2",
                  "--isl", "128",
                  "--osl", "128", "--concurrency", "4", "--engine-version", "0.10.1.1", "--json")
    assert res.returncode == 0, res.stderr
    found = [f for f in json.loads(res.stdout)["findings"] if f["code"] in DOMAIN_CODES]
    assert sorted(f["code"] for f in found) == ["domain-gpu", "domain-lengths", "domain-release"]
    assert all(f["severity"] == "assumed" for f in found)
    text = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "a100_80gb_pcie", "--gpus-per-node", "8", "--tp", "2",
                  "--isl", "128",
                   "--osl", "128", "--concurrency", "4", "--engine-version", "0.10.1.1").stdout
    assert "assumed  a100_80gb_pcie has no measured kernel tables" in text


@pytest.mark.parametrize("gpu", ["a100_80gb_pcie"])
def test_plan_search_says_each_cause_once_with_a_count(gpu: str) -> None:
    from launchcard.plansearch import SearchSpace, Slo, checkpoint_option, search

    space = SearchSpace(model="openai/gpt-oss-120b", gpu=gpu, gpus=2, gpus_per_node=8,
                        options=(checkpoint_option("openai/gpt-oss-120b", GPT_OSS),), max_num_seqs=(64, 1024))
    # 1000 requests at once: a plan that admits them all runs beyond the largest calibration batch, one capped at
    # 64 does not
    r = search(space, Workload(isl=1024, osl=1024, rate=float("inf"), num_requests=1000), Slo.parse("tpot=1000"))
    domain = [f for f in r.findings if f.startswith("assumed (")]
    # one line per cause, however many plans share it
    assert len(domain) == len({f.split("): ", 1)[1].split(":")[0][:20] for f in domain})
    gpu_line = [f for f in domain if "has no measured kernel tables" in f]
    assert len(gpu_line) == 1 and re.match(r"assumed \(all \d+ predicted plans\): ", gpu_line[0])
    batch = [f for f in domain if "requests run at once per replica" in f]
    assert len(batch) == 1 and " predicted plans" in batch[0]
    predicted = [o for o in r.outcomes if o.figures is not None]
    codes = [{f["code"] for f in o.to_json()["figures"]["outside_calibration"]} for o in predicted]
    assert predicted and all("domain-gpu" in c for c in codes)
    assert any("domain-batch" in c for c in codes) and not all("domain-batch" in c for c in codes)


def test_outside_calibration_has_one_shape_in_every_json() -> None:
    """A plan's figures listed their causes as codes (["domain-gpu"]), the web's predicted points as findings
    ({"severity", "code", "message"}): both are predict.outside_json's findings now, one per cause."""
    from launchcard.plansearch import SearchSpace, Slo, checkpoint_option, search
    from launchcard.predict import outside_json
    from launchcard.web._predicted import prediction_hook

    space = SearchSpace(model="openai/gpt-oss-120b", gpu="a100_80gb_pcie", gpus=2, gpus_per_node=8,
                        options=(checkpoint_option("openai/gpt-oss-120b", GPT_OSS),), max_num_seqs=(64,))
    r = search(space, Workload(isl=1024, osl=256, concurrency=8), Slo.parse("tpot=1000"))
    plans = [o for o in r.outcomes if o.figures is not None]
    points = prediction_hook(lambda m: [{"hardware": "a100_80gb_pcie", "conditions": {
        "gpus": 2, "input_tokens": 1024, "output_tokens": 256, "concurrency": 8, "parallelism": "TP2"}}],
        lambda m: GPT_OSS)("openai/gpt-oss-120b")
    assert plans and points
    for listed in [o.to_json()["figures"]["outside_calibration"] for o in plans] + [
            p["outside_calibration"] for p in points]:
        assert listed and all(set(f) == {"severity", "code", "message"} for f in listed), listed
        assert "domain-gpu" in [f["code"] for f in listed]
        assert len({f["code"] for f in listed}) == len(listed)
    assert plans[0].to_json()["figures"]["outside_calibration"] == outside_json(plans[0].figures.outside)


def test_a_search_counts_each_cause_once_per_plan() -> None:
    from launchcard.predict import Finding, plans_outside

    gpu = Finding("assumed", "domain-gpu", "no tables")
    big = Finding("assumed", "domain-batch", "up to 900 requests")
    bigger = Finding("assumed", "domain-batch", "up to 1000 requests")
    # a disaggregated plan's two pools may both carry a cause: one plan
    per_plan = [(gpu, big, big), (gpu,), (gpu, bigger), (gpu,)]
    assert plans_outside(per_plan, best=(gpu, bigger)) == [
        "assumed (all 4 predicted plans): no tables",
        "assumed (2 of 4 predicted plans, the best among them): up to 1000 requests"]
    assert plans_outside(per_plan) == ["assumed (all 4 predicted plans): no tables",
                                       "assumed (2 of 4 predicted plans): up to 900 requests"]
    assert plans_outside([(), ()]) == []


def test_a_sweep_row_carries_the_searchs_domain_findings() -> None:
    from launchcard.plansearch._sweep import SweepTask, run_task

    row = run_task(SweepTask(model="openai/gpt-oss-120b", config=str(GPT_OSS), gpu="a100_80gb_pcie", gpus=2,
                             gpus_per_node=8, workload="chat", isl=1024, osl=256, concurrency=8, rate=None,
                             slo="tpot=1000", max_num_seqs=(64,)))
    assert row["status"] == "ok", row
    assert any(f.startswith("assumed (all ") and "a100_80gb_pcie has no measured kernel tables" in f
               for f in row["findings"])
    assert "domain-gpu" in [f["code"] for f in row["winner"]["figures"]["outside_calibration"]]


def test_a_gpu_whose_tables_lack_a_class_says_whose_share_stands_in() -> None:
    """The A100's vLLM tables (0.14.0) hold no balanced-routing MoE rows: its own GEMM and attention shares, SGLang
    0.5.10's fused Triton MoE share on the A100 (the same kernel time: _kernels.MOE_STAND_IN), and a finding that
    says so (a BF16 MoE: gpt-oss's MXFP4 experts run Marlin on an A100, whose own measured share they take,
    test_predict_marlin); TensorRT-LLM's A100 tables have no stand-in: the median's, said so."""
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs"
    qwen = qwen / "Qwen--Qwen3-235B-A22B_config.json"
    res = run_cli("predict", "--config", str(qwen), "--gpu", "a100_80gb", "--gpus-per-node", "8", "--tp", "8",
                  "--isl", "128",
                  "--osl", "128", "--concurrency", "4", "--engine-version", "0.10.1.1", "--json")
    assert res.returncode == 0, res.stderr
    msgs = [f["message"] for f in json.loads(res.stdout)["findings"] if f["code"] == "domain-gpu"]
    assert len(msgs) == 1 and msgs[0].startswith("a100_80gb: kernel tables measured, but no calibration run")
    assert "its vllm tables have no balanced-routing grouped MoE GEMM rows: that share (0.24, call latency 64 us) " \
           "is sglang's fused Triton MoE on the same GPU" in msgs[0]
    assert "median" not in msgs[0]
    # vLLM ships a tuned A100 file for E=128, N=192 that SGLang 0.5.10 lacks: the tables' ratio, said (_fused_moe)
    assert "at E=128, N=192 vLLM 0.11.0 runs the tuned file E=128,N=192,device_name=NVIDIA_A100-SXM4-80GB.json, " \
           "SGLang 0.5.10 get_default_config (no tuned file): the experts' time x 0.92 at <= 128 tokens, x 0.81 " \
           "above" in msgs[0]
    # the stand-in is the Triton fused MoE's record: its rows padded to the blocks of vLLM's tuned file for the
    # shape (E=128, N=192 on the A100), from the oldest release read (0.11.0), said so
    blocks = [f for f in json.loads(res.stdout)["findings"] if f["code"] == "fused-moe-blocks"]
    assert len(blocks) == 1 and blocks[0]["severity"] == "assumed"
    assert "E=128,N=192,device_name=NVIDIA_A100-SXM4-80GB.json of vLLM 0.11.0" in blocks[0]["message"]
    assert "release 0.10.1.1: the files of 0.11.0 read" in blocks[0]["message"]
    res = run_cli("predict", "--config", str(qwen), "--gpu", "a100_80gb", "--gpus-per-node", "8", "--tp", "8",
                  "--isl", "128",
                  "--osl", "128", "--concurrency", "4", "--engine", "trtllm", "--json")
    assert res.returncode == 0, res.stderr
    msgs = [f["message"] for f in json.loads(res.stdout)["findings"] if f["code"] == "domain-gpu"]
    assert len(msgs) == 1 and "its trtllm tables have no grouped MoE GEMM rows: that share is the median" in msgs[0]
    assert not [f for f in json.loads(res.stdout)["findings"] if f["code"] == "fused-moe-blocks"]


@pytest.mark.parametrize(("gpu", "kind"), [("trillium", "Google TPU"), ("gaudi3", "Intel HPU")])
def test_an_accelerator_that_is_no_gpu_names_its_kind_and_the_shares_it_borrows(gpu: str, kind: str) -> None:
    """A TPU or Gaudi HPU has no kernel tables: how its FLOP/s are taken (the datasheet's at full rate) is said as
    a GPU's shares are (it was not: only GPUs got domain-gpu), and the platform finding names the accelerator's
    kind (it said 'Google GPU', 'Intel GPU')."""
    found = {x.code: x.message for x in predict(facts(gpu=gpu), INSIDE).findings}
    assert found["domain-platform"].startswith(f"{kind}: gpu:vllm was calibrated on NVIDIA (CUDA)")
    assert found["domain-gpu"].startswith(f"no kernel tables at all: {gpu}'s datasheet FLOP/s taken at full rate")


def test_a_trtllm_batch_beyond_the_runs_names_its_untimed_response_path() -> None:
    # trtllm-serve builds every streamed response in its one server process (predict._trtllm.RESPONSE_PATH_NOTE): a
    # TensorRT-LLM burst beyond gpu:trtllm's largest calibrated batch says so in its batch finding, vLLM's does not
    from launchcard.predict._trtllm import RESPONSE_PATH_NOTE

    w = Workload(isl=1024, osl=128, rate=float("inf"), num_requests=1000)
    s = Settings(max_model_len=16384)
    arch = arch_from_config(dict(LLAMA8B))
    acc = find("h200")
    trt = facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                 engine="trtllm")
    d = coefficients("gpu", "trtllm").domain
    assert d is not None
    p = predict(trt, w)
    assert p.max_running > d.batch_max
    msg = next(x.message for x in p.findings if x.code == "domain-batch")
    assert msg.endswith(RESPONSE_PATH_NOTE) and "--num_postprocess_workers 0" in msg
    vllm = predict(facts(gpu="h200", max_num_seqs=1024), w)
    assert RESPONSE_PATH_NOTE not in next(x.message for x in vllm.findings if x.code == "domain-batch")
    # inside the calibrated batches no batch finding, so no note either
    assert all(RESPONSE_PATH_NOTE not in x.message for x in predict(trt, INSIDE).findings)


def test_trtllm_names_the_share_its_experts_are_timed_at_for_the_split() -> None:
    """TensorRT-LLM's routed experts take the share its fused MoE's rows reach at their N per rank: DeepSeek-R1 on
    eight H200s with each expert split 8-way (trtllm-serve's default MoE TP) against 8-way expert parallelism; the
    finding names the split, the N, the share and the table, and the split MoE step is the slower one."""
    cfg = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs"
    cfg = cfg / "deepseek-ai--DeepSeek-R1_config.json"
    out = {}
    for name, cmd in (("tp", "trtllm-serve x --tp_size 8"), ("ep", "trtllm-serve x --tp_size 8 --ep_size 8")):
        res = run_cli("predict", "--config", str(cfg), "--gpu", "h200", "--isl", "1024", "--osl", "256",
                      "--concurrency", "256", "--engine-version", "1.0.0", "--command", cmd, "--json")
        assert res.returncode == 0, res.stderr
        out[name] = json.loads(res.stdout)
    said = {k: [f["message"] for f in v["findings"] if f["code"] == "moe-split"] for k, v in out.items()}
    assert len(said["tp"]) == 1 and "each expert split 8-way: N 256 per rank" in said["tp"][0]
    assert len(said["ep"]) == 1 and "8-way expert parallel: N 2048 per rank" in said["ep"][0]
    assert "h200_sxm/moe/trtllm" in said["tp"][0]
    assert out["tp"]["tpot_ms_mean"] > out["ep"]["tpot_ms_mean"]
