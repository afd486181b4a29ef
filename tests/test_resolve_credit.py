"""Line credit (issue 20 item 2): every argument credits the line that holds its value, and the line naming
its flag where that is another line; a computed value is marked derived and cites its inputs.

The judge (``credit_support``) reads the recipe files as text, independently of launchcard's YAML loader.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from credit_support import holds, judge_choices, judge_corpus, judge_plan, judge_strategies
from helpers import run_cli
from launchcard.resolve import Choice, resolve

LING = "inclusionAI/Ling-2.6-flash"


def _unit(plan, flag, role=None):
    cmd = plan.commands[0] if role is None else next(c for c in plan.commands if c.role == role)
    return next(u for u in cmd.units if u.flag == flag)


@pytest.mark.parametrize(("model", "variant", "line"), [
    (LING, None, 54),  # strategy_overrides.single_node_tp.tp: 4
    ("MiniMaxAI/MiniMax-M2.1", None, 82),  # under the recipe's comment on why TP 8 fails
    ("Qwen/Qwen3-VL-235B-A22B-Instruct", "fp8", 64),  # variants.fp8.tp: 4
])
def test_tp_value_is_credited_to_the_line_holding_it(recipe_repo, recipes_dir: Path, model, variant, line):
    plan = resolve(recipe_repo, Choice(model=model, variant=variant, hardware="h100"))
    unit = _unit(plan, "--tensor-parallel-size")
    assert unit.value == "4"
    ev, flag_ev = unit.origin.evidence, unit.origin.flag_evidence
    assert ev is not None and ev.path == f"models/{model}.yaml" and ev.line == line
    assert holds(recipes_dir / ev.path, ev.line, "4")
    # the flag's name is the strategy's parallel_flag line: credited too, separately
    assert flag_ev is not None and (flag_ev.path, flag_ev.line) == ("strategies/single_node_tp.yaml", 17)
    assert unit.origin.derived is None


def test_flag_and_value_written_as_two_items_credit_both_lines(recipe_repo):
    plan = resolve(recipe_repo, Choice(model="zai-org/GLM-5.3-Flash", hardware="h100"))
    unit = _unit(plan, "--tool-call-parser")
    assert (unit.origin.evidence.line, unit.origin.flag_evidence.line) == (45, 44)
    switch = _unit(plan, "--enable-auto-tool-choice")  # a flag without a value: one line, no flag line
    assert switch.origin.evidence.line == 46 and switch.origin.flag_evidence is None


def test_computed_values_are_derived_and_cite_their_inputs(recipe_repo, recipes_dir: Path):
    plan = resolve(recipe_repo, Choice(model="zai-org/GLM-5.3-Flash", hardware="h100", strategy="multi_node_tp",
                                       node_count=2))
    tp = _unit(plan, "--tensor-parallel-size", "head")
    assert tp.value == "16" and tp.origin.evidence is None and "GPUs per node" in tp.origin.derived
    given = {i.name: i for i in tp.origin.inputs}
    gpu = given["hardware_profiles.h100.gpu_count"]
    assert gpu.value == "8" and gpu.evidence.path == "taxonomy.yaml"
    assert holds(recipes_dir / "taxonomy.yaml", gpu.evidence.line, "8")
    assert given["--nodes"].value == "2" and given["--nodes"].evidence is None  # the user's choice
    worker = plan.commands[1]
    rank = next(u for u in worker.units if u.flag == "--node-rank")
    assert rank.value == "1" and rank.origin.derived and rank.origin.evidence is None
    head = next(u for u in worker.units if u.flag == "--master-addr")
    assert head.value == "$HEAD_IP" and "placeholder" in head.origin.derived and head.origin.inputs


def test_default_tp_from_the_gpu_count_is_derived(recipe_repo):
    # Seed-OSS on H200: no tp anywhere; the builder fits the planning minimum on one GPU
    plan = resolve(recipe_repo, Choice(model="ByteDance-Seed/Seed-OSS-36B-Instruct", hardware="h200"))
    unit = _unit(plan, "--tensor-parallel-size")
    assert unit.value == "1" and unit.origin.evidence is None
    names = [i.name for i in unit.origin.inputs]
    assert names == ["variants.default.vram_minimum_gb", "hardware_profiles.h200.vram_gb",
                     "hardware_profiles.h200.gpu_count"]


def test_prefill_decode_layout_values_are_derived(recipe_repo, recipes_dir: Path):
    plan = resolve(recipe_repo, Choice(model="MiniMaxAI/MiniMax-M2", strategy="pd_cluster"))
    judged = judge_plan(recipes_dir, plan)
    assert judged and all(j.ok is not False for j in judged), [j for j in judged if j.ok is False]
    env = {e.name: e for e in plan.role("prefill").env_entries}
    assert env["CUDA_VISIBLE_DEVICES"].origin.derived


def test_every_credit_over_the_corpus_holds_its_value(recipe_repo, recipes_dir: Path):
    """Every recipe and variant at its default hardware, h100 and mi300x; then every strategy each offers; then
    each feature, mode, KV offload option and KV store, and advanced presets (user choices are not credited)."""
    for judged in (judge_corpus(recipes_dir, recipe_repo), judge_strategies(recipes_dir, recipe_repo),
                   judge_choices(recipes_dir, recipe_repo)):
        credited = [j for j in judged if j.ok is not None]
        misses = [j for j in credited if not j.ok]
        assert len(credited) > 5000
        assert not misses, f"{len(misses)}/{len(credited)} credits miss their value, e.g. {misses[:5]}"


def test_json_and_explain_show_the_value_line_and_the_flag_line(recipes_dir: Path):
    proc = run_cli("resolve", LING, "--recipes", str(recipes_dir), "--hardware", "h100", "--json")
    unit = next(u for u in json.loads(proc.stdout)["commands"][0]["units"] if u["flag"] == "--tensor-parallel-size")
    assert unit["origin"]["evidence"]["url"].endswith(f"models/{LING}.yaml#L54")
    assert unit["origin"]["flag_evidence"]["url"].endswith("strategies/single_node_tp.yaml#L17")
    proc = run_cli("resolve", LING, "--recipes", str(recipes_dir), "--hardware", "h100", "--explain")
    row = next(line.split("\t") for line in proc.stdout.splitlines() if line.startswith("--tensor-parallel-size\t"))
    assert row[4] == f"models/{LING}.yaml#L54" and row[5] == "strategies/single_node_tp.yaml#L17"


def test_emit_header_card_page_and_web_read_the_same_credit(recipe_repo, recipes_dir: Path, shared_dir: Path):
    from launchcard.emit import emit

    plan = resolve(recipe_repo, Choice(model=LING, hardware="h100"))
    script = emit(plan, "shell", card_name=LING)["launch.sh"]
    expected = _unit(plan, "--tensor-parallel-size").origin.where()
    assert f"#   --tensor-parallel-size 4: {expected}" in script
    assert expected == f"models/{LING}.yaml#L54 (flag: strategies/single_node_tp.yaml#L17)"

    from launchcard.merge import build_corpus

    card = build_corpus(shared_dir / "corpus", models=[LING], hardware="h100").cards[LING]
    env = next(e for e in card.envs if e.source.kind == "vllm-recipes")
    credit = next(c for c in env.credits if c.flag == "--tensor-parallel-size")
    assert credit.credit == f"models/{LING}.yaml#L54" and credit.flag_evidence.line == 17
    assert credit.where() == expected  # one wording on every surface
    from launchcard.cli._card import card_text

    assert f"  --tensor-parallel-size 4: {expected}" in card_text(card)
    from launchcard.render import render_markdown

    assert f"models/{LING}.yaml#L54 (flag: strategies/single_node_tp.yaml#L17)" in render_markdown(card)

    from launchcard.web._builder import Selection, build

    flags = build(recipe_repo, LING, Selection(hardware="h100"), revision=None)["commands"][0]["flags"]
    tp = next(f for f in flags if f["flag"] == "--tensor-parallel-size")
    assert tp["evidence_url"].endswith("#L54") and tp["flag_url"].endswith("single_node_tp.yaml#L17")


def test_credit_path_writes_the_same_tokens_as_the_batch_path(recipe_repo):
    """A batch of reference cases skips building credits (ctx.credit off): both paths must write the same
    parallelism tokens and prefill/decode pool tokens, for every recipe, strategy, node count and rank."""
    from launchcard.resolve import _pd
    from launchcard.resolve._defaults import effective_compatible
    from launchcard.resolve._run import _context
    from launchcard.resolve._topology import parallel_tokens

    def flat(groups):
        return [t for toks, _ in groups for t in toks]

    compared = 0
    for model in recipe_repo.model_ids():
        doc = recipe_repo.recipe(model)
        for strategy in effective_compatible(recipe_repo, doc.recipe):
            for hw in ("h100", "mi300x"):
                for nodes in (1, 2, 3):
                    pair = []
                    for credit in (True, False):
                        ctx = _context(recipe_repo, doc, None, hw, strategy, nodes)
                        ctx.credit = credit
                        if ctx.deploy_type == "pd_cluster":
                            modes = _pd.pool_modes(ctx, [strategy])
                            toks = [flat(_pd.role_parallel_tokens(ctx, _pd.layout(ctx, role, {role: nodes}, modes)))
                                    for role in ("prefill", "decode")]
                        else:
                            toks = [flat(parallel_tokens(ctx, rank, "$HEAD_IP")) for rank in range(nodes)]
                        pair.append(toks)
                    assert pair[0] == pair[1], (model, strategy, hw, nodes)
                    compared += 1
    assert compared > 1000
