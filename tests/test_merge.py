import json
from pathlib import Path

import jsonschema
import pytest

from launchcard.card import card_json_schema
from launchcard.merge import build_corpus

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
FOUR = {
    "zai-org/GLM-5.3-Flash": {"vllm-recipes", "sglang-cookbook", "provider-preset", "dynamo"},
    "openai/gpt-oss-120b": {"vllm-recipes", "sglang-cookbook", "provider-preset", "dynamo"},
    "deepseek-ai/DeepSeek-V4-Flash": {"vllm-recipes", "sglang-cookbook", "dynamo"},
    "moonshotai/Kimi-K2.5": {"vllm-recipes", "sglang-cookbook", "provider-preset", "dynamo"},
}


@pytest.fixture(scope="module")
def result():
    return build_corpus(CORPUS, models=sorted(FOUR), hardware="h100")


@pytest.mark.parametrize("model", sorted(FOUR))
def test_card_has_envs_from_every_source_and_validates(result, model):
    card = result.cards[model]
    assert {e.source.kind for e in card.envs} == FOUR[model]
    doc = card.model_dump(mode="json", by_alias=True)
    jsonschema.validate(doc, card_json_schema())
    for key in ("hf", "checkpoints", "envs", "hardware", "evidence", "gaps", "captured_at", "captured_by",
                "facts", "conflicts"):
        assert key in doc


def _sides(card, field):
    c = next(c for c in card.conflicts if c.field == field)
    return {(s.value, s.evidence.kind, s.scope) for s in c.sides}


def test_glm_conflicts(result):
    card = result.cards["zai-org/GLM-5.3-Flash"]
    rp = _sides(card, "reasoning_parser")
    assert ("glm47", "vllm-recipes", None) in rp
    assert {k for v, k, _ in rp if v == "glm45"} == {"sglang-cookbook", "provider-preset", "dynamo"}
    total = {(v, k) for v, k, _ in _sides(card, "params_total_b")}
    # the preset's description states 321B too (one prose extraction for every source, issue 21)
    assert total == {(321.0, "vllm-recipes"), (320.0, "sglang-cookbook"), (321.0, "provider-preset")}
    spec = {(v, k) for v, k, _ in _sides(card, "num_speculative_tokens")}
    assert (5, "vllm-recipes") in spec and (7, "dynamo") in spec
    ctx = _sides(card, "context_tokens")
    assert (1048576, "vllm-recipes", None) in ctx and (128000, "dynamo", "Dynamo GB200 Aggregated") in ctx
    pins = {v for v, _, _ in _sides(card, "weights_revision[zai-org/GLM-5.3-Flash]")}
    assert "3f1971b7b5f7a528c9c4ef6212c8785298a8c24a" in pins and len(pins) >= 2
    for c in card.conflicts:
        for s in c.sides:
            assert s.evidence.sha256 and (s.evidence.url or s.evidence.path)


def test_glm_vllm_env_is_resolved_h100_command(result):
    card = result.cards["zai-org/GLM-5.3-Flash"]
    (vllm,) = [e for e in card.envs if e.source.kind == "vllm-recipes"]
    assert vllm.argv[:3] == ("vllm", "serve", "zai-org/GLM-5.3-Flash")
    assert vllm.hardware == "h100" and vllm.gpus == 8
    assert set(vllm.validated_hardware) >= {"h100", "b200", "gb200", "mi355x"}
    assert "hopper" in card.hardware.gpu_arch and any(g.field == "hardware.npu" for g in card.gaps)


@pytest.mark.parametrize("name", ["H100", "nvidia_h100"])
def test_hardware_is_read_as_resolve_reads_it(name):
    """`card --hardware H100` was refused ("unknown hardware 'H100'; did you mean h100") where `resolve
    --hardware H100` and the web's model page take the profile name by `resolve.profile_id`."""
    card = build_corpus(CORPUS, models=["zai-org/GLM-5.3-Flash"], hardware=name).cards["zai-org/GLM-5.3-Flash"]
    (vllm,) = [e for e in card.envs if e.source.kind == "vllm-recipes"]
    assert vllm.hardware == "h100" and vllm.gpus == 8


def test_markdown_page(result):
    from launchcard.render import render_markdown

    md = render_markdown(result.cards["zai-org/GLM-5.3-Flash"])
    for heading in ("## Reading notes", "## Limits", "## Deployment options", "## Attributed facts",
                    "## Which artifact and engine?", "## What needs attention?", "## How do the settings apply?",
                    "## What does the memory number mean?", "## What is needed to reproduce a deployment?"):
        assert heading in md
    facts = json.loads(md.split("## Attributed facts\n\n```json\n")[1].split("\n```")[0])
    assert any(f["evidence_url"].endswith("#L32") for f in facts)


def test_every_recipe_model_gets_a_card():
    r = build_corpus(CORPUS)
    recipes = {p.relative_to(CORPUS / "vllm-recipes/models").with_suffix("").as_posix()
               for p in (CORPUS / "vllm-recipes/models").glob("*/*.yaml")}
    assert recipes <= set(r.cards)


# --- issue 21: one parameter-count extraction for every source ---------------------------------


@pytest.mark.parametrize(("model", "values"), [
    ("openai/gpt-oss-120b", {("vllm-recipes", 120.0), ("sglang-cookbook", 117.0)}),
    ("zai-org/GLM-5.3-Flash", {("vllm-recipes", 321.0), ("sglang-cookbook", 320.0), ("provider-preset", 321.0)}),
])
def test_parameter_count_conflicts_are_found_for_every_model(result, model, values):
    card = result.cards[model]
    totals = {(f.evidence.kind, f.value) for f in card.facts if f.name == "params_total_b"}
    assert values <= totals
    conflict = next(c for c in card.conflicts if c.field == "params_total_b")
    assert {(s.evidence.kind, s.value) for s in conflict.sides} >= values
    assert all(s.evidence.url and "#L" in s.evidence.url for s in conflict.sides
               if s.evidence.kind != "provider-preset")


def test_prose_parameter_counts_one_extraction():
    from launchcard.sources import SourceDoc
    from launchcard.sources._base import prose_param_facts

    doc = SourceDoc(kind="sglang-cookbook", path="p.md", sha256="0" * 64, raw=b"x")
    cases = [
        ("- **gpt-oss-20b** — local use (21B parameters with 3.6B active parameters)", "openai/gpt-oss-120b", {}),
        ("- **gpt-oss-120b** — production (117B parameters with 5.1B active parameters)", "openai/gpt-oss-120b",
         {"params_total_b": 117.0, "params_active_b": 5.1}),
        ("Deploy Kimi-K2.5 with SGLang - 1T total parameters, 32B active", "moonshotai/Kimi-K2.5",
         {"params_total_b": 1000.0, "params_active_b": 32.0}),
        ("| **Model** | `deepseek-ai/DeepSeek-V4-Flash` (MoE, 284B total / 13B active) |",
         "deepseek-ai/DeepSeek-V4-Flash", {"params_total_b": 284.0, "params_active_b": 13.0}),
        ("Z.ai GLM-5.3-Flash is a 321B-parameter, 18B-active multimodal MoE", "zai-org/GLM-5.3-Flash",
         {"params_total_b": 321.0, "params_active_b": 18.0}),
        ("DeepSeek-V4-Pro is 1.6T total / 49B active", "deepseek-ai/DeepSeek-V4-Flash", {}),  # a sibling's line
    ]
    for text, subject, want in cases:
        got = {f.name: f.value for f in prose_param_facts(doc, subject, [(7, text)])}
        assert got == want, text


@pytest.mark.parametrize("url", ["notaurl", "javascript:alert(1)", "https://x.example/?q=1", "https:///no-host"])
def test_a_web_url_that_is_no_http_base_url_is_refused(url):
    """`card --web-url notaurl` (or `javascript:...`) was written into the card's performance link."""
    from launchcard.errors import InputError

    with pytest.raises(InputError, match=r"not an http\(s\) base URL") as info:
        build_corpus(CORPUS, models=["zai-org/GLM-5.3-Flash"], web_url=url)
    assert info.value.field == "web_url"
    card = build_corpus(CORPUS, models=["zai-org/GLM-5.3-Flash"], web_url="https://cat.example/x/").cards
    assert card["zai-org/GLM-5.3-Flash"].performance == "https://cat.example/x/zai-org/GLM-5.3-Flash/performance"
