"""A config.json (or safetensors index) that cannot be read is one line, worded the same by every command."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import run_cli

COMMANDS = {
    "memory": ("memory", "--gpu", "h100", "--config"),
    "predict": ("predict", "--gpu", "h100", "--isl", "10", "--osl", "10", "--concurrency", "1", "--config"),
    "check": ("check", "--config"),
    "resolve": ("resolve", "acme/x", "--hardware", "h100", "--config"),
}


@pytest.mark.parametrize(("content", "said"), [
    (b'{"num_attention_heads": 7', ":2: not valid JSON (Expecting ',' delimiter, column 1); pass a valid config.json"),
    (b"[1, 2]", ":1: top level is not a JSON object; pass a valid config.json"),
    (b"\xff{}", ": not UTF-8 text (byte 0xff at offset 0); pass the config.json as UTF-8 JSON"),
])
def test_every_command_says_the_same_of_a_bad_config(tmp_path: Path, content: bytes, said: str) -> None:
    """memory/predict said "PATH:2: not valid JSON (...)" and check/resolve/emit/card "--config PATH: cannot read
    config.json (... line 2 column 1 (char 26))" of the same file."""
    bad = tmp_path / "config.json"
    bad.write_bytes(content + (b"\n" if content.startswith(b"{") else b""))
    lines = set()
    for name, args in COMMANDS.items():
        tail = ("--", "vllm", "serve", "m") if name == "check" else ()
        proc = run_cli(*args, str(bad), *tail)
        assert proc.returncode == 2 and proc.stdout == "", (name, proc.stdout)
        lines.add(proc.stderr)
    assert lines == {f"launchcard: error: --config {bad}{said}\n"}


def test_a_bad_safetensors_index_names_its_option(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text('{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,'
                   ' "intermediate_size": 128, "vocab_size": 100}')
    idx = tmp_path / "index.json"
    idx.write_text("{")
    proc = run_cli("memory", "--gpu", "h100", "--config", str(cfg), "--safetensors-index", str(idx))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"launchcard: error: --safetensors-index {idx}:1: not valid JSON"), proc.stderr
