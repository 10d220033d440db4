"""Takes the feed-forward hidden width from the original Transformer paper (d_ff = 2048)
instead of the book's 4 * emb_dim: right for no config the exercise uses."""
# seen-in: wangywUST/wangywust.github.io Course/lecture_4.md (dff = 2048 in the per-layer count)
# seen-in: public code, search result transformer_count_params(d_model=512, d_ff=2048, ...)
# cause: hard-coded
# cause-words: 2048
# cause-words: 4 * emb_dim
# expect-failing: feedforward_params counts the parameters of TransformerBlock(cfg).ff

D_FF = 2048


def feedforward_params(cfg):
    e = cfg["emb_dim"]
    return (e * D_FF + D_FF) + (D_FF * e + e)


def attention_params(cfg):
    e = cfg["emb_dim"]
    qkv = 3 * e * e + (3 * e if cfg["qkv_bias"] else 0)
    return qkv + e * e + e
