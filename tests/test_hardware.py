"""The hardware catalog: names resolve, figures carry sources, recipes profiles map, consumers read it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from launchcard.errors import InputError, SourceError
from launchcard.hardware import catalog, find, k8s_resource, lookup, named_in, normalize, parse_catalog

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
TAXONOMY = SHARED / "corpus" / "vllm-recipes" / "taxonomy.yaml"
GIB_PER_GB = 1e9 / 2**30

# Names vLLM / torch.cuda.get_device_name / rocminfo print, as seen in public logs and issues.
RUNTIME_NAMES = {
    "NVIDIA H100 80GB HBM3": "h100", "NVIDIA H100 PCIe": "h100_pcie", "NVIDIA H100 NVL": "h100_nvl",
    "NVIDIA H200": "h200", "NVIDIA H20": "h20", "NVIDIA H800": "h800", "NVIDIA B200": "b200",
    "NVIDIA GB200": "gb200", "NVIDIA B300": "b300", "NVIDIA GB300": "gb300", "NVIDIA GB10": "gb10",
    "NVIDIA A100-SXM4-80GB": "a100_80gb", "NVIDIA A100-SXM4-40GB": "a100_40gb",
    "NVIDIA A100 80GB PCIe": "a100_80gb_pcie",
    "NVIDIA L40S": "l40s", "NVIDIA L4": "l4", "NVIDIA A10G": "a10g", "NVIDIA L20": "l20", "Tesla T4": "t4",
    "NVIDIA GeForce RTX 4090": "rtx_4090", "NVIDIA GeForce RTX 5090": "rtx_5090",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": "rtx_pro_6000",
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition": "rtx_pro_6000",
    "AMD Instinct MI300X": "mi300x", "AMD Instinct MI308X": "mi308x", "AMD Instinct MI325X": "mi325x",
    "AMD Instinct MI355X": "mi355x", "AMD Instinct MI210": "mi210",
    "NVIDIA A10": "a10", "NVIDIA A100-PCIE-40GB": "a100_40gb_pcie", "NVIDIA GH200 144G HBM3e": "gh200",
}


def _all_names() -> list[tuple[str, str]]:
    out = []
    for acc in catalog().accelerators:
        out += [(acc.id, acc.id), (acc.name, acc.id)] + [(a, acc.id) for a in acc.aliases]
    return out


def _profiles() -> dict[str, dict[str, object]]:
    """hardware_profiles of the recipes taxonomy, read with the project's YAML loader."""
    from launchcard.yamlread import load_yaml

    doc = load_yaml(TAXONOMY.read_bytes(), str(TAXONOMY)).value
    return dict(doc["hardware_profiles"])


@pytest.mark.parametrize("name,acc_id", _all_names())
def test_every_name_and_alias_resolves_to_its_entry_in_any_case(name: str, acc_id: str) -> None:
    for variant in (name, name.upper(), name.lower(), f"  {name} "):
        assert find(variant).id == acc_id, variant


@pytest.mark.parametrize("name,acc_id", sorted(RUNTIME_NAMES.items()))
def test_names_runtimes_print_resolve(name: str, acc_id: str) -> None:
    assert find(name).id == acc_id


def test_the_h200_nvl_is_not_timed_as_the_h200_sxm() -> None:
    """"NVIDIA H200 NVL" (the PCIe card: 600 W, 2- or 4-way NVLink bridges) was an alias of the H200 SXM, so predict
    and plan timed it at the SXM's 989 dense BF16 TFLOP/s inside an 8-GPU NVSwitch domain; NVIDIA's H200 page prints
    the NVL's own column (1,671 / 3,341 sparse BF16 / FP8 TFLOP/s, as the H100 NVL's)."""
    nvl, sxm = find("NVIDIA H200 NVL"), find("h200")
    assert nvl.id == "h200_nvl" and nvl is not sxm
    assert nvl.tflops["bf16"] < sxm.tflops["bf16"] and nvl.tflops["fp8"] < sxm.tflops["fp8"]
    assert nvl.bandwidth_tbps == sxm.bandwidth_tbps and nvl.memory_gb == sxm.memory_gb
    assert nvl.link is not None and nvl.link.domain is None  # bridges of 2 or 4, no NVSwitch domain of 8


# --- aliases name the entry's own product, never a sibling (the H200 NVL was an alias of the H200 SXM) -----------

def _words(name: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", name.lower()))


def test_no_alias_names_another_form_factor_memory_size_or_board() -> None:
    """Every alias agrees with its entry on what a name can say of the product: PCIe vs SXM, NVL (bridged PCIe
    cards), an NVL<n> link domain, a Max-Q board, and a memory size written as <n>GB / <n>G."""
    for acc in catalog().accelerators:
        for alias in acc.aliases:
            words, low = _words(alias), alias.lower()
            form = (acc.form_factor or "").lower()
            if "pcie" in words:
                assert form == "pcie", f"{acc.id}: {alias!r} names a PCIe card, the entry is {acc.form_factor}"
            if any(w.startswith("sxm") for w in words):
                assert form.startswith("sxm"), f"{acc.id}: {alias!r} names an SXM board"
            if "nvl" in words:
                assert "NVL" in acc.name and form == "pcie", f"{acc.id}: {alias!r} names an NVL card"
            for n in re.findall(r"nvl(\d+)", low):
                assert acc.link is not None and acc.link.domain == int(n), f"{acc.id}: {alias!r} names NVL{n}"
            if "max" in words and "q" in words:
                assert "Max-Q" in acc.name, f"{acc.id}: {alias!r} names a Max-Q board"
            for size in re.findall(r"(?<![a-z0-9])(\d+)\s*g(?:b)?(?![a-z0-9])", low):
                assert acc.memory_gb == int(size), f"{acc.id}: {alias!r} names {size} GB, the entry {acc.memory_gb}"


@pytest.mark.parametrize("name,acc_id", [
    ("NVIDIA A10", "a10"), ("a10", "a10"), ("NVIDIA A10G", "a10g"), ("a10g", "a10g"),
    ("NVIDIA A100-PCIE-40GB", "a100_40gb_pcie"), ("NVIDIA A100-SXM4-40GB", "a100_40gb"),
    ("AMD Instinct MI250", "mi250"), ("mi250", "mi250"), ("AMD Instinct MI250X", "mi250x"),
])
def test_sibling_products_resolve_to_their_own_entries(name: str, acc_id: str) -> None:
    assert find(name).id == acc_id


def test_the_a10_and_a10g_are_two_cards() -> None:
    """The A10G (AWS G5) shares the A10's 24 GB at 600 GB/s but not its tensor figures; the A10's 125 BF16 TFLOP/s
    (NVIDIA's A10 page) was carried for the A10G.  No stored page prints the A10G's, so it carries none."""
    a10, a10g = find("NVIDIA A10"), find("NVIDIA A10G")
    assert a10 is not a10g and a10.tflops.get("bf16") == 125 and not a10g.tflops
    assert a10.bandwidth_tbps == a10g.bandwidth_tbps == 0.6 and a10.memory_gb == a10g.memory_gb == 24
    assert "baseten" in a10g.source("bandwidth_tbps") and "a10-gpu" in a10.source("tflops")


def test_the_a100_pcie_40gb_has_no_nvswitch_link() -> None:
    pcie, sxm = find("NVIDIA A100-PCIE-40GB"), find("NVIDIA A100-SXM4-40GB")
    assert pcie.form_factor == "PCIe" and sxm.form_factor == "SXM4"
    assert pcie.link is not None and pcie.link.gbps is None and pcie.link.domain is None
    assert pcie.tdp_w == 250 and sxm.tdp_w == 400 and pcie.bandwidth_tbps == sxm.bandwidth_tbps == 1.555
    assert pcie.memory_gib == 39.39 and pcie.memory_basis == "torch" and not pcie.tflops


def test_mi250_and_mi250x_are_two_parts_and_their_shared_runtime_name_is_ambiguous() -> None:
    mi250, mi250x = find("mi250"), find("mi250x")
    assert mi250.tflops["bf16"] < mi250x.tflops["bf16"] and mi250.tdp_w == 500
    assert lookup("AMD Instinct MI250X/MI250") is None
    with pytest.raises(InputError, match=r"ambiguous GPU name .*mi250x.*mi250"):
        find("AMD Instinct MI250X/MI250")


@pytest.mark.parametrize("name,close", [
    ("gb200 nvl4", "gb200"), ("gb300 nvl4", "gb300"),  # the 4-GPU board, not 4 GPUs of the NVL72's 72-GPU domain
    ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "rtx_pro_6000"),  # the 300 W board
    ("ascend 910b3", "ascend_910b"), ("ascend 910b2", "ascend_910b"),  # SKUs with no figures of their own at hand
    ("NVIDIA GH200 480GB", None),  # the GH200 with 96 GB of HBM3, not the 144 GB HBM3e entry
    ("atlas 800i a2", None), ("atlas 800t a2", None),
])
def test_products_without_figures_of_their_own_are_refused(name: str, close: str | None) -> None:
    assert lookup(name) is None
    with pytest.raises(InputError, match="unknown GPU name") as e:
        find(name)
    if close:
        assert close in e.value.one_line().split("close matches:")[1]


def test_no_name_is_shared_by_two_entries() -> None:
    seen: dict[str, str] = {}
    for acc in catalog().accelerators:
        for n in acc.names():
            assert seen.setdefault(n, acc.id) == acc.id, f"{n!r} names {seen[n]} and {acc.id}"


def test_unknown_name_is_one_line_with_close_matches() -> None:
    with pytest.raises(InputError) as e:
        find("AMD Instinct MI390X")
    line = e.value.one_line()
    assert "\n" not in line and line.startswith("--gpu: unknown GPU name ('AMD Instinct MI390X')")
    assert "mi300x" in line or "mi350x" in line


def test_cli_memory_accepts_every_name_and_rejects_unknown(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from launchcard.cli import main

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 4,
                               "hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 8,
                               "vocab_size": 32000, "intermediate_size": 2048, "max_position_embeddings": 4096,
                               "torch_dtype": "bfloat16"}))
    # one name per entry through the CLI (aliases go through the same find(), tested above)
    names = [(acc.name, acc.id) for acc in catalog().accelerators] + [("RTX_5090_2X", "rtx_5090")]
    for name, acc_id in names:
        assert main(["memory", "--config", str(cfg), "--gpu", name.swapcase(), "--json"]) == 0, name
        assert json.loads(capsys.readouterr().out)["gpu"] == acc_id, name
    assert main(["memory", "--config", str(cfg), "--gpu", "H1000"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "close matches: h100" in err and "Traceback" not in err


def test_every_number_has_a_source_url() -> None:
    for acc in catalog().accelerators:
        figures = acc.figures()
        assert "memory_gib" in figures
        for fig in figures:
            url = acc.source(fig)
            assert url and re.match(r"https?://\S+$", url), f"{acc.id}.{fig} has no source URL"


def test_reported_memory_sits_below_the_datasheet_figure() -> None:
    # Vendors' GB for HBM/GDDR are binary sizes, so the runtime's GiB land just below the label
    # (H100: 80 GB fitted, 79.19 GiB reported), not below label / 1.0737 (that would be 74.5 GiB).
    for acc in catalog().accelerators:
        if acc.memory_gb is None:
            assert acc.is_cpu, f"{acc.id} gives no datasheet memory"
            continue
        assert 0.85 * acc.memory_gb < acc.memory_gib < acc.memory_gb, acc.id
        assert acc.memory_basis in ("torch", "driver", "estimate")
    h100 = find("h100")
    assert h100.memory_gb is not None and h100.memory_gib > h100.memory_gb * GIB_PER_GB  # the trap this avoids


def test_every_taxonomy_profile_maps_to_an_entry() -> None:
    profiles = _profiles()
    assert len(profiles) > 20
    brands = {"nvidia": "NVIDIA", "amd": "AMD", "google": "Google", "intel": "Intel", "huawei": "Huawei"}
    for pid, spec in profiles.items():
        prof = catalog().profile(pid)
        assert prof is not None, f"taxonomy profile {pid} has no catalog entry"
        assert prof.per_node == spec["gpu_count"], pid
        assert prof.accelerator.vendor == brands[str(spec["brand"]).lower()], pid
        if spec["brand"] == "NVIDIA":
            assert prof.accelerator.arch == spec["generation"], pid
        assert find(pid) is prof.accelerator


def test_text_scan_finds_model_names_not_prose() -> None:
    assert named_in("Deploy on 8x H200 (HGX)") == ("h200", 8)
    assert named_in("4×GB300 NVL72 tray") == ("gb300", 4)
    assert named_in("2 X NVIDIA h100 SXM") == ("h100", 2)  # any case
    assert named_in("GB200 or B200") == ("gb200", None)
    assert named_in("H100-80GB-HBM3") == ("h100", None)  # Kubernetes gpu.product label, vendor prefix dropped
    assert named_in("RTX PRO 6000 Blackwell") == ("rtx_pro_6000", None)
    assert named_in("hw: rtx6000") == ("rtx_pro_6000", None)  # SGLang's id for it
    assert named_in("CPU offload with v7 kernels on 3090 tokens") == (None, None)


def test_consumers_read_the_catalog() -> None:
    from launchcard.emit._truss import instance_type
    from launchcard.memory import find_gpu, gpus_per_node
    from launchcard.sources._base import hardware_in

    assert k8s_resource("AMD") == "amd.com/gpu" and k8s_resource("nvidia") == "nvidia.com/gpu"
    assert k8s_resource("Google") == "google.com/tpu"
    assert instance_type("h100") == "H100" and instance_type("a100_80gb") == "A100" and instance_type("mi300x") is None
    assert find_gpu("NVIDIA B200").memory_gib == 178.35 and gpus_per_node("gb200") == 4
    assert gpus_per_node("nope") is None
    assert hardware_in("8x MI355X") == ("mi355x", 8)
    assert lookup("trillium") is not None and lookup("trillium").kind == "tpu"  # type: ignore[union-attr]


def test_loader_rejects_a_figure_without_a_source() -> None:
    good = (b"accelerators:\n- {id: x1, name: X1, vendor: NVIDIA, kind: gpu, arch: hopper, memory_gb: 80,\n"
            b"   memory_gib: 79, memory_basis: torch, link: {kind: PCIe}, sources: {spec: 'https://e.org/x1'}}\n")
    assert parse_catalog(good, "t.yaml").get("x1").source("memory_gb") == "https://e.org/x1"
    bad = good.replace(b"{spec: 'https", b"{memory_gib: 'https")
    with pytest.raises(SourceError, match=r"figures without a source URL \(memory_gb\)"):
        parse_catalog(bad, "t.yaml")
    with pytest.raises(SourceError, match="unknown kind"):
        parse_catalog(good.replace(b"kind: gpu", b"kind: fpga"), "t.yaml")


def test_normalize_drops_vendor_words_and_remarks() -> None:
    assert normalize("NVIDIA GeForce RTX 5090") == "rtx 5090"
    assert normalize("NVIDIA L40S (g6e.12xlarge)") == "l40s"


# --- issue 20 item 3: names resolve exactly, never by a catalog name found inside the input --------------------

@pytest.mark.parametrize("name", ["a100-40", "a100-4gb", "h100x", "rtx 40900", "h2000", "xeon 66", "a100 80"])
def test_a_name_containing_a_catalog_name_is_not_that_entry(name: str) -> None:
    assert lookup(name) is None
    with pytest.raises(InputError, match="unknown GPU name") as e:
        find(name)
    assert "close matches:" in e.value.one_line()


def test_a100_40_names_the_40gb_part_among_the_closest_entries() -> None:
    with pytest.raises(InputError) as e:
        find("a100-40")
    fix = e.value.one_line().split("close matches:")[1]
    assert fix.split(",")[0].strip() == "a100_40gb"


def test_bare_a100_is_ambiguous_and_names_both_parts() -> None:
    assert lookup("a100") is None and {a.id for a in catalog().candidates("A100")} == {"a100_40gb", "a100_80gb"}
    with pytest.raises(InputError, match=r"ambiguous GPU name \('a100'\).*a100_40gb.*a100_80gb"):
        find("a100")


@pytest.mark.parametrize("name,acc_id", [("RTX-4090", "rtx_4090"), ("rtx4090", "rtx_4090"), ("nvidia_h100", "h100"),
                                         ("H100 SXM5 80GB", "h100"), ("A100 (40GB)", "a100_40gb"),
                                         ("NVIDIA L40S (g6e.12xlarge)", "l40s"), ("Instinct-MI300X", "mi300x")])
def test_case_separators_and_vendor_words_do_not_matter(name: str, acc_id: str) -> None:
    assert find(name).id == acc_id


def test_memory_cli_fails_in_one_line_for_a100_40(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from launchcard.cli import main

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 4,
                               "hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 8,
                               "vocab_size": 32000, "intermediate_size": 2048, "max_position_embeddings": 4096}))
    for name in ("a100-40", "a100-4gb", "a100"):
        assert main(["memory", "--config", str(cfg), "--gpu", name]) == 2, name
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "a100_40gb" in err and "Traceback" not in err


def test_json_twin_is_fresh_and_reads_as_the_yaml() -> None:
    """data/hardware.json (scripts/hardware_twin.py) is the YAML as the loader parses it, under the YAML's sha256:
    the catalog built from it equals the one built from the YAML, entry by entry."""
    from launchcard import hardware

    data_dir = Path(hardware.__file__).resolve().parent / "data"
    data = (data_dir / hardware.DATA_FILE).read_bytes()
    twin = (data_dir / hardware.TWIN_FILE).read_bytes()
    assert json.loads(twin) == hardware.twin_document(data), \
        "data/hardware.json is stale: run python scripts/hardware_twin.py after editing data/hardware.yaml"
    value = hardware._twin_value(data, twin)
    assert value is not None
    from_yaml, from_twin = parse_catalog(data), parse_catalog(data, value=value)
    assert from_twin.accelerators == from_yaml.accelerators and from_twin.profiles == from_yaml.profiles
    assert from_twin.k8s_resources == from_yaml.k8s_resources and from_twin.ambiguous == from_yaml.ambiguous


def test_catalog_reads_the_twin_and_parses_the_yaml_when_the_twin_is_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    from launchcard import hardware

    data_dir = Path(hardware.__file__).resolve().parent / "data"
    data = (data_dir / hardware.DATA_FILE).read_bytes()
    twin = (data_dir / hardware.TWIN_FILE).read_bytes()
    edited = data + b"\n# an edit after the twin was made\n"
    assert hardware._twin_value(edited, twin) is None  # another sha256: the YAML is parsed
    assert hardware._twin_value(data, twin[:100]) is None and hardware._twin_value(data, None) is None  # damaged
    assert hardware._twin_value(data, b"[]") is None
    parsed: list[str] = []
    real = hardware.load_yaml
    monkeypatch.setattr(hardware, "load_yaml", lambda d, w: parsed.append(w) or real(d, w))
    hardware.catalog.cache_clear()
    try:
        assert hardware.catalog().get("h100").memory_gib == find("h100").memory_gib
        assert parsed == []  # a fresh twin: no YAML composed
    finally:
        hardware.catalog.cache_clear()


def test_sms_and_boost_clock_are_figures_with_their_own_sources() -> None:
    a100 = catalog().get("a100_80gb")
    assert a100.sms == 108 and a100.boost_mhz == 1410.0
    assert "ampere-architecture-whitepaper" in (a100.source("sms") or "")
    assert {"sms", "boost_mhz"} <= set(a100.figures())
    assert catalog().get("h100").sms is None  # stated only where a source gives them
    good = (b"accelerators:\n- {id: x1, name: X1, vendor: NVIDIA, kind: gpu, arch: hopper, memory_gb: 80, sms: 132,\n"
            b"   memory_gib: 79, memory_basis: torch, link: {kind: PCIe}, sources: {memory_gb: 'https://e.org/m',\n"
            b"   memory_gib: 'https://e.org/m'}}\n")
    with pytest.raises(SourceError, match=r"figures without a source URL \(sms\)"):
        parse_catalog(good, "t.yaml")
    with pytest.raises(SourceError, match="sms must be a positive number"):
        parse_catalog(good.replace(b"sms: 132", b"sms: -1"), "t.yaml")
