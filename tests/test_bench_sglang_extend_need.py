"""bench/sglang_extend_need.py: the zero crossing it reports, what it puts on a batch and how it groups runs (no wheel
needed)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from launchcard.hardware import find
from launchcard.memory import Settings, arch_from_config, plan_memory
from launchcard.predict import HardwareFigures, facts_from_memory_plan

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from predict_accuracy import Trace, prior_sets, request_theta, theta  # noqa: E402
from sglang_extend_need import (  # noqa: E402
    FORMS,
    batch_ms,
    fit_form,
    kernel_groups,
    load_bin,
    setting,
    zero_crossing,
)

CONFIGS = ROOT / "tests" / "fixtures" / "predict_heldout_configs"


def test_zero_crossing_interpolates_between_the_values_around_it() -> None:
    assert zero_crossing([0.0, 600.0, 300.0], [-0.4, 0.2, -0.1]) == pytest.approx(400.0)
    assert zero_crossing([0.0, 300.0], [0.0, 0.5]) is None  # never below zero: no crossing from below
    assert zero_crossing([0.0, 300.0], [-0.5, -0.1]) is None  # never reaches zero in range


def test_load_bins() -> None:
    assert [load_bin(c) for c in (1, 8, 9, 64, 65)] == ["c<=8", "c<=8", "c9-64", "c9-64", "c>64"]


def test_setting_names_the_quant_mode_of_the_run() -> None:
    def row(quant: str) -> Any:
        return cast(Any, SimpleNamespace(family="qwen3.5", group=f"m|b300_sxm|sglang|{quant}|1024x1024",
                                         system="b300_sxm", release="0.5.10.post1", facts=SimpleNamespace(tp=4),
                                         concurrency=16))

    assert setting(row("")) == ("qwen3.5", "bf16", "b300_sxm", "0.5.10.post1", "tp4", "c9-64")
    assert setting(row("checkpoint"))[1] == "nvfp4-ckpt"
    assert setting(row("fp8_block"))[1] == "fp8_block"


def test_batch_ms_puts_eager_on_the_groups_and_the_crossing_on_the_ops() -> None:
    # eager us x groups + extend us x ops: Qwen3-235B BF16 at TP 8 (188 groups, 1,692 ops)
    assert batch_ms(66.0, 84.0, 188, 1692) == pytest.approx((84.0 * 188 + 66.0 * 1692) / 1000.0)
    assert batch_ms(66.0, 0.0, 188, 1692) / batch_ms(66.0, 0.0, 64, 896) == pytest.approx(1692 / 896)
    assert batch_ms(0.0, 0.0, 188, 1692) == 0.0


def test_kernel_groups_count_a_moe_layer_twice_where_its_call_is_timed_and_the_ops_from_the_model() -> None:
    # Qwen3-235B: 94 decoder layers, every one MoE, SGLang TP 8 on an H200 (its grouped call's latency is in the
    # kernel tables): 188 groups (predict._cost: layers + MoE layers), 18 ops a layer (predict._sglang_ops)
    arch = arch_from_config(json.loads((CONFIGS / "Qwen--Qwen3-235B-A22B_config.json").read_text()))
    s = Settings(tp=8, max_model_len=32768)
    acc = find("h200")
    f = facts_from_memory_plan(arch, s, plan_memory(arch, s, gpu=acc), HardwareFigures.from_accelerator(acc),
                               engine="sglang")
    assert kernel_groups(cast(Any, SimpleNamespace(facts=f))) == (2 * 94, 18 * 94)


def _trace(mem_s: float, extend_groups: float, theta: list[float]) -> Any:
    """A synthetic run: TPOT from weight reads alone, TTFT from those, an extend batch's kernel groups and one
    request's delay; measured = features . ``theta`` (seconds -> ms)."""
    tpot = [mem_s] + [0.0] * 11
    ttft = [mem_s * 5] + [0.0] * 8 + [extend_groups * 1e-6, 1e-3, 0.0]
    ms = [1e3 * sum(a * b for a, b in zip(v, theta, strict=True)) for v in (tpot, ttft)]
    return Trace(cast(Any, SimpleNamespace(tpot_ms=ms[0], ttft_ms=ms[1])), tpot, ttft)


def test_fit_form_holds_the_term_each_form_leaves_out() -> None:
    prior = prior_sets()["sglang"]
    truth = list(theta(prior)) + list(request_theta(prior))
    truth[9], truth[10] = 0.0, 150.0  # the gap is a request delay: no extend cost per group
    tr = [_trace(0.01 * (1 + i % 3), 60.0 + 64.0 * i, truth) for i in range(8)]
    assert set(FORMS) == {"extend batch (shipped)", "request delay", "both free"}
    delay = fit_form(tr, prior, "request delay")
    assert delay.extend_layer_us == 0.0 and delay.request_ms == pytest.approx(150.0, rel=2e-2)
    free = fit_form(tr, prior, "both free")
    assert free.extend_layer_us == pytest.approx(0.0, abs=5.0) and free.request_ms == pytest.approx(150.0, rel=2e-2)
    shipped = fit_form(tr, prior, "extend batch (shipped)")
    assert shipped.request_ms == 0.0 and shipped.extend_layer_us > 100.0  # the delay lands on the groups
