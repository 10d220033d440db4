"""Names the changed keys num_heads and num_layers, as the student's own config does, next to
the book's n_heads and n_layers: every config keeps GPT-2 small's depth and heads, with two
extra keys GPTModel never reads."""
# seen-in: public code, find_string id 36575106585 (GPT_CONFIG_124M and MODEL_CONFIGS with
# seen-in: "num_heads" and "num_layers")
# cause: missing-config-key
# cause-words: num_heads
# cause-words: num_layers
# expect-failing: GPT2_CONFIGS holds the four sizes

import torch

from reference import GPT_CONFIG_124M, GPTModel

MODEL_CONFIGS = {
    "small": {"emb_dim": 768, "num_layers": 12, "num_heads": 12},
    "medium": {"emb_dim": 1024, "num_layers": 24, "num_heads": 16},
    "large": {"emb_dim": 1280, "num_layers": 36, "num_heads": 20},
    "xl": {"emb_dim": 1600, "num_layers": 48, "num_heads": 25},
}
GPT2_CONFIGS = {name: {**GPT_CONFIG_124M, **sizes} for name, sizes in MODEL_CONFIGS.items()}


def total_params(cfg):
    with torch.device("meta"):
        return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
