"""The plan's facts (launchcard.check.plan_facts): computed once, read by every renderer (issue 21 items 1-3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from launchcard.check import check_plan, plan_facts, verdict_label
from launchcard.emit import emit
from launchcard.errors import EmitError
from launchcard.resolve import Choice, resolve

# (model, hardware, TP the recipe resolves to there): plans that leave most of an 8-GPU node idle
SMALL = [("openai/gpt-oss-20b", "h100", 1), ("Qwen/Qwen3-30B-A3B", "h100", 1), ("MiniMaxAI/MiniMax-M2.5", "h100", 4)]


@pytest.mark.parametrize(("model", "hw", "tp"), SMALL)
def test_gpus_used_are_what_every_artifact_requests(recipe_repo, model: str, hw: str, tp: int) -> None:
    import yaml

    plan = resolve(recipe_repo, Choice(model=model, hardware=hw))
    facts = plan_facts(plan)
    assert (facts.gpus_per_node, facts.gpus_total, facts.node_gpus) == (tp, tp, 8)
    assert facts.gpus_line() == f"GPUs used: {tp} of 8 per {hw} node, {tp} in total"
    docker = emit(plan, "docker")["docker-run.sh"]
    assert "--gpus all" not in docker and f"--gpus {tp}\n" in docker
    for target in ("shell", "docker", "compose", "kubernetes", "truss"):
        for text in emit(plan, target).values():
            assert f"# GPUs used: {tp} of 8 per {hw} node" in text, target
    k8s = [d for d in yaml.safe_load_all(emit(plan, "kubernetes")["kubernetes.yaml"]) if d]
    limits = [c["resources"]["limits"] for d in k8s for c in _containers(d) if "resources" in c]
    assert limits == [{"nvidia.com/gpu": str(tp)}]
    assert f"instance_type: H100:{tp}" in emit(plan, "truss")["config.yaml"]


def _containers(doc: dict) -> list[dict]:  # type: ignore[type-arg]
    spec = doc.get("spec") or {}
    tmpl = spec.get("template") or (spec.get("leaderWorkerTemplate") or {}).get("leaderTemplate") or {}
    return list((tmpl.get("spec") or {}).get("containers") or [])


def test_card_env_gpus_is_the_plans_gpus_used(shared_dir: Path) -> None:
    from launchcard.cli._card import card_text
    from launchcard.merge import build_corpus

    card = build_corpus(shared_dir / "corpus", models=["openai/gpt-oss-20b"], hardware="h100").cards[
        "openai/gpt-oss-20b"]
    env = next(e for e in card.envs if e.source.kind == "vllm-recipes")
    assert env.gpus == 1  # was the node's 8 while resolve warned that 7 stay idle
    assert "h100 × 1)" in card_text(card)


def test_docker_gives_a_placed_process_its_own_devices_renumbered() -> None:
    from _emit_helpers import single_plan

    plan = single_plan(["vllm", "serve", "m", "--tensor-parallel-size", "2"], {"CUDA_VISIBLE_DEVICES": "4,5"})
    text = emit(plan, "docker")["docker-run.sh"]
    assert "--gpus '\"device=4,5\"'" in text and "CUDA_VISIBLE_DEVICES=0,1" in text
    assert "host GPUs 4,5, which it numbers 0,1" in text


def test_omni_plan_counts_the_whole_node_and_truss_says_why_it_refuses(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="Qwen/Qwen3-TTS-12Hz-1.7B-CustomVoice"))
    facts = plan_facts(plan)
    assert facts.processes[0].gpus == facts.node_gpus and "stage configs" in facts.processes[0].basis
    with pytest.raises(EmitError) as err:
        emit(plan, "truss")
    assert "1 processes" not in err.value.one_line() and "vLLM-Omni" in err.value.one_line()


def test_verdict_has_one_wording(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="openai/gpt-oss-20b", hardware="h100"))
    verdict = check_plan(plan, recipes=recipe_repo)
    assert verdict.status == "warning" and verdict.label == verdict_label("warning") == "ok, with warnings"
    assert verdict.summary().startswith("verdict: ok, with warnings (")
    assert verdict.to_json()["label"] == "ok, with warnings"
    assert plan_facts(plan, verdict).to_json()["verdict"]["label"] == "ok, with warnings"


@pytest.mark.parametrize("model", ["Qwen/Qwen3-30B-A3B", "moonshotai/Kimi-K2.5"])
def test_page_and_facts_show_the_features_resolve_selects(recipe_repo, model: str) -> None:
    from launchcard.page import page_data
    from launchcard.render import recipe_facts_report

    selected = list(resolve(recipe_repo, Choice(model=model)).features)
    for rows in (page_data(recipe_repo, model)["facts"], recipe_facts_report(recipe_repo, model)["facts"]):
        named = {r["name"]: r for r in rows}
        assert named["Features selected by default"]["value"] == selected  # page said [] / the opt-in list
        assert "Opt-in features (off unless asked for)" in named
    page = page_data(recipe_repo, model)
    note = " ".join(str(r.get("note", "")) for r in page["facts"])
    assert "Features resolve selects by default" not in note  # a row the page never had
    faq = " ".join(qa["answer"] for qa in page["faq"])
    assert f"resolve selects {', '.join(selected)} by default" in faq


def test_memory_figures_are_rounded_once(shared_dir: Path) -> None:
    """Issue 21 item 5: "KV cache / GPU 5.01 GiB" beside "more than the 5.02 GiB available" for one plan."""
    import re

    from launchcard.memory import load_arch, plan_memory, settings_from_argv

    arch = load_arch(shared_dir / "corpus" / "hf" / "openai" / "gpt-oss-120b" / "config.json")
    # a device size whose KV pool (3.4251.. GiB) sits where formatting the raw figure rounds the other way
    plan = plan_memory(arch, settings_from_argv(["vllm", "serve", "m", "--max-model-len", "2000000"]),
                       gpu_memory_gib=80.00583)
    m = re.search(r"more than the ([\d.]+) GiB available", " ".join(plan.problems))
    assert m is not None and m.group(1) == f"{plan.kv_cache_gib_per_gpu:.2f}" == f"{plan.breakdown.kv_cache_gib:.2f}"


def test_web_builder_reads_the_plan_facts_and_prints_the_one_verdict_wording(recipe_repo) -> None:
    from launchcard.web._builder import Selection, build, deploy
    from launchcard.web._render import Renderer

    data = build(recipe_repo, "openai/gpt-oss-20b", Selection(hardware="h100"), revision=None)
    plan = resolve(recipe_repo, Choice(model="openai/gpt-oss-20b", hardware="h100"), provenance=True)
    verdict = check_plan(plan, recipes=recipe_repo)
    assert data["facts"] == plan_facts(plan, verdict).to_json()
    assert data["verdict"]["label"] == "ok, with warnings"
    html = Renderer().page("_builder.html.j2", builder=data)
    assert "Verdict: ok, with warnings" in html and "starts, with warnings" not in html
    files = deploy(recipe_repo, "openai/gpt-oss-20b", Selection(hardware="h100"))["files"]
    assert all("# verdict: ok, with warnings (" in text for text in files["docker"].values())


def test_omni_command_that_states_its_gpus_is_counted_by_them(recipe_repo) -> None:
    plan = resolve(recipe_repo, Choice(model="MiniMaxAI/MiniMax-H3", hardware="h200"))
    facts = plan_facts(plan)
    assert plan.deploy_type == "omni" and facts.processes[0].gpus == 4 and "--num-gpus" in facts.processes[0].basis
    assert "--gpus 4\n" in emit(plan, "docker")["docker-run.sh"]


def test_sglang_dp_attention_ranks_take_no_gpus_beyond_the_tp_group(tmp_path: Path) -> None:
    """`plan --engine sglang` chose TP2 DP2-attention on 2 GPUs and predicted it on 2 GPUs, but the artifacts it
    emitted counted TP x DP = 4 (`GPUs used: 4`, a Kubernetes request of 4 GPUs): DP-attention ranks run inside
    the TP group (server_args.py:1568-1574); plain --dp-size replicas still take GPUs of their own."""
    from helpers import run_cli
    from launchcard.check import read_argv

    head = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size", "2", "--dp-size", "2"]
    assert read_argv([*head, "--enable-dp-attention"]).gpus_on_node == 2
    assert read_argv(head).gpus_on_node == 4
    cfg = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "hf" / "openai" / "gpt-oss-120b"
    # on a B200, whose FlashInfer MXFP4 runner keeps the experts MXFP4 at --ep-size 2 (SGLang upcasts them to BF16
    # there on an H100, memory._sglang_mxfp4.sglang_mxfp4_runner, where the DP-attention plan no longer wins)
    res = run_cli("plan", "openai/gpt-oss-120b", "--config", str(cfg / "config.json"), "--gpu", "b200", "--gpus", "2",
                  "--engine", "sglang", "--concurrency", "64", "--isl", "1024", "--osl", "256", "--slo", "tpot=50",
                  "--max-num-seqs", "64", "--emit", "kubernetes", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert "DP2-attention" in res.stdout.splitlines()[3], res.stdout[:600]  # the winner this test is about
    text = (tmp_path / "kubernetes.yaml").read_text()
    assert "# GPUs used: 2 of 8 per b200 node, 2 in total" in text and 'nvidia.com/gpu: "2"' in text
