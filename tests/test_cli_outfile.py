"""One output file: bad paths are one line before any work; the file is written whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from launchcard.cli._outfile import check_out_dir, check_out_file, out_file
from launchcard.errors import InputError
from tests.fault_support import refused_endpoint
from tests.helpers import run_cli

CASES = Path(__file__).resolve().parents[1].parent / "shared" / "testdata" / "vllm-recipes-golden-sample.jsonl"
RECIPES = CASES.parents[1] / "corpus" / "vllm-recipes"


def test_a_folder_or_a_file_in_the_way_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match="is a folder, not a file"):
        check_out_file(tmp_path)
    with pytest.raises(InputError, match="is not a folder"):
        check_out_file(tmp_path / "f" / "out.json")
    check_out_file(tmp_path / "new" / "out.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]  # asking leaves nothing behind


def test_an_output_folder_is_checked_without_writing_anything(tmp_path: Path) -> None:
    check_out_dir(tmp_path / "new" / "deeper")  # made later by write_files; nothing made now
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "file.txt").write_text("x")
    for bad in (tmp_path / "file.txt", tmp_path / "file.txt" / "sub"):
        with pytest.raises(InputError, match=r"file\.txt is not a folder"):
            check_out_dir(bad)
    with pytest.raises(InputError, match="cannot create the output folder"):
        check_out_dir(Path("/proc/launchcard-out"))  # a folder no one can create files in
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_an_error_midway_keeps_the_previous_file(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_text("old\n")
    with pytest.raises(KeyboardInterrupt), out_file(path) as fh:
        fh.write("half")
        raise KeyboardInterrupt
    assert path.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
    with out_file(path) as fh:
        fh.write("new\n")
    assert path.read_text() == "new\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_bench_asks_about_out_before_sending_anything(tmp_path: Path) -> None:
    """`bench --out FOLDER` ran the whole load, then failed with an internal error (and left FOLDER.tmp)."""
    proc = run_cli("bench", "--endpoint", refused_endpoint(), "--num-prompts", "1", "--no-record",
                   "--out", str(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == f"launchcard: error: --out {tmp_path}: is a folder, not a file; name a file, e.g. " \
                          "--out results.json\n"


def test_resolve_batch_out_is_checked_first_and_written_whole(tmp_path: Path) -> None:
    """`resolve --cases --out` into a folder was an internal error; a results file was opened (emptied) at the
    start and filled as cases resolved, so an interrupted batch left part of it."""
    (tmp_path / "cases.jsonl").write_text("".join(CASES.read_text().splitlines(keepends=True)[:3]))
    base = ("resolve", "--recipes", str(RECIPES), "--cases", str(tmp_path / "cases.jsonl"), "--out")
    proc = run_cli(*base, str(tmp_path))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "is a folder, not a file" in proc.stderr
    proc = run_cli(*base, str(tmp_path / "r" / "results.jsonl"))
    assert proc.returncode == 0, proc.stderr
    assert len((tmp_path / "r" / "results.jsonl").read_text().splitlines()) == 3
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["results.jsonl"]


def test_a_failed_rename_is_one_line_and_keeps_the_previous_file(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The write goes through launchcard.atomicfile; its OSError is still this command's one line."""
    import os

    path = tmp_path / "out.json"
    path.write_text("old\n")

    def refuse(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(InputError) as err, out_file(path) as fh:
        fh.write("new\n")
    assert err.value.one_line() == (f"{path}: cannot write the output file (No space left on device); "
                                    "choose a file in a writable folder with free space")
    assert err.value.field == "out" and err.value.exit_code == 2
    assert path.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_file_that_cannot_be_created_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("")
    path = tmp_path / "plain" / "out.json"  # its folder is a file
    with pytest.raises(InputError) as err, out_file(path) as fh:
        fh.write("never\n")
    assert err.value.one_line() == (f"{path}: cannot create the output file (File exists); "
                                    "choose a file in a writable folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]
