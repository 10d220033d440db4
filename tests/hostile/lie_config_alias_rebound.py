"""4.2 with a real bug (GPT2_CONFIGS["small"] is GPT_CONFIG_124M itself, not a copy), hidden by
binding ``reference.GPT_CONFIG_124M`` and this file's own name to a copy, so that the dict in
GPT2_CONFIGS looks like no config of the reference's. The worker compares with the dict it held
from before this file ran: no more points than the same bug without the lie."""

# exercise: 4.2
# expect-status: failed
# expect-message: is GPT_CONFIG_124M itself, not a copy

import reference
from reference import GPT_CONFIG_124M, GPTModel

_SIZES = {
    "medium": (1024, 24, 16),
    "large": (1280, 36, 20),
    "xl": (1600, 48, 25),
}

GPT2_CONFIGS = {"small": GPT_CONFIG_124M}  # the bug
GPT2_CONFIGS.update(
    {
        name: {**GPT_CONFIG_124M, "emb_dim": emb, "n_layers": layers, "n_heads": heads}
        for name, (emb, layers, heads) in _SIZES.items()
    }
)
reference.GPT_CONFIG_124M = GPT_CONFIG_124M = dict(GPT_CONFIG_124M)  # the lie


def total_params(cfg):
    return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
