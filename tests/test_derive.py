"""Plans for models no recipe covers (issue 23 item 2), and ``--config`` on every command that judges a plan.

The configs are real public config.json shapes read in place from ``bench/data/configs.json`` (each entry
records its source URL there); a test writes one into its own folder as a user's download would be.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launchcard.check import DERIVED_LABEL, check_plan, derive_plan, locate_config
from launchcard.errors import InputError, NoFitError
from tests.helpers import run_cli

CONFIGS = Path(__file__).resolve().parents[1] / "bench" / "data" / "configs.json"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _config(tmp_path: Path, repo: str, **extra_files: dict[str, object]) -> Path:
    """``<tmp>/<repo>/config.json`` (and any extra files of the model folder) from the bench's public configs."""
    entry = json.loads(CONFIGS.read_text(encoding="utf-8"))[repo]
    folder = tmp_path / repo
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(entry["config"]), encoding="utf-8")
    for name, data in extra_files.items():
        (folder / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    return folder / "config.json"


# (repo of a public config, hardware, context, what the architecture is, a check on the memory planner's arch)
ARCHES = [
    ("Qwen/Qwen3-8B", "h100", None, "dense GQA", lambda a: a.num_kv_heads < a.num_heads and not a.is_moe),
    ("Qwen/Qwen3-30B-A3B", "h100", 32768, "MoE", lambda a: a.is_moe),
    ("moonshotai/Kimi-K2-Thinking", "h200", 32768, "MLA MoE", lambda a: a.kv_lora_rank > 0),
    ("Qwen/Qwen3.6-35B-A3B", "h100", 65536, "hybrid linear attention", lambda a: a.linear_attn is not None),
    ("google/gemma-4-26B-A4B", "h100", 32768, "multimodal", lambda a: a.vision_params > 0),
    ("Qwen/Qwen3.6-27B", "h200", 65536, "dense hybrid", lambda a: a.linear_attn is not None and not a.is_moe),
    ("openai/gpt-oss-20b", "h100", None, "MXFP4 MoE, sliding window", lambda a: a.is_moe and a.sliding_window),
]


@pytest.mark.parametrize(("repo", "hw", "context", "kind", "is_kind"), ARCHES, ids=[a[3] for a in ARCHES])
def test_a_model_with_no_recipe_gets_a_checked_plan(tmp_path, repo, hw, context, kind, is_kind):
    from launchcard.memory import arch_from_config

    cfg = _config(tmp_path, repo)
    assert is_kind(arch_from_config(json.loads(cfg.read_text()), where=str(cfg))), kind
    plan = derive_plan(repo, cfg, hw, max_model_len=context)
    assert plan.derived == DERIVED_LABEL and plan.engine == "vllm" and plan.deploy_type == "single_node"
    cmd = plan.commands[0]
    assert cmd.argv[:3] == ("vllm", "serve", repo)
    tp = int(cmd.argv[cmd.argv.index("--tensor-parallel-size") + 1])
    heads = json.loads(cfg.read_text()).get("text_config", json.loads(cfg.read_text()))["num_attention_heads"]
    assert heads % tp == 0
    # every argument is derived (rule + inputs) or the user's own choice: nothing unexplained
    for unit in cmd.units:
        assert unit.origin.layer in ("derived", "user"), unit
        if unit.flag == "--tensor-parallel-size":
            assert "num_attention_heads" in unit.origin.credit() and "memory_gib" in unit.origin.credit()
    verdict = check_plan(plan, config=cfg)
    assert verdict.ok, verdict.lines()
    codes = {f.code for f in verdict.findings}
    assert "memory-fits" in codes
    # no parser evidence in the model's files: none written, and the verdict says so
    assert "--tool-call-parser" not in cmd.argv and "--reasoning-parser" not in cmd.argv
    assert any(f.code == "assumed" and "tool call parser" in f.message for f in verdict.findings)


def test_the_smallest_tp_that_fits_is_chosen_and_one_smaller_does_not(tmp_path):
    from dataclasses import replace

    from launchcard.hardware import catalog
    from launchcard.memory import Settings, arch_from_config, fits_with

    cfg = _config(tmp_path, "meta-llama/Llama-3.1-70B")
    plan = derive_plan("meta-llama/Llama-3.1-70B", cfg, "h100", max_model_len=32768)
    argv = plan.commands[0].argv
    tp = int(argv[argv.index("--tensor-parallel-size") + 1])
    assert "--pipeline-parallel-size" not in argv  # a TP-only plan is tried before any pipeline split
    arch, gpu = arch_from_config(json.loads(cfg.read_text()), where="c"), catalog().get("h100")
    base = Settings(max_model_len=32768)
    assert fits_with(arch, replace(base, tp=tp), gpu, gpu.memory_gib)
    assert not fits_with(arch, replace(base, tp=tp // 2), gpu, gpu.memory_gib)


def test_quantization_and_dtype_come_from_the_checkpoint(tmp_path):
    cfg = _config(tmp_path, "Qwen/Qwen3-14B-AWQ")
    plan = derive_plan("Qwen/Qwen3-14B-AWQ", cfg, "h100", max_model_len=32768)
    assert "--quantization" not in plan.commands[0].argv  # the engine reads quantization_config
    notes = {a.message.split(":")[0]: a for a in plan.assumed}
    assert any(k.startswith("quantization awq") for k in notes), list(notes)
    assert any(k.startswith("dtype float16") for k in notes), list(notes)


def test_parsers_only_from_the_models_own_files_and_the_engines_registry(tmp_path):
    cfg = _config(tmp_path, "Qwen/Qwen3-8B", tokenizer_config={"chat_template": "{{ messages }}",
                                                              "tool_call_parser": "hermes",
                                                              "reasoning_parser": "no-such-parser"})
    plan = derive_plan("Qwen/Qwen3-8B", cfg, "h100")
    argv = plan.commands[0].argv
    assert argv[argv.index("--tool-call-parser") + 1] == "hermes" and "--enable-auto-tool-choice" in argv
    unit = next(u for u in plan.commands[0].units if u.flag == "--tool-call-parser")
    assert "tokenizer_config.json (tool_call_parser)" in unit.origin.credit()
    assert "--reasoning-parser" not in argv  # named, but not in the engine's registry: left out, and said so
    assert any("no reasoning parser" in a.message for a in plan.assumed)
    assert any("chat template: tokenizer_config.json has chat_template" in a.message for a in plan.assumed)
    assert not any("renders the request's tools" in a.message for a in plan.assumed)  # this template has none


def test_a_template_that_renders_tools_says_a_parser_is_needed_and_multimodal_is_said(tmp_path):
    cfg = _config(tmp_path, "google/gemma-4-26B-A4B")
    (cfg.parent / "chat_template.jinja").write_text("{% if tools %}{{ tools | tojson }}{% endif %}")
    plan = derive_plan("google/gemma-4-26B-A4B", cfg, "h100", max_model_len=8192)
    notes = [a.message for a in plan.assumed]
    assert any("renders the request's tools" in n for n in notes)
    assert any(n.startswith("multimodal: config.json has vision_config") for n in notes)
    assert "--tool-call-parser" not in plan.commands[0].argv  # a template is not a parser name


def test_a_tokenizer_without_chat_template_is_a_warning(tmp_path):
    cfg = _config(tmp_path, "meta-llama/Meta-Llama-3-8B", tokenizer_config={"model_max_length": 8192})
    verdict = check_plan(derive_plan("meta-llama/Meta-Llama-3-8B", cfg, "h100"), config=cfg)
    assert any(f.severity == "warning" and "no chat_template" in f.message for f in verdict.findings)


def test_sglang_plan_is_checked_against_sglangs_own_parser(tmp_path):
    cfg = _config(tmp_path, "Qwen/Qwen3-30B-A3B")
    plan = derive_plan("Qwen/Qwen3-30B-A3B", cfg, "h100", engine="sglang", max_model_len=32768)
    argv = plan.commands[0].argv
    assert argv[:3] == ("python3", "-m", "sglang.launch_server") and "--tp-size" in argv
    assert argv[argv.index("--context-length") + 1] == "32768"
    verdict = check_plan(plan, config=cfg)
    assert verdict.ok and not any(f.code.startswith("flag-") and f.severity != "info" for f in verdict.findings)
    fits = next(f for f in verdict.findings if f.code == "memory-fits")
    assert "32,768 tokens" in fits.message  # --context-length read as the context


def test_too_big_for_one_node_spans_the_fewest_nodes_in_the_recipes_multi_node_form(tmp_path):
    cfg = _config(tmp_path, "moonshotai/Kimi-K2-Thinking")
    plan = derive_plan("moonshotai/Kimi-K2-Thinking", cfg, "h100", max_model_len=32768)
    assert plan.deploy_type == "multi_node" and plan.node_count == 2
    head, worker = plan.commands
    assert (head.role, head.node_rank, worker.role, worker.node_rank) == ("head", 0, "worker", 1)
    for cmd in plan.commands:
        a = cmd.argv
        assert a[a.index("--tensor-parallel-size") + 1] == "8" and a[a.index("--pipeline-parallel-size") + 1] == "2"
        assert a[a.index("--nnodes") + 1] == "2" and cmd.env["NCCL_SOCKET_IFNAME"] == "$IFACE_NAME"
    assert "--headless" in worker.argv and "--headless" not in head.argv
    verdict = check_plan(plan, config=cfg)
    assert verdict.ok, verdict.lines()
    for target in ("shell", "kubernetes"):
        from launchcard.emit import emit

        assert emit(plan, target, card_name=plan.model, verdict=verdict)


def test_no_plan_that_fits_names_the_smallest_and_exits_1(tmp_path):
    cfg = _config(tmp_path, "moonshotai/Kimi-K2-Thinking")
    with pytest.raises(NoFitError) as err:  # derived SGLang plans stay on one node
        derive_plan("moonshotai/Kimi-K2-Thinking", cfg, "h100", engine="sglang", max_model_len=32768)
    assert err.value.exit_code == 1 and "smallest that fits" in str(err.value)
    proc = run_cli("resolve", "moonshotai/Kimi-K2-Thinking", "--hardware", "rtx_pro_6000", "--config", str(cfg))
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "smallest that fits" in proc.stderr


# -- --config: files, folders, Hub ids from the local caches --------------------------------------------

def _fake_hub_cache(root: Path, repo: str, config: Path) -> None:
    folder = root / f"models--{repo.replace('/', '--')}"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text("0123abcd")
    snap = folder / "snapshots" / "0123abcd"
    snap.mkdir(parents=True)
    (snap / "config.json").write_bytes(config.read_bytes())


def test_config_is_a_file_a_folder_or_a_cached_hub_id(tmp_path, monkeypatch):
    from huggingface_hub import constants

    cfg = _config(tmp_path / "dl", "Qwen/Qwen3-8B")
    assert locate_config(cfg) == cfg and locate_config(cfg.parent) == cfg
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    _fake_hub_cache(tmp_path / "hub", "acme/Qwen3-8B-copy", cfg)
    assert locate_config("acme/Qwen3-8B-copy").read_bytes() == cfg.read_bytes()
    # launchcard sync's Hub snapshot: <cache>/corpus/hf/<org>/<name>/config.json
    monkeypatch.setenv("LAUNCHCARD_CACHE", str(tmp_path / "sync"))
    synced = tmp_path / "sync" / "corpus" / "hf" / "acme" / "synced"
    synced.mkdir(parents=True)
    (synced / "config.json").write_bytes(cfg.read_bytes())
    assert locate_config("acme/synced") == synced / "config.json"


def test_the_hub_cache_is_read_as_huggingface_hub_reads_it(tmp_path, monkeypatch):
    """``check.hub_cache_file`` looks a file up without importing huggingface_hub: the same answer as its
    ``try_to_load_from_cache`` (a file, a recorded absence, another snapshot than main's, no ref, no repo), and the
    same cache folder from the environment (HF_HUB_CACHE, the legacy HUGGINGFACE_HUB_CACHE, HF_HOME, XDG)."""
    import subprocess
    import sys

    from huggingface_hub import constants, try_to_load_from_cache

    from launchcard.check import hub_cache_file

    hub = tmp_path / "hub"
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hub))
    cfg = _config(tmp_path / "dl", "Qwen/Qwen3-8B")
    _fake_hub_cache(hub, "acme/a", cfg)
    no = hub / "models--acme--a" / ".no_exist" / "0123abcd"
    no.mkdir(parents=True)
    (no / "tokenizer_config.json").write_text("")
    (hub / "models--acme--a" / "snapshots" / "0123abcd" / "tokenizer_config.json").write_text("{}")
    _fake_hub_cache(hub, "acme/b", cfg)
    (hub / "models--acme--b" / "refs" / "main").write_text("ffff")  # main's snapshot not downloaded
    _fake_hub_cache(hub, "acme/c", cfg)
    (hub / "models--acme--c" / "refs" / "main").unlink()  # no ref: "main" is looked up as a folder name
    for repo in ("acme/a", "acme/b", "acme/c", "acme/none"):
        for name in ("config.json", "tokenizer_config.json", "chat_template.jinja"):
            want = try_to_load_from_cache(repo, name)
            got = hub_cache_file(repo, name)
            assert got == (Path(want) if isinstance(want, str) else None), (repo, name)
    assert hub_cache_file("acme/a") is not None
    probe = ("import sys, json; from launchcard.check._locate import _hub_cache_dir; mine = _hub_cache_dir(); "
             "assert 'huggingface_hub' not in sys.modules; from huggingface_hub import constants; "
             "print(json.dumps([mine, constants.HF_HUB_CACHE]))")
    base = {k: v for k, v in __import__("os").environ.items()
            if k not in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME")}
    for extra in ({}, {"HF_HOME": "~/hf-home"}, {"XDG_CACHE_HOME": str(tmp_path / "xdg")},
                  {"HUGGINGFACE_HUB_CACHE": str(tmp_path / "legacy"), "HF_HOME": "/x"},
                  {"HF_HUB_CACHE": "$HOME/hub-cache", "HUGGINGFACE_HUB_CACHE": "/legacy"}):
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env={**base, **extra},
                             check=True)
        mine, theirs = json.loads(out.stdout)
        assert mine == theirs, extra


def test_nothing_cached_is_one_line_saying_how_to_get_it(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("LAUNCHCARD_CACHE", str(tmp_path / "sync"))
    with pytest.raises(InputError):
        locate_config("nobody/nothing")
    proc = run_cli("resolve", "nobody/nothing", "--hardware", "h100")
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "hf download nobody/nothing config.json" in lines[0] and "Traceback" not in lines[0]


def test_resolve_derives_from_a_cached_hub_id_without_recipes(tmp_path, monkeypatch):
    from huggingface_hub import constants

    cfg = _config(tmp_path / "dl", "Qwen/Qwen3-8B")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    _fake_hub_cache(tmp_path / "hub", "acme/new-model", cfg)
    proc = run_cli("resolve", "acme/new-model", "--hardware", "h100", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["derived"] == DERIVED_LABEL and data["verdict"]["status"] != "error"
    assert data["facts"]["gpus_total"] >= 1


# -- --config on every command that judges a plan ------------------------------------------------------

RECIPE = "Qwen/Qwen3-235B-A22B-Instruct-2507"  # resolves to TP 8 on h100


def test_resolve_config_judges_a_recipe_plan_without_memory_flag(tmp_path, recipes_dir):
    cfg = _config(tmp_path, "Qwen/Qwen2-7B-Instruct")  # 28 heads: TP 8 does not divide them
    proc = run_cli("resolve", RECIPE, "--recipes", str(recipes_dir), "--hardware", "h100", "--config", str(cfg))
    assert proc.returncode == 1 and "[tp-heads]" in proc.stdout


def test_emit_refuses_a_tp_that_does_not_divide_the_users_heads(tmp_path, recipes_dir):
    cfg = _config(tmp_path, "Qwen/Qwen2-7B-Instruct")
    args = ("emit", RECIPE, "-t", "shell", "--recipes", str(recipes_dir), "--hardware", "h100")
    assert run_cli(*args).returncode == 0  # no config: heads unknown, nothing to refuse
    proc = run_cli(*args, "--config", str(cfg))
    assert proc.returncode == 1 and proc.stdout == ""
    assert "refused" in proc.stderr and "does not divide the 28 attention heads" in proc.stderr


def test_emit_a_derived_plan_through_every_target(tmp_path):
    cfg = _config(tmp_path, "Qwen/Qwen3-30B-A3B")
    for target in ("shell", "docker", "compose", "kubernetes"):
        proc = run_cli("emit", "acme/Qwen3-30B-A3B-ft", "-t", target, "--hardware", "h100", "--config", str(cfg),
                       "--max-model-len", "32768")
        assert proc.returncode == 0, (target, proc.stderr)
        assert "--tensor-parallel-size" in proc.stdout and "derived: smallest TP x PP" in proc.stdout, target


def test_check_config_judges_the_model_split(tmp_path):
    cfg = _config(tmp_path, "Qwen/Qwen2-7B-Instruct")
    bad = run_cli("check", "--config", str(cfg.parent), "--", "vllm", "serve", "Qwen/Qwen2-7B-Instruct",
                  "--tensor-parallel-size", "8")
    assert bad.returncode == 1 and "tp-heads" in bad.stdout and "28 attention heads" in bad.stdout
    good = run_cli("check", "--config", str(cfg), "--", "vllm", "serve", "Qwen/Qwen2-7B-Instruct",
                   "--tensor-parallel-size", "4")
    assert good.returncode == 0 and "tp-heads" not in good.stdout


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not found")
def test_card_and_page_config_judge_the_cards_plan(tmp_path):
    cfg = _config(tmp_path, "Qwen/Qwen2-7B-Instruct")
    base = ("--corpus", str(CORPUS))
    card = run_cli("card", RECIPE, *base, "--hardware", "h100", "--config", str(cfg))
    assert card.returncode == 0 and "[tp-heads]" in card.stdout
    plain = run_cli("card", RECIPE, *base, "--hardware", "h100")
    assert "[tp-heads]" not in plain.stdout
    page = run_cli("page", RECIPE, *base, "--format", "json", "--config", str(cfg))
    # the page shows the card built with the user's config: its memory gap names the heads TP 8 does not divide
    assert page.returncode == 0 and "does not divide the 28 attention heads" in page.stdout
    assert run_cli("page", RECIPE, "--recipes", str(CORPUS / "vllm-recipes"), "--config", str(cfg)).returncode == 2


@pytest.mark.parametrize("command", ["resolve", "emit", "up"])
def test_max_model_len_of_a_recipe_model_is_refused_not_a_derived_plan(tmp_path, recipes_dir, command):
    """qa12: `resolve openai/gpt-oss-120b --hardware h100 --max-model-len 8192` printed a plan "derived by launchcard
    (no recipe)": TP 1 and no tool-call parser, where the recipe resolves TP 8 with its parsers; refused now as
    --gpus-per-node is (both size a derived plan only)."""
    cfg = _config(tmp_path, "Qwen/Qwen3-30B-A3B")
    args = {"resolve": ("resolve", RECIPE), "emit": ("emit", RECIPE, "-t", "shell"),
            "up": ("up", "--resolve", RECIPE)}[command]
    proc = run_cli(*args, "--recipes", str(recipes_dir), "--hardware", "h100", "--config", str(cfg),
                   "--max-model-len", "8192")
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("launchcard: error: --max-model-len: --max-model-len sizes a plan derived by "
                                  f"launchcard; {RECIPE} has a recipe")


@pytest.mark.parametrize("command", [("resolve",), ("emit", "-t", "shell"), ("predict", "--concurrency", "1")])
def test_a_mistyped_recipe_id_is_named_with_the_close_recipes(recipes_dir, command):
    """qa12: `resolve zai-org/GLM-5.3-Flsh` (one letter off) said "--hardware: a derived plan (no recipe) needs the
    hardware to size it for": the typo read as a model to derive, the recipe it was meant to name not said."""
    proc = run_cli(command[0], "zai-org/GLM-5.3-Flsh", *command[1:], "--recipes", str(recipes_dir))
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("launchcard: error: MODEL: no recipe for 'zai-org/GLM-5.3-Flsh'")
    assert "did you mean zai-org/GLM-5.3-Flash" in proc.stderr and "--hardware PROFILE" in proc.stderr


def test_recipe_only_options_are_refused_for_a_derived_plan(tmp_path):
    cfg = _config(tmp_path, "Qwen/Qwen3-8B")
    proc = run_cli("resolve", "acme/x", "--hardware", "h100", "--config", str(cfg), "--variant", "fp8")
    assert proc.returncode == 2 and "--variant" in proc.stderr
    proc = run_cli("resolve", "acme/x", "--config", str(cfg))
    assert proc.returncode == 2 and "--hardware" in proc.stderr


def test_web_builder_reads_the_config_sync_holds(tmp_path, monkeypatch, recipe_repo):
    from launchcard.web._builder import Selection, build

    model = "Qwen/Qwen3-8B"  # the corpus hf/ has no config for it: memory is not checked ...
    before = build(recipe_repo, model, Selection(hardware="h100"), revision=None)
    assert any(f["code"] == "memory-not-checked" for f in before["verdict"]["findings"])
    # ... until `launchcard sync` holds its Hub config.json: the builder's verdict then plans memory with it
    monkeypatch.setenv("LAUNCHCARD_CACHE", str(tmp_path / "sync"))
    _config(tmp_path / "sync" / "corpus" / "hf", model)
    after = build(recipe_repo, model, Selection(hardware="h100"), revision=None)
    codes = {f["code"] for f in after["verdict"]["findings"]}
    assert "memory-fits" in codes and "memory-not-checked" not in codes


def test_up_and_verify_take_a_derived_plan(tmp_path):
    from launchcard.cli._live import _plan

    cfg = _config(tmp_path, "Qwen/Qwen3-8B")
    plan = _plan("acme/Qwen3-8B-ft", None, None, "h100", None, None, config=str(cfg))
    assert plan is not None and plan.derived == DERIVED_LABEL
    assert plan.commands[0].argv[:3] == ("vllm", "serve", "acme/Qwen3-8B-ft")
    with pytest.raises(InputError):
        _plan(None, None, None, None, None, None, config=str(cfg))  # --config is a plan option: needs --resolve


def test_an_accelerator_name_maps_onto_its_one_node_profile(tmp_path):
    cfg = _config(tmp_path, "Qwen/Qwen3-8B")
    plan = derive_plan("acme/x", cfg, "NVIDIA H100 80GB HBM3")  # the device name vLLM and torch print
    assert plan.hardware == "h100" and plan.gpus_per_node == 8
    assert any("planned on the catalog's node profile h100" in a.message for a in plan.assumed)
    with pytest.raises(InputError, match="several node sizes"):
        derive_plan("acme/x", cfg, "RTX PRO 6000")


def test_the_users_node_size_replaces_the_one_gpu_assumption(tmp_path):
    """An accelerator the catalog has no node profile for is planned as one GPU (an `assumed` note); the
    no-fit line says how to give the real node size, and --gpus-per-node plans across it (credited as input)."""
    cfg = _config(tmp_path, "Qwen/Qwen3-30B-A3B")
    with pytest.raises(NoFitError) as err:
        derive_plan("acme/x", cfg, "l4", max_model_len=32768)
    assert "--gpus-per-node" in err.value.fix
    plan = derive_plan("acme/x", cfg, "l4", max_model_len=32768, gpus_per_node=8)
    assert plan.gpus_per_node == 8 and len(plan.commands) == 1
    assert not any("sized for one GPU" in a.message for a in plan.assumed)
    tp = next(u for u in plan.commands[0].units if u.tokens and u.tokens[0] == "--tensor-parallel-size")
    assert 1 < int(tp.tokens[1]) <= 8
    assert any(i.name == "--gpus-per-node (your node)" for i in tp.origin.inputs)
    proc = run_cli("resolve", "acme/x", "--hardware", "l4", "--config", str(cfg), "--max-model-len", "32768",
                   "--gpus-per-node", "8")
    assert proc.returncode == 0 and "--tensor-parallel-size" in proc.stdout
    proc = run_cli("resolve", "zai-org/GLM-5.3-Flash", "--recipes", str(CORPUS / "vllm-recipes"),
                   "--hardware", "h100", "--gpus-per-node", "4")
    assert proc.returncode == 2 and "--gpus-per-node" in proc.stderr and proc.stderr.count("\n") == 1


def test_predict_takes_a_derived_plan(tmp_path):
    cfg = _config(tmp_path, "Qwen/Qwen3-30B-A3B")
    proc = run_cli("predict", "acme/Qwen3-30B-A3B-ft", "--config", str(cfg), "--hardware", "h100",
                   "--max-model-len", "32768", "--concurrency", "4", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["gpus"] >= 1


def test_resolve_json_of_a_derived_plan_credits_every_argument(tmp_path):
    cfg = _config(tmp_path, "Qwen/Qwen3-8B")
    proc = run_cli("resolve", "acme/Qwen3-8B-ft", "--hardware", "h200", "--config", str(cfg), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["derived"] == DERIVED_LABEL and data["engine"] == "vllm" and data["source"] is None
    cmd = data["commands"][0]
    assert cmd["argv"][:3] == ["vllm", "serve", "acme/Qwen3-8B-ft"]
    assert [u["flag"] for u in cmd["units"]] == ["--tensor-parallel-size"]
    origin = cmd["units"][0]["origin"]
    assert origin["layer"] == "derived" and {i["name"].split()[-1] for i in origin["inputs"]} >= {
        "num_attention_heads", "num_key_value_heads"}
    assert {"derived", "assumed"} <= {f["code"] for f in data["verdict"]["findings"]}


@pytest.mark.parametrize(("repo", "engine", "context"), [("Qwen/Qwen3-30B-A3B", "sglang", 32768),
                                                          ("moonshotai/Kimi-K2-Thinking", "vllm", 32768)],
                         ids=["sglang-single-node", "vllm-multi-node"])
def test_emitted_artifacts_of_derived_plans_validate(tmp_path, repo, engine, context):
    """Kubernetes objects strictly, offline (LWS for the multi-node plan); shell scripts through bash -n."""
    import subprocess

    from _emit_helpers import load_yaml_docs, validate_k8s
    from launchcard.emit import emit

    cfg = _config(tmp_path, repo)
    plan = derive_plan(repo, cfg, "h100", engine=engine, max_model_len=context)
    verdict = check_plan(plan, config=cfg)
    docs = [d for text in emit(plan, "kubernetes", card_name=repo, verdict=verdict).values()
            for d in load_yaml_docs(text)]
    assert docs and ("LeaderWorkerSet" in {d["kind"] for d in docs}) == (plan.node_count > 1)
    for doc in docs:
        validate_k8s(doc)
    for name, text in emit(plan, "shell", card_name=repo, verdict=verdict).items():
        assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0, name


def test_bad_inputs_of_a_derived_plan_are_one_line_exit_2(tmp_path):
    cfg = _config(tmp_path, "Qwen/Qwen3-8B")
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    partial = tmp_path / "bert.json"
    partial.write_text(json.dumps({"model_type": "bert", "hidden_size": 768}))
    for args, words in ((("--hardware", "h999", "--config", str(cfg)), "unknown hardware 'h999'"),
                        (("--hardware", "h100", "--config", str(bad)), f"--config {bad}:1: not valid JSON"),
                        (("--hardware", "h100", "--config", str(partial)), "num_attention_heads"),
                        (("--hardware", "h100", "--config", str(cfg), "--engine", "trtllm"), "unknown engine"),
                        (("--hardware", "xeon6", "--config", str(cfg)), "CPU profile")):
        proc = run_cli("resolve", "acme/x", *args)
        assert proc.returncode == 2 and proc.stdout == "", args
        assert proc.stderr.count("\n") == 1 and words in proc.stderr and "Traceback" not in proc.stderr, args


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not found")
def test_emit_env_config_judges_a_provider_preset(tmp_path):
    cfg = _config(tmp_path, "Qwen/Qwen2-7B-Instruct")  # 28 heads: the preset's TP 8 does not divide them
    args = ("emit", "zai-org/GLM-5.3-Flash", "-t", "truss", "--corpus", str(CORPUS), "--env", "provider-preset")
    assert run_cli(*args).returncode == 0
    proc = run_cli(*args, "--config", str(cfg))
    assert proc.returncode == 1 and proc.stdout == "" and "tp-heads" in proc.stderr
