"""Returns the size rounded to two decimals, as the book prints it (f"{size:.2f} MB"): the
function must return the value itself; small models round to 0.0."""
# expect-failing: model_size_mb
# expect-no-hint: not 10**6

from reference import GPT_CONFIG_124M, GPTModel

GPT2_CONFIGS = {
    name: {**GPT_CONFIG_124M, "emb_dim": e, "n_layers": n, "n_heads": h}
    for name, (e, n, h) in {"small": (768, 12, 12), "medium": (1024, 24, 16),
                            "large": (1280, 36, 20), "xl": (1600, 48, 25)}.items()
}


def total_params(cfg):
    return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    return round(total_params(cfg) * 4 / (1024 * 1024), 2)
