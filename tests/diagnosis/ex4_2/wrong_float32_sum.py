"""Adds the parameter counts up in a float32 NumPy sum: exact for small models, but float32 keeps
24 bits of mantissa, so counts above 2**24 come out rounded (and returned as a float)."""
# seen-in: public code, find_string id 12962965282 (a parameter count turned into floats,
# seen-in: round(total_params / 1e6, 1)); issue 41's survey ("float32 tensors cannot hold the
# seen-in: count exactly")
# cause: inexact-count
# cause-words: exact, int
# expect-failing: total_params is exact for the four GPT-2 sizes and larger configs

import numpy as np

from reference import GPT_CONFIG_124M, GPTModel

GPT2_CONFIGS = {
    name: {**GPT_CONFIG_124M, "emb_dim": e, "n_layers": n, "n_heads": h}
    for name, (e, n, h) in {
        "small": (768, 12, 12),
        "medium": (1024, 24, 16),
        "large": (1280, 36, 20),
        "xl": (1600, 48, 25),
    }.items()
}


def total_params(cfg):
    counts = np.array([p.numel() for p in GPTModel(cfg).parameters()], dtype=np.float32)
    return float(np.cumsum(counts, dtype=np.float32)[-1])


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
