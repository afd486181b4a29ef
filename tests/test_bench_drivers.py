"""`bench --driver`: external load generators, their command lines, their result files, their failures.

The result files under fixtures/bench/ are real output of the tools (see
fixtures/bench/SOURCE.md); reading them must give the figures the tools
themselves report.  The live runs against a real server are in
test_live_server.py.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import sys
import time
from pathlib import Path

import httpx
import pytest

from launchcard.bench import DRIVERS, DriverCall, Workload, run_bench, run_driver
from launchcard.bench import _drivers as drivers
from launchcard.errors import EndpointError, InputError
from test_bench import MODEL, stream_handler, sync_handler

FIXTURES = Path(__file__).parent / "fixtures" / "bench"
W = Workload(input_tokens=128, output_tokens=64, num_prompts=12, concurrency=3, warmup=2, seed=5, timeout_s=30,
             temperature=0.0, top_p=1.0)


def call(tmp_path: Path, w: Workload = W, tokenizer: str | None = "/models/m") -> DriverCall:
    return DriverCall(endpoint="http://127.0.0.1:8000", model="served", tokenizer=tokenizer, workload=w, seed=w.seed,
                      out_dir=tmp_path)


def _opts(argv: list[str]) -> dict[str, str | bool]:
    out: dict[str, str | bool] = {}
    for i, a in enumerate(argv):
        if a.startswith("--"):
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            out[a] = nxt if nxt is not None and not nxt.startswith("--") else True
    return out


# --- command lines ------------------------------------------------------------------------------------------

def test_vllm_argv_states_the_whole_workload(tmp_path: Path) -> None:
    o = _opts(drivers.VLLM.argv(call(tmp_path)))
    assert (o["--random-input-len"], o["--random-output-len"], o["--random-range-ratio"]) == ("128", "64", "0")
    assert (o["--num-prompts"], o["--max-concurrency"], o["--num-warmups"], o["--seed"]) == ("12", "3", "2", "5")
    assert o["--request-rate"] == "inf" and o["--ignore-eos"] is True
    assert (o["--temperature"], o["--top-p"]) == ("0.0", "1.0")
    assert o["--served-model-name"] == "served" and o["--model"] == o["--tokenizer"] == "/models/m"
    assert o["--base-url"] == "http://127.0.0.1:8000" and o["--endpoint"] == "/v1/completions"
    assert o["--save-detailed"] is True and o["--result-dir"] == str(tmp_path)
    # No local tokenizer: vLLM's bench loads the served name's own.
    o = _opts(drivers.VLLM.argv(call(tmp_path, Workload(request_rate=2.5), tokenizer=None)))
    assert o["--model"] == "served" and "--tokenizer" not in o and o["--request-rate"] == "2.5"


def test_guidellm_scenario_states_the_whole_workload(tmp_path: Path) -> None:
    argv = drivers.GUIDELLM.argv(call(tmp_path))
    assert argv[:2] == ["run", "-c"]
    spec = json.loads(Path(argv[2]).read_text())["spec"]
    b = spec["backend"]
    assert (b["kind"], b["target"], b["model"], b["request_format"]) == ("openai_http", "http://127.0.0.1:8000",
                                                                         "served", "/v1/completions")
    assert b["extras"]["body"] == {"ignore_eos": True, "temperature": 0.0, "top_p": 1.0} and b["timeout"] == 30
    assert spec["profile"] == {"kind": "concurrent", "streams": 3, "warmup": {"mode": "requests", "value": 2}}
    # guidellm's warm-up requests are part of its request budget
    assert spec["constraints"] == [{"kind": "max_requests", "count": 14}]
    assert spec["data"] == [{"kind": "synthetic_text", "prompt_tokens": 128, "output_tokens": 64}]
    assert spec["seed"] == {"kind": "static", "value": 5} and spec["tokenizer"]["model"] == "/models/m"
    assert spec["outputs"] == [{"kind": "json", "path": str(tmp_path / "result.json")}]
    poisson = json.loads(Path(drivers.GUIDELLM.argv(call(tmp_path, Workload(request_rate=4, warmup=0)))[2])
                         .read_text())["spec"]["profile"]
    assert poisson == {"kind": "poisson", "rate": 4, "max_concurrency": 4}


# --- result files: the tools' own figures come back ------------------------------------------------------------

def test_vllm_result_gives_the_figures_vllm_itself_reports(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "vllm-bench-serve-0.32.0.json", tmp_path / "result.json")
    run = drivers.VLLM.read(tmp_path)
    own = json.loads((FIXTURES / "vllm-bench-serve-0.32.0.json").read_text())
    ok = [r for r in run.records if r.ok]
    assert len(run.records) == own["completed"] + own["failed"] and len(ok) == own["completed"]
    from launchcard.bench import summarize

    s = summarize(run.records, run.duration_s)
    assert s.ttft_ms and s.tpot_ms and s.itl_ms and s.e2e_ms and s.output_tokens_per_s
    assert math.isclose(s.output_tokens_per_s, own["output_throughput"], rel_tol=1e-3)
    for ours, theirs in ((s.ttft_ms, "ttft"), (s.tpot_ms, "tpot"), (s.itl_ms, "itl"), (s.e2e_ms, "e2el")):
        assert math.isclose(ours.p50, own[f"median_{theirs}_ms"], rel_tol=1e-3), theirs
        assert math.isclose(ours.p99, own[f"p99_{theirs}_ms"], rel_tol=1e-3), theirs
        assert math.isclose(ours.mean, own[f"mean_{theirs}_ms"], rel_tol=1e-3), theirs


def test_guidellm_result_gives_the_requests_guidellm_itself_counts(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "guidellm-0.8.1.json", tmp_path / "result.json")
    run = drivers.GUIDELLM.read(tmp_path)
    own = json.loads((FIXTURES / "guidellm-0.8.1.json").read_text())["benchmarks"][0]
    assert run.version == "0.8.1" and math.isclose(run.duration_s, own["duration"])
    ok = [r for r in run.records if r.ok]
    # The requests sent inside guidellm's measured window: the set its own TTFT figures come from
    # (a warm-up request still running when the window opens is not one of them).
    theirs = own["metrics"]["time_to_first_token_ms"]["successful"]
    assert len(ok) == theirs["count"] == 8 and len(own["requests"]["successful"]) == 10
    ttft = sorted(r.ttft_s * 1000 for r in ok if r.ttft_s is not None)
    assert math.isclose(statistics.fmean(ttft), theirs["mean"], rel_tol=1e-9)
    # guidellm's percentiles are nearest-rank (its median is one of the samples); launchcard's
    # interpolate between ranks as numpy and vLLM's bench do, so those differ by definition.
    assert any(math.isclose(t, theirs["median"], rel_tol=1e-9) for t in ttft)
    assert all(r.output_tokens == 16 and r.prompt_tokens == 32 and r.itl_s == () for r in ok)
    # e2e ends at the last token, as vLLM's bench times it
    assert all(r.e2e_s is not None and r.ttft_s is not None and r.e2e_s > r.ttft_s for r in ok)


@pytest.mark.parametrize("driver", sorted(DRIVERS))
@pytest.mark.parametrize("content, why", [
    (None, "wrote no result file"), ("{not json", "not JSON"), ("[1, 2]", "not an object"),
    ('{"benchmarks": [], "duration": 1}', ""),
    ('{"duration": 1, "input_lens": [1, 2], "output_lens": [1], "ttfts": [1], "itls": [[1]], "latencies": [1], '
     '"errors": [""], "benchmarks": [1]}', ""),
    ('{"duration": 1, "input_lens": ["many"], "output_lens": [1], "ttfts": [1], "itls": [[1]], "latencies": [1], '
     '"errors": [""], "benchmarks": [{"start_time": 0, "end_time": 1, "requests": {"successful": [{'
     '"request_start_time": 0.5, "prompt_tokens": "many", "output_tokens": 1, "info": {"timings": {'
     '"request_start": 0.5, "first_token_iteration": 0.6, "last_token_iteration": 0.7}}}], "errored": [], '
     '"incomplete": []}}]}', "wrong type"),
])
def test_an_unreadable_result_is_one_endpoint_error(tmp_path: Path, driver: str, content: str | None,
                                                    why: str) -> None:
    if content is not None:
        (tmp_path / "result.json").write_text(content)
    with pytest.raises(EndpointError) as exc:
        DRIVERS[driver].read(tmp_path)
    assert "unreadable load-generator result" in str(exc.value) and why in str(exc.value)
    assert "\n" not in str(exc.value)


# --- running the tool: missing, failing, overrunning -------------------------------------------------------------

def _fake_tool(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "tool.py"
    script.write_text("import sys, time, json, shutil\n" + body)
    return [sys.executable, str(script)]


def test_a_missing_tool_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(InputError) as exc:
        run_driver(drivers.VLLM, ["/nonexistent/vllm", "bench", "serve"], call(tmp_path))
    assert exc.value.exit_code == 2 and "not found" in str(exc.value) and "pip install vllm" in str(exc.value)


def test_a_failing_tool_names_its_last_line(tmp_path: Path) -> None:
    cmd = _fake_tool(tmp_path, "print('loading...'); print('ValueError: no tokenizer at /models/m'); sys.exit(3)")
    with pytest.raises(EndpointError) as exc:
        run_driver(drivers.VLLM, cmd, call(tmp_path))
    msg = str(exc.value)
    assert exc.value.exit_code == 1 and "exited with status 3" in msg and "no tokenizer at /models/m" in msg


def test_an_overrunning_tool_is_killed_at_its_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(drivers, "START_ALLOWANCE_S", 0.0)
    w = Workload(num_prompts=1, concurrency=1, warmup=0, timeout_s=0.5)  # 2 waves x 0.5 s
    cmd = _fake_tool(tmp_path, "print('sending', flush=True); time.sleep(60)")
    began = time.monotonic()
    with pytest.raises(EndpointError) as exc:
        run_driver(drivers.VLLM, cmd, call(tmp_path, w))
    assert time.monotonic() - began < 5
    assert "did not finish within 1s" in str(exc.value) and "sending" in str(exc.value)


def test_the_time_limit_grows_with_the_waves_of_requests() -> None:
    small, big = Workload(num_prompts=4, concurrency=4, warmup=0), Workload(num_prompts=40, concurrency=4, warmup=0)
    assert drivers.time_limit(small) < drivers.time_limit(big)
    assert drivers.time_limit(big) == drivers.START_ALLOWANCE_S + 11 * big.timeout_s


# --- the whole run: probe, canary, the tool, conditions ---------------------------------------------------------

def _copying_tool(tmp_path: Path, fixture: str) -> list[str]:
    """Stands in for vLLM's bench: burns 0.3 s of CPU, then writes a real result file where --result-dir says."""
    return _fake_tool(tmp_path, "t = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
                                f"out = sys.argv[sys.argv.index('--result-dir') + 1]\n"
                                f"shutil.copy({str(FIXTURES / fixture)!r}, out + '/result.json')\n")


def test_a_driven_run_records_the_tool_and_its_command_line(tmp_path: Path) -> None:
    cmd = _copying_tool(tmp_path, "vllm-bench-serve-0.32.0.json")
    w = Workload(input_tokens=32, output_tokens=16, num_prompts=8, concurrency=2, warmup=0, timeout_s=5)
    res = run_bench("http://fake", w, transport=httpx.MockTransport(stream_handler()),
                    sync_transport=httpx.MockTransport(sync_handler), driver="vllm", driver_cmd=cmd)
    own = json.loads((FIXTURES / "vllm-bench-serve-0.32.0.json").read_text())
    assert res.model == MODEL and res.summary.completed == own["completed"]
    assert res.conditions.load_generator == "vllm bench serve"
    assert res.load_generator_argv is not None and res.load_generator_argv[: len(cmd)] == tuple(cmd)
    assert "--served-model-name" in res.load_generator_argv
    state = res.conditions.cache_state
    assert state is not None and "vllm bench serve's synthetic dataset" in state
    assert "vllm bench serve's own prompts" in res.sizing_note
    # The tool's own CPU is measured (its process, once waited for), not the caller's.
    cpu = res.load_generator_cpu
    assert cpu is not None and 0.25 <= cpu.cpu_s < cpu.wall_s + 1 and cpu.share > 0 and cpu.startup_included


def test_a_driven_run_against_a_hanging_endpoint_fails_before_the_tool_starts(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    cmd = _fake_tool(tmp_path, f"open({str(marker)!r}, 'w').close()\n")
    w = Workload(num_prompts=4, concurrency=2, warmup=0, timeout_s=1)
    began = time.monotonic()
    with pytest.raises(EndpointError) as exc:
        run_bench("http://fake", w, transport=httpx.MockTransport(stream_handler("hang")),
                  sync_transport=httpx.MockTransport(sync_handler), driver="vllm", driver_cmd=cmd)
    assert time.monotonic() - began < 1 + 5
    assert "before vllm bench serve was started" in str(exc.value) and "timeout after 1s" in str(exc.value)
    assert not marker.exists()


def test_an_unknown_driver_is_bad_input() -> None:
    with pytest.raises(InputError) as exc:
        run_bench("http://fake", W, driver="locust")
    assert "unknown load generator 'locust'" in str(exc.value) and "guidellm" in str(exc.value)


@pytest.mark.parametrize("args, message", [
    (["--driver", "locust"], "--driver: unknown load generator 'locust'"),
    (["--driver-cmd", "vllm bench serve"], "--driver-cmd: --driver-cmd needs an external --driver"),
    (["--driver", "vllm", "--driver-cmd", "'unclosed"], "--driver-cmd: not a shell-quoted command"),
    (["--driver", "vllm", "--driver-cmd", "  "], "--driver-cmd: empty command"),
])
def test_cli_rejects_bad_driver_options_in_one_line(args: list[str], message: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from launchcard.cli import main

    assert main(["bench", "--endpoint", "http://127.0.0.1:9", "--no-record", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
