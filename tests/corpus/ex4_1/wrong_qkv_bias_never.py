"""Assumes qkv_bias is False as in GPT_CONFIG_124M (seed 004's hand count:
768 * 768 * 3 + 768 * 768 + 768), ignoring cfg["qkv_bias"]."""
# expect-failing: when qkv_bias is True


def feedforward_params(cfg):
    emb = cfg["emb_dim"]
    return 8 * emb * emb + 5 * emb


def attention_params(cfg):
    emb = cfg["emb_dim"]
    return emb * emb * 3 + emb * emb + emb
