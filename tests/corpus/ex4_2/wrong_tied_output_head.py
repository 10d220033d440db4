"""Subtracts the output head as GPT-2 does with weight tying (the book's 124M discussion):
the book's GPTModel does not tie them, so its count includes out_head."""
# expect-failing: total_params is the parameter count of GPTModel(cfg), for any config
# expect-failing: total_params is exact for the four GPT-2 sizes
# expect-failing: model_size_mb

from reference import GPT_CONFIG_124M, GPTModel

GPT2_CONFIGS = {
    name: {**GPT_CONFIG_124M, "emb_dim": e, "n_layers": n, "n_heads": h}
    for name, (e, n, h) in {"small": (768, 12, 12), "medium": (1024, 24, 16),
                            "large": (1280, 36, 20), "xl": (1600, 48, 25)}.items()
}


def total_params(cfg):
    model = GPTModel(cfg)
    total = sum(p.numel() for p in model.parameters())
    return total - sum(p.numel() for p in model.out_head.parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
