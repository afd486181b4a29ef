from pathlib import Path

import pytest

from launchcard.errors import SourceError
from launchcard.sources import SourceDoc
from launchcard.sources.truss import TrussPreset

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
GLM = CORPUS / "providers" / "baseten" / "glm-5.3-flash-latency" / "config.yaml"


def _doc(path: Path, rel: str = "providers/baseten/x/config.yaml") -> SourceDoc:
    return SourceDoc.from_file(path, kind="provider-preset", path=rel)


def test_glm_preset():
    x = TrussPreset().extract(_doc(GLM))
    (env,) = x.envs
    assert env.engine == "vllm" and env.hardware == "h100" and env.gpus == 8
    assert env.argv[:3] == ("vllm", "serve", "/app/checkpoint/model")
    assert "--reasoning-parser" in env.argv and env.argv[env.argv.index("--reasoning-parser") + 1] == "glm45"
    assert env.image.endswith("@sha256:2c6da6c6f16ed15c91e412d896dba13701f25fe1861eaec9ddaa4db34d1d21c4")
    assert env.env == {"VLLM_LOGGING_LEVEL": "WARNING", "VLLM_ENGINE_READY_TIMEOUT_S": "3600"}
    assert env.checkpoint == "zai-org/GLM-5.3-Flash"
    facts = {(f.name, str(f.value)) for f in x.facts}
    assert ("weights_revision", "3f1971b7b5f7a528c9c4ef6212c8785298a8c24a") in facts
    assert ("num_speculative_tokens", "5") in facts and ("concurrency", "16") in facts
    assert x.checkpoints[0].revision == "3f1971b7b5f7a528c9c4ef6212c8785298a8c24a"


def test_sh_c_wrapper_is_unwrapped():
    path = CORPUS / "providers/baseten/truss-examples/moonshotai/kimi-k2.5/text2text/config.yaml"
    (env,) = TrussPreset().extract(_doc(path)).envs
    assert env.argv[:3] == ("python3", "-m", "vllm.entrypoints.openai.api_server")
    assert env.env["SAFETENSORS_FAST_GPU"] == "1" and env.hardware == "b200"


def test_trtllm_preset_has_no_argv_but_is_recorded():
    path = CORPUS / "providers/baseten/truss-examples/openai/gpt-oss-120b/config.yaml"
    x = TrussPreset().extract(_doc(path))
    assert x.envs[0].engine == "trtllm" and x.envs[0].argv == ()
    assert ("weights_revision", "refs/pr/35") in {(f.name, f.value) for f in x.facts}


@pytest.mark.parametrize("text, rule", [
    ("model_name: m\nmodel_metadata:\n  repo_id: org/m\nresources:\n  accelerator: H100:8\n", "no start command"),
    ("model_name: m\ndocker_server:\n  start_command: vllm serve 'org/m\n", "unbalanced quotes"),
    ("model_name: [unclosed\n", "not valid YAML"),
])
def test_bad_configs_name_the_source(tmp_path, text, rule):
    bad = tmp_path / "config.yaml"
    bad.write_text(text)
    with pytest.raises(SourceError) as err:
        TrussPreset().extract(_doc(bad))
    assert rule in err.value.one_line() and "config.yaml" in err.value.one_line()
