"""NCCL's own cost model of a collective on one node without GPU peer access (predict._nccl), and the step cost that
times every tensor-parallel collective of such a plan by it (figures from NCCL v2.26.2-1 src/graph/tuning.cc,
search.cc, topo.cc; the SHM share from NVIDIA/nccl issue #384)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, ServingFacts, facts_from_memory_plan, step_work
from launchcard.predict._coef import coefficients, theta
from launchcard.predict._cost import features, step_terms
from launchcard.predict._nccl import (
    SHM_CALL_MEASURED_BYTES,
    SHM_CALL_MEASURED_US,
    all_gather_model,
    all_reduce_model,
    pci_ring,
    shm_call_extra_us,
    shm_share,
)

QWEN2_7B = Path(__file__).parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen2-7B-Instruct_config.json"


def qwen(tp: int = 2, *, p2p: bool = False, engine: str = "vllm") -> ServingFacts:
    arch = arch_from_config(json.loads(QWEN2_7B.read_text(encoding="utf-8")))
    s = Settings(max_model_len=16384, tp=tp, vllm_version="0.10.1.1")
    acc = find("a100_80gb")
    hw = HardwareFigures.from_accelerator(acc)
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), hw if p2p else hw.without_p2p(),
                                  engine=engine)


def test_nccls_figure_of_a_pcie_link_and_its_ring_search() -> None:
    """topo.cc L409/L476: x16 Gen3 12, Gen4 24, Gen5 48 GB/s; search.cc: an Intel host's x6/5 PCIe overhead leaves
    one 20 GB/s channel on Gen4 (the next speed, 18, fits no second one; 10 x 2 is no more), an AMD host two of 12."""
    assert [pci_ring(2, bps, "8.0").link_gbs for bps in (16e9, 32e9, 64e9)] == [12.0, 24.0, 48.0]
    intel, amd = pci_ring(2, 32e9, "8.0"), pci_ring(2, 32e9, "8.0", intel=False)
    assert (intel.channels, intel.speed) == (1, 20.0) and (amd.channels, amd.speed) == (2, 12.0)
    assert (pci_ring(2, 16e9, "7.0").channels, pci_ring(2, 16e9, "7.0").speed) == (1, 10.0)
    # 25 GB/s and more per channel: doubled at half the speed (search.cc L898-911), the bus the same
    gen5 = pci_ring(2, 64e9, "8.0")
    assert (gen5.channels, gen5.speed, gen5.bus_gbs) == (2, 20.0, 40.0)


def test_nccls_all_reduce_model_on_two_gpus_over_pci() -> None:
    """tuning.cc: ring LL 6.6 + 2 x 1.0 us at half the bus bandwidth, ring Simple 8.4 + 2 x 5.7 us at all of it
    (n / 2(n-1) = 1 for two ranks); the least of latency + bytes / bandwidth: LL for small calls, Simple for big."""
    m = all_reduce_model(pci_ring(2, 32e9, "8.0"))
    got = {name: (lat, bw) for name, lat, bw, _fix in m.choices}
    assert got["ring/LL"] == pytest.approx((8.6, 10.0)) and got["ring/Simple"] == pytest.approx((19.8, 20.0))
    assert m.pick(8 * 1024) == "ring/LL" and m.pick(1 << 20) == "ring/Simple"
    assert m.seconds(1 << 20) == pytest.approx((19.8 + (1 << 20) / 20e3) * 1e-6)
    assert m.seconds(8 * 1024) == pytest.approx((8.6 + 8 * 1024 / 10e3) * 1e-6)
    assert m.seconds(0) == 0.0
    # an all-gather's ring has n-1 steps and moves the gathered output at n/(n-1) x the bus bandwidth
    g = {name: (lat, bw) for name, lat, bw, _fix in all_gather_model(pci_ring(2, 32e9, "8.0")).choices}
    assert g["ring/Simple"] == pytest.approx((8.4 + 5.7, 40.0))


def test_the_shm_share_is_ncclss_published_run_over_its_own_model() -> None:
    """Issue #384: 2 GPUs over SHM on PCIe Gen3 x16, one channel: all-reduce 3.9 GB/s, all-gather 3.17 GB/s of bus
    bandwidth, where the model's ring on that link is one channel of 10 GB/s (Intel host)."""
    assert shm_share("all_reduce") == pytest.approx(0.39) and shm_share("all_gather") == pytest.approx(0.317)
    full, shared = (all_reduce_model(pci_ring(2, 32e9, "8.0"), s) for s in (1.0, shm_share("all_reduce")))
    big = 14 * (1 << 20)  # a 2,048-token prefill chunk of a 3,584-wide model in bf16
    assert shared.seconds(big) - 19.8e-6 == pytest.approx((full.seconds(big) - 19.8e-6) / 0.39)
    # the host's CPU, which NCCL's ring search depends on (Intel 1 x 20, AMD 2 x 12 GB/s), does not move the time:
    # the published share is taken against the same host's model of the published platform
    amd = all_reduce_model(pci_ring(2, 32e9, "8.0", intel=False), shm_share("all_reduce", intel=False))
    for size in (7168, 716800, big):
        assert amd.seconds(size) == pytest.approx(shared.seconds(size), rel=1e-9)
    # NCCL picks by its own model (LL up to ~224 KB on this path), whatever the path then reaches: a 128 KB call
    # stays LL at the share, though Simple at the share would be faster
    mid = 128 * 1024
    assert shared.pick(mid) == full.pick(mid) == "ring/LL"
    assert shared.seconds(mid) == pytest.approx((8.6 + mid / (10e3 * 0.39)) * 1e-6)
    assert shared.seconds(mid) > (19.8 + mid / (20e3 * 0.39)) * 1e-6


def test_nccls_model_of_the_same_call_over_nvlink_is_its_peer_latency() -> None:
    """tuning.cc L131/L135: the PCI hop costs 1.0 us against NVLink's 0.6 for LL (ring and tree), 5.7 against 3.4 for
    the ring's Simple, 4.0 both for the tree's; the base latency is the same.  beyond_peer is a call's time less its
    latency over NVLink: 2 hops x 0.4 us plus the bytes for a small all-reduce on 2 GPUs, 2 x 2.3 us plus the bytes
    for a big one (ring Simple)."""
    m = all_reduce_model(pci_ring(2, 32e9, "8.0"))
    assert m.peer_lat == pytest.approx((7.8, 15.2, 8.0, 16.4))
    small, big = 8 * 1024, 1 << 20
    assert m.beyond_peer(small) == pytest.approx((0.8 + small / 10e3) * 1e-6)
    assert m.beyond_peer(big) == pytest.approx((4.6 + big / 20e3) * 1e-6)
    assert m.seconds(small) - m.beyond_peer(small) == pytest.approx(7.8e-6)
    assert m.beyond_peer(0) == 0.0
    # an all-gather's ring: n-1 hops (one on 2 GPUs)
    g = all_gather_model(pci_ring(2, 32e9, "8.0"))
    assert g.peer_lat == pytest.approx((7.2, 11.8))
    assert g.seconds(4096) - g.beyond_peer(4096) == pytest.approx(7.2e-6)


def test_a_call_through_host_memory_takes_the_measured_latency_beyond_ncclss_model() -> None:
    """sglang PR #39605: a 10 KB all-reduce on 2 RTX 5070 Ti over SHM (PCIe 4.0 x16) took 39 us a call in a served
    decode step, where NCCL's model of it (ring/LL, 8.6 us + the bytes at the SHM share) is 11.2 us: the 27.8 us
    between is added to every call, on any host's model (as the SHM share is), and moves no pick of NCCL's."""
    extra = shm_call_extra_us()
    assert extra == pytest.approx(39.0 - 8.6 - 10240 / (10e3 * 0.39), abs=1e-9)
    assert shm_call_extra_us(intel=False) == pytest.approx(extra, rel=1e-9)
    for intel in (True, False):
        measured = all_reduce_model(pci_ring(2, 32e9, "12.0", intel), shm_share("all_reduce", intel),
                                    shm_call_extra_us(intel))
        assert measured.seconds(SHM_CALL_MEASURED_BYTES) == pytest.approx(SHM_CALL_MEASURED_US * 1e-6, rel=1e-9)
    plain, shm = (all_reduce_model(pci_ring(2, 32e9, "8.0"), shm_share("all_reduce"), x) for x in (0.0, extra))
    for size in (7168, 143360, 1 << 20, 14 * (1 << 20)):
        assert shm.pick(size) == plain.pick(size)
        assert shm.beyond_peer(size) - plain.beyond_peer(size) == pytest.approx(extra * 1e-6, rel=1e-9)
        assert shm.seconds(size) - plain.seconds(size) == pytest.approx(extra * 1e-6, rel=1e-9)
    # the two 4-GPU measurements bracket the per-call figure: over nccl-tests #287's 27.5 us at 8 KB (4 x RTX 5090,
    # Gen5, AMD host), under the 78.6 us decode all-reduce on 4 CMP 170HX over Gen2 x16 (model 16-38 us at 2-16 KB)
    genoa = all_reduce_model(pci_ring(4, 64e9, "12.0", intel=False), shm_share("all_reduce", False), extra)
    assert genoa.seconds(8192) > 27.5e-6
    gen2 = all_reduce_model(pci_ring(4, 8e9, "8.0"), shm_share("all_reduce"), extra)
    assert gen2.seconds(16384) < 78.6e-6


def test_without_p2p_each_tp_collective_is_the_peer_latency_plus_what_ncclss_model_adds() -> None:
    """Qwen2-7B TP 2 on A100s without peer access (the dennislee runs): the 2 x 28 layer all-reduces count as
    collectives at the set's fitted latency, as with peer access; NCCL's SHM model adds, to each of them and to the
    embedding's all-reduce (step tokens x 3,584 x 2 B) and the all-gather of the sampled positions' logits
    (2 x 76,032 x 2 B each), the PCI hops' extra latency and the bytes at the SHM bandwidth, and to each all-reduce
    the latency measured beyond the model; nothing at the set's NVLink-fitted link share."""
    f = qwen()
    ring = pci_ring(2, 32e9, "8.0")
    ar = all_reduce_model(ring, shm_share("all_reduce"), shm_call_extra_us())
    ag = all_gather_model(ring, shm_share("all_gather"))
    assert f.lm_head_params / f.hidden == 76032 and f.layers == 28
    c = coefficients("gpu", "vllm")
    for seqs in (1, 100):
        w = step_work(f, seqs, seqs * 1500.0, 0, 0.0)
        act = seqs * 3584 * 2
        assert w.comm == 0.0 and w.collectives == 56
        assert w.comm_fixed == pytest.approx(57 * ar.beyond_peer(act) + ag.beyond_peer(seqs * 2 * 76032 * 2),
                                             rel=1e-12)
        assert step_terms(w, c, True)[2] == pytest.approx(w.comm_fixed + 56 * c.collective_us * 1e-6, rel=1e-12)
        # features . theta stays the step time with the NCCL-timed part in it
        assert sum(x * t for x, t in zip(features(w, c, True), theta(c), strict=True)) == pytest.approx(
            sum(step_terms(w, c, True)), rel=1e-9)
    # a 2,048-token prefill chunk: 57 all-reduces of 14.7 MB at 0.39 x 20 GB/s, about 2 ms each
    pf = step_work(f, 0, 0.0, 2048, 2048 * 1024.0)
    assert pf.comm_fixed == pytest.approx(57 * ar.beyond_peer(2048 * 3584 * 2) + ag.beyond_peer(2 * 76032 * 2),
                                          rel=1e-12)
    assert 0.1 < pf.comm_fixed < 0.13
    # another engine: the layers' all-reduces only (vLLM's embedding and logits rules are not claimed for it)
    sg = step_work(qwen(engine="sglang"), 100, 150000.0, 0, 0.0)
    assert sg.comm_fixed == pytest.approx(56 * ar.beyond_peer(100 * 3584 * 2), rel=1e-12) and sg.collectives == 56


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_a_collective_through_host_memory_is_never_faster_than_over_nvlink(engine: str) -> None:
    """The same plan's step on the same A100s with and without peer access, from one sequence to a prefill chunk:
    without it each collective goes through host memory over PCIe, so the step's communication is never shorter.
    (Timed by NCCL's model alone, a 1-sequence step's all-reduce took 10.4 us without peer access, under the 13.2 us
    the vLLM set fitted for one with NVLink.)"""
    c = coefficients("gpu", engine)
    with_p2p, without = qwen(p2p=True, engine=engine), qwen(engine=engine)
    for dec, pf in ((1, 0), (8, 0), (64, 0), (256, 0), (0, 2048), (16, 512)):
        args = (dec, dec * 1500.0, pf, pf * (pf + 1) / 2)
        nv, shm = step_work(with_p2p, *args), step_work(without, *args)
        assert step_terms(shm, c, True)[2] > step_terms(nv, c, True)[2], (dec, pf)


def test_with_peer_access_the_fitted_path_is_unchanged() -> None:
    """NVLink (peer access): the ring over the link at the set's share and latency, nothing NCCL-timed."""
    nv = qwen(p2p=True)
    w = step_work(nv, 64, 64 * 1000.0, 0, 0.0)
    act = 64 * 3584 * 2
    assert w.comm_fixed == 0.0 and w.collectives == 56
    assert w.comm == pytest.approx(56 * act / 300e9, rel=1e-12)
    assert step_work(qwen(1), 64, 64000.0, 0, 0.0).comm_fixed == 0.0  # one GPU: no collective


def test_the_no_p2p_finding_names_ncclss_model_and_the_shm_share() -> None:
    said = [x for x in qwen().findings if x.code == "gpu-p2p"]
    assert len(said) == 1 and said[0].severity == "assumed"
    msg = said[0].message
    for part in ("custom_all_reduce.py L147", "NCCL 2.26.2", "tuning.cc", "1 x 20 GB/s", "nccl/issues/384",
                 "all-reduce 0.39", "logits all-gather", "27.8 us a call through host memory", "sglang/pull/39605",
                 "39 us on 2 RTX 5070 Ti", "where the model says 11.2;"):
        assert part in msg, part
