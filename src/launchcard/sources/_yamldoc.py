"""YAML loading for adapters: one parse per document, errors with file and line."""

from __future__ import annotations

from typing import Any

from launchcard.sources._base import SourceDoc


# Any: YAML documents of any shape
def load_all(doc: SourceDoc) -> list[Any]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="safe", pure=False)
    try:
        return [d for d in yaml.load_all(doc.text) if d is not None]
    except MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise doc.error(f"not valid YAML ({exc.problem})", line=line, fix="repair the YAML syntax") from exc
    except YAMLError as exc:
        raise doc.error(f"not valid YAML ({exc})", fix="repair the YAML syntax") from exc


def engine_of(argv: list[str] | tuple[str, ...]) -> str:
    text = " ".join(argv[:4])
    for key, engine in (("dynamo.vllm", "vllm"), ("dynamo.sglang", "sglang"), ("dynamo.trtllm", "trtllm"),
                        ("dynamo.frontend", "dynamo-frontend"), ("vllm", "vllm"), ("sglang", "sglang"),
                        ("trtllm", "trtllm")):
        if key in text:
            return engine
    return argv[0] if argv else "unknown"
