"""Counts the state_dict's tensors, so every block's causal mask (context_length squared) is
counted as if it were parameters."""
# seen-in: public code, find_string ids 71503644600 and 61980050843 (model sizes from sum(p.numel()
# seen-in: for p in model.state_dict().values()))
# cause: mask-counted
# cause-words: mask
# expect-failing: total_params is the parameter count of GPTModel(cfg), for any config

from reference import GPT_CONFIG_124M, GPTModel

GPT2_CONFIGS = {
    name: {**GPT_CONFIG_124M, "emb_dim": e, "n_layers": n, "n_heads": h}
    for name, (e, n, h) in {
        "small": (768, 12, 12),
        "medium": (1024, 24, 16),
        "large": (1280, 36, 20),
        "xl": (1600, 48, 25),
    }.items()
}


def total_params(cfg):
    return sum(t.numel() for t in GPTModel(cfg).state_dict().values())


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
