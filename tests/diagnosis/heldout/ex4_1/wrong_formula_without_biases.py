"""Counts only the weight matrices, as transformer size estimates often do: two 4 x emb_dim
projections in the feed-forward module, four square ones in attention, and no bias anywhere
(the book's nn.Linear layers in ff and out_proj have biases)."""
# seen-in: prp-e/minillm params_calculator.py (4 * d_model * d_model and 2 * d_model * d_ff,
# seen-in: no bias terms)
# seen-in: yjumpzhighy/vlm-action training/quantitative_analysis.md (N(mlp) = d_model * d_ffn +
# seen-in: d_ffn * d_model)
# cause: bias-missed
# cause-words: bias
# expect-failing: feedforward_params counts the parameters of TransformerBlock(cfg).ff


def feedforward_params(cfg):
    e = cfg["emb_dim"]
    hidden = 4 * e
    return 2 * e * hidden


def attention_params(cfg):
    e = cfg["emb_dim"]
    return 4 * e * e
