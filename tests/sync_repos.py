"""Local upstream git repositories with several commits, for sync/history tests (file:// remotes, no network).

The files come from ../shared/corpus and are written into a temporary folder only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
MODELS = ("zai-org/GLM-5.3-Flash", "openai/gpt-oss-120b", "deepseek-ai/DeepSeek-V4-Flash")


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True)
    return out.stdout.strip()


def commit(repo: Path, message: str, date: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, date=date)
    return git(repo, "rev-parse", "HEAD")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def recipes_repo(root: Path) -> tuple[Path, list[str]]:
    """A recipes repository: c1 three models, c2 GLM-5.3-Flash's MTP tokens 5 -> 3, c3 only a README (outside
    the synced paths), c4 gpt-oss-120b's date; commit times 2026-01-0N 12:00 UTC."""
    repo = root / "recipes"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "uploadpack.allowFilter", "true")
    git(repo, "config", "uploadpack.allowAnySHA1InWant", "true")
    src = CORPUS / "vllm-recipes"
    for name in ("strategies", "kv_store"):
        shutil.copytree(src / name, repo / name)
    for name in ("taxonomy.yaml", "platforms.yaml"):
        shutil.copy(src / name, repo / name)
    for model in MODELS:
        (repo / "models" / model).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src / "models" / f"{model}.yaml", repo / "models" / f"{model}.yaml")
    (repo / "README.md").write_text("recipes\n")
    shas = [commit(repo, "c1: three recipes", "2026-01-01T12:00:00+00:00")]
    edit(repo / "models/zai-org/GLM-5.3-Flash.yaml", '"num_speculative_tokens":5}', '"num_speculative_tokens":3}')
    shas.append(commit(repo, "c2: GLM MTP 3 tokens", "2026-01-02T12:00:00+00:00"))
    (repo / "README.md").write_text("recipes, more words\n")
    shas.append(commit(repo, "c3: README only", "2026-01-03T12:00:00+00:00"))
    edit(repo / "models/openai/gpt-oss-120b.yaml", "date_updated: 2026-05-10", "date_updated: 2026-06-01")
    shas.append(commit(repo, "c4: gpt-oss date", "2026-01-04T14:30:00+02:00"))
    return repo, shas


def dynamo_repo(root: Path) -> tuple[Path, list[str]]:
    """A dynamo repository with the corpus's recipes under recipes/ and one commit."""
    repo = root / "dynamo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    shutil.copytree(CORPUS / "dynamo", repo / "recipes")
    (repo / "src.py").write_text("x = 1\n")
    return repo, [commit(repo, "d1", "2026-01-01T10:00:00+00:00")]


def config_toml(path: Path, remotes: dict[str, Path], hf_models: tuple[str, ...] = ()) -> Path:
    lines = [f'[git.{name}]\nremote = "file://{repo}"\n' for name, repo in remotes.items()]
    lines.append("[hub]\nmodels = [" + ", ".join(f'"{m}"' for m in hf_models) + "]\n")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def sglang_repo(root: Path) -> tuple[Path, list[str]]:
    """sgl-project/sglang's layout: cookbook pages by family under docs/cookbook/autoregressive, code elsewhere."""
    repo = root / "sglang"
    pages = repo / "docs" / "cookbook" / "autoregressive"
    (pages / "GLM").mkdir(parents=True)
    (pages / "OpenAI").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    shutil.copy(CORPUS / "sglang-cookbook" / "GLM-5.3-Flash" / "GLM-5.3-Flash.mdx", pages / "GLM")
    shutil.copy(CORPUS / "sglang-cookbook" / "gpt-oss-120b" / "GPT-OSS.mdx", pages / "OpenAI")
    (repo / "python").mkdir()
    (repo / "python" / "server.py").write_text("x = 1\n")
    return repo, [commit(repo, "s1", "2026-01-01T09:00:00+00:00")]


def truss_repo(root: Path) -> tuple[Path, list[str]]:
    """basetenlabs/truss-examples' layout: one folder per example, each with a config.yaml."""
    repo = root / "truss-examples"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    shutil.copytree(CORPUS / "providers" / "baseten" / "truss-examples" / "openai", repo / "openai")
    return repo, [commit(repo, "t1", "2026-01-01T08:00:00+00:00")]
