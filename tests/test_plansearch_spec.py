"""A searched plan with speculative decoding is the resolver's command for the recipe feature that gives it
(``launchcard resolve --feature F`` / ``--mode F=M``) with the searched flags replaced: every arg of the feature
and mode, not only its --speculative-config. qa8: Qwen3-Next's spec_decoding feature carries
--no-enable-chunked-prefill, which the plan's MTP rows and --emit left out.

The corpus holds no config.json of Qwen3-Next, Laguna, Step-3.5-Flash or GLM-4.5: their default variant is planned
with DeepSeek-V4-Flash's (MoE, MTP layers) as a stand-in, passed as --config is. What is asserted is the command,
which the recipe and the resolver decide; the figures are not asserted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import run_cli
from launchcard.plansearch import SearchSpace, Slo, checkpoint_option, recipe_options, search
from launchcard.plansearch._options import SEARCHED
from launchcard.plansearch._startup import command_argv
from launchcard.plansearch._types import Candidate, Option
from launchcard.predict import Workload

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
RECIPES = SHARED / "corpus" / "vllm-recipes"
STAND_IN = SHARED / "corpus" / "hf" / "deepseek-ai" / "DeepSeek-V4-Flash" / "config.json"
pytestmark = pytest.mark.skipif(not STAND_IN.is_file(), reason="needs the shared corpus")

# recipes whose spec_decoding feature carries more than --speculative-config (the scan in the commit message)
EXTRA_ARGS = {
    "Qwen/Qwen3-Next-80B-A3B-Instruct": ("--no-enable-chunked-prefill",),
    "poolside/Laguna-S-2.1": ("--moe-backend", "triton"),
    "stepfun-ai/Step-3.5-Flash": ("--hf-overrides",),
    "zai-org/GLM-4.5": ("--speculative-config.method", "mtp"),  # the dotted form
}


def _repo() -> object:
    from launchcard.sources.vllm_recipes import load_recipes

    return load_recipes(RECIPES)


def _resolved(model: str, gpu: str, *, variant: str | None = None, feature: str | None = None,
              mode: str | None = None) -> tuple[str, ...]:
    """``launchcard resolve MODEL --hardware GPU [--variant V] [--feature F] [--mode F=M]``: the served command."""
    from launchcard.cli._options import PlanOptions, build_plan
    from launchcard.predict import served_command

    plan = build_plan(PlanOptions.from_cli(model, RECIPES, variant=variant, hardware=gpu,
                                           feature=[feature] if feature else None,
                                           mode=[f"{feature}={mode}"] if mode else None))
    return tuple(served_command(plan).argv)


def _units(argv: tuple[str, ...]) -> Counter[tuple[str, str | None]]:
    out: Counter[tuple[str, str | None]] = Counter()
    i = 3  # after vllm serve MODEL
    while i < len(argv):
        value = argv[i + 1] if i + 1 < len(argv) and not argv[i + 1].startswith("--") else None
        out[(argv[i], value)] += 1
        i += 2 if value is not None else 1
    return out


def _searched_away(units: Counter[tuple[str, str | None]]) -> Counter[tuple[str, str | None]]:
    """``units`` without the flags the search decides (TP, batch limit ...; the speculative config stays)."""
    return Counter({u: n for u, n in units.items() if SEARCHED.get(u[0]) in (None, "spec")})


def _spec_candidate(opt: Option, want: tuple[str, ...], at: int = 0) -> Candidate:
    """The candidate of ``opt``'s ``at``-th offer laid out as the resolved command ``want`` is (TP, EP, KV dtype), one
    replica, batch limit 16."""
    method, tokens = opt.spec[at]
    tp = int(want[want.index("--tensor-parallel-size") + 1]) if "--tensor-parallel-size" in want else 1
    kv = want[want.index("--kv-cache-dtype") + 1] if "--kv-cache-dtype" in want else "auto"
    return Candidate(opt.name, tp, 1, 1, "--enable-expert-parallel" in want, kv, 16, method, tokens)


@pytest.mark.parametrize("model", sorted(EXTRA_ARGS))
def test_a_spec_plan_is_the_resolvers_command_with_the_feature_on(model: str) -> None:
    opts, _, _ = recipe_options(_repo(), model, "h200", RECIPES, STAND_IN)  # type: ignore[arg-type]
    opt = next(o for o in opts if o.name == "default")
    assert opt.spec and opt.spec_choice[0] is not None and opt.spec_choice[0][0] == "spec_decoding"
    want = _resolved(model, "h200", feature="spec_decoding")
    c = _spec_candidate(opt, want)
    cmd = command_argv(SearchSpace(model=model, gpu="h200", gpus=8, gpus_per_node=8, options=(opt,)), opt, c)
    # the resolver's every unit, the searched ones with the search's values: TP as resolved, --max-num-seqs added
    assert _units(cmd) == _units(want) + Counter({("--max-num-seqs", "16"): 1})
    assert all(tok in cmd for tok in EXTRA_ARGS[model])
    # the plan without speculative decoding is the resolver's without the feature: none of its args
    off = command_argv(SearchSpace(model=model, gpu="h200", gpus=8, gpus_per_node=8, options=(opt,)), opt,
                       replace(c, spec=None, spec_tokens=0))
    assert _searched_away(_units(off)) == _searched_away(_units(_resolved(model, "h200")))
    assert not any(t.startswith("--speculative") for t in off) and EXTRA_ARGS[model][0] not in off


def test_each_mode_of_a_modal_spec_feature_is_the_resolvers_command_of_that_mode() -> None:
    """Nemotron-3.5-Lightning's spec_decoding offers dspark, mtp and dflash (the old reader took a feature's plain
    args only, so a modal feature offered nothing); each is ``resolve --mode spec_decoding=M``. DeepSeek-V4-Flash's
    fp8 variant runs MTP with the recipe's Hopper override (1 token) on an H100."""
    repo = _repo()
    model = "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16"
    opts, _, _ = recipe_options(repo, model, "b200", RECIPES, STAND_IN)  # type: ignore[arg-type]
    opt = next(o for o in opts if o.name == "default")
    modes = [m for _, m in (c for c in opt.spec_choice if c is not None)]
    assert sorted(modes) == ["dflash", "dspark", "mtp"] and modes[0] == "dspark"  # the default mode first
    for at, mode in enumerate(modes):
        want = _resolved(model, "b200", feature="spec_decoding", mode=mode)
        c = _spec_candidate(opt, want, at)
        space = SearchSpace(model=model, gpu="b200", gpus=8, gpus_per_node=8, options=(opt,))
        assert _units(command_argv(space, opt, c)) == _units(want) + Counter({("--max-num-seqs", "16"): 1})
    dsv4 = "deepseek-ai/DeepSeek-V4-Flash"
    opts, _, _ = recipe_options(repo, dsv4, "h100", RECIPES)  # type: ignore[arg-type]
    fp8 = next(o for o in opts if o.name == "fp8")
    assert fp8.spec == (("mtp", 1),) and fp8.spec_choice == (("spec_decoding", "mtp"),)
    want = _resolved(dsv4, "h100", variant="fp8", feature="spec_decoding", mode="mtp")
    cmd = command_argv(SearchSpace(model=dsv4, gpu="h100", gpus=8, gpus_per_node=8, options=(fp8,)), fp8,
                       _spec_candidate(fp8, want))
    assert _units(cmd) == _units(want) + Counter({("--max-num-seqs", "16"): 1})
    assert '{"method":"mtp","num_speculative_tokens":1}' in cmd


def test_two_modes_of_one_method_and_depth_are_searched_once_and_said() -> None:
    opts, _, skipped = recipe_options(_repo(), "MiniMaxAI/MiniMax-M3", "h200", RECIPES,  # type: ignore[arg-type]
                                      STAND_IN)
    opt = next(o for o in opts if o.name == "default")
    assert opt.spec_choice == (("spec_decoding", "eagle3"),)
    assert any("spec_decoding=eagle3_gqa (eagle3 x3) is searched as spec_decoding=eagle3" in s for s in skipped)


def test_a_spec_feature_on_by_default_is_off_in_the_plans_without_speculative_decoding() -> None:
    """GLM-OCR turns MTP on by default in the dotted form (--speculative-config.method mtp): a plan the search runs
    without speculative decoding carried those flags (with_flags knew only --speculative-config) and ran MTP."""
    opts, plans, _ = recipe_options(_repo(), "zai-org/GLM-OCR", "h200", RECIPES, STAND_IN)  # type: ignore[arg-type]
    opt = next(o for o in opts if o.name == "default")
    assert "spec_decoding" not in plans["default"].features and opt.spec == (("mtp", 1),)
    c = _spec_candidate(opt, _resolved("zai-org/GLM-OCR", "h200"))
    space = SearchSpace(model="zai-org/GLM-OCR", gpu="h200", gpus=8, gpus_per_node=8, options=(opt,))
    assert not any(t.startswith("--speculative") for t in command_argv(space, opt, replace(c, spec=None)))
    assert "--speculative-config.method" in command_argv(space, opt, c)


QWEN_NEXT = ("plan", "Qwen/Qwen3-Next-80B-A3B-Instruct", "--recipes", str(RECIPES), "--config", str(STAND_IN),
             "--gpu", "h200", "--gpus", "8", "--slo", "ttft=5000,tpot=40", "--isl", "1024", "--osl", "128",
             "--concurrency", "8", "--num-requests", "16", "--acceptance", "0.9", "--max-num-seqs", "16",
             "--no-disaggregation", "--kv-cache-dtype", "auto")


def test_the_plans_spec_winner_and_its_emitted_command_are_the_resolvers() -> None:
    opts, _, _ = recipe_options(_repo(), QWEN_NEXT[1], "h200", RECIPES, STAND_IN)  # type: ignore[arg-type]
    space = SearchSpace(model=QWEN_NEXT[1], gpu="h200", gpus=8, gpus_per_node=8, options=tuple(opts),
                        max_num_seqs=(16,), kv_dtypes=("auto",), disaggregation=False)
    work = Workload(1024, 128, concurrency=8, num_requests=16, acceptance=0.9)
    r = search(space, work, Slo.parse("ttft=5000,tpot=40"))
    assert r.winner is not None and r.winner.candidate.spec == "qwen3_next_mtp"
    want = _searched_away(_units(_resolved(QWEN_NEXT[1], "h200", feature="spec_decoding")))
    for c, cmd in r.commands.items():  # every listed row with speculative decoding on
        if c.spec:
            assert _searched_away(_units(cmd)) == want
    # the flag predict does not time is said of the spec plans, named by their method
    assert any(f.startswith("default spec=qwen3_next_mtpx2: --no-enable-chunked-prefill") for f in r.findings)
    done = run_cli(*QWEN_NEXT, "--emit", "shell")
    assert done.returncode == 0, done.stderr
    assert "  --no-enable-chunked-prefill\n" in done.stdout
    assert """  --speculative-config '{"method":"qwen3_next_mtp","num_speculative_tokens":2}'\n""" in done.stdout


def test_a_checkpoints_assumed_speculative_config_is_said_where_a_listed_plan_runs_it() -> None:
    opt = checkpoint_option("deepseek-ai/DeepSeek-V4-Flash", STAND_IN)
    assert opt.spec == (("mtp", 1),) and "assumed" in opt.spec_source[0]
    space = SearchSpace(model="deepseek-ai/DeepSeek-V4-Flash", gpu="h200", gpus=8, gpus_per_node=8, options=(opt,),
                        max_num_seqs=(16,), kv_dtypes=("auto",), disaggregation=False)
    r = search(space, Workload(1024, 128, concurrency=8, num_requests=16, acceptance=0.9), Slo.parse("tpot=200"))
    assert any(c.spec for c in r.commands)
    line = f"checkpoint: speculative decoding mtp x1: {opt.spec_source[0]}"
    assert r.findings.count(line) == 1
    plain = search(replace(space, options=(replace(opt, spec=(), spec_config=(), spec_source=()),)),
                   Workload(1024, 128, concurrency=8, num_requests=16), Slo.parse("tpot=200"))
    assert not any("speculative decoding mtp" in f for f in plain.findings)


def test_a_winner_is_resolved_with_the_feature_and_mode_it_runs_and_without_it_when_it_runs_none() -> None:
    """DeepSeek-V4-Flash's default variant turns spec_decoding=dspark on by default: its prefill/decode winner (no
    speculative decoding searched there) is the pd_cluster plan with the feature off; the fp8 variant's MTP winner
    is resolved with spec_decoding=mtp, as ``resolve --mode spec_decoding=mtp`` is."""
    from launchcard.plansearch import winner_plan

    repo = _repo()
    model = "deepseek-ai/DeepSeek-V4-Flash"
    opts, plans, _ = recipe_options(repo, model, "h100", RECIPES, STAND_IN)  # type: ignore[arg-type]
    by = {o.name: o for o in opts}  # the default variant (the 0731 release) planned with the preview's config
    work, slo = Workload(4096, 256, concurrency=64), Slo.parse("tpot=200")
    pd = winner_plan(plans["default"], Candidate("default", 8, 1, 1, False, "fp8", 64, mode="disaggregated",
                                                 prefill_gpus=8), work, slo, by["default"], repo=repo)  # type: ignore[arg-type]
    assert "spec_decoding" not in pd.features and by["default"].spec_choice == (("spec_decoding", "dspark"),)
    assert not any(t.startswith("--speculative") for cmd in pd.commands for t in cmd.argv)
    want = _resolved(model, "h100", variant="fp8", feature="spec_decoding", mode="mtp")
    agg = winner_plan(plans["fp8"], _spec_candidate(by["fp8"], want), work, slo, by["fp8"], repo=repo)  # type: ignore[arg-type]
    assert agg.feature_modes.get("spec_decoding") == "mtp" and "spec_decoding" in agg.features
    served = next(cmd for cmd in agg.commands if cmd.role != "router")
    assert _units(tuple(served.argv)) == _units(want) + Counter({("--max-num-seqs", "16"): 1})
