"""One output file (``bench --out``, ``resolve --cases --out``, ``ingest``'s catalog, ``up --state``) or folder
(``plan --emit --out``): asked before the work, a file written whole or not at all.

A command that works for seconds or minutes before it writes asks first whether the file can be written
(:func:`check_out_file`), so a bad path costs nothing; the file itself is written beside its place and renamed
into it (:func:`out_file`), so an error or Ctrl-C mid-way leaves the previous file, or none, never a part.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from launchcard import atomicfile
from launchcard.errors import InputError


def check_out_file(path: Path, *, field: str = "out", what: str = "output file") -> None:
    """InputError (naming the input ``field``) unless a file can be written at ``path`` (its folder made if
    missing), found without leaving anything behind."""
    if path.is_dir():
        raise InputError("is a folder, not a file", where=str(path), field=field,
                         fix=f"name a file, e.g. --{field} results.json" if field == "out" else "name a file")
    _check_creatable(path.parent, path, what, field, "choose a file in a writable folder",
                     lambda near: tempfile.TemporaryFile(dir=near).close())


def check_out_dir(out: Path) -> None:
    """InputError unless :func:`launchcard.emit.write_files` could write into ``out`` (made if missing), found
    without leaving anything behind (``plan --emit --out``)."""
    _check_creatable(out, out, "output folder", "out", "choose a writable folder",
                     lambda near: tempfile.TemporaryDirectory(dir=near).cleanup())


def _check_creatable(folder: Path, where: Path, what: str, field: str, fix: str,
                     probe: Callable[[Path], object]) -> None:
    """The one test of both: the nearest existing folder at or above ``folder`` (where mkdir would start) is a
    folder, and ``probe`` (a real write there, removed at once) succeeds in it."""
    near = folder
    while not near.exists() and near.parent != near:
        near = near.parent
    if not near.is_dir():
        raise InputError(f"cannot create the {what} ({near} is not a folder)", where=str(where), field=field, fix=fix)
    try:
        probe(near)
    except OSError as exc:
        raise InputError(f"cannot create the {what} ({exc.strerror} in {near})", where=str(where), field=field,
                         fix=fix) from None


@contextlib.contextmanager
def out_file(path: Path) -> Iterator[TextIO]:
    """A text file to write ``path``'s content into (:func:`launchcard.atomicfile.replacing`); renamed onto
    ``path`` when the block ends without error, removed otherwise."""
    opened = False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomicfile.replacing(path) as fh:
            opened = True
            yield fh
    except OSError as exc:
        if opened:
            raise InputError(f"cannot write the output file ({exc.strerror})", where=str(path), field="out",
                             fix="choose a file in a writable folder with free space") from None
        raise InputError(f"cannot create the output file ({exc.strerror})", where=str(path), field="out",
                         fix="choose a file in a writable folder") from None
