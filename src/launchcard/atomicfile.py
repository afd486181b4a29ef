"""The one write-then-rename of launchcard: a file, a set of files in one folder, or a folder, whole or not at all.

A file is written to a temporary file beside it (same folder, so the rename never crosses a filesystem), flushed
and fsynced, then renamed onto its path with :func:`os.replace`: a reader sees the old file or the new one, never
a part.  On any failure (an ``OSError``, an exception in the caller's block, a Ctrl-C) the temporary is removed
and the old file is left as it was.  The new file's permissions are those a plain ``open(path, "w")`` gives: the
old file's mode when one is replaced, else 0o666 less the umask (the kernel applies it, as for any new file);
``mode=`` sets them instead.

Standard library only, at the bottom layer, so that every package may use it.  Errors are ``OSError``; each
caller turns them into its own one-line message (the path, the rule, the fix).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import BinaryIO, TextIO

__all__ = ["replacing", "staged_folder", "write_bytes", "write_files", "write_text"]

StrPath = str | os.PathLike[str]


def _temp_name(path: Path) -> Path:
    """A name beside ``path``, hidden (a leading dot: folder walks skip it) and unique enough to retry on."""
    return path.with_name(f".{path.name}.{os.urandom(4).hex()}.tmp")


def _create(path: Path, mode: int | None) -> tuple[int, Path]:
    """A new temporary file beside ``path`` (open for writing) with the permissions the final file is to have."""
    if mode is None:
        with contextlib.suppress(OSError):
            st = os.stat(path)
            if stat.S_ISREG(st.st_mode):
                mode = stat.S_IMODE(st.st_mode)  # a write over a file keeps its mode
    for _ in range(100):
        tmp = _temp_name(path)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        except FileExistsError:
            continue
        try:
            if mode is not None:
                os.fchmod(fd, mode)
        except BaseException:
            os.close(fd)
            _discard(tmp)
            raise
        return fd, tmp
    raise FileExistsError(f"no free temporary name beside {path}")


def _discard(tmp: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


@contextlib.contextmanager
def _replacing_binary(path: Path, mode: int | None, durable: bool) -> Iterator[BinaryIO]:
    fd, tmp = _create(path, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        _discard(tmp)
        raise


@contextlib.contextmanager
def replacing(path: StrPath, *, mode: int | None = None, durable: bool = True) -> Iterator[TextIO]:
    """A text file (UTF-8, ``\\n`` line ends) to write ``path``'s new content into; renamed onto ``path`` when the
    block ends without error, removed otherwise.  ``durable=False`` skips the fsync (a cache, whose lost entry is
    only built again)."""
    with _replacing_binary(Path(path), mode, durable) as raw, \
            open(raw.fileno(), "w", encoding="utf-8", newline="\n", closefd=False) as fh:
        yield fh


def write_bytes(path: StrPath, data: bytes, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace ``path`` with ``data``, whole or not at all (see :func:`replacing`)."""
    with _replacing_binary(Path(path), mode, durable) as fh:
        fh.write(data)


def write_text(path: StrPath, text: str, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace ``path`` with ``text`` (UTF-8, line ends as written), whole or not at all."""
    write_bytes(path, text.encode("utf-8"), mode=mode, durable=durable)


def write_files(folder: StrPath, files: Mapping[str, str | bytes], *,
                mode: Callable[[str], int | None] | None = None) -> list[Path]:
    """Write each ``name: content`` (text as UTF-8) into ``folder`` (which must exist): all to temporaries first,
    then each renamed into place; on any error before the renames every temporary is removed and no file there
    has changed.  ``mode(name)`` gives a file's permissions (None: as :func:`replacing`).  The paths, in order.

    Names must be plain file names; a name that is a folder there fails the rename after the others (check that
    first where it matters).
    """
    out = Path(folder)
    staged: list[tuple[Path, Path]] = []
    try:
        for name, content in files.items():
            final = out / name
            fd, tmp = _create(final, mode(name) if mode else None)
            staged.append((tmp, final))
            with os.fdopen(fd, "wb") as fh:
                fh.write(content.encode("utf-8") if isinstance(content, str) else content)
                fh.flush()
                os.fsync(fh.fileno())
        for tmp, final in staged:
            os.replace(tmp, final)
    except BaseException:
        for tmp, _ in staged:
            _discard(tmp)  # the ones renamed already are gone
        raise
    return [final for _, final in staged]


@contextlib.contextmanager
def staged_folder(final: StrPath) -> Iterator[Path]:
    """A new empty folder beside ``final`` to fill; renamed to ``final`` when the block ends without error,
    removed otherwise.  When a folder ``final`` that is not empty exists by then (another process finished it
    first), theirs is kept and this one removed.  The parent folder must exist."""
    dest = Path(final)
    for _ in range(100):
        tmp = _temp_name(dest)
        try:
            tmp.mkdir()
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"no free temporary name beside {dest}")
    try:
        yield tmp
        try:
            os.replace(tmp, dest)  # over an empty folder too
        except OSError:
            if not dest.is_dir():  # not a lost race: a real failure
                raise
    finally:
        if tmp.exists():
            import shutil  # only here: the file writers stay cheap to import

            shutil.rmtree(tmp, ignore_errors=True)
