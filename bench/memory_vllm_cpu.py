"""Start real vLLM (CPU backend) on tiny generated models and read its KV cache size.

Run with the vLLM venv's python (it has torch, transformers, tokenizers):

    .cache/vllm-venv/bin/python bench/memory_vllm_cpu.py [--only gqa,mha] [--out F.json]

For each architecture it writes a random-weight checkpoint (head_dim 64, a
word-level tokenizer) under ``.cache/memory-cpu-models/<name>`` (reused while
the stamp matches this file's hash), starts ``vllm.LLM`` with
``VLLM_CPU_KVCACHE_SPACE=1`` in a fresh subprocess, and records the
``KV cache size: N tokens`` line it prints.  Besides the text shapes (ARCHS)
there are two more rows (ROWS): ``vl``, a tiny PaliGemma (SigLIP tower +
projector, 16 image tokens), and ``eagle``, the gqa model with a tiny random
EAGLE-1 head as ``speculative_config``.  The CPU runner prints no weights line,
so the child prints the parameter bytes of every model vLLM builds
(``LAUNCHCARD_WEIGHTS``, target then drafter).  The result is JSON:
``{name: {"config": path, "tokens": N, "max_model_len": L, "dtype": D,
"speculative_method": M, "num_speculative_tokens": K, "weights": [...], "seconds": S, "log": tail}}``.
tests/test_memory_vllm_cpu.py compares it with the planner's CPU prediction.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "memory-cpu-models"
MAX_LEN = 2048
KV_GIB = 1
VOCAB = 512

_COMMON = dict(vocab_size=VOCAB, hidden_size=256, intermediate_size=512, max_position_embeddings=4096,
               rms_norm_eps=1e-6, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, pad_token_id=0)

# name -> (transformers config class, extra fields, dtype)
ARCHS: dict[str, tuple[str, dict, str]] = {
    "gqa": ("LlamaConfig", dict(num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2, head_dim=64),
            "float32"),
    "mha": ("Qwen3Config", dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, head_dim=64),
            "bfloat16"),
    "sliding": ("Gemma3TextConfig", dict(num_hidden_layers=6, num_attention_heads=4, num_key_value_heads=2, head_dim=64,
                                         sliding_window=256, sliding_window_pattern=3,
                                         layer_types=["sliding_attention", "sliding_attention", "full_attention"] * 2,
                                         query_pre_attn_scalar=64), "float32"),
    "moe": ("Qwen3MoeConfig", dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=64,
                                   num_experts=4, num_experts_per_tok=2, moe_intermediate_size=128,
                                   decoder_sparse_step=1, mlp_only_layers=[]), "float32"),
    "mla": ("DeepseekV3Config", dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
                                     kv_lora_rank=128, q_lora_rank=None, qk_rope_head_dim=64, qk_nope_head_dim=64,
                                     v_head_dim=64, head_dim=64, n_routed_experts=4, num_experts_per_tok=2,
                                     moe_intermediate_size=128, first_k_dense_replace=1, n_shared_experts=1,
                                     n_group=1, topk_group=1, topk_method="noaux_tc", rope_scaling=None), "bfloat16"),
}


def _stamp() -> str:
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def make_tokenizer(out: Path, extra: tuple[str, ...] = ()):  # -> PreTrainedTokenizerFast
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    special = ["<pad>", "<s>", "</s>", "<unk>", *extra]
    vocab = {t: i for i, t in enumerate(special)}
    for i in range(VOCAB - len(special)):
        vocab[f"w{i}"] = len(vocab)
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>",
                                   pad_token="<pad>", additional_special_tokens=list(extra) or None)
    fast.save_pretrained(str(out))
    return fast


def make_model(name: str) -> Path:
    out = CACHE / name
    stamp = out / "stamp"
    if stamp.exists() and stamp.read_text() == _stamp():
        return out
    import torch
    import transformers

    cls_name, extra, dtype = ARCHS[name]
    cfg_cls = getattr(transformers, cls_name)
    cfg = cfg_cls(**{**_COMMON, **extra})
    cfg.torch_dtype = dtype
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=getattr(torch, dtype))
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out), safe_serialization=True)
    make_tokenizer(out)
    stamp.write_text(_stamp())
    return out


# Tiny PaliGemma: a Gemma text model under a 2-layer SigLIP vision tower and a linear projector;
# 56x56 images of 14-pixel patches (16 image tokens), so the encoder profiling costs nothing.
# (LLaVA, Mistral3, Gemma 3, Qwen2-VL / Qwen2.5-VL / Qwen3-VL, InternVL import torchvision in
# vLLM 0.32 or its processors, which the CPU venv lacks; PaliGemma's do not.)
VL_IMAGE_TOKEN = "<image>"
VL_TEXT = dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=64, model_type="gemma",
               hidden_act="gelu_pytorch_tanh")
VL_VISION = dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=2, image_size=56,
                 patch_size=14, projection_dim=256, vision_use_head=False, model_type="siglip_vision_model")
# EAGLE-1 head for the gqa target: one Llama decoder layer of the target's shape and a 2h x h fc
# (the embedding is shared with the target, as vLLM does when the head has none).
SPEC_TOKENS = 2

# extra rows: name -> (target model dir, dtype, speculative method or None); built by make_row
ROWS: dict[str, tuple[str, str, str | None]] = {
    "vl": ("vl", "float32", None),
    "eagle": ("gqa", "float32", "eagle"),
}


def make_vl() -> Path:
    out = CACHE / "vl"
    stamp = out / "stamp"
    if stamp.exists() and stamp.read_text() == _stamp():
        return out
    import torch
    import transformers

    n_img = (VL_VISION["image_size"] // VL_VISION["patch_size"]) ** 2
    cfg = transformers.PaliGemmaConfig(text_config={**_COMMON, **VL_TEXT}, vision_config=VL_VISION,
                                       image_token_index=4, vocab_size=VOCAB, projection_dim=256, hidden_size=256,
                                       tie_word_embeddings=True)
    cfg.text_config.num_image_tokens = n_img
    cfg.vision_config.num_image_tokens = n_img
    cfg.torch_dtype = "float32"
    torch.manual_seed(0)
    model = transformers.PaliGemmaForConditionalGeneration(cfg).to(torch.float32)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out), safe_serialization=True)
    # transformers 5 writes the SigLIP tower as vision_tower.*; the published checkpoints (and
    # vLLM 0.32's loader) name it vision_tower.vision_model.*
    from safetensors.torch import load_file, save_file

    st = out / "model.safetensors"
    tensors = {(k.replace("vision_tower.", "vision_tower.vision_model.", 1)
                if k.startswith("vision_tower.") and not k.startswith("vision_tower.vision_model.") else k): v
               for k, v in load_file(str(st)).items()}
    save_file(tensors, str(st), metadata={"format": "pt"})
    fast = make_tokenizer(out, (VL_IMAGE_TOKEN, "\n"))  # PaliGemma ends the prompt with "\n"
    side = VL_VISION["image_size"]
    image = transformers.SiglipImageProcessorPil(size={"height": side, "width": side})
    image.image_seq_length = n_img
    proc = transformers.PaliGemmaProcessor(image_processor=image, tokenizer=fast,
                                           chat_template="{% for m in messages %}{{ m['content'] }}{% endfor %}")
    proc.save_pretrained(str(out))
    stamp.write_text(_stamp())
    return out


def make_eagle() -> Path:
    out = CACHE / "gqa-eagle"
    stamp = out / "stamp"
    if stamp.exists() and stamp.read_text() == _stamp():
        return out
    import torch
    import transformers
    from safetensors.torch import save_file

    cls_name, extra, dtype = ARCHS["gqa"]
    cfg = getattr(transformers, cls_name)(**{**_COMMON, **extra, "num_hidden_layers": 1})
    cfg.torch_dtype = dtype
    cfg.architectures = ["LlamaForCausalLM"]
    torch.manual_seed(1)
    layer = transformers.LlamaModel(cfg).layers[0]
    tensors = {f"layers.0.{k}": v.detach().clone().contiguous() for k, v in layer.state_dict().items()
               if "input_layernorm" not in k}  # EAGLE-1 skips the first layer's input norm
    h = cfg.hidden_size
    tensors["fc.weight"] = torch.randn(h, 2 * h) * 0.02
    out.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(out / "model.safetensors"))
    cfg.save_pretrained(str(out))
    stamp.write_text(_stamp())
    return out


def make_row(name: str) -> Path:
    """The target checkpoint of a row (and its draft), generated on first use."""
    if name in ARCHS:
        return make_model(name)
    target, _, method = ROWS[name]
    if method == "eagle":
        make_eagle()
    return make_vl() if target == "vl" else make_model(target)


def engine_kwargs(name: str) -> dict:
    target, dtype, method = ROWS[name] if name in ROWS else (name, ARCHS[name][2], None)
    kw: dict = dict(model=str(CACHE / target), max_model_len=MAX_LEN, dtype=dtype, enforce_eager=True,
                    max_num_seqs=16, max_num_batched_tokens=MAX_LEN, seed=0)
    if method == "eagle":
        kw["speculative_config"] = {"method": "eagle", "model": str(CACHE / "gqa-eagle"),
                                    "num_speculative_tokens": SPEC_TOKENS}
    if target == "vl":
        kw["limit_mm_per_prompt"] = {"image": 1}
    return kw


_VISION_PREFIXES = ("vision_tower.", "visual.", "vision_model.", "multi_modal_projector.")


def _hook_weights() -> None:
    """Print the parameter bytes of every model vLLM builds (target, then drafter), taken
    after its weights load and before the CPU backend repacks the linear weights into
    oneDNN handles (after that the parameters no longer show the weights): the CPU
    runner prints no "Model loading took" line of its own."""
    from vllm.model_executor.model_loader import base_loader

    orig = base_loader.process_weights_after_loading

    def counted(model, *args, **kwargs):  # vLLM's own signature
        parts = {"total": 0, "vision": 0, "embed": 0, "lm_head": 0}
        seen: set[int] = set()
        for pname, t in model.named_parameters():
            if id(t) in seen or t.is_meta:
                continue
            seen.add(id(t))
            n = t.numel() * t.element_size()
            parts["total"] += n
            if pname.startswith(_VISION_PREFIXES):
                parts["vision"] += n
            elif "embed_tokens" in pname:
                parts["embed"] += n
            elif "lm_head" in pname:
                parts["lm_head"] += n
        print("LAUNCHCARD_WEIGHTS " + json.dumps({"model": type(model).__name__, **parts}), flush=True)
        return orig(model, *args, **kwargs)

    base_loader.process_weights_after_loading = counted


def _stub_pixtral() -> None:
    """vLLM 0.32's get_vision_encoder_info (used by PaliGemma / LLaVA) imports its Pixtral module
    only to test ``isinstance(vision_config, PixtralVisionConfig)``, and that module needs
    torchvision, which the CPU venv lacks.  Without torchvision, stand in a module whose
    classes match no config: SigLIP / CLIP towers are unaffected."""
    import importlib.util
    import types

    if importlib.util.find_spec("torchvision") is not None:
        return
    stub = types.ModuleType("vllm.model_executor.models.pixtral")
    stub.PixtralVisionConfig = type("PixtralVisionConfig", (), {})  # type: ignore[attr-defined]
    stub.PixtralHFEncoderInfo = type("PixtralHFEncoderInfo", (), {})  # type: ignore[attr-defined]
    sys.modules[stub.__name__] = stub


def run_children(names: list[str]) -> None:
    """In one child process (vLLM imported once): start each engine in turn and
    let it log its KV cache size; a marker line splits the log per model.
    The CPU runner prints no "Model loading took" line, so the child prints the
    loaded models' parameter bytes itself (LAUNCHCARD_WEIGHTS, see _hook_weights)."""
    import gc
    import traceback

    from vllm import LLM

    _hook_weights()
    if any(engine_kwargs(n).get("limit_mm_per_prompt") for n in names):
        _stub_pixtral()
    for name in names:
        print(f"LAUNCHCARD_ARCH {name}", flush=True)
        try:
            llm = LLM(**engine_kwargs(name))
            del llm
        except Exception:  # noqa: BLE001 - report and go on with the next model
            traceback.print_exc()
        gc.collect()
        print(f"LAUNCHCARD_DONE {name}", flush=True)


_TOKENS = re.compile(r"KV cache size: ([\d,]+) tokens")
_WEIGHTS = re.compile(r"LAUNCHCARD_WEIGHTS (\{.*\})")


def measure(names: list[str], timeout: float = 180) -> dict:
    paths = {name: make_row(name) for name in names}
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(KV_GIB), "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
           "VLLM_CPU_CI_ENV": "1", "TOKENIZERS_PARALLELISM": "false", "VLLM_LOGGING_LEVEL": "INFO"}
    t0 = time.time()
    log = ""
    seconds: dict[str, float] = {}
    for name in names:  # one process per model: a second engine in one process can hang on CPU
        t1 = time.time()
        try:
            proc = subprocess.run([sys.executable, __file__, "--child", name], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, env=env, timeout=timeout, cwd=str(ROOT))
            log += proc.stdout
        except subprocess.TimeoutExpired as exc:
            out_txt = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            log += f"LAUNCHCARD_ARCH {name}\ntimeout after {timeout}s\n{out_txt}\nLAUNCHCARD_DONE {name}\n"
        seconds[name] = round(time.time() - t1, 1)
    # one merged stream, cut at the markers the child prints around each model
    out: dict = {}
    for name in names:
        m = re.search(rf"LAUNCHCARD_ARCH {name}\n(.*?)(LAUNCHCARD_DONE {name}|$)", log, re.S)
        seg = m.group(1) if m else ""
        hits = _TOKENS.findall(seg)
        weights = _WEIGHTS.findall(seg)
        kw = engine_kwargs(name)
        spec = kw.get("speculative_config") or {}
        out[name] = {"config": str(paths[name] / "config.json"),
                     "tokens": int(hits[-1].replace(",", "")) if hits else None,
                     "max_model_len": MAX_LEN, "dtype": kw["dtype"], "kv_gib": KV_GIB,
                     "max_num_batched_tokens": MAX_LEN, "max_num_seqs": 16,
                     "speculative_method": spec.get("method"),
                     "num_speculative_tokens": spec.get("num_speculative_tokens", 0),
                     "weights": [json.loads(w) for w in weights],  # target, then drafter
                     "seconds": seconds.get(name),
                     "log": "" if hits else (seg[-2500:] or log[-2500:])}
    out["_seconds"] = round(time.time() - t0, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=",".join([*ARCHS, *ROWS]))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--child")
    args = ap.parse_args(argv)
    if args.child:
        run_children(args.child.split(","))
        return 0
    results = measure([n for n in args.only.split(",") if n])
    text = json.dumps(results, indent=2)
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
