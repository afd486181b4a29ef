"""What a chosen value does, in the engine's own words: SGLang's enumerated choices and vLLM's gaps.

The shipped tables (``data/values``) are built by ``scripts/capture_value_docs.py`` from each release's
source; these tests read them through :mod:`launchcard.explain` as every table does, and, where the
release source is unpacked on this machine, check each cited line against it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from launchcard.explain import NO_VALUE_DESCRIPTION, engine_spec, explain_argv, explain_flag, value_docs
from tests.helpers import run_cli

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
SGLANG = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]

sys.path.insert(0, str(ROOT / "scripts"))
from value_docs_help import value_segments  # noqa: E402

sys.path.pop(0)


def _sglang(*args: str) -> dict[str, object]:
    return {n.flag: n for n in explain_argv([*SGLANG, *args], engine="sglang")}


def test_an_sglang_attention_backend_says_what_it_is_with_its_file_and_line() -> None:
    note = explain_flag("--attention-backend", "fa3", spec=engine_spec("sglang"))
    assert note.value_source == "engine-source"
    assert note.value_what is not None and note.value_what.startswith(
        "fa3: FlashAttention backend implementation (engine class FlashAttentionBackend).")
    # the registry's own check on the value, with the line that makes it
    assert "FlashAttention v3 Backend requires SM>=80 and SM<=90." in note.value_what
    assert "sglang/srt/layers/attention/attention_registry.py#L" in note.value_what
    assert note.value_cited and note.value_cited.startswith(
        "sglang 0.5.23 sglang/srt/layers/attention/flashattention_backend.py#L")
    assert note.value_url and note.value_url.startswith(
        "https://github.com/sgl-project/sglang/blob/v0.5.23/sglang/srt/layers/attention/flashattention_backend.py#L")
    # one flag, two values, two meanings
    other = explain_flag("--attention-backend", "trtllm_mha", spec=engine_spec("sglang"))
    assert other.what == note.what and other.value_what != note.value_what


def test_sglang_values_read_from_help_clauses_registries_and_choice_comments() -> None:
    notes = _sglang("--kv-cache-dtype", "fp8_e4m3", "--load-format", "runai_streamer", "--quantization", "fp8",
                    "--tool-call-parser", "auto", "--dsa-topk-backend", "torch")
    kv = notes["--kv-cache-dtype"].value_what
    assert kv == 'fp8_e4m3: "fp8_e5m2" and "fp8_e4m3" are supported for CUDA 11.8+.'
    assert "sglang/srt/arg_groups/fields/model.py#L" in str(notes["--kv-cache-dtype"].value_cited)
    load = notes["--load-format"].value_what
    assert load and "Runai Model Streamer" in load and "RunaiModelStreamerLoader" in load
    quant = notes["--quantization"].value_what
    assert quant and quant.startswith("fp8: Config class for FP8 (engine class Fp8Config).")
    assert "The engine's choice list notes: MOE + linear online quantization." in quant
    assert notes["--tool-call-parser"].value_what == (
        "auto: Use 'auto' to detect from chat template or checkpoint metadata.")
    # a sentence naming one choice among a bare list describes it; the list describes no other
    assert notes["--dsa-topk-backend"].value_what == (
        "torch: The 'torch' backend currently requires SGLANG_DSA_FUSE_TOPK=false.")
    assert explain_flag("--dsa-topk-backend", "flashinfer", spec=engine_spec("sglang")).value_what.endswith(
        NO_VALUE_DESCRIPTION + ".")


def test_an_sglang_value_the_engine_never_describes_says_so_and_where_it_is_listed() -> None:
    notes = _sglang("--moe-runner-backend", "flashinfer_mxfp4", "--grammar-backend", "xgrammar",
                    "--speculative-algorithm", "EAGLE", "--mem-fraction-static", "0.8")
    moe = notes["--moe-runner-backend"]
    assert moe.value_what == ("flashinfer_mxfp4: one of the engine's choices for this flag; "
                              f"{NO_VALUE_DESCRIPTION}.")
    assert moe.value_cited and "sglang/srt/arg_groups/choices.py#L" in moe.value_cited
    assert notes["--grammar-backend"].value_what.endswith(f"; {NO_VALUE_DESCRIPTION}.")
    assert notes["--speculative-algorithm"].value_what == (
        f"EAGLE: the engine's enum member SpeculativeAlgorithm.EAGLE; {NO_VALUE_DESCRIPTION}.")
    assert notes["--mem-fraction-static"].value_what is None  # a number: the flag's sentence says it


def test_platform_only_registrations_aliases_and_deprecations_are_named() -> None:
    spec = engine_spec("sglang")
    gptq = explain_flag("--quantization", "gptq", spec=spec).value_what
    assert gptq and "registered only when is_npu()" in gptq  # not CUDA's: SGLang registers gptq per platform
    nsa = explain_flag("--attention-backend", "nsa", spec=spec).value_what
    assert nsa and "Deprecated: attention-backend='nsa' is deprecated; use 'dsa' instead." in nsa
    nextn = explain_flag("--speculative-algorithm", "NEXTN", spec=spec).value_what
    assert nextn and "NEXTN -> EAGLE" in nextn


def test_help_clauses_describe_only_the_values_they_lead_with() -> None:
    text = ("Format. \"auto\" will try safetensors. \"pt\" will load bin files.\"gguf\" loads gguf. "
            "Options: 'a', 'b', 'c'. Supports 'x' and 'y'. 'lru': Least Recently Used (default). "
            "'deep_gemm' (JIT-compiled; SM90), 'cutlass' (CUTLASS). \"fp8_e5m2\" and \"fp8_e4m3\" need CUDA 11.8+.")
    found = {k: v for k, (v, _) in value_segments(text, ["auto", "pt", "gguf", "a", "b", "c", "x", "y", "lru",
                                                        "deep_gemm", "cutlass", "fp8_e5m2", "fp8_e4m3"]).items()}
    assert found["auto"] == '"auto" will try safetensors.'
    assert found["pt"] == '"pt" will load bin files.' and found["gguf"] == '"gguf" loads gguf.'
    assert not {"a", "b", "c", "x", "y"} & set(found)  # a bare list says nothing about its members
    assert found["lru"] == "'lru': Least Recently Used (default)."
    assert found["deep_gemm"] == "'deep_gemm' (JIT-compiled; SM90)" and found["cutlass"] == "'cutlass' (CUTLASS)"
    assert found["fp8_e4m3"] == found["fp8_e5m2"] == '"fp8_e5m2" and "fp8_e4m3" need CUDA 11.8+.'


def test_help_clauses_split_at_each_value_and_a_list_s_parenthesis_is_the_last_value_s() -> None:
    text = ("Tokenizer mode. 'auto' will use the fast tokenizer if available, and 'slow' will always use the "
            "slow tokenizer. Options: 'cutedsl' (JIT), 'gemv', 'torch' (always uses cuBLAS). "
            "'none' (default) disables the canary. Can be one of 'prefill' (default) or 'decode'.")
    found = {k: v for k, (v, _) in value_segments(text, ["auto", "slow", "cutedsl", "gemv", "torch", "none",
                                                        "prefill", "decode"]).items()}
    assert found["auto"] == "'auto' will use the fast tokenizer if available"
    assert found["slow"] == "'slow' will always use the slow tokenizer."
    assert found["torch"] == "'torch' (always uses cuBLAS)" and "gemv" not in found  # not torch's words
    assert found["none"] == "'none' (default) disables the canary."
    assert found["prefill"] == "'prefill' (default)" and "decode" not in found


def test_vllm_gaps_filled_from_the_engines_own_text() -> None:
    spec = engine_spec("vllm")
    ngram = explain_flag("--speculative-config.method", "ngram", spec=spec).value_what
    assert ngram and "prompt_lookup_max" in ngram
    block = explain_flag("--speculative-config.rejection_sample_method", "block", spec=spec)
    assert block.value_what and block.value_what.startswith(
        "rejection_sample_method=block: 'block' uses block verification")
    assert block.value_cited and "vllm/config/speculative.py#L" in block.value_cited
    # "block" is a rejection sampling method, not a speculative method
    assert "block" not in (value_docs("vllm") or {})["flags"]["--speculative-config.method"]
    # a JSON value: every key the engine enumerates, in the object's order
    both = explain_flag("--speculative-config", '{"method": "ngram", "num_speculative_tokens": 3, '
                        '"rejection_sample_method": "synthetic"}', spec=spec).value_what
    assert both and both.startswith("method=ngram: If using `ngram` method")
    assert "rejection_sample_method=synthetic: 'synthetic' accepts draft tokens" in both
    mtp = explain_flag("--speculative-config.method", "mtp", spec=spec).value_what
    assert mtp == f"method=mtp: listed in the engine's MTPModelTypes; {NO_VALUE_DESCRIPTION}."
    assert explain_flag("--mm-encoder-tp-mode", "data", spec=spec).value_source == "engine-source"
    # a backend class without a docstring: its own module's docstring, said to be that (never the registry's)
    fa = explain_flag("--attention-backend", "flash_attn", spec=spec).value_what
    assert fa == ("flash_attn: Attention layer with FlashAttention (the docstring of the module of engine class "
                  "FlashAttentionBackend).")
    assert explain_flag("--attention-backend", "TORCH_SDPA", spec=spec).value_what == (
        f"TORCH_SDPA: {NO_VALUE_DESCRIPTION}.")  # a member naming no class: the registry line, nothing more


def test_derived_sglang_plan_is_explained_in_sglangs_words() -> None:
    cfg = CORPUS / "hf" / "deepseek-ai" / "DeepSeek-V4-Flash" / "config.json"
    if not cfg.is_file():
        pytest.skip("corpus config not present")
    out = run_cli("resolve", "deepseek-ai/DeepSeek-V4-Flash", "--engine", "sglang", "--config", str(cfg),
                  "--hardware", "h100", "--explain")
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("--")]
    tp = next(r for r in rows if r.startswith("--tp-size\t"))
    assert "The tensor parallelism size. [sglang 0.5.23 --help]" in tp
    assert not any("vllm" in r.split("\t")[2] for r in rows)  # never vLLM's help for an SGLang flag
    # the JSON twin carries the same notes
    js = run_cli("resolve", "deepseek-ai/DeepSeek-V4-Flash", "--engine", "sglang", "--config", str(cfg),
                 "--hardware", "h100", "--explain", "--json")
    notes = {n["flag"]: n for n in json.loads(js.stdout)["explain"]}
    assert notes["--tp-size"]["what"] == "The tensor parallelism size." and notes["--tp-size"]["cited"] == (
        "sglang 0.5.23 --help")
    assert notes["--host"]["value_what"] == NO_VALUE_DESCRIPTION


def test_sglang_cookbook_commands_are_explained_on_card_and_page() -> None:
    if not (CORPUS / "sglang-cookbook" / "GLM-5.3-Flash").is_dir():
        pytest.skip("corpus not present")
    card = run_cli("card", "zai-org/GLM-5.3-Flash", "--corpus", str(CORPUS), "--format", "md")
    assert card.returncode == 0, card.stderr
    page = run_cli("page", "zai-org/GLM-5.3-Flash", "--corpus", str(CORPUS))
    assert page.returncode == 0, page.stderr
    for text in (card.stdout, page.stdout):
        assert "fp8: Config class for FP8 (engine class Fp8Config)." in text
        assert 'bfloat16: "bf16" or "bfloat16" for BF16 KV cache.' in text
        assert "sglang/srt/arg_groups/fields/model.py#L" in text


def _sglang_source() -> Path:
    docs = value_docs("sglang")
    assert docs is not None
    src = ROOT / ".cache" / "engine-envs" / "src" / f"sglang-{docs['version']}"
    if not (src / ".complete").exists():
        pytest.skip(f"SGLang {docs['version']} source not unpacked; scripts/capture_flags.py sglang {docs['version']}")
    return src


def test_every_sglang_value_entry_points_at_a_line_that_names_it() -> None:
    docs = value_docs("sglang")
    assert docs is not None
    src = _sglang_source()
    for flag, values in docs["flags"].items():
        for value, entry in values.items():
            line = (src / entry["path"]).read_text(encoding="utf-8").splitlines()[entry["line"] - 1]
            named = (value in line or value.lower() in line.lower() or (entry.get("cls") and entry["cls"] in line)
                     or (entry.get("factory") and entry["factory"] in line))
            assert named, (flag, value, entry, line)
            for part in ("comment", "check", "deprecated"):
                if entry.get(part):
                    assert (src / entry[part]["path"]).is_file(), (flag, value, part)


def test_sglang_value_docs_are_what_the_script_reads_from_its_wheel() -> None:
    docs = value_docs("sglang")
    assert docs is not None
    src = _sglang_source()
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from capture_value_docs import capture
    finally:
        sys.path.pop(0)
    assert capture("sglang", docs["version"], src)["flags"] == docs["flags"]
