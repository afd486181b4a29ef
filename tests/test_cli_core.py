"""CLI and catalog findings of issue 11: each test failed before its fix."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from launchcard.card import EngineEnv, Evidence, Fact, LaunchCard, SourceRef
from launchcard.errors import CatalogError, InputError
from launchcard.store import Catalog
from tests.helpers import run_cli

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
GLM = "zai-org/GLM-5.3-Flash"


def _card(model: str, tp: str, at: int) -> LaunchCard:
    src = SourceRef(kind="vllm-recipes", path="models/m.yaml", sha256="a" * 64)
    ev = Evidence(kind="vllm-recipes", url="https://x/models/m.yaml#L9", path="models/m.yaml", line=9)
    env = EngineEnv(engine="vllm", argv=("vllm", "serve", model, "--tensor-parallel-size", tp, "--enforce-eager"),
                    hardware="h100", source=src, evidence=ev)
    return LaunchCard(model=model, envs=(env,), facts=(Fact(name="context_tokens", value=4096, evidence=ev),),
                      evidence=(src,), captured_at=datetime(2026, 1, at, tzinfo=UTC))


@pytest.fixture()
def catalog(tmp_path: Path) -> Path:
    path = tmp_path / "c.sqlite3"
    with Catalog(path) as cat:
        cat.add([_card("org/a", "4", 1), _card("org/b", "4", 1)])  # ids 1, 2
        cat.add([_card("org/a", "8", 2)])  # id 3
    return path


# --- facts -----------------------------------------------------------------------------

def test_facts_shows_what_resolve_selects_and_names_the_opt_in_list(recipes_dir):
    proc = run_cli("facts", "openai/gpt-oss-120b", "--recipes", str(recipes_dir), "--json")
    rows = {r["name"]: r for r in json.loads(proc.stdout)["facts"]}
    assert rows["Features selected by default"]["value"] == ["tool_calling"]
    opt_in = rows["Opt-in features (off unless asked for)"]
    assert opt_in["value"] == ["spec_decoding"] and opt_in["seed_name"] == "Features selected by default"
    assert "Features selected by default" in opt_in["note"]


# --- diff ------------------------------------------------------------------------------

def test_diff_rejects_captures_of_other_models(catalog):
    proc = run_cli("diff", "org/a", "--catalog", str(catalog), "--from", "2", "--to", "3")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"launchcard: error: --from/--to {catalog}: capture 2 is not a capture of 'org/a'; "
                           "org/a's captures are 1, 3\n")


def test_diff_to_the_oldest_capture_counts_the_captures_up_to_it(catalog):
    """`diff org/a --to 1` said "'org/a' has 2 capture(s) up to 1": it counted every capture of the model."""
    proc = run_cli("diff", "org/a", "--catalog", str(catalog), "--to", "1")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"launchcard: error: --from/--to {catalog}: 'org/a' has 1 capture(s) up to 1; "
                                  "a diff needs an older one;"), proc.stderr


def test_diff_prints_the_changed_flag(catalog):
    proc = run_cli("diff", "org/a", "--catalog", str(catalog))
    assert proc.returncode == 0, proc.stderr
    changes = proc.stdout.splitlines()[1:]
    assert changes == [("~ env vllm-recipes models/m.yaml (single, h100) --tensor-parallel-size: 4 -> 8  "
                        "[https://x/models/m.yaml#L9]")]
    assert "None" not in proc.stdout


def test_diff_on_a_missing_catalog_creates_nothing(tmp_path):
    missing = tmp_path / "missing.sqlite"
    proc = run_cli("diff", GLM, "--catalog", str(missing))
    assert proc.returncode == 2 and "catalog file not found" in proc.stderr and "--catalog" in proc.stderr
    assert not missing.exists()


def test_ingest_of_an_empty_folder_fails(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cli("ingest", "--corpus", str(empty), "--catalog", str(tmp_path / "c.sqlite3"), "--quiet")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"launchcard: error: --corpus {empty}: no source documents in the corpus folder;")
    assert not (tmp_path / "c.sqlite3").exists()


def test_ingest_asks_about_the_catalog_before_reading_the_corpus(tmp_path, monkeypatch):
    """`ingest --catalog FOLDER` (or a path under a file) built all 181 cards, ~5 s, then failed to open it."""
    import launchcard.merge

    def no_build(*_a, **_k):
        raise AssertionError("the corpus was read before the catalog was checked")

    monkeypatch.setattr(launchcard.merge, "build_corpus", no_build)
    (tmp_path / "f").write_text("not a database\n")
    for catalog, said in ((tmp_path, "is a folder, not a file"),
                          (tmp_path / "f" / "c.sqlite3", f"cannot create the catalog file ({tmp_path / 'f'} is not"),
                          (tmp_path / "f", "cannot open the catalog (not a SQLite database")):
        proc = run_cli("ingest", "--corpus", str(CORPUS), "--catalog", str(catalog), "--quiet")
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stderr.startswith(f"launchcard: error: --catalog {catalog}: {said}"), proc.stderr


@pytest.mark.parametrize(("args", "option", "said"), [
    (("--corpus", str(CORPUS), "--batch", "5"), "--batch", "--batch pace(s) --cards only"),
    (("--corpus", str(CORPUS), "--workers", "2"), "--workers", "--workers pace(s) --cards only"),
    (("--corpus", str(CORPUS), "--source", "dynamo"), "--source", "--source names the synced source whose history"),
    (("--cards", "cards.jsonl", "--corpus", str(CORPUS)), "--corpus", "--cards stores cards built elsewhere; --corpus"),
    (("--cards", "cards.jsonl", "--hub"), "--hub", "--cards stores cards built elsewhere; --hub"),
])
def test_ingest_refuses_an_option_it_would_ignore(tmp_path, args, option, said):
    """qa12: `ingest --corpus C --batch 5` (or --workers, or --source without --since/--revisions) built and stored
    181 cards with the option unread; `--cards F --corpus C` streamed F, the corpus unread."""
    catalog = tmp_path / "c.sqlite3"
    proc = run_cli("ingest", *args, "--catalog", str(catalog), "--quiet")
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"launchcard: error: {option}: {said}"), proc.stderr
    assert not catalog.exists()


# --- card ------------------------------------------------------------------------------

def test_card_and_resolve_pick_the_same_default_hardware(recipes_dir):
    card = json.loads(run_cli("card", GLM, "--corpus", str(CORPUS), "--json").stdout)
    plan = json.loads(run_cli("resolve", GLM, "--recipes", str(recipes_dir), "--json").stdout)
    (vllm,) = [e for e in card["envs"] if e["source"]["kind"] == "vllm-recipes"]
    assert vllm["hardware"] == plan["hardware"] == "h200"


def test_card_text_shows_every_environment():
    proc = run_cli("card", GLM, "--corpus", str(CORPUS), "--hardware", "h100")
    card = json.loads(run_cli("card", GLM, "--corpus", str(CORPUS), "--hardware", "h100", "--json").stdout)
    n = len(card["envs"])
    assert proc.stdout.startswith(f"{GLM} — {n} environment(s)")
    assert f"Other environments ({n - 1}), one command each:" in proc.stdout
    assert sum(1 for line in proc.stdout.splitlines() if line.startswith("- ") and " on " in line) == n - 1


def test_card_unknown_hardware_is_bad_input():
    proc = run_cli("card", GLM, "--corpus", str(CORPUS), "--hardware", "h1000")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "unknown hardware 'h1000'; did you mean h100, h200?" in proc.stderr


@pytest.mark.parametrize(("extra", "option"), [(("--hardware", "h100"), "--hardware"), (("--hub",), "--hub"),
                                               (("--revision", "abcd1234"), "--revision")])
def test_card_from_the_catalog_refuses_the_options_that_build_one(catalog, monkeypatch, extra, option):
    """qa12: `card M --hardware h100` (or --hub, --revision) without --corpus printed the stored card, built for
    another hardware, as if the option had been taken; refused as --config and --store are."""
    monkeypatch.delenv("LAUNCHCARD_CORPUS", raising=False)
    proc = run_cli("card", "org/a", "--catalog", str(catalog), *extra)
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"launchcard: error: {option}: {option} build(s) a card; a stored card is printed")
    assert run_cli("card", "org/a", "--catalog", str(catalog)).returncode == 0


def test_model_ids_match_case_insensitively(catalog):
    """As on the Hub (issue 21): another case names the same model; an unknown one still gets suggestions."""
    proc = run_cli("card", "zai-org/glm-5.3-flash", "--corpus", str(CORPUS), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["model"] == GLM
    proc = run_cli("card", "ORG/A", "--catalog", str(catalog), "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["model"] == "org/a"
    proc = run_cli("card", "zai-org/glm-5.3-flashh", "--corpus", str(CORPUS))
    assert proc.returncode == 2 and "did you mean zai-org/GLM-5.3-Flash" in proc.stderr


# --- resolve options -------------------------------------------------------------------

def test_mode_for_a_missing_feature_names_mode(recipes_dir):
    proc = run_cli("resolve", "ByteDance-Seed/Seed-OSS-36B-Instruct", "--recipes", str(recipes_dir), "--mode",
                   "spec_decoding=mtp")
    assert proc.returncode == 2
    assert proc.stderr.startswith("launchcard: error: --mode: ") and "--feature" not in proc.stderr


def test_usage_errors_are_one_line(recipes_dir):
    proc = run_cli("resolve", GLM, "--recipes", str(recipes_dir), "--nodes", "0")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == ("launchcard: error: Invalid value for '--nodes': 0 is not in the range x>=1; "
                           "see `launchcard resolve --help`\n")


def test_unexpected_errors_are_one_line(monkeypatch, tmp_path):
    def boom(*a: object, **k: object) -> None:
        raise ValueError("max() arg is an empty sequence")

    monkeypatch.setattr("launchcard.merge.build_corpus", boom)
    proc = run_cli("ingest", "--corpus", str(tmp_path), "--quiet")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("launchcard: internal error: ValueError: max() arg is an empty sequence; ")
    assert len(proc.stderr.splitlines()) == 1


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch, tmp_path):
    """typer turns KeyboardInterrupt into a silent exit 130: the user still gets one line saying why it stopped."""
    def interrupted(*a: object, **k: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("launchcard.merge.build_corpus", interrupted)
    proc = run_cli("ingest", "--corpus", str(tmp_path), "--quiet")
    assert proc.returncode == 130 and proc.stderr == "launchcard: interrupted\n" and proc.stdout == ""


# --- library errors name inputs, not flags -----------------------------------------------

def test_library_errors_never_name_flags(tmp_path):
    from launchcard.merge import build_corpus

    with pytest.raises(CatalogError) as cat_err:
        Catalog(tmp_path / "none.sqlite3", create=False)
    with pytest.raises(InputError) as corpus_err:
        build_corpus(tmp_path / "nowhere")
    for err, field in ((cat_err.value, "catalog"), (corpus_err.value, "corpus")):
        assert err.field == field and "--" not in str(err)


def test_plan_options_object(recipes_dir):
    from launchcard.cli._options import PlanOptions, build_plan

    opts = PlanOptions.from_cli(GLM, recipes_dir, hardware="h100", mode=["spec_decoding=mtp"])
    assert opts.modes == {"spec_decoding": "mtp"} and opts.features == ()
    plan = build_plan(opts)
    assert plan.hardware == "h100" and plan.feature_modes.get("spec_decoding") == "mtp"


def test_a_subcommands_usage_error_points_at_its_own_help() -> None:
    """`flags capture` without --engine said "see `launchcard capture --help`", a command that does not exist."""
    from helpers import run_cli

    for args, path in ((("flags", "capture", "vllm"), "flags capture"), (("flags", "range"), "flags range"),
                       (("resolve", "--bogus"), "resolve")):
        out = run_cli(*args)
        assert out.returncode == 2 and out.stderr.rstrip().endswith(f"see `launchcard {path} --help`"), out.stderr


def test_a_mistyped_command_names_the_close_ones_once():
    """click names the close commands itself; typer's own suggestion said them a second time."""
    proc = run_cli("plna")
    assert proc.returncode == 2
    assert proc.stderr.count("Did you mean") == 1, proc.stderr
    assert "No such command 'plna'. Did you mean 'plan'?" in proc.stderr


@pytest.mark.parametrize("args", [("card", "org/a", "--catalog", "{long}"),
                                  ("page", GLM, "--corpus", str(CORPUS), "--out", "{long}"),
                                  ("ingest", "--corpus", "{long}"), ("up", "--state", "{long}", "--", "true"),
                                  ("sync", "--cache", "{long}", "--offline", "--quiet")])
def test_a_path_with_a_part_longer_than_a_file_name_is_bad_input(tmp_path, args):
    """qa12: a path with a 300-character part was "internal error: OSError: [Errno 36] File name too long" on
    every command that looked at it (Path.is_file and friends raise ENAMETOOLONG rather than answer False); one
    place now names the option, the length and the file system's limit, exit 2."""
    long = str(tmp_path / ("a" * 300))
    argv = [a.replace("{long}", long) for a in args]
    proc = run_cli(*argv)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    option = args[args.index("{long}") - 1]
    assert proc.stderr.startswith(f"launchcard: error: {option} {long}: file name too long (a part of 300 bytes; "
                                  "this file system takes "), proc.stderr
