"""Assumes the query, key and value projections always have a bias (every nn.Linear has one
by default), ignoring cfg["qkv_bias"]."""
# expect-failing: when qkv_bias is False


def feedforward_params(cfg):
    emb = cfg["emb_dim"]
    return 8 * emb * emb + 5 * emb


def attention_params(cfg):
    emb = cfg["emb_dim"]
    return 4 * (emb * emb + emb)
