"""Counts only the weight matrices (8 emb^2 and 4 emb^2), forgetting every bias: the
"weights only" estimate that seed 004's hand count starts from."""
# expect-failing: feedforward_params counts
# expect-failing: when qkv_bias is False
# expect-failing: when qkv_bias is True


def feedforward_params(cfg):
    emb = cfg["emb_dim"]
    return 2 * emb * 4 * emb


def attention_params(cfg):
    emb = cfg["emb_dim"]
    return 4 * emb * emb
