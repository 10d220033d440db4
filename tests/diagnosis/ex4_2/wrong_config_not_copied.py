"""A helper that 'copies' the base config by assignment: every call changes GPT_CONFIG_124M
itself, and all four entries are the same dict, which ends up as XL."""
# seen-in: public code, find_string id 53789898195 (config = GPT_CONFIG_124M, an alias used as a
# seen-in: model's config)
# seen-in: the exercise's own hint ("changing a copy leaves the original alone")
# cause: config-not-copied
# cause-words: copy
# expect-failing: GPT2_CONFIGS holds the four sizes, each GPT_CONFIG_124M with only emb_dim

from reference import GPT_CONFIG_124M


def scaled(emb_dim, n_layers, n_heads):
    cfg = GPT_CONFIG_124M
    cfg["emb_dim"] = emb_dim
    cfg["n_layers"] = n_layers
    cfg["n_heads"] = n_heads
    return cfg


GPT2_CONFIGS = {
    "small": scaled(768, 12, 12),
    "medium": scaled(1024, 24, 16),
    "large": scaled(1280, 36, 20),
    "xl": scaled(1600, 48, 25),
}


def total_params(cfg):
    e, v, c, n = cfg["emb_dim"], cfg["vocab_size"], cfg["context_length"], cfg["n_layers"]
    qkv = 3 * e * e + (3 * e if cfg["qkv_bias"] else 0)
    block = qkv + (e * e + e) + (8 * e * e + 5 * e) + 4 * e
    return v * e + c * e + n * block + 2 * e + e * v


def model_size_mb(cfg):
    return total_params(cfg) * 4 / 1024**2
