"""Gets the 4 * emb_dim hidden width right for the weights but gives both linear layers a
bias of emb_dim values (the first one's bias has 4 * emb_dim)."""
# expect-failing: feedforward_params counts


def feedforward_params(cfg):
    emb = cfg["emb_dim"]
    return 2 * (emb * 4 * emb + emb)


def attention_params(cfg):
    emb = cfg["emb_dim"]
    return 4 * emb * emb + emb + (3 * emb if cfg["qkv_bias"] else 0)
