import json
import shlex
from pathlib import Path

import pytest

from launchcard.errors import SourceError
from launchcard.sources import SourceDoc
from launchcard.sources.sglang_cookbook import SGLangCookbook

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
SEED = CORPUS.parent / "seeds" / "launch-card.glm-5.3-flash.json.txt"
PAGE = CORPUS / "sglang-cookbook" / "GLM-5.3-Flash" / "GLM-5.3-Flash.mdx"


def _doc(path: Path, rel: str = "sglang-cookbook/X/page.mdx") -> SourceDoc:
    return SourceDoc.from_file(path, kind="sglang-cookbook", path=rel)


def _page_command(lines: list[str], start: int) -> list[str]:
    """The command starting at 1-based ``start`` as the page prints it (continuations joined)."""
    text = []
    i = start - 1
    while True:
        s = lines[i].rstrip()
        if s.endswith("\\"):
            text.append(s[:-1])
            i += 1
            continue
        text.append(s)
        return shlex.split(" ".join(text))


def test_glm_page_envs_equal_page_commands_and_seed():
    x = SGLangCookbook().extract(_doc(PAGE, "sglang-cookbook/GLM-5.3-Flash/GLM-5.3-Flash.mdx"))
    lines = PAGE.read_text().splitlines()
    assert len(x.envs) == 6
    for env in x.envs:
        assert list(env.argv) == _page_command(lines, env.evidence.line)
    seed = json.loads(SEED.read_text())
    seed_argv = [tuple(e["argv"]) for e in seed["envs"] if e["engine"] == "sglang"]
    assert [e.argv for e in x.envs] == seed_argv
    roles = [e.role for e in x.envs]
    assert roles == ["encoder", "single", "single", "prefill", "decode", "router"]
    assert x.envs[0].hardware == "gb300" and x.envs[2].hardware == "b200"
    assert x.envs[0].image == "lmsysorg/sglang:latest"
    facts = {(f.name, f.value) for f in x.facts}
    assert ("reasoning_parser", "glm45") in facts and ("params_total_b", 320.0) in facts
    assert x.models[0] == "zai-org/GLM-5.3-Flash"


def test_env_prefixes_exports_and_comments(tmp_path):
    page = tmp_path / "p.mdx"
    page.write_text("# H100 setup\n\n```bash Command\nexport A=1\n# comment\nB=2 C='x y' \\\n"
                    "python3 -m sglang.launch_server \\\n  --model-path org/M \\\n  # inline\n  --tp 8\n"
                    "sglang serve --model-path org/M --tp 2\n```\n")
    x = SGLangCookbook().extract(_doc(page))
    assert [e.argv for e in x.envs] == [
        ("python3", "-m", "sglang.launch_server", "--model-path", "org/M", "--tp", "8"),
        ("sglang", "serve", "--model-path", "org/M", "--tp", "2")]
    assert x.envs[0].env == {"A": "1", "B": "2", "C": "x y"}
    assert x.envs[0].hardware == "h100" and x.envs[0].gpus == 8


@pytest.mark.parametrize("body, rule", [
    ("# T\n\n```bash\nsglang serve --model-path org/M \\\n  --tp 8\n", "truncated document"),
    ("---\ntitle: x\n\n```bash\nsglang serve --model-path org/M\n```\n", "front matter"),
    ("```bash\nsglang serve --model-path 'org/M --tp 8\n```\n", "unbalanced quotes"),
    ("```bash\n--tp 8 \\\n  --ep 8\n```\n", "no launch command"),
    ("```python\nprint('hi')\n```\n", "no launch command"),
])
def test_bad_pages_name_the_source(tmp_path, body, rule):
    page = tmp_path / "bad.mdx"
    page.write_text(body)
    with pytest.raises(SourceError) as err:
        SGLangCookbook().extract(_doc(page))
    msg = err.value.one_line()
    assert rule in msg and "bad.mdx" in msg and "sglang-cookbook" in msg


def test_fragment_block_is_reported_not_fatal():
    page = CORPUS / "sglang-cookbook" / "DeepSeek-V4-Flash" / "DeepSeek-V4.mdx"
    x = SGLangCookbook().extract(_doc(page, "sglang-cookbook/DeepSeek-V4-Flash/DeepSeek-V4.mdx"))
    assert any("not a command" in w for w in x.warnings)
    assert any("placeholder" in w for w in x.warnings)
    assert x.envs and x.models[0] == "deepseek-ai/DeepSeek-V4-Flash"


def test_panel_summary_cells_become_envs():
    page = CORPUS / "sglang-cookbook" / "GLM-5.3-Flash" / "glm-5.3-flash.config-summary.md"
    x = SGLangCookbook().extract(_doc(page, "sglang-cookbook/GLM-5.3-Flash/glm-5.3-flash.config-summary.md"))
    assert len(x.envs) == 20
    h100 = [e for e in x.envs if e.hardware == "h100"]
    assert h100 and all(e.argv[:4] == ("sglang", "serve", "--model-path", "zai-org/GLM-5.3-Flash") for e in h100)
    assert any(e.checkpoint == "RadixArk/GLM-5.3-Flash-NVFP4" for e in x.envs)
