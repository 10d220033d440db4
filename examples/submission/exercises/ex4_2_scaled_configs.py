"""Example student answer to 4.2 (wrong size unit): megabytes of 10^6 bytes."""

import copy

from reference import GPT_CONFIG_124M, GPTModel

GPT2_CONFIGS = {}
for name, emb, layers, heads in [
    ("small", 768, 12, 12),
    ("medium", 1024, 24, 16),
    ("large", 1280, 36, 20),
    ("xl", 1600, 48, 25),
]:
    cfg = copy.deepcopy(GPT_CONFIG_124M)
    cfg.update(emb_dim=emb, n_layers=layers, n_heads=heads)
    GPT2_CONFIGS[name] = cfg


def total_params(cfg):
    return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / 1e6
