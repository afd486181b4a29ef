"""A whole provider preset from a card environment (issue 12 item 5): config.yaml + README.md.

Golden files under tests/golden/preset/ (regenerate with ``LAUNCHCARD_UPDATE_GOLDEN=1``).
"""

from __future__ import annotations

import functools
import io
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from ruamel.yaml import YAML

from launchcard.card import LaunchCard
from launchcard.emit import PresetOptions, emit_preset, select_env
from launchcard.errors import InputError
from launchcard.explain import NO_DESCRIPTION, split_flags
from launchcard.render import RecipeTexts, recipe_texts

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
PRESET = CORPUS / "providers" / "baseten" / "glm-5.3-flash-latency" / "config.yaml"
SEED_TEXT = (SHARED / "seeds" / "provider-preset.glm-5.3-flash.baseten.txt").read_text()
GOLDEN = Path(__file__).parent / "golden" / "preset"
GLM = "zai-org/GLM-5.3-Flash"


@functools.cache
def _card() -> LaunchCard:
    from launchcard.merge import build_corpus

    return build_corpus(CORPUS, models=[GLM]).cards[GLM]


@functools.cache
def _recipe() -> RecipeTexts | None:
    from launchcard.sources.vllm_recipes import load_recipes

    doc = load_recipes(CORPUS / "vllm-recipes").recipe(GLM)
    return recipe_texts(doc.data, doc.path)


def _emit(key: str, options: PresetOptions | None = None) -> tuple[dict[str, str], Any]:
    index, env = select_env(_card(), key)
    return emit_preset(_card(), env, options or PresetOptions(), index=index, recipe=_recipe())


def _yaml12(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(io.StringIO(text))


def _seed_config() -> Any:
    """The config block of the seed page: from ``model_name:`` to the line before the prose that follows it."""
    start = SEED_TEXT.index('model_name: "model:glm-5.3-flash')
    end = SEED_TEXT.index("The container loads")
    return _yaml12(SEED_TEXT[start:end])


def _argv(config: Any) -> list[str]:
    return shlex.split(config["docker_server"]["start_command"])


@pytest.mark.parametrize("case, key", [("glm-provider-preset", "provider-preset"), ("glm-vllm-recipe", "vllm-recipes")])
def test_golden(case: str, key: str) -> None:
    files, _ = _emit(key)
    folder = GOLDEN / case
    if os.environ.get("LAUNCHCARD_UPDATE_GOLDEN"):
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (folder / name).write_text(text)
    assert sorted(files) == ["README.md", "config.yaml"]
    for name, text in files.items():
        assert text == (folder / name).read_text(), f"{folder / name} differs"


def test_provider_env_gives_back_the_preset_exactly() -> None:
    files, verdict = _emit("provider-preset")
    ours = _yaml12(files["config.yaml"])
    corpus = _yaml12(PRESET.read_text())
    seed = _seed_config()
    assert corpus == seed  # the corpus file is the seed page's block
    # the named parts, then everything else too
    assert _argv(ours) == _argv(seed)
    assert ours["runtime"]["predict_concurrency"] == seed["runtime"]["predict_concurrency"] == 16
    assert ours["environment_variables"] == seed["environment_variables"]
    assert ours["resources"] == seed["resources"]
    for key in ("model_name", "model_metadata", "base_image", "weights", "secrets", "docker_server", "runtime"):
        assert ours[key] == seed[key], key
    assert ours == seed
    assert verdict.ok


def test_the_providers_comments_come_back_with_their_line() -> None:
    # the seed's base_image comment is the preset's version note; YAML values cannot carry it, so the header
    # and README say it, with its line in the provider's config
    note = "Dedicated image required until GLM-5.3-Flash support reaches a stable vLLM release."
    assert f"# {note}" in SEED_TEXT
    line = next(i for i, t in enumerate(PRESET.read_text().splitlines(), 1) if note in t)
    files, _ = _emit("provider-preset")
    where = f"providers/baseten/glm-5.3-flash-latency/config.yaml#L{line}"
    assert f"# provider's comment ({where}): {note}\n" in files["config.yaml"]
    assert f"- {note} ({where})" in files["README.md"]
    recipe_files, _ = _emit("vllm-recipes")  # no provider preset: nothing of the kind
    assert "provider's comment" not in recipe_files["config.yaml"]


def test_yaml_round_trip_under_both_yaml_versions() -> None:
    for key in ("provider-preset", "vllm-recipes"):
        text = _emit(key)[0]["config.yaml"]
        a, b = _yaml12(text), yaml.safe_load(text)  # YAML 1.2 (ruamel) and 1.1 (PyYAML) read the same values
        assert a == b
        # the folded start command joins back into the environment's argv
        env = select_env(_card(), key)[1]
        argv = _argv(a)
        assert argv[:3] == ["vllm", "serve", "/app/checkpoint/model"]
        assert [t for t in argv if t.startswith("--")][-len([t for t in env.argv if t.startswith("--")]):] == \
            [t for t in env.argv if t.startswith("--")]


def _keys(d: Any, prefix: str = "") -> set[str]:
    if not isinstance(d, dict):
        return set()
    out = set()
    for k, v in d.items():
        out.add(prefix + k)
        if k not in ("example_model_input", "environment_variables", "secrets"):
            out |= _keys(v, prefix + k + ".")
    return out


def test_recipe_env_preset_has_the_seed_structure() -> None:
    files, verdict = _emit("vllm-recipes")
    ours = _yaml12(files["config.yaml"])
    seed = _seed_config()
    assert _keys(ours) == _keys(seed)
    assert ours["resources"]["instance_type"] == "H200:8"  # the card's vLLM env is resolved for h200
    assert ours["model_metadata"]["example_model_input"]["temperature"] == 1.0  # the recipe guide's sampling
    assert {"reasoning", "tool-use", "multimodal", "moe"} <= set(ours["model_metadata"]["tags"])
    assert ours["weights"][0]["source"] == f"hf://{GLM}@main"  # the recipe pins no revision; the card pins none
    assert verdict.ok


def test_recipe_env_preset_says_the_cards_recipe_findings() -> None:
    """The card's verdict on its vLLM recipe env and the preset emitted from it name the same recipe findings:
    the quirks, the nightly build it needs, the install note's image (L29), which the start command alone cannot."""
    from launchcard.check import RECIPE_CODES, Finding

    _, env = select_env(_card(), "vllm-recipes")
    assert env.verdict is not None
    card_lines = [x for x in env.verdict.findings if (f := Finding.from_line(x)) and f.code in RECIPE_CODES]
    assert {Finding.from_line(x).code for x in card_lines} == set(RECIPE_CODES)  # type: ignore[union-attr]
    files, verdict = _emit("vllm-recipes")
    assert [x for x in (f.one_line() for f in verdict.findings) if x in card_lines] == card_lines
    assert verdict.status == env.verdict.status == "warning"
    assert "glm53-flash until support lands" in files["config.yaml"] and "[install-note]" in files["README.md"]
    # the provider's preset is no recipe: it gets none of them
    _, preset = _emit("provider-preset")
    assert not {f.code for f in preset.findings} & set(RECIPE_CODES)


def test_a_concurrency_no_source_gave_is_an_assumed_finding() -> None:
    _, verdict = _emit("vllm-recipes")  # the recipe sets no --max-num-seqs: launchcard's 256
    (f,) = [f for f in verdict.findings if f.code == "assumed"]
    assert f.severity == "info" and "predict_concurrency 256 is launchcard's default" in f.message
    for key, opts in (("provider-preset", None), ("vllm-recipes", PresetOptions(concurrency=64))):
        _, verdict = _emit(key, opts)  # the provider's 16, your 64: a source each
        assert "assumed" not in {f.code for f in verdict.findings}, key


def test_options_are_applied_and_judged() -> None:
    opts = PresetOptions(concurrency=32, extra_args=("--max-num-seqs", "8", "--gpu-memory-utilization", "0.85"),
                         parsers={"reasoning": "glm45"}, weights_revision="a" * 40)
    files, verdict = _emit("provider-preset", opts)
    ours = _yaml12(files["config.yaml"])
    argv = _argv(ours)
    flags = dict(split_flags(argv))
    assert flags["--max-num-seqs"] == "8" and argv.count("--max-num-seqs") == 1  # replaced, not duplicated
    assert flags["--gpu-memory-utilization"] == "0.85" and argv.count("--gpu-memory-utilization") == 1
    assert flags["--reasoning-parser"] == "glm45" and argv.count("--reasoning-parser") == 1
    assert ours["runtime"]["predict_concurrency"] == 32
    assert ours["weights"][0]["source"].endswith("@" + "a" * 40)
    assert [f.code for f in verdict.warnings] == ["concurrency-above-max-num-seqs"]
    assert "your option (launchcard emit)" in files["README.md"]
    _, bad = _emit("provider-preset", PresetOptions(parsers={"tool-call": "not-a-parser"}))
    assert not bad.ok and bad.errors[0].code == "flag-unknown-parser"
    _, bad = _emit("vllm-recipes", PresetOptions(extra_args=("--tensor-parallel-size", "16")))
    assert not bad.ok and "exceeds-gpus" in {f.code for f in bad.errors}


def test_readme_explains_every_flag_and_calls_the_deployment() -> None:
    files, _ = _emit("provider-preset")
    readme = files["README.md"]
    argv = _argv(_yaml12(files["config.yaml"]))
    row = re.compile(r"^\| `([^`]+)` \| [^|]+ \| ((?:[^|\\]|\\.)+) \|", re.MULTILINE)
    rows = {m.group(1): m.group(2) for m in row.finditer(readme)}
    for flag, _ in split_flags(argv):
        assert flag in rows, flag
        assert rows[flag].strip(), flag
    assert all(rows[f] != "" for f in rows) and NO_DESCRIPTION not in rows["--tensor-parallel-size"]
    assert "baseten model push" in readme and "hf_access_token" in readme
    assert 'os.environ["BASETEN_API_KEY"]' in readme and "api.baseten.co/environments/production/sync/v1" in readme
    for section in ("### Chat", "### Read the separated reasoning", "### Tool calls", "### Image input"):
        assert section in readme, section
    # the server default is high; the guide's control is what the client sends
    assert "reasoning_effort" in readme


def test_select_env_by_kind_and_index() -> None:
    card = _card()
    i, env = select_env(card, "provider-preset")
    assert env.source.kind == "provider-preset" and card.envs[i] is env
    assert select_env(card, str(i))[1] is env
    with pytest.raises(InputError, match="out of range"):
        select_env(card, "999")
    with pytest.raises(InputError, match="no environment of source kind"):
        select_env(card, "nope")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REPO / ".venv/bin/launchcard"), *args], capture_output=True, text=True, timeout=300, check=False
    )


def test_cli_writes_the_preset(tmp_path: Path) -> None:
    out = tmp_path / "preset"
    res = _cli("emit", GLM, "--corpus", str(CORPUS), "--env", "provider-preset", "--target", "truss", "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "config.yaml"]
    assert (out / "config.yaml").read_text() == (GOLDEN / "glm-provider-preset" / "config.yaml").read_text()
    bad = _cli(
        "emit",
        GLM,
        "--corpus",
        str(CORPUS),
        "--env",
        "provider-preset",
        "--target",
        "truss",
        "--parser",
        "reasoning=not-a-parser",
        "--out",
        str(tmp_path / "bad"),
    )
    assert bad.returncode == 1 and "flag-unknown-parser" in bad.stderr and not (tmp_path / "bad").exists()
    forced = _cli(
        "emit",
        GLM,
        "--corpus",
        str(CORPUS),
        "--env",
        "provider-preset",
        "--target",
        "truss",
        "--parser",
        "reasoning=not-a-parser",
        "--force",
    )
    assert forced.returncode == 0 and "error [flag-unknown-parser]" in forced.stdout
    for args, where in (
        (["--parser", "oops"], "--parser"),
        (["--target", "docker"], "--target"),
        (["--concurrency", "0"], "--concurrency"),
    ):
        cmd = ["emit", GLM, "--corpus", str(CORPUS), "--env", "0", "--target", "truss", *args]
        res = _cli(*cmd)
        assert res.returncode == 2 and where in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_extra_args_are_grouped_by_the_engine_parser() -> None:
    opts = PresetOptions(
        extra_args=(
            "--enable-prefix-caching",
            "--speculative-config",
            '{"method": "ngram"}',
            "--gpu-memory-utilization=0.8",
        )
    )
    files, _ = _emit("provider-preset", opts)
    argv = _argv(_yaml12(files["config.yaml"]))
    assert argv[-4:] == [
        "--enable-prefix-caching",
        "--speculative-config",
        '{"method": "ngram"}',
        "--gpu-memory-utilization=0.8",
    ]
    # the dotted --speculative-config.* keys of the preset are replaced by the whole JSON value
    assert not any(a.startswith("--speculative-config.") for a in argv)
    assert argv.count("--enable-prefix-caching") == 1 and "0.90" not in argv
    with pytest.raises(InputError, match="not a list of engine options"):
        _emit("provider-preset", PresetOptions(extra_args=("oops", "--x")))


def test_extra_args_may_start_with_a_dotted_key() -> None:
    """vLLM applies merged --x.key words last; the user's order of extra args still holds."""
    files, _ = _emit("provider-preset", PresetOptions(extra_args=(
        "--speculative-config.num_speculative_tokens", "3", "--max-num-seqs", "8")))
    argv = _argv(_yaml12(files["config.yaml"]))
    assert argv[-4:] == ["--speculative-config.num_speculative_tokens", "3", "--max-num-seqs", "8"]
    assert argv.count("--max-num-seqs") == 1 and argv.count("--speculative-config.num_speculative_tokens") == 1


# --- issue 21: a provider's preset comes back as written (or each change listed), in its own engine's form ------

_TRUSS = CORPUS / "providers" / "baseten"


@functools.cache
def _cards() -> dict[str, LaunchCard]:
    from launchcard.merge import build_corpus

    return build_corpus(CORPUS, models=[GLM, "moonshotai/Kimi-K2.5", "openai/gpt-oss-120b"]).cards


def _preset_env(model: str, rel: str) -> tuple[LaunchCard, Any]:
    card = _cards()[model]
    env = next(e for e in card.envs if e.source.kind == "provider-preset" and (e.source.path or "").endswith(rel))
    return card, env


def _normal(config: dict[str, Any]) -> dict[str, Any]:
    """A Truss config with its long strings' whitespace folded (what YAML folding may move)."""
    def fold(v: Any) -> Any:
        if isinstance(v, str):
            return " ".join(v.split())
        if isinstance(v, dict):
            return {k: fold(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fold(x) for x in v]
        return v
    return fold(config)


@pytest.mark.parametrize(("model", "rel"), [
    (GLM, "glm-5.3-flash-latency/config.yaml"),
    ("moonshotai/Kimi-K2.5", "kimi-k2.5/text2text/config.yaml"),
    ("moonshotai/Kimi-K2.5", "kimi-k2.5/multimodal/config.yaml"),
    ("openai/gpt-oss-120b", "openai/gpt-oss-120b/config.yaml"),
])
def test_provider_presets_come_back_as_written(model: str, rel: str) -> None:
    card, env = _preset_env(model, rel)
    files, _ = emit_preset(card, env, PresetOptions())
    ours = yaml.safe_load(files["config.yaml"])
    written = next(p for p in _TRUSS.rglob("config.yaml") if p.as_posix().endswith(rel))
    theirs = yaml.safe_load(written.read_text(encoding="utf-8"))
    assert _normal(ours) == _normal(theirs), rel
    assert "# as the provider wrote it: no setting changed" in files["config.yaml"]
    assert "The preset as its provider wrote it." in files["README.md"]


def test_kimi_preset_keeps_build_commands_weights_patterns_resources_and_the_sh_c_prefix() -> None:
    card, env = _preset_env("moonshotai/Kimi-K2.5", "kimi-k2.5/text2text/config.yaml")
    files, _ = emit_preset(card, env, PresetOptions(concurrency=32, extra_args=("--max-num-seqs", "32")))
    cfg = yaml.safe_load(files["config.yaml"])
    assert cfg["build_commands"] == ["pip install --upgrade 'transformers>=5.2.0'"]
    assert cfg["weights"][0]["ignore_patterns"] == ["*.md", "*.txt"]
    assert cfg["resources"] == {"accelerator": "B200:8", "use_gpu": True}
    start = cfg["docker_server"]["start_command"]
    assert start.startswith('sh -c "SAFETENSORS_FAST_GPU=1 python3 -m vllm.entrypoints.openai.api_server ')
    inner = shlex.split(start)[2]
    assert shlex.split(inner)[0] == "SAFETENSORS_FAST_GPU=1" and "SAFETENSORS_FAST_GPU" not in cfg.get(
        "environment_variables", {})
    assert shlex.split(inner).count("--max-num-seqs") == 1 and "--max-num-seqs 32" in inner
    assert cfg["runtime"]["predict_concurrency"] == 32
    head = files["config.yaml"].split("\n\n", 1)[0]
    assert "# changed from the provider's preset: runtime.predict_concurrency: 64 -> 32 (your --concurrency)" in head
    assert "# changed from the provider's preset: start_command: --max-num-seqs 32 (your option" in head
    assert "- runtime.predict_concurrency: 64 -> 32 (your --concurrency)" in files["README.md"]


def test_trtllm_preset_is_emitted_in_its_own_engines_form() -> None:
    card, env = _preset_env("openai/gpt-oss-120b", "openai/gpt-oss-120b/config.yaml")
    files, verdict = emit_preset(card, env, PresetOptions())
    cfg = yaml.safe_load(files["config.yaml"])
    assert "docker_server" not in cfg and cfg["trt_llm"]["runtime"]["max_seq_len"] == 131072
    assert cfg["model_cache"][0]["revision"] == "refs/pr/35"
    assert "## Engine settings" in files["README.md"] and "## What each flag does" not in files["README.md"]
    assert not verdict.findings or all(f.severity == "info" for f in verdict.findings)
    with pytest.raises(InputError, match="TensorRT-LLM"):
        emit_preset(card, env, PresetOptions(extra_args=("--max-num-seqs", "8")))
    files, _ = emit_preset(card, env, PresetOptions(concurrency=8))
    assert "# changed from the provider's preset: runtime.predict_concurrency: not set -> 8 (your --concurrency)" \
        in files["config.yaml"] and "None" not in files["config.yaml"].split("\n\n", 1)[0]


def test_generated_description_joins_sentences_with_a_full_stop() -> None:
    card = _cards()["moonshotai/Kimi-K2.5"]
    env = next(e for e in card.envs if e.source.kind == "vllm-recipes")
    files, _ = emit_preset(card, env, PresetOptions())
    text = " ".join(str(yaml.safe_load(files["config.yaml"])["model_metadata"]["description"]).split())
    assert "thinking modes. This preset serves it" in text
    assert not re.search(r"[a-z] This preset", text)


def test_image_client_call_uses_a_portable_base64(tmp_path: Path) -> None:
    card, env = _preset_env("moonshotai/Kimi-K2.5", "kimi-k2.5/multimodal/config.yaml")
    readme = emit_preset(card, env, PresetOptions())[0]["README.md"]
    assert "base64 -w0" not in readme and "base64 < image.jpg | tr -d '\\n'" in readme
    (tmp_path / "image.jpg").write_bytes(bytes(range(256)) * 4)  # long enough that GNU base64 would wrap
    out = subprocess.run(["sh", "-c", "base64 < image.jpg | tr -d '\\n'"], cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout
    import base64

    assert out == base64.b64encode((tmp_path / "image.jpg").read_bytes()).decode()
