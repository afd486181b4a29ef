"""NCCL's own cost model of a collective inside one node whose GPUs have no peer-to-peer access.

Without peer access NCCL's transport between two GPUs of a host is SHM: the sender's kernel writes into a buffer in
host memory, the receiver's reads it (``src/transport/shm.cc``: chosen after P2P refuses, ``transport.cc`` L14-16;
the buffer on the receiver's side by default, L70; written and read by the GPUs' own threads, no copy engine, L66),
and the topology routes the pair's traffic through the CPU (``graph/paths.cc`` L630-641), whose path has the
PCIe link's bandwidth (L192: the smaller of the two legs).  NCCL picks the algorithm and protocol of each call by
its tuning model (``graph/tuning.cc``): every (algorithm, protocol) gets a latency and a bandwidth from the path,
and the call takes the one with the least ``latency + bytes / bandwidth`` (``enqueue.cc`` L1697-1709,
``tuning.cc`` L545).  This module is that model for a single node's ring and tree, as release 2.26.2 writes it
(the NCCL that vLLM 0.10.1.1 loads: torch 2.7.1 pins nvidia-nccl-cu12 2.26.2, and its start-up log prints
"vLLM is using nccl==2.26.2").  Every constant names its file and line at tag v2.26.2-1 of NVIDIA/nccl.

It is NCCL's model of the path, not a measurement of it: the model's figures are the ones NCCL ranks its choices
by, and nothing here is fitted.  Its latencies are a ranking's, not a served step's: measured NCCL all-reduces of a
few KB on 2 GPUs sit within ~2.5 us of them (aiconfigurator-core 0.12.0's systems/data/*/comm/nccl tables,
bench/nccl_latency_check.py: A100 SXM NVLink 10.1 us against the model's 7.8, H100/H200 6.3-6.5; L40S PCIe 7.0
against 8.6, 12.4 on 4 GPUs against 12.6), while the per-collective latency fitted on served vLLM steps with peer
access (``collective_us``) was 13.2 us when this was written (data/predict_coefficients.json).  So a step takes
that fitted latency for each collective and this model only for what the path without peer access adds to it
(:meth:`CollectiveModel.beyond_peer`): the longer PCI hops, the bytes at the SHM bandwidth, and the latency a call
through host memory measured beyond the model (:func:`shm_call_extra_us`, all-reduces).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from launchcard.limits import compute_capability as capability

RELEASE = "2.26.2"
SOURCE = "https://github.com/NVIDIA/nccl/blob/v2.26.2-1/src/graph/tuning.cc"

# tuning.cc L120-121: base latency (us) of an algorithm and protocol; LL128 is left out (below)
_BASE_LAT = {("tree", "ll"): 6.8, ("tree", "simple"): 8.4, ("ring", "ll"): 6.6, ("ring", "simple"): 8.4}
# tuning.cc L134-135: latency (us) of one hop over a PCI path (NCCL_HW_PCI: every intra-node path but NVLink, L230)
_PCI_LAT = {("tree", "ll"): 1.0, ("tree", "simple"): 4.0, ("ring", "ll"): 1.0, ("ring", "simple"): 5.7}
# tuning.cc L130-131: the same hop over NVLink (NCCL_HW_NVLINK): what the path with peer access costs per hop
_NVL_LAT = {("tree", "ll"): 0.6, ("tree", "simple"): 4.0, ("ring", "ll"): 0.6, ("ring", "simple"): 3.4}
# tuning.cc L151-155, one node (column N1): LL's bandwidth ceiling by the GPUs' generation (L216, L221)
_LL_MAX_BW = {"volta": 39.0, "ampere": 87.7, "hopper": 141.0, "blackwell": 2 * 141.0}
# tuning.cc L170-174, one node: a tree channel's bandwidth ceiling (L222, L258)
_TREE_MAX_BW = {"volta": 26.5, "ampere": 24.0, "hopper": 38.7, "blackwell": 2 * 38.7}
# tuning.cc L524-527: the tree's bandwidth correction by message size (powers of two from 64 B), LL and Simple rows
_TREE_FIX = {"ll": (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0),
             "simple": (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9)}
# graph/search.cc L913, L918, L923: the per-channel speeds (GB/s) a one-node search tries, by generation
_SPEEDS = {"volta": (40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0),
           "hopper": (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0),
           "blackwell": (90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0)}
_SPEEDS["ampere"] = _SPEEDS["volta"]
# graph/topo.h L34 with search.cc L83-90: GPU traffic through an Intel CPU's root complex costs 6/5 of its bytes on
# the PCIe links (64-byte TLPs); AMD and other hosts: none
INTEL_PCI_OVERHEAD = 6 / 5
# graph/topo.cc L408-411, L476: NCCL's figure of a PCIe link is lanes x (7.5 x GT/s in 100 Mb/s) / 80 GB/s, i.e. 3/4
# of the link's one-way signalling rate (x16: Gen3 12, Gen4 24, Gen5 48 GB/s; topo.h L20 PCI_BW 12 "Gen3 x16")
PCI_FIGURE_SHARE = 0.75


def generation(compute_capability: str) -> str:
    """tuning.cc L216: the column NCCL reads its per-generation figures from (by the lowest compute capability)."""
    major = (capability(compute_capability) or (7, 0))[0]
    return "blackwell" if major >= 10 else "hopper" if major >= 9 else "ampere" if major >= 8 else "volta"


@dataclass(frozen=True, slots=True)
class PciRing:
    """What NCCL's topology search settles on for ``ranks`` GPUs of one node that talk through the CPU: ``channels``
    rings of ``speed`` GB/s each (search.cc ``ncclTopoCompute``), on GPUs of ``gen`` (tuning.cc's columns)."""

    ranks: int
    channels: int
    speed: float
    gen: str
    link_gbs: float  # NCCL's figure of each GPU's PCIe link, GB/s

    @property
    def bus_gbs(self) -> float:
        return self.channels * self.speed


def pci_ring(ranks: int, host_link_bps: float, compute_capability: str, intel: bool = True) -> PciRing:
    """NCCL's ring over GPUs whose host link carries ``host_link_bps`` one way (the x16 rate of the catalog), each
    pair's path through one CPU (the GPUs under one socket: path PHB; across sockets the inter-CPU link may be the
    narrower leg, not modelled).  The search (search.cc L1007-1103, one node, no NIC) starts at the fastest speed of
    the generation's list within the link (L1012), keeps the graph with the most channels x speed
    (L429-433), stops once that fills the link (L1036) or the next speed is under half of the best one (L1082),
    then doubles channels of 25 GB/s and more at half the speed each (L898-911).  A channel's ring uses each GPU's
    link once each way; through an Intel CPU its bytes count 6/5 (L85-88)."""
    gen = generation(compute_capability)
    link = round(host_link_bps / 1e9 * PCI_FIGURE_SHARE, 3)
    over = INTEL_PCI_OVERHEAD if intel else 1.0
    speeds = _SPEEDS[gen]
    i = next((k for k, s in enumerate(speeds) if s <= link), len(speeds) - 1)
    best_n, best_s = 0, 0.0
    while True:
        s = speeds[i]
        n = math.floor(round(link / (s * over), 3))
        if n * s > best_n * best_s:
            best_n, best_s = n, s
        if best_n * best_s >= link or i + 1 >= len(speeds) or (best_s and speeds[i + 1] / best_s <= .49):
            break
        i += 1
    if best_n == 0:  # slower than the list's last speed: one channel at the link's figure (not in NCCL's lists)
        best_n, best_s = 1, link
    if best_s >= 25.0 and not (gen != "ampere" and gen != "volta" and best_s < 50.0 and best_n > 4):
        best_n, best_s = best_n * 2, best_s / 2
    return PciRing(ranks=ranks, channels=best_n, speed=best_s, gen=gen, link_gbs=link)


# NCCL's published behaviour of this path (NVIDIA/nccl issue #384, 2020): nccl-tests on 2 GPUs over SHM
# (NCCL_P2P_DISABLE=1, NCCL_MAX_NCHANNELS=1, NCCL 2.4.8, PCIe Gen3 x16) reached a bus bandwidth of 3.9 GB/s for
# all-reduce and 3.17 GB/s for all-gather, against 10.31 GB/s for broadcast; NCCL's maintainer: "on 2 GPUs,
# Broadcast and Reduce are unidirectional [...] Some components (in particular some CPUs) do not handle
# bidirectional traffic well, and we've seen similar performance differences on our platforms".  The tuning model
# has no term for it (its PCI path is P2P's and SHM's alike); the measured bus bandwidths over the model's own
# figure for that platform (Gen3 x16: 16 GB/s one way) give the share a bidirectional SHM collective reaches.
SHM_MEASURED_BUS_GBS = {"all_reduce": 3.9, "all_gather": 3.17}
SHM_MEASURED_LINK_BPS = 16e9
SHM_SOURCE = "https://github.com/NVIDIA/nccl/issues/384"


def shm_share(kind: str, intel: bool = True) -> float:
    """The share of NCCL's modelled bus bandwidth a bidirectional collective of ``kind`` reached over SHM
    (:data:`SHM_MEASURED_BUS_GBS` over the model's ring for that platform: one channel, 2 GPUs)."""
    return SHM_MEASURED_BUS_GBS[kind] / pci_ring(2, SHM_MEASURED_LINK_BPS, "7.0", intel).bus_gbs


# A small all-reduce over this path measured inside a served decode step (sgl-project/sglang PR #39605, 2026-09-15): two
# RTX 5070 Ti without peer access (PCIe 4.0 x16, NCCL's SHM transport, direct), the 10 KB all-reduce of a one-token
# decode step ([1, 5120] bf16) took 39 us a call (81 us with NCCL_SHM_USE_CUDA_MEMCPY=1).  NCCL's model of that call is
# 11.2 us: its hop latencies (tuning.cc L134-135) are one table for every PCI path, P2P's and SHM's alike, while over
# SHM every buffer a receiver polls is host memory (shm.cc L143-145, L205-209: each protocol's buffer in the receiver's
# host segment, read by its kernel across PCIe; over P2P it is the receiver's own device memory, p2p.cc L444-446), so
# each LL poll is a PCIe read of host memory, which the table has no term for.  The measured call less NCCL's model of
# it is what the path adds to every call beyond the model.  Taken per call, whatever the ranks: the two 4-GPU
# measurements found bracket it (NVIDIA/nccl-tests issue #287, 4 x RTX 5090 on a Genoa host, NCCL 2.26.2, SHM: 27.5 us
# at 8 KB where the model says 13.9, +14; Morrowmake/glm53-flash-cmp170hx-recipe serve.sh at 00508d35: 78.6 us the mean
# decode all-reduce in a vLLM trace on 4 CMP 170HX (A100 dies) on PCIe Gen2 x16, size not stated, where the model gives
# 16-38 us for 2-16 KB), where scaling it by the ring's 2(n-1) hops would put both far over.  Measured on one platform:
# a host whose PCIe reads of memory are faster or slower moves it.
SHM_CALL_MEASURED_US = 39.0
SHM_CALL_MEASURED_BYTES = 5120 * 2  # [1, 5120] bf16: one decode token of the PR's 5,120-wide model
SHM_CALL_MEASURED_LINK_BPS = 32e9  # PCIe 4.0 x16, one way (the catalog's host_gbps 64 both ways)
SHM_CALL_MEASURED_CC = "12.0"  # RTX 5070 Ti (GB203, sm_120)
SHM_CALL_SOURCE = "https://github.com/sgl-project/sglang/pull/39605"


def shm_call_extra_us(intel: bool = True) -> float:
    """Microseconds a call over SHM takes beyond NCCL's model of it: :data:`SHM_CALL_MEASURED_US` less the model's
    time of that call (2 GPUs, that link, the all-reduce's SHM share) on the same host's model, as
    :func:`shm_share` is taken."""
    ring = pci_ring(2, SHM_CALL_MEASURED_LINK_BPS, SHM_CALL_MEASURED_CC, intel)
    model = all_reduce_model(ring, shm_share("all_reduce", intel)).seconds(SHM_CALL_MEASURED_BYTES)
    return SHM_CALL_MEASURED_US - model * 1e6


@dataclass(frozen=True, slots=True)
class CollectiveModel:
    """(latency us, bandwidth GB/s, tree correction row or None) of each (algorithm, protocol) NCCL may pick for one
    kind of collective on a :class:`PciRing`, as its tuning model writes them, and the ``share`` of those bandwidths
    the path reaches (:func:`shm_share`; 1: the model's own).  A call takes what NCCL's model picks (the least
    ``lat + bytes / (1000 bw)``), at the bandwidth the path reaches."""

    choices: tuple[tuple[str, float, float, tuple[float, ...] | None], ...]
    share: float = 1.0
    # microseconds the path adds to every call beyond the model (:func:`shm_call_extra_us`); NCCL picks its choice
    # without it (its model has no such term), so it moves no pick
    path_us: float = 0.0
    # each choice's latency (us) where its hops are NVLink's instead (tuning.cc L130-131): what the same call's
    # latency would be with peer access, by NCCL's own figures; empty: not given
    peer_lat: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        # beyond_peer reads one peer latency per choice: a model built without them is a programming error, said here
        if self.peer_lat and len(self.peer_lat) != len(self.choices):
            raise ValueError(f"CollectiveModel: {len(self.peer_lat)} peer latencies for {len(self.choices)} choices")

    def _best(self, nbytes: float) -> tuple[float, float, str, int]:
        log = (int(nbytes) >> 6).bit_length() - 1  # log2i(nBytes >> 6), tuning.cc L537
        best = (math.inf, 0.0, 1.0, "", -1)
        for i, (name, lat, bw, fix) in enumerate(self.choices):
            if fix is not None and 0 <= log < len(fix):
                bw *= fix[log]
            t = lat + nbytes / (1000.0 * bw)
            if t < best[0]:
                best = (t, lat, bw, name, i)
        return best[1], best[2], best[3], best[4]

    def seconds(self, nbytes: float) -> float:
        """Seconds of one call moving ``nbytes`` (an all-reduce: each rank's buffer; an all-gather: the gathered
        output, NCCL's nBytes, enqueue.cc L1787)."""
        if nbytes <= 0:
            return 0.0
        lat, bw, _name, _i = self._best(nbytes)
        return (lat + self.path_us + nbytes / (1000.0 * bw * self.share)) * 1e-6

    def beyond_peer(self, nbytes: float) -> float:
        """Seconds of one call beyond a call's latency with peer access: the picked choice's latency over this path
        less its latency over NVLink (NCCL's hop figures, the rest of its model the same), plus the bytes at the
        bandwidth this path reaches.  With a latency measured for a call with peer access (a coefficient set's
        per-collective term) this is the call without it: NCCL's model ranks the two paths by these figures, while
        its absolute latency is below what served steps measure (module docstring of launchcard.predict._nccl)."""
        if nbytes <= 0:
            return 0.0
        lat, bw, _name, i = self._best(nbytes)
        if not self.peer_lat:
            raise ValueError("CollectiveModel.beyond_peer needs the choices' latencies with peer access (peer_lat)")
        return (lat - self.peer_lat[i] + self.path_us + nbytes / (1000.0 * bw * self.share)) * 1e-6

    def pick(self, nbytes: float) -> str:
        """The algorithm/protocol NCCL's model picks for ``nbytes``."""
        return self._best(nbytes)[2]


def all_reduce_model(ring: PciRing, share: float = 1.0, path_us: float = 0.0) -> CollectiveModel:
    """tuning.cc for an all-reduce on one node over a PCI path: ring (2(n-1) steps, L234; latency base + steps x
    hop, L324; bandwidth channels x speed, LL half of it under LL's ceiling, L256; bus to algorithm bandwidth n/steps,
    L292) and tree (latency base + 2(n-1) hops, L328-329; bandwidth 0.92 x bus under the per-channel ceiling, L258,
    LL / 3.8 under LL's ceiling, L259; halved, L294; corrected by size, L538).  LL128 is off on paths other than
    NVLink (L429-430); NVLS and CollNet need NVSwitch or a network (L411-419).  The tree's 0.85 for the plain TREE
    pattern (L261) is not applied: one node's search keeps the balanced tree unless it finds none (search.cc
    L1053-1056)."""
    n = ring.ranks
    steps = 2 * (n - 1)
    bus = ring.bus_gbs
    ll_max = _LL_MAX_BW[ring.gen]
    ratio = n / steps
    tree_bus = min(bus * .92, ring.channels * _TREE_MAX_BW[ring.gen])
    hops = (("ring", "ll", steps), ("ring", "simple", steps), ("tree", "ll", 2 * (n - 1)),
            ("tree", "simple", 2 * (n - 1)))
    lat = [_BASE_LAT[a, p] + k * _PCI_LAT[a, p] for a, p, k in hops]
    return CollectiveModel((
        ("ring/LL", lat[0], min(ll_max, bus * .5) * ratio, None),
        ("ring/Simple", lat[1], bus * ratio, None),
        ("tree/LL", lat[2], min(tree_bus / 3.8, ll_max) * .5, _TREE_FIX["ll"]),
        ("tree/Simple", lat[3], tree_bus * .5, _TREE_FIX["simple"]),
    ), share, path_us, tuple(_BASE_LAT[a, p] + k * _NVL_LAT[a, p] for a, p, k in hops))


def all_gather_model(ring: PciRing, share: float = 1.0) -> CollectiveModel:
    """tuning.cc for an all-gather on one node over a PCI path: the ring alone (tree is not an all-gather algorithm,
    L240-242; PAT needs one GPU per node, L182), n-1 steps (L235), bus to algorithm bandwidth n/(n-1) (L292)."""
    n = ring.ranks
    steps = n - 1
    bus = ring.bus_gbs
    ratio = n / steps
    return CollectiveModel((
        ("ring/LL", _BASE_LAT["ring", "ll"] + steps * _PCI_LAT["ring", "ll"],
         min(_LL_MAX_BW[ring.gen], bus * .5) * ratio, None),
        ("ring/Simple", _BASE_LAT["ring", "simple"] + steps * _PCI_LAT["ring", "simple"], bus * ratio, None),
    ), share, peer_lat=tuple(_BASE_LAT["ring", p] + steps * _NVL_LAT["ring", p] for p in ("ll", "simple")))
