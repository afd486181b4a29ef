"""The predicted curves' memo (web/_memo.py): computed once for everything a curve reads, in memory and in the
build cache, never answered from figures of another coefficient set, configuration or config.json."""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from launchcard.merge import BuildCache
from launchcard.web._memo import CurveMemo
from launchcard.web._predicted import prediction_hook

ROOT = Path(__file__).resolve().parents[1]
QWEN = ROOT / "tests" / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"
MODEL = "Qwen/Qwen3-8B"


def _published(parallelism: str = "TP2", gpus: int = 2) -> list[dict[str, Any]]:
    return [{"hardware": "h100", "conditions": {"gpus": gpus, "input_tokens": 1024, "output_tokens": 128,
                                                "concurrency": 32, "parallelism": parallelism, "engine": "vllm"}}]


def _points(memo: CurveMemo | None, config: Path = QWEN, published: list[dict[str, Any]] | None = None
            ) -> list[dict[str, Any]]:
    pts = published if published is not None else _published()
    return prediction_hook(lambda m: pts, lambda m: config, memo or CurveMemo(None))(MODEL)


def _fresh(config: Path = QWEN, published: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The same points computed with nothing kept."""
    return _points(CurveMemo(None), config, published)


def test_a_curve_is_computed_once_then_read_from_memory_and_from_disk(tmp_path: Path) -> None:
    memo = CurveMemo(BuildCache(tmp_path / "cache"))
    first = _points(memo)
    assert first and {p["concurrency"] for p in first} == {1, 4, 16, 32, 64}
    assert _points(memo) == first and memo.built == 1  # asked again: from memory
    other = CurveMemo(BuildCache(tmp_path / "cache"))  # another worker process, or a restart
    assert _points(other) == first and other.built == 0  # from disk: the very same figures
    assert json.loads(json.dumps(first)) == first == _fresh()


def test_a_changed_coefficient_set_is_predicted_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from launchcard.predict import _coef

    memo = CurveMemo(BuildCache(tmp_path / "cache"))
    before = _points(memo)
    doc = copy.deepcopy(_coef._table())
    doc["sets"]["gpu:vllm"]["values"]["layer_us"] *= 3  # a refit: every step's per-layer host time
    monkeypatch.setattr(_coef, "_table", lambda: doc)
    after = _points(memo)
    assert memo.built == 2 and after != before
    assert after == _fresh()  # what the new set predicts, not the old set's figures
    assert _points(CurveMemo(BuildCache(tmp_path / "cache"))) == after  # nor on disk
    monkeypatch.undo()
    assert _points(memo) == before and memo.built == 2  # the shipped set again: its kept figures


def test_a_changed_plan_or_config_is_predicted_again(tmp_path: Path) -> None:
    memo = CurveMemo(BuildCache(tmp_path / "cache"))
    tp2 = _points(memo)
    tp1 = _points(memo, published=_published("TP1", 1))
    assert memo.built == 2 and tp1 != tp2 and tp1 == _fresh(published=_published("TP1", 1))
    config = tmp_path / "config.json"
    raw = json.loads(QWEN.read_text())
    config.write_text(json.dumps(raw))
    same = _points(memo, config)
    assert same == tp2 and memo.built == 3  # another path (kept per path), same figures
    raw["num_hidden_layers"] = raw["num_hidden_layers"] // 2  # the checkpoint rewritten in place
    config.write_text(json.dumps(raw) + "\n")
    halved = _points(memo, config)
    assert memo.built == 4 and halved != same and halved == _fresh(config)
    assert _points(CurveMemo(BuildCache(tmp_path / "cache")), config) == halved


def test_many_requests_for_a_cold_curve_build_it_once_across_memos(tmp_path: Path) -> None:
    """Threads of one process wait on its build; two memos over one cache folder (two worker processes) build
    it once between them (the lock file), and everyone gets the same figures."""
    memos = [CurveMemo(BuildCache(tmp_path / "cache")), CurveMemo(BuildCache(tmp_path / "cache"))]
    got: list[list[dict[str, Any]]] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def ask(i: int) -> None:
        start.wait()
        pts = _points(memos[i % 2])
        with lock:
            got.append(pts)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(got) == 8 and all(g == got[0] for g in got) and got[0]
    assert sum(m.built for m in memos) == 1


def test_no_config_or_a_damaged_entry_is_no_stale_answer(tmp_path: Path) -> None:
    assert prediction_hook(lambda m: _published(), lambda m: None, CurveMemo(None))(MODEL) == []
    cache = BuildCache(tmp_path / "cache")
    first = _points(CurveMemo(cache))
    for entry in (tmp_path / "cache").rglob("*.json"):
        entry.write_text("{not json")
    again = CurveMemo(BuildCache(tmp_path / "cache"))
    assert _points(again) == first and again.built == 1  # a damaged entry is a miss, built again


def test_a_config_that_cannot_be_read_or_locked_gives_the_unkept_answer(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A config.json gone or unreadable after it was found, or a cache folder whose file system refuses locks,
    raised OSError out of the page (a 500) where predicting without the memo answers: the build runs unkept."""
    import fcntl

    gone = tmp_path / "gone" / "config.json"
    memo = CurveMemo(BuildCache(tmp_path / "cache"))
    assert _points(memo, gone) == [] == _fresh(gone) and memo.built == 1
    unreadable = tmp_path / "config.json"
    unreadable.write_text(QWEN.read_text())
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: (_ for _ in ()).throw(PermissionError(13, "denied"))
                        if self == unreadable else real(self))
    assert _points(memo, unreadable) == _fresh() and memo.built == 2

    def refuse(fd: Any, op: int) -> None:
        raise OSError(37, "No locks available")

    monkeypatch.undo()
    monkeypatch.setattr(fcntl, "flock", refuse)
    nolock = CurveMemo(BuildCache(tmp_path / "nfs"))
    assert _points(nolock) == _fresh() and nolock.built == 1
    assert _points(CurveMemo(BuildCache(tmp_path / "nfs"))) == _fresh()  # written all the same
