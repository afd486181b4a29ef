"""One fact, one value: every corpus model x each hardware its recipe lists, compared across surfaces (issue 21).

For each (model, hardware) the facts of the plan -- GPUs used (per process, per node, in total), features
selected, the verdict, the memory figures, the revision -- must be the same in ``resolve --json``, in every
``emit`` target's header and resource requests, in the card's vLLM environment (JSON and text), in
``page --format json`` and in the web catalog's JSON twins.  A plan that does not resolve must fail the same
way everywhere.

Everything runs in-process and each expensive step once: the web builder's emitted files are the emit
surface (it calls the same ``launchcard.emit.emit`` with the verdict, as ``launchcard emit`` does), and the
card of each model is built once for all models.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import SHARED

CORPUS = SHARED / "corpus"


@dataclass
class Combo:
    model: str
    hardware: str


def _combos() -> list[Combo]:
    from launchcard.sources.vllm_recipes import load_recipes

    if not (CORPUS / "vllm-recipes").is_dir():
        return []
    repo = load_recipes(CORPUS / "vllm-recipes")
    out = []
    for model in repo.model_ids():
        meta = (repo.recipe(model).data or {}).get("meta") or {}
        listed = [str(hw) for hw in meta.get("hardware") or {}]
        # a recipe that lists no hardware is walked on the hardware resolve picks for it ("")
        out += [Combo(model, hw) for hw in listed or [""]]
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The corpus cards (built once), stored in a catalog the web app serves, and the app's client."""
    from fastapi.testclient import TestClient

    from launchcard.merge import build_corpus
    from launchcard.store import Catalog
    from launchcard.web import create_app

    if not CORPUS.is_dir():
        pytest.skip("corpus not found")
    result = build_corpus(CORPUS)
    path = tmp_path_factory.mktemp("consistency") / "catalog.sqlite3"
    with Catalog(path) as cat:
        cat.add(list(result.cards.values()))
    with TestClient(create_app(path, CORPUS / "vllm-recipes")) as client:
        yield {"cards": result.cards, "client": client}


def _resolve_json(model: str, hw: str) -> tuple[int, dict[str, Any] | str]:
    """``launchcard resolve MODEL [--hardware HW] --json``, run in-process through the CLI's own entry point."""
    import contextlib
    import io

    from launchcard.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["resolve", model, "--recipes", str(CORPUS / "vllm-recipes"), *(["--hardware", hw] if hw else []),
                     "--json"])
    if code == 2:
        return 2, err.getvalue()
    return code, json.loads(out.getvalue())


# -- what each artifact says ------------------------------------------------------------------------------

def _header(text: str, prefix: str) -> list[str]:
    return [line[2:] for line in text.splitlines() if line.startswith("# " + prefix)]


def _k8s_gpus(text: str) -> list[int]:
    out = []
    for doc in yaml.safe_load_all(text):
        for c in _containers(doc or {}):
            limits = (c.get("resources") or {}).get("limits") or {}
            out += [int(v) for k, v in limits.items() if k.endswith("/gpu")]
    return out


def _containers(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list):
            yield from node["containers"]
        for v in node.values():
            yield from _containers(v)
    elif isinstance(node, list):
        for v in node:
            yield from _containers(v)


def _compose_gpus(text: str) -> list[int]:
    doc = yaml.safe_load(text)
    out = []
    for svc in doc["services"].values():
        hip = (svc.get("environment") or {}).get("HIP_VISIBLE_DEVICES")
        if "/dev/kfd:/dev/kfd" in (svc.get("devices") or []):  # ROCm: every device mapped, HIP_VISIBLE_DEVICES limits
            out.append(len(str(hip).split(",")))
        for dev in (((svc.get("deploy") or {}).get("resources") or {}).get("reservations") or {}).get("devices") or []:
            assert dev.get("count") != "all", "compose reserves every GPU of the host"
            out.append(len(dev["device_ids"]) if "device_ids" in dev else int(dev["count"]))
    return out


def _docker_gpus(text: str) -> list[int]:
    words = shlex.split(text, comments=True)
    out = []
    for i, w in enumerate(words):
        if w == "/dev/kfd":  # ROCm: every device mapped, HIP_VISIBLE_DEVICES limits the process
            hip = next(x for x in words if x.startswith("HIP_VISIBLE_DEVICES="))
            out.append(len(hip.split("=", 1)[1].split(",")))
        if w == "--gpus":
            value = words[i + 1]
            assert value != "all", "docker requests every GPU of the host"
            m = re.fullmatch(r'"?device=([^"]*)"?', value)
            out.append(len(m.group(1).split(",")) if m else int(value))
    return out


def _truss_gpus(text: str) -> int:
    m = re.search(r"instance_type: \S+:(\d+)", text)
    assert m, text
    return int(m.group(1))


def _mem_key(m: dict[str, Any]) -> tuple[Any, ...]:
    return (round(m["weights_gib_per_gpu"], 2), round(m["kv_cache_gib_per_gpu"], 2), m["kv_cache_tokens"],
            m["max_model_len"])


@pytest.mark.parametrize("combo", _combos(), ids=lambda c: f"{c.model}@{c.hardware}")
def test_every_surface_shows_the_same_plan_facts(world: dict[str, Any], combo: Combo) -> None:
    from launchcard.emit._truss import instance_size
    from launchcard.merge import recipe_extract
    from launchcard.sources.vllm_recipes import load_recipes

    model, hw = combo.model, combo.hardware
    code, resolved = _resolve_json(model, hw)
    got = world["client"].get(f"/{model}/resolve.json", params={"hardware": hw} if hw else {})
    web = got.json()
    repo = load_recipes(CORPUS / "vllm-recipes")
    extract, gaps = recipe_extract(repo, model, hardware=hw or None)
    if code == 2:  # the plan does not resolve: every surface says so, with the same reason (the web: 422)
        assert isinstance(resolved, str) and got.status_code == 422, got.text
        reason = web["detail"].split(": ", 1)[-1]  # after the option's name (the query parameter, the flag)
        assert reason in resolved.replace("\n", " ")
        assert not extract.envs and any(g.field == "envs[vllm]" and reason in g.why for g in gaps)
        return
    assert isinstance(resolved, dict) and web["error"] is None, web["error"]
    facts = resolved["facts"]
    # the web twin and resolve --json carry the same record
    assert web["facts"] == facts
    assert web["resolved"]["features"] == facts["features"] == resolved["features"]
    verdict = resolved["verdict"]
    assert (web["verdict"]["status"], web["verdict"]["label"]) == (verdict["status"], verdict["label"])
    assert facts["verdict"]["label"] == verdict["label"]
    # memory figures: the verdict's plans, printed the same everywhere
    mine: dict[str, tuple[Any, ...]] = {}
    for m in facts["memory"]:
        mine.setdefault(m["name"].split("[")[0], _mem_key(m))
    webs = {m["role"]: _mem_key({**m, "weights_gib_per_gpu": m["breakdown"]["weights_gib"],
                                  "kv_cache_gib_per_gpu": m["breakdown"]["kv_cache_gib"]}) for m in web["memory"]}
    assert webs == {k: v for k, v in mine.items() if k != "worker"}
    # every emitted file: the same GPU line, verdict and revision in its header; requests = GPUs used
    gpus_line = (f"GPUs used: {facts['gpus_per_node']} of {facts['node_gpus']} per {facts['hardware']} node, "
                 f"{facts['gpus_total']} in total")
    used = sorted({p["gpus"] for p in facts["processes"]})
    for target, files in web["files"].items():
        if "error" in files:
            continue
        for name, text in files.items():
            where = f"{target}/{name}"
            assert any(line.startswith(gpus_line) for line in _header(text, "GPUs used:")), where
            assert _header(text, "verdict:")[0].startswith(f"verdict: {verdict['label']} ("), where
            if facts["revision"]:
                assert any(line.endswith(f"@{facts['revision']}") or f"@{facts['revision']} " in line
                           for line in _header(text, "source:")), where
        if target == "kubernetes":
            assert sorted(set(_k8s_gpus(files["kubernetes.yaml"]))) == used
        elif target == "compose":
            assert sorted(set(_compose_gpus(files["compose.yaml"]))) == used
        elif target == "docker":
            assert sorted({g for text in files.values() for g in _docker_gpus(text)}) == used
        elif target == "truss":
            assert _truss_gpus(files["config.yaml"]) == instance_size(used[0], max(facts["node_gpus"], used[0]))
    # the card's vLLM environment for this hardware: same GPUs per process, verdict, features, revision
    envs = list(extract.envs)
    assert [e.gpus for e in envs] == [p["gpus"] for p in facts["processes"]]
    assert {e.verdict.status for e in envs if e.verdict} <= {verdict["status"], "ok", "warning"}
    worst = max((e.verdict.status for e in envs if e.verdict), key=["ok", "warning", "error"].index, default=None)
    assert worst == verdict["status"]
    assert all(f"features {', '.join(facts['features']) or 'none'}" in (e.notes or "") for e in envs)
    assert all(e.source.revision == facts["revision"] for e in envs)


@pytest.mark.parametrize("model", sorted({c.model for c in _combos()}))
def test_card_page_and_web_twin_agree_on_the_default_plan(world: dict[str, Any], model: str) -> None:
    from launchcard.cli._card import card_text
    from launchcard.page import page_data
    from launchcard.sources.vllm_recipes import load_recipes

    card = world["cards"][model]
    repo = load_recipes(CORPUS / "vllm-recipes")
    from launchcard.errors import LaunchcardError
    from launchcard.resolve import Choice, resolve

    try:
        plan = resolve(repo, Choice(model=model))
    except LaunchcardError:
        plan = None
    page = page_data(repo, model, card=card)
    twin = world["client"].get(f"/{model}.json").json()
    rows = {r["name"]: r["value"] for r in page["facts"]}
    twin_rows = {r["name"]: r["value"] for r in twin["facts"]}
    if plan is not None:
        assert rows["Features selected by default"] == list(plan.features) == twin_rows["Features selected by default"]
    vllm = [e for e in card.envs if e.source.kind == "vllm-recipes"]
    text = card_text(card)
    for e in vllm:
        assert f"{e.hardware} × {e.gpus})" in text
    if vllm and vllm[0].verdict is not None:
        from launchcard.check import verdict_label

        assert f"verdict: {verdict_label(vllm[0].verdict.status)}" in text
    # the page's and the twin's source columns show the card's environments as the card has them
    for data in (page, twin):
        shown = [e for s in data["sources"] for e in s.get("envs", []) if s.get("kind") == "vllm-recipes"]
        assert [e["gpus"] for e in shown] == [e.gpus for e in vllm]
    # the card's hardware block is the same in the card JSON and wherever the page shows it
    hw_block = card.model_dump(mode="json")["hardware"]
    for data in (page, twin):
        if "hardware" in data:
            assert data["hardware"] == hw_block


def test_the_walk_covers_the_corpus() -> None:
    combos = _combos()
    assert len(combos) > 400 and len({c.model for c in combos}) > 150
    assert Path(CORPUS / "vllm-recipes").is_dir()


def test_card_hardware_figures_agree_and_name_their_environment(world: dict[str, Any]) -> None:
    """Issue 21 item 4: Kimi-K2.5 had min_gpus 4 (an NVFP4 TRT-LLM manifest) beside per-GPU and total VRAM
    planned for 8 GPUs of another checkpoint.  Each figure now says which environment it comes from, and the
    GPU count and memory figures describe the same checkpoint's deployment."""
    checked = 0
    for model, card in world["cards"].items():
        hw = card.hardware
        if hw.min_gpus is not None:
            assert hw.min_gpus_from, model
        if hw.min_vram_per_gpu_gib is None or hw.min_total_vram_gib is None:
            continue
        assert hw.min_vram_from, model
        count = round(hw.min_total_vram_gib / hw.min_vram_per_gpu_gib)
        assert f"on {count}x " in hw.min_vram_from, (model, hw.min_vram_from)
        if hw.min_gpus is not None and hw.min_gpus != count:
            assert f"min_gpus counts a deployment of {hw.min_gpus}" in hw.min_vram_from, model
        checked += 1
    kimi = world["cards"]["moonshotai/Kimi-K2.5"].hardware
    assert kimi.min_gpus == 8 and kimi.min_gpus * kimi.min_vram_per_gpu_gib >= kimi.min_total_vram_gib - 0.1
    assert "moonshotai/Kimi-K2.5" in (kimi.min_gpus_from or "") and checked >= 1
