"""The engines' start-up check of ``--quantization`` against the checkpoint's ``quantization_config``.

vLLM (``ModelConfig._verify_quantization``: vllm/config/__init__.py L1117-1221 of 0.10.2, vllm/config/model.py
L879-966 of 0.11.0 and L1370-1473 of 0.32.0; the raise at L1205, L955 and L1446) reads the checkpoint's
``quant_method`` (``compressed_tensors`` spelled ``compressed-tensors``), then asks every method's
``override_quantization_method(quant_cfg, user_quant)``, the overrides last; the first that answers becomes the
method.  Where none answers and ``--quantization`` names another method than the checkpoint's, it raises
"Quantization method specified in the model config (M) does not match the quantization method specified in the
`quantization` argument (Q)".  The overrides read:

* GPTQ checkpoints: ``gptq_marlin`` takes ``marlin`` / ``gptq_marlin`` (0.11.0 gptq_marlin.py L181-199),
  ``gptq_bitblas`` ``bitblas`` / ``gptq_bitblas``, ``bitblas`` and ``gptq_marlin_24`` their own names on their
  serialized formats (0.11.0 gptq_bitblas.py L160-178, bitblas.py L147-163, gptq_marlin_24.py L113-127); from 0.24
  (``auto_gptq`` first in the captured --quantization literal, launchcard/data/flags/vllm-0.24.0.json) ``auto_gptq``
  takes ``gptq`` / ``gptq_marlin`` / ``auto_gptq`` / ``marlin`` (0.32.0 auto_gptq.py L214-233);
* AWQ checkpoints: ``awq_marlin`` takes ``marlin`` / ``awq_marlin`` (0.11.0 awq_marlin.py L110-127); from 0.24
  ``auto_awq`` takes ``awq`` / ``awq_marlin`` / ``auto_awq`` / ``marlin`` (0.32.0 auto_awq.py L263-286);
* both: ``moe_wna16`` takes ``moe_wna16`` (0.11.0 moe_wna16.py L108-113, 0.32.0 L145-151); on CPU / XPU ``ipex``
  takes any method (0.11.0 ipex_quant.py L112-122): not refused off CUDA and ROCm;
* ModelOpt checkpoints: its overrides answer whatever was asked in some releases (0.32.0 modelopt.py L449-455,
  L772-778, L1205-1211) and not in others (0.11.0 L98-126 match only ``quant_method`` "modelopt", which its FP4
  rename is not), and ROCm's ``petit_nvfp4`` takes them (0.11.0 petit.py L128-137): not refused;
* Intel's AutoRound (``auto-round``): ``inc`` answers whatever was asked (0.32.0 inc/inc.py L361-368): not refused;
* gpt-oss's MXFP4: from vLLM PR #39604 (``gpt_oss_mxfp4`` first in the captured literal of 0.20.2, not in 0.19.1)
  ``GptOssForCausalLMConfig`` renames the method ``gpt_oss_mxfp4`` and ``Mxfp4Config`` answers it whatever was asked
  (0.32.0 models/config.py L447-462, mxfp4.py L129-146): vLLM serves the checkpoint's MXFP4 and drops the flag;
  before it (0.11.0 mxfp4.py has no override) a method other than ``mxfp4`` is refused;
* DeepSeek-V4's FP8: ``DeepseekV4FP8Config`` answers ``deepseek_v4_fp8`` for a DeepSeek-V4 FP8 checkpoint whatever
  was asked, and for any FP8 checkpoint asked ``deepseek_v4_fp8`` (0.32.0 models/deepseek_v4/quant_config.py
  L140-157, models/deepseek_v41/quant_config.py L164-191): the flag dropped there; the releases before 0.32.0 that
  serve DeepSeek-V4 are not read, so nothing is said of them;
* ``humming`` answers whenever asked (0.32.0 humming.py L179-191): not refused.

SGLang (``ModelConfig._verify_quantization``, python/sglang/srt/configs/model_config.py: the same in 0.5.3 L529-599,
0.5.4.post2 L624-697, 0.5.5.post1 L633-706, 0.5.6 L634-708, 0.5.6.post2 L652-735, 0.5.8 L757-862 and 0.5.9 L837-945,
to the raise) asks every method's override the same way (GPTQ: ``marlin`` / ``gptq_marlin``, gptq.py; AWQ:
``marlin`` / ``awq_marlin``, awq.py; ``moe_wna16``; a Marlin-serialized GPTQ: ``gptq`` / ``marlin``,
marlin_utils.py; ModelOpt and ROCm's ``petit_nvfp4`` on ModelOpt checkpoints) and then keeps a method its table
calls compatible (``w8a8_int8`` / ``w8a8_fp8`` on ``compressed-tensors``, ``modelopt_fp8`` / ``modelopt_fp4`` /
``petit_nvfp4`` on ``modelopt``); a draft model takes its checkpoint's method instead (not a serving command's own
model).  Applied to every SGLang release launchcard times (the floor is 0.5.3); the releases after 0.5.9 are not
read.
"""

from __future__ import annotations

from dataclasses import dataclass

from launchcard.flagspec import release_numbers

# vLLM: the release lines where an override named above starts (the captured --quantization literals)
AUTO_WNA16_FROM = (0, 24)
GPT_OSS_MXFP4_FROM = (0, 20)
DEEPSEEK_V4_READ_FROM = (0, 32)  # the first release read whose DeepSeek-V4 FP8 override answers whatever is asked
DEEPSEEK_V4_TYPES = ("deepseek_v4", "deepseek_v4_text", "deepseek_v41", "deepseek_v41_text")

_VLLM_GPTQ = ("marlin", "gptq_marlin", "bitblas", "gptq_bitblas", "gptq_marlin_24", "moe_wna16")
_VLLM_AWQ = ("marlin", "awq_marlin", "moe_wna16")
_VLLM_FIX = {"gptq": ("gptq_marlin", "marlin", "moe_wna16"), "awq": ("awq_marlin", "marlin", "moe_wna16")}
_SGLANG_TAKES = {"gptq": ("marlin", "gptq_marlin", "moe_wna16"), "awq": ("marlin", "awq_marlin", "moe_wna16"),
                 "compressed-tensors": ("w8a8_int8", "w8a8_fp8", "compressed_tensors")}
VLLM_RULE = ("vLLM ModelConfig._verify_quantization (vllm/config/model.py: 0.11.0 L955, 0.32.0 L1446): "
             "\"Quantization method specified in the model config ({checkpoint}) does not match the quantization "
             "method specified in the `quantization` argument ({requested})\"")
SGLANG_RULE = ("SGLang ModelConfig._verify_quantization (python/sglang/srt/configs/model_config.py, read in "
               "0.5.3-0.5.9): "
               "\"Quantization method specified in the model config ({checkpoint}) does not match the quantization "
               "method specified in the `quantization` argument ({requested})\"")


@dataclass(frozen=True)
class QuantOverride:
    """What the engine makes of ``--quantization requested`` on a checkpoint quantized with ``checkpoint``:
    ``refused`` (its start-up error) or ``replaced_by`` (the method it serves instead, the flag dropped);
    ``takes``: the other values it accepts there (the fix names them)."""

    engine: str
    checkpoint: str
    requested: str
    refused: bool
    replaced_by: str | None
    takes: tuple[str, ...]
    evidence: str

    def fix(self) -> str:
        also = f", or pass one {self.engine} takes on a {self.checkpoint} checkpoint ({', '.join(self.takes)})" \
            if self.takes else ""
        return f"drop --quantization (the engine reads {self.checkpoint} from the checkpoint){also}"


def _method(quant_cfg: object) -> str | None:
    """The checkpoint's method as both engines compare it (``compressed_tensors`` spelled with a dash)."""
    if not isinstance(quant_cfg, dict):
        return None
    method = str(quant_cfg.get("quant_method") or "").lower().replace("compressed_tensors", "compressed-tensors")
    return method or None


def vllm_quant_override(checkpoint: str | None, requested: str | None, model_type: str | None,
                        version: str | None, platform: str | None) -> QuantOverride | None:
    """vLLM's answer to ``--quantization requested`` on a checkpoint whose method vLLM names ``checkpoint``
    (``limits.checkpoint_quant_method``) and whose config's ``model_type`` (top level, as the overrides read
    ``hf_config``) is ``model_type``; ``platform``:
    cuda / rocm / cpu / ... (None: not known); ``version``: the vLLM release (None: the newest captured).  None
    where vLLM takes it (the same method, an override that takes it, or a case this module leaves undecided)."""
    from launchcard.flagspec import default_release

    want = (requested or "").lower()
    checkpoint = _method({"quant_method": checkpoint})
    if not want or not checkpoint or want == checkpoint or checkpoint.startswith("modelopt") \
            or checkpoint == "auto-round":
        return None
    line = release_numbers(version or default_release("vllm")) or ()
    ev = VLLM_RULE.format(checkpoint=checkpoint, requested=want)
    if want == "humming" or (want == "deepseek_v4_fp8" and checkpoint == "fp8"):
        return None  # overrides that answer when asked (0.32.0 humming.py L179-191, models/deepseek_v4/quant_config.py
        # L140-157: any FP8 checkpoint); earlier releases have no such method, refused as unknown, not here
    if checkpoint == "mxfp4" and model_type == "gpt_oss":
        if line >= GPT_OSS_MXFP4_FROM:
            return QuantOverride("vLLM", checkpoint, want, False, "gpt_oss_mxfp4", (),
                                 "vLLM PR #39604 (from 0.20): Mxfp4Config.override_quantization_method answers "
                                 "gpt_oss_mxfp4 for a gpt-oss MXFP4 checkpoint whatever --quantization says "
                                 "(0.32.0 mxfp4.py L129-146)")
        return QuantOverride("vLLM", checkpoint, want, True, None, (), ev)
    if checkpoint == "fp8" and model_type in DEEPSEEK_V4_TYPES:
        if line >= DEEPSEEK_V4_READ_FROM:
            return QuantOverride("vLLM", checkpoint, want, False, "deepseek_v4_fp8", (),
                                 "DeepseekV4FP8Config.override_quantization_method answers deepseek_v4_fp8 for a "
                                 "DeepSeek-V4 FP8 checkpoint whatever --quantization says (0.32.0 "
                                 "models/deepseek_v4/quant_config.py L140-157, models/deepseek_v41/quant_config.py "
                                 "L164-191)")
        return None  # the releases before 0.32.0 that serve DeepSeek-V4 are not read
    takes: tuple[str, ...] = ()
    if checkpoint in ("gptq", "awq"):
        if platform not in ("cuda", "rocm"):
            return None  # ipex takes any method on CPU / XPU; an unknown platform is not judged
        auto = f"auto_{checkpoint}"
        takes = (*(_VLLM_GPTQ if checkpoint == "gptq" else _VLLM_AWQ), auto)
        if want in takes:
            return None
        takes = _VLLM_FIX[checkpoint] + ((auto,) if line >= AUTO_WNA16_FROM else ())
    return QuantOverride("vLLM", checkpoint, want, True, None, takes, ev)


def sglang_quant_override(quant_cfg: object, requested: str | None, platform: str | None) -> QuantOverride | None:
    """SGLang's refusal of ``--quantization requested`` on a checkpoint whose ``quantization_config`` is
    ``quant_cfg`` (see the module); None where it starts (or a case not judged: ModelOpt checkpoints, a config
    without ``quant_method``)."""
    checkpoint = _method(quant_cfg)
    want = (requested or "").lower()
    if not want or not checkpoint or want == checkpoint or checkpoint == "modelopt":
        return None
    if checkpoint in ("gptq", "awq") and platform not in ("cuda", "rocm"):
        return None
    takes = _SGLANG_TAKES.get(checkpoint, ())
    if want in takes:  # a Marlin-serialized GPTQ's MarlinConfig takes gptq / marlin: taken already
        return None
    return QuantOverride("SGLang", checkpoint, want, True, None, tuple(t for t in takes if t != "compressed_tensors"),
                         SGLANG_RULE.format(checkpoint=checkpoint, requested=want))

