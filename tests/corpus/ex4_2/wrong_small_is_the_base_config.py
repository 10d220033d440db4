"""GPT-2 small's config is GPT_CONFIG_124M itself, not a copy: the values are right, but the
two names hold one dict, so changing GPT2_CONFIGS["small"] changes GPT_CONFIG_124M (and every
config later copied from it). The other three sizes are proper copies."""
# expect-failing: each GPT_CONFIG_124M with only emb_dim
# expect-message: GPT2_CONFIGS['small'] is GPT_CONFIG_124M itself, not a copy

from reference import GPT_CONFIG_124M, GPTModel

GPT2_CONFIGS = {
    "small": GPT_CONFIG_124M,  # already 768/12/12
    "medium": {**GPT_CONFIG_124M, "emb_dim": 1024, "n_layers": 24, "n_heads": 16},
    "large": {**GPT_CONFIG_124M, "emb_dim": 1280, "n_layers": 36, "n_heads": 20},
    "xl": {**GPT_CONFIG_124M, "emb_dim": 1600, "n_layers": 48, "n_heads": 25},
}


def total_params(cfg):
    return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
