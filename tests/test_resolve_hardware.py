"""``resolve --hardware`` speaks the hardware catalog's vocabulary (issue 20, item 3).

Before: ``l40s``, ``l4`` and ``rtx_4090`` were unknown to resolve while ``memory --gpu`` planned them, and
``NVIDIA H100 80GB HBM3`` (the name vLLM prints) was no hardware at all.
"""

from __future__ import annotations

import pytest

from helpers import run_cli
from launchcard.errors import ResolveError
from launchcard.hardware import catalog
from launchcard.resolve import Choice, resolvable_hardware, resolve

QWEN = "Qwen/Qwen3-4B"


@pytest.mark.parametrize("name", ["NVIDIA H100 80GB HBM3", "H100", "h100 sxm5", "nvidia-h100"])
def test_catalog_names_resolve_onto_their_profile(recipe_repo, name: str) -> None:
    plan = resolve(recipe_repo, Choice(model=QWEN, hardware=name))
    assert plan.hardware == "h100"


def test_a_mapped_name_is_an_assumed_finding(recipe_repo) -> None:
    from launchcard.check import check_plan

    plan = resolve(recipe_repo, Choice(model=QWEN, hardware="NVIDIA H100 80GB HBM3"))
    assert [a.code for a in plan.assumed] == ["assumed"] and "profile h100" in plan.assumed[0].message
    found = [f for f in check_plan(plan, recipes=recipe_repo, memory=False).findings if f.code == "assumed"]
    assert found and "--hardware h100" in found[0].fix


@pytest.mark.parametrize("name,acc", [("l40s", "l40s"), ("l4", "l4"), ("rtx_4090", "rtx_4090"),
                                      ("a100_80gb", "a100_80gb")])
def test_catalog_gpu_without_recipe_settings_says_what_the_recipe_covers(recipe_repo, name: str, acc: str) -> None:
    with pytest.raises(ResolveError) as e:
        resolve(recipe_repo, Choice(model=QWEN, hardware=name))
    line = e.value.one_line()
    assert "unknown hardware" not in line and f"({acc}, hardware catalog)" in line
    covered = [c.profile for c in resolvable_hardware(recipe_repo, QWEN)]
    assert f"covers {', '.join(covered)}" in line
    assert f"launchcard memory --config config.json --gpu {acc}" in line and "launchcard check --" in line


def test_unknown_and_ambiguous_names_fail_in_one_line(recipe_repo) -> None:
    for name, rule in (("h1000", "unknown hardware 'h1000'"), ("a100", "ambiguous hardware 'a100'")):
        r = run_cli("resolve", QWEN, "--recipes", str(recipe_repo.root), "--hardware", name)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and rule in r.stderr, r.stderr


def test_resolvable_hardware_is_exactly_what_resolve_accepts(recipe_repo) -> None:
    for model in ("zai-org/GLM-5.3-Flash", QWEN, "openai/gpt-oss-120b"):
        choices = resolvable_hardware(recipe_repo, model)
        assert choices
        for c in choices:
            assert resolve(recipe_repo, Choice(model=model, hardware=c.profile)).hardware == c.profile
            assert c.accelerator is None or catalog().get(c.accelerator)
        offered = {c.profile for c in choices}
        for pid in recipe_repo.profiles:
            if pid not in offered:
                with pytest.raises(ResolveError):
                    resolve(recipe_repo, Choice(model=model, hardware=pid))


def test_truss_offers_only_hardware_that_resolves(recipe_repo) -> None:
    r = run_cli("emit", "zai-org/GLM-5.3-Flash", "--recipes", str(recipe_repo.root), "--hardware", "mi300x",
                "-t", "truss")
    assert r.returncode == 2, r.stderr
    offered = r.stderr.split("--hardware ")[-1].strip().split("|")
    resolvable = {c.profile for c in resolvable_hardware(recipe_repo, "zai-org/GLM-5.3-Flash")}
    assert offered and set(offered) <= resolvable, offered
