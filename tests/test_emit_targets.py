"""Target behaviour: secrets, refusals, the Truss preset's flags, the CLI, writing files."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from _emit_helpers import RECIPES, SEED_CONFIG, load_yaml_docs, make_plan, read_script, single_plan
from launchcard.emit import TARGETS, emit, write_files
from launchcard.errors import EmitError, InputError
from launchcard.resolve import Command

GOLDEN = Path(__file__).parent / "golden" / "emit"
SECRET = "hf_NEVER_WRITE_ME_0123456789"


def test_secret_values_never_written() -> None:
    plan = single_plan(["vllm", "serve", "m"], {"HF_TOKEN": SECRET, "WANDB_API_KEY": SECRET + "2", "T": "1"})
    for target in TARGETS:
        files = emit(plan, target)
        assert all(SECRET not in text for text in files.values()), target
    (k8s,) = emit(plan, "kubernetes").values()
    (dep,) = [d for d in load_yaml_docs(k8s) if d["kind"] == "Deployment"]
    env = {e["name"]: e for e in dep["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["HF_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "hf-token", "key": "HF_TOKEN", "optional": True}
    assert env["WANDB_API_KEY"]["valueFrom"]["secretKeyRef"]["key"] == "WANDB_API_KEY"
    words, _ = read_script(emit(plan, "docker")["docker-run.sh"])
    assert words[words.index("HF_TOKEN") - 1:words.index("HF_TOKEN") + 1] == ["-e", "HF_TOKEN"]


def test_truss_refuses_what_it_cannot_express() -> None:
    head = Command(role="head", node_rank=0, argv=("vllm", "serve", "m", "--master-addr", "$HEAD_IP"), env={})
    worker = Command(role="worker", node_rank=1, argv=("vllm", "serve", "m", "--headless"), env={})
    with pytest.raises(EmitError, match="one process on one machine"):
        emit(make_plan([head, worker], deploy_type="multi_node", node_count=2), "truss")
    with pytest.raises(EmitError, match="no instance type"):
        emit(single_plan(["vllm", "serve", "m"], {}, hardware="mi300x", brand="AMD"), "truss")


def test_kubernetes_refuses_workers_that_differ_beyond_node_rank() -> None:
    head = Command(role="head", node_rank=0, argv=("vllm", "serve", "m", "--node-rank", "0"), env={})
    workers = [Command(role="worker", node_rank=r, argv=("vllm", "serve", "m", "--node-rank", str(r), "--headless",
                                                         "--data-parallel-start-rank", str(8 * r)), env={})
               for r in (1, 2)]
    with pytest.raises(EmitError, match="more than --node-rank"):
        emit(make_plan([head, *workers], deploy_type="multi_node", node_count=3), "kubernetes")


@pytest.mark.parametrize("size", ["0", "0Gi", "0.0Ti"])
def test_kubernetes_refuses_a_cache_of_no_storage(size: str) -> None:
    """`--cache-size 0` wrote a claim of storage "0", which the API server refuses (must be greater than zero)."""
    with pytest.raises(InputError, match="Kubernetes refuses a claim of zero storage"):
        emit(single_plan(["vllm", "serve", "m"], {}), "kubernetes", cache_size=size)
    assert "storage: 0.5Gi" in emit(single_plan(["vllm", "serve", "m"], {}), "kubernetes",
                                    cache_size="0.5Gi")["kubernetes.yaml"]


@pytest.mark.parametrize("target", ["shell", "docker", "compose", "kubernetes"])
def test_weights_revision_is_refused_where_nothing_pins_it(target: str) -> None:
    """`--weights-revision` was dropped without a word for every target but truss (as `--cache-size` is not)."""
    with pytest.raises(InputError, match="--weights-revision pins the truss target's weights"):
        emit(single_plan(["vllm", "serve", "m"], {}), target, revision="abc123")
    assert "@abc123" in emit(single_plan(["vllm", "serve", "m"], {}), "truss", revision="abc123")["config.yaml"]


@pytest.mark.parametrize("revision", ["", "a b", "v1..v2", "main@x", "x:y"])
def test_truss_refuses_a_weights_revision_the_hub_cannot_name(revision: str) -> None:
    """`--weights-revision 'a b'` was written as `hf://MODEL@a b`; an empty one silently became `@main`."""
    with pytest.raises(InputError, match="not a weights revision"):
        emit(single_plan(["vllm", "serve", "m"], {}), "truss", revision=revision)


def test_preset_refuses_a_weights_revision_the_hub_cannot_name() -> None:
    from tests.helpers import run_cli

    proc = run_cli("emit", "zai-org/GLM-5.3-Flash", "--corpus", str(RECIPES.parent), "--env", "provider-preset",
                   "-t", "truss", "--weights-revision", "a b")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("launchcard: error: --weights-revision: not a weights revision ('a b')")


def test_unknown_accelerator_and_missing_image() -> None:
    with pytest.raises(EmitError, match="no device mapping"):
        emit(single_plan(["vllm", "serve", "m"], {}, brand="Huawei"), "docker")
    with pytest.raises(EmitError, match="--image"):
        emit(single_plan(["vllm", "serve", "m"], {}, image=None), "compose")
    pinned = "pinned@sha256:" + "ab" * 32  # a truncated digest is refused (tests/test_check_cli.py)
    assert pinned in emit(single_plan(["vllm", "serve", "m"], {}, image=None), "compose", image=pinned)["compose.yaml"]
    with pytest.raises(InputError, match="unknown emit target"):
        emit(single_plan(["vllm", "serve", "m"], {}), "helm")


def test_amd_devices() -> None:
    plan = single_plan(["vllm", "serve", "m"], {}, brand="AMD", hardware="mi300x")
    assert "--device /dev/kfd" in emit(plan, "docker")["docker-run.sh"]
    assert "amd.com/gpu" in emit(plan, "kubernetes")["kubernetes.yaml"]


def _flags(start_command: str) -> dict[str, object]:
    """Serving flags of a start command; dotted flags (--a.b v) merged as the JSON object of --a."""
    words = shlex.split(start_command)[3:]
    out: dict[str, object] = {}
    i = 0
    while i < len(words):
        flag, value = words[i], True
        if i + 1 < len(words) and not words[i + 1].startswith("--"):
            value = words[i + 1]
            i += 1
        i += 1
        if isinstance(value, str) and value[:1] == "{":
            value = json.loads(value)
        if "." in flag:
            base, key = flag.split(".", 1)
            out.setdefault(base, {})[key] = int(value) if str(value).isdigit() else value  # type: ignore[index]
        else:
            out[flag] = value
    return out


# The seed preset comes from a different source revision (Baseten's own preset); these
# are the flags it adds or sets differently from the vLLM recipe (README: "Truss").
SEED_ONLY = {"--max-model-len", "--gpu-memory-utilization", "--max-num-seqs", "--enable-prefix-caching",
             "--limit-mm-per-prompt", "--default-chat-template-kwargs", "--load-format"}
SEED_DIFFERENT = {"--reasoning-parser": ("glm47", "glm45")}


def test_truss_carries_the_seed_presets_serving_flags() -> None:
    (seed,) = load_yaml_docs(SEED_CONFIG.read_text(encoding="utf-8"))
    (ours,) = load_yaml_docs((GOLDEN / "h100-single-node-tp" / "truss" / "config.yaml").read_text())
    seed_flags = _flags(seed["docker_server"]["start_command"])
    our_flags = _flags(ours["docker_server"]["start_command"])
    assert set(seed_flags) - set(our_flags) == SEED_ONLY
    assert set(our_flags) - set(seed_flags) == set()
    for flag in our_flags:
        expected = SEED_DIFFERENT.get(flag, (seed_flags[flag], seed_flags[flag]))
        assert (our_flags[flag], seed_flags[flag]) == expected, flag
    for key in ("resources", "weights", "secrets"):
        assert ours[key] == seed[key], key
    for key in ("readiness_endpoint", "liveness_endpoint", "predict_endpoint", "server_port"):
        assert ours["docker_server"][key] == seed["docker_server"][key]
    assert set(ours) <= set(seed)


def test_truss_says_a_concurrency_no_source_gave_is_assumed() -> None:
    # the seed ties predict_concurrency to its --max-num-seqs 16; a plan without one gets launchcard's 256, said so
    plain = single_plan(["vllm", "serve", "m", "--tensor-parallel-size", "8"], {})
    (text,) = emit(plain, "truss").values()
    (cfg,) = load_yaml_docs(text)
    assert cfg["runtime"]["predict_concurrency"] == 256
    assert "# assumed: runtime.predict_concurrency 256 is launchcard's default, not a source's" in text
    capped = single_plan(["vllm", "serve", "m", "--max-num-seqs", "16"], {})
    (text,) = emit(capped, "truss").values()
    assert load_yaml_docs(text)[0]["runtime"]["predict_concurrency"] == 16 and "assumed" not in text


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "launchcard.cli", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def test_cli_prints_and_writes(tmp_path: Path) -> None:
    base = ["emit", "zai-org/GLM-5.3-Flash", "--recipes", str(RECIPES), "--hardware", "h100",
            "--strategy", "single_node_tp", "--feature", "spec_decoding"]
    res = _cli(*base, "--target", "truss", "--weights-revision", "3f1971b7b5f7a528c9c4ef6212c8785298a8c24a")
    assert res.returncode == 0, res.stderr
    assert "# verdict: ok" in res.stdout  # the CLI adds the plan's verdict to the header
    assert _no_verdict(res.stdout) == (GOLDEN / "h100-single-node-tp" / "truss" / "config.yaml").read_text()
    res = _cli(*base, "--target", "shell", "--out", str(tmp_path / "out"))
    assert res.returncode == 0, res.stderr
    script = tmp_path / "out" / "launch.sh"
    assert _no_verdict(script.read_text()) == (GOLDEN / "h100-single-node-tp" / "shell" / "launch.sh").read_text()
    assert script.stat().st_mode & 0o111


def _no_verdict(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True)
                   if not line.startswith(("# verdict: ", "# finding: ")))


def test_cli_refusal_is_one_line_exit_2(tmp_path: Path) -> None:
    res = _cli("emit", "zai-org/GLM-5.3-Flash", "--recipes", str(RECIPES), "--hardware", "h100",
               "--strategy", "pd_cluster", "--target", "truss", "--out", str(tmp_path / "o"))
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "truss target serves one process" in res.stderr
    assert "Traceback" not in res.stderr and not (tmp_path / "o").exists()


def test_write_files_leaves_no_partial_write(tmp_path: Path) -> None:
    write_files({"a.sh": "echo a\n", "b.yaml": "b: 1\n"}, tmp_path)
    assert (tmp_path / "a.sh").read_text() == "echo a\n" and (tmp_path / "b.yaml").read_text() == "b: 1\n"
    with pytest.raises(EmitError):
        write_files({"ok.txt": "x", "../escape.txt": "y"}, tmp_path)
    assert not (tmp_path / "ok.txt").exists()
    blocker = tmp_path / "dir.txt"
    blocker.mkdir()
    with pytest.raises(InputError):
        write_files({"fine.txt": "x", "dir.txt": "y"}, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.sh", "b.yaml", "dir.txt"]
    assert oct((tmp_path / "a.sh").stat().st_mode & 0o777) == "0o755"
    assert oct((tmp_path / "b.yaml").stat().st_mode & 0o777) == "0o644"


def test_write_files_that_fail_midway_are_one_line_and_change_nothing(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The files go through launchcard.atomicfile.write_files; its OSError is still emit's one line."""
    import os

    (tmp_path / "launch.sh").write_text("old\n")

    def refuse(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(InputError) as err:
        write_files({"launch.sh": "new\n", "compose.yaml": "a: 1\n"}, tmp_path)
    assert err.value.one_line() == (f"{tmp_path}: cannot write the emitted files (No space left on device); "
                                    "choose a writable folder with free space")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["launch.sh"]
    assert (tmp_path / "launch.sh").read_text() == "old\n"


def test_every_file_a_target_writes_is_named_by_its_target_files() -> None:
    """emit.TARGET_FILES (what ``plan --emit --out`` checks before its search) repeats the names each emitter
    writes: a single-unit and a multi-node plan's files all match one of their target's patterns."""
    from fnmatch import fnmatchcase

    from launchcard.emit import TARGET_FILES

    assert set(TARGET_FILES) == set(TARGETS)
    head = Command(role="head", node_rank=0, argv=("vllm", "serve", "m", "--node-rank", "0"), env={})
    worker = Command(role="worker", node_rank=1, argv=("vllm", "serve", "m", "--node-rank", "1", "--headless"),
                     env={})
    plans = (single_plan(["vllm", "serve", "m"], {}), make_plan([head, worker], deploy_type="multi_node",
                                                                node_count=2))
    written: dict[str, set[str]] = {t: set() for t in TARGETS}
    for plan in plans:
        for target in TARGETS:
            try:
                files = emit(plan, target)
            except EmitError:  # a target that cannot express the plan writes nothing
                continue
            written[target] |= set(files)
    for target, names in written.items():
        assert names, target
        for name in names:
            assert any(fnmatchcase(name, p) for p in TARGET_FILES[target]), (target, name, TARGET_FILES[target])
    # the per-unit forms are tried
    assert {"launch-head.sh", "docker-run-head.sh"} <= written["shell"] | written["docker"], written
