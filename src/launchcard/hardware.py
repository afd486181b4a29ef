"""The hardware catalog: one typed view of ``data/hardware.yaml``.

Every module that needs to know an accelerator (memory planner, resolve, check,
merge, source adapters, emitters) asks here.  Names resolve *exactly* (case,
separators and vendor words aside) from the catalog id, the display name, any
alias (including the exact names vLLM and torch print, e.g. ``NVIDIA H100 80GB
HBM3``) or a vllm-recipes hardware profile id (``rtx_5090_2x`` -> the RTX 5090,
2 per node); a name is never found inside a longer one, and a name the catalog
marks ambiguous (``a100``) names all its entries.  Free text (documents) is
scanned by :func:`named_in` instead::

    acc = find("NVIDIA H100 80GB HBM3")      # Accelerator(id="h100", memory_gib=79.19, ...)
    find("a100-40")                          # InputError: unknown GPU name ...; close matches: a100_40gb, ...
    catalog().profile("gb200")               # Profile(accelerator=..., per_node=4)
    named_in("Deploy on 8x H200")            # ("h200", 8)

The YAML is converted once, here, into frozen dataclasses and cached (read from its JSON twin,
``data/hardware.json``, while that was made from the same bytes).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from launchcard.datadir import data_path
from launchcard.errors import InputError, SourceError

if TYPE_CHECKING:
    from launchcard.yamlread import LoadedYaml

# Any in this module: hardware.yaml entries as parsed (YAML values of every type).

DATA_FILE = "hardware.yaml"
# the catalog's parsed value as JSON, made from DATA_FILE by ``python scripts/hardware_twin.py`` (derived data:
# read only while its sha256 is that of DATA_FILE's bytes; tests/test_hardware.py fails when it is stale)
TWIN_FILE = "hardware.json"
KINDS = ("gpu", "tpu", "npu", "hpu", "cpu")
MEMORY_BASES = ("torch", "driver", "estimate")
# words dropped before matching: "NVIDIA GeForce RTX 5090" and "rtx 5090" are one name
_VENDOR_WORDS = re.compile(r"\b(nvidia|geforce|amd|instinct|tesla|intel|google|cloud|huawei)\b")


def name_key(name: str) -> str:
    """The exact-match key of a name: lower case, vendor words dropped, separators removed
    (``RTX_4090``, ``rtx 4090`` and ``NVIDIA GeForce RTX-4090`` share ``rtx4090``)."""
    words = re.sub(r"[^a-z0-9]+", " ", name.lower())
    return re.sub(r"\s+", "", _VENDOR_WORDS.sub(" ", words))


def normalize(name: str) -> str:
    """Lower case, vendor words and parenthesised remarks dropped, punctuation to single spaces."""
    text = re.sub(r"\(.*?\)", " ", name.lower())  # "(g6e.12xlarge)", "(DGX Spark, ...)"
    text = _VENDOR_WORDS.sub(" ", text)
    return re.sub(r"[^a-z0-9]+", " ", text).strip()


@dataclass(frozen=True)
class Link:
    """Scale-up interconnect; ``gbps`` is per-device bidirectional GB/s.  ``domain``: devices one scale-up
    fabric joins (8 on an HGX/DGX board, 72 in a GB200 NVL72 rack); ``scale_out_gbit``: each device's network
    to other domains, one direction, Gb/s as NICs are sold (the reference DGX system's); ``host_gbps``: the
    device's own host interface (PCIe), bidirectional GB/s as datasheets print it: what GPU-to-GPU traffic crosses
    when the GPUs have no peer-to-peer access (through host memory)."""

    kind: str
    gbps: float | None = None
    domain: int | None = None
    scale_out_gbit: float | None = None
    host_gbps: float | None = None

    def __str__(self) -> str:
        return f"{self.kind}, {self.gbps:g} GB/s" if self.gbps else self.kind


@dataclass(frozen=True)
class Accelerator:
    """One accelerator model.  ``memory_gib`` is what the runtime reports; ``memory_gb`` the datasheet figure."""

    id: str
    name: str
    vendor: str
    kind: str
    arch: str
    memory_gib: float
    memory_basis: str
    link: Link
    sources: Mapping[str, str] = field(hash=False)
    memory_gb: float | None = None
    bandwidth_tbps: float | None = None
    tflops: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    dtypes: tuple[str, ...] = ()
    compute_capability: str = ""
    form_factor: str | None = None
    tdp_w: float | None = None
    # streaming multiprocessors (compute units) and the boost clock in MHz: the scale of a kernel whose speed follows
    # the SMs' own issue rate rather than the tensor cores' datasheet figure (launchcard.predict._attn_backend)
    sms: int | None = None
    boost_mhz: float | None = None
    baseten: str | None = None
    aliases: tuple[str, ...] = ()
    note: str | None = None

    @property
    def key(self) -> str:
        """The catalog id (the memory planner's historical name for it)."""
        return self.id

    @property
    def is_cpu(self) -> bool:
        return self.kind == "cpu"

    @property
    def supports_fp8(self) -> bool:
        return "fp8" in self.dtypes

    @property
    def supports_fp4(self) -> bool:
        return "fp4" in self.dtypes

    @property
    def interconnect(self) -> str:
        return str(self.link)

    def figures(self) -> dict[str, float]:
        """Every number the entry states, by figure name (``tflops.bf16``, ``link_gbps``, ...)."""
        out: dict[str, float | None] = {"memory_gb": self.memory_gb, "memory_gib": self.memory_gib,
                                        "bandwidth_tbps": self.bandwidth_tbps, "link_gbps": self.link.gbps,
                                        "link_domain": self.link.domain,
                                        "scale_out_gbit": self.link.scale_out_gbit,
                                        "host_link_gbps": self.link.host_gbps,
                                        "tdp_w": self.tdp_w, "sms": self.sms, "boost_mhz": self.boost_mhz}
        out.update({f"tflops.{d}": v for d, v in self.tflops.items()})
        return {k: v for k, v in out.items() if v is not None}

    def source(self, figure: str) -> str | None:
        """URL a figure rests on: its own entry, else the group's (``tflops``), else ``spec``."""
        group = figure.split(".", 1)[0]
        return self.sources.get(figure) or self.sources.get(group) or self.sources.get("spec")

    def names(self) -> tuple[str, ...]:
        """Normalized names that resolve to this entry."""
        return tuple(dict.fromkeys(n for n in (normalize(self.id.replace("_", " ")), normalize(self.name),
                                               *(normalize(a) for a in self.aliases)) if n))


@dataclass(frozen=True)
class Profile:
    """A vllm-recipes hardware profile: which accelerator, how many in one node."""

    id: str
    accelerator: Accelerator
    per_node: int


@dataclass(frozen=True)
class HardwareCatalog:
    accelerators: tuple[Accelerator, ...]
    profiles: Mapping[str, Profile] = field(hash=False)
    k8s_resources: Mapping[str, str] = field(hash=False)  # vendor (lower case) -> Kubernetes extended resource name
    # names that denote several entries (a bare "A100": 40 GB or 80 GB), each with the ids it may mean
    ambiguous: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}), hash=False)

    def get(self, acc_id: str) -> Accelerator:
        for acc in self.accelerators:
            if acc.id == acc_id:
                return acc
        raise KeyError(acc_id)

    def profile(self, profile_id: str) -> Profile | None:
        return self.profiles.get(profile_id.strip().lower())

    @cached_property
    def _index(self) -> dict[str, tuple[Accelerator, ...]]:
        """Exact keys (see :func:`name_key`) -> the entries they name; two or more = an ambiguous name."""
        index: dict[str, list[Accelerator]] = {}
        for acc in self.accelerators:
            written = (acc.id, acc.name, *acc.aliases)
            keys = {name_key(n) for n in written} | {name_key(normalize(n)) for n in written}
            for k in keys - {""}:
                index.setdefault(k, []).append(acc)
        for name, ids in self.ambiguous.items():
            index[name_key(name)] = [self.get(i) for i in ids]
        return {k: tuple(dict.fromkeys(v)) for k, v in index.items()}

    @cached_property
    def _profile_index(self) -> dict[str, Profile]:
        return {name_key(pid): prof for pid, prof in self.profiles.items()}

    def candidates(self, name: str) -> tuple[Accelerator, ...]:
        """Every entry ``name`` denotes exactly: one, none, or several for an ambiguous name (``a100``).

        Exact means the whole name equals an id, alias, display name, runtime device name or recipes
        profile id, ignoring case, separators and vendor words; a name is never matched inside a
        longer one (``a100-40`` is not ``a100``)."""
        for key in dict.fromkeys((name_key(name), name_key(re.sub(r"\(.*?\)", " ", name)))):
            # the whole name first, then without a parenthesised remark ("NVIDIA L40S (g6e.12xlarge)")
            if not key:
                continue
            prof = self._profile_index.get(key)
            if prof is not None:
                return (prof.accelerator,)
            if key in self._index:
                return self._index[key]
        return ()

    def lookup(self, name: str) -> Accelerator | None:
        """The one entry ``name`` denotes exactly, else None (unknown or ambiguous)."""
        hits = self.candidates(name)
        return hits[0] if len(hits) == 1 else None

    def closest(self, name: str, n: int = 4) -> list[str]:
        """Catalog ids whose names are closest to ``name`` (for error messages)."""
        key = name_key(name)
        close = difflib.get_close_matches(key, list(self._index), n=12, cutoff=0.5)
        ids = [a.id for c in close for a in self._index[c]]
        return list(dict.fromkeys(ids))[:n]

    def find(self, name: str, *, where: str = "--gpu") -> Accelerator:
        """Like :meth:`lookup`, but an unknown or ambiguous name is an error naming the closest entries."""
        hits = self.candidates(name)
        if len(hits) == 1:
            return hits[0]
        if hits:
            which = ", ".join(f"{a.id} ({a.memory_gib:g} GiB)" for a in hits)
            raise InputError(f"ambiguous GPU name ({name.strip()!r}): the hardware catalog has {which}",
                             where=where, fix=f"name one of them: {', '.join(a.id for a in hits)}")
        ids = self.closest(name)
        some = "close matches: " + ", ".join(ids) if ids else \
            f"no close match; the catalog's ids include {', '.join(a.id for a in self.accelerators[:6])}"
        raise InputError(f"unknown GPU name ({name.strip()!r}): names must match a catalog id, alias or the "
                         "device name vLLM/torch print", where=where, fix=some)  # a command with another way adds it

    def k8s_resource(self, vendor: str) -> str | None:
        return self.k8s_resources.get(vendor.strip().lower())

    @cached_property
    def _scan(self) -> tuple[re.Pattern[str], re.Pattern[str], dict[str, Accelerator]]:
        # Only model-like names (a digit, 3+ characters, not a bare number) are looked for in prose:
        # "cpu", "v7" or "3090" would match sentences, not hardware.
        words: dict[str, Accelerator] = {}
        for acc in self.accelerators:
            for n in acc.names():
                if len(n.replace(" ", "")) >= 3 and re.search(r"\d", n) and not n.isdigit():
                    words.setdefault(n, acc)
        # normalized names are lower case: the patterns read lower-cased text instead of being compiled with
        # IGNORECASE, which costs ~4x the compile time (~11 ms for ~140 names) on every command that reads prose
        alts = "|".join(r"[\s_-]*".join(map(re.escape, n.split())) for n in sorted(words, key=len, reverse=True))
        name_re = re.compile(rf"(?<![a-z0-9])({alts})(?![a-z0-9])")
        count_re = re.compile(rf"\b(\d+)\s*[x×]\s*(?:nvidia\s+|amd\s+)?({alts})(?![a-z0-9])")
        return name_re, count_re, words

    def named_in(self, text: str) -> tuple[str | None, int | None]:
        """First accelerator named in free text (its id) and a count written like ``8x``."""
        name_re, count_re, words = self._scan
        text = text.lower()
        m = count_re.search(text)
        if m:
            return words[normalize(m.group(2))].id, int(m.group(1))
        m = name_re.search(text)
        return (words[normalize(m.group(1))].id, None) if m else (None, None)


# --- loading (the one place YAML values become typed) ------------------------

def _fail(rule: str, where: str, fix: str) -> SourceError:
    return SourceError(rule, where=where, fix=fix)


def _num(raw: dict[str, Any], key: str, where: str) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise _fail(f"{key} must be a positive number ({value!r})", where, f"fix {key}")
    return float(value)


def _str(raw: dict[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    value = raw.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise _fail(f"{key} must be a non-empty string ({value!r})", where, f"give the entry a {key}")
    return value


def _accelerator(raw: object, where: str) -> Accelerator:
    if not isinstance(raw, dict):
        raise _fail(f"an accelerator must be a mapping ({type(raw).__name__})", where, "write id: ... fields")
    acc_id = _str(raw, "id", where) or ""
    where = f"{where} ({acc_id})"
    kind = _str(raw, "kind", where) or ""
    basis = _str(raw, "memory_basis", where) or ""
    if kind not in KINDS:
        raise _fail(f"unknown kind ({kind!r})", where, f"use one of {', '.join(KINDS)}")
    if basis not in MEMORY_BASES:
        raise _fail(f"unknown memory_basis ({basis!r})", where, f"use one of {', '.join(MEMORY_BASES)}")
    memory_gib = _num(raw, "memory_gib", where)
    if memory_gib is None:
        raise _fail("memory_gib is required", where, "give the memory the runtime reports, in GiB")
    link_raw = raw.get("link") or {}
    if not isinstance(link_raw, dict):
        raise _fail(f"link must be a mapping ({link_raw!r})", where, "write link: {kind: ..., gbps: ...}")
    tflops_raw = raw.get("tflops") or {}
    sources_raw = raw.get("sources") or {}
    if not isinstance(tflops_raw, dict) or not isinstance(sources_raw, dict):
        raise _fail("tflops and sources must be mappings", where, "write them as key: value")
    tflops = {str(d): v for d in tflops_raw if (v := _num(tflops_raw, d, where)) is not None}
    cc = raw.get("compute_capability")
    acc = Accelerator(
        id=acc_id, name=_str(raw, "name", where) or "", vendor=_str(raw, "vendor", where) or "", kind=kind,
        arch=_str(raw, "arch", where) or "", memory_gib=memory_gib, memory_basis=basis,
        link=Link(kind=_str(link_raw, "kind", where) or "", gbps=_num(link_raw, "gbps", where),
                  domain=int(d) if (d := _num(link_raw, "domain", where)) else None,
                  scale_out_gbit=_num(link_raw, "scale_out_gbit", where),
                  host_gbps=_num(link_raw, "host_gbps", where)),
        sources=MappingProxyType({str(k): str(v) for k, v in sources_raw.items()}),
        memory_gb=_num(raw, "memory_gb", where), bandwidth_tbps=_num(raw, "bandwidth_tbps", where),
        tflops=MappingProxyType(tflops), dtypes=tuple(str(d) for d in raw.get("dtypes") or ()),
        compute_capability=str(cc) if cc is not None else "", form_factor=_str(raw, "form_factor", where,
                                                                                required=False),
        tdp_w=_num(raw, "tdp_w", where),
        sms=int(n) if (n := _num(raw, "sms", where)) is not None else None, boost_mhz=_num(raw, "boost_mhz", where),
        baseten=_str(raw, "baseten", where, required=False),
        aliases=tuple(str(a) for a in raw.get("aliases") or ()), note=_str(raw, "note", where, required=False),
    )
    unsourced = [f for f in acc.figures() if not (acc.source(f) or "").startswith(("https://", "http://"))]
    if unsourced:
        raise _fail(f"figures without a source URL ({', '.join(unsourced)})", where,
                    "add a URL under sources (per figure, or spec)")
    return acc


def load_yaml(data: bytes, where: str) -> LoadedYaml:
    """:func:`launchcard.yamlread.load_yaml`, imported when a YAML is parsed: the packaged catalog is read from its
    twin, so a command that only looks an accelerator up never loads the YAML reader."""
    from launchcard.yamlread import load_yaml as parse

    return parse(data, where)


def parse_catalog(data: bytes, where: str = DATA_FILE, *, value: Any = None) -> HardwareCatalog:
    """Build a catalog from the YAML text of a hardware file (``value``: that text already parsed, its twin's)."""
    doc = load_yaml(data, where).value if value is None else value
    if not isinstance(doc, dict) or not isinstance(doc.get("accelerators"), list):
        raise _fail("no accelerators list", where, "write accelerators: [...]")
    accs = tuple(_accelerator(raw, f"{where}: accelerators[{i}]") for i, raw in enumerate(doc["accelerators"]))
    by_id = {a.id: a for a in accs}
    if len(by_id) != len(accs):
        raise _fail("duplicate accelerator id", where, "give every entry its own id")
    profiles: dict[str, Profile] = {}
    for pid, spec in (doc.get("profiles") or {}).items():
        ok = isinstance(spec, list) and len(spec) == 2 and spec[0] in by_id and isinstance(spec[1], int)
        if not ok or spec[1] < 1:
            raise _fail(f"profile {pid} must be [accelerator id, count >= 1] ({spec!r})", where,
                        f"use one of the ids: {', '.join(sorted(by_id))}")
        profiles[str(pid)] = Profile(id=str(pid), accelerator=by_id[spec[0]], per_node=spec[1])
    k8s = {str(v).lower(): str((spec or {}).get("k8s_resource")) for v, spec in (doc.get("vendors") or {}).items()}
    ambiguous: dict[str, tuple[str, ...]] = {}
    for name, ids in (doc.get("ambiguous") or {}).items():
        if not isinstance(ids, list) or len(ids) < 2 or any(i not in by_id for i in ids):
            raise _fail(f"ambiguous name {name} must list two or more accelerator ids ({ids!r})", where,
                        f"use ids from: {', '.join(sorted(by_id))}")
        ambiguous[str(name)] = tuple(str(i) for i in ids)
    return HardwareCatalog(accelerators=accs, profiles=MappingProxyType(profiles),
                           k8s_resources=MappingProxyType(k8s), ambiguous=MappingProxyType(ambiguous))


def twin_document(data: bytes) -> dict[str, Any]:
    """The JSON twin of the hardware YAML ``data`` (``TWIN_FILE``): its parsed value under the sha256 of its bytes.
    Refused (ValueError) when JSON cannot hold the value as the YAML loader returns it."""
    value = load_yaml(data, DATA_FILE).value
    if json.loads(json.dumps(value)) != value:
        raise ValueError(f"{DATA_FILE} holds values JSON cannot keep (non-text keys?): no twin")
    return {"sha256": hashlib.sha256(data).hexdigest(), "catalog": value}


def _twin_value(data: bytes, twin: bytes | None) -> Any:
    """The parsed catalog from the twin when it was made from exactly these YAML bytes, else None (parse the YAML:
    a stale or damaged twin costs speed, never a figure)."""
    if twin is None:
        return None
    try:
        doc = json.loads(twin)
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("sha256") != hashlib.sha256(data).hexdigest():
        return None
    return doc.get("catalog")


@lru_cache(maxsize=1)
def catalog() -> HardwareCatalog:
    """The packaged catalog, loaded once.  Read from its JSON twin when the twin was made from these bytes: composing
    the YAML (PyYAML's import included) was ~25 ms of every hardware-aware command, decoding the twin ~1 ms."""
    data = data_path(DATA_FILE).read_bytes()
    try:
        twin: bytes | None = data_path(TWIN_FILE).read_bytes()
    except OSError:
        twin = None
    return parse_catalog(data, f"launchcard/data/{DATA_FILE}", value=_twin_value(data, twin))


def find(name: str, *, where: str = "--gpu") -> Accelerator:
    """The accelerator ``name`` denotes (id, alias, runtime device name or recipes profile)."""
    return catalog().find(name, where=where)


def lookup(name: str) -> Accelerator | None:
    """The one entry ``name`` denotes exactly; None when unknown or ambiguous."""
    return catalog().lookup(name)


def gpus_per_node(profile: str) -> int | None:
    """Accelerators in one node of a recipes hardware profile (``h100`` -> 8)."""
    prof = catalog().profile(profile)
    return prof.per_node if prof else None


def node_size(name: str, gpus: int, given: int | None = None, *, where: str = "--gpus-per-node",
              fix: str = "pass --gpus-per-node N (GPUs in one node)") -> int:
    """GPUs in one node of ``name`` for a plan of ``gpus`` GPUs: ``given`` (the user's), else the catalog's node
    profile for the name or its accelerator (``h100`` -> 8); one GPU needs no node.  Otherwise an InputError
    naming ``where``: the catalog holds no node size for the accelerator (``l40s``: no recipes profile, a PCIe
    card with no link domain), and a node size taken anyway would be a guess that decides whether the GPUs share
    a scale-up link.  One rule for ``plan``, ``sweep`` and ``predict``'s plan of options (``--config --gpu``)."""
    if given:
        return given
    per = node_profile(name) or (1 if gpus == 1 else None)
    if per is None:
        acc = find(name).id
        raise InputError(f"{gpus} GPUs of {acc}: the hardware catalog has no node profile for {acc}",
                         where=where, fix=fix)
    return per


def node_profile(name: str) -> int | None:
    """GPUs in one node by the catalog's recipes profile for ``name`` or its accelerator (``h100`` -> 8); None
    where it has none (``l40s``)."""
    return gpus_per_node(name) or gpus_per_node(find(name).id)


def named_in(text: str) -> tuple[str | None, int | None]:
    return catalog().named_in(text)


def k8s_resource(vendor: str) -> str | None:
    """Kubernetes extended resource a vendor's device plugin advertises (``amd.com/gpu``)."""
    return catalog().k8s_resource(vendor)


__all__ = ["Accelerator", "HardwareCatalog", "Link", "Profile", "catalog", "find", "gpus_per_node",
           "k8s_resource", "lookup", "name_key", "named_in", "node_profile", "node_size", "normalize", "parse_catalog"]
