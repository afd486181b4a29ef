"""The corpus build cache (merge/_cache.py) and the one-model read: same cards as a full uncached build,
and every change of what a card rests on (a document, a recipe, a shared file, the code) is seen."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from launchcard.card import LaunchCard
from launchcard.errors import UnknownModelError
from launchcard.merge import _cache, _corpus, build_corpus

GLM = "zai-org/GLM-5.3-Flash"
GPT = "openai/gpt-oss-120b"


@pytest.fixture()
def corpus(shared_dir: Path, tmp_path: Path) -> Path:
    """A private copy of the shared corpus (only under tmp_path: the test edits it)."""
    dst = tmp_path / "corpus"
    shutil.copytree(shared_dir / "corpus", dst)
    return dst


@pytest.fixture()
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "build-cache"
    monkeypatch.setenv(_cache.CACHE_ENV, str(path))
    return path


@pytest.fixture()
def merges(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The models whose card was really merged (not taken from the cache)."""
    seen: list[str] = []
    real = _corpus.merge_card

    def counting(model: str, *args: object, **kw: object) -> LaunchCard:
        seen.append(model)
        return real(model, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(_corpus, "merge_card", counting)
    return seen


def _same(a: LaunchCard, b: LaunchCard) -> bool:
    return a.model_copy(update={"captured_at": None}) == b.model_copy(update={"captured_at": None})


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def test_a_warm_build_gives_the_cold_build_and_changes_are_seen(corpus: Path, cache_dir: Path,
                                                                  merges: list[str]) -> None:
    cold = build_corpus(corpus)
    assert len(merges) == len(cold.cards) > 100 and any(cache_dir.rglob("*.json"))
    merges.clear()
    warm = build_corpus(corpus)
    assert merges == []  # every card from the cache
    assert warm.cards.keys() == cold.cards.keys()
    assert all(_same(warm.cards[m], cold.cards[m]) for m in cold.cards)
    assert (warm.documents, warm.problems, warm.warnings) == (cold.documents, cold.problems, cold.warnings)
    assert warm.cards[GLM].captured_at >= cold.cards[GLM].captured_at  # stamped by this build, not the cached one

    # a touched file that says the same: still cached (keys are content hashes, not times)
    recipe = corpus / "vllm-recipes" / "models" / f"{GLM}.yaml"
    os.utime(recipe, (1, 1))
    build_corpus(corpus)
    assert merges == []

    # one recipe changes: only its model is rebuilt, and the card says what the file now says
    _edit(recipe, "description:", "description: Edited for the cache test.")
    after = build_corpus(corpus)
    assert merges == [GLM]
    fresh = build_corpus(corpus, models=[GLM], cache=False).cards[GLM]
    assert _same(after.cards[GLM], fresh) and not _same(after.cards[GLM], cold.cards[GLM])

    # a document of another source changes: its model is rebuilt from the re-read document
    merges.clear()
    page = next(p for p in (corpus / "sglang-cookbook" / "gpt-oss-120b").rglob("*") if p.is_file())
    page.write_bytes(page.read_bytes() + b"\n<!-- edited -->\n")
    build_corpus(corpus)
    assert merges == [GPT]

    # a shared file of the recipes (strategies, taxonomy...) changes: every recipe card is rebuilt
    merges.clear()
    taxonomy = corpus / "vllm-recipes" / "taxonomy.yaml"
    taxonomy.write_bytes(taxonomy.read_bytes() + b"\n# edited\n")
    build_corpus(corpus)
    assert len(merges) >= 150


def test_code_change_hardware_choice_and_damaged_entries_miss(corpus: Path, cache_dir: Path, merges: list[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    build_corpus(corpus, models=[GPT])
    assert merges == [GPT]
    build_corpus(corpus, models=[GPT], hardware="h200")  # another option, another card
    assert merges == [GPT, GPT]
    for entry in cache_dir.rglob("*.json"):  # damaged entries (a killed writer, a full disk) are misses
        entry.write_text(entry.read_text()[:40])
    again = build_corpus(corpus, models=[GPT])
    assert merges == [GPT] * 3 and again.cards[GPT].model == GPT
    monkeypatch.setattr(_cache, "code_fingerprint", lambda: "0" * 64)  # edited code: a folder of its own
    build_corpus(corpus, models=[GPT])
    assert merges == [GPT] * 4


def test_code_fingerprint_follows_the_package_files(tmp_path: Path) -> None:
    _cache.code_fingerprint.cache_clear()
    before = _cache.code_fingerprint()
    _cache.code_fingerprint.cache_clear()
    assert _cache.code_fingerprint() == before
    spec = Path(_cache.__file__).resolve().parents[1] / "data" / "hardware.yaml"
    st = spec.stat()
    try:
        os.utime(spec, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # a data file counts like code
        _cache.code_fingerprint.cache_clear()
        assert _cache.code_fingerprint() != before
    finally:
        os.utime(spec, ns=(st.st_atime_ns, st.st_mtime_ns))
        _cache.code_fingerprint.cache_clear()


def test_cache_off_writes_nothing(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_cache.CACHE_ENV, "off")
    assert _cache.cache_root() is None
    build_corpus(corpus, models=[GPT])
    assert not list(tmp_path.rglob("build"))  # nothing under the default folder either
    monkeypatch.delenv(_cache.CACHE_ENV)
    assert _cache.cache_root() == tmp_path / "xdg-cache" / "launchcard" / "build"


def test_one_model_reads_only_its_documents_and_builds_the_full_builds_card(shared_dir: Path,
                                                                            cache_dir: Path) -> None:
    corpus = shared_dir / "corpus"
    full = build_corpus(corpus, cache=False)
    for model in (GLM, GPT, "deepseek-ai/DeepSeek-V4-Flash", "moonshotai/Kimi-K2.5", "Qwen/Qwen3-8B"):
        if model not in full.cards:
            continue
        one = build_corpus(corpus, models=[model], cache=False)
        assert list(one.cards) == [model]
        assert _same(one.cards[model], full.cards[model]), model
        assert one.documents < full.documents
    with pytest.raises(UnknownModelError) as info:  # suggestions still come from every model of the corpus
        build_corpus(corpus, models=["zai-org/GLM-5.3-Flsh"], cache=False)
    assert GLM in info.value.one_line()
