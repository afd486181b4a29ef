from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from launchcard.errors import SourceError
from launchcard.yamlread import load_yaml


def test_lines_and_merge_keys():
    doc = load_yaml(b"base: &b\n  x: 1\n  y: 2\nchild:\n  <<: *b\n  y: 3\nlist:\n  - a\n  - b\n", "t.yaml")
    assert doc.value["child"] == {"x": 1, "y": 3}
    assert doc.line("child", "y") == 6
    assert doc.line("list", 1) == 9
    assert doc.line("list", 1, "deeper") == 9


def test_dates_become_iso_strings_and_yaml12_booleans():
    doc = load_yaml(b"d: 2026-08-27\nyes_is_text: yes\nzero: 0\n", "t.yaml")
    assert doc.value == {"d": "2026-08-27", "yes_is_text": "yes", "zero": 0}


@pytest.mark.parametrize("text,needle", [(b"a: 1\na: 2\n", "duplicate key"), (b"a: [\n", "YAML syntax error"),
                                         (b"\xff\xfe", "not UTF-8"), (b"  \n", "empty document")])
def test_errors_name_file_and_line(text, needle):
    with pytest.raises(SourceError) as info:
        load_yaml(text, "x.yaml")
    assert needle in str(info.value) and "x.yaml:" in str(info.value)


_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=20)


@given(st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | _TEXT,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner,
                                                                                  max_size=4), max_leaves=20))
def test_builder_agrees_with_ruamel_loader(value):
    """Our line-keeping construction gives the same values as ruamel's own loader."""
    import io

    from ruamel.yaml import YAML

    buf = io.StringIO()
    YAML(typ="safe", pure=False).dump({"v": value}, buf)
    text = buf.getvalue()
    assert load_yaml(text.encode(), "t.yaml").value == YAML(typ="safe", pure=False).load(text)


def test_parsed_cache_returns_what_the_parser_returns_and_survives_damage(tmp_path):
    import hashlib

    from launchcard.yamlread import ParsedCache

    raw = b"a: &x {b: [1, 2.5, null, true, 'yes']}\nc: *x\nd: 2026-08-27\n"
    digest = hashlib.sha256(raw).hexdigest()
    cache = ParsedCache(tmp_path)
    first = cache.load(raw, digest, "t.yaml")
    fresh = load_yaml(raw, "t.yaml")
    assert (first.value, first.lines) == (fresh.value, fresh.lines)
    entry = cache.folder / digest[:2] / digest
    assert entry.is_file()
    hit = cache.get(digest)
    assert hit is not None and (hit.value, hit.lines) == (fresh.value, fresh.lines)
    entry.write_bytes(b"\x00garbage")  # a damaged entry is a miss, then rewritten
    assert cache.get(digest) is None
    assert cache.load(raw, digest, "t.yaml").value == fresh.value
    assert cache.get(digest) is not None
    with pytest.raises(SourceError, match="duplicate key"):  # a broken document is never stored
        bad = b"a: 1\na: 2\n"
        cache.load(bad, hashlib.sha256(bad).hexdigest(), "x.yaml")
    assert not (cache.folder / hashlib.sha256(b"a: 1\na: 2\n").hexdigest()[:2]).exists()


def test_parsed_cache_that_cannot_be_written_only_costs_time(tmp_path):
    import hashlib

    from launchcard.yamlread import ParsedCache

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    raw = b"a: 1\n"
    assert ParsedCache(blocker).load(raw, hashlib.sha256(raw).hexdigest(), "t.yaml").value == {"a": 1}


@pytest.mark.parametrize("text", ["1e400", "-1e400", "1.5e309"])
def test_a_numeral_beyond_a_float_is_refused_not_read_as_infinity(text):
    """float('1e400') is inf: a sweep's rate: 1e400 ran as a burst. .inf still means infinity."""
    with pytest.raises(SourceError) as e:
        load_yaml(f"a: 1\nb: {text}\n".encode(), "f.yaml")
    assert e.value.where == "f.yaml:2" and "beyond a float's range" in e.value.one_line()
    assert load_yaml(b"b: .inf\n", "f.yaml").value["b"] == float("inf")
