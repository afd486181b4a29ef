"""Accelerator catalog: device memory as the framework reports it, not the label.

vLLM multiplies ``--gpu-memory-utilization`` by the *reported* total (an "80 GB"
H100 reports 79.19 GiB), so the catalog stores that figure in GiB and keeps the
marketing number separately in decimal GB.  Names are matched loosely because
users type "H100", "NVIDIA H100 80GB HBM3" or the recipes' profile key "h100".
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from launchcard.errors import InputError


@dataclass(frozen=True)
class Gpu:
    key: str
    display_name: str
    vendor: str
    memory_gib: float  # as reported by the device (GiB = 2**30 bytes)
    memory_gb_nominal: float  # marketing figure (GB = 10**9 bytes)
    bandwidth_tbps: float | None
    bf16_tflops: float | None
    fp8_tflops: float | None
    fp4_tflops: float | None
    interconnect: str
    compute_capability: str
    aliases: tuple[str, ...] = ()
    note: str | None = None

    @property
    def is_cpu(self) -> bool:
        return self.compute_capability == "cpu"

    @property
    def supports_fp8(self) -> bool:
        return self.fp8_tflops is not None

    @property
    def supports_fp4(self) -> bool:
        return self.fp4_tflops is not None


@dataclass(frozen=True)
class Catalog:
    gpus: tuple[Gpu, ...]
    profiles: dict[str, tuple[str, int]]  # taxonomy profile -> (gpu key, gpus per node)

    def by_key(self, key: str) -> Gpu:
        return next(g for g in self.gpus if g.key == key)


def _norm(name: str) -> str:
    text = name.lower()
    text = re.sub(r"\(.*?\)", " ", text)  # "(g6e.12xlarge)", "(DGX Spark, ...)"
    text = re.sub(r"\b(nvidia|geforce|amd|instinct|tesla)\b", " ", text)
    return re.sub(r"[^a-z0-9]+", " ", text).strip()


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    raw = json.loads(resources.files("launchcard.data").joinpath("gpus.json").read_text("utf-8"))
    gpus = tuple(
        Gpu(
            key=g["key"],
            display_name=g["display_name"],
            vendor=g["vendor"],
            memory_gib=float(g["memory_gib"]),
            memory_gb_nominal=float(g["memory_gb_nominal"]),
            bandwidth_tbps=g.get("bandwidth_tbps"),
            bf16_tflops=g.get("bf16_tflops"),
            fp8_tflops=g.get("fp8_tflops"),
            fp4_tflops=g.get("fp4_tflops"),
            interconnect=g.get("interconnect", ""),
            compute_capability=str(g.get("compute_capability", "")),
            aliases=tuple(g.get("aliases", ())),
            note=g.get("note"),
        )
        for g in raw["gpus"]
    )
    profiles = {k: (v[0], int(v[1])) for k, v in raw.get("profiles", {}).items()}
    return Catalog(gpus=gpus, profiles=profiles)


def gpus_per_node(profile: str) -> int | None:
    """GPUs in one node of a recipes hardware profile (``h100`` -> 8)."""
    entry = load_catalog().profiles.get(profile.strip().lower())
    return entry[1] if entry else None


def find_gpu(name: str, *, where: str = "--gpu") -> Gpu:
    """Resolve a GPU by key, profile, alias or a device string such as
    ``NVIDIA H100 80GB HBM3``.  Unknown names raise with the closest matches."""
    cat = load_catalog()
    raw = name.strip()
    low = raw.lower()
    if low in cat.profiles:
        return cat.by_key(cat.profiles[low][0])
    for g in cat.gpus:
        if low == g.key:
            return g
    want = _norm(raw)
    names: dict[str, Gpu] = {}
    for g in cat.gpus:
        for n in (g.key.replace("_", " "), _norm(g.display_name), *(_norm(a) for a in g.aliases)):
            names[n] = g
    if want in names:
        return names[want]
    # Longest catalog name contained in the device string wins, so
    # "h100 80gb hbm3" beats "h100" and "a100 40gb" beats "a100".
    tokens = f" {want} "
    hits = sorted((n for n in names if f" {n} " in tokens), key=len, reverse=True)
    if hits:
        return names[hits[0]]
    close = difflib.get_close_matches(want, list(names), n=4, cutoff=0.5)
    keys = sorted({names[c].key for c in close}) or sorted(g.key for g in cat.gpus)[:6]
    raise InputError(
        f"unknown GPU name ({raw!r})",
        where=where,
        fix=f"close matches: {', '.join(keys)}; or give --gpu-memory-gib",
    )
