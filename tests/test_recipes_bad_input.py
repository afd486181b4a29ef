"""Broken recipes, tried as a new user would: one line naming file, line and rule; exit 2."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

GOOD = """\
meta:
  title: Tiny
  hardware:
    h100: verified
model:
  model_id: acme/Tiny
  base_env:
    A: "1"
variants:
  default:
    precision: bf16
    vram_minimum_gb: 10
features:
  tool_calling:
    args: ["--tool-call-parser", "hermes"]
compatible_strategies: [single_node_tp]
"""

BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
    f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(8))

BAD = {
    "syntax": ("model:\n  model_id: [unclosed\n", "started at line 2", 3),
    "tab_indent": ("model:\n\tmodel_id: x\n", "YAML syntax error", 2),
    "duplicate_key": ("model:\n  model_id: a\n  model_id: b\n", "duplicate key 'model_id'", 3),
    "alias_bomb": (BOMB, "alias bomb", None),
    "not_mapping": ("- just\n- a list\n", "a recipe must be a mapping", 1),
    "scalar_document": ("hello\n", "a recipe must be a mapping", 1),
    "empty": ("", "empty document", 1),
    "only_comments": ("# nothing here\n", "empty document", 1),
    "model_not_mapping": ("model: [a, b]\n", "model: must be a mapping", 1),
    "base_args_not_list": ("model:\n  base_args: --trust-remote-code\n", "model.base_args: must be a list", 2),
    "base_env_not_mapping": ("model:\n  base_env: [A]\n", "model.base_env: must be a mapping", 2),
    "env_value_nested": ("model:\n  base_env:\n    A: {b: 1}\n", "environment value must be a scalar", 3),
    "arg_nested": ("model:\n  base_args:\n    - [a]\n", "argument must be a string", 3),
    "variants_not_mapping": ("variants: [default]\n", "variants: must be a mapping", 1),
    "variant_tp_wrong": ("variants:\n  default:\n    tp: eight\n", "variants.default.tp: must be a number", 3),
    "vram_wrong": ("variants:\n  default:\n    vram_minimum_gb: lots\n", "vram_minimum_gb: must be a number", 3),
    "unknown_strategy": ("compatible_strategies:\n  - single_node_tp\n  - single_node_tpp\n",
                         "names strategy 'single_node_tpp', which does not exist", 3),
    "unknown_default_strategy": ("default_strategy: multi_node_xx\n", "names strategy 'multi_node_xx'", 1),
    "modes_and_args": ("features:\n  f:\n    args: [--x]\n    modes:\n      a:\n        args: [--y]\n",
                       "must not also declare args", 3),
    "default_mode_missing": ("features:\n  f:\n    default_mode: z\n    modes:\n      a:\n        args: [--y]\n",
                             "default_mode 'z' is not one of the modes", 3),
    "mode_without_args": ("features:\n  f:\n    modes:\n      a:\n        label: A\n", "each mode needs an args list",
                          4),
    "default_modes_unknown_feature": ("variants:\n  default:\n    default_modes:\n      nope: a\n",
                                      "feature 'nope' does not exist", 4),
    "hardware_overrides_list": ("hardware_overrides:\n  hopper: [--x]\n",
                                "hardware_overrides.hopper: must be a mapping", 2),
    "features_not_mapping": ("features: [a]\n", "features: must be a mapping", 1),
}


@pytest.fixture()
def recipes(tmp_path: Path, recipes_dir: Path) -> Path:
    root = tmp_path / "recipes"
    (root / "models" / "acme").mkdir(parents=True)
    for name in ("strategies", "kv_store", "taxonomy.yaml"):
        (root / name).symlink_to(recipes_dir / name)
    (root / "models" / "acme" / "Tiny.yaml").write_text(GOOD)
    return root


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI in-process (as the console script does) and capture its output."""
    import contextlib
    import io

    from launchcard.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())


def _check(proc: subprocess.CompletedProcess[str], needle: str, path: str, line: int | None) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert needle in err, err
    where = f"{path}:{line}" if line else path
    assert where in err, err


@pytest.mark.parametrize("name", sorted(BAD))
def test_broken_recipe_one_line_error(recipes: Path, name: str) -> None:
    text, needle, line = BAD[name]
    bad = recipes / "models" / "acme" / "Broken.yaml"
    bad.write_text(text)
    proc = _run("resolve", "acme/Broken", "--recipes", str(recipes), "--hardware", "h100")
    _check(proc, needle, "models/acme/Broken.yaml", line)
    # the other recipes in the same folder still resolve
    ok = _run("resolve", "acme/Tiny", "--recipes", str(recipes), "--hardware", "h100")
    assert ok.returncode == 0, ok.stderr
    assert "--tool-call-parser hermes" in ok.stdout


def test_not_utf8(recipes: Path) -> None:
    bad = recipes / "models" / "acme" / "Latin.yaml"
    bad.write_bytes(b"model:\n  model_id: caf\xe9\n")
    _check(_run("resolve", "acme/Latin", "--recipes", str(recipes)), "not UTF-8", "Latin.yaml", 2)


def test_unknown_hardware_lists_close_matches(recipes: Path) -> None:
    proc = _run("resolve", "acme/Tiny", "--recipes", str(recipes), "--hardware", "h1000")
    assert proc.returncode == 2 and "unknown hardware 'h1000'" in proc.stderr and "h100" in proc.stderr


def test_unknown_strategy_option(recipes: Path) -> None:
    proc = _run("resolve", "acme/Tiny", "--recipes", str(recipes), "--hardware", "h100", "--strategy", "single_tp")
    assert proc.returncode == 2 and "unknown strategy 'single_tp'" in proc.stderr


def test_strategy_not_offered(recipes: Path) -> None:
    proc = _run("resolve", "acme/Tiny", "--recipes", str(recipes), "--hardware", "h100", "--strategy", "multi_node_tp")
    assert proc.returncode == 2 and "not usable" in proc.stderr


def test_unknown_model_suggests(recipes: Path) -> None:
    # (resolve derives a plan for a model without a recipe; facts needs the recipe)
    proc = _run("facts", "acme/tinyy", "--recipes", str(recipes))
    assert proc.returncode == 2 and "acme/Tiny" in proc.stderr
    # another case of a known id is that model (issue 21: ids match case-insensitively)
    assert _run("resolve", "acme/tiny", "--recipes", str(recipes)).returncode == 0


def test_unknown_model_without_a_close_name_counts_models(recipes: Path) -> None:
    # qa12: "181 modelss are known" (the word given already plural)
    proc = _run("facts", "zz/qqqq", "--recipes", str(recipes))
    assert proc.returncode == 2 and "models are known" in proc.stderr and "modelss" not in proc.stderr


def test_unknown_variant_feature_and_mode(recipes: Path) -> None:
    for args, needle in ((["--variant", "fp9"], "no variant 'fp9'"), (["--feature", "tools"], "no feature 'tools'"),
                         (["--mode", "tool_calling"], "FEATURE=MODE"), (["--mode", "tool_calling=x"], "no mode 'x'")):
        proc = _run("resolve", "acme/Tiny", "--recipes", str(recipes), "--hardware", "h100", *args)
        assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr


def test_missing_recipes_dir(tmp_path: Path) -> None:
    proc = _run("resolve", "acme/Tiny", "--recipes", str(tmp_path / "nope"))
    assert proc.returncode == 2 and "recipes directory not found" in proc.stderr


def test_missing_taxonomy(tmp_path: Path) -> None:
    (tmp_path / "models" / "acme").mkdir(parents=True)
    (tmp_path / "models" / "acme" / "Tiny.yaml").write_text(GOOD)
    proc = _run("resolve", "acme/Tiny", "--recipes", str(tmp_path))
    assert proc.returncode == 2 and "taxonomy.yaml is missing" in proc.stderr


def test_broken_strategy_file(tmp_path: Path, recipes_dir: Path) -> None:
    (tmp_path / "models" / "acme").mkdir(parents=True)
    (tmp_path / "models" / "acme" / "Tiny.yaml").write_text(GOOD)
    (tmp_path / "taxonomy.yaml").symlink_to(recipes_dir / "taxonomy.yaml")
    (tmp_path / "strategies").mkdir()
    (tmp_path / "strategies" / "single_node_tp.yaml").write_text("name: single_node_tp\nvllm_args: --x\n")
    proc = _run("resolve", "acme/Tiny", "--recipes", str(tmp_path))
    _check(proc, "vllm_args: must be a list", "strategies/single_node_tp.yaml", 2)


@pytest.mark.parametrize("args", [("facts",), ("resolve",), ("resolve", "--hardware", "h100"),
                                  ("predict", "--hardware", "h100", "--concurrency", "1")])
@pytest.mark.parametrize("model", ["a" * 300 + "/x", "x/" + "a" * 300])
def test_a_model_id_longer_than_a_file_name_is_no_recipe(recipes: Path, args: tuple[str, ...], model: str) -> None:
    """qa12: a MODEL of 300 characters was "internal error: OSError: [Errno 36] File name too long" (Path.is_file
    raises ENAMETOOLONG rather than answer False): the recipe lookup and the config lookups now read it as not
    there."""
    proc = _run(args[0], model, *args[1:], "--recipes", str(recipes))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("launchcard: error: MODEL: no recipe for") and "internal error" not in proc.stderr
