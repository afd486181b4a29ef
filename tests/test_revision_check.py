"""Issue 20 item 9 on the command line: a ``--revision`` the recipes checkout does not hold is never passed off
as verified (the web refuses it; the CLI keeps the user's word and says so), and an abbreviation of the held
revision is expanded."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import SHARED

GLM = "zai-org/GLM-5.3-Flash"
HELD = "0400c4ef554febc569d2bf0c9aa639b5c3877f9c"  # SOURCES.md's commit for models/zai-org/GLM-5.3-Flash.yaml


def _page(*extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "launchcard", "page", GLM, "--recipes",
                           str(SHARED / "corpus" / "vllm-recipes"), *extra], capture_output=True, text=True,
                          timeout=300, check=False)


def test_an_unheld_revision_is_said_to_be_unverified() -> None:
    out = _page("--revision", "deadbeef")
    assert out.returncode == 0
    assert "--revision deadbeef is not verified" in out.stderr and HELD[:12] in out.stderr
    assert out.stderr.count("\n") == 1


def test_an_abbreviation_of_the_held_revision_is_expanded_silently() -> None:
    out = _page("--revision", HELD[:8])
    assert out.returncode == 0 and out.stderr == ""
    assert f"- Source revision: {HELD}" in out.stdout


def test_resolve_and_emit_say_an_unheld_revision_once_and_every_command_says_it() -> None:
    """resolve and emit open the checkout several times (the plan, its verdict, the emitters): the warning was
    printed three times; a second command in the same process (an embedding program) still says it."""
    from helpers import run_cli

    recipes = str(SHARED / "corpus" / "vllm-recipes")
    for args in (("resolve", GLM, "--hardware", "h100"), ("emit", GLM, "--hardware", "h100", "-t", "shell"),
                 ("resolve", GLM, "--hardware", "h100")):
        out = run_cli(*args, "--recipes", recipes, "--revision", "deadbeef")
        assert out.returncode == 0, out.stderr
        assert out.stderr.count("--revision deadbeef is not verified") == 1, (args, out.stderr)


def test_a_revision_git_could_not_name_is_bad_input() -> None:
    """qa12: `--revision 'a b'` was pinned into every evidence URL (blob/a b/models/...), and `--revision ''` matched
    every held commit as a prefix and silently pinned the links to the first (another file's commit)."""
    from helpers import run_cli

    recipes = str(SHARED / "corpus" / "vllm-recipes")
    for rev in ("", "a b", "x..y", "v1.lock"):
        for args in (("facts", GLM), ("page", GLM), ("resolve", GLM, "--hardware", "h100")):
            out = run_cli(*args, "--recipes", recipes, "--revision", rev)
            assert out.returncode == 2, (args, rev, out.stderr)
            assert out.stderr.startswith("launchcard: error: --revision: not a git revision") and not out.stdout
            assert out.stderr.count("\n") == 1


def test_an_abbreviation_has_four_digits_at_least() -> None:
    """qa12: `--revision 04` expanded to the held 0400c4ef... (git takes 4 digits at least as an abbreviation,
    minimum_abbrev; a shorter one is a ref name), so it is the user's word, said unverified."""
    out = _page("--revision", HELD[:2])
    assert out.returncode == 0
    assert f"--revision {HELD[:2]} is not verified" in out.stderr and f"- Source revision: {HELD}" not in out.stdout


def test_an_abbreviation_of_two_held_commits_is_refused(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """qa12: a prefix of several held commits was expanded to the first in sorted order."""
    import pytest

    import launchcard.sources
    from launchcard.cli._options import checked_revision
    from launchcard.errors import InputError

    two = {"models/zai-org/GLM-5.3-Flash.yaml": "abcd1" + "0" * 35, "models/zai-org/GLM-5.3.yaml": "abcd2" + "0" * 35}
    monkeypatch.setattr(launchcard.sources, "provenance_lookup",
                        lambda root, rel: (None, two.get(rel, "f" * 40)))
    recipes = SHARED / "corpus" / "vllm-recipes"
    with pytest.raises(InputError, match=r"ambiguous abbreviation 'abcd'.*abcd10000000, abcd20000000") as e:
        checked_revision(recipes, "abcd")
    assert e.value.where == "--revision"
    assert checked_revision(recipes, "abcd1") == two["models/zai-org/GLM-5.3-Flash.yaml"]
