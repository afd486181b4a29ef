"""Plain ``git`` subprocesses over a bare, blobless partial clone.

Why the git CLI and not dulwich: partial clone (``--filter=blob:none``, blobs
fetched only for the files checked out), lazy fetches and every transport and
credential helper are the git CLI's; dulwich has no partial clone and is much
slower on large histories (sgl-project/sglang).  Every call has a timeout, no
terminal prompt, and a failure becomes one :class:`SyncError` line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from launchcard.errors import SyncError

UPSTREAM_REF = "refs/launchcard/upstream"
PINNED_REF = "refs/launchcard/pinned"
_SHA = re.compile(r"^[0-9a-f]{40}$")


def _env() -> dict[str, str]:
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1"}


def git(args: Sequence[str], *, git_dir: Path | None = None, where: str, timeout: float = 600.0,
        stdin: bytes | None = None, env: dict[str, str] | None = None, work_tree: Path | None = None) -> bytes:
    cmd = ["git", *(["--git-dir", str(git_dir)] if git_dir else []),
           *(["--work-tree", str(work_tree)] if work_tree else []), *args]
    try:
        out = subprocess.run(cmd, input=stdin, capture_output=True, timeout=timeout, env=env or _env(), check=False)
    except FileNotFoundError as exc:
        raise SyncError("git is not installed", where=where, fix="install git (2.25 or newer)") from exc
    except subprocess.TimeoutExpired as exc:
        raise SyncError(f"git {args[0]} took longer than {timeout:.0f} s", where=where,
                        fix="retry (sync resumes), or pin a revision") from exc
    if out.returncode != 0:
        lines = [x for x in out.stderr.decode("utf-8", "replace").splitlines() if x.strip()]
        msg = next((x for x in reversed(lines) if x.startswith(("fatal:", "error:"))), lines[-1] if lines else "")
        raise SyncError(f"git {args[0]} failed ({msg.strip() or f'exit {out.returncode}'})", where=where,
                        fix="check the remote URL, the revision and the network (or use --offline)")
    return out.stdout


def ensure_clone(repo: Path, remote: str, filter_: str | None, *, where: str) -> None:
    """A bare partial clone at ``repo``; an interrupted clone (``repo.tmp``) is started again."""
    if (repo / "HEAD").is_file():
        git(["remote", "set-url", "origin", remote], git_dir=repo, where=where)
        return
    tmp = repo.with_name(repo.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    repo.parent.mkdir(parents=True, exist_ok=True)
    git(["clone", "--bare", "--quiet", "--no-tags", *([f"--filter={filter_}"] if filter_ else []), remote, str(tmp)],
        where=where)
    git(["update-ref", UPSTREAM_REF, "HEAD"], git_dir=tmp, where=where)  # the remote's head as cloned
    os.replace(tmp, repo)


def fetch(repo: Path, revision: str | None, filter_: str | None, *, where: str) -> str:
    """Fetch ``revision`` (None: the remote's HEAD, kept as :data:`UPSTREAM_REF`); its commit id.

    A pinned commit already in the cache is not fetched again; a pinned branch or tag is fetched into
    :data:`PINNED_REF`, so the upstream head stays what was last fetched as such.
    """
    flt = [f"--filter={filter_}"] if filter_ else []
    if revision and _SHA.match(revision):
        if not has_commit(repo, revision):
            git(["fetch", "--quiet", "--no-tags", *flt, "origin", revision], git_dir=repo, where=where)
        return resolve(repo, revision, where=where)
    ref = PINNED_REF if revision else UPSTREAM_REF
    git(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", *flt, "origin", f"+{revision or 'HEAD'}:{ref}"],
        git_dir=repo, where=where)
    return resolve(repo, ref, where=where)


def cached(repo: Path, revision: str | None, *, where: str) -> str:
    """The commit ``revision`` names in the cache alone (offline)."""
    rev = revision if revision and _SHA.match(revision) else (PINNED_REF if revision else UPSTREAM_REF)
    try:
        return resolve(repo, rev, where=where)
    except SyncError as exc:
        raise SyncError(f"revision {revision or 'HEAD'!r} is not in the cache", where=where,
                        fix="run sync without --offline first") from exc


def has_commit(repo: Path, rev: str) -> bool:
    try:
        git(["cat-file", "-e", f"{rev}^{{commit}}"], git_dir=repo, where=str(repo))
    except SyncError:
        return False
    return True


def resolve(repo: Path, rev: str, *, where: str) -> str:
    return git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], git_dir=repo, where=where).decode().strip()


def commit_time(repo: Path, commit: str, *, where: str) -> datetime:
    text = git(["show", "-s", "--format=%cI", commit], git_dir=repo, where=where).decode().strip()
    return datetime.fromisoformat(text).astimezone(UTC)


def pathspecs(patterns: Sequence[str]) -> list[str]:
    return [f":(glob){p}" if any(c in p for c in "*?[") else p for p in patterns]


def _glob_re(pattern: str) -> re.Pattern[str]:
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    if not any(c in pattern for c in "*?"):
        out += "(?:/.*)?"  # a plain path: the file, or everything in the folder
    return re.compile(out + r"\Z")


def list_files(repo: Path, commit: str, patterns: Sequence[str], *, where: str) -> list[str]:
    """Files of ``commit`` matching ``patterns`` (git-style globs)."""
    names = git(["ls-tree", "-r", "-z", "--name-only", commit], git_dir=repo, where=where).decode().split("\0")
    rules = [_glob_re(p.strip("/")) for p in patterns]
    return [n for n in names if n and any(r.match(n) for r in rules)]


def checkout(repo: Path, commit: str, files: Sequence[str], dest: Path, *, where: str) -> None:
    """Write ``files`` as of ``commit`` under ``dest`` (missing blobs are fetched in one batch)."""
    dest.mkdir(parents=True, exist_ok=True)
    index = dest.parent.resolve() / f".{dest.name}.index"
    try:
        git(["checkout", commit, "--pathspec-from-file=-", "--pathspec-file-nul"], work_tree=dest,
            git_dir=repo, where=where, stdin="\0".join(f":(literal){f}" for f in files).encode(),
            env={**_env(), "GIT_INDEX_FILE": str(index)})
    finally:
        index.unlink(missing_ok=True)


def commits(repo: Path, spec: Sequence[str], patterns: Sequence[str], *, where: str) -> list[tuple[str, datetime]]:
    """Commits of ``spec`` (rev-list arguments) that changed ``patterns``, oldest first."""
    out = git(["log", "--reverse", "--format=%H %cI", *spec, "--", *pathspecs(patterns)], git_dir=repo,
              where=where).decode()
    return [(h, datetime.fromisoformat(t).astimezone(UTC)) for h, t in (ln.split(" ", 1) for ln in out.splitlines())]


def changed(repo: Path, old: str, new: str, patterns: Sequence[str], *, where: str) -> list[str]:
    out = git(["diff-tree", "-r", "-z", "--name-only", "--no-commit-id", old, new, "--", *pathspecs(patterns)],
              git_dir=repo, where=where).decode()
    return [n for n in out.split("\0") if n]
