"""launchcard.atomicfile: a file, a set of files or a folder written whole or not at all."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from launchcard import atomicfile


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_write_text_creates_and_replaces(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    atomicfile.write_text(path, "one\n")
    assert path.read_text(encoding="utf-8") == "one\n"
    atomicfile.write_text(path, "twö\r\n")  # UTF-8, line ends as written
    assert path.read_bytes() == "twö\r\n".encode()
    assert _names(tmp_path) == ["a.json"]


def test_a_new_file_gets_the_mode_open_would_give(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        atomicfile.write_bytes(tmp_path / "new", b"x")
        with open(tmp_path / "plain", "wb"):
            pass
    finally:
        os.umask(old)
    assert _mode(tmp_path / "new") == _mode(tmp_path / "plain") == 0o640


def test_a_replaced_file_keeps_its_mode_and_mode_sets_it(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text("old")
    path.chmod(0o700)
    atomicfile.write_text(path, "new")
    assert _mode(path) == 0o700
    atomicfile.write_text(path, "newer", mode=0o644)
    assert _mode(path) == 0o644 and path.read_text() == "newer"


def _refusing(errno: int, text: str) -> Callable[..., None]:
    def refuse(*args: object) -> None:
        raise OSError(errno, text)

    return refuse


@pytest.mark.parametrize(("step", "write"), [("replace", "text"), ("fsync", "text"), ("replace", "bytes"),
                                             ("fsync", "bytes"), ("fchmod", "text")])
def test_a_failed_step_leaves_the_old_file_and_no_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            step: str, write: str) -> None:
    path = tmp_path / "state.json"
    path.write_text("old")
    monkeypatch.setattr(atomicfile.os, step, _refusing(28, "No space left on device"))
    with pytest.raises(OSError, match="No space"):
        if write == "text":
            atomicfile.write_text(path, "new", mode=0o600)
        else:
            atomicfile.write_bytes(path, b"new", mode=0o600)
    assert path.read_text() == "old"
    assert _names(tmp_path) == ["state.json"]


def test_an_error_in_the_block_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_text("old")
    with pytest.raises(KeyboardInterrupt), atomicfile.replacing(path) as fh:
        fh.write("half of the new")
        raise KeyboardInterrupt
    assert path.read_text() == "old"
    assert _names(tmp_path) == ["out.json"]


def test_replacing_writes_what_the_block_wrote(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    with atomicfile.replacing(path) as fh:
        fh.write("a\n")
        assert not path.exists()  # nothing at the path until the block ends
        fh.write("b\n")
    assert path.read_bytes() == b"a\nb\n"


def test_no_folder_no_file_no_temporary(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        atomicfile.write_text(tmp_path / "missing" / "a", "x")
    assert _names(tmp_path) == []


def test_a_cache_write_skips_the_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(atomicfile.os, "fsync", calls.append)
    atomicfile.write_bytes(tmp_path / "c", b"x", durable=False)
    assert calls == [] and (tmp_path / "c").read_bytes() == b"x"
    atomicfile.write_bytes(tmp_path / "d", b"x")
    assert len(calls) == 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.binary(max_size=2048), second=st.binary(max_size=2048), text=st.text(max_size=500))
def test_round_trip(tmp_path: Path, first: bytes, second: bytes, text: str) -> None:
    path = tmp_path / "f"
    atomicfile.write_bytes(path, first)
    assert path.read_bytes() == first
    atomicfile.write_bytes(path, second)
    assert path.read_bytes() == second
    atomicfile.write_text(path, text)
    assert path.read_bytes() == text.encode("utf-8")
    assert _names(tmp_path) == ["f"]


# --- several files in one folder ------------------------------------------------------------------------------


def test_write_files_writes_all_with_their_modes(tmp_path: Path) -> None:
    paths = atomicfile.write_files(tmp_path, {"launch.sh": "#!/bin/sh\n", "compose.yaml": b"a: 1\n"},
                                   mode=lambda name: 0o755 if name.endswith(".sh") else None)
    assert paths == [tmp_path / "launch.sh", tmp_path / "compose.yaml"]
    assert (tmp_path / "launch.sh").read_text() == "#!/bin/sh\n" and _mode(tmp_path / "launch.sh") == 0o755
    assert (tmp_path / "compose.yaml").read_bytes() == b"a: 1\n"
    assert _mode(tmp_path / "compose.yaml") == 0o666 & ~_umask()


def test_write_files_changes_none_when_one_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").write_text("old a")
    real = os.fdopen
    opened: list[int] = []

    def second_fails(fd: int, *args: object, **kw: object) -> object:
        opened.append(fd)
        if len(opened) == 2:
            os.close(fd)
            raise OSError(28, "No space left on device")
        return real(fd, *args, **kw)  # type: ignore[call-overload]

    monkeypatch.setattr(atomicfile.os, "fdopen", second_fails)
    with pytest.raises(OSError, match="No space"):
        atomicfile.write_files(tmp_path, {"a": "new a", "b": "new b", "c": "new c"})
    assert _names(tmp_path) == ["a"] and (tmp_path / "a").read_text() == "old a"


def test_write_files_renames_only_after_all_are_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").write_text("old a")

    monkeypatch.setattr(atomicfile.os, "replace", _refusing(13, "Permission denied"))
    with pytest.raises(OSError, match="Permission"):
        atomicfile.write_files(tmp_path, {"a": "new a", "b": "new b"})
    assert _names(tmp_path) == ["a"] and (tmp_path / "a").read_text() == "old a"


# --- a folder ---------------------------------------------------------------------------------------------------


def test_staged_folder_appears_whole(tmp_path: Path) -> None:
    final = tmp_path / "snap"
    with atomicfile.staged_folder(final) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".") and not final.exists()
        (tmp / "sub").mkdir()
        (tmp / "sub" / "f").write_text("x")
    assert (final / "sub" / "f").read_text() == "x"
    assert _names(tmp_path) == ["snap"]


def test_staged_folder_is_removed_on_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError), atomicfile.staged_folder(tmp_path / "snap") as tmp:
        (tmp / "f").write_text("half")
        raise ValueError("stop")
    assert _names(tmp_path) == []


def test_staged_folder_keeps_the_one_finished_first(tmp_path: Path) -> None:
    final = tmp_path / "snap"
    with atomicfile.staged_folder(final) as tmp:
        (tmp / "mine").write_text("x")
        final.mkdir()
        (final / "theirs").write_text("y")  # another process renamed its folder in meanwhile
    assert _names(final) == ["theirs"] and _names(tmp_path) == ["snap"]


def test_staged_folder_fails_when_the_rename_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomicfile.os, "replace", _refusing(13, "Permission denied"))
    with pytest.raises(OSError, match="Permission"), atomicfile.staged_folder(tmp_path / "snap") as tmp:
        (tmp / "f").write_text("x")
    assert _names(tmp_path) == []
