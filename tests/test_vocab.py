"""One source registry and one fact vocabulary (issue 10 items 4-5)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from launchcard.errors import InputError
from launchcard.facts import VOCABULARY, UnknownFactName, comparable
from launchcard.merge import adapters, build_corpus
from launchcard.sources import Adapter, Extract, ModelExtract, ReadOptions, SourceDoc
from launchcard.sources._base import fact

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
FOUR = ["deepseek-ai/DeepSeek-V4-Flash", "moonshotai/Kimi-K2.5", "openai/gpt-oss-120b", "zai-org/GLM-5.3-Flash"]


@pytest.fixture(scope="module")
def cards():
    return build_corpus(CORPUS, models=FOUR, hardware="h100").cards


def test_registry_lists_every_source_once():
    kinds = [a.kind for a in adapters()]
    assert sorted(kinds) == sorted({"vllm-recipes", "sglang-cookbook", "provider-preset", "dynamo", "hf-config",
                                    "hf-api"})
    assert all(isinstance(a, Adapter) for a in adapters())


def test_build_corpus_asks_only_the_registry(tmp_path, monkeypatch):
    """A source registered once is read; build_corpus knows no source by name."""
    (tmp_path / "toy").mkdir()

    class Toy(Adapter):
        kind = "launchcard"
        folder = "toy"

        def open(self, root: Path | None, options: ReadOptions) -> bool:
            self.hw = options.hardware
            return root is not None

        def models(self) -> Sequence[str]:
            return ["toy/model"]

        def model_extract(self, model: str) -> ModelExtract:
            doc = SourceDoc(kind="launchcard", path="toy/x", sha256="0" * 64, raw=b"")
            return ModelExtract(extract=Extract(doc=doc.ref(), models=(model,), facts=(
                fact(doc, "context_tokens", 4096, unit="tokens"),)))

    monkeypatch.setattr("launchcard.merge._corpus.adapters", lambda: [Toy()])
    result = build_corpus(tmp_path, hardware="h100")
    assert list(result.cards) == ["toy/model"]
    assert [f.value for f in result.cards["toy/model"].facts if f.name == "context_tokens"] == [4096]


def test_empty_corpus_folder_is_bad_input(tmp_path):
    with pytest.raises(InputError, match="no source documents") as info:
        build_corpus(tmp_path)
    assert info.value.field == "corpus" and "--corpus" not in str(info.value)


def test_unknown_fact_name_is_a_programming_error():
    doc = SourceDoc(kind="dynamo", path="x", sha256="0" * 64, raw=b"")
    with pytest.raises(UnknownFactName, match="Total parameters"):
        fact(doc, "Total parameters as counted by recipe", "321B")
    with pytest.raises(UnknownFactName, match="tokens"):
        fact(doc, "params_total_b", 321.0, unit="tokens")


def test_every_card_fact_is_in_the_vocabulary(cards):
    for card in cards.values():
        names = {f.name for f in card.facts if f.classification != "measured"}
        assert names <= set(VOCABULARY), names - set(VOCABULARY)


def test_one_yaml_key_is_one_fact(cards):
    card = cards["zai-org/GLM-5.3-Flash"]
    recipe = [f for f in card.facts if f.evidence and f.evidence.kind == "vllm-recipes"]
    lines = [(f.evidence.path, f.evidence.line) for f in recipe if f.name == "params_total_b"]
    assert len(lines) == 1
    assert sum(1 for f in recipe if (f.evidence.path, f.evidence.line) == lines[0]) == 1


def test_gpt_oss_parsers_agree_across_engine_registries(cards):
    card = cards["openai/gpt-oss-120b"]
    assert not [c.field for c in card.conflicts if c.field in ("reasoning_parser", "tool_call_parser")]
    tool = {(f.value, f.engine) for f in card.facts if f.name == "tool_call_parser"}
    assert {("openai", "vllm"), ("gpt-oss", "sglang"), ("harmony", "dynamo")} <= tool


def test_registry_names_still_conflict_within_a_format(cards):
    glm = next(c for c in cards["zai-org/GLM-5.3-Flash"].conflicts if c.field == "reasoning_parser")
    assert {s.value for s in glm.sides} == {"glm47", "glm45"}
    assert comparable("tool_call_parser", "openai", "vllm") == comparable("tool_call_parser", "harmony", "dynamo")
    assert comparable("tool_call_parser", "openai", "sglang") != comparable("tool_call_parser", "gpt-oss", "sglang")


def test_numeric_rule_rounds_parameter_counts():
    assert comparable("params_total_b", 116.83) == comparable("params_total_b", "117")
    assert comparable("params_total_b", 321.0) != comparable("params_total_b", 320.0)
