"""4.2 with a real bug (it changes reference.GPT_CONFIG_124M in place), hidden by binding
``reference.GPT_CONFIG_124M`` to a copy saved before the change. The worker reads the dict it
held from before this file ran, whatever the name is bound to now: no more points than the
same bug without the lie."""

# exercise: 4.2
# expect-status: failed
# expect-message: reference.GPT_CONFIG_124M itself had changed

import reference
from reference import GPT_CONFIG_124M, GPTModel

_saved = dict(GPT_CONFIG_124M)
_SIZES = {
    "small": (768, 12, 12),
    "medium": (1024, 24, 16),
    "large": (1280, 36, 20),
    "xl": (1600, 48, 25),
}

GPT2_CONFIGS = {
    name: {**GPT_CONFIG_124M, "emb_dim": emb, "n_layers": layers, "n_heads": heads}
    for name, (emb, layers, heads) in _SIZES.items()
}
GPT_CONFIG_124M["emb_dim"] = 1600  # the bug
reference.GPT_CONFIG_124M = _saved  # the lie


def total_params(cfg):
    return sum(p.numel() for p in GPTModel(cfg).parameters())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
