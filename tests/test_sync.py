"""`launchcard sync` against local upstream repositories (file:// remotes, several commits), then history ingests.

No network: the upstreams are git repositories built in the test's folder, the Hub is the replay server.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from hf_replay import ReplayServer
from launchcard.snapshot import snapshot_of
from launchcard.store import Catalog
from launchcard.sync import load_config
from sync_repos import commit, config_toml, dynamo_repo, edit, recipes_repo

REPO = Path(__file__).resolve().parents[1]
GLM, OSS, DSV4 = "zai-org/GLM-5.3-Flash", "openai/gpt-oss-120b", "deepseek-ai/DeepSeek-V4-Flash"


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(REPO / ".venv/bin/launchcard"), *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})}, check=False)


@pytest.fixture(scope="module")
def upstreams(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], Path]:
    root = tmp_path_factory.mktemp("upstream")
    recipes, shas = recipes_repo(root)
    dynamo, _ = dynamo_repo(root)
    cfg = config_toml(root / "sync.toml", {"vllm-recipes": recipes, "dynamo": dynamo})
    return recipes, shas, cfg


def _sync(cache: Path, cfg: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return _run("sync", "--cache", str(cache), "--config", str(cfg), "--source", "vllm-recipes", "--source", "dynamo",
                "--quiet", *extra)


def test_sync_then_history_one_capture_per_changing_commit(upstreams, tmp_path):
    _, (c1, c2, _c3, c4), cfg = upstreams
    cache, catalog = tmp_path / "cache", tmp_path / "cat.sqlite3"
    out = _sync(cache, cfg)
    assert out.returncode == 0, out.stderr
    assert f"vllm-recipes: {c4[:12]} (2026-01-04T12:30:00+00:00) (new)" in out.stdout
    snap = snapshot_of(cache / "corpus" / "vllm-recipes")
    assert snap is not None and snap.commit == c4 and snap.root.name == c4
    assert not (snap.root / "README.md").exists()  # only the paths launchcard reads

    out = _run("ingest", "--cache", str(cache), "--catalog", str(catalog), "--revisions", f"{c1}..", "--quiet")
    assert out.returncode == 0, out.stderr
    assert "walked 3 commit(s) of vllm-recipes" in out.stdout  # c1 (the base), c2, c4; c3 touched only README
    with Catalog(catalog) as cat:
        commits = {m: [(c.commit_id, c.committed_at) for c in cat.captures(m)] for m in (GLM, OSS, DSV4)}
        assert commits[GLM] == [(c1, "2026-01-01T12:00:00+00:00"), (c2, "2026-01-02T12:00:00+00:00")]
        assert commits[OSS] == [(c1, "2026-01-01T12:00:00+00:00"), (c4, "2026-01-04T12:30:00+00:00")]
        assert commits[DSV4] == [(c1, "2026-01-01T12:00:00+00:00")]
        card = cat.latest(GLM)
        recipe = next(r for r in card.evidence if r.kind == "vllm-recipes")
        assert recipe.revision == c2 and recipe.committed_at is not None and recipe.committed_at.day == 2
        assert recipe.url == f"https://github.com/vllm-project/recipes/blob/{c2}/models/{GLM}.yaml"
        dyn = next(r for r in card.evidence if r.kind == "dynamo")
        assert dyn.url and dyn.url.startswith("https://github.com/ai-dynamo/dynamo/blob/") and "/recipes/" in dyn.url
        assert all("blob/HEAD" not in (f.evidence.url or "") for f in card.facts if f.evidence)
        before = cat.count()
        checked = cat.checked_at(GLM)[GLM]

    diff = _run("diff", GLM, "--catalog", str(catalog))
    assert diff.returncode == 0, diff.stderr
    assert f"commit {c2[:12]} of 2026-01-02T12:00:00+00:00" in diff.stdout
    assert "num_speculative_tokens" in diff.stdout and "5 -> 3" in diff.stdout

    # walking again, or ingesting the synced head, adds nothing; checked_at moves on
    again = _run("ingest", "--cache", str(cache), "--catalog", str(catalog), "--revisions", f"{c1}..{c4}", "--quiet")
    assert again.returncode == 0 and "stored 0 capture(s)" in again.stdout, again.stdout + again.stderr
    head = _run("ingest", "--cache", str(cache), "--catalog", str(catalog), "--quiet")
    assert head.returncode == 0 and "stored 0 card(s)" in head.stdout, head.stdout + head.stderr
    with Catalog(catalog) as cat:
        assert cat.count() == before and cat.checked_at(GLM)[GLM] >= checked


def test_since_walks_commits_after_the_date(upstreams, tmp_path):
    _, (_c1, c2, _c3, c4), cfg = upstreams
    cache, catalog = tmp_path / "cache", tmp_path / "cat.sqlite3"
    assert _sync(cache, cfg).returncode == 0
    out = _run("ingest", "--cache", str(cache), "--catalog", str(catalog), "--since", "2026-01-01T18:00:00Z",
               "--quiet")
    assert out.returncode == 0, out.stderr
    with Catalog(catalog) as cat:
        assert [c.commit_id for c in cat.captures(GLM)] == [c2]  # the first walked commit builds every card
        assert [c.commit_id for c in cat.captures(OSS)] == [c2, c4]


def test_failed_remote_keeps_previous_snapshot_and_catalog(upstreams, tmp_path):
    _recipes, shas, cfg = upstreams
    cache, catalog = tmp_path / "cache", tmp_path / "cat.sqlite3"
    assert _sync(cache, cfg).returncode == 0
    assert _run("ingest", "--cache", str(cache), "--catalog", str(catalog), "--quiet").returncode == 0
    link = os.readlink(cache / "corpus" / "vllm-recipes")
    digest = hashlib.sha256(catalog.read_bytes()).hexdigest()
    out = _sync(cache, cfg, "--remote", f"vllm-recipes=file://{tmp_path}/gone")
    assert out.returncode == 1
    failed = [x for x in out.stderr.splitlines() if x.startswith("launchcard: sync failed:")]
    assert len(failed) == 1 and "vllm-recipes" in failed[0] and "Traceback" not in out.stderr
    assert "dynamo:" in out.stdout and "1 failed, previous snapshot kept" in out.stdout  # the others went on
    assert os.readlink(cache / "corpus" / "vllm-recipes") == link
    assert hashlib.sha256(catalog.read_bytes()).hexdigest() == digest
    state = json.loads((cache / "state.json").read_text())
    assert state["vllm-recipes"]["ok"] is False and state["vllm-recipes"]["commit"] == shas[-1]


def test_pinned_revision_offline_and_new_commits(upstreams, tmp_path):
    recipes, (_c1, c2, _c3, c4), cfg = upstreams
    cache = tmp_path / "cache"
    missing = _sync(cache, cfg, "--offline")
    assert missing.returncode == 1 and "not in the cache" in missing.stderr
    assert _sync(cache, cfg, "--revision", f"vllm-recipes={c2}").returncode == 0
    assert snapshot_of(cache / "corpus" / "vllm-recipes").commit == c2  # type: ignore[union-attr]
    out = _sync(cache, cfg, "--offline")  # no pin: the last fetched upstream head, from the cache only
    assert out.returncode == 0, out.stderr
    assert snapshot_of(cache / "corpus" / "vllm-recipes").commit == c4  # type: ignore[union-attr]
    clone = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(recipes), str(clone)], check=True)
    edit(clone / f"models/{DSV4}.yaml", "date_updated:", "date_updated:  ")
    c5 = commit(clone, "c5", "2026-01-05T12:00:00+00:00")
    up = _sync(cache, load_path(cfg, "vllm-recipes", clone))
    assert up.returncode == 0 and c5[:12] in up.stdout
    assert snapshot_of(cache / "corpus" / "vllm-recipes").commit == c5  # type: ignore[union-attr]
    kept = sorted(p.name for p in (cache / "snapshots" / "vllm-recipes").iterdir())
    assert kept == sorted([c4, c5])  # the current snapshot and the one before it


def load_path(cfg: Path, name: str, remote: Path) -> Path:
    text = cfg.read_text()
    out = cfg.with_name(f"{cfg.stem}-{remote.name}.toml")
    lines = text.split(f"[git.{name}]\n", 1)
    rest = lines[1].split("\n", 1)[1]
    out.write_text(f'{lines[0]}[git.{name}]\nremote = "file://{remote}"\n{rest}')
    return out


def test_hub_sync_through_huggingface_hub(tmp_path):
    cache = tmp_path / "cache"
    cfg = config_toml(tmp_path / "sync.toml", {}, hf_models=("zai-org/GLM-5.3-Flash", "err/http-500"))
    with ReplayServer() as server:
        out = _run("sync", "--cache", str(cache), "--config", str(cfg), "--source", "hf", "--quiet",
                   env={"HF_ENDPOINT": server.url, "HF_TOKEN": "hf_secret_never_stored"})
    assert out.returncode == 1, out.stdout + out.stderr  # one model failed: reported, the other kept
    assert [x for x in out.stderr.splitlines() if "sync failed" in x] and "HTTP 500" in out.stderr
    config = cache / "corpus" / "hf" / "zai-org" / "GLM-5.3-Flash" / "config.json"
    assert config.is_file()
    snap = snapshot_of(cache / "corpus" / "hf")
    assert snap is not None
    at = snap.file("zai-org/GLM-5.3-Flash/config.json")
    assert at.revision == "46a050bec13002ad29ee795c16e61cf4fa3c4a9c" and at.committed_at is not None
    assert at.url == f"https://huggingface.co/zai-org/GLM-5.3-Flash/blob/{at.revision}/config.json"
    for f in cache.rglob("*"):
        if f.is_file():
            assert b"hf_secret_never_stored" not in f.read_bytes(), f


def test_config_file_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[git.vllm-recipes]\nremtoe = "x"\n')
    out = _run("sync", "--cache", str(tmp_path / "c"), "--config", str(bad), "--quiet")
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1, out.stderr
    assert "git.vllm-recipes.remtoe" in out.stderr and "unknown setting" in out.stderr
    out = _run("sync", "--cache", str(tmp_path / "c"), "--revision", "nope=abc", "--quiet")
    assert out.returncode == 2 and "unknown git source" in out.stderr
    out = _run("ingest", "--corpus", str(tmp_path), "--since", "2026-01-01", "--quiet")
    assert out.returncode == 2 and "not a synced corpus" in out.stderr
    cfg = load_config(None, revisions={"vllm-recipes": "abc"})
    assert next(g for g in cfg.git if g.name == "vllm-recipes").revision == "abc"


def test_upstream_layouts_are_a_corpus(tmp_path):
    from sync_repos import sglang_repo, truss_repo

    recipes, (*_, c4) = recipes_repo(tmp_path / "up")
    sglang, (s1,) = sglang_repo(tmp_path / "up")
    truss, (t1,) = truss_repo(tmp_path / "up")
    cfg = config_toml(tmp_path / "sync.toml", {"vllm-recipes": recipes, "sglang-cookbook": sglang,
                                               "truss-examples": truss})
    cache = tmp_path / "cache"
    out = _run("sync", "--cache", str(cache), "--config", str(cfg), "--source", "vllm-recipes", "--source",
               "sglang-cookbook", "--source", "truss-examples", "--quiet")
    assert out.returncode == 0, out.stderr
    assert not (cache / "snapshots" / "sglang-cookbook" / s1 / "python").exists()  # only the docs paths
    out = _run("card", OSS, "--corpus", str(cache / "corpus"), "--json")
    assert out.returncode == 0, out.stderr
    card = json.loads(out.stdout)
    refs = {r["kind"]: r for r in card["evidence"]}
    assert refs["sglang-cookbook"]["url"] == (
        f"https://github.com/sgl-project/sglang/blob/{s1}/docs/cookbook/autoregressive/OpenAI/GPT-OSS.mdx")
    assert refs["sglang-cookbook"]["committed_at"].startswith("2026-01-01T09:00:00")
    assert refs["provider-preset"]["url"] == (
        f"https://github.com/basetenlabs/truss-examples/blob/{t1}/openai/gpt-oss-120b/config.yaml")
    assert refs["vllm-recipes"]["revision"] == c4
    envs = [e for e in card["envs"] if e["source"]["kind"] == "sglang-cookbook"]
    assert envs and all(e["evidence"]["url"].split("#L")[0].endswith("OpenAI/GPT-OSS.mdx") for e in envs)
    glm = json.loads(_run("card", GLM, "--corpus", str(cache / "corpus"), "--json").stdout)
    assert any(e["source"]["kind"] == "sglang-cookbook" for e in glm["envs"])  # page found under GLM/


@pytest.mark.parametrize("option", ["--revision", "--remote"])
def test_an_unknown_source_of_an_option_names_the_option(tmp_path, option):
    """`sync --revision nope=abc` said "--config revision nope: unknown git source", naming an option not typed."""
    from helpers import run_cli

    out = run_cli("sync", "--cache", str(tmp_path / "c"), option, "nope=abc", "--offline", "--quiet")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (f"launchcard: error: {option} nope=abc: unknown git source 'nope'; known: dynamo, "
                          "sglang-cookbook, truss-examples, vllm-recipes\n")


@pytest.mark.parametrize("rev", ["a b", "main:refs/heads/x", "", "x..y"])
def test_a_revision_git_could_not_name_is_bad_input_from_the_option_or_the_config(tmp_path, rev):
    """qa12: `sync --revision vllm-recipes='a b'` (or `main:x`, or a config's revision = "a b") went to git as the
    refspec +REV:ref and failed as a sync failure (exit 1); an empty one was the remote's HEAD, said nowhere."""
    from helpers import run_cli

    if rev:  # (the option's SOURCE= with nothing after it is refused by its own shape)
        out = run_cli("sync", "--cache", str(tmp_path / "c"), "--revision", f"vllm-recipes={rev}", "--offline",
                      "--quiet")
        assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1, out.stderr
        assert out.stderr.startswith(f"launchcard: error: --revision vllm-recipes={rev}: not a git revision ({rev!r})")
    cfg = tmp_path / "sync.toml"
    cfg.write_text(f'[git.vllm-recipes]\nrevision = "{rev}"\n')
    out = run_cli("sync", "--cache", str(tmp_path / "c"), "--config", str(cfg), "--offline", "--quiet")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert f"git.vllm-recipes.revision: not a git revision ({rev!r})" in out.stderr
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("under", ["", "sub"])
def test_a_cache_that_is_a_file_is_bad_input(tmp_path, under):
    """`sync --cache FILE` was "internal error: FileExistsError" (NotADirectoryError under a file)."""
    from helpers import run_cli

    (tmp_path / "f").write_text("x")
    cache = tmp_path / "f" / under if under else tmp_path / "f"
    out = run_cli("sync", "--cache", str(cache), "--offline", "--quiet")
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1
    assert out.stderr.startswith(f"launchcard: error: --cache {cache}: cannot use the cache folder (")


def test_since_a_date_walks_from_its_midnight_and_refuses_what_is_no_date(upstreams, tmp_path):
    """git's approxidate reads `--since 2026-01-01` at the current time of day (after 12:00 UTC it skipped c1,
    made that day at 12:00) and `--since notadate` as now (0 commits, exit 0)."""
    from helpers import run_cli

    cache, catalog = tmp_path / "cache", tmp_path / "cat.sqlite3"
    assert _sync(cache, upstreams[2]).returncode == 0
    for bad in ("notadate", "2026-13-45"):
        out = run_cli("ingest", "--cache", str(cache), "--catalog", str(catalog), "--since", bad, "--quiet")
        assert out.returncode == 2 and out.stderr == (
            f"launchcard: error: --since: not a date ({bad!r}); write an ISO date (2026-09-01, from its midnight "
            "UTC) or time (2026-09-01T18:00:00Z)\n")
    out = run_cli("ingest", "--cache", str(cache), "--catalog", str(catalog), "--since", "2026-01-01", "--quiet")
    assert out.returncode == 0, out.stderr
    with Catalog(catalog) as cat:
        assert next(c.commit_id for c in cat.captures(GLM)) == upstreams[1][0]
    from launchcard.sync._history import since_time

    assert since_time("2026-01-01") == "2026-01-01T00:00:00+00:00"
    assert since_time("2026-01-01T18:00:00Z") == "2026-01-01T18:00:00+00:00"
    assert since_time("2026-01-01T18:00:00") == "2026-01-01T18:00:00+00:00"
