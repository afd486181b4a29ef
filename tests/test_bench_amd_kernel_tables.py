"""bench/amd_kernel_tables.py: DeepSeek-V3's tp-sharded decode GEMM shapes, the aiter and aiconfigurator table
readers and the per-call comparison.  Synthetic rows only (the wheel's tables need pyarrow, the aiter table is not
in the repository)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from amd_kernel_tables import CONFIG, Shape, aic_rows, aiter_rows, compare, decode_shapes, main, ratios  # noqa: E402

AITER = """gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio
gfx942,304,1,3072,1536,ck,8,0,6.6154,k8,1.43,714.43,0.0
gfx942,304,1,3072,1536,ck,9,0,7.5,k9,1.2,600.0,0.0
gfx942,304,1,7168,2048,ck,8,0,10.1574,k8,2.89,1446.87,0.0
gfx950,256,1,7168,2048,ck,8,0,5.0,k8,5.0,2900.0,0.0
"""


def test_deepseek_v3_tp8_shapes_are_the_sharded_projections() -> None:
    cfg = json.loads(CONFIG.read_text(encoding="utf-8"))
    got = {s.name: (s.n, s.k) for s in decode_shapes(cfg, 8)}
    assert got["q_a + kv_a (fused, replicated)"] == (1536 + 512 + 64, 7168)  # 2112: not split over ranks
    assert got["q_b"] == (16 * 192, 1536)  # 16 heads a rank x (128 nope + 64 rope)
    assert got["o_proj"] == (7168, 16 * 128)
    assert got["dense gate_up"] == (2 * 18432 // 8, 7168) and got["dense down"] == (7168, 2304)
    assert got["shared gate_up"] == (512, 7168) and got["shared down"] == (7168, 256)
    assert {s.name: (s.n, s.k) for s in decode_shapes(cfg, 4)}["q_b"] == (32 * 192, 1536)


def test_aiter_rows_keep_the_mi300x_rows_and_the_fastest_kernel() -> None:
    rows = aiter_rows(AITER)
    assert rows == {(1, 3072, 1536): pytest.approx(6.6154), (1, 7168, 2048): pytest.approx(10.1574)}
    assert aiter_rows(AITER, cus=256) == {(1, 7168, 2048): pytest.approx(5.0)}  # MI355X's, kept apart


def test_aic_rows_take_block_fp8_in_microseconds() -> None:
    rows = [{"gemm_dtype": "fp8_block", "m": 1, "n": 3072, "k": 1536, "latency": 0.00684},
            {"gemm_dtype": "fp8_block", "m": 1, "n": 3072, "k": 1536, "latency": 0.009},
            {"gemm_dtype": "fp8", "m": 1, "n": 7168, "k": 2048, "latency": 0.001}]
    assert aic_rows(rows) == {(1, 3072, 1536): pytest.approx(6.84)}


def test_ratios_only_where_both_tables_time_the_shape() -> None:
    shapes = [Shape("q_b", 3072, 1536), Shape("o_proj", 7168, 2048)]
    nvidia = {"h200_sxm": {(1, 3072, 1536): 6.0, (2, 3072, 1536): 5.0}}
    lines = compare(shapes, aiter_rows(AITER), nvidia, ms=(1, 2))
    assert len(lines) == 4
    assert ratios(lines, "h200_sxm") == [pytest.approx(6.6154 / 6.0)]  # M=2: no MI300X row; o_proj: no H200 row
    assert ratios(lines, "h100_sxm") == []


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--aiter-csv", str(tmp_path / "none.csv")]) == 2
    assert "--aiter-csv" in capsys.readouterr().err
    other = tmp_path / "mi355x.csv"
    other.write_text(AITER.replace("gfx942,304", "gfx950,256"), encoding="utf-8")
    assert main(["--aiter-csv", str(other)]) == 2
    err = capsys.readouterr().err
    assert "no row with cu_num 304" in err and err.count("\n") == 1
    assert main(["--aiter-csv", str(other), "--tp", "0"]) == 2
    capsys.readouterr()
    junk = tmp_path / "junk.csv"
    junk.write_text("a,b\n1,2\n", encoding="utf-8")
    assert main(["--aiter-csv", str(junk)]) == 2
    assert "not an aiter tuned-GEMM table" in capsys.readouterr().err


def test_a_config_or_tp_it_cannot_shard_is_one_line_and_exit_2(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "mi300x.csv"
    table.write_text(AITER, encoding="utf-8")
    for text in ("not json", '{"hidden_size": 7168}', '["a list"]'):
        cfg = tmp_path / "config.json"
        cfg.write_text(text, encoding="utf-8")
        assert main(["--aiter-csv", str(table), "--config", str(cfg)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--config" in err and "not a DeepSeek-V3 config.json" in err, err
    # 128 heads over 3 ranks: no rank's shape is 128 // 3 heads wide
    assert main(["--aiter-csv", str(table), "--tp", "3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--tp 3 does not divide num_attention_heads 128" in err, err
    with pytest.raises(ValueError, match="intermediate_size 18432"):
        decode_shapes(json.loads(CONFIG.read_text(encoding="utf-8")), 5)


def test_without_pyarrow_the_wheels_tables_are_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "mi300x.csv"
    table.write_text(AITER, encoding="utf-8")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # an import of it raises ImportError
    assert main(["--aiter-csv", str(table)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pyarrow" in err and "calibrate" in err, err
