"""How SGLang splits a model's attention over a server's GPUs, read from the ``sglang`` wheels on PyPI.

* Which architectures split attention over DP-attention ranks (``--enable-dp-attention``): their model file reads
  ``sglang.srt.layers.dp_attention.get_attention_tp_size`` (``_DP_ATTENTION``).
* The TP size an attention layer splits the heads over, and asserts they divide (:func:`attention_tp`): the whole
  ``--tp-size``, or ``--tp-size / --dp-size`` under DP attention for those architectures.

``check`` (a command's and a plan's heads rule), the plan search and ``predict`` read these one rules.  Standard
library only.
"""

from __future__ import annotations

from launchcard.flagspec import final_release
from launchcard.limits._data import NESTED

# SGLang's heads check: its attention classes assert it when the model is built (the server fails to start), over
# the attention TP size where the model file reads it (Qwen3Attention; gpt-oss alike), over the whole TP group
# where it does not (LlamaAttention)
SGLANG_HEADS_RULE = ("SGLang 0.5.6.post2 python/sglang/srt/models/qwen3.py L69-71 (attn_tp_size = "
                     "get_attention_tp_size(); assert total_num_heads % attn_tp_size == 0), L74-81 (KV heads "
                     "divisible by it, or it by KV heads), llama.py L127-129 (over the whole TP group); the same "
                     "in 0.5.23 qwen3.py L164-176, llama.py L181-183")
# the attention TP size: --tp-size over the DP-attention ranks, only with --enable-dp-attention and more than one
# rank; SGLang refuses a --dp-size that does not divide --tp-size
ATTENTION_TP_RULE = ("SGLang 0.5.6.post2 python/sglang/srt/layers/dp_attention.py L227-235 "
                     "(compute_dp_attention_world_info: attn_tp_size = tp_size // dp_size with DP attention, else "
                     "tp_size), server_args.py L1564-1570 (off at dp_size 1; assert tp_size % dp_size == 0); 0.5.23 "
                     "runtime_context.py L73-76 (attn_tp_size = tp_size // attn_dp_size // attn_cp_size), "
                     "arg_groups/parallel_hook.py L52-57 (--dp-size N --enable-dp-attention read as --attn-dp-size "
                     "N), L326 (assert tp_size % attn_dp_size == 0)")


# architectures whose SGLang model code splits attention over the DP-attention group (its model file reads
# sglang.srt.layers.dp_attention.get_attention_tp_size / _rank): --enable-dp-attention serves only these; each set is
# every EntryClass of such a file in the release's wheel (sglang/srt/models/*.py)
_DP_ATTENTION = {
    (0, 5, 6, 2): frozenset({
        "BailingMoEForCausalLM", "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM", "DeepseekV3ForCausalLMNextN",
        "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "FalconH1ForCausalLM",
        "Glm4MoeForCausalLM", "GptOssForCausalLM", "LLaDA2MoeModelLM", "Llama4ForCausalLM", "LongcatFlashForCausalLM",
        "LongcatFlashForCausalLMNextN", "PhiMoEForCausalLM", "Qwen2MoeForCausalLM", "Qwen3ForCausalLM",
        "Qwen3MoeForCausalLM", "Qwen3NextForCausalLM", "Step3VLForConditionalGeneration"}),
    (0, 5, 12, 1): frozenset({
        "BailingMoEForCausalLM", "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM", "BailingMoeV2_5ForCausalLM",
        "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV4ForCausalLM",
        "Exaone4ForCausalLM", "ExaoneMoEForCausalLM", "FalconH1ForCausalLM", "Glm4MoeForCausalLM",
        "GlmMoeDsaForCausalLM", "Glm4MoeLiteForCausalLM", "GptOssForCausalLM", "InternS1ProForConditionalGeneration",
        "KimiLinearForCausalLM", "LagunaForCausalLM", "LLaDA2MoeModelLM", "Llama4ForCausalLM",
        "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN", "MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM",
        "MiMoV2MTP", "MiniMaxM2ForCausalLM", "MossVLForConditionalGeneration", "PhiMoEForCausalLM",
        "Qwen2MoeForCausalLM", "Qwen3ForCausalLM", "Qwen3_5MoeForConditionalGeneration",
        "Qwen3_5ForConditionalGeneration", "Qwen3MoeForCausalLM", "Qwen3NextForCausalLM",
        "Qwen3VLForConditionalGeneration", "SarvamMLAForCausalLM", "SarvamMoEForCausalLM", "SDARForCausalLM",
        "SDARMoeForCausalLM", "Step3VLForConditionalGeneration", "Step3p5ForCausalLM"}),
}


def dp_attention_release(version: str | None) -> str:
    """The captured release whose model files say which architectures take --enable-dp-attention for an SGLang
    ``version``: 0.5.12.post1 from that release on (and when none is named: the newest read), else 0.5.6.post2."""
    rel = sglang_release(version)
    return "0.5.6.post2" if rel is not None and rel < (0, 5, 12, 1) else "0.5.12.post1"


def dp_attention_serves(architecture: str | None, version: str | None = None) -> bool:
    """Whether SGLang ``version``'s model code for ``architecture`` splits attention over DP-attention ranks
    (``--enable-dp-attention`` applies; see ``_DP_ATTENTION``)."""
    key = sglang_release(dp_attention_release(version))
    return key is not None and architecture in _DP_ATTENTION[key]


def sglang_release(version: str | None) -> tuple[int, int, int, int] | None:
    """An SGLang release string (``0.5.6.post2``, ``v0.5.23``) as (major, minor, patch, post), in the one PEP 440
    order (``flagspec.final_release``); None when it is not one.  A pre-release or developmental build
    (``0.5.9rc0``, ``0.5.6.post2.dev1``) is None on purpose, not its release: the tables these numbers key name
    final releases read from SGLang's source, a build's code lies between two of them, and each caller takes its
    own default for it as for no release.  Four release numbers (``0.10.1.1``) are no SGLang release."""
    got = final_release(version)
    if got is None or len(got[0]) > 3:
        return None
    major, minor, patch = (*got[0], 0, 0)[:3]
    return major, minor, patch, got[1]


def attention_tp(tp: int, dp: int, dp_attention: bool, architecture: str | None, version: str | None = None) -> int:
    """The TP size SGLang ``version``'s attention layers split ``architecture``'s heads over (and assert they divide,
    ``SGLANG_HEADS_RULE``): ``tp // dp`` with DP attention over more than one rank where the model file reads the
    attention TP size (:func:`dp_attention_serves`), else the whole ``tp`` (``ATTENTION_TP_RULE``); a ``dp`` that
    does not divide ``tp`` is SGLang's own refusal, not a split: ``tp`` is returned."""
    if dp_attention and dp > 1 and tp % dp == 0 and dp_attention_serves(architecture, version):
        return tp // dp
    return tp


# the flag that states DP attention from SGLang 0.5.22: --attn-dp-size D is --dp-size D --enable-dp-attention, the old
# form deprecated (still read as the new one)
ATTN_DP_RULE = ("SGLang 0.5.22 / 0.5.23 captured parsers: --attn-dp-size \"the number of data-parallel attention "
                "groups inside the TP group, one scheduler each, while the FFN stays tensor parallel\"; "
                "--enable-dp-attention \"Deprecated. Use --attn-dp-size <dp-size> instead of --dp-size <dp-size> "
                "--enable-dp-attention\" (0.5.22 server_args.py:416-423; 0.5.23 arg_groups/parallel_hook.py L52-57 "
                "reads the old form as --attn-dp-size); 0.5.21 and before have no --attn-dp-size")


def dp_attention_flags(dp: int, release: str | None) -> tuple[tuple[str, str | None], ...]:
    """The flags (value, or None for a switch) that run ``dp`` DP-attention ranks inside the TP group on SGLang
    ``release``, the captured parser a plan is checked at (None: none captured): ``--attn-dp-size D`` where that
    parser has the flag, else ``--dp-size D --enable-dp-attention``, which every captured release reads (deprecated
    from 0.5.22, ``ATTN_DP_RULE``); ``launchcard check`` warned ``flag-deprecated`` on plans emitted at 0.5.23."""
    if release is not None:
        from launchcard.flagspec import shipped_spec

        if "--attn-dp-size" in shipped_spec("sglang", release).by_flag:
            return (("--attn-dp-size", str(dp)),)
    return (("--dp-size", str(dp)), ("--enable-dp-attention", None))


def dp_attention_split(tp: int, dp: int, dp_attention: bool,
                       flag: str = "--dp-size") -> tuple[str, str] | None:
    """SGLang's refusal of DP-attention ranks that do not divide the TP group (``ATTENTION_TP_RULE``), in one line,
    and its fix; None when they divide (or DP attention is off): the one wording ``check`` and ``predict`` give.
    ``flag``: the one the command states the ranks by (``--attn-dp-size`` was said as ``--dp-size``)."""
    if dp_attention and dp > 1 and tp % dp:
        return (f"{flag} {dp} does not divide --tp-size {tp} with DP attention (SGLang asserts it: the server "
                "fails to start)", f"use a {flag} that divides --tp-size")
    return None


# counts of GPUs or ranks SGLang's parser takes as any int (its captured parser has no range): with --tp-size 0 (or
# below) the launcher starts no scheduler and then reads the first one's info; --pp-size 0 divides by zero first
RANK_FLAGS = ("--tp-size", "--pp-size", "--dp-size", "--attn-dp-size", "--ep-size")
RANKS_RULE = ("SGLang 0.5.6.post2 python/sglang/srt/entrypoints/engine.py L819-827 (nnodes // pp_size; one "
              "scheduler per rank of range(tp_size // nnodes)), L931 (scheduler_infos[0]: none started, the server "
              "fails to start); --dp-size, --attn-dp-size and --ep-size are counts of ranks alike")


def rank_refusal(flag: str, value: int | None) -> tuple[str, str] | None:
    """(message, fix) when an SGLang count of ranks (``RANK_FLAGS``) is below 1 (``RANKS_RULE``); None otherwise.
    The one wording ``check`` (an error finding, the flag before it) and ``predict`` (bad input named by the flag)
    give."""
    if value is None or value >= 1:
        return None
    return (f"must be >= 1, a count of GPUs or ranks ({value})",
            f"pass a positive count, or leave {flag} out for SGLang's default 1")


# --moe-dense-tp-size: ServerArgs.check_server_args asserts it is 1 or left out (0.5.6.post2 server_args.py L4100-4103,
# 0.5.9 L5150): any other value and the server does not start
DENSE_TP_RULE = ("SGLang 0.5.6.post2 python/sglang/srt/server_args.py L4100-4103 (\"moe_dense_tp_size only support 1 "
                 "and None currently\"; 0.5.9 L5150)")


def dense_tp_refusal(value: int | None) -> tuple[str, str] | None:
    """(message, fix) when ``--moe-dense-tp-size`` is neither 1 nor left out (``DENSE_TP_RULE``); the one wording
    ``check`` (an error finding) and ``predict`` (bad input named by the flag) give."""
    if value is None or value == 1:
        return None
    return (f"SGLang takes only 1 or the flag left out ({value})", "pass --moe-dense-tp-size 1 or leave it out")


# --speculative-algorithm EAGLE (NEXTN is read as EAGLE, server_args.py L1729-1730) without
# --speculative-draft-model-path: SGLang names the draft path itself only for its MTP architectures (it sets it to
# --model-path), and a draft worker without one loads --model-path anyway (ModelConfig.from_server_args takes
# ``model_path or server_args.model_path``); that draft is the checkpoint's MTP layers where SGLang maps the
# architecture to an MTP class, else the whole model again, with a KV pool of the target's size over every layer
DRAFT_SELF_RULE = ("SGLang 0.5.6.post2 python/sglang/srt/server_args.py L1767-1786 (speculative_draft_model_path "
                   "set to the model for DeepSeek V3/V3.2, GLM-4 MoE, Bailing, Mistral Large 3 only), "
                   "configs/model_config.py L235 (a draft worker without one loads --model-path), L252-289 (the "
                   "architectures it turns into MTP drafts), model_executor/model_runner.py L1370-1375, L1693-1695 "
                   "(the draft's KV pool: the target's tokens over num_nextn_predict_layers, else every layer)")
# the config keys that count a checkpoint's MTP layers
MTP_KEYS = ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_layers")


def _count(v: object) -> int:
    """``v`` as a layer count: an integer as the memory planner admits one (an int, an integral float, a digit
    string: launchcard.memory._arch._check_ints), 0 for anything else, a bool, or a negative number."""
    if isinstance(v, bool):
        return 0
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, str) and v.strip().isdigit():
        v = int(v)
    return v if isinstance(v, int) and v > 0 else 0


def mtp_layer_count(cfg: object) -> int:
    """The MTP layers a config.json declares; 0 where it declares none.  The one count: SGLang's predict / check
    (``draft_self_refusal``) and the memory planner's ``Arch.mtp_layers`` (vLLM's MTP refusal, its weights and KV,
    plan's speculative offers) all read it.

    Where: the language model's config (``text_config`` / ``llm_config`` / ``language_config`` /
    ``thinker_config``, what vLLM and SGLang read as ``hf_text_config``) over the top level, key by key.
    Odd configs: the engines read one key per architecture (vllm-project/vllm 002e77c1 vllm/config/speculative.py
    ``SpeculativeConfig.hf_config_override``: ``num_nextn_predict_layers`` for DeepSeek, GLM, ERNIE, Qwen3-Next,
    ``mtp_num_hidden_layers`` for Qwen3.5), so a 0 under one key does not cancel a positive count under another:
    launchcard does not map architectures to keys, and counts the first key in ``MTP_KEYS`` that gives a positive
    count.  A float counts where it is integral (1.0 is 1, as for every integer field of the memory planner); 1.5, a
    bool, a negative number or a non-number count as no layers."""
    if not isinstance(cfg, dict):
        return 0
    nested = [v for k in NESTED if isinstance(v := cfg.get(k), dict)]
    for key in MTP_KEYS:
        for doc in (*nested, cfg):
            if key in doc:
                n = _count(doc[key])
                if n:
                    return n
                break  # the language model's value stands over the top level's
    return 0


def draft_self_refusal(algorithm: str | None, draft_path: str | None, mtp_layers: int) -> tuple[str, str] | None:
    """(message, fix) for SGLang EAGLE / NEXTN without --speculative-draft-model-path on a checkpoint without MTP
    layers (``DRAFT_SELF_RULE``): SGLang drafts with the model itself, which has no MTP layers to draft with and
    which launchcard does not time; None otherwise.  The one wording ``check`` (an error finding) and ``predict`` /
    ``plan`` (bad input named by the flag) give."""
    if not algorithm or algorithm.upper() not in ("EAGLE", "NEXTN") or draft_path or mtp_layers > 0:
        return None
    return (f"{algorithm} without --speculative-draft-model-path on a checkpoint without MTP layers: SGLang then "
            "takes the model itself as its draft (the whole model again, or an MTP class with no weights to load), "
            "not a drafter launchcard can time",
            "pass --speculative-draft-model-path with an EAGLE draft of this model, or leave "
            "--speculative-algorithm out")


# gpt-oss with --moe-runner-backend triton_kernel at --ep-size > 1: SGLang asserts it away at start-up, in
# ServerArgs._handle_model_specific_adjustments' GptOssForCausalLM branch (server_args.py), before _handle_a2a_moe
# moves ep_size to tp_size for an all-to-all backend (0.5.6.post2 L1622-1634), so the --ep-size given is read.
# Through 0.5.4.post2 the assert sits in the branch that does not take FlashInfer MXFP4 for an MXFP4 checkpoint on
# SM100 (0.5.3 is_sm100_supported) / Blackwell (0.5.4.post2 is_blackwell_supported): there a named runner is
# overridden first (launchcard.memory._sglang_mxfp4's forced FlashInfer rule) and the server starts
TRITON_KERNEL_EP_RULE = ("SGLang python/sglang/srt/server_args.py _handle_model_specific_adjustments "
                         "(GptOssForCausalLM): assert self.ep_size == 1, \"Triton kernel MoE is only supported "
                         "when ep_size == 1\" "
                         "(0.5.3 L768-771 and 0.5.4.post2 L957-960, off the FlashInfer MXFP4 branch L762-767 / "
                         "L951-956; 0.5.5.post1 L1005-1008, 0.5.6 L1119-1122, 0.5.6.post2 L1172-1175, 0.5.7 "
                         "L1210-1213, 0.5.8 L1318-1321, 0.5.9 L1400-1403, 0.5.14 L3936-3939; 0.5.23 "
                         "arg_groups/model_hook.py L567-571)")
_TRITON_KERNEL_EP_FROM = (0, 5, 3, 0)  # the oldest release read (0.5.1.post3 / 0.5.2: not read)
_FORCED_FLASHINFER_UNTIL = (0, 5, 4, 99)  # SM100's FlashInfer pick overrides a named runner through 0.5.4.post2


def sglang_blackwell(release: tuple[int, int, int, int], capability: str | None) -> bool:
    """Whether SGLang ``release`` takes a GPU of compute ``capability`` ("10.0") as Blackwell in gpt-oss's MXFP4
    runner pick: SM100 in 0.5.3 (is_sm100_supported), SM100 or SM120 from 0.5.4 (is_blackwell_supported; 0.5.4.post2
    server_args.py L951)."""
    from launchcard.limits._data import compute_capability

    cc = compute_capability(capability)
    major = cc[0] if cc else 0
    return major == 10 or (major == 12 and release > (0, 5, 3, 99))


def forced_flashinfer_mxfp4(release: tuple[int, int, int, int], capability: str | None) -> bool:
    """Whether SGLang ``release`` runs an MXFP4 gpt-oss checkpoint's experts with FlashInfer MXFP4 whatever
    --moe-runner-backend names (<= 0.5.4.post2 on Blackwell: 0.5.3 server_args.py L762-767, 0.5.4.post2 L951-956)."""
    return release <= _FORCED_FLASHINFER_UNTIL and sglang_blackwell(release, capability)


def triton_kernel_ep_refusal(architecture: str | None, runner: str | None, ep: int | None, release: str | None,
                             *, mxfp4: bool, capability: str | None, gpu_known: bool) -> tuple[str, str] | None:
    """(message, fix) when SGLang ``release`` (None: the newest read) asserts --moe-runner-backend triton_kernel at
    --ep-size ``ep`` > 1 for gpt-oss (``TRITON_KERNEL_EP_RULE``): the server does not start; None otherwise.  Through
    0.5.4.post2 an MXFP4 checkpoint (``mxfp4``) on Blackwell skips the assert (:func:`forced_flashinfer_mxfp4`):
    on a GPU not known there (``gpu_known`` False) that release is not judged.  The one wording ``check`` (an error
    finding), ``predict``, the plan search and the web give."""
    if architecture != "GptOssForCausalLM" or runner != "triton_kernel" or ep is None or ep <= 1:
        return None
    rel = sglang_release(release)
    if rel is not None and rel < _TRITON_KERNEL_EP_FROM:
        return None
    if mxfp4 and rel is not None and rel <= _FORCED_FLASHINFER_UNTIL and (
            not gpu_known or forced_flashinfer_mxfp4(rel, capability)):
        return None
    return (f"--moe-runner-backend triton_kernel with --ep-size {ep}: SGLang asserts \"Triton kernel MoE is only "
            "supported when ep_size == 1\" for gpt-oss (GptOssForCausalLM), the server fails to start",
            "pass --ep-size 1 (or leave it out), or leave --moe-runner-backend out for SGLang's own pick at "
            f"--ep-size {ep}")
