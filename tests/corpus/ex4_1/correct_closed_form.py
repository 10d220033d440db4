"""A closed formula instead of counting a real module: two linear layers emb -> 4 emb -> emb
with biases; four emb x emb projections, biases on the three qkv ones only when qkv_bias."""


def feedforward_params(cfg):
    emb = cfg["emb_dim"]
    hidden = 4 * emb
    return (emb * hidden + hidden) + (hidden * emb + emb)


def attention_params(cfg):
    emb = cfg["emb_dim"]
    qkv = 3 * (emb * emb + (emb if cfg["qkv_bias"] else 0))
    out_proj = emb * emb + emb
    return qkv + out_proj
