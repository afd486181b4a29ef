"""What the A100 runs without peer-to-peer access showed: collectives through host memory over each GPU's host link
(PCIe), and vLLM 0.10's piecewise decode graphs."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from config_support import LLAMA8B
from helpers import run_cli
from launchcard.errors import InputError
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, ServingFacts, facts_from_memory_plan, step_work


def facts(gpu: str = "a100_80gb", *, p2p: bool = True, **kw: object) -> ServingFacts:
    s = Settings(max_model_len=16384, **kw)  # type: ignore[arg-type]
    arch = arch_from_config(dict(LLAMA8B))
    acc = find(gpu)
    hw = HardwareFigures.from_accelerator(acc)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), hw if p2p else hw.without_p2p())


def test_an_a100s_host_link_is_pcie_gen4_x16_whatever_its_board() -> None:
    """The A100 datasheet prints 'PCIe Gen4: 64GB/s' for the SXM4 and the PCIe board alike; H100/H200: Gen5."""
    for gpu, gbps in (("a100_40gb", 64), ("a100_80gb", 64), ("a100_80gb_pcie", 64), ("h100", 128), ("h200", 128)):
        acc = find(gpu)
        assert acc.link.host_gbps == gbps, gpu
        assert (acc.source("host_link_gbps") or "").startswith("https://"), gpu
        hw = HardwareFigures.from_accelerator(acc)
        assert hw.host_link_bps == gbps * 1e9 / 2 and hw.p2p  # one direction
        assert "host_link_gbps" in dict(hw.sources)


def test_without_p2p_each_all_reduce_goes_through_host_memory() -> None:
    """The figures take the host link; the step's all-reduces keep the set's per-collective latency and leave the
    NVLink-fitted link term for what NCCL's own model of that path adds (tests/test_predict_nccl.py); the rest of
    the step is the same work."""
    nv, host = facts(tp=2), facts(tp=2, p2p=False)
    assert host.hardware.link_bps == 32e9 and not host.hardware.p2p
    assert nv.hardware.link_bps == 300e9  # NVLink 3: 600 GB/s both ways
    w_nv, w_host = (step_work(f, 64, 64 * 1000.0, 0, 0.0) for f in (nv, host))
    assert w_nv.collectives == 2 * 32 and w_nv.comm > 0 and w_nv.comm_fixed == 0.0
    assert w_host.collectives == 2 * 32 and w_host.comm == 0.0 and w_host.comm_fixed > w_nv.comm * 300 / 32
    # everything else of the step is the same work
    assert (w_host.gemm_mem, w_host.attn_mem) == (w_nv.gemm_mem, w_nv.attn_mem)
    found = [x for x in host.findings if x.code == "gpu-p2p"]
    assert len(found) == 1 and found[0].severity == "assumed"
    assert "custom_all_reduce.py L147" in found[0].message and "64 GB/s" in found[0].message
    assert not any(x.code == "gpu-p2p" for x in nv.findings)
    # one GPU has no collective: nothing to say
    assert not any(x.code == "gpu-p2p" for x in facts(p2p=False).findings)


def test_without_p2p_needs_the_host_links_figure() -> None:
    hw = HardwareFigures.from_accelerator(find("b200"))  # NVLink 5; its catalog entry gives no PCIe figure
    with pytest.raises(InputError, match="no host link"):
        hw.without_p2p()
    with pytest.raises(InputError, match="no host link"):
        HardwareFigures.from_accelerator(replace(find("a100_80gb"), link=replace(find("a100_80gb").link,
                                                                                 host_gbps=None))).without_p2p()


def test_cli_no_gpu_p2p_slows_a_tensor_parallel_plan_and_says_why(tmp_path: object) -> None:
    from pathlib import Path

    cfg = Path(str(tmp_path)) / "config.json"
    cfg.write_text(json.dumps(LLAMA8B), encoding="utf-8")
    base = ("predict", "--config", str(cfg), "--gpu", "a100_80gb", "--gpus-per-node", "8", "--tp", "2",
            "--isl", "1000", "--osl", "100",
            "--concurrency", "32", "--num-requests", "64", "--json")
    got = [run_cli(*base, *extra) for extra in ((), ("--no-gpu-p2p",))]
    assert [p.returncode for p in got] == [0, 0], [p.stderr for p in got]
    nv, host = (json.loads(p.stdout) for p in got)
    assert host["tpot_ms_mean"] > nv["tpot_ms_mean"] and host["ttft_ms_mean"] > nv["ttft_ms_mean"]
    assert any(f["code"] == "gpu-p2p" for f in host["findings"])
    bad = run_cli("predict", "--config", str(cfg), "--gpu", "b200", "--tp", "2", "--no-gpu-p2p")
    assert bad.returncode == 2 and "host link" in bad.stderr and "Traceback" not in bad.stderr


def test_vllm_before_0_11_says_its_decode_graphs_are_piecewise() -> None:
    """vLLM 0.10's default cudagraph_mode is PIECEWISE (its start-up log prints mode 1); FULL_AND_PIECEWISE from
    PR #25444 on: the older releases' decode steps are not timed apart, and the prediction says so."""
    old, new = facts(vllm_version="0.10.1.1"), facts(vllm_version="0.11.2")
    said = [x for x in old.findings if x.code == "cuda-graph-mode"]
    assert len(said) == 1 and "PIECEWISE" in said[0].message and "#25444" in said[0].message
    assert not any(x.code == "cuda-graph-mode" for x in new.findings)
    assert not any(x.code == "cuda-graph-mode" for x in facts(vllm_version="0.10.1.1", enforce_eager=True).findings)


def test_a_pcie_card_without_a_link_figure_talks_at_its_generations_x16_rate() -> None:
    """A catalog link 'PCIe 4.0' with no figure was timed at the card's memory bandwidth (864 GB/s on an L40S); it is
    the generation's x16 rate (NVIDIA's datasheets: Gen4 64 GB/s, Gen5 128 GB/s both ways), said as assumed."""
    for gpu, gen, per_dir in (("l40s", "4.0", 32e9), ("l4", "4.0", 32e9), ("rtx_5090", "5.0", 64e9)):
        hw = HardwareFigures.from_accelerator(find(gpu))
        assert find(gpu).link.gbps is None and find(gpu).link.kind.startswith(f"PCIe {gen}")
        assert hw.link_bps == hw.host_link_bps == per_dir and hw.link_assumed == f"PCIe {gen} x16", gpu
    two = facts("l40s", tp=2)
    said = [x for x in two.findings if x.code == "link"]
    assert len(said) == 1 and "64 GB/s" in said[0].message and said[0].severity == "assumed"
    assert not any(x.code == "link" for x in facts("l40s").findings)  # one GPU: no collective
    assert not any(x.code == "link" for x in facts(tp=2).findings)  # a catalog figure (A100's NVLink 3)
    # the all-reduce of 64 decode tokens now crosses PCIe, not the card's own memory
    w = step_work(two, 64, 64 * 1000.0, 0, 0.0)
    act = 64 * two.hidden * two.act_bytes
    assert w.comm == pytest.approx(2 * two.layers * act / 32e9, rel=1e-9)  # ring of 2: 2(g-1)/g = 1
    # without peer access it is the same host link: the no-P2P finding instead of the link one
    host = facts("l40s", tp=2, p2p=False)
    assert [x.code for x in host.findings if x.code in ("link", "gpu-p2p")] == ["gpu-p2p"]
    assert "PCIe 4.0 x16 assumed" in next(x.message for x in host.findings if x.code == "gpu-p2p")


def test_without_p2p_the_network_between_nodes_stays_the_path() -> None:
    """H100 nodes of 8 without peer access: inside a node the host link (PCIe Gen5), between nodes the network."""
    hw = HardwareFigures.from_accelerator(find("h100")).without_p2p()
    assert hw.link_bps == 64e9 and hw.link_domain == 8 and hw.scale_out_bps == 400e9 / 8


def test_fp8_and_fp4_weights_below_sm89_say_vllm_runs_marlin_weight_only() -> None:
    """No FP8/FP4 tensor cores below compute capability 8.9 (A100: 8.0): vLLM's Marlin weight-only kernels."""
    a100, h100 = (facts(gpu, quantization="fp8") for gpu in ("a100_80gb", "h100"))
    said = [x for x in a100.findings if x.code == "weight-only"]
    assert len(said) == 1 and "Marlin" in said[0].message and "#5975" in said[0].message
    assert a100.compute_dtype == "bf16" and h100.compute_dtype == "fp8"
    assert not any(x.code == "weight-only" for x in h100.findings)
    assert not any(x.code == "weight-only" for x in facts().findings)  # bf16 weights
    sgl = facts_from_memory_plan(arch_from_config(dict(LLAMA8B)), Settings(max_model_len=16384, quantization="fp8"),
                                 plan_memory(arch_from_config(dict(LLAMA8B)), Settings(max_model_len=16384,
                                                                                       quantization="fp8"),
                                             gpu=find("a100_80gb")),
                                 HardwareFigures.from_accelerator(find("a100_80gb")), engine="sglang")
    assert not any(x.code == "weight-only" for x in sgl.findings)  # vLLM's rule, not claimed for another engine


def test_no_gpu_p2p_with_hardware_figures_names_that_file(tmp_path: object) -> None:
    """--hardware-figures carries no host link: the error names that option and file, not the catalog's field gpu."""
    from pathlib import Path

    cfg, figs = Path(str(tmp_path)) / "config.json", Path(str(tmp_path)) / "figs.json"
    cfg.write_text(json.dumps(LLAMA8B), encoding="utf-8")
    figs.write_text(json.dumps({"id": "mine", "kind": "gpu", "bandwidth_gbs": 2000, "tflops": {"bf16": 300},
                                "method": "measured"}), encoding="utf-8")
    with pytest.raises(InputError) as err:
        HardwareFigures.from_file(figs).without_p2p(str(figs))
    assert err.value.field == "hardware_figures" and err.value.where == str(figs)
    bad = run_cli("predict", "--config", str(cfg), "--hardware-figures", str(figs), "--tp", "2", "--no-gpu-p2p")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "--hardware-figures" in bad.stderr and "hardware catalog" not in bad.stderr and str(figs) in bad.stderr


def test_an_assumed_pcie_host_link_has_no_datasheet_source() -> None:
    """The L40S's host link is the PCIe 4.0 x16 rate assumed (no link.host_gbps): not sourced to its spec URL."""
    src = dict(HardwareFigures.from_accelerator(find("l40s")).sources)["host_link_gbps"]
    assert src.startswith("assumed") and "PCIe 4.0 x16" in src and "http" not in src
    assert dict(HardwareFigures.from_accelerator(find("h100")).sources)["host_link_gbps"].startswith("https://")


def test_without_p2p_vllm_allocates_no_custom_all_reduce_buffers(tmp_path: object) -> None:
    """vLLM 0.10.1.1 custom_all_reduce.py:146-151 returns before creating its IPC buffers when the GPUs lack peer
    access: the plan's non-torch memory is the figure measured without custom all-reduce, on an NVLink catalog GPU
    too, and its KV pool grows by the difference; one GPU has no all-reduce to drop."""
    from pathlib import Path

    from launchcard.memory._model import NON_TORCH_NVLINK, NON_TORCH_PCIE, NON_TORCH_SINGLE
    from launchcard.predict import serving_facts

    arch = arch_from_config(dict(LLAMA8B))
    s = Settings(tp=2, max_model_len=16384, vllm_version="0.10.1.1")
    nv, host = (plan_memory(arch, replace(s, gpu_p2p=p2p), gpu="a100_80gb") for p2p in (None, False))
    assert nv.breakdown.non_torch_gib == NON_TORCH_NVLINK.value
    assert host.breakdown.non_torch_gib == NON_TORCH_PCIE.value < NON_TORCH_NVLINK.value
    assert host.kv_cache_tokens > nv.kv_cache_tokens
    one = plan_memory(arch, replace(s, tp=1, gpu_p2p=False), gpu="a100_80gb")
    assert one.breakdown.non_torch_gib == NON_TORCH_SINGLE.value
    # predict --no-gpu-p2p plans it: the figures without peer access reach the memory plan
    cfg = Path(str(tmp_path)) / "config.json"
    cfg.write_text(json.dumps(LLAMA8B), encoding="utf-8")
    hw = HardwareFigures.from_accelerator(find("a100_80gb"))
    got = [serving_facts(cfg, s, gpu="a100_80gb", hardware=h) for h in (hw, hw.without_p2p())]
    assert got[1].kv_capacity_tokens > got[0].kv_capacity_tokens
