"""Build, train and cache the tiny chat model the live tests serve with vLLM.

Run with the vLLM venv's python (it has torch, transformers, tokenizers):

    .cache/vllm-venv/bin/python scripts/make_tiny_model.py --out .cache/tiny-model

Why train at all: a model with random weights never calls a tool or opens a
reasoning block, and a check that passes only because the test forced the
output proves nothing.  So the model learns, on the CPU in a minute or two, a
handful of fixed conversations: a hermes-style ``<tool_call>`` for weather
questions and a ``<think>...</think>`` block before every other answer.  The
prompts match the ones ``launchcard verify`` sends, rendered through the same
chat template vLLM uses, so greedy decoding reproduces them for real.

The result lives in ``<out>/model`` and is reused while ``<out>/stamp`` holds
the sha256 of this file; editing the script rebuilds it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

# Llama-style, head_dim 64 (the CPU attention refuses 16), tiny everywhere else.
HIDDEN = 128
HEADS = 2
LAYERS = 2
INTERMEDIATE = 384
VOCAB = 640
MAX_POS = 1024
SEED = 1234

def _weather_tool() -> dict:
    """launchcard.prompts' tool definition, loaded by path (launchcard is not installed in the vLLM venv)."""
    import runpy

    tools = Path(__file__).resolve().parents[1] / "src" / "launchcard" / "prompts.py"
    return runpy.run_path(str(tools))["WEATHER_TOOL"]


WEATHER_TOOL = _weather_tool()

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Not "special": vLLM's hermes and reasoning parsers look for them in the
# decoded text, which drops special tokens.
MARKERS = ["<tool_call>", "</tool_call>", "<think>", "</think>"]

CHAT_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\n"
    "{%- if messages[0].role == 'system' %}{{ messages[0].content }}\n{% endif %}"
    "You may call these tools:\n<tools>\n"
    "{%- for t in tools %}{%- set f = t.function if t.function is defined else t %}"
    "{{ f.name }}: {{ f.description }}\n{%- endfor %}</tools>\n"
    "Reply with <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>.<|im_end|>\n"
    "{%- elif messages[0].role == 'system' %}<|im_start|>system\n{{ messages[0].content }}<|im_end|>\n"
    "{%- endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'user' %}<|im_start|>user\n{{ m.content }}<|im_end|>\n"
    "{%- elif m.role == 'assistant' %}<|im_start|>assistant\n"
    "{%- if m.content %}{{ m.content }}{% endif %}"
    "{%- if m.tool_calls %}{%- for tc in m.tool_calls %}{%- set fn = tc.function if tc.function is defined else tc %}"
    "<tool_call>{\"name\": \"{{ fn.name }}\", \"arguments\": "
    "{{ fn.arguments if fn.arguments is string else fn.arguments | tojson }}}</tool_call>"
    "{%- endfor %}{%- endif %}<|im_end|>\n"
    "{%- elif m.role == 'tool' %}<|im_start|>user\n<tool_response>{{ m.content }}</tool_response><|im_end|>\n"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _weather(city: str) -> str:
    call = json.dumps({"name": "get_weather", "arguments": {"city": city}})
    return f"<think>\nThe user asks about weather, so I call the tool.\n</think>\n\n<tool_call>{call}</tool_call>"


def _answer(thought: str, text: str) -> str:
    return f"<think>\n{thought}\n</think>\n\n{text}"


# (messages, with_tools, assistant text).  The first prompts are exactly the
# ones launchcard.verify sends.
CONVERSATIONS: list[tuple[list[dict[str, str]], bool, str]] = [
    ([{"role": "user", "content": "What is the weather in Paris right now?"}], True, _weather("Paris")),
    ([{"role": "user", "content": "What is the weather in Tokyo?"}], True, _weather("Tokyo")),
    ([{"role": "user", "content": "Is it raining in London today?"}], True, _weather("London")),
    ([{"role": "user", "content": "How is the weather in Berlin?"}], True, _weather("Berlin")),
    ([{"role": "user", "content": "What is 2 + 2? Answer briefly."}], False,
     _answer("Two plus two is four.", "2 + 2 = 4.")),
    ([{"role": "user", "content": "What is 2 + 2? Answer briefly."}], True,
     _answer("Two plus two is four; no tool is needed.", "2 + 2 = 4.")),
    ([{"role": "user", "content": "Say hello."}], False, _answer("A greeting is asked for.", "Hello! How can I help?")),
    ([{"role": "user", "content": "Name a colour."}], False, _answer("Any colour will do.", "Blue.")),
    ([{"role": "user", "content": "Count from one to five."}], False,
     _answer("Counting is easy.", "One, two, three, four, five.")),
    ([{"role": "system", "content": "You are terse."}, {"role": "user", "content": "What is the capital of France?"}],
     False, _answer("France's capital is Paris.", "Paris.")),
    ([{"role": "user", "content": "Write one word."}], False, _answer("One word only.", "Ocean.")),
]


def script_hash() -> str:
    tools = Path(__file__).resolve().parents[1] / "src" / "launchcard" / "prompts.py"
    return hashlib.sha256(Path(__file__).read_bytes() + tools.read_bytes()).hexdigest()


def build_tokenizer(out: Path):
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = []
    for messages, _, answer in CONVERSATIONS:
        corpus.extend(m["content"] for m in messages)
        corpus.append(answer)
    corpus.append(CHAT_TEMPLATE)
    corpus.append(json.dumps(WEATHER_TOOL))
    # A little general text so arbitrary prompts (bench) tokenize sensibly.
    corpus.append("the quick brown fox jumps over the lazy dog 0123456789 " * 4)

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB - len(MARKERS), special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    tok.add_tokens([AddedToken(m, special=False, normalized=False) for m in MARKERS])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|im_end|>",
        pad_token="<|endoftext|>", unk_token=None)
    fast.chat_template = CHAT_TEMPLATE
    fast.model_max_length = MAX_POS
    fast.save_pretrained(out)
    return fast


def examples(tok) -> list[tuple[list[int], int]]:
    """Token ids of each conversation and where the assistant's answer starts."""
    rows = []
    for messages, with_tools, answer in CONVERSATIONS:
        prompt = tok.apply_chat_template(
            messages, tools=[WEATHER_TOOL] if with_tools else None,
            add_generation_prompt=True, tokenize=False)
        p_ids = tok.encode(prompt, add_special_tokens=False)
        a_ids = tok.encode(answer + "<|im_end|>", add_special_tokens=False)
        rows.append((p_ids + a_ids, len(p_ids)))
    return rows


def train(model, rows, *, seconds: float, max_steps: int) -> tuple[int, float]:
    import torch

    width = max(len(ids) for ids, _ in rows)
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    mask = torch.zeros(len(rows), width, dtype=torch.long)
    for i, (row, start) in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = 1
        labels[i, start : len(row)] = torch.tensor(row[start:])  # loss on the answer only
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    model.train()
    began = time.monotonic()
    step, loss_v = 0, float("inf")
    while step < max_steps and time.monotonic() - began < seconds:
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        loss_v = float(loss)
        if step % 25 == 0:
            print(f"step {step} loss {loss_v:.4f}", flush=True)
        if loss_v < 0.002:
            break
    model.eval()
    return step, loss_v


def check(model, tok, rows) -> int:
    """Greedy-decode every prompt; return how many reproduce their answer."""
    import torch

    good = 0
    for row, start in rows:
        prompt = torch.tensor([row[:start]])
        with torch.no_grad():
            out = model.generate(prompt, max_new_tokens=len(row) - start + 2, do_sample=False,
                                 eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
        good += out[0, start:].tolist()[: len(row) - start] == row[start:]
    return good


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=".cache/tiny-model")
    ap.add_argument("--seconds", type=float, default=240.0, help="training time limit")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args(argv)
    out = Path(args.out)
    stamp = out / "stamp"
    digest = script_hash()
    if not args.force and stamp.is_file() and stamp.read_text().strip() == digest and (out / "model").is_dir():
        print(f"tiny model cached at {out / 'model'}")
        return 0

    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(SEED)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    tmp = out / "model.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    tok = build_tokenizer(tmp)
    rows = examples(tok)
    longest = max(len(r) for r, _ in rows)
    print(f"{len(rows)} conversations, longest {longest} tokens, vocab {len(tok)}", flush=True)
    config = LlamaConfig(
        vocab_size=len(tok), hidden_size=HIDDEN, intermediate_size=INTERMEDIATE,
        num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=HEADS,
        head_dim=HIDDEN // HEADS, max_position_embeddings=MAX_POS, rms_norm_eps=1e-6,
        tie_word_embeddings=True, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id, torch_dtype="float32")
    model = LlamaForCausalLM(config)
    began = time.monotonic()
    steps, loss = train(model, rows, seconds=args.seconds, max_steps=600)
    good = check(model, tok, rows)
    print(f"trained {steps} steps in {time.monotonic() - began:.0f}s, loss {loss:.4f}, "
          f"{good}/{len(rows)} answers reproduced greedily", flush=True)
    if good < len(rows):
        print("error: the tiny model did not learn every conversation; raise --seconds", file=sys.stderr)
        return 1
    model.save_pretrained(tmp, safe_serialization=True)
    model.generation_config.save_pretrained(tmp)
    final = out / "model"
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    stamp.write_text(digest + "\n")
    print(f"tiny model written to {final}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
