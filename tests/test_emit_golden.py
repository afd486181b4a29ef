"""Golden files: GLM-5.3-Flash plans from the real resolver, every target.

Regenerate after an intended change with ``LAUNCHCARD_UPDATE_GOLDEN=1``.
Targets that cannot express a plan keep their one-line error as ``<target>.error.txt``.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

from _emit_helpers import RECIPES
from launchcard.emit import TARGETS, emit
from launchcard.errors import EmitError

GOLDEN = Path(__file__).parent / "golden" / "emit"
MODEL = "zai-org/GLM-5.3-Flash"
SEED_REVISION = "3f1971b7b5f7a528c9c4ef6212c8785298a8c24a"  # the Baseten preset's pinned weights
CASES = {
    # As the Baseten preset: 8xH100, TP8, MTP speculative decoding turned on.
    "h100-single-node-tp": dict(hardware="h100", strategy="single_node_tp", extra_features=("spec_decoding",)),
    "h100-multi-node-tp-2": dict(hardware="h100", strategy="multi_node_tp", node_count=2),
    "h100-pd-cluster": dict(hardware="h100", strategy="pd_cluster"),
}


@functools.cache
def _repo():
    from launchcard.sources.vllm_recipes import load_recipes

    return load_recipes(RECIPES)


@functools.cache
def real_plan(case: str):
    from launchcard.resolve import Choice, resolve

    return resolve(_repo(), Choice(model=MODEL, **CASES[case]))


def _emit_or_error(case: str, target: str) -> dict[str, str]:
    try:
        return emit(real_plan(case), target, card_name=MODEL, revision=SEED_REVISION if target == "truss" else None)
    except EmitError as exc:
        return {f"{target}.error.txt": exc.one_line() + "\n"}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str, target: str) -> None:
    files = _emit_or_error(case, target)
    folder = GOLDEN / case / (target if not next(iter(files)).endswith(".error.txt") else "")
    if os.environ.get("LAUNCHCARD_UPDATE_GOLDEN"):
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
    for name, text in files.items():
        path = folder / name
        assert path.exists(), f"missing golden {path}; run with LAUNCHCARD_UPDATE_GOLDEN=1"
        assert text == path.read_text(encoding="utf-8"), f"{path} differs"
    if target != "truss" or case == "h100-single-node-tp":
        assert not next(iter(files)).endswith(".error.txt")


def test_truss_refuses_multi_node_and_pd() -> None:
    for case in ("h100-multi-node-tp-2", "h100-pd-cluster"):
        with pytest.raises(EmitError, match="truss target serves one process"):
            emit(real_plan(case), "truss")
