"""Looks the four counts printed in seed 002 up by emb_dim instead of computing them: right
for the book's four configs, wrong for any other."""
# expect-failing: total_params is the parameter count of GPTModel(cfg), for any config
# expect-failing: model_size_mb

from reference import GPT_CONFIG_124M

GPT2_CONFIGS = {
    "small": {**GPT_CONFIG_124M, "emb_dim": 768, "n_layers": 12, "n_heads": 12},
    "medium": {**GPT_CONFIG_124M, "emb_dim": 1024, "n_layers": 24, "n_heads": 16},
    "large": {**GPT_CONFIG_124M, "emb_dim": 1280, "n_layers": 36, "n_heads": 20},
    "xl": {**GPT_CONFIG_124M, "emb_dim": 1600, "n_layers": 48, "n_heads": 25},
}
COUNTS = {768: 163_009_536, 1024: 406_212_608, 1280: 838_220_800, 1600: 1_637_792_000}


def total_params(cfg):
    return COUNTS.get(cfg["emb_dim"], 0)


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
