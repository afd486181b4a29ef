"""The held-out published runs (tests/fixtures/predict_heldout.json) and their bench (bench/predict_heldout.py).

No accuracy bound is asserted here: the fixture is test data for the README's held-out table, and a bound
tuned to it would only fit the sample.  What is asserted: every row is sourced and typed, and the bench
predicts every row (or names why the plan is refused) without fitting anything.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from launchcard.hardware import find
from launchcard.predict import DOMAIN_CODES, ENGINES

FIXTURES = Path(__file__).parent / "fixtures"
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
DOC: dict[str, Any] = json.loads((FIXTURES / "predict_heldout.json").read_text(encoding="utf-8"))
ROWS: list[dict[str, Any]] = DOC["rows"]
PLAN_INTS = ("tp", "pp", "dp")
PLAN_OPTIONAL = {"quantization": str, "kv_cache_dtype": str, "max_num_seqs": int, "max_num_batched_tokens": int,
                 "max_model_len": int, "gpu_memory_utilization": float}
MEASURED = ("ttft_ms_mean", "ttft_ms_median", "tpot_ms_mean", "tpot_ms_median", "itl_ms_mean", "output_tok_per_s",
            "request_per_s", "duration_s")


def test_header_says_how_rows_were_chosen_and_what_was_left_out() -> None:
    about = DOC["about"]
    assert {"what", "how_chosen", "not_calibration_or_corpus", "fields"} <= set(about)
    assert "never fitted" in about["what"]
    for source, reasons in DOC["left_out"].items():
        assert source in DOC["sources"]
        assert all(isinstance(n, int) and n > 0 for n in reasons.values())
    for src in DOC["sources"].values():
        assert re.fullmatch(r"[0-9a-f]{40}", src["commit"])


def test_every_row_is_sourced_to_a_pinned_line() -> None:
    ids = [r["id"] for r in ROWS]
    assert len(ids) == len(set(ids)) and ROWS
    for r in ROWS:
        src = r["source"]
        assert re.fullmatch(r"[0-9a-f]{40}", src["commit"]), r["id"]
        assert isinstance(src["line"], int) and src["line"] > 0
        assert src["url"] == f"https://github.com/{src['repo']}/blob/{src['commit']}/{src['path']}#L{src['line']}"
        assert re.search(r"#L\d+$", src["command_url"])
        assert r["id"].split(":", 1)[0] in DOC["sources"]
        assert r["serve_command"].strip()


def test_every_row_is_typed_and_buildable() -> None:
    for r in ROWS:
        rid = r["id"]
        assert find(r["gpu"]).id == r["gpu"], rid
        assert r["engine"] in ENGINES, rid
        assert r["engine_version"] is None or isinstance(r["engine_version"], str)
        p = r["plan"]
        assert all(isinstance(p[k], int) and p[k] >= 1 for k in PLAN_INTS), rid
        assert isinstance(p["ep"], bool)
        assert isinstance(p["dp_attention"], bool)
        # SGLang's DP attention runs its DP ranks inside the TP group
        assert p["tp"] * p["pp"] * (1 if p["dp_attention"] else p["dp"]) <= r["gpus"], rid
        for k, t in PLAN_OPTIONAL.items():
            assert p[k] is None or isinstance(p[k], t), (rid, k)
        assert all(isinstance(f, str) for f in r["unmodelled_flags"])
        w = r["workload"]
        assert isinstance(w["requests"], int) and w["requests"] > 0
        assert isinstance(w["concurrency"], int) and 0 < w["concurrency"] <= w["requests"], rid
        assert w["request_rate"] is None or isinstance(w["request_rate"], float)
        assert isinstance(w["isl_mean"], float) and w["isl_mean"] > 0
        assert isinstance(w["osl_mean"], float) and w["osl_mean"] > 0
        m = r["measured"]
        assert set(m) == set(MEASURED)
        assert all(v is None or (isinstance(v, float) and v >= 0) for v in m.values()), rid
        assert any(m[k] for k in ("ttft_ms_mean", "tpot_ms_mean", "output_tok_per_s")), rid
        cfg = _config(r["config"]["file"])
        assert cfg.is_file() and r["config"]["file"] in DOC["configs"], rid
        json.loads(cfg.read_text(encoding="utf-8"))


def test_the_hardware_each_run_used_is_what_its_source_states() -> None:
    """The catalog GPU a row is predicted on follows the board its source names, each with its line; where no board
    is named the row says so (and which entry was kept); a link the run's own log shows is cited to its line."""
    boards = {"SXM": ("SXM4", "SXM5"), "PCIe": ("PCIe",), "NVL": ("PCIe",)}
    for r in ROWS:
        hw = r.get("hardware")
        if r["id"].startswith("sgl-cookbook"):
            assert hw is None, r["id"]  # not extracted (the page reader rewrites the hardware wording)
            continue
        assert hw is not None and hw["stated"], r["id"]
        src = r["source"]
        assert hw["url"].startswith(f"https://github.com/{src['repo']}/blob/{src['commit']}/"), r["id"]
        assert re.search(r"#L\d+$", hw["url"]), r["id"]
        acc = find(r["gpu"])
        if hw["form_factor"] is None:
            assert hw["note"] and r["gpu"] in hw["note"] and "kept" in hw["note"], r["id"]
        else:
            assert hw["form_factor"] in hw["stated"] and acc.form_factor in boards[hw["form_factor"]], r["id"]
        if hw["gpu_link"] is not None:
            assert re.search(r"\.log#L\d+$", hw["gpu_link_url"]), r["id"]
        assert hw["gpu_p2p"] in (None, False), r["id"]  # stated only where a log shows none
    # dennislee's TP 2 runs: the start-up log shows no GPU peer-to-peer access (not NVLink); their one-GPU runs no link
    dl = [r for r in ROWS if r["id"].startswith("dennislee")]
    assert dl and all(("peer-to-peer" in (r["hardware"]["gpu_link"] or "")) == (r["plan"]["tp"] > 1) for r in dl)
    assert all((r["hardware"]["gpu_p2p"] is False) == (r["plan"]["tp"] > 1) for r in dl)
    assert all(r["hardware"]["gpu_p2p"] is None for r in ROWS if not r["id"].startswith("dennislee") and
               r.get("hardware"))


def test_dennislee_engine_logs_and_client_are_cited() -> None:
    """What each start-up log prints of vLLM's own settings, at its line, and what the client sent: the model's
    sampling defaults are logged, but benchmark_serving.py sends temperature 0 and no penalty (greedy)."""
    dl = [r for r in ROWS if r["id"].startswith("dennislee")]
    for r in dl:
        log = r["engine_log"]
        assert log["max_num_batched_tokens"] == 2048, r["id"]  # vLLM 0.10's A100 default for vllm serve
        assert log["cuda_graphs"].startswith("cudagraph_mode 1 (PIECEWISE") and "512 tokens" in log["cuda_graphs"]
        assert "'top_k': 20" in log["sampling_defaults"] and "greedy" in log["client_sampling"]
        log_file = r["source"]["command_url"].split("#")[0]
        for key in ("max_num_batched_tokens_url", "cuda_graphs_url", "sampling_defaults_url"):
            assert re.fullmatch(re.escape(log_file) + r"#L\d+", log[key]), (r["id"], key)
        assert log["client_sampling_url"].startswith("https://github.com/vllm-project/vllm/blob/")


def test_runs_without_gpu_p2p_are_predicted_with_no_gpu_p2p(bench: Any) -> None:
    """The bench times them through host memory (``--no-gpu-p2p``) and prints that flag in each row's command."""
    tp2 = [r for r in ROWS if r["id"].startswith("dennislee") and r["plan"]["tp"] > 1]
    assert tp2 and all("--no-gpu-p2p" in bench.cli_argv(r) for r in tp2)
    assert all("--no-gpu-p2p" not in bench.cli_argv(r) for r in ROWS if r not in tp2)
    f = bench.facts_for(tp2[0], bench.config_file(tp2[0]["config"]["file"]), 2048)
    assert not f.hardware.p2p and f.hardware.link_bps == 32e9
    assert any(x.code == "gpu-p2p" for x in f.findings)


def test_runs_whose_log_shows_flashinfer_sampling_are_planned_with_it(bench: Any) -> None:
    """vLLM 0.10.1.1 logs 'Using FlashInfer for top-p & top-k sampling' when it takes FlashInfer's kernel (an extra
    of its wheel, so the command does not show it): the row carries that line, the bench plans the start-up sampler
    pass on that path (``--flashinfer-sampler``), and only rows whose log says so."""
    dl = [r for r in ROWS if r["id"].startswith("dennislee")]
    assert dl and all(r["engine_log"]["flashinfer_sampler"] is True for r in dl)
    for r in dl:
        log_file = r["source"]["command_url"].split("#")[0]
        assert re.fullmatch(re.escape(log_file) + r"#L\d+", r["engine_log"]["flashinfer_sampler_url"]), r["id"]
        assert "--flashinfer-sampler" in bench.cli_argv(r), r["id"]
    assert all("--flashinfer-sampler" not in bench.cli_argv(r) for r in ROWS if r not in dl)
    # the plan's KV pool grows by what the PyTorch sort path's larger sampler peak took (same row, same GPU)
    row = next(r for r in dl if r["plan"]["tp"] == 1)
    cfg = bench.config_file(row["config"]["file"])
    with_log = bench.facts_for(row, cfg, 2048)
    plain = bench.facts_for({**row, "engine_log": {**row["engine_log"], "flashinfer_sampler": None}}, cfg, 2048)
    assert with_log.kv_capacity_tokens > plain.kv_capacity_tokens


def test_config_copies_name_their_upstream_file() -> None:
    used = {r["config"]["file"] for r in ROWS}
    assert used == set(DOC["configs"])
    for name, src in DOC["configs"].items():
        # a copy of the file itself, or (with a note saying where it was read) launchcard's own captured copy
        assert src["path"].endswith("/" + name) or src.get("note"), name
        assert src["url"] == f"https://github.com/{src['repo']}/blob/{src['commit']}/{src['path']}"


def test_a_row_read_with_a_sibling_checkpoints_config_names_it() -> None:
    """The header's rule: a model without its own config.json is read only with a named sibling checkpoint's (the
    -Instruct-2507-FP8 rows with Qwen3-235B-A22B-FP8's, as the -Instruct-2507 rows with Qwen3-235B-A22B's)."""
    sibling = [r for r in ROWS if r["config"]["file"] != r["model"].replace("/", "--") + "_config.json"]
    assert sibling
    for r in ROWS:
        assert bool(r["config"]["note"]) == (r in sibling), r["id"]


def _config(name: str) -> Path:
    """The corpus' own file where the registry names one (third-party data read in place), else the copy."""
    corpus = DOC["configs"][name].get("corpus")
    return CORPUS / corpus if corpus else FIXTURES / "predict_heldout_configs" / name


@pytest.fixture(scope="module")
def bench() -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import predict_heldout

    return predict_heldout


def test_bench_predicts_every_row_or_says_why(bench: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The whole fixture through the library calls ``launchcard predict`` makes (a few seconds of CPU)."""
    assert bench.main(["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rows"] == len(ROWS) == len(out["scored"])
    for s in out["scored"]:
        if "error" in s:
            assert "\n" not in s["error"] and s["error"]
            continue
        assert all(v > 0 for v in s["predicted"].values()), s["id"]
        for key in ("tpot", "ttft", "tput"):
            assert key not in s or isinstance(s[key], float)
    total = out["all"]
    assert total["rows"] + total["refused"] == len(ROWS)
    assert {"tpot_median", "tpot_p90", "ttft_median", "tput_median"} <= set(total)
    assert {"model x gpu", "model x gpu, closed-loop runs", "model x gpu x workload"} == set(out["ranking"])
    # inside / outside the calibrated domain, by the predictions' own domain findings: every predicted row in one
    dom = out["domain"]
    assert dom["calibrated domain: inside"]["rows"] + dom["calibrated domain: outside"]["rows"] == total["rows"]
    outside = [s for s in out["scored"] if s.get("outside")]
    assert dom["calibrated domain: outside"]["rows"] == len(outside)
    assert all(set(s["outside"]) <= set(DOMAIN_CODES) for s in outside)
    for code in {c for s in outside for c in s["outside"]}:
        key = f"calibrated domain: outside ({code.removeprefix('domain-')})"
        assert dom[key]["rows"] == sum(code in s["outside"] for s in outside)


def test_bench_table_names_each_regime(bench: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--limit", "8"]) == 0
    text = capsys.readouterr().out
    assert "8 held-out runs" in text
    assert "| all (" in text and "engine vllm" in text and "Spearman, model x gpu" in text
    assert "| calibrated domain: inside (" in text and "| calibrated domain: outside (" in text


def test_bench_predicts_what_the_cli_prints(bench: Any) -> None:
    """The bench's in-process path equals ``launchcard predict`` run with the row's own arguments (``cli_argv``):
    one row per engine, a command with environment assignments, and a plan the CLI refuses."""
    from typer.testing import CliRunner

    from launchcard.cli import app

    picks = [next(r for r in ROWS if r["engine"] == e) for e in ("vllm", "sglang", "trtllm")]
    picks.append(next(r for r in ROWS if any("=" in f and f[0].isupper() for f in r["unmodelled_flags"])))
    scored = {r["id"]: bench.predict_row(r) for r in ROWS}
    picks.append(next(r for r in ROWS if "error" in scored[r["id"]]))
    for row in picks:
        mine = scored[row["id"]]
        res = CliRunner().invoke(app, bench.cli_argv(row))
        if "error" in mine:
            assert res.exit_code in (1, 2), (row["id"], res.output)
            continue
        assert res.exit_code == 0, (row["id"], res.output)
        cli = json.loads(res.output)
        for key in ("tpot_ms_mean", "ttft_ms_mean", "output_tok_per_s"):
            assert cli[key] == pytest.approx(mine["predicted"][key], rel=1e-6, abs=1e-3), (row["id"], key)
        # the same domain findings (one fact, computed by predict, read by both)
        assert sorted({f["code"] for f in cli["findings"] if f["code"] in DOMAIN_CODES}) == mine["outside"], row["id"]


def test_each_run_is_fed_the_workload_its_client_sent(bench: Any) -> None:
    """All at once (vllm bench serve's default rate inf) or a closed loop of the printed max concurrency, the run's
    request count, the printed mean lengths, and a spread only where the client's command states one."""
    spread = 0
    for row in ROWS:
        w, wl = bench.workload(row), row["workload"]
        assert w.validate().requests() == wl["requests"]
        if wl["arrivals"].startswith("all at once"):
            assert w.burst and w.arrivals == "all at once"
        else:
            assert w.closed_loop and w.concurrency == wl["concurrency"]
        assert (w.isl, w.osl) == (max(1, round(wl["isl_mean"])), max(2, round(wl["osl_mean"])))
        ratio, how = bench.lengths(row)
        assert w.range_ratio == ratio
        if ratio:
            spread += 1
            assert "uniform" in row["source"]["label"] and "from the command" in how
            assert "--random-range-ratio" in bench.cli_argv(row)
        old = bench.workload(row, "means")
        assert old.closed_loop and old.concurrency == wl["concurrency"] and not old.range_ratio
    assert spread >= 30  # the SGLang cookbook's random runs (uniform lengths stated by their commands)


def test_each_run_is_predicted_on_the_endpoint_its_bench_command_used() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import predict_heldout

    by_source: dict[str, set[str]] = {}
    for row in ROWS:
        by_source.setdefault(row["id"].split(":", 1)[0], set()).add(predict_heldout.endpoint(row))
        argv = predict_heldout.cli_argv(row)
        assert ("--endpoint" in argv) == (predict_heldout.endpoint(row) == "chat")
    # GPUStack: vllm bench serve --backend openai-chat on every page; dennislee: --backend vllm (completions);
    # the SGLang cookbook: --backend sglang, its image rows sglang-oai-chat
    assert by_source == {"gpustack": {"chat"}, "dennislee": {"completions"}, "sgl-cookbook": {"completions", "chat"}}
    image = [r for r in ROWS if r["workload"]["dataset"] == "image"]
    assert image and all(predict_heldout.endpoint(r) == "chat" for r in image)


def test_image_runs_spread_their_outputs_as_their_client_drew_them() -> None:
    """The SGLang cookbook's image runs (sglang.bench_serving --dataset-name image, --random-output-len 1024 at
    its default range ratio 0) sent outputs uniform in 1..1024: predicted with that spread around the printed
    mean, so a closed loop's clients end apart and their next prompts land between decode steps."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import predict_heldout

    image = [r for r in ROWS if r["workload"]["dataset"] == "image"]
    assert len(image) == 3
    for row in image:
        ratio, how = predict_heldout.lengths(row)
        assert ratio == pytest.approx(1023 / 1025) and "uniform outputs" in how
        argv = predict_heldout.cli_argv(row)
        assert float(argv[argv.index("--random-range-ratio") + 1]) == ratio


def test_every_sharegpt_run_is_predicted_with_per_request_lengths() -> None:
    """A ShareGPT run's requests vary in length whichever client drew them (vllm bench serve's capped sampler on
    GPUStack's pages, sglang.bench_serving's uncapped one on the SGLang cookbook's); equal requests of the mean
    lengths would finish and re-enter a closed loop together."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import predict_heldout

    share = [r for r in ROWS if r["workload"]["dataset"] == "sharegpt"]
    cookbook = [r for r in share if r["id"].startswith("sgl-cookbook:")]
    assert cookbook and len(share) > len(cookbook)
    for row in share:
        argv = predict_heldout.cli_argv(row)
        assert argv[argv.index("--dataset") + 1] == "sharegpt"
        how = predict_heldout.lengths(row)[1]
        assert ("standing in for sglang.bench_serving's" in how) == (row in cookbook)
    assert not [r for r in ROWS if r["workload"]["dataset"] != "sharegpt" and "--dataset" in
                predict_heldout.cli_argv(r)]
