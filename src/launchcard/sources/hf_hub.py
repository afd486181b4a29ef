"""Hugging Face: the Hub API (live, through ``huggingface_hub``) and stored config.json files.

``fetch_hub`` asks the Hub for model info with file metadata (sizes of the
weight files), the safetensors parameter counts the API reports, and
``config.json``; ``HF_ENDPOINT`` (or ``endpoint=``) chooses the server, so
tests replay recorded responses over real HTTP.  ``HfConfigFile`` reads a
``config.json`` kept in the corpus (no network).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from launchcard.card import Checkpoint, Fact, HfInfo
from launchcard.errors import SourceError
from launchcard.sources._base import Adapter, Extract, ModelExtract, ReadOptions, SourceDoc, fact, find_line

# Any in this module: Hub API payloads and config.json (JSON values of every type).

GIB = 1024**3


def checkpoint_format(config: dict[str, Any]) -> str | None:
    """Weight format from the checkpoint's own quantization config (never assumed)."""
    qc = config.get("quantization_config") or (config.get("text_config") or {}).get("quantization_config")
    if isinstance(qc, dict):
        method = str(qc.get("quant_method") or "").lower()
        algo = str(qc.get("quant_algo") or "").lower()
        if "nvfp4" in algo or method == "modelopt_fp4":
            return "nvfp4"
        if method == "compressed-tensors":
            for group in (qc.get("config_groups") or {}).values():
                w = (group or {}).get("weights") or {}
                if w.get("num_bits") and w.get("type"):
                    return f"{w['type']}{w['num_bits']}"
            return "compressed-tensors"
        if method:
            return method
    dtype = config.get("torch_dtype") or config.get("dtype") or (config.get("text_config") or {}).get("dtype") \
        or (config.get("text_config") or {}).get("torch_dtype")
    return {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(str(dtype), dtype)


def config_facts(doc: SourceDoc, config: dict[str, Any]) -> list[Fact]:
    lines = doc.lines
    text = config.get("text_config") or {}
    out: list[Fact] = []
    arch = (config.get("architectures") or [None])[0]
    if arch:
        out.append(fact(doc, "architecture", arch, find_line(lines, arch)))
    for key in ("max_position_embeddings",):
        value = config.get(key) or text.get(key)
        if value:
            out.append(fact(doc, "context_tokens", int(value), find_line(lines, f'"{key}"'), unit="tokens"))
    experts = config.get("n_routed_experts") or config.get("num_local_experts") or text.get("n_routed_experts")
    if experts:
        out.append(fact(doc, "routed_experts", int(experts), find_line(lines, "experts\"")))
    fmt = checkpoint_format(config)
    if fmt:
        out.append(fact(doc, "checkpoint_format", fmt, find_line(lines, "quant_method") or find_line(lines, "dtype")))
    return out


class HfConfigFile(Adapter):
    """What the corpus keeps from the Hub, offline: ``hf/ORG/NAME/config.json`` and, when captured, the Hub API's
    model info as ``hf/ORG/NAME/model_info.json`` (the body of ``GET /api/models/ORG/NAME?blobs=true``)."""

    kind = "hf-config"
    folder = "hf"
    defines_models = True  # a stored config.json is a model of its own

    def files(self, root: Path) -> Iterable[Path]:
        return sorted([*root.glob("*/*/config.json"), *root.glob("*/*/model_info.json")])

    def extract(self, doc: SourceDoc) -> Extract:
        name = Path(doc.path).name
        try:
            data = json.loads(doc.text)
        except ValueError as exc:
            raise doc.error(f"{name} is not valid JSON ({exc})", fix=f"store the complete {name}") from exc
        if not isinstance(data, dict):
            raise doc.error(f"{name} is not a JSON object", fix=f"store the complete {name}")
        parts = Path(doc.path).parts
        repo = f"{parts[-3]}/{parts[-2]}"
        if name == "model_info.json":
            return _model_info_extract(doc, repo, data)
        fmt = checkpoint_format(data)
        ckpt = Checkpoint(name=repo, repo=repo, format=fmt, notes="format from config.json quantization_config")
        arch = (data.get("architectures") or [None])[0]
        hf = HfInfo(repo=repo, architecture=str(arch) if arch else None, modality=_modality(data))
        return Extract(doc=doc.ref(), models=(repo,), facts=tuple(config_facts(doc, data)), checkpoints=(ckpt,),
                       hf=hf, config=data)


def _modality(config: dict[str, Any]) -> tuple[str, ...]:
    """The Hub's task tag a config implies: a vision tower means image-text-to-text."""
    if any(k in config for k in ("vision_config", "vision_tower", "image_token_id", "image_token_index")):
        return ("image-text-to-text",)
    return ("text-generation",) if config.get("architectures") else ()


def _model_info_extract(doc: SourceDoc, repo: str, info: dict[str, Any]) -> Extract:
    """A captured Hub API model-info response: the same fields a live ``--hub`` capture fills."""
    sha = info.get("sha")
    if not isinstance(sha, str) or not sha:
        raise doc.error("model_info.json has no 'sha' (revision)", fix="store the complete API response")
    siblings = info.get("siblings")
    if not isinstance(siblings, list):
        raise doc.error("model_info.json has no 'siblings' (file list)",
                        fix="capture it with files metadata (GET /api/models/ORG/NAME?blobs=true)")
    weights = [s for s in siblings if isinstance(s, dict) and _is_weight(str(s.get("rfilename", "")))]
    sizes = [int(s["size"]) for s in weights if isinstance(s.get("size"), int)]
    weight_gib = round(sum(sizes) / GIB, 1) if sizes and len(sizes) == len(weights) else None
    total = (info.get("safetensors") or {}).get("total")
    card = info.get("cardData") or {}
    license_ = card.get("license") or next(
        (t.split(":", 1)[1] for t in info.get("tags") or [] if str(t).startswith("license:")), None)
    gated = info.get("gated")
    gated = gated if isinstance(gated, bool) else (None if gated is None else True)
    tag = info.get("pipeline_tag") or card.get("pipeline_tag")
    modified = info.get("lastModified")
    api = doc.model_copy(update={"kind": "hf-api", "revision": sha,
                                 "url": doc.url or f"https://huggingface.co/api/models/{repo}"})
    hf = HfInfo(repo=repo, revision=sha, license=license_, gated=gated,
                params_b=round(total / 1e9, 2) if isinstance(total, int | float) and total else None,
                modality=(str(tag),) if tag else (), weight_gib=weight_gib, weight_files=len(weights) or None,
                last_modified=datetime.fromisoformat(modified) if modified else None,
                downloads=info.get("downloads") if isinstance(info.get("downloads"), int) else None)
    lines = doc.lines
    facts = [fact(api, "weights_revision", sha, find_line(lines, sha), scope=repo)]
    if hf.params_b:
        facts.append(fact(api, "params_total_b", hf.params_b, find_line(lines, '"total"'), unit="B"))
    ckpt = Checkpoint(name=repo, repo=repo, revision=sha, resident_gib=weight_gib, gated=gated,
                      notes=f"{len(weights)} weight file(s)" if weights else None)
    return Extract(doc=api.ref(), models=(repo,), facts=tuple(facts), checkpoints=(ckpt,), hf=hf)


def _is_weight(name: str) -> bool:
    return name.endswith((".safetensors", ".bin", ".gguf", ".pt")) and not name.startswith(("original/", "metal/"))


class HfHub(Adapter):
    """The live Hub API, asked once per model when a read wants it (``ReadOptions.hub``)."""

    kind = "hf-api"

    def __init__(self) -> None:
        self.endpoint: str | None = None

    def open(self, root: Path | None, options: ReadOptions) -> bool:
        self.endpoint = options.hf_endpoint
        return options.hub

    def model_extract(self, model: str) -> ModelExtract:
        return ModelExtract(extract=fetch_hub(model, endpoint=self.endpoint))


@dataclass(frozen=True)
class HubFiles:
    """One model's Hub answer: its model info, the commit it resolved to, and files read at that commit."""

    info: Any  # huggingface_hub.ModelInfo
    sha: str
    base: str  # the endpoint, without a trailing /
    files: dict[str, bytes]  # name -> content
    urls: dict[str, str]  # name -> the endpoint URL it was read from


def _failed(what: str, exc: Exception) -> str:
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return f"{what} request failed ({f'HTTP {status}' if status else f'{type(exc).__name__}: {exc}'})"


def hub_files(repo_id: str, names: Sequence[str], *, revision: str | None = None, endpoint: str | None = None,
              token: str | bool | None = False, timeout: float = 10.0, files_metadata: bool = False) -> HubFiles:
    """Model info of ``repo_id`` (at ``revision``; with file sizes when ``files_metadata``), then each of
    ``names`` at the commit the info names, through ``huggingface_hub`` (``endpoint``/``HF_ENDPOINT`` picks
    the server; ``token=None``: the token huggingface_hub finds, False: none).  Every failure is one
    SourceError naming the URL."""
    from huggingface_hub import HfApi, get_session, hf_raise_for_status

    api = HfApi(endpoint=endpoint, token=token)
    base = api.endpoint.rstrip("/")
    where = f"hf-api {base}/api/models/{repo_id}" + (f"/revision/{revision}" if revision else "")
    try:
        info = api.model_info(repo_id, revision=revision, files_metadata=files_metadata, timeout=timeout)
    except Exception as exc:  # HTTP errors, connection refused, timeouts, malformed JSON: one line
        http = getattr(getattr(exc, "response", None), "status_code", None) is not None
        raise SourceError(_failed("Hub", exc), where=where,
                          fix="check the repo id, revision and HF_ENDPOINT/HF_TOKEN" if http
                          else "check HF_ENDPOINT and the network") from exc
    sha = getattr(info, "sha", None)
    if not sha:
        raise SourceError("Hub model info has no 'sha' (revision)", where=where,
                          fix="the response is incomplete; retry or record a complete response")
    if files_metadata and info.siblings is None:
        raise SourceError("Hub model info has no 'siblings' (file list)", where=where,
                          fix="the response is incomplete; request it with files metadata (blobs=true)")
    files: dict[str, bytes] = {}
    urls: dict[str, str] = {}
    for name in names:
        url = urls[name] = f"{base}/{repo_id}/resolve/{sha}/{name}"
        try:
            resp = get_session().get(url, timeout=timeout, follow_redirects=True)
            hf_raise_for_status(resp)
        except Exception as exc:
            raise SourceError(_failed(name, exc), where=f"hf-api {url}", fix="check the repository files") from exc
        files[name] = resp.content
    return HubFiles(info=info, sha=str(sha), base=base, files=files, urls=urls)


def fetch_hub(repo_id: str, *, revision: str | None = None, endpoint: str | None = None,
              token: str | bool | None = False, timeout: float = 10.0) -> Extract:
    """Model info (with file sizes), safetensors parameter count and config.json from the Hub."""
    now = datetime.now(UTC).replace(microsecond=0)
    got = hub_files(repo_id, ["config.json"], revision=revision, endpoint=endpoint, token=token, timeout=timeout,
                    files_metadata=True)
    info, sha, base = got.info, got.sha, got.base
    config_url, raw = got.urls["config.json"], got.files["config.json"]
    try:
        config = json.loads(raw)
    except ValueError as exc:
        raise SourceError("config.json is not valid JSON", where=f"hf-api {config_url}",
                          fix="check the repository files") from exc

    doc = SourceDoc(kind="hf-api", path=f"api/models/{repo_id}", url=f"https://huggingface.co/api/models/{repo_id}",
                    revision=sha, sha256=hashlib.sha256(raw).hexdigest(), fetched_at=now, raw=raw)
    weights = [s for s in info.siblings if _is_weight(s.rfilename)]
    sizes = [s.size for s in weights if s.size is not None]
    weight_gib = round(sum(sizes) / GIB, 1) if sizes and len(sizes) == len(weights) else None
    params = getattr(getattr(info, "safetensors", None), "total", None)
    card = getattr(info, "card_data", None)
    license_ = (card.get("license") if card else None) or next(
        (t.split(":", 1)[1] for t in (info.tags or []) if t.startswith("license:")), None)
    gated = info.gated if isinstance(info.gated, bool) else (None if info.gated is None else True)
    arch = (config.get("architectures") or [None])[0]
    hf = HfInfo(repo=repo_id, revision=sha, license=license_, gated=gated,
                params_b=round(params / 1e9, 2) if params else None,
                modality=(info.pipeline_tag,) if info.pipeline_tag else (), weight_gib=weight_gib,
                weight_files=len(weights) or None, architecture=arch, last_modified=info.last_modified,
                downloads=info.downloads)
    facts = [fact(doc, "weights_revision", sha, scope=repo_id)]
    if hf.params_b:
        facts.append(fact(doc, "params_total_b", hf.params_b, unit="B"))
    cdoc = doc.model_copy(update={"url": config_url.replace(base, "https://huggingface.co"), "kind": "hf-api"})
    facts += config_facts(cdoc, config)
    ckpt = Checkpoint(name=repo_id, repo=repo_id, revision=sha, format=checkpoint_format(config),
                      resident_gib=weight_gib, gated=gated,
                      notes=f"{len(weights)} weight file(s)" if weights else None)
    return Extract(doc=doc.ref(), models=(repo_id,), facts=tuple(facts), checkpoints=(ckpt,), hf=hf,
                   config=config if isinstance(config, dict) else None)
