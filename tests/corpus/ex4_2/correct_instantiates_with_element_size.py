"""Instantiates every model for real, as seed 002 did (it ran out of memory on Colab for XL):
configs via deepcopy + update, bytes from element_size() rather than a hard-coded 4."""

import copy

from reference import GPT_CONFIG_124M, GPTModel

GPT2_CONFIGS = {}
for name, (emb, layers, heads) in {
    "small": (768, 12, 12),
    "medium": (1024, 24, 16),
    "large": (1280, 36, 20),
    "xl": (1600, 48, 25),
}.items():
    cfg = copy.deepcopy(GPT_CONFIG_124M)
    cfg.update({"emb_dim": emb, "n_layers": layers, "n_heads": heads})
    GPT2_CONFIGS[name] = cfg


def total_params(cfg):
    model = GPTModel(cfg)
    return sum(p.numel() for p in model.parameters())


def model_size_mb(cfg):
    model = GPTModel(cfg)
    total_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    return total_bytes / (1024 * 1024)
