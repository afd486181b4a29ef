"""The workload's endpoint: what vLLM's chat endpoint costs over its completions endpoint (predict._endpoint)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from config_support import LLAMA8B
from launchcard.errors import InputError
from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, ServingFacts, Workload, coefficients, facts_from_memory_plan, predict
from launchcard.predict._coef import _ref_op
from launchcard.predict._endpoint import chat_cost, with_endpoint
from launchcard.predict._table import coefficient_table

ROOT = Path(__file__).resolve().parents[1]


def _facts(engine: str = "vllm", version: str | None = "0.11.0") -> ServingFacts:
    s = Settings(max_model_len=16384, vllm_version=version)
    arch = arch_from_config(dict(LLAMA8B))
    acc = find("h100")
    return facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                                  engine=engine)


def _ttft(f: ServingFacts, endpoint: str) -> tuple[float, float, tuple[str, ...]]:
    p = predict(f, Workload(isl=256, osl=32, concurrency=1, num_requests=3, endpoint=endpoint))
    return p.ttft_ms_mean, p.tpot_ms_mean, tuple(x.message for x in p.findings if x.code == "endpoint")


def test_the_table_records_what_the_chat_endpoint_costs_and_where_it_was_measured() -> None:
    doc = coefficient_table()["chat"]
    assert doc["request"]["api_us"]["vllm"] > 0 and "bench/measure_chat_request.py" in doc["request"]["measured_on"]
    parse = doc["template_parse"]
    assert parse["ms"]["vllm"] > 1.0 and parse["releases"]["vllm"] == ["0.11.0", "0.11.1"]
    assert "chat_utils.py" in parse["measured_on"] and parse["bytes"] > 1000
    assert doc["stream"]["api_us"]["vllm"] > 0 and doc["stream"]["outputs"] > 0


def test_completions_is_the_default_and_changes_nothing() -> None:
    assert Workload(isl=8, osl=8, concurrency=1).endpoint == "completions"
    c = coefficients("gpu", "vllm")
    same, finding = with_endpoint(c, "vllm", "0.11.0", "completions")
    assert same is c and finding is None


def test_an_unknown_endpoint_is_refused_naming_the_option() -> None:
    with pytest.raises(InputError) as e:
        Workload(isl=8, osl=8, concurrency=1, endpoint="responses").validate()
    assert e.value.field == "endpoint" and "chat" in str(e.value.fix)


def test_vllm_0_11_0_parses_the_chat_template_on_every_request() -> None:
    f = _facts(version="0.11.0")
    base, tpot0, none = _ttft(f, "completions")
    chat, tpot1, found = _ttft(f, "chat")
    cost = chat_cost("vllm", "0.11.0")
    assert cost is not None and cost.parse_ms > 1.0 and cost.request_ms > 0.0
    # the GPU set keeps the request path outside the schedule: added to TTFT as measured
    assert chat - base == pytest.approx(cost.request_ms + cost.parse_ms, abs=0.05)
    assert not none and len(found) == 1
    assert "0.11.0 parses the chat template again on every request" in found[0]
    assert "cached from 0.11.1" in found[0] and "assumed of that size" in found[0]
    assert math.isclose(tpot0, tpot1, rel_tol=0.02)


@pytest.mark.parametrize("version", ["0.10.2", "0.11.1", "0.12.0", None])
def test_other_releases_pay_the_measured_request_path_only(version: str | None) -> None:
    f = _facts(version=version)
    base, _, _ = _ttft(f, "completions")
    chat, _, found = _ttft(f, "chat")
    cost = chat_cost("vllm", version)
    assert cost is not None and cost.parse_ms == 0.0
    assert chat - base == pytest.approx(cost.request_ms, abs=0.05)
    assert "parses the chat template" not in found[0]


def test_engines_whose_api_server_was_not_measured_get_the_clients_part_only() -> None:
    doc = coefficient_table()["chat"]["request"]
    got = chat_cost("sglang", "0.5.3")
    ref = _ref_op(0.0)
    scale = ref / doc["host_op_us"] if ref else 1.0
    assert got is not None and got.parse_ms == 0.0
    assert got.request_ms == pytest.approx(doc["client_us"] * scale * 1e-3)
    _, finding = with_endpoint(coefficients("gpu", "sglang"), "sglang", "0.5.3", "chat")
    assert finding is not None and "SGLang's API server not measured" in finding.message


def test_the_chat_streaming_stages_cost_the_measured_ratio() -> None:
    c = coefficients("gpu", "vllm")
    cost = chat_cost("vllm", "0.12.0")
    assert cost is not None and cost.api_ratio > 1.0 and cost.client_ratio > 1.0
    chat, _ = with_endpoint(c, "vllm", "0.12.0", "chat")
    assert chat.stages.api_us == pytest.approx(c.stages.api_us * cost.api_ratio)
    assert chat.stages.client_us == pytest.approx(c.stages.client_us * cost.client_ratio)


def test_the_cli_takes_the_endpoint_and_refuses_a_bad_one() -> None:
    cfg = ROOT / "tests" / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    base = [sys.executable, "-m", "launchcard", "predict", "--config", str(cfg), "--gpu", "h100", "--isl", "233",
            "--osl", "64", "--concurrency", "1", "--num-requests", "2", "--engine-version", "0.11.0", "--json"]
    out = subprocess.run([*base, "--endpoint", "chat"], capture_output=True, text=True, check=True)
    doc = json.loads(out.stdout)
    assert doc["workload"]["endpoint"] == "chat"
    assert any(f["code"] == "endpoint" for f in doc["findings"])
    bad = subprocess.run([*base, "--endpoint", "grpc"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--endpoint" in bad.stderr and "Traceback" not in bad.stderr


def test_vllm_renders_gpt_oss_chats_with_harmony_so_neither_the_template_path_nor_the_parse_applies() -> None:
    doc = coefficient_table()["chat"]["request"]
    jinja = chat_cost("vllm", "0.11.0")
    harmony = chat_cost("vllm", "0.11.0", model_type="gpt_oss")
    assert jinja is not None and harmony is not None
    assert harmony.parse_ms == 0.0 and harmony.request_ms < jinja.request_ms
    ref = _ref_op(0.0)
    assert harmony.request_ms == pytest.approx(doc["client_us"] * (ref / doc["host_op_us"] if ref else 1.0) * 1e-3)
    _, finding = with_endpoint(coefficients("gpu", "vllm"), "vllm", "0.11.0", "chat", "gpt_oss")
    assert finding is not None and "openai_harmony" in finding.message


def test_a_burst_on_the_chat_endpoint_is_taken_in_turn_by_the_api_server() -> None:
    f = _facts(version="0.11.0")
    cost = chat_cost("vllm", "0.11.0")
    assert cost is not None
    each = cost.request_ms + cost.parse_ms
    n = 64
    base = predict(f, Workload(isl=128, osl=8, rate=math.inf, num_requests=n))
    chat = predict(f, Workload(isl=128, osl=8, rate=math.inf, num_requests=n, endpoint="chat"))
    # the opening request waits for none, the rest for n / 2 ahead on average: mean + each x (1 + (n - 1) / 2 ...)
    extra = chat.ttft_ms_mean - base.ttft_ms_mean
    assert extra == pytest.approx(each + each * (n / 2.0) * (n - 1) / n, rel=0.05)
    found = next(x.message for x in chat.findings if x.code == "endpoint")
    assert "taken in turn" in found and "serving_engine.py L791" in found
    # a closed loop's later requests arrive alone: only the opening ones wait for others
    closed0 = predict(f, Workload(isl=128, osl=8, concurrency=4, num_requests=40))
    closed1 = predict(f, Workload(isl=128, osl=8, concurrency=4, num_requests=40, endpoint="chat"))
    assert closed1.ttft_ms_mean - closed0.ttft_ms_mean < each * 1.5


def test_the_front_end_finding_does_not_say_nothing_is_counted_for_the_chat_template_it_adds() -> None:
    """On the chat endpoint the request path's measured extra (template, messages) is added to TTFT: the front-end
    finding must not leave "chat template" among what it counts nothing for without saying so."""
    f = _facts()
    for endpoint, said in (("chat", True), ("completions", False)):
        p = predict(f, Workload(isl=128, osl=16, concurrency=2, num_requests=4, endpoint=endpoint))
        (front,) = [x.message for x in p.findings if x.code == "ttft-front-end"]
        assert ("chat endpoint's measured extra over /v1/completions is added" in front) is said, endpoint
