"""bench/measure_chat_request.py's reading of a saved --parse result, and bench/cpu_time.py (the CPU-time loop it
shares with bench/measure_host_stream.py); no server."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def chat() -> Any:
    sys.path.insert(0, str(ROOT / "bench"))
    import measure_chat_request

    return measure_chat_request


def test_a_parse_result_names_what_produced_it_or_says_it_was_not_recorded(chat: Any) -> None:
    saved = json.loads((ROOT / "bench" / "data" / "chat_parse.json").read_text())
    digest = "ab" * 32
    said = chat.parse_provenance({**saved, "vllm": "0.32.0", "template_sha256": digest})
    assert "vLLM 0.32.0" in said and digest in said
    old = chat.parse_provenance({k: v for k, v in saved.items() if k not in ("vllm", "template_sha256")})
    assert "not recorded" in old and "vLLM 0" not in old


@pytest.mark.parametrize("bad", [{"vllm": "unknown"}, {"vllm": ""}, {"template_sha256": "xyz"},
                                 {"template_sha256": "AB" * 32}])
def test_a_bad_provenance_field_is_one_line(chat: Any, bad: dict[str, str]) -> None:
    with pytest.raises(SystemExit) as err:
        chat.parse_provenance(bad)
    assert "chat_parse.json" in str(err.value) and "\n" not in str(err.value)


def test_the_chat_section_written_says_the_provenance(chat: Any, tmp_path: Path) -> None:
    out = tmp_path / "coefficients.json"
    out.write_text("{}", encoding="utf-8")
    section = chat.write(out)
    assert "not recorded" in section["template_parse"]["measured_on"] or "sha256" in section["template_parse"][
        "measured_on"]


def test_cpu_during_counts_this_process_cpu_and_returns_the_work_result(chat: Any) -> None:
    import cpu_time

    def spin() -> int:
        x = 0
        for i in range(3_000_000):
            x += i
        return x

    got, wall, cpu = cpu_time.cpu_during({"me": os.getpid()}, spin)
    # the loop's ~0.1-0.3 s of CPU are many clock ticks (10 ms): counted, and no more than the wall time allows
    assert got == sum(range(3_000_000)) and set(cpu) == {"me"} and 0 < cpu["me"] <= wall + 0.05
