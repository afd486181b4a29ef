"""Start-up budget (issue 23): each everyday command imports only what it uses.

Every import of a heavy library costs tens to hundreds of milliseconds on each run of a command that
should feel instant (pydantic ~0.1 s, rich ~0.06 s, httpx, huggingface_hub, fastapi/starlette, jinja2,
ruamel.yaml).  Each command runs in a fresh interpreter after one warm-up run (so the corpus build cache
is filled, as it is for a user's second command); the heavy modules it then holds must be only those its
path needs.  Times themselves are measured by ``bench/cli_latency.py``, never here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pydantic", "rich", "httpx", "huggingface_hub", "fastapi", "starlette", "jinja2", "ruamel", "numpy",
         "sqlite3", "platformdirs", "yaml")

PROBE = """
import contextlib, io, json, sys
from launchcard.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps([code, sorted({m.split('.')[0] for m in sys.modules} & set(json.loads(%r)))]))
"""

# command -> the heavy libraries its path may hold (everything else in HEAVY is off it)
# yaml (PyYAML, ~15 ms with its libyaml composer): commands that compose recipes or corpus documents; the hardware
# catalog is read from its JSON twin (hardware.TWIN_FILE), so predict, memory and plan compose no YAML
CASES: list[tuple[str, list[str], set[str]]] = [
    ("help", ["--help"], set()),
    ("resolve", ["resolve", "zai-org/GLM-5.3-Flash", "--recipes", "{recipes}", "--hardware", "h100"], {"yaml"}),
    # a config.json is known, so memory is judged: the planner's records are pydantic
    ("resolve-memory", ["resolve", "openai/gpt-oss-120b", "--recipes", "{recipes}", "--hardware", "h100"],
     {"pydantic", "yaml"}),
    # off a terminal; platformdirs: the parsed-YAML cache folder (cheaper than importing and running a parser)
    ("facts", ["facts", "zai-org/GLM-5.3-Flash", "--recipes", "{recipes}"], {"pydantic", "platformdirs"}),
    ("card", ["card", "openai/gpt-oss-120b", "--corpus", "{corpus}"], {"pydantic", "platformdirs", "yaml"}),
    ("page", ["page", "zai-org/GLM-5.3-Flash", "--corpus", "{corpus}"], {"pydantic", "platformdirs", "yaml"}),
    ("drift", ["drift", "--engine", "vllm", "--corpus", "{corpus}"], {"pydantic", "platformdirs", "yaml"}),
    # the memory planner's records are frozen dataclasses: predicting a plan holds none of the heavy libraries
    ("predict", ["predict", "--config", "{corpus}/hf/openai/gpt-oss-120b/config.json", "--gpu", "h100", "--tp", "2",
                 "--isl", "1024", "--osl", "256", "--concurrency", "8"], set()),
    ("memory", ["memory", "--config", "{corpus}/hf/openai/gpt-oss-120b/config.json", "--gpu", "h100", "--json"],
     set()),
    # a derived plan looks for the model's tokenizer files in the local caches (platformdirs: launchcard sync's);
    # a search too short for a progress bar holds no rich
    ("plan", ["plan", "openai/gpt-oss-120b", "--config", "{corpus}/hf/openai/gpt-oss-120b/config.json", "--gpu",
              "h100", "--gpus", "8", "--slo", "tpot=50", "--max-num-seqs", "64", "--concurrency", "16"],
     {"platformdirs"}),
    ("ingest", ["ingest", "--corpus", "{corpus}", "--catalog", "{tmp}/c.sqlite3", "--quiet"],
     {"pydantic", "platformdirs", "sqlite3", "yaml"}),
]


@pytest.fixture(scope="module")
def build_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build cache for the module's commands: the corpus is built cold once, not once per command."""
    return tmp_path_factory.mktemp("build-cache")


@pytest.mark.parametrize(("argv", "allowed"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_command_imports_only_what_it_uses(argv: list[str], allowed: set[str], shared_dir: Path,
                                           tmp_path: Path, build_cache: Path) -> None:
    values = {"recipes": str(shared_dir / "corpus" / "vllm-recipes"), "corpus": str(shared_dir / "corpus"),
              "tmp": str(tmp_path)}
    args = [a.format(**values) for a in argv]
    code = PROBE % json.dumps(HEAVY)
    for _ in range(2):  # the first run fills the build cache (a cold build may parse YAML with ruamel)
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=180,
                             env={**os.environ, "LAUNCHCARD_BUILD_CACHE": str(build_cache)})
    assert out.returncode == 0, out.stderr
    exit_code, held = json.loads(out.stdout.strip().splitlines()[-1])
    assert exit_code in (0, 1)
    assert set(held) <= allowed, f"{' '.join(argv[:2])} imports {sorted(set(held) - allowed)}"


def test_one_command_app_reads_as_the_whole_app() -> None:
    """``cli.only_named``: a run builds only the command it names (typer turns every registered command into
    a click command on each run, ~40 ms for all of them); its help, usage errors and exit codes are the whole
    app's, and anything that names no command exactly (``--help``, a typo, nothing) gets the whole app."""
    import contextlib
    import io

    from typer.main import get_command_name

    import launchcard.cli as cli

    def run(argv: list[str], whole: bool) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        saved = cli.only_named
        if whole:
            cli.only_named = lambda _argv: cli.app  # type: ignore[assignment]
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli.main(argv)
        finally:
            cli.only_named = saved  # type: ignore[assignment]
        return code, out.getvalue(), err.getvalue()

    names = [c.name or get_command_name(c.callback.__name__) for c in cli.app.registered_commands if c.callback]
    names += [g.name for g in cli.app.registered_groups if g.name]
    assert {"resolve", "card", "page", "facts", "drift", "ingest", "flags"} <= set(names)
    for name in names:
        assert len(cli.only_named([name, "--help"]).registered_commands) + len(
            cli.only_named([name]).registered_groups) == 1
        for argv in ([name, "--help"], [name, "--no-such-option"]):
            assert run(argv, whole=False) == run(argv, whole=True), argv
    for argv in ([], ["--help"], ["reslove", "x"], ["flags", "capture", "--help"]):
        assert run(argv, whole=False) == run(argv, whole=True), argv
    whole = [c.callback for c in cli.app.registered_commands]
    for argv in (["--help"], ["reslove"], []):
        assert [c.callback for c in cli.only_named(argv).registered_commands] == whole


def test_lazy_package_exports_stay_unloaded_until_used(shared_dir: Path, tmp_path: Path) -> None:
    """``launchcard.flags`` loads its drift report on first use (PEP 562): a card's verdicts need the checker
    only; ``drift`` still finds it."""
    code = ("import contextlib, io, json, sys\nfrom launchcard.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    code = main(sys.argv[1:])\n"
            "print(json.dumps([code, 'launchcard.flags._drift' in sys.modules]))")
    env = {**os.environ, "LAUNCHCARD_BUILD_CACHE": str(tmp_path / "cache")}
    card = ["card", "openai/gpt-oss-120b", "--corpus", str(shared_dir / "corpus")]
    out = subprocess.run([sys.executable, "-c", code, *card], capture_output=True, text=True, timeout=180, env=env)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [0, False], out.stderr
    from launchcard import flags

    assert callable(flags.drift) and "drift" in flags.__all__


def test_command_table_names_each_commands_module_and_a_run_imports_only_its_own(shared_dir: Path) -> None:
    """``cli.COMMANDS`` maps every registered command (and group) to the module that registers it; a run of one
    command imports that module alone of the command modules."""
    from typer.main import get_command_name

    import launchcard.cli as cli

    whole = cli.app
    found = {c.name or get_command_name(c.callback.__name__): c.callback.__module__.rsplit(".", 1)[1]
             for c in whole.registered_commands if c.callback}
    found.update({g.name: g.typer_instance.registered_commands[0].callback.__module__.rsplit(".", 1)[1]
                  for g in whole.registered_groups if g.name and g.typer_instance})
    assert found == cli.COMMANDS
    code = ("import contextlib, io, json, sys\nfrom launchcard.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    code = main(sys.argv[1:])\n"
            "print(json.dumps([code, sorted(m for m in sys.modules if m.startswith('launchcard.cli._'))]))")
    args = ["resolve", "zai-org/GLM-5.3-Flash", "--recipes", str(shared_dir / "corpus" / "vllm-recipes"),
            "--hardware", "h100"]
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=180)
    code_, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert code_ == 0 and {m.rsplit(".", 1)[1] for m in loaded} & set(cli.COMMANDS.values()) == {"_resolve"}, loaded
