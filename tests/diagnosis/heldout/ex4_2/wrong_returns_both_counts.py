"""A closed form that is right, returned as a pair: the full count and the count 'considering
weight tying' together, where total_params must return one int."""
# seen-in: public code, find_string id 70634532933 (a closed-form count ending in
# seen-in: return [total, total - lm_head])
# cause: return-type
# cause-words: list
# cause-words: one int
# expect-failing: total_params is the parameter count of GPTModel(cfg), for any config

from reference import GPT_CONFIG_124M

GPT2_CONFIGS = {
    name: {**GPT_CONFIG_124M, "emb_dim": e, "n_layers": n, "n_heads": h}
    for name, e, n, h in (
        ("small", 768, 12, 12),
        ("medium", 1024, 24, 16),
        ("large", 1280, 36, 20),
        ("xl", 1600, 48, 25),
    )
}


def total_params(cfg):
    v, d = cfg["vocab_size"], cfg["emb_dim"]
    embeddings = v * d + cfg["context_length"] * d
    qkv = 3 * d * d + (3 * d if cfg["qkv_bias"] else 0)
    block = qkv + (d * d + d) + (8 * d * d + 5 * d) + 4 * d
    out_head = v * d
    total = embeddings + cfg["n_layers"] * block + 2 * d + out_head
    return [total, total - out_head]


def model_size_mb(cfg):
    return total_params(cfg)[0] * 4 / (1024 * 1024)
