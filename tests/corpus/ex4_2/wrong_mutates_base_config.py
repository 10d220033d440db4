"""Assigns cfg = GPT_CONFIG_124M (no copy) and changes it for each size: all four entries are
the same dict (the XL one) and GPT_CONFIG_124M itself is changed."""
# expect-failing: GPT2_CONFIGS holds the four sizes
# expect-failing: GPT_CONFIG_124M itself is left unchanged

from reference import GPT_CONFIG_124M, GPTModel

GPT2_CONFIGS = {}
for name, (emb, layers, heads) in [("small", (768, 12, 12)), ("medium", (1024, 24, 16)),
                                   ("large", (1280, 36, 20)), ("xl", (1600, 48, 25))]:
    cfg = GPT_CONFIG_124M
    cfg["emb_dim"], cfg["n_layers"], cfg["n_heads"] = emb, layers, heads
    GPT2_CONFIGS[name] = cfg


def total_params(cfg):
    return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
