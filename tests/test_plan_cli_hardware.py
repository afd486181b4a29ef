"""`launchcard plan` takes predict's hardware options (--mxfp4-backend, --no-gpu-p2p, --hardware-figures) with the
same meaning and the same one-line refusals: one declaration and one reader in cli/_options.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from config_support import LLAMA8B
from helpers import run_cli

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
GPT_OSS = SHARED / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json"
LOAD = ("--isl", "1024", "--osl", "128", "--concurrency", "8", "--num-requests", "16", "--max-num-seqs", "16",
        "--json")


def _tpot(doc: dict[str, object]) -> dict[str, float]:
    """Each predicted plan's mean TPOT by its label."""
    rows = doc["outcomes"]
    assert isinstance(rows, list)
    return {r["label"]: r["figures"]["tpot_ms_mean"] for r in rows if r.get("figures")}


def _llama(tmp_path: Path) -> Path:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(LLAMA8B), encoding="utf-8")
    return cfg


@pytest.mark.skipif(not GPT_OSS.is_file(), reason="needs the shared corpus")
def test_plan_times_the_mxfp4_kernel_the_user_says_runs() -> None:
    """vLLM 0.11 on Hopper runs gpt-oss's MXFP4 experts on Marlin by default; --mxfp4-backend triton times every
    searched plan with the Triton kernel as predict does, and the plans of the two differ."""
    base = ("plan", "openai/gpt-oss-120b", "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "2", "--slo",
            "tpot=500", "--engine-version", "0.11.2", *LOAD)
    marlin, triton = run_cli(*base), run_cli(*base, "--mxfp4-backend", "triton")
    assert marlin.returncode == triton.returncode == 0, marlin.stderr + triton.stderr
    a, b = _tpot(json.loads(marlin.stdout)), _tpot(json.loads(triton.stdout))
    assert a.keys() == b.keys() and a and any(a[k] != b[k] for k in a)


def test_plan_without_gpu_p2p_times_collectives_over_the_host_link(tmp_path: Path) -> None:
    """--no-gpu-p2p: a TP 2 plan's collectives cross PCIe through host memory, slower than NVLink; two TP 1
    replicas (DP 2) exchange nothing and are unchanged."""
    base = ("plan", "llama-8b", "--config", str(_llama(tmp_path)), "--gpu", "a100_80gb", "--gpus", "2",
            "--gpus-per-node", "8", "--slo", "tpot=500", *LOAD)
    nv, host = run_cli(*base), run_cli(*base, "--no-gpu-p2p")
    assert nv.returncode == host.returncode == 0, nv.stderr + host.stderr
    a, b = _tpot(json.loads(nv.stdout)), _tpot(json.loads(host.stdout))
    tp2 = [k for k in a if "TP2" in k]
    dp2 = [k for k in a if "TP1 DP2" in k]
    assert tp2 and dp2 and all(b[k] > a[k] for k in tp2) and all(b[k] == a[k] for k in dp2)


def test_plan_times_against_measured_hardware_figures(tmp_path: Path) -> None:
    """--hardware-figures replaces the catalog's bandwidth and FLOP/s of --gpu (which still names the node):
    half the A100's memory bandwidth makes every decode step slower."""
    figs = tmp_path / "figs.json"
    figs.write_text(json.dumps({"id": "slow-a100", "kind": "gpu", "bandwidth_gbs": 1000,
                                "tflops": {"bf16": 312, "fp16": 312, "fp32": 19.5}, "method": "test"}),
                    encoding="utf-8")
    base = ("plan", "llama-8b", "--config", str(_llama(tmp_path)), "--gpu", "a100_80gb", "--gpus", "1",
            "--slo", "tpot=500", *LOAD)
    cat, mine = run_cli(*base), run_cli(*base, "--hardware-figures", str(figs))
    assert cat.returncode == mine.returncode == 0, cat.stderr + mine.stderr
    a, b = _tpot(json.loads(cat.stdout)), _tpot(json.loads(mine.stdout))
    assert a.keys() == b.keys() and a and all(b[k] > a[k] for k in a)


@pytest.mark.parametrize(("extra", "option", "words"), [
    (("--mxfp4-backend", "cutlass"), "--mxfp4-backend", "unknown MXFP4"),
    (("--hardware-figures", "/nonexistent/figs.json"), "/nonexistent/figs.json", "hardware figures"),
    (("--gpu", "b200", "--no-gpu-p2p"), "--no-gpu-p2p", "host link"),
    (("--engine", "sglang", "--mxfp4-backend", "triton"), "--mxfp4-backend", "SGLang"),
])
def test_plan_refuses_bad_hardware_options_as_predict_does(tmp_path: Path, extra: tuple[str, ...], option: str,
                                                           words: str) -> None:
    given = dict(zip(extra[::2], extra[1::2], strict=False))
    argv = ["plan", "llama-8b", "--config", str(_llama(tmp_path)), "--gpu", given.pop("--gpu", "a100_80gb"),
            "--gpus", "2", "--gpus-per-node", "8", "--slo", "tpot=500", *LOAD,
            *[x for x in extra if x not in ("--gpu", "b200")]]
    res = run_cli(*argv)
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert res.returncode == 2 and len(lines) == 1 and "Traceback" not in res.stderr, res.stdout + res.stderr
    assert option in lines[0] and words in lines[0]
    # predict says the same line of the same value
    if option != "--no-gpu-p2p" or "b200" in extra:
        p_extra = [x for x in extra if x not in ("--gpu", "b200")]
        p = run_cli("predict", "--config", str(_llama(tmp_path)), "--gpu", "b200" if "b200" in extra else "a100_80gb",
                    "--gpus-per-node", "8", "--tp", "2", *p_extra)
        assert p.returncode == 2 and words in p.stderr


def test_plan_says_an_mxfp4_backend_has_no_effect_on_a_checkpoint_without_mxfp4_experts(tmp_path: Path) -> None:
    """vLLM reads VLLM_MXFP4_USE_MARLIN in its MXFP4 method alone (mxfp4.py 0.12.0 L99, L161): on a BF16 dense
    checkpoint --mxfp4-backend changes nothing, and plan says so in predict's words instead of dropping it; the
    plans are those searched without it."""
    base = ("plan", "llama-8b", "--config", str(_llama(tmp_path)), "--gpu", "h100", "--gpus", "1", "--slo",
            "tpot=500", *LOAD)
    plain, said = run_cli(*base), run_cli(*base, "--mxfp4-backend", "marlin")
    assert plain.returncode == said.returncode == 0, plain.stderr + said.stderr
    doc, ref = json.loads(said.stdout), json.loads(plain.stdout)
    words = ("MXFP4 MoE backend marlin (--mxfp4-backend or VLLM_MXFP4_USE_MARLIN) has no effect: the checkpoint "
             "has no MXFP4 experts")
    assert [f for f in doc["findings"] if words in f] == [f"checkpoint: {words}"]
    assert not any("MXFP4" in f for f in ref["findings"]) and _tpot(doc) == _tpot(ref)
    one = run_cli("predict", "--config", str(_llama(tmp_path)), "--gpu", "h100", "--isl", "64", "--osl", "8",
                  "--concurrency", "1", "--mxfp4-backend", "marlin")
    assert one.returncode == 0 and words in one.stdout


def test_a_cpu_profile_is_refused_naming_the_option_plan_takes() -> None:
    """`plan --gpu xeon6` said `--hardware: 'xeon6' is a CPU profile` (resolve's option, which plan has not)."""
    cfg = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    res = run_cli("plan", "Qwen/Qwen3-8B", "--config", str(cfg), "--gpu", "xeon6", "--gpus", "1", "--slo", "tpot=20",
                  "--concurrency", "4")
    line = res.stderr.strip()
    assert res.returncode == 2 and "\n" not in line, res.stdout + res.stderr
    assert line.startswith("launchcard: error: --gpu: 'xeon6' is a CPU profile"), line


def test_a_bad_prefill_chunk_is_named_by_the_value_typed() -> None:
    """`plan --engine sglang --chunked-prefill-size 0` said "positive token counts ((0,))": the option's tuple."""
    cfg = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    res = run_cli("plan", "Qwen/Qwen3-8B", "--config", str(cfg), "--gpu", "h100", "--gpus", "2", "--slo", "tpot=50",
                  "--concurrency", "4", "--engine", "sglang", "--chunked-prefill-size", "4096",
                  "--chunked-prefill-size", "0")
    assert res.returncode == 2 and "positive token counts (0);" in res.stderr, res.stderr


def test_plan_and_predict_count_mxfp4_experts_by_the_format_planned(tmp_path: Path) -> None:
    """``--quantization mxfp4`` on a 16-bit MoE checkpoint runs MXFP4 experts (memory.effective_quant plans the
    format): plan said --mxfp4-backend had no effect there, reading only the checkpoint's own format, while predict
    chose the experts' kernel with it.  Both ask memory.mxfp4_experts now."""
    from dataclasses import replace

    from launchcard.memory import Settings, arch_from_config, mxfp4_experts
    from launchcard.plansearch import SearchSpace, Slo, checkpoint_option, search
    from launchcard.predict import Workload

    cfg = json.loads(GPT_OSS.read_text(encoding="utf-8"))
    cfg.pop("quantization_config")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    arch = arch_from_config(cfg)
    assert mxfp4_experts(arch, Settings(quantization="mxfp4")) and not mxfp4_experts(arch, Settings())
    words = "has no effect: the checkpoint has no MXFP4 experts"
    plain = checkpoint_option("openai/gpt-oss-120b", str(path))
    for option, said in ((replace(plain, quantization="mxfp4"), False), (plain, True)):
        space = SearchSpace(model="openai/gpt-oss-120b", gpu="h100", gpus=2, gpus_per_node=8, options=(option,),
                            max_num_seqs=(16,), kv_dtypes=("auto",), mxfp4_backend="marlin")
        r = search(space, Workload(isl=256, osl=32, concurrency=4), Slo.parse("tpot=1000"))
        assert any(words in f for f in r.findings) is said, r.findings


@pytest.mark.parametrize(("gpu", "missing"), [("mi350x", "give no FLOP/s"), ("arc_pro_b60", "no memory bandwidth")])
def test_a_gpu_the_catalog_gives_no_figures_for_is_bad_input_before_the_search(tmp_path: Path, gpu: str,
                                                                                 missing: str) -> None:
    """Nothing can be timed on a catalog entry without bandwidth or FLOP/s: plan says so in predict's line, exit 2,
    before searching (it searched, rejected every candidate as 'memory: cannot be planned' and exited 1, the code of
    a plan that fails its check)."""
    cfg = str(_llama(tmp_path))
    res = run_cli("plan", "llama-8b", "--config", cfg, "--gpu", gpu, "--gpus", "2", "--gpus-per-node", "8", "--slo",
                  "tpot=500", *LOAD)
    assert res.returncode == 2 and res.stdout == "", res.stdout
    line = res.stderr.strip()
    assert "\n" not in line and line.startswith("launchcard: error: --gpu: ") and missing in line, line
    one = run_cli("predict", "--config", cfg, "--gpu", gpu, "--gpus-per-node", "8", "--isl", "128", "--osl", "16",
                  "--concurrency", "1")
    assert one.returncode == 2 and one.stderr == res.stderr


def test_plan_says_the_link_rate_its_plans_were_timed_at_as_predict_does(tmp_path: Path) -> None:
    """L4s talk over PCIe and the catalog gives no link figure: predict says collectives were timed at the PCIe 4.0
    x16 rate (finding `link`); plan's TP 2 winner rested on the same assumption without a word."""
    cfg = str(_llama(tmp_path))
    res = run_cli("plan", "llama-8b", "--config", cfg, "--gpu", "l4", "--gpus", "2", "--gpus-per-node", "2",
                  "--slo", "tpot=500", "--kv-cache-dtype", "auto", *LOAD)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    one = run_cli("predict", "--config", cfg, "--gpu", "l4", "--gpus-per-node", "2", "--tp", "2", "--isl", "1024",
                  "--osl", "128", "--concurrency", "8", "--json")
    link = [f["message"] for f in json.loads(one.stdout)["findings"] if f["code"] == "link"]
    assert len(link) == 1 and "PCIe 4.0 x16" in link[0]
    assert any(o["tp"] == 2 and o.get("figures") for o in doc["outcomes"])
    assert doc["findings"].count(link[0]) == 1, doc["findings"]


@pytest.mark.parametrize(("target", "words"), [
    ("kubernetes", "the kubernetes target knows no device mapping for Google accelerators (hardware trillium)"),
    ("docker", "the docker target knows no device mapping for Google accelerators (hardware trillium)"),
    ("truss", "Baseten offers no instance type for hardware 'trillium'"),
])
def test_an_emit_target_that_cannot_request_the_gpu_is_refused_before_the_search(tmp_path: Path, target: str,
                                                                                words: str) -> None:
    """`plan --gpu trillium --emit kubernetes` searched, printed its whole answer and then exited 2 with the
    emitter's refusal (a container target maps NVIDIA and AMD devices only; truss needs a Baseten instance type);
    it is said first, on --emit, with nothing on stdout or in --out; shell still writes the winner."""
    cfg = str(_llama(tmp_path))
    base = ("plan", "llama-8b", "--config", cfg, "--gpu", "trillium", "--gpus", "4", "--gpus-per-node", "4",
            "--slo", "tpot=500", "--isl", "512", "--osl", "64", "--concurrency", "4", "--no-progress")
    res = run_cli(*base, "--emit", target, "--out", str(tmp_path / "out"))
    assert res.returncode == 2 and res.stdout == "" and not (tmp_path / "out").exists(), res.stdout
    [line] = res.stderr.strip().splitlines()
    assert line.startswith("launchcard: error: --emit: ") and words in line, line
    ok = run_cli(*base, "--emit", "shell", "--out", str(tmp_path / "sh"))
    assert ok.returncode == 0 and (tmp_path / "sh" / "launch.sh").is_file(), ok.stderr


def test_out_without_emit_is_refused_before_the_search(tmp_path: Path) -> None:
    """qa12: `plan ... --out DIR` without --emit searched, printed the answer and wrote nothing (exit 0): --out is
    the folder --emit writes into, so alone it is said, as emit says --concurrency without --env."""
    cfg = str(_llama(tmp_path))
    res = run_cli("plan", "llama-8b", "--config", cfg, "--gpu", "h100", "--gpus", "1", "--slo", "tpot=500", "--isl",
                  "512", "--osl", "64", "--concurrency", "4", "--no-progress", "--out", str(tmp_path / "out"))
    assert res.returncode == 2 and res.stdout == "" and not (tmp_path / "out").exists(), res.stdout
    assert res.stderr.startswith("launchcard: error: --out: --out is the folder --emit writes the winner's files into")
    assert res.stderr.count("\n") == 1
