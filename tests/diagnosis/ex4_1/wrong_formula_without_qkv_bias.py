"""A closed form worked out on GPT_CONFIG_124M, where qkv_bias is False: three bias-free
projections plus out_proj with its bias. With qkv_bias=True it misses 3 * emb_dim biases."""
# seen-in: seed 002 In[8] (the counts worked out from named_parameters() of the 124M config only,
# seen-in: qkv_bias False)
# cause: qkv-bias
# cause-words: qkv_bias
# expect-failing: attention_params counts the parameters of TransformerBlock(cfg).att when qkv_bias


def feedforward_params(cfg):
    e = cfg["emb_dim"]
    return (e * 4 * e + 4 * e) + (4 * e * e + e)


def attention_params(cfg):
    e = cfg["emb_dim"]
    return 3 * e * e + (e * e + e)
