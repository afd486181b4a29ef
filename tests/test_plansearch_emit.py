"""`launchcard plan --emit`: the winner written out through the recipe's plan (its flags, context length, checkpoint,
prefill/decode pools), credited to the search, and an emit that cannot be written refused before the search.
Split from tests/test_plansearch.py."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import run_cli
from launchcard.errors import InputError
from launchcard.plansearch import Candidate, Figures, Outcome, Slo, search
from launchcard.predict import Workload
from plansearch_support import GPT_OSS, MODEL, RECIPES, SMALL, gpt_oss_space


def test_cli_plan_json_and_winner_emit(tmp_path: Path) -> None:
    res = run_cli("plan", MODEL, "--recipes", str(RECIPES), "--gpu", "h100", "--gpus", "8", "--isl", "1024",
                  "--osl", "256", "--concurrency", "32", "--slo", "ttft=2000,tpot=40", *SMALL, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["winner"]["meets_slo"] and doc["candidates"] == len(doc["outcomes"])
    assert {"ranked", "pareto", "rejected_by_reason", "candidates_per_second"} <= set(doc)
    win = doc["winner"]
    out = tmp_path / "deploy"
    res = run_cli("plan", MODEL, "--recipes", str(RECIPES), "--gpu", "h100", "--gpus", "8", "--isl", "1024",
                  "--osl", "256", "--concurrency", "32", "--slo", "ttft=2000,tpot=40", *SMALL,
                  "--emit", "shell", "--out", str(out))
    assert res.returncode == 0, res.stderr
    script = next(out.iterdir()).read_text()
    words = shlex.split(script, comments=True)
    assert words[words.index("--tensor-parallel-size") + 1] == str(win["tp"])
    assert words[words.index("--max-num-seqs") + 1] == str(win["max_num_seqs"])
    assert ("--enable-expert-parallel" in words) == win["expert_parallel"]
    if win["kv_cache_dtype"] != "auto":
        assert words[words.index("--kv-cache-dtype") + 1] == win["kv_cache_dtype"]


def test_the_winner_plan_credits_the_search_and_keeps_what_it_replaced() -> None:
    from launchcard.check import derive_plan
    from launchcard.plansearch import winner_plan

    base = derive_plan(MODEL, GPT_OSS, "h100")
    work, slo = Workload(1024, 256, concurrency=16), Slo.parse("tpot=50")
    r = search(gpt_oss_space(), work, slo)
    assert r.winner is not None
    plan = winner_plan(base, r.winner.candidate, work, slo)
    units = {u.flag: u for c in plan.commands for u in c.units}
    tp = units["--tensor-parallel-size"]
    assert tp.value == str(r.winner.candidate.tp) and tp.origin.key == "plan_search"
    assert any(i.name == "slo" and i.value == "tpot=50" for i in tp.origin.inputs)
    assert tp.overrides and tp.overrides[0].layer == "derived"  # the derived plan's own TP, kept as overridden
    argv = plan.commands[0].argv
    assert argv.count("--tensor-parallel-size") == 1 and argv[:3] == ("vllm", "serve", MODEL)


def test_emit_writes_the_context_length_the_search_planned_with(tmp_path: Path) -> None:
    res = run_cli("plan", "acme/oss", "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "2", "--concurrency", "8",
                  "--slo", "tpot=50", "--max-num-seqs", "16", "--max-model-len", "8192", "--emit", "shell",
                  "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    words = shlex.split(next(tmp_path.iterdir()).read_text(), comments=True)
    assert words.count("--max-model-len") == 1 and words[words.index("--max-model-len") + 1] == "8192"
    assert words[words.index("--max-num-seqs") + 1] == "16"


def test_cli_sglang_plan_emits_sglang_flags(tmp_path: Path) -> None:
    """A derived SGLang plan's winner carries SGLang's own flag names (captured parser spec) and passes check."""
    from config_support import LLAMA8B

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(LLAMA8B))
    res = run_cli("plan", "meta-llama/Llama-3.1-8B-Instruct", "--config", str(cfg), "--gpu", "h100", "--gpus", "2",
                  "--isl", "512", "--osl", "64", "--concurrency", "8", "--slo", "tpot=100", "--engine", "sglang",
                  "--emit", "shell", *SMALL)
    assert res.returncode == 0, res.stderr
    args = res.stdout.split("args=(", 1)[1].split(")", 1)[0].split()
    assert "sglang.launch_server" in args and "--tp-size" in args and "--max-running-requests" in args
    assert not {"--tensor-parallel-size", "--max-num-seqs", "--kv-cache-dtype fp8"} & set(args)
    assert "checked against SGLang 0.5.23's captured parser spec and SGLang's split of the heads over its attention " \
        "TP size (not vLLM's start-up rules)" in res.stderr
    bad = run_cli("plan", "meta-llama/Llama-3.1-8B-Instruct", "--config", str(cfg), "--gpu", "h100", "--gpus", "2",
                  "--concurrency", "8", "--slo", "tpot=100", "--engine", "sglang", "--kv-cache-dtype", "fp8")
    assert bad.returncode == 2 and "SGLang has no --kv-cache-dtype fp8" in bad.stderr


def test_a_card_checkpoint_winner_is_emitted_through_its_derived_plan(tmp_path: Path) -> None:
    """A winner that is one of the card's checkpoints (no resolved plan of its own) is written as the plan
    launchcard derives from that checkpoint's config.json, with the searched flags (it was refused before)."""
    from launchcard.card import Checkpoint, LaunchCard
    from launchcard.check import check_plan
    from launchcard.cli._plan import _derived_base
    from launchcard.emit import emit
    from launchcard.plansearch import card_options, winner_plan

    other = "someone/gpt-oss-120b-copy"
    card = LaunchCard(model="acme/oss", checkpoints=(Checkpoint(name=other, repo=other, format="mxfp4"),))
    (tmp_path / "hf" / other).mkdir(parents=True)
    (tmp_path / "hf" / other / "config.json").write_text(GPT_OSS.read_text())
    options, _ = card_options(card, set(), tmp_path)
    work, slo = Workload(1024, 128, concurrency=8), Slo.parse("tpot=100")
    r = search(replace(gpt_oss_space(), options=tuple(options), max_num_seqs=(16,), disaggregation=False), work, slo)
    assert r.winner is not None and r.winner.candidate.option == other
    opt = options[0]
    base = _derived_base(opt.model_id, opt.config, "h100", "vllm", None, 8)
    plan = winner_plan(base, r.winner.candidate, work, slo, opt)
    assert check_plan(plan, config=opt.config).ok
    text = emit(plan, "shell")
    words = shlex.split(next(iter(text.values())), comments=True)
    assert words[words.index("serve") + 1] == other
    assert words[words.index("--tensor-parallel-size") + 1] == str(r.winner.candidate.tp)
    from _emit_helpers import compose_config, load_yaml11_docs, validate_k8s

    for doc in load_yaml11_docs(emit(plan, "kubernetes")["kubernetes.yaml"]):
        validate_k8s(doc)
    (tmp_path / "compose.yaml").write_text(emit(plan, "compose")["compose.yaml"])
    assert compose_config(tmp_path / "compose.yaml", "-q").returncode == 0


def _pd_winner(c_tp: int, c_dp: int, ep: bool) -> object:
    from launchcard.plansearch import recipe_options, winner_plan
    from launchcard.sources.vllm_recipes import load_recipes

    repo = load_recipes(RECIPES)
    opts, plans, _ = recipe_options(repo, "deepseek-ai/DeepSeek-V4-Flash", "h100", RECIPES)
    c = Candidate(opts[0].name, c_tp, 1, c_dp, ep, "fp8", 64, mode="disaggregated", prefill_gpus=8)
    return winner_plan(plans[opts[0].name], c, Workload(4096, 256, concurrency=64), Slo.parse("tpot=200"), opts[0],
                       repo=repo)


def test_a_prefill_decode_winner_is_the_recipes_pd_cluster_plan_with_the_searched_flags(tmp_path: Path) -> None:
    """A P/D winner is written as the recipe's own pd_cluster plan (NIXL KV transfer, ports, router) with pools of
    the winner's nodes and the searched KV dtype / batch limit in both pools; the files validate as emit's do."""
    from _emit_helpers import compose_config, load_yaml11_docs, validate_k8s
    from launchcard.emit import emit

    plan = _pd_winner(8, 1, False)
    assert plan.deploy_type == "pd_cluster" and {c.role for c in plan.commands} >= {"prefill", "decode"}
    for cmd in plan.commands:
        if cmd.role in ("prefill", "decode"):
            argv = list(cmd.argv)
            assert argv[argv.index("--tensor-parallel-size") + 1] == "8"
            assert argv.count("--max-num-seqs") == 1 and argv[argv.index("--max-num-seqs") + 1] == "64"
            assert argv.count("--kv-cache-dtype") == 1 and "--kv-transfer-config" in argv
    for doc in load_yaml11_docs(emit(plan, "kubernetes")["kubernetes.yaml"]):
        validate_k8s(doc)
    compose = tmp_path / "compose.yaml"
    compose.write_text(emit(plan, "compose")["compose.yaml"])
    assert compose_config(compose, "-q").returncode == 0
    scripts = emit(plan, "shell")
    assert {"launch-prefill.sh", "launch-decode.sh", "launch-router.sh"} <= set(scripts)
    words = shlex.split(scripts["launch-decode.sh"], comments=True)
    assert "--max-num-seqs" in words and "--kv-transfer-config" in words


def test_a_prefill_decode_winner_the_sources_cannot_lay_out_is_one_line() -> None:
    from launchcard.check import derive_plan
    from launchcard.plansearch import winner_plan

    with pytest.raises(InputError, match="lays the prefill pool out as TP 1 x DP 8, the winner's is TP 2 x DP 4"):
        _pd_winner(2, 4, True)
    c = Candidate("checkpoint", 8, 1, 1, False, "auto", 64, mode="disaggregated", prefill_gpus=8)
    with pytest.raises(InputError, match="has no recipe here"):
        winner_plan(derive_plan(MODEL, GPT_OSS, "h100"), c, Workload(1024, 128, concurrency=8), Slo.parse("tpot=50"))


def test_cli_emit_of_a_prefill_decode_winner_passes_check_and_writes_the_pools(tmp_path: Path) -> None:
    """`plan --emit`'s own path (check_plan, then the emitter, then the atomic writer) for a P/D winner."""
    from _emit_helpers import load_yaml11_docs, validate_k8s
    from launchcard.cli._plan import _emit_winner
    from launchcard.plansearch import SearchResult, recipe_options
    from launchcard.sources.vllm_recipes import load_recipes

    repo = load_recipes(RECIPES)
    opts, plans, _ = recipe_options(repo, "deepseek-ai/DeepSeek-V4-Flash", "h100", RECIPES)
    c = Candidate(opts[0].name, 8, 1, 1, False, "fp8", 64, mode="disaggregated", prefill_gpus=8)
    won = Outcome(c, figures=Figures(100.0, 20.0, 1000.0, 62.5, 50.0, 4.0, "decode memory"))
    slo = Slo.parse("tpot=200")
    result = SearchResult(model="deepseek-ai/DeepSeek-V4-Flash", gpu="h100", gpus=16, slo=slo, outcomes=(won,),
                          ranked=(won,), pareto=(won,), closest=(), seconds=1.0)
    _emit_winner(plans[opts[0].name], opts[0], result, Workload(4096, 256, concurrency=64), slo, "kubernetes",
                 tmp_path, repo, None)
    docs = load_yaml11_docs((tmp_path / "kubernetes.yaml").read_text())
    for doc in docs:
        validate_k8s(doc)
    text = (tmp_path / "kubernetes.yaml").read_text()
    assert "kv_producer" in text and "kv_consumer" in text and "vllm-pd-disaggregation" in text


def test_an_unwritable_emit_folder_is_refused_before_the_search(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    res = run_cli("plan", MODEL, "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "8", "--slo", "tpot=40",
                  "--concurrency", "8", "--emit", "shell", "--out", str(tmp_path / "file" / "out"), *SMALL)
    assert res.returncode == 2 and res.stdout == "" and len(res.stderr.splitlines()) == 1
    assert "--out" in res.stderr and "is not a folder" in res.stderr


@pytest.mark.parametrize(("target", "folder"), [("shell", "launch.sh"), ("shell", "launch-head.sh"),
                                               ("kubernetes", "kubernetes.yaml")])
def test_an_emit_file_that_exists_as_a_folder_is_refused_before_the_search(tmp_path: Path, target: str,
                                                                           folder: str) -> None:
    """It was refused by write_files after the search, its report already printed (exit 2): the same words now,
    first, with nothing on stdout."""
    (tmp_path / folder).mkdir()
    res = run_cli("plan", MODEL, "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "8", "--slo", "tpot=40",
                  "--concurrency", "8", "--emit", target, "--out", str(tmp_path), *SMALL)
    assert res.returncode == 2 and res.stdout == "" and len(res.stderr.splitlines()) == 1, res.stderr
    assert f"{folder!r} exists there as a folder" in res.stderr and str(tmp_path) in res.stderr


def test_emit_refuses_a_layout_it_cannot_write_before_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """`plan --gpus 16 --emit shell` for a model without a recipe searched every plan of two nodes, then exited 2:
    the emitters write the derived plan's one node. Refused first now, and the search never runs."""
    import launchcard.cli._plan as cli_plan
    from launchcard.cli import main

    ran: list[int] = []
    monkeypatch.setattr(cli_plan, "_run", lambda *a, **k: ran.append(1))
    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    code = main(["plan", "Qwen/Qwen3-8B", "--config", str(qwen), "--gpu", "h100", "--gpus", "16", "--isl", "256",
                 "--osl", "32", "--concurrency", "64", "--slo", "ttft=5000", "--emit", "shell"])
    assert code == 2 and not ran
