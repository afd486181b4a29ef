"""Hardware figures: the datasheet (or measured) bandwidth, FLOP/s and links a step is timed against.

Read once from the hardware catalog (:meth:`HardwareFigures.from_accelerator`) or from a measured figures
file (:meth:`HardwareFigures.from_file`), each figure with where it comes from.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from launchcard.errors import InputError

if TYPE_CHECKING:
    from launchcard.hardware import Accelerator


# bidirectional GB/s of an x16 PCIe link by generation, as NVIDIA's datasheets print them (A100: "PCIe Gen4: 64GB/s",
# H100: "PCIe Gen5: 128GB/s"; each generation doubles the lane rate): the rate of a catalog entry whose link is PCIe
# of a stated generation without a figure (its cards are x16; the finding ``link`` says the lanes are assumed)
PCIE_X16_GBPS = {"3.0": 32.0, "4.0": 64.0, "5.0": 128.0, "6.0": 256.0}
_PCIE_KIND = re.compile(r"PCIe (\d\.0)\b")


# the dtypes a plan's GEMMs fall back to where the hardware has no figure for the weights' own format, in order:
# never a faster format than the weights allow (predict._facts._compute_dtype)
BASE_DTYPES = ("bf16", "fp16", "fp32")


@dataclass(frozen=True, slots=True)
class HardwareFigures:
    """The datasheet (or measured) figures a step is timed against, each with where it comes from."""

    id: str
    kind: str  # gpu | cpu | ...
    bandwidth_bps: float  # bytes/s of device memory
    flops: dict[str, float] = field(hash=False)  # dense FLOP/s per dtype
    link_bps: float | None = None  # per-device scale-up bandwidth, one direction, bytes/s
    sources: tuple[tuple[str, str], ...] = ()  # (figure, URL or method)
    link_domain: int | None = None  # devices the scale-up link joins (None: unknown)
    scale_out_bps: float | None = None  # per-device network between domains, one direction, bytes/s
    # measured microseconds of one small kernel call from Python on the engine's core (CPU: the eager step's
    # per-op dispatch); the host overhead terms fitted at another speed are scaled by it (None: not measured)
    host_op_us: float | None = None
    # the same for the API server's process (its front end: HTTP, tokenizer, streaming), when measured apart
    front_op_us: float | None = None
    # ... for the benchmark client's process (it reads every stream), and for a request's path through the client
    # and the API server together (their CPU time over the share of a core each got, bench/predict_cpu.py)
    client_op_us: float | None = None
    request_op_us: float | None = None
    # measured (rows, factor): a memory-bound weight pass with that many token rows takes factor x the one-row
    # pass (CPU: one core does not hide the extra rows' GEMM and element-wise work under the weight stream);
    # empty: rows are free until the compute roofline (a GPU's datasheet figures)
    decode_rows: tuple[tuple[int, float], ...] = ()
    # measured: a GEMM of ``rows`` token rows reaches rows / (rows + this) of the FLOP/s (a chunk too short to fill
    # the core's blocking); 0: the whole figure at any size
    gemm_half_rows: float = 0.0
    vendor: str | None = None  # the catalog's vendor (NVIDIA, AMD, ...); None: measured figures, not a catalog entry
    arch: str = ""  # the catalog's architecture (hopper, cdna3, cdna4, ...; "": not a catalog entry)
    compute_capability: str = ""  # CUDA "major.minor" ("": not CUDA, or not in the catalog)
    # the device's host interface (PCIe), one direction, bytes/s (None: not in the catalog)
    host_link_bps: float | None = None
    # whether a node's GPUs reach each other's memory (peer-to-peer, over NVLink or PCIe); False: collectives go
    # through host memory over each GPU's host link (:meth:`without_p2p`)
    p2p: bool = True
    # where link_bps is not a catalog figure but the x16 rate of the PCIe generation the catalog names (PCIE_X16_GBPS)
    link_assumed: str | None = None

    @classmethod
    def from_accelerator(cls, acc: Accelerator) -> HardwareFigures:
        if not acc.bandwidth_tbps:
            raise InputError(f"the hardware catalog has no memory bandwidth for {acc.id}",
                             fix="add bandwidth_tbps with its source to data/hardware.yaml, or pass "
                                 "--hardware-figures FILE (measured)", field="gpu")
        srcs = [("bandwidth_tbps", acc.source("bandwidth_tbps") or "")]
        srcs += [(f"tflops.{d}", acc.source(f"tflops.{d}") or "") for d in acc.tflops]
        link = acc.link.gbps * 1e9 / 2 if acc.link.gbps else None  # catalog: bidirectional GB/s
        if link:
            srcs.append(("link_gbps", acc.source("link_gbps") or ""))
        out = acc.link.scale_out_gbit * 1e9 / 8 if acc.link.scale_out_gbit else None
        host = acc.link.host_gbps * 1e9 / 2 if acc.link.host_gbps else None
        # a PCIe card: its GPUs talk over the host interface; no figure: the generation's x16 rate
        gen = _PCIE_KIND.match(acc.link.kind)
        assumed = None
        if gen and gen.group(1) in PCIE_X16_GBPS:
            rate = PCIE_X16_GBPS[gen.group(1)] * 1e9 / 2
            if link is None:
                link, assumed = rate, f"PCIe {gen.group(1)} x16"
            if host is None:  # not a datasheet figure: no source URL, the assumption named instead
                host = rate
                srcs.append(("host_link_gbps", f"assumed: the PCIe {gen.group(1)} x16 rate (no link.host_gbps)"))
        srcs += [(k, acc.source(k) or "") for k, v in (("link_domain", acc.link.domain), ("scale_out_gbit", out),
                                                       ("host_link_gbps", host)) if v and not (
            k == "host_link_gbps" and not acc.link.host_gbps)]
        return cls(id=acc.id, kind=acc.kind, bandwidth_bps=acc.bandwidth_tbps * 1e12,
                   flops={d: v * 1e12 for d, v in acc.tflops.items()}, link_bps=link, sources=tuple(srcs),
                   link_domain=acc.link.domain, scale_out_bps=out, vendor=acc.vendor, arch=acc.arch,
                   compute_capability=acc.compute_capability, host_link_bps=host, link_assumed=assumed)

    def require_flops(self) -> HardwareFigures:
        """These figures, or bad input (exit 2) when they give no FLOP/s of a dtype a plan's GEMMs may be timed in
        (:data:`BASE_DTYPES`): nothing can be timed on them.  The one rule for predict (``_facts._compute_dtype``)
        and plan, which asks it before the search (every candidate would be refused by it alike)."""
        if not any(d in self.flops for d in BASE_DTYPES):
            raise InputError(f"the hardware figures of {self.id} give no FLOP/s",
                             fix="add tflops with a source to data/hardware.yaml or pass --hardware-figures",
                             field="gpu")
        return self

    def without_p2p(self, figures_file: str | None = None) -> HardwareFigures:
        """These figures on a host whose GPUs have no peer-to-peer access to each other (``nvidia-smi topo -p2p r``
        shows NS; vLLM logs "Custom allreduce is disabled because your platform lacks GPU P2P capability"): NCCL
        then moves a collective's data through host memory, each GPU's share over its own host link (PCIe) at once,
        so a collective runs at the host link's rate, whatever NVLink the board has.  ``figures_file``: these
        figures came from --hardware-figures FILE (which carries no host link), not the hardware catalog."""
        if self.host_link_bps is None and figures_file is not None:
            raise InputError(f"the hardware figures file gives no host link (PCIe) figure for {self.id}, so "
                             "collectives without GPU peer-to-peer access cannot be timed", where=figures_file,
                             fix="drop --no-gpu-p2p, or pass --gpu NAME (a catalog GPU with link.host_gbps) instead "
                                 "of --hardware-figures", field="hardware_figures")
        if self.host_link_bps is None:
            raise InputError(f"the hardware catalog has no host link (PCIe) figure for {self.id}, so collectives "
                             "without GPU peer-to-peer access cannot be timed",
                             fix="add link.host_gbps with its source to data/hardware.yaml, or drop --no-gpu-p2p",
                             field="gpu")
        # between nodes the network stays the path (link_domain, scale_out_bps kept): only the scale-up part changes
        return replace(self, link_bps=self.host_link_bps, p2p=False)

    @classmethod
    def from_file(cls, path: str | Path, default_kind: str = "cpu") -> HardwareFigures:
        """Measured figures: ``{"id", "kind", "bandwidth_gbs", "tflops": {dtype: x}, "method"}``; ``default_kind``:
        the kind of a file that gives none (the accelerator ``--gpu`` names; bench/measure_cpu.py's CPU without)."""
        from launchcard.jsonread import read_object

        where = str(path)
        shape = ("write {\"bandwidth_gbs\": X, \"tflops\": {\"fp32\": Y}, \"method\": \"...\"} "
                 "(bench/measure_cpu.py does)")
        # read as every user's JSON file is (one wording: file, line, rule), then its shape
        doc = read_object(path, "hardware figures file", field="hardware_figures", fix=shape)
        missing = [k for k in ("bandwidth_gbs", "tflops") if k not in doc]
        if missing:
            raise InputError(f"not a hardware figures file (no {' or '.join(missing)})", where=where, fix=shape,
                             field="hardware_figures")
        try:
            bw = float(doc["bandwidth_gbs"])
            tf = {str(k): float(v) * 1e12 for k, v in dict(doc["tflops"]).items()}
        except (ValueError, TypeError):
            raise InputError("not a hardware figures file (bandwidth_gbs must be a number, tflops an object of "
                             f"dtype: TFLOP/s; got {doc['bandwidth_gbs']!r}, {doc['tflops']!r})", where=where,
                             fix=shape, field="hardware_figures") from None
        # JSON's NaN and Infinity (and 1e400, which parses as inf) pass a `> 0` test: a NaN bandwidth timed every
        # step at ~0 ms
        if not (math.isfinite(bw) and bw > 0) or not tf or not all(math.isfinite(x) and x > 0 for x in tf.values()):
            raise InputError("bandwidth and FLOP/s must be positive finite numbers", where=where,
                             fix="measure again (bench/measure_cpu.py)", field="hardware_figures")
        from launchcard.hardware import KINDS

        kind = str(doc.get("kind") or default_kind)
        if kind not in KINDS:
            raise InputError(f"unknown kind of accelerator ({kind!r})", where=where,
                             fix=f"write kind: one of {', '.join(KINDS)}", field="hardware_figures")
        method = str(doc.get("method") or where)
        op = doc.get("op_us")
        fop, cop, rop = doc.get("front_op_us"), doc.get("client_op_us"), doc.get("request_op_us")
        for name, v in (("op_us", op), ("front_op_us", fop), ("client_op_us", cop), ("request_op_us", rop)):
            if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise InputError(f"{name} must be a positive number of microseconds ({v!r})", where=where,
                                 fix=f"measure again (bench/measure_cpu.py) or drop {name}", field="hardware_figures")
        rows = doc.get("decode_rows") or {}
        try:
            table = tuple(sorted((int(m), float(x)) for m, x in dict(rows).items()))
        except (TypeError, ValueError):
            table = ()
        if any(m < 1 or not x > 0 for m, x in table) or (table and rows and table[0][0] != 1) or (rows and not table):
            raise InputError(f"decode_rows must map row counts from 1 up to positive factors ({rows!r})", where=where,
                             fix="measure again (bench/measure_cpu.py --config) or drop decode_rows",
                             field="hardware_figures")
        half = doc.get("gemm_half_rows") or 0.0
        if not isinstance(half, (int, float)) or half < 0:
            raise InputError(f"gemm_half_rows must be a number of rows >= 0 ({half!r})", where=where,
                             fix="measure again (bench/measure_cpu.py --config) or drop gemm_half_rows",
                             field="hardware_figures")
        return cls(id=str(doc.get("id") or "measured"), kind=kind, bandwidth_bps=bw * 1e9,
                   flops=tf, link_bps=None, sources=(("bandwidth_gbs", method), ("tflops", method)),
                   host_op_us=float(op) if op is not None else None,
                   front_op_us=float(fop) if fop is not None else None,
                   client_op_us=float(cop) if cop is not None else None,
                   request_op_us=float(rop) if rop is not None else None, decode_rows=table,
                   gemm_half_rows=float(half))
