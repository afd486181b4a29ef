from __future__ import annotations

import shlex

from hypothesis import given
from hypothesis import strategies as st

from launchcard.resolve import quote, shell_command

_value = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1,
                 max_size=30).filter(lambda v: not v.startswith("-"))
_flag = st.from_regex(r"--[a-z][a-z0-9-]{0,15}", fullmatch=True)


@given(st.lists(st.tuples(_flag, _value), max_size=6))
def test_shell_command_round_trips_through_shlex(pairs):
    argv = ["vllm", "serve", "org/model"]
    for flag, value in pairs:
        argv += [flag, value]
    assert shlex.split(shell_command(argv).replace("\\\n", " ")) == argv


def test_quote_rules():
    assert quote("$HEAD_IP") == "$HEAD_IP"
    assert quote("a/b:c@d,e+f%g=h-i.j_k") == "a/b:c@d,e+f%g=h-i.j_k"
    assert quote('{"a": 1}') == "'{\"a\": 1}'"
    assert quote("it's") == "'it'\\''s'"
    assert quote("$lower") == "'$lower'"


def test_layout_of_flags_and_values():
    assert shell_command(["vllm", "serve", "m"]) == "vllm serve m"
    assert shell_command(["vllm", "serve", "m", "--a", "--b", "1"]) == "vllm serve m \\\n  --a \\\n  --b 1"
