"""Output hygiene (issue 21): nothing wraps off a terminal, errors name the option typed, model ids in any
case, a readable diff, and emitted files without notes that do not apply."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from launchcard.card import EngineEnv, Evidence, LaunchCard, SourceRef
from launchcard.store import Catalog
from tests.helpers import run_cli

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
RECIPES = str(SHARED / "corpus" / "vllm-recipes")
GPT = "openai/gpt-oss-120b"


def _whole_urls(text: str) -> None:
    """Every URL in ``text`` runs to its end on one line (a fold would leave a stub ending mid-path)."""
    for url in re.findall(r"https://\S+", text):
        assert re.search(r"(\.yaml|\.json|#L\d+|/)$", url), url


def test_facts_header_and_table_do_not_wrap_when_piped() -> None:
    proc = run_cli("facts", "zai-org/GLM-5.3-Flash", "--recipes", RECIPES)
    assert proc.returncode == 0, proc.stderr
    head = proc.stdout.splitlines()[0]
    assert re.fullmatch(r"zai-org/GLM-5\.3-Flash  https://github\.com/vllm-project/recipes/blob/[0-9a-f]{40}/"
                        r"models/zai-org/GLM-5\.3-Flash\.yaml  sha256 [0-9a-f]{64}", head), head
    assert "fact\tvalue\tclass\tline" in proc.stdout  # plain rows off a terminal
    assert "Total parameters as counted by recipe\t\"321B\"\trecipe_declaration\tL32" in proc.stdout
    _whole_urls(proc.stdout)


def test_memory_text_does_not_wrap_when_piped() -> None:
    proc = run_cli("resolve", GPT, "--recipes", RECIPES, "--hardware", "h100", "--memory",
                   "--config", str(SHARED / "corpus" / "hf" / GPT / "config.json"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any("assumed (high): engine defaults for this device" in x and "memory size)" in x for x in lines), lines
    assert any(x.startswith("  ■ weights") and "after CUDA graphs" in x for x in lines)
    assert max(len(x) for x in lines) > 100  # long lines stay long: nothing folded them at 80 columns


def test_errors_name_the_option_the_user_typed() -> None:
    proc = run_cli("resolve", GPT, "--recipes", RECIPES, "--check", "--engine-version", "0.20.0")
    assert proc.returncode == 2
    assert proc.stderr.startswith("launchcard: error: --engine-version: no captured flag spec for vllm 0.20.0")
    assert "0.20.2" in proc.stderr  # the fix names the captured releases
    proc = run_cli("check", "--version", "0.20.0", "--", "vllm", "serve", "m")
    assert proc.returncode == 2 and proc.stderr.startswith("launchcard: error: --version: no captured flag spec")


def test_model_ids_match_in_any_case() -> None:
    """The recipe's own model.model_id (google/gemma-4-E4B-it) names the recipe Google/gemma-4-E4B-it."""
    proc = run_cli("resolve", "google/gemma-4-E4B-it", "--recipes", RECIPES, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["model"] == "Google/gemma-4-E4B-it"
    for args in (("facts", "GOOGLE/GEMMA-4-E4B-IT"), ("page", "google/gemma-4-e4b-it")):
        proc = run_cli(*args, "--recipes", RECIPES)
        assert proc.returncode == 0, (args, proc.stderr)
    proc = run_cli("facts", "google/gemma-4-E4B-itt", "--recipes", RECIPES)
    assert proc.returncode == 2 and "did you mean Google/gemma-4-E4B-it" in proc.stderr


def _card(hardware: str, at: int, tp: str = "8") -> LaunchCard:
    src = SourceRef(kind="vllm-recipes", path="models/org/m.yaml", sha256="a" * 64)
    ev = Evidence(kind="vllm-recipes", url="https://x/models/org/m.yaml#L9", path="models/org/m.yaml", line=9)
    env = EngineEnv(engine="vllm", argv=("vllm", "serve", "org/m", "--tensor-parallel-size", tp),
                    hardware=hardware, checkpoint="org/m", source=src, evidence=ev)
    return LaunchCard(model="org/m", envs=(env,), evidence=(src,), captured_at=datetime(2026, 1, at, tzinfo=UTC))


def test_diff_reads_as_changes_with_labelled_columns(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    with Catalog(path) as cat:
        cat.add([_card("h200", 1)])
        cat.add([_card("h100", 2, tp="4")])
    listing = run_cli("diff", "org/m", "--list", "--catalog", str(path)).stdout.splitlines()
    assert listing[0] == "capture\tcaptured at\tcard sha256\tsources\tcommit\tcommitted at"
    assert listing[1].startswith("1\t2026-01-01") and len(listing[1].split("\t")) == 6
    out = run_cli("diff", "org/m", "--catalog", str(path)).stdout.splitlines()[1:]
    # the same command of the same document: its hardware and its flag changed, nothing removed and re-added
    assert out == ["~ env vllm-recipes models/org/m.yaml (single, h200, org/m) hardware: h200 -> h100  "
                   "[https://x/models/org/m.yaml#L9]",
                   "~ env vllm-recipes models/org/m.yaml (single, h200, org/m) --tensor-parallel-size: 8 -> 4  "
                   "[https://x/models/org/m.yaml#L9]"]


def test_single_node_compose_has_no_head_and_worker_note(tmp_path: Path) -> None:
    single = run_cli("emit", GPT, "--recipes", RECIPES, "--hardware", "h100", "-t", "compose",
                     "--out", str(tmp_path / "one"))
    assert single.returncode == 0, single.stderr
    assert "head" not in (tmp_path / "one" / "compose.yaml").read_text().lower()
    multi = run_cli("emit", "zai-org/GLM-5.3-Flash", "--recipes", RECIPES, "--hardware", "h100",
                    "--strategy", "multi_node_tp", "--nodes", "2", "-t", "compose", "--out", str(tmp_path / "two"))
    assert multi.returncode == 0, multi.stderr
    assert "# Head and workers on one host" in (tmp_path / "two" / "compose.yaml").read_text()


def test_diff_pairs_a_fact_whose_scope_or_source_moved(tmp_path: Path) -> None:
    from launchcard.card import Fact

    ev_a = Evidence(kind="vllm-recipes", url="https://x/a.yaml#L1", path="a.yaml", line=1)
    ev_b = Evidence(kind="provider-preset", url="https://x/b.yaml#L2", path="b.yaml", line=2)
    one = _card("h100", 1).model_copy(update={"facts": (Fact(name="min_gpus", value=1, evidence=ev_a,
                                                             scope="smallest: a", classification="derived"),)})
    two = _card("h100", 2).model_copy(update={"facts": (Fact(name="min_gpus", value=2, evidence=ev_b,
                                                             scope="smallest: b", classification="derived"),)})
    path = tmp_path / "c.sqlite3"
    with Catalog(path) as cat:
        cat.add([one])
        cat.add([two])
    out = run_cli("diff", "org/m", "--catalog", str(path)).stdout.splitlines()[1:]
    assert out == ["~ fact min_gpus [smallest: a] (vllm-recipes a.yaml) -> [smallest: b] (provider-preset b.yaml): "
                   "1 -> 2  [https://x/b.yaml#L2]"]


def test_diff_list_shows_the_same_sha_for_two_captures_of_the_same_content(tmp_path: Path) -> None:
    """`diff --list`'s card sha256 hashed the stored JSON, capture time included, so two captures saying the same
    listed different hashes: it is the content fingerprint now (the web's history reads the same Capture)."""
    path = tmp_path / "c.sqlite3"
    with Catalog(path) as cat:
        cat.add([_card("h200", 1)])
        cat.add([_card("h200", 2)])  # the same card read a day later
        cat.add([_card("h100", 3)])  # what it says changed
        shown = [c.card_sha256 for c in cat.captures("org/m")]
    rows = [line.split("\t") for line in
            run_cli("diff", "org/m", "--list", "--catalog", str(path)).stdout.splitlines()[1:]]
    assert [r[0] for r in rows] == ["1", "2", "3"] and rows[0][1] != rows[1][1]
    assert rows[0][2] == rows[1][2] != rows[2][2] and len(rows[0][2]) == 12
    assert shown[0] == shown[1] != shown[2] and shown[0].startswith(rows[0][2])
