"""`--hardware-figures FILE`: figures that are not finite positive numbers, or a kind of accelerator launchcard does
not know, are bad input (exit 2, one line naming the file), never timed."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import run_cli
from launchcard.errors import InputError
from launchcard.predict import HardwareFigures

QWEN = Path(__file__).resolve().parent / "fixtures" / "predict_heldout_configs" / "Qwen--Qwen3-8B_config.json"


@pytest.mark.parametrize("doc", ['{"bandwidth_gbs": NaN, "tflops": {"bf16": 900}, "kind": "gpu"}',
                                 '{"bandwidth_gbs": 3000, "tflops": {"bf16": Infinity}, "kind": "gpu"}',
                                 '{"bandwidth_gbs": 1e400, "tflops": {"bf16": 900}, "kind": "gpu"}',
                                 '{"bandwidth_gbs": 3000, "tflops": {"bf16": 900}, "kind": "gpu", "op_us": NaN}',
                                 '{"bandwidth_gbs": 3000, "tflops": {"bf16": 900}, "kind": "banana"}'])
def test_figures_that_are_no_measurement_are_refused(tmp_path: Path, doc: str) -> None:
    """JSON's NaN / Infinity (and 1e400, a float overflow) passed the `> 0` checks: a NaN bandwidth predicted TTFT 0.06
    ms and TPOT 0.055 ms (exit 0); a kind 'banana' was timed as some accelerator."""
    fig = tmp_path / "fig.json"
    fig.write_text(doc)
    with pytest.raises(InputError):
        HardwareFigures.from_file(fig)
    res = run_cli("predict", "--config", str(QWEN), "--gpu", "h100", "--isl", "128", "--osl", "16", "--concurrency",
                  "1", "--hardware-figures", str(fig))
    line = res.stderr.strip()
    assert res.returncode == 2 and "\n" not in line and not res.stdout, res.stdout + res.stderr
    assert line.startswith(f"launchcard: error: --hardware-figures {fig}: "), line


def test_a_file_without_kind_times_the_gpu_named_and_a_contrary_kind_is_refused(tmp_path: Path) -> None:
    """`--gpu h100 --hardware-figures F` with F of measured bandwidth and FLOP/s but no "kind" was read as a CPU
    (the file's default) and refused as '--device cpu: the CPU backend's KV pool is unknown', an option predict does
    not have; the file's kind is now --gpu's where it gives none, and one that contradicts --gpu is bad input."""
    fig = tmp_path / "fig.json"
    fig.write_text('{"bandwidth_gbs": 3000, "tflops": {"bf16": 900}, "method": "my H100"}')
    args = ["predict", "--config", str(QWEN), "--gpu", "h100", "--isl", "128", "--osl", "16", "--concurrency", "1",
            "--hardware-figures", str(fig)]
    ok = run_cli(*args)
    assert ok.returncode == 0 and "TPOT" in ok.stdout, ok.stderr
    fig.write_text('{"bandwidth_gbs": 3000, "tflops": {"bf16": 900}, "method": "my H100", "kind": "cpu"}')
    bad = run_cli(*args)
    line = bad.stderr.strip()
    assert bad.returncode == 2 and "\n" not in line and not bad.stdout, bad.stdout + bad.stderr
    assert line.startswith(f"launchcard: error: --hardware-figures {fig}: ") and "'cpu'" in line and "h100" in line


@pytest.mark.parametrize(("content", "where", "said"), [
    (None, "", "cannot read hardware figures file (Is a directory)"),
    (b"\x8c\x00binary", "", "not UTF-8 text (byte 0x8c at offset 0)"),
    (b'{"bandwidth_gbs": 1,\n', ":2", "not valid JSON"),
    (b"[1]", ":1", "top level is not a JSON object"),
    (b'{"bandwidth_gbs": 3000}', "", "not a hardware figures file (no tflops)"),
    (b'{"bandwidth_gbs": "x", "tflops": 5}', "", "not a hardware figures file (bandwidth_gbs must be a number"),
])
def test_a_file_that_is_no_figures_is_said_in_the_words_of_every_json_file(tmp_path: Path, content: bytes | None,
                                                                         where: str, said: str) -> None:
    """qa12: the file was read with its own wording, naming Python's exceptions: "not a hardware figures file
    (IsADirectoryError: [Errno 21] ...)", "(UnicodeDecodeError: 'utf-8' codec ...)", "(KeyError: 'tflops')"; now
    jsonread's (file:line, the rule), as --config says it."""
    fig = tmp_path / "fig.json"
    if content is None:
        fig.mkdir()
    else:
        fig.write_bytes(content)
    res = run_cli("predict", "--config", str(QWEN), "--gpu", "h100", "--concurrency", "1", "--hardware-figures",
                  str(fig))
    assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(f"launchcard: error: --hardware-figures {fig}{where}: {said}"), res.stderr
    assert "Error:" not in res.stderr and "Errno" not in res.stderr
