"""A closed form for both modules, right per block, then multiplied by n_layers as a parameter
calculator for a whole model does."""
# seen-in: prp-e/minillm params_calculator.py (attn_params = n_layers * (4 * d_model * d_model),
# seen-in: ffn_params = n_layers * (...))
# seen-in: yjumpzhighy/vlm-action training/quantitative_analysis.md (per-block counts times
# seen-in: n_blocks)
# cause: layers-multiple
# cause-words: n_layers
# expect-failing: feedforward_params counts the parameters of TransformerBlock(cfg).ff


def feedforward_params(cfg):
    e, n = cfg["emb_dim"], cfg["n_layers"]
    return n * ((e * 4 * e + 4 * e) + (4 * e * e + e))


def attention_params(cfg):
    e, n = cfg["emb_dim"], cfg["n_layers"]
    qkv = 3 * e * e + (3 * e if cfg["qkv_bias"] else 0)
    return n * (qkv + e * e + e)
