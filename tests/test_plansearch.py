"""launchcard.plansearch and `launchcard plan`: ranking, Pareto front, rejections, bad input (emit of the winner:
tests/test_plansearch_emit.py)."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import run_cli
from launchcard.errors import InputError
from launchcard.plansearch import (
    Candidate,
    Figures,
    Outcome,
    SearchSpace,
    Slo,
    checkpoint_option,
    pareto,
    search,
)
from launchcard.predict import Workload
from plansearch_support import GPT_OSS, MODEL, RECIPES, SHARED, SMALL, gpt_oss_space


@pytest.fixture(scope="module")
def result() -> object:
    return search(gpt_oss_space(), Workload(1024, 256, concurrency=64), Slo.parse("ttft=1500,tpot=30"))


def test_slo_parses_and_refuses_bad_syntax() -> None:
    assert Slo.parse("ttft=2000,tpot=50") == Slo(2000.0, 50.0)
    assert Slo.parse("tpot=20ms") == Slo(None, 20.0)
    for bad in ("ttft2000", "latency=3", "ttft=fast", "ttft=-1", "", "ttft=1,ttft=2"):
        with pytest.raises(InputError) as e:
            Slo.parse(bad)
        assert e.value.where == "--slo"


def test_a_miss_prints_its_figure_as_the_plan_rows_do_and_no_plan_meeting_reads_none() -> None:
    from launchcard.plansearch import result_to_text

    assert Slo(1000.0, 5.0).misses(3745.84, 6.0) == ["TTFT 3,745.8 ms > 1000 ms", "TPOT 6.00 ms > 5 ms"]
    r = search(gpt_oss_space(gpus=2), Workload(1024, 256, concurrency=8), Slo.parse("ttft=1,tpot=1"))
    assert not r.ranked
    assert result_to_text(r).splitlines()[0].endswith("(means); none meet it")


def test_text_and_json_count_the_plans_meeting_the_slo_alike_and_label_the_distinct_runs() -> None:
    """Batch limits above the 8 clients are one run, listed once: the header said "N meet it" of the distinct runs
    while --json's outcomes had every candidate meeting it (qa6: 50 against 166)."""
    from launchcard.plansearch import result_to_json, result_to_text

    r = search(gpt_oss_space(gpus=2), Workload(1024, 256, concurrency=8), Slo.parse("ttft=5000,tpot=100"))
    meeting = sum(1 for o in r.outcomes if o.meets)
    assert meeting > len(r.ranked) > 0
    doc = result_to_json(r)
    assert doc["meeting_slo"] == meeting == sum(1 for o in doc["outcomes"] if o["meets_slo"])
    assert doc["meeting_slo_runs"] == len(doc["ranked"]) == len(r.ranked)
    text = result_to_text(r)
    assert f"; {meeting} meet it as {len(r.ranked)} distinct runs (" in text.splitlines()[0]
    assert f"(top {min(10, len(r.ranked))} of {len(r.ranked)} distinct runs;" in text


def test_a_recipe_flag_no_step_reads_is_said_of_the_plans_as_predict_says_it() -> None:
    """A recipe command's --no-enable-chunked-prefill (Qwen3-Next's) or --cpu-offload-gb (ERNIE-4.5-VL's) stays in
    every plan's command: predict said it (finding untimed-flag), plan was silent (qa6)."""
    from launchcard.plansearch import result_to_json, result_to_text
    from launchcard.predict import untimed_vllm_flags

    qwen = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    opt = checkpoint_option("Qwen/Qwen3-8B", qwen, ("--no-enable-chunked-prefill", "--cpu-offload-gb", "10"))
    space = SearchSpace(model="Qwen/Qwen3-8B", gpu="h100", gpus=2, gpus_per_node=8, options=(opt,),
                        max_num_seqs=(16,))
    r = search(space, Workload(1024, 128, concurrency=8), Slo.parse("ttft=5000,tpot=100"))
    assert r.winner is not None
    cmd = r.commands[r.winner.candidate]
    said = [f"checkpoint: {f.message}" for f in untimed_vllm_flags(cmd)]  # what predict --command says of it
    assert len(said) == 2 and "--no-enable-chunked-prefill" in said[0] + said[1]
    assert all(m in r.findings for m in said) and all(m in result_to_json(r)["findings"] for m in said)
    assert all(m in result_to_text(r) for m in said)
    plain = search(replace(space, options=(checkpoint_option("Qwen/Qwen3-8B", qwen),)),
                   Workload(1024, 128, concurrency=8), Slo.parse("ttft=5000,tpot=100"))
    assert not any("predicted as if it were not given" in f for f in plain.findings)


def test_the_search_ranks_plans_meeting_the_slo_by_tokens_per_gpu_then_per_user(result: object) -> None:
    from launchcard.plansearch import SearchResult

    assert isinstance(result, SearchResult)
    assert result.ranked, "some plan of gpt-oss-120b on 8 x H100 meets a loose SLO"
    keys = [(o.figures.tok_s_per_gpu, o.figures.tok_s_per_user) for o in result.ranked if o.figures]
    assert keys == sorted(keys, key=lambda k: (-round(k[0], 6), -round(k[1], 6)))
    for o in result.ranked:
        assert o.meets and o.figures is not None
        assert o.figures.ttft_ms <= 1500 and o.figures.tpot_ms <= 30
    best = result.winner
    assert best is not None and best.figures is not None
    # nothing that meets the SLO is better than the winner
    assert all(best.figures.tok_s_per_gpu >= o.figures.tok_s_per_gpu - 1e-6
               for o in result.outcomes if o.meets and o.figures)
    # every plan uses all 8 GPUs
    assert {o.candidate.gpus for o in result.outcomes} == {8}


@pytest.fixture(scope="module")
def tight() -> object:
    """A batch limit of 512: vLLM's profile run and CUDA graphs leave TP1 of gpt-oss-120b on an H100 4.13 GiB of
    KV cache, less than one 131,072-token request's 4.79 GiB in BF16 (at 16 or 64 it fits, as `memory` says).  One
    GPU: under vLLM, DP8 holds an eighth of the experts per GPU, EP or not (memory.moe_split)."""
    return search(replace(gpt_oss_space(gpus=1), max_num_seqs=(512,)).validate(), Workload(1024, 256, concurrency=64),
                  Slo.parse("ttft=1500,tpot=30"))


def test_rejected_plans_say_why(tight: object) -> None:
    from launchcard.plansearch import SearchResult

    result = tight
    assert isinstance(result, SearchResult)
    stages = {o.stage for o in result.outcomes if o.reason}
    assert "memory" in stages  # TP1 of a 120B model at a batch limit of 512 does not fit one 80 GB GPU
    mem = next(o for o in result.outcomes if o.stage == "memory")
    assert mem.candidate.tp * mem.candidate.pp == 1 and "does not fit" in (mem.reason or "")
    for o in result.outcomes:
        if o.stage == "slo":
            assert o.reason and ("TTFT" in o.reason or "TPOT" in o.reason) and o.figures is not None
        if o.reason is None:
            assert o.stage == "ok" and o.figures is not None
    counts = result.rejected_by_reason()
    assert sum(counts.values()) == sum(1 for o in result.outcomes if o.reason)


def test_dp8_of_a_moe_without_ep_holds_an_eighth_of_its_experts_per_gpu() -> None:
    # TP1 x DP8 of gpt-oss-120b at a batch limit of 512 fits an H100 under vLLM with or without EP: its experts are
    # split over the 8 GPUs either way (memory.moe_split, flatten_tp_across_dp); planned whole per GPU it did not
    r = search(replace(gpt_oss_space(disaggregation=False), max_num_seqs=(512,)).validate(),
               Workload(1024, 256, concurrency=64), Slo.parse("ttft=1500,tpot=30"))
    dp8 = [o for o in r.outcomes if o.candidate.tp * o.candidate.pp == 1 and not o.candidate.ep]
    assert dp8 and all(o.stage != "memory" for o in dp8)


def test_plans_short_of_kv_for_the_full_context_point_to_max_model_len(tight: object) -> None:
    from launchcard.plansearch import SearchResult

    result = tight
    assert isinstance(result, SearchResult)
    # TP1 of gpt-oss-120b on an H100: one 131,072-token request needs more KV cache than is left
    assert any("do not fit one request of the model's full context" in f and "at least 1280" in f
               for f in result.findings)


def test_layout_rejections_name_the_rule() -> None:
    r = search(gpt_oss_space(gpus=6, disaggregation=False), Workload(1024, 128, concurrency=8), Slo.parse("tpot=100"))
    # vLLM's start-up refusal, as launchcard check words it, with its rule's code
    reasons = {o.reason for o in r.outcomes if o.stage == "check"}
    assert "[tp-heads] --tensor-parallel-size 3 does not divide the 64 attention heads (vLLM refuses to start)" \
        in reasons
    assert "check: tp-heads" in r.rejected_by_reason()


def _o(label: str, gpu: float, user: float) -> Outcome:
    c = Candidate(option=label, tp=1, pp=1, dp=1, ep=False, kv_cache_dtype="auto", max_num_seqs=8)
    return Outcome(c, figures=Figures(1.0, 1.0, gpu, gpu, user, 1.0, "memory"))


def test_pareto_front_keeps_exactly_the_undominated_points() -> None:
    pts = [_o("a", 100, 10), _o("b", 80, 20), _o("c", 80, 15), _o("d", 50, 20), _o("e", 120, 5), _o("f", 30, 40),
           _o("g", 100, 10)]
    front = pareto(pts)
    assert [o.candidate.option for o in front] == ["e", "a", "b", "f"]


def test_pareto_front_of_a_search_is_undominated_and_covers_the_rest(result: object) -> None:
    from launchcard.plansearch import SearchResult

    assert isinstance(result, SearchResult)
    pts = [(o.figures.tok_s_per_gpu, o.figures.tok_s_per_user) for o in result.outcomes if o.figures]
    front = [(o.figures.tok_s_per_gpu, o.figures.tok_s_per_user) for o in result.pareto if o.figures]
    assert front
    for g, u in front:
        assert not any(g2 >= g and u2 >= u and (g2, u2) != (g, u) for g2, u2 in pts)
    for g, u in pts:
        assert any(g2 >= g and u2 >= u for g2, u2 in front)


def test_disaggregated_plans_are_searched_over_several_nodes() -> None:
    r = search(gpt_oss_space(gpus=16), Workload(2048, 256, concurrency=64), Slo.parse("ttft=3000,tpot=50"))
    dis = [o for o in r.outcomes if o.candidate.mode == "disaggregated"]
    assert dis and any(o.figures is not None for o in dis)
    assert all(o.candidate.gpus == 16 for o in dis)
    assert any("KV cache sent prefill -> decode" in f for f in r.findings)


def test_a_disaggregated_plan_is_not_said_to_send_one_token_outputs() -> None:
    """A prefill/decode plan's prefill pool is predicted on one-token outputs (how the split times TTFT); its
    domain finding "prompts of 1024 and outputs of 1 tokens: outside gpu:vllm's calibration runs (outputs 100-...)"
    reached the plan's findings as if the workload sent one-token outputs. The lengths a plan is judged on are the
    workload's (the decode pool's run: the prompts and the outputs sent)."""
    r = search(replace(gpt_oss_space(gpus=16), max_num_seqs=(16,)), Workload(1024, 256, concurrency=8),
               Slo.parse("tpot=40"))
    dis = [o for o in r.outcomes if o.candidate.mode == "disaggregated" and o.figures is not None]
    assert dis
    said = [f.message for o in dis for f in o.figures.outside] + list(r.findings)  # type: ignore[union-attr]
    assert not [m for m in said if "outputs of 1 tokens" in m], said


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_the_winners_figures_read_as_predict_gives_them(engine: str) -> None:
    """One value, one rendering: `plan --json`'s winner figures and `predict --command WINNER --json` for the same
    workload agree to the digit (request_per_s had 4 decimals in plan, 5 in predict: 4.7297 against 4.72973)."""
    load = ["--isl", "1024", "--osl", "256", "--concurrency", "8"]
    res = run_cli("plan", MODEL, "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "2", "--engine", engine,
                  "--slo", "tpot=40", "--max-num-seqs", "16", *load, "--json")
    assert res.returncode == 0, res.stderr
    win = json.loads(res.stdout)["winner"]
    pred = run_cli("predict", "--config", str(GPT_OSS), "--gpu", "h100", *load, "--command",
                   shlex.join(win["command"]), "--json")
    assert pred.returncode == 0, pred.stderr
    got = json.loads(pred.stdout)
    # bound too: plan's was one line of text where predict's is an object per phase with every term's share
    shared = {k: v for k, v in win["figures"].items() if k in got}
    assert "bound" in shared and shared["bound"]["decode"]["shares"]
    assert set(shared) >= {"ttft_ms_mean", "tpot_ms_mean", "output_tok_per_s", "output_tok_per_s_per_gpu",
                           "output_tok_per_s_per_user", "request_per_s"}
    assert shared == {k: got[k] for k in shared}
    assert win["gpus"] == got["gpus"]


@pytest.mark.parametrize(("args", "option"), [
    (("--gpu", "h1000"), "--gpu"),
    (("--gpu", "h100", "--slo", "ttft:100"), "--slo"),
    (("--gpu", "h100", "--isl", "200000"), "--isl"),
    (("--gpu", "h100", "--emit", "helm"), "--emit"),
])
def test_cli_bad_input_is_one_line_exit_2(args: tuple[str, ...], option: str) -> None:
    base = {"--slo": "ttft=2000,tpot=40", "--isl": "1024"}
    given = dict(zip(args[::2], args[1::2], strict=True))
    argv = ["plan", MODEL, "--recipes", str(RECIPES), "--gpus", "8", "--osl", "256", "--concurrency", "8", *SMALL]
    for k, v in {**base, **given}.items():
        argv += [k, v]
    res = run_cli(*argv)
    assert res.returncode == 2, res.stdout + res.stderr
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and option in lines[0] and "Traceback" not in res.stderr


def test_cli_no_plan_meets_the_slo_exit_1_with_the_closest() -> None:
    res = run_cli("plan", MODEL, "--recipes", str(RECIPES), "--gpu", "h100", "--gpus", "8", "--isl", "1024",
                  "--osl", "256", "--concurrency", "32", "--slo", "tpot=0.1", *SMALL)
    assert res.returncode == 1
    assert "No plan meets the SLO" in res.stdout and "TPOT" in res.stdout and "> 0.1 ms" in res.stdout
    assert "no plan of" in res.stderr


def test_cli_no_plan_can_run_names_the_commonest_rule_exit_1() -> None:
    res = run_cli("plan", MODEL, "--config", str(GPT_OSS), "--gpu", "h100", "--gpus", "8", "--isl", "1024",
                  "--osl", "256", "--concurrency", "8", "--slo", "tpot=50", "--max-model-len", "200000", *SMALL)
    assert res.returncode == 1, res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("launchcard: none of the") and "rejected by check: max-model-len-over-model" in last
    assert "vLLM refuses to start" in last and "Traceback" not in res.stderr


def test_progress_is_reported_up_to_the_total() -> None:
    from launchcard.plansearch import count

    seen: list[tuple[int, int]] = []
    space = gpt_oss_space(gpus=8)
    search(space, Workload(512, 64, concurrency=4), Slo.parse("tpot=100"), progress=lambda d, n: seen.append((d, n)))
    total = count(space)
    # the shown plans are predicted again on the whole run after the screening: the bar's total grows by them and
    # the bar keeps moving through them (it stood still at `total` before)
    end, grown = seen[-1]
    assert end == grown > total
    assert any(total < d < grown for d, _ in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    # the screening reports every 16 plans: a search of long runs (a second a prediction) still moves
    assert sum(1 for d, _ in seen if d <= total) >= total // 16 >= 2


def test_every_candidate_passes_the_start_up_rules_check_applies() -> None:
    """The same refusals as `launchcard check` (launchcard.check.limit_rules), named by their rule: an MXFP4
    checkpoint on a Turing GPU, and a --max-model-len above what vLLM derives from the config.  The catalog gives
    the T4 no bandwidth, so the search is given measured-style figures (its datasheet's 320 GB/s, 65 TFLOP/s FP16):
    without them it is bad input before the search (test_plan_cli_hardware)."""
    from launchcard.predict import HardwareFigures

    t4_figures = HardwareFigures(id="t4", kind="gpu", bandwidth_bps=320e9, flops={"fp16": 65e12})
    t4 = SearchSpace(model=MODEL, gpu="t4", gpus=8, gpus_per_node=8, options=(checkpoint_option(MODEL, GPT_OSS),),
                     max_num_seqs=(16,), disaggregation=False, figures=t4_figures)
    r = search(t4, Workload(1024, 128, concurrency=8), Slo.parse("tpot=100"))
    assert r.winner is None
    assert {o.stage for o in r.outcomes} <= {"layout", "check"}
    assert "check: quant-gpu" in r.rejected_by_reason()
    one = next(o for o in r.outcomes if o.stage == "check")
    assert (one.reason or "").startswith("[quant-gpu] quantization mxfp4 needs a newer GPU")
    long = replace(gpt_oss_space(), max_model_len=200_000, disaggregation=False)
    r = search(long, Workload(1024, 128, concurrency=8), Slo.parse("tpot=100"))
    assert r.winner is None and "check: max-model-len-over-model" in r.rejected_by_reason()


def test_a_candidate_command_replaces_the_searched_flags() -> None:
    """What the rules judge is the command --emit would write: the base flags with the searched ones replaced."""
    from launchcard.plansearch._startup import command_argv

    opt = checkpoint_option(MODEL, GPT_OSS, ("vllm", "serve", MODEL, "--tensor-parallel-size", "8",
                                            "--max-num-seqs=256", "--enable-expert-parallel", "--async-scheduling"))
    c = Candidate(option="checkpoint", tp=2, pp=1, dp=4, ep=False, kv_cache_dtype="fp8", max_num_seqs=64)
    space = replace(gpt_oss_space(), options=(opt,), max_model_len=32768)
    assert command_argv(space, opt, c) == (
        "vllm", "serve", MODEL, "--async-scheduling", "--tensor-parallel-size", "2", "--data-parallel-size", "4",
        "--kv-cache-dtype", "fp8", "--max-num-seqs", "64", "--max-model-len", "32768")


def test_plans_differing_only_in_an_unreached_batch_limit_are_one_row() -> None:
    space = replace(gpt_oss_space(), max_num_seqs=(8, 16, 64, 256), disaggregation=False)
    r = search(space, Workload(1024, 128, concurrency=8), Slo.parse("tpot=100"))
    plans = [replace(o.candidate, max_num_seqs=0) for o in r.ranked]
    assert r.ranked and len(plans) == len(set(plans))  # 8 clients: 8, 16, 64 and 256 are one run
    assert all(o.candidate.max_num_seqs == 8 for o in r.ranked)
    assert any("listed once, with the smallest such limit" in f for f in r.findings)


def test_speculative_plans_shown_say_the_acceptance_they_assume() -> None:
    model = "deepseek-ai/DeepSeek-V4-Flash"
    cfg = SHARED / "corpus" / "hf" / model / "config.json"
    space = SearchSpace(model=model, gpu="b200", gpus=8, gpus_per_node=8, options=(checkpoint_option(model, cfg),),
                        max_num_seqs=(16,), disaggregation=False, max_model_len=8192)
    slo = Slo.parse("tpot=200")
    r = search(space, Workload(1024, 128, concurrency=8), slo)
    assert any(o.candidate.spec == "mtp" for o in r.ranked)
    assert any("acceptance 0.8 assumed for mtp" in f for f in r.findings)
    given = search(space, Workload(1024, 128, concurrency=8, acceptance=0.6), slo)
    assert not any("assumed for mtp" in f for f in given.findings)


def test_card_checkpoints_become_options_when_their_config_is_at_hand() -> None:
    from launchcard.card import Checkpoint, LaunchCard
    from launchcard.plansearch import card_options

    card = LaunchCard(model=MODEL, checkpoints=(Checkpoint(name=MODEL, repo=MODEL, format="mxfp4"),
                                                Checkpoint(name="someone/gpt-oss-120b-int4", format="int4")))
    options, skipped = card_options(card, set(), SHARED / "corpus")
    assert [o.name for o in options] == [MODEL] and options[0].config == str(GPT_OSS)
    assert len(skipped) == 1 and skipped[0].startswith("checkpoint someone/gpt-oss-120b-int4 (int4; ")
    assert card_options(card, {MODEL}, SHARED / "corpus")[0] == []  # a checkpoint already searched is not again
    r = search(replace(gpt_oss_space(), options=tuple(options), max_num_seqs=(16,)), Workload(1024, 128, concurrency=8),
               Slo.parse("tpot=100"))
    assert r.winner is not None and r.winner.candidate.option == MODEL


def test_cli_plan_with_corpus_names_each_left_out_checkpoint_once() -> None:
    res = run_cli("plan", "moonshotai/Kimi-K2.5", "--recipes", str(RECIPES), "--corpus", str(SHARED / "corpus"),
                  "--gpu", "b200", "--gpus", "8", "--isl", "1024", "--osl", "128", "--concurrency", "8",
                  "--slo", "tpot=200", *SMALL)
    assert res.returncode in (0, 1), res.stderr
    left = [x for x in res.stdout.splitlines() if "left out:" in x]
    assert any("checkpoint baseten-admin/Kimi-2.5-text-nvfp4-v3" in x for x in left)  # a provider's build
    assert sum("nvidia/Kimi-K2.5-NVFP4" in x for x in left) == 1  # the recipe variant's line only


@pytest.mark.parametrize(("spec", "feature_on"), [("eagle3", True), (None, False)])
def test_a_winner_with_the_recipes_speculative_feature_says_that_feature(spec: str | None, feature_on: bool) -> None:
    """gpt-oss-120b's recipe turns EAGLE3 on with its opt-in feature spec_decoding: a winner running it was
    emitted with --speculative-config yet `features=tool_calling` in the header (the plan's facts: a feature list
    that leaves out what the command runs). The winner's plan is the recipe's with that feature on (its args, its
    lines), and a winner without speculative decoding does not list it."""
    from launchcard.check import check_plan, plan_facts
    from launchcard.plansearch import recipe_options, winner_plan
    from launchcard.sources.vllm_recipes import load_recipes

    repo = load_recipes(RECIPES)
    opts, plans, _ = recipe_options(repo, MODEL, "h100", RECIPES)
    opt = next(o for o in opts if o.name == "default")
    c = Candidate("default", 1, 1, 8, True, "fp8", 8, spec=spec, spec_tokens=7 if spec else 0)
    plan = winner_plan(plans["default"], c, Workload(1024, 256, concurrency=64), Slo.parse("tpot=40"), opt,
                       repo=repo)
    runs_spec = "--speculative-config" in plan.commands[0].argv
    assert runs_spec is feature_on
    facts = plan_facts(plan, check_plan(plan, config=opt.config, recipes=repo))
    assert ("spec_decoding" in facts.features) is feature_on, facts.features
    assert "tool_calling" in facts.features
    if feature_on:  # the recipe's own line, kept as what the search's value replaced
        unit = next(u for u in plan.commands[0].units if u.flag == "--speculative-config")
        assert "gpt-oss-120b.yaml" in str(unit.origin) + str(getattr(unit, "overrides", ""))


V4 = "deepseek-ai/DeepSeek-V4-Flash"
V4_CFG = SHARED / "corpus" / "hf" / V4 / "config.json"


def _sglangspace(**kw: object) -> SearchSpace:
    return SearchSpace(model=V4, gpu="b200", gpus=8, gpus_per_node=8, options=(checkpoint_option(V4, V4_CFG),),
                       engine="sglang", max_num_seqs=(16,), max_model_len=8192, **kw)  # type: ignore[arg-type]


def test_sglang_plans_search_expert_parallelism_and_mtp_in_sglang_flags() -> None:
    """SGLang candidates of an MoE model with MTP layers include EP (--ep-size = --tp-size, the deprecation note
    of --enable-ep-moe in SGLang's captured parser) and MTP speculative decoding (--speculative-algorithm EAGLE,
    steps/top-k 1/steps+1 draft tokens as the cookbook writes it); the acceptance is stated as assumed."""
    from launchcard.plansearch._startup import command_argv

    space = _sglangspace()
    r = search(space, Workload(1024, 128, concurrency=8), Slo.parse("tpot=200"))
    both = [o for o in r.outcomes if o.candidate.ep and o.candidate.spec == "mtp"]
    assert both and all(o.stage != "check" for o in both)
    for o in both:
        argv = command_argv(space, space.options[0], o.candidate)
        assert argv[:3] == ("python3", "-m", "sglang.launch_server")
        assert argv[argv.index("--ep-size") + 1] == argv[argv.index("--tp-size") + 1]
        spec = argv[argv.index("--speculative-algorithm"):]
        assert list(spec[:8]) == ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1",
                                  "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "2"]
        assert not {"--enable-expert-parallel", "--speculative-config", "--tensor-parallel-size"} & set(argv)
    assert any(o.candidate.spec for o in r.ranked)
    assert any("acceptance 0.8 assumed for mtp" in f for f in r.findings)
    assert not any(o.candidate.mode == "disaggregated" for o in r.outcomes)


def test_sglang_candidates_are_judged_by_sglang_parser_not_vllm_rules() -> None:
    """A flag SGLang's captured parser does not have (a vLLM one) refuses every candidate, named by the parser's
    rule; vLLM's start-up rules (here: --max-model-len above the config's) are never applied to SGLang."""
    base = ("python3", "-m", "sglang.launch_server", "--model-path", V4, "--max-num-batched-tokens", "8192")
    bad = replace(_sglangspace(), options=(checkpoint_option(V4, V4_CFG, base),))
    r = search(bad, Workload(1024, 128, concurrency=8), Slo.parse("tpot=200"))
    assert r.winner is None and {o.stage for o in r.outcomes} == {"check"}
    assert all(o.reason and o.reason.startswith("[flag-unknown-flag] --max-num-batched-tokens") for o in r.outcomes)
    long = replace(_sglangspace(), max_model_len=1_100_000)  # above the 1,048,576 vLLM derives from the config
    r = search(long, Workload(1024, 128, concurrency=8), Slo.parse("tpot=200"))
    assert not any(o.reason and "vLLM refuses" in o.reason for o in r.outcomes)
    vllm = search(replace(long, engine="vllm"), Workload(1024, 128, concurrency=8), Slo.parse("tpot=200"))
    assert any(o.reason and "vLLM refuses" in o.reason for o in vllm.outcomes)


def test_tp_groups_that_would_span_two_nodes_are_layout_rejections() -> None:
    """8 GPUs on 3-GPU nodes (2 whole nodes and 2 more GPUs): 4 groups of TP 2 need 4 places, the nodes hold
    3 (one per whole node, one on the last); TP 1 fits anywhere."""
    space = SearchSpace(model=MODEL, gpu="h100", gpus=8, gpus_per_node=3, options=(checkpoint_option(MODEL, GPT_OSS),),
                        max_num_seqs=(16,), disaggregation=False)
    r = search(space, Workload(1024, 128, concurrency=8), Slo.parse("tpot=100"))
    tp2 = [o for o in r.outcomes if o.candidate.tp == 2]
    assert tp2 and all(o.stage == "layout" and "4 groups of TP 2 do not fit on 3-GPU nodes" in (o.reason or "")
                       for o in tp2)
    assert {o.candidate.tp for o in r.outcomes if o.figures is not None} == {1}
    # whole nodes: TP 4 on 8-GPU nodes packs two groups a node, as before
    whole = search(gpt_oss_space(gpus=16, disaggregation=False), Workload(1024, 128, concurrency=8),
                   Slo.parse("tpot=100"))
    assert not any("do not fit on" in (o.reason or "") for o in whole.outcomes)


def test_a_derived_option_searches_the_server_predict_times(monkeypatch: pytest.MonkeyPatch) -> None:
    """derived_option picked its base command by role (single or head, else the first), where predict times
    predict.served_command's (an instance of a KV-store plan, never a worker): one choice, predict's."""
    import launchcard.check
    from launchcard.check import derive_plan
    from launchcard.plansearch import derived_option
    from launchcard.predict import served_command

    plan = derive_plan(MODEL, GPT_OSS, "h100")
    own = plan.commands[0]
    worker = replace(own, role="worker", argv=(*own.argv, "--headless"))
    instance = replace(own, role="instance", argv=(*own.argv, "--kv-transfer-config", "{}"))
    odd = replace(plan, commands=(worker, instance))
    monkeypatch.setattr(launchcard.check, "derive_plan", lambda *a, **k: odd)
    option, base, _ = derived_option(MODEL, GPT_OSS, "h100")
    assert base is odd and "--headless" not in option.base_flags
    assert option.base_flags[-2:] == served_command(odd).argv[-2:] == ("--kv-transfer-config", "{}")


def test_every_spelling_memory_reads_a_searched_setting_by_is_replaced() -> None:
    """The searched vLLM flags are memory's Settings-field -> flag table (memory.vllm_flags), not a copy: a base
    command's TP written `--tp 2` (a spelling settings_from_argv reads) was kept beside the winner's
    --tensor-parallel-size."""
    from launchcard.memory import settings_from_argv, vllm_flags
    from launchcard.plansearch._options import FLAG_NAMES, with_flags

    fields = {"tp": "tp", "pp": "pp", "dp": "dp", "kv": "kv_cache_dtype", "mns": "max_num_seqs",
              "mml": "max_model_len"}
    for key, field in fields.items():
        assert FLAG_NAMES["vllm"][key] == vllm_flags(field)[0]
        for spelling in vllm_flags(field):
            value = "fp8" if key == "kv" else "2"
            want = [(FLAG_NAMES["vllm"][key], "auto" if key == "kv" else "4")]
            out = with_flags(("--trust-remote-code", spelling, value), want)
            assert spelling not in out or spelling == want[0][0], (spelling, out)
            assert getattr(settings_from_argv(list(out)), field) in (4, "auto"), out
    assert FLAG_NAMES["vllm"]["ep"] == vllm_flags("expert_parallel")[0]
    assert FLAG_NAMES["vllm"]["spec"] == vllm_flags("speculative_method")[0] == "--speculative-config"


def test_a_tpot_slo_on_one_token_outputs_is_refused_not_met_by_every_plan(tmp_path: Path) -> None:
    """`plan --osl 1 --slo tpot=50` said every plan met the SLO: with one output token there is no TPOT (predict's
    is none), so the SLO judged nothing. plan and sweep refuse it in one line, exit 2; a TTFT SLO still runs."""
    from helpers import run_cli

    cfg = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "hf" / "openai" / "gpt-oss-120b"
    args = ["plan", "openai/gpt-oss-120b", "--config", str(cfg / "config.json"), "--gpu", "h100", "--gpus", "2",
            "--concurrency", "8", "--isl", "1024", "--osl", "1", "--max-num-seqs", "64"]
    res = run_cli(*args, "--slo", "ttft=500,tpot=50")
    line = res.stderr.strip()
    assert res.returncode == 2 and "\n" not in line and line.startswith("launchcard: error: --slo:"), line
    assert "no TPOT to judge" in line and "meet" not in res.stdout
    assert run_cli(*args, "--slo", "ttft=500").returncode == 0
    (tmp_path / "hf").symlink_to(cfg.parents[1])
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("models:\n  - {id: openai/gpt-oss-120b, config: hf/openai/gpt-oss-120b/config.json}\n"
                     "gpus:\n  - {gpu: h100, count: 2}\nworkloads:\n"
                     "  - {name: one, isl: 100, osl: 1, concurrency: 4, slo: \"tpot=50\"}\n")
    res = run_cli("sweep", str(fleet), "--workers", "1")
    assert res.returncode == 2 and f"{fleet}:6" in res.stderr and "no TPOT to judge" in res.stderr, res.stderr


def test_the_memory_plans_dp_is_one_rule_for_every_engine() -> None:
    """``_memory_dp``: the DP a candidate's memory plan is made at.  An EP group spans DP (vLLM, TensorRT-LLM);
    vLLM's MoE without EP is TP over TP x DP too (memory.moe_split), a dense model's DP ranks are replicas; SGLang's
    DP-attention ranks are one server's, its other DP ranks replicas; one rank is 1 everywhere."""
    from launchcard.plansearch._search import _memory_dp

    dense_cfg = Path(__file__).parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
    moe = gpt_oss_space()
    dense = replace(moe, options=(checkpoint_option("Qwen/Qwen3-8B", dense_cfg),))
    c = Candidate(option="checkpoint", tp=2, pp=1, dp=4, ep=False, kv_cache_dtype="auto", max_num_seqs=16)
    ep, dpa = replace(c, ep=True), replace(c, dp_attention=True, engine="sglang")

    def dp(space: SearchSpace, cand: Candidate, engine: str, ranks: int = 4) -> int:
        return _memory_dp(replace(space, engine=engine), space.options[0], cand, ranks)

    assert [dp(moe, c, "vllm"), dp(dense, c, "vllm"), dp(dense, ep, "vllm"), dp(moe, c, "vllm", 1)] == [4, 1, 4, 1]
    assert [dp(moe, c, "trtllm"), dp(moe, ep, "trtllm")] == [1, 4]
    assert [dp(moe, c, "sglang"), dp(moe, ep, "sglang"), dp(moe, dpa, "sglang")] == [1, 1, 4]
