"""Divides the bytes by 10**6 (decimal megabytes) instead of 1024 * 1024."""
# expect-failing: model_size_mb
# expect-hint: not 10**6

from reference import GPT_CONFIG_124M, GPTModel

GPT2_CONFIGS = {
    name: {**GPT_CONFIG_124M, "emb_dim": e, "n_layers": n, "n_heads": h}
    for name, (e, n, h) in {"small": (768, 12, 12), "medium": (1024, 24, 16),
                            "large": (1280, 36, 20), "xl": (1600, 48, 25)}.items()
}


def total_params(cfg):
    return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / 1e6
