"""The release readers beside flagspec's one PEP 440 order (limits.sglang_release, memory._kernels.release,
memory.parse_version) read through it: the same results as their former regular expressions for every release
string the fixtures and data files name, and differences only where intended."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from launchcard.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
_NAMED = re.compile(r"""(?:version|release)["']?\s*[:=]\s*["']?(v?\d+\.\d+[0-9A-Za-z.+_-]*)"""
                    r"""|(?:vllm-openai|sglang|tensorrt-llm|vllm)[^:\s"']*:(v?\d+\.\d+[0-9A-Za-z.+_-]*)""", re.I)


def _named() -> list[str]:
    """The release strings the test fixtures and packaged data name (a version / release field, an image tag)."""
    found: set[str] = set()
    for root in (ROOT / "tests" / "fixtures", ROOT / "src" / "launchcard" / "data"):
        for path in root.rglob("*"):
            if path.is_file() and path.suffix in (".json", ".yaml", ".yml", ".md"):
                for m in _NAMED.finditer(path.read_text(encoding="utf-8", errors="replace")):
                    found.add((m[1] or m[2]).rstrip(".,-_"))
    return sorted(found)


# the same releases in the spellings and builds the engines publish
FORMS = ["v0.5.23", "0.5.6.post2", "0.5.6post2", "0.10.1.1", "v0.10.1.1", "0.11.0rc1", "0.11.0rc1.dev6",
         "0.26.1rc1.dev608+g99a10304d", "0.30.0.dev3", "0.30.0", "0.30", "0.5.6.post2.dev1", "0.5.9rc0",
         "1.2.0rc6.post2", "0.11.0+cu128", "nightly-2025-01-01", "glm5-hopper", "", None]


# an engine image tag: a release, then a build suffix after a hyphen (v0.5.9-cu130, v0.5.9-rocm700-mi35x)
_IMAGE_TAG = re.compile(r"v?\d+\.\d+\.\d+-[a-z][0-9a-z-]*")


def _old_sglang(version: str | None) -> tuple[int, int, int, int] | None:
    m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)(?:\.post(\d+))?", (version or "").strip())
    return (int(m[1]), int(m[2]), int(m[3]), int(m[4] or 0)) if m else None


def _old_kernels(text: str | None, default: tuple[int, int]) -> tuple[int, int, int]:
    m = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", str(text or "").strip())
    return (int(m[1]), int(m[2]), int(m[3] or 0)) if m else (*default, 0)


def _old_parse(text: str | None, default: tuple[int, int]) -> tuple[int, int] | None:
    if not text:
        return default
    m = re.match(r"v?(\d+)\.(\d+)", str(text).strip())
    return (int(m[1]), int(m[2])) if m else None  # None: it raised


def test_the_fixtures_name_releases_of_every_engine() -> None:
    named = _named()
    assert {"0.10.1.1", "0.5.6.post2", "0.32.0", "1.2.0rc5"} <= set(named), named


@pytest.mark.parametrize("text", [*_named(), *FORMS])
def test_release_readers_keep_their_results(text: str | None) -> None:
    from launchcard.limits import sglang_release
    from launchcard.memory import parse_version
    from launchcard.memory._kernels import release
    from launchcard.memory._settings import default_vllm

    default = default_vllm()
    # SGLang: a PEP 440 spelling of a final or post release is read too (0.5.6post2, 0.30 = 0.30.0); a
    # pre-release or developmental build stays no release (sglang_release says why)
    intended_sglang = {"0.5.6post2": (0, 5, 6, 2), "0.30": (0, 30, 0, 0), "0.11.0+cu128": (0, 11, 0, 0),
                       "0.7": (0, 7, 0, 0)}
    assert sglang_release(text) == intended_sglang.get(text or "", _old_sglang(text)), text
    # vLLM: text after the release line that is no PEP 440 suffix is no release (the default's line)
    # an image tag's build suffix (the AMD fixture's v0.5.9-cu130, v0.5.9-rocm700-mi35x) is no PEP 440 suffix: no
    # release (the kernels reader takes the default's line; parse_version refuses it, as --engine-version
    # 0.19.0-custom is refused)
    tag = bool(text and _IMAGE_TAG.fullmatch(text))
    assert release(text) == ((*default, 0) if tag else _old_kernels(text, default)), text
    try:
        got: tuple[int, int] | None = parse_version(text)
    except InputError:
        got = None
    assert got == (None if tag else _old_parse(text, default)), text


def test_release_readers_refuse_what_the_one_order_calls_no_release() -> None:
    """Where the former readers took a prefix, a string the one order does not read is no release."""
    from launchcard.limits import sglang_release
    from launchcard.memory import parse_version
    from launchcard.memory._kernels import release
    from launchcard.memory._settings import default_vllm

    assert release("0.9.2-custom") == (*default_vllm(), 0) != (0, 9, 2)
    with pytest.raises(InputError, match="unreadable vLLM version"):
        parse_version("0.19.0-custom")
    assert sglang_release("0.5.9rc0") is None and sglang_release("0.10.1.1") is None
