"""Starts the four sizes from the config the book uses to load OpenAI's weights (qkv_bias True,
drop_rate 0.0) instead of GPT_CONFIG_124M: every size gets query, key and value biases."""
# seen-in: supraja777/GPT-From-Scratch gpt_config.py (BASE_CONFIG with "drop_rate": 0.0,
# seen-in: "qkv_bias": True, updated with model_configs[...])
# seen-in: public code, find_string id 36575106585 (BASE_CONFIG with "qkv_bias": True next to
# seen-in: the four sizes)
# cause: config-values
# cause-words: qkv_bias
# expect-failing: GPT2_CONFIGS holds the four sizes

import torch

from reference import GPTModel

BASE_CONFIG = {
    "vocab_size": 50257,
    "context_length": 1024,
    "drop_rate": 0.0,
    "qkv_bias": True,
}
model_configs = {
    "small": {"emb_dim": 768, "n_layers": 12, "n_heads": 12},
    "medium": {"emb_dim": 1024, "n_layers": 24, "n_heads": 16},
    "large": {"emb_dim": 1280, "n_layers": 36, "n_heads": 20},
    "xl": {"emb_dim": 1600, "n_layers": 48, "n_heads": 25},
}
GPT2_CONFIGS = {name: {**BASE_CONFIG, **size} for name, size in model_configs.items()}


def total_params(cfg):
    with torch.device("meta"):
        return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
