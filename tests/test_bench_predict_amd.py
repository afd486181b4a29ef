"""bench/predict_amd.py: the AMD fixture's rows read from dstack's online_results.csv (a synthetic two-row CSV in
its layout, with the byte-order mark the real file starts with) and the shipped fixture's provenance."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from predict_amd import (  # noqa: E402
    FIXTURE,
    IX_APP,
    IX_SERVERS,
    ROCM_KEY,
    SERVERS,
    extract,
    fit_rows,
    folds,
    groups,
    inferencex_row,
    main,
    prefill_evidence,
    server_of,
    with_inferencex,
)

HEAD = ("GPU,backend,dataset_name,request_rate,max_concurrency,sharegpt_output_len,random_input_len,random_output_len,"
        "random_range_ratio,duration,completed,total_input_tokens,total_output_tokens,total_output_tokens_retokenized,"
        "request_throughput,input_throughput,output_throughput,mean_e2e_latency_ms,median_e2e_latency_ms,"
        "std_e2e_latency_ms,p99_e2e_latency_ms,mean_ttft_ms,median_ttft_ms,std_ttft_ms,p99_ttft_ms,mean_tpot_ms,"
        "median_tpot_ms,std_tpot_ms,p99_tpot_ms,mean_itl_ms,median_itl_ms,std_itl_ms,p99_itl_ms,concurrency,,")
ROW = "mi300x,sglang,{data},,4,,3200,800,1,3695.0,500,1600000,400000,398535,0.135,433.0,108.25,1,1,1,1,1644.6,1607.0," \
      "1,1,34.94,34.90,1,1,34.94,34.84,1,1,4.0,,"
TRT = "h200,trt-llm,random,,4,,3200,800,1,5630.8,500,1600000,400000,398200,0.09,284.2,71.0,1,1,1,1,1003.8,1038.5,1,1," \
      "55.1,55.1,1,1,58.2,54.9,1,1,111.1,,"


def test_extract_keeps_random_rows_with_their_line_and_server() -> None:
    text = "\ufeff" + "\n".join([HEAD, ROW.format(data="random"), ROW.format(data="generated-shared-prefix"), TRT])
    fx = extract(text)
    assert fx["about"]["left_out"] == {"generated-shared-prefix (prefix-cache workload)": 1, "trt-llm (H200 only)": 1}
    (row,) = fx["rows"]
    assert row["source"]["line"] == 2 and row["source"]["url"].endswith("online_results.csv#L2")
    assert row["engine_version"] == "0.4.2.post4" and "--enable-dp-attention" not in row["serve_command"]
    assert row["workload"] == {"requests": 500, "concurrency": 4, "request_rate": None, "arrivals": "closed loop",
                               "isl_mean": 3200.0, "osl_mean": 800.0, "dataset": None}
    assert row["measured"]["tpot_ms_mean"] == 34.94 and row["measured"]["output_tok_per_s"] == 108.25


def test_shipped_fixture_rows_cite_their_source_and_a_stated_server() -> None:
    fx = json.loads(FIXTURE.read_text(encoding="utf-8"))
    dstack = [r for r in fx["rows"] if r["id"].startswith("dstack:")]
    ix = [r for r in fx["rows"] if r["id"].startswith("inferencex:")]
    assert len(dstack) == 36 and len(ix) == 60 and len(fx["rows"]) == 96
    for row in dstack:
        assert row["source"]["commit"] == "7f37e6697725e58dd09b9ef190b62ce19f01d45e"
        assert row["id"].endswith(f"#L{row['source']['line']}")
        assert row["serve_command"] == SERVERS[(row["gpu"], row["engine"])]["command"]
    for row in ix:  # each names its element of the InferenceX API snapshot and the run it came from
        key = row["source"]["key"]
        assert row["source"]["commit"] == IX_APP[1] and key["hardware"] == row["gpu"]
        assert row["id"] == f"inferencex:{row['gpu']}-sglang-dsr1-fp8-tp8-{key['isl']}x{key['osl']}-c{key['conc']}"
        assert row["source"]["url"].startswith("https://github.com/SemiAnalysisAI/InferenceX/actions/runs/")
        srv = IX_SERVERS[server_of(row)]  # the run and the server the API row names
        assert srv["gpu"] == row["gpu"] and key["date"] == srv["date"] and srv["run"] in row["source"]["url"]
    assert {r["gpu"]: sum(x["gpu"] == r["gpu"] for x in ix) for r in ix} == \
        {"mi300x": 15, "h200": 15, "mi325x": 15, "mi355x": 15}
    assert sorted({r["gpu"] for r in fit_rows(fx)}) == ["mi300x", "mi325x"] and len(fit_rows(fx)) == 30


def test_an_inferencex_point_is_a_closed_loop_of_ten_requests_a_client_in_its_length_band() -> None:
    row = inferencex_row("mi300x", 8192, 1024, 16, [0.04, 0.039, 1.5, 0.46, 0.0403, 46.0])
    assert row["workload"] == {"requests": 160, "concurrency": 16, "request_rate": None, "arrivals": "closed loop",
                               "isl_mean": (6553 + 8192) / 2, "osl_mean": (819 + 1024) / 2, "dataset": None}
    assert row["source"]["label"] == "random: input uniform 6553..8192, output uniform 819..1024"
    assert row["measured"]["tpot_ms_mean"] == 40.0 and row["measured"]["output_tok_per_s"] == 46.0 * 8
    assert "--attention-backend aiter" in row["serve_command"] and "SGLANG_USE_AITER=1" in row["unmodelled_flags"]
    h200 = inferencex_row("h200", 1024, 1024, 4, [0.01] * 6)["serve_command"]
    assert "--max-running-requests 512" in h200  # the 1k/1k branch of dsr1_fp8_h200.sh (256 otherwise)
    assert "--max-running-requests 256" in inferencex_row("h200", 1024, 8192, 4, [0.01] * 6)["serve_command"]
    assert set(folds([row, h200_row := inferencex_row("h200", 1024, 1024, 4, [0.01] * 6)], "shape")) == \
        {"8192x1024", "1024x1024"}
    assert set(folds([row, h200_row], "clients")) == {"16", "4"}


def test_groups_take_the_measured_over_predicted_median() -> None:
    rows = [{"gpu": "mi300x", "engine": "sglang", "tpot": -0.5, "measured": {"tpot_ms_mean": 20.0},
             "predicted": {"tpot_ms_mean": 10.0}},
            {"gpu": "mi300x", "engine": "sglang", "tpot": -0.75, "measured": {"tpot_ms_mean": 40.0},
             "predicted": {"tpot_ms_mean": 10.0}},
            {"gpu": "mi300x", "engine": "sglang", "error": "refused"}]
    g = groups(rows)["mi300x:sglang"]
    assert g["rows"] == 2 and g["measured_over_predicted_median"] == 3.0
    assert g["measured_over_predicted_range"] == [2.0, 4.0]


def test_mi355x_points_take_their_runs_server_and_a_table_replaces_only_its_servers() -> None:
    old = inferencex_row("mi355x@22725876766", 1024, 8192, 16, [0.013] * 6)
    new = inferencex_row("mi355x@25281476062", 1024, 1024, 32, [0.02] * 6)
    assert old["gpu"] == new["gpu"] == "mi355x" and server_of(new) == "mi355x@25281476062"
    assert "--num-continuous-decode-steps 4 " in old["serve_command"]  # 9d39c92ee (PR #865)
    assert "--num-continuous-decode-steps 8 " in new["serve_command"]  # a2180b61c (PR #1243)
    assert old["serve_command"].endswith("--cuda-graph-max-bs 16")  # the run's clients
    assert new["serve_command"].endswith("--cuda-graph-max-bs 32")
    assert old["image"] == "lmsysorg/sglang:v0.5.9-rocm700-mi35x" and old["engine_version"] == "0.5.9"
    mi300x = inferencex_row("mi300x", 1024, 1024, 4, [0.02] * 6)
    assert server_of({"gpu": "mi300x", "source": {}}) == "mi300x"  # a row written before the key was recorded
    fx = with_inferencex({"rows": [mi300x, old]}, {"mi355x@25281476062": [[1024, 1024, 32] + [0.02] * 6]})
    assert [server_of(r) for r in fx["rows"]] == ["mi300x", "mi355x@22725876766", "mi355x@25281476062"]


def _ix(gpu: str, isl: int, conc: int, mean_ms: float, median_ms: float) -> dict[str, object]:
    row = inferencex_row("mi300x", isl, 1024, conc, [0.02, 0.02, mean_ms * 1e-3, median_ms * 1e-3, 0.02, 100.0])
    return {**row, "gpu": gpu}


def test_prefill_evidence_reads_low_load_medians_and_a_stall_from_the_mean() -> None:
    rows = [_ix("mi300x", 1024, 4, 400.0, 160.0), _ix("mi300x", 8192, 4, 1300.0, 500.0),
            _ix("mi300x", 1024, 16, 500.0, 170.0)]  # 16 clients: not the lowest load, no median point
    ev = prefill_evidence(rows)["mi300x"]
    assert ev["clients"] == 4 and ev["median_ttft_ms"] == {"922": 160.0, "7372": 500.0}
    # (500 - 160) ms over the 7372.5 - 921.5 = 6451 token gap of the bands' means
    assert ev["median_us_per_prompt_token"] == round(340e3 / 6451, 1)
    # (mean - median) x 10 requests a client: 2.4 s and 3.3 s
    assert ev["opening_stall_s"]["inferencex:mi300x-sglang-dsr1-fp8-tp8-1024x1024-c4"] == 2.4
    assert ev["opening_stall_s"]["inferencex:mi300x-sglang-dsr1-fp8-tp8-1024x1024-c16"] == 3.3


def test_the_shipped_runs_ttft_means_carry_a_stall_so_prefill_is_not_fitted() -> None:
    """The evidence FIT_TERMS/PREFILL_TERMS cite: on MI300X every 1k-prompt run's mean TTFT sits 2 s or more (a
    one-time stall, times requests over clients) above its median, at 4 clients as at 64, while H200's same sweep
    sits near 1 s; so rocm:sglang records no prefill term and falls back to gpu:sglang's."""
    ev = prefill_evidence(fit_rows(json.loads(FIXTURE.read_text())) +
                          [r for r in json.loads(FIXTURE.read_text())["rows"] if r["id"].startswith("inferencex:h200")])
    stall = {g: [s for k, s in ev[g]["opening_stall_s"].items() if "-1024x" in k] for g in ("mi300x", "h200")}
    assert len(stall["mi300x"]) == 10 and min(stall["mi300x"]) >= 2.5
    assert max(stall["h200"]) < 2.5 and ev["mi300x"]["median_us_per_prompt_token"] > 45
    sets = json.loads((ROOT / "src" / "launchcard" / "data" / "predict_coefficients.json").read_text())["sets"]
    assert "extend_layer_us" not in sets[ROCM_KEY]["values"]


def test_the_prefill_fit_is_report_only() -> None:
    try:
        main(["--fit", "--prefill", "--write"])
    except SystemExit as e:
        assert e.code == 2
    else:
        raise AssertionError("--prefill --write was accepted")
