"""Builds the four sizes on the student's own copy of the 124M config, whose context length was
shortened to 256 for training on a laptop: every size's position embedding is four times too
small."""
# seen-in: nikitaefremove/BUILD_LLM_BOOK src/core/model_config.py (GPT_CONFIG_124M with
# seen-in: "context_length": 256)
# seen-in: public code, search result GPT2_SMALL_124M / GPT2_MEDIUM_355M (each size written out
# seen-in: with "context_length": 256)
# cause: config-values
# cause-words: context_length
# expect-failing: GPT2_CONFIGS holds the four sizes

import torch

from reference import GPTModel

GPT_CONFIG_124M = {
    "vocab_size": 50257,
    "context_length": 256,
    "emb_dim": 768,
    "n_heads": 12,
    "n_layers": 12,
    "drop_rate": 0.1,
    "qkv_bias": False,
}


def _size(emb_dim, n_layers, n_heads):
    cfg = GPT_CONFIG_124M.copy()
    cfg.update(emb_dim=emb_dim, n_layers=n_layers, n_heads=n_heads)
    return cfg


GPT2_CONFIGS = {
    "small": _size(768, 12, 12),
    "medium": _size(1024, 24, 16),
    "large": _size(1280, 36, 20),
    "xl": _size(1600, 48, 25),
}


def total_params(cfg):
    with torch.device("meta"):
        return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
