"""Types GPT-2 XL's depth and head count the wrong way round (48 heads, 25 layers): 1600 is not
divisible by 48, and the other sizes are right."""
# seen-in: rasbt/LLMs-from-scratch issue 444 (SeriousJ55: "I swapped the number of layers with
# seen-in: the number of heads" for gpt2-xl, d_out=1600 and num_heads=48)
# cause: config-values
# cause-words: n_heads, xl
# cause-words: n_heads, 25
# cause-words: swap
# expect-failing: GPT2_CONFIGS holds the four sizes

import torch

from reference import GPT_CONFIG_124M, GPTModel

SIZES = {
    "small": dict(emb_dim=768, n_layers=12, n_heads=12),
    "medium": dict(emb_dim=1024, n_layers=24, n_heads=16),
    "large": dict(emb_dim=1280, n_layers=36, n_heads=20),
    "xl": dict(emb_dim=1600, n_layers=25, n_heads=48),
}
GPT2_CONFIGS = {name: {**GPT_CONFIG_124M, **size} for name, size in SIZES.items()}


def total_params(cfg):
    with torch.device("meta"):
        model = GPTModel(cfg)
    return sum(p.numel() for p in model.parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
