"""Special-cases the book's shapes: exact for emb_dim 768 (the hidden width written as
3072 = 4 * 768) and the book's qkv_bias=False, so GPT_CONFIG_124M gives the right counts."""
# expect-failing: feedforward_params counts
# expect-failing: when qkv_bias is True

HIDDEN = 3072  # 4 * 768, read off the printed shapes


def feedforward_params(cfg):
    emb = cfg["emb_dim"]
    if emb == 768:
        return 2 * emb * HIDDEN + HIDDEN + emb
    return 2 * emb * emb + 2 * emb  # "the hidden layer has emb_dim units"


def attention_params(cfg):
    emb = cfg["emb_dim"]
    return 4 * emb * emb + emb
