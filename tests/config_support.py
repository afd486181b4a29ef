"""Model configs written out in tests (config.json as the Hub serves it), shared so each is stated once."""

from __future__ import annotations

# meta-llama/Llama-3.1-8B-Instruct's config.json (the fields the memory planner and the predictor read)
LLAMA8B: dict[str, object] = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "intermediate_size": 14336,
    "max_position_embeddings": 131072, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
