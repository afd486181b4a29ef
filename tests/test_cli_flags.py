"""``launchcard flags capture``'s inputs: refused in one line naming the option, before the engine is imported."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers import run_cli


@pytest.mark.parametrize("kind", ["folder", "not_executable", "not_a_program"])
def test_capture_refuses_a_python_it_cannot_run(tmp_path: Path, kind: str) -> None:
    """qa12: `flags capture --python FOLDER` (or a file without the execute bit) was an internal error
    (PermissionError from subprocess)."""
    python = tmp_path / "py"
    if kind == "folder":
        python.mkdir()
    else:
        python.write_bytes(b"\x00\x01\x02 not a program")
        if kind == "not_a_program":
            python.chmod(0o755)
    out = run_cli("flags", "capture", "--engine", "vllm", "--python", str(python))
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "internal error" not in out.stderr, out.stderr
    assert out.stderr.startswith("launchcard: error: --python:") and str(python) in out.stderr


def test_capture_refuses_an_out_file_it_could_not_write_before_the_engine_runs(tmp_path: Path) -> None:
    """qa12: `--out` under a file was found by the engine's own process after the import (a traceback there)."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    out = run_cli("flags", "capture", "--engine", "vllm", "--python", sys.executable, "--out", str(blocker / "s.json"))
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "--out" in out.stderr and "spec file" in out.stderr, out.stderr
    assert "cannot import the engine" not in out.stderr  # asked first
