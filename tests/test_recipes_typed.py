"""Typed recipe records: a wrong type anywhere the resolver reads stops at the adapter with one
error naming file, line, rule and fix (exit 2); the sibling recipes still resolve, alone and in a batch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_recipes_bad_input import GOOD, _check, _run

# field -> (recipe text, text the error must contain, line it must name)
WRONG_TYPES = {
    "context_length_text": ("model:\n  model_id: a/B\n  context_length: lots\n",
                            "model.context_length: must be a number, got str 'lots'", 3),
    "missing_model": ("meta:\n  title: No model\nvariants:\n  default:\n    precision: bf16\n",
                      "names no checkpoint", 1),
    "empty_model_id": ("model:\n  model_id: ''\n", "names no checkpoint", 2),
    "model_id_number": ("model:\n  model_id: 7\n", "model.model_id: must be a string", 2),
    "nightly_text": ("model:\n  model_id: a/B\n  nightly_required: sometimes\n",
                     "model.nightly_required: must be true/false", 3),
    "docker_image_list": ("model:\n  model_id: a/B\n  docker_image: [a, b]\n",
                          "model.docker_image: must be a string or a mapping", 3),
    "vram_text": ("model:\n  model_id: a/B\nvariants:\n  default:\n    vram_minimum_gb: big\n",
                  "variants.default.vram_minimum_gb: must be a number", 5),
    "tp_list": ("model:\n  model_id: a/B\nvariants:\n  default:\n    tp: [8]\n",
                "variants.default.tp: must be a number or a mapping", 5),
    "tp_map_text": ("model:\n  model_id: a/B\nvariants:\n  default:\n    tp:\n      h100: all\n",
                    "variants.default.tp.h100: must be a number", 6),
    "supported_hardware_text": ("model:\n  model_id: a/B\nvariants:\n  default:\n    supported_hardware: h100\n",
                                "supported_hardware: must be a list", 5),
    "variant_hw_override_list": (("model:\n  model_id: a/B\nvariants:\n  default:\n    hardware_overrides:\n"
                                 "      h100: [--x]\n"), "variants.default.hardware_overrides.h100: must be a mapping",
                                 6),
    "feature_strategies_text": (("model:\n  model_id: a/B\nfeatures:\n  f:\n    args: [--x]\n"
                                "    strategies: single_node_tp\n"), "features.f.strategies: must be a list", 6),
    "feature_companion_text": ("model:\n  model_id: a/B\nfeatures:\n  f:\n    companion: run this\n",
                               "features.f.companion: must be a mapping", 5),
    "mode_hardware_list": (("model:\n  model_id: a/B\nfeatures:\n  f:\n    modes:\n      a:\n        args: [--y]\n"
                           "        hardware: [h100]\n"), "features.f.modes.a.hardware: must be a mapping", 8),
    "override_tp_text": ("model:\n  model_id: a/B\nstrategy_overrides:\n  single_node_tp:\n    tp: eight\n",
                         "strategy_overrides.single_node_tp.tp: must be a number", 5),
    "override_role_list": ("model:\n  model_id: a/B\nstrategy_overrides:\n  pd_cluster:\n    prefill: [a]\n",
                           "strategy_overrides.pd_cluster.prefill: must be a mapping", 5),
    "override_role_tp_text": (("model:\n  model_id: a/B\nstrategy_overrides:\n  pd_cluster:\n    decode:\n"
                              "      tp: two\n"), "strategy_overrides.pd_cluster.decode.tp: must be a number", 6),
    "min_gpus_text": ("model:\n  model_id: a/B\nstrategy_min_gpus: many\n",
                      "strategy_min_gpus: must be a number or a mapping", 3),
    "meta_hardware_list": ("model:\n  model_id: a/B\nmeta:\n  hardware: [h100]\n",
                           "meta.hardware: must be a mapping", 4),
    "kv_support_list": ("model:\n  model_id: a/B\nkv_offload_support: [native]\n",
                        "kv_offload_support: must be a mapping", 3),
    "omni_tasks_mapping": ("model:\n  model_id: a/B\nomni:\n  tasks:\n    t2i: x\n", "omni.tasks: must be a list", 4),
    "compatible_strategies_text": ("model:\n  model_id: a/B\ncompatible_strategies: single_node_tp\n",
                                   "compatible_strategies: must be a list", 3),
    "opt_in_mapping": ("model:\n  model_id: a/B\nopt_in_features:\n  f: true\n", "opt_in_features: must be a list",
                       3),
}


@pytest.fixture()
def recipes(tmp_path: Path, recipes_dir: Path) -> Path:
    root = tmp_path / "recipes"
    (root / "models" / "acme").mkdir(parents=True)
    for name in ("strategies", "kv_store", "taxonomy.yaml"):
        (root / name).symlink_to(recipes_dir / name)
    (root / "models" / "acme" / "Tiny.yaml").write_text(GOOD)
    return root


@pytest.mark.parametrize("name", sorted(WRONG_TYPES))
def test_wrong_type_is_one_error_and_siblings_resolve(recipes: Path, tmp_path: Path, name: str) -> None:
    text, needle, line = WRONG_TYPES[name]
    (recipes / "models" / "acme" / "Broken.yaml").write_text(text)
    proc = _run("resolve", "acme/Broken", "--recipes", str(recipes), "--hardware", "h100")
    _check(proc, needle, "models/acme/Broken.yaml", line)
    ok = _run("resolve", "acme/Tiny", "--recipes", str(recipes), "--hardware", "h100")
    assert ok.returncode == 0 and "--tool-call-parser hermes" in ok.stdout, ok.stderr
    # a batch: the broken recipe's case is an error record naming file and line, its siblings resolve
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({"id": i, "model": m, "kind": "serve", "inputs": {"hardware": "h100",
                                         "strategy": "single_node_tp", "node_count": 1, "features": []}}) + "\n"
                             for i, m in enumerate(["acme/Tiny", "acme/Broken", "acme/Tiny"])))
    out = tmp_path / "out.jsonl"
    batch = _run("resolve", "--recipes", str(recipes), "--cases", str(cases), "--out", str(out))
    assert batch.returncode == 0, batch.stderr
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == [0, 1, 2]
    assert rows[0]["result"]["model_id"] == "acme/Tiny" and rows[2]["result"] == rows[0]["result"]
    assert f"Broken.yaml:{line}" in rows[1]["error"] and needle in rows[1]["error"]


def test_context_length_text_is_not_a_fact(recipes: Path) -> None:
    """``context_length: "lots"`` used to be stored as a declared fact; it is now rejected at load."""
    from launchcard.errors import RecipeError
    from launchcard.sources import recipe_facts
    from launchcard.sources.vllm_recipes import load_recipes

    (recipes / "models" / "acme" / "Lots.yaml").write_text(GOOD.replace("  model_id: acme/Tiny\n",
                                                                         "  model_id: acme/Tiny\n"
                                                                         "  context_length: lots\n"))
    repo = load_recipes(recipes)
    with pytest.raises(RecipeError, match=r"Lots.yaml:7: model.context_length: must be a number"):
        recipe_facts(repo, "acme/Lots")
    assert recipe_facts(repo, "acme/Tiny")


def test_corpus_converts_to_typed_records(recipe_repo) -> None:  # type: ignore[no-untyped-def]
    """Every corpus recipe converts; the typed values are the YAML values (spot checks)."""
    from launchcard.sources import Recipe

    for model in recipe_repo.model_ids():
        doc = recipe_repo.recipe(model)
        assert isinstance(doc.recipe, Recipe)
        raw = doc.data
        assert doc.recipe.model.model_id == raw["model"]["model_id"]
        assert list(doc.recipe.variants) == list(raw.get("variants") or {})
        assert list(doc.recipe.features) == list(raw.get("features") or {})
        assert doc.recipe.compatible_strategies == tuple(raw.get("compatible_strategies") or ())


def test_js_rules() -> None:
    from launchcard.sources import first_truthy, present, truthy

    assert [truthy(v) for v in (None, False, 0, 0.0, "", float("nan"), "0", [], True, 1)] == \
        [False, False, False, False, False, False, True, True, True, True]
    assert present(0) and present("") and not present(None)
    assert first_truthy(None, "", "x") == "x" and first_truthy(0, None) is None
