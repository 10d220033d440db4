"""A closed formula that adds the causal mask (context_length x context_length values) to the
attention count, as if the buffer were trainable: the hint must be about the buffer, not about
floating-point precision."""
# expect-failing: when qkv_bias is False
# expect-failing: when qkv_bias is True
# expect-failing: exact for GPT-2-sized
# expect-hint: register_buffer
# expect-no-hint: exact Python int


def feedforward_params(cfg):
    emb = cfg["emb_dim"]
    return 2 * 4 * emb * emb + 4 * emb + emb


def attention_params(cfg):
    emb, ctx = cfg["emb_dim"], cfg["context_length"]
    qkv = 3 * (emb * emb + (emb if cfg["qkv_bias"] else 0))
    return qkv + emb * emb + emb + ctx * ctx
