"""Instructor solution 4.2: configs as copies of the 124M one; count a real model."""

from reference import GPT_CONFIG_124M, GPTModel

_SIZES = {
    "small": (768, 12, 12),
    "medium": (1024, 24, 16),
    "large": (1280, 36, 20),
    "xl": (1600, 48, 25),
}

GPT2_CONFIGS = {
    name: {**GPT_CONFIG_124M, "emb_dim": emb, "n_layers": layers, "n_heads": heads}
    for name, (emb, layers, heads) in _SIZES.items()
}


def total_params(cfg):
    return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
