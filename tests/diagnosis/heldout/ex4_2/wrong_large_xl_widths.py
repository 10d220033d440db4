"""Shifts the widths by one size: large gets medium's 1024 and XL gets large's 1280, while the
depths and head counts are right."""
# seen-in: public code, find_string id 36575106585 (MODEL_CONFIGS with "gpt2-large(774M)":
# seen-in: emb_dim 1024 and "gpt2-xl(1558M)": emb_dim 1280)
# cause: config-values
# cause-words: emb_dim, 1280
# cause-words: emb_dim, 1600
# cause-words: emb_dim, large
# expect-failing: GPT2_CONFIGS holds the four sizes

import torch

from reference import GPT_CONFIG_124M, GPTModel

GPT2_CONFIGS = {}
for name, emb_dim, n_layers, n_heads in (
    ("small", 768, 12, 12),
    ("medium", 1024, 24, 16),
    ("large", 1024, 36, 20),
    ("xl", 1280, 48, 25),
):
    GPT2_CONFIGS[name] = dict(GPT_CONFIG_124M, emb_dim=emb_dim, n_layers=n_layers, n_heads=n_heads)


def total_params(cfg):
    with torch.device("meta"):
        return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / 1024**2
