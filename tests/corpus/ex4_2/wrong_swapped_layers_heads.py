"""Swaps n_layers and n_heads for GPT-2 medium (24 heads, 16 layers): easy to do when
copying the table, invisible to a total that is computed from the config."""
# expect-failing: GPT2_CONFIGS holds the four sizes

from reference import GPT_CONFIG_124M, GPTModel

GPT2_CONFIGS = {
    "small": {**GPT_CONFIG_124M, "emb_dim": 768, "n_layers": 12, "n_heads": 12},
    "medium": {**GPT_CONFIG_124M, "emb_dim": 1024, "n_layers": 16, "n_heads": 24},
    "large": {**GPT_CONFIG_124M, "emb_dim": 1280, "n_layers": 36, "n_heads": 20},
    "xl": {**GPT_CONFIG_124M, "emb_dim": 1600, "n_layers": 48, "n_heads": 25},
}


def total_params(cfg):
    return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
