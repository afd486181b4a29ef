"""Ask vLLM (the 0.32 CPU wheel, in-process) what ``tests/test_limits_quant_verify.py`` asks launchcard: does
``ModelConfig._verify_quantization`` take ``--quantization Q`` on a checkpoint whose ``quantization_config`` is C?

Run with the vLLM venv's Python: ``python limits_quant_probe.py QUESTIONS_JSON`` (a list of [config, Q,
model_type]); prints one JSON line: per question ["ok", the method vLLM settles on] or ["refused", its message].
Nothing is re-implemented: vLLM's own ``_verify_quantization`` runs on a stand-in holding the fields it reads,
after the model's ``verify_and_update_model_config`` (models/config.py) as ``ModelConfig.__post_init__`` runs it
first (vllm/config/model.py L908-909), on the ``quantization_config`` its arch-config convertor normalizes.
"""

import json
import sys
from types import SimpleNamespace

from vllm.config.model import ModelConfig
from vllm.model_executor.models import config as model_configs
from vllm.transformers_utils.model_arch_config_convertor import ModelArchConfigConvertorBase

RENAMES = {"gpt_oss": model_configs.GptOssForCausalLMConfig, "deepseek_v4": model_configs.DeepseekV4ForCausalLMConfig}


def ask(quant_cfg: dict, user: str, model_type: str) -> list:
    hf = SimpleNamespace(model_type=model_type, quantization_config=dict(quant_cfg))
    model = SimpleNamespace(quantization=user, hf_config=hf, hf_text_config=hf, allow_deprecated_quantization=False)
    if model_type in RENAMES:
        RENAMES[model_type].verify_and_update_model_config(model)
    # the quantization_config as ModelConfig reads it: the convertor's normalization (ModelOpt's rename,
    # compressed_tensors spelled with a dash; model_arch_config_convertor.py L263-303)
    quant = ModelArchConfigConvertorBase._normalize_quantization_config(None, hf)
    model.model_arch_config = SimpleNamespace(quantization_config=quant)
    try:
        ModelConfig._verify_quantization(model)
    except Exception as exc:  # noqa: BLE001  the engine's start-up refusal, whatever its class (ValueError here)
        return ["refused", str(exc)]
    return ["ok", model.quantization]


print(json.dumps([ask(*q) for q in json.loads(sys.argv[1])]))
