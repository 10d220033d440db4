"""Keeps the four totals the notebook printed and looks them up by width: right for GPT-2 small
to XL, wrong for any other config."""
# seen-in: seed 002 In[11]-In[21] (prints 163,009,536 / 406,212,608 / 838,220,800 / 1,637,792,000,
# seen-in: one model at a time, deleting each)
# cause: hard-coded
# cause-words: cfg
# cause-words: hard
# expect-failing: total_params is the parameter count of GPTModel(cfg), for any config

from reference import GPT_CONFIG_124M

GPT2_CONFIGS = {}
for name, e, n, h in [
    ("small", 768, 12, 12),
    ("medium", 1024, 24, 16),
    ("large", 1280, 36, 20),
    ("xl", 1600, 48, 25),
]:
    GPT2_CONFIGS[name] = {**GPT_CONFIG_124M, "emb_dim": e, "n_layers": n, "n_heads": h}

PRINTED = {768: 163_009_536, 1024: 406_212_608, 1280: 838_220_800, 1600: 1_637_792_000}


def total_params(cfg):
    return PRINTED[cfg["emb_dim"]]


def model_size_mb(cfg):
    return total_params(cfg) * 4 / (1024 * 1024)
