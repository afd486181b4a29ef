"""Fleet sweeps: the sweep file's bad input, and Ray (a local 2-worker cluster) giving the process pool's rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import run_cli
from launchcard.errors import LaunchcardError
from launchcard.plansearch import load_sweep, run_sweep

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
HF = SHARED / "corpus" / "hf"
ROOT = Path(__file__).resolve().parents[1]

SWEEP = f"""\
models:
  - {{id: openai/gpt-oss-120b, config: {HF / "openai/gpt-oss-120b/config.json"}}}
  - {{id: deepseek-ai/DeepSeek-V4-Flash, config: {HF / "deepseek-ai/DeepSeek-V4-Flash/config.json"}}}
gpus:
  - {{gpu: h100, count: 8}}
  - {{gpu: b200, count: 4}}
workloads:
  - {{name: chat, isl: 1024, osl: 256, concurrency: 32, slo: "ttft=2000,tpot=40"}}
  - {{name: rag, isl: 8192, osl: 256, rate: 2, slo: "ttft=4000"}}
  - {{name: impossible, isl: 512, osl: 128, concurrency: 8, slo: "tpot=0.01"}}
max_num_seqs: [16, 64]
"""


def _gpt_oss_on_8_h100(tmp_path: Path, workloads: str) -> Path:
    """A one-model, one-GPU-type sweep file with these workload lines (the workload entries start at line 7)."""
    p = tmp_path / "fleet.yaml"
    p.write_text(f"""\
models:
  - {{id: openai/gpt-oss-120b, config: {HF / "openai/gpt-oss-120b/config.json"}}}
gpus:
  - {{gpu: h100, count: 8}}
workloads:
{workloads}
max_num_seqs: [16]
""")
    return p


@pytest.fixture()
def sweep_file(tmp_path: Path) -> Path:
    p = tmp_path / "fleet.yaml"
    p.write_text(SWEEP)
    return p


def test_a_sweep_is_every_model_gpu_and_workload(sweep_file: Path) -> None:
    tasks = load_sweep(sweep_file)
    assert len(tasks) == 2 * 2 * 3
    assert {(t.model, t.gpu, t.gpus, t.workload) for t in tasks} >= {("openai/gpt-oss-120b", "b200", 4, "rag")}
    assert all(t.max_num_seqs == (16, 64) for t in tasks)


@pytest.mark.parametrize(("old", "new", "line", "words"), [
    ("gpu: b200", "gpu: b2000", 6, "b2000"),
    # a CPU profile failed every row of it, each located at a workload's line (the GPU entry is the line to change)
    ("gpu: b200", "gpu: xeon6", 6, "'xeon6' is a CPU profile"),
    # no figure to time against: every row failed at a workload's line, advising --hardware-figures (no sweep key)
    ("gpu: b200", "gpu: mi350x", 6, "the hardware figures of mi350x give no FLOP/s"),
    ("gpu: b200", "gpu: arc_pro_b60, gpus_per_node: 4", 6, "no memory bandwidth for arc_pro_b60"),
    ('slo: "ttft=4000"', 'slo: "ttft:4000"', 9, "ttft:4000"),
    # an slo of the wrong type was said to be missing ("a workload needs slo")
    ('slo: "ttft=4000"', "slo: 4000", 9, "slo must be text \"ttft=MS,tpot=MS\" (4000)"),
    ('slo: "ttft=4000"', "slo: {ttft: 4000}", 9, "slo must be text \"ttft=MS,tpot=MS\" ({'ttft': 4000})"),
    ('slo: "ttft=4000"', "slo: null", 9, "a workload needs slo"),
    ("rate: 2,", "rate: -2,", 9, "rate"),
    ("concurrency: 8,", "", 10, "needs concurrency, rate or both"),
    # predict's own refusals of a workload, at the entry's line: more requests than one prediction simulates
    ("concurrency: 8,", "concurrency: 50000,", 10, "more than the 100,000 requests"),
    ("rate: 2,", "rate: 1e6,", 9, "write num_requests: N with N at most 100,000"),
    ("rate: 2,", "rate: 2, num_requests: 200000,", 9, "200,000 requests"),
    ("rate: 2,", "rate: 2, range_ratio: 1.5,", 9, "range ratio must be in [0, 1)"),
    ("rate: 2,", "rate: fast,", 9, "rate must be a number ('fast')"),
    # YAML reads 1e400 as infinity: it ran as a burst; .nan is no rate
    ("rate: 2,", "rate: 1e400,", 9, "'1e400' is beyond a float's range"),
    ("rate: 2,", "rate: .nan,", 9, "rate must be a positive number"),
    ("rate: 2,", "rate: 2, prefix_hit: .nan,", 9, "prefix hit share must be in [0, 1)"),
    ("rate: 2,", "rate: 2, arrivals: poisson,", 9, "unknown workload key 'arrivals'"),
    ("rate: 2,", "rate: 2, dataset: sonnet,", 9, "unknown dataset 'sonnet'"),
    ("rate: 2,", "rate: 2, dataset: 7,", 9, "dataset must be a name (7)"),
    ("rate: 2,", "rate: 2, endpoint: grpc,", 9, "unknown endpoint 'grpc'"),
    ("rate: 2,", "rate: 2, endpoint: 3,", 9, "endpoint must be a name (3)"),
    # a key the sweep does not read was dropped: `cout: 4` searched 1 GPU, `max_num_seq` the default limits
    ("count: 4", "cout: 4", 6, "unknown key 'cout'"),
    # gpus_per_node: 0 (or false) was read as "not given": the catalog's node profile ran, where plan refuses it
    ("count: 4", "count: 4, gpus_per_node: 0", 6, "gpus_per_node must be a positive integer (0)"),
    ("count: 4", "count: 4, gpus_per_node: false", 6, "gpus_per_node must be a positive integer (False)"),
    # an empty model id searched and printed a row with no model name
    ("- {id: openai/gpt-oss-120b,", '- {id: "",', 2, "a model needs id and config"),
    ("- {id: openai/gpt-oss-120b,", '- {id: "  ",', 2, "a model needs id and config"),
    ("- {id: openai/gpt-oss-120b,", "- {id: openai/gpt-oss-120b, revision: main,", 2, "unknown key 'revision'"),
    ("max_num_seqs: [16, 64]", "max_num_seq: [16, 64]", 11, "unknown key 'max_num_seq'"),
    # the same search twice gave two identical rows (one GPU under two names, printed as typed)
    ("  - {gpu: b200, count: 4}", "  - {gpu: H100, count: 8}", 6, "8 x h100 is listed twice ('H100' names h100)"),
    ("name: rag,", "name: chat,", 9, "workload name 'chat' is used twice"),
    # an entry that is not a mapping is named at its own line (the list's line was named, 'workloads:')
    ('  - {name: rag, isl: 8192, osl: 256, rate: 2, slo: "ttft=4000"}', "  - [8192, 256]", 9,
     "workloads entry 2 is not a mapping"),
    ("  - {gpu: b200, count: 4}", "  - b200", 6, "gpus entry 2 is not a mapping ('b200')"),
    ("  - {id: deepseek-ai/DeepSeek-V4-Flash, config: " + str(HF / "deepseek-ai/DeepSeek-V4-Flash/config.json") + "}",
     "  - {id: openai/gpt-oss-120b, config: " + str(HF / "openai/gpt-oss-120b/config.json") + "}", 3,
     "is listed twice"),
])
def test_bad_sweep_files_name_file_line_and_rule(sweep_file: Path, old: str, new: str, line: int,
                                                 words: str) -> None:
    sweep_file.write_text(SWEEP.replace(old, new))
    with pytest.raises(LaunchcardError) as e:
        load_sweep(sweep_file)
    assert e.value.where == f"{sweep_file}:{line}" and words in e.value.one_line()
    assert "--" not in (e.value.fix or "")  # the fix is written in the file's terms, not a CLI option's
    res = run_cli("sweep", str(sweep_file))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1


def test_workloads_take_every_load_predict_takes(sweep_file: Path) -> None:
    """A burst (rate inf, as YAML's .inf or the word), Poisson capped by a concurrency, request counts, ranged
    lengths and prefix hits: the same Workload `launchcard predict` builds from the same values."""
    from launchcard.predict import Workload

    sweep_file.write_text(SWEEP.replace('rate: 2,', 'rate: .inf, num_requests: 300, range_ratio: 0.25,')
                          .replace("concurrency: 8,", 'rate: "inf", concurrency: 8, prefix_hit: 0.5,')
                          .replace("concurrency: 32,", "concurrency: 32, rate: 4, dataset: sharegpt, endpoint: chat,"))
    by_name = {t.workload: t.load() for t in load_sweep(sweep_file)}
    assert by_name["chat"] == Workload(1024, 256, concurrency=32, rate=4.0, dataset="sharegpt", endpoint="chat")
    assert by_name["rag"] == Workload(8192, 256, rate=float("inf"), num_requests=300, range_ratio=0.25)
    assert by_name["rag"].arrivals == "all at once" and by_name["rag"].requests() == 300
    assert by_name["chat"].arrivals == "poisson, capped" and by_name["chat"].endpoint == "chat"
    assert by_name["rag"].endpoint == "completions"  # vllm bench serve's default
    assert by_name["impossible"] == Workload(512, 128, concurrency=8, rate=float("inf"), prefix_hit=0.5)
    assert by_name["impossible"].arrivals == "closed loop"


def test_a_dataset_workload_without_lengths_takes_the_datasets_own_means(tmp_path: Path) -> None:
    """``dataset: sharegpt`` with no isl/osl: the dataset's own mean lengths over the run's requests, as `predict
    --dataset sharegpt` and `plan --dataset sharegpt` take them (the sweep refused it: 'isl must be a positive
    integer (None)'); a length given is kept."""
    from launchcard.predict import Workload, dataset_means

    p = _gpt_oss_on_8_h100(tmp_path, '  - {name: own, dataset: sharegpt, concurrency: 4, slo: "ttft=5000"}\n'
                                     '  - {name: half, dataset: sharegpt, osl: 64, concurrency: 4, slo: "ttft=5000"}')
    by_name = {t.workload: t.load() for t in load_sweep(p)}
    isl, osl = dataset_means("sharegpt", 40)
    assert by_name["own"] == Workload(isl, osl, concurrency=4, dataset="sharegpt")
    assert by_name["half"] == Workload(isl, 64, concurrency=4, dataset="sharegpt")


def test_a_burst_row_says_how_requests_arrived(tmp_path: Path) -> None:
    p = _gpt_oss_on_8_h100(tmp_path, '  - {name: burst, isl: 512, osl: 64, rate: .inf, num_requests: 64, '
                                     'slo: "ttft=100000"}')
    (row,) = run_sweep(load_sweep(p), workers=1)
    w = row["workload"]
    assert w["rate"] is None and w["arrivals"] == "all at once" and w["num_requests"] == 64 and w["name"] == "burst"
    assert row["status"] == "ok" and json.loads(json.dumps(row)) == row  # plain JSON: no infinity


def test_a_search_that_cannot_run_names_its_workload_line_and_the_sweep_exits_1(tmp_path: Path) -> None:
    """A workload longer than a model's context is that row's error, located at the workload entry of the sweep
    file (not at a CLI option the user never typed); the other rows still answer and the sweep exits 1."""
    p = _gpt_oss_on_8_h100(tmp_path, '  - {name: chat, isl: 1024, osl: 128, concurrency: 8, slo: "ttft=5000"}\n'
                                     '  - {name: huge, isl: 900000, osl: 128, concurrency: 1, slo: "ttft=100000"}')
    rows = run_sweep(load_sweep(p), workers=1)
    bad = next(r for r in rows if r["workload"]["name"] == "huge")
    assert bad["status"] == "error" and bad["error"].startswith(f"{p}:7 (workload 'huge'): ")
    assert "--isl" not in bad["error"] and "shorten isl/osl" in bad["error"]  # the entry's keys, not predict's
    assert next(r for r in rows if r["workload"]["name"] == "chat")["status"] != "error"
    res = run_cli("sweep", str(p), "--workers", "1")
    assert res.returncode == 1 and "huge" in res.stdout
    assert len(res.stderr.strip().splitlines()) == 1 and "1 of 2 searches could not run" in res.stderr


def test_ray_on_a_local_two_worker_cluster_gives_the_process_pool_rows(sweep_file: Path) -> None:
    sweep_file.write_text(SWEEP + "engines: [vllm, sglang]\n")  # SGLang plans searched the same way
    pool = run_sweep(load_sweep(sweep_file), workers=2)
    assert {r["engine"] for r in pool} == {"vllm", "sglang"}
    statuses = {r["status"] for r in pool}
    assert statuses == {"ok", "no plan meets the SLO"}
    impossible = [r for r in pool if r["workload"]["name"] == "impossible"]
    assert all(r["winner"] is None and "TPOT" in r["closest"]["reason"] for r in impossible)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = str(ROOT / "src")
    res = subprocess.run([sys.executable, "-m", "launchcard", "sweep", str(sweep_file), "--ray", "auto",
                          "--workers", "2", "--json"], capture_output=True, text=True, env=env, timeout=300,
                         check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    doc = json.loads(res.stdout)
    assert doc["backend"] == "ray (auto)"
    assert doc["rows"] == json.loads(json.dumps(pool))


def test_workers_with_a_ray_cluster_address_is_refused_before_ray_starts(sweep_file: Path) -> None:
    # --workers sized nothing there: a running cluster's CPUs are its own (ray.init refuses num_cpus when it connects
    # to one), and the address path dropped the option in silence
    with pytest.raises(LaunchcardError) as e:
        run_sweep([], workers=2, ray="10.0.0.1:6379")
    assert e.value.where == "--workers" and "--ray 10.0.0.1:6379" in e.value.one_line()
    res = run_cli("sweep", str(sweep_file), "--ray", "ray://10.0.0.1:10001", "--workers", "2")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "--workers" in res.stderr and "leave --workers out" in res.stderr


def test_the_text_table_says_how_requests_arrive_as_the_rows_json_does(tmp_path: Path) -> None:
    """A burst's row said 'rate=None/s' (its JSON rate is null: no infinity in JSON) and a Poisson run capped by a
    concurrency said only 'c=2', as if a closed loop; the dataset and the chat endpoint were not said."""
    p = _gpt_oss_on_8_h100(tmp_path, '  - {name: burst, isl: 128, osl: 16, rate: inf, num_requests: 16, '
                                     'slo: "ttft=50000"}\n'
                                     '  - {name: capped, isl: 128, osl: 16, rate: 4, concurrency: 2, num_requests: 16, '
                                     'dataset: sharegpt, endpoint: chat, slo: "ttft=50000"}')
    res = run_cli("sweep", str(p), "--workers", "1")
    assert res.returncode == 0, res.stderr
    burst, capped = (ln for ln in res.stdout.splitlines() if " | " in ln)
    assert "(128/16, 16 at once, ttft=50000)" in burst and "None" not in burst
    assert "(128/16, rate=4/s, c<=2, sharegpt, chat, ttft=50000)" in capped


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_sweep_rows_winner_is_the_plan_searchs_winner_command_included(engine: str) -> None:
    """The same search in `sweep` and `plan`: the sweep searched the bare checkpoint, plan the plan launchcard
    derives for it, so an SGLang winner's command lost the derived plan's `--host 0.0.0.0 --port 8000` in the
    sweep row (a server only reachable on localhost). Both search plansearch.derived_option's option now."""
    from launchcard.plansearch import SweepTask, run_task

    cfg = HF / "openai/gpt-oss-120b/config.json"
    task = SweepTask(model="openai/gpt-oss-120b", config=str(cfg), gpu="h100", gpus=2, gpus_per_node=8,
                     workload="chat", isl=1024, osl=256, concurrency=16, rate=None, slo="ttft=2000,tpot=40",
                     max_num_seqs=(16,), engine=engine)
    row = run_task(task)
    res = run_cli("plan", "openai/gpt-oss-120b", "--config", str(cfg), "--gpu", "h100", "--gpus", "2",
                  "--gpus-per-node", "8", "--isl", "1024", "--osl", "256", "--concurrency", "16", "--slo",
                  "ttft=2000,tpot=40", "--max-num-seqs", "16", "--engine", engine, "--json")
    assert res.returncode == 0, res.stderr
    win = json.loads(res.stdout)["winner"]
    assert row["winner"]["label"] == win["label"] and row["winner"]["figures"] == win["figures"]
    assert row["winner"]["command"] == win["command"]
    # one vocabulary: the row's workload is plan's (and predict's) workload object, named as the file names it
    assert row["workload"] == {"name": "chat", **json.loads(res.stdout)["workload"]}


def test_a_gpu_alias_is_named_by_its_catalog_id_as_predict_names_it(tmp_path: Path) -> None:
    """`plan --gpu 'NVIDIA H100 80GB HBM3'` and a sweep's `gpu: H100` printed the name as typed where predict says
    h100: one GPU, one name."""
    cfg = ROOT / "tests" / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen2-7B-Instruct_config.json"
    res = run_cli("plan", "Qwen/Qwen2-7B-Instruct", "--config", str(cfg), "--gpu", "NVIDIA H100 80GB HBM3",
                  "--gpus", "1", "--isl", "128", "--osl", "16", "--concurrency", "1", "--slo", "tpot=50", "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["gpu"] == "h100", res.stderr
    p = tmp_path / "fleet.yaml"
    p.write_text(f"models:\n  - {{id: q, config: {cfg}}}\ngpus:\n  - {{gpu: H100, count: 1}}\nworkloads:\n"
                 "  - {name: a, isl: 128, osl: 16, concurrency: 1, slo: \"tpot=50\"}\n")
    (row,) = run_sweep(load_sweep(p), workers=1)
    assert row["gpu"] == "h100", row


@pytest.mark.skipif(not (HF / "openai/gpt-oss-120b/config.json").is_file(), reason="needs the shared corpus")
def test_no_plan_meeting_the_slo_is_a_sweep_rows_answer_and_plans_failure(tmp_path: Path) -> None:
    """The README's two exit codes for one fact: `plan`, asked which plan meets the SLO, exits 1 when none does; a
    sweep row saying the same is an answer of the fleet's map, and the sweep exits 0 (every search ran)."""
    p = _gpt_oss_on_8_h100(tmp_path, '  - {name: impossible, isl: 512, osl: 128, concurrency: 8, '
                                     'slo: "tpot=0.01"}')
    res = run_cli("sweep", str(p), "--workers", "1", "--json")
    assert res.returncode == 0, res.stderr
    [row] = json.loads(res.stdout)["rows"]
    assert row["status"] == "no plan meets the SLO" and row["winner"] is None
    plan = run_cli("plan", "openai/gpt-oss-120b", "--config", str(HF / "openai/gpt-oss-120b/config.json"), "--gpu",
                   "h100", "--gpus", "8", "--isl", "512", "--osl", "128", "--concurrency", "8", "--slo", "tpot=0.01",
                   "--max-num-seqs", "16")
    assert plan.returncode == 1 and "No plan meets the SLO" in plan.stdout


@pytest.mark.parametrize(("text", "words"), [
    ('{"broken": ', "not valid JSON"),
    ('{"architectures": ["Foo"]}', "config lacks required field(s)"),
])
def test_a_bad_config_json_is_named_at_its_models_line_with_its_path(tmp_path: Path, text: str,
                                                                    words: str) -> None:
    """A config.json that cannot be read or lacks the architecture failed every row of its model, each located
    at a workload's line (`fleet.yaml:7 (workload 'chat')`) without naming the file: it is the model entry's
    config line, said once when the file is read (exit 2)."""
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    p = tmp_path / "fleet.yaml"
    p.write_text(f"""\
models:
  - {{id: openai/gpt-oss-120b, config: {HF / "openai/gpt-oss-120b/config.json"}}}
  - {{id: acme/broken, config: bad.json}}
gpus:
  - {{gpu: h100, count: 8}}
workloads:
  - {{name: chat, isl: 1024, osl: 256, concurrency: 32, slo: "ttft=2000,tpot=40"}}
""")
    with pytest.raises(LaunchcardError) as e:
        load_sweep(p)
    assert e.value.where == f"{p}:3" and words in e.value.one_line() and "bad.json" in e.value.one_line()
    res = run_cli("sweep", str(p))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and f"{p}:3" in res.stderr
