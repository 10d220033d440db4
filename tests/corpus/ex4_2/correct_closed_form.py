"""A closed formula for the book's GPTModel instead of instantiating it: embeddings, n_layers
blocks (attention, feed-forward, two LayerNorms), final LayerNorm, untied output head."""

from reference import GPT_CONFIG_124M

GPT2_CONFIGS = {
    "small": dict(GPT_CONFIG_124M, emb_dim=768, n_layers=12, n_heads=12),
    "medium": dict(GPT_CONFIG_124M, emb_dim=1024, n_layers=24, n_heads=16),
    "large": dict(GPT_CONFIG_124M, emb_dim=1280, n_layers=36, n_heads=20),
    "xl": dict(GPT_CONFIG_124M, emb_dim=1600, n_layers=48, n_heads=25),
}


def total_params(cfg):
    v, c, e, n = cfg["vocab_size"], cfg["context_length"], cfg["emb_dim"], cfg["n_layers"]
    attention = 3 * (e * e + (e if cfg["qkv_bias"] else 0)) + e * e + e
    feed_forward = 8 * e * e + 5 * e
    block = attention + feed_forward + 2 * (2 * e)
    return v * e + c * e + n * block + 2 * e + e * v


def model_size_mb(cfg):
    return total_params(cfg) * 4 / 1024**2
