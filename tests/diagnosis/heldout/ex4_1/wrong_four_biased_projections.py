"""Counts attention as four emb_dim x emb_dim layers each with a bias, whatever qkv_bias says:
right only when qkv_bias is True; the book's query, key and value layers have no bias when it
is False."""
# seen-in: Swamy-s-Tech-Skills-Academy-2026/llms-from-scratch-practice
# seen-in: notebooks/ch03/exercise-solutions.ipynb ("W_query: 768 x 768 = 589,824 + bias 768",
# seen-in: the same for W_key, W_value and out_proj: 2,362,368)
# seen-in: public code, search result transformer_count_params ("multi-head attention:
# seen-in: 4*(d_model^2 + d_model)")
# cause: qkv-bias
# cause-words: qkv_bias
# expect-failing: when qkv_bias is False


def feedforward_params(cfg):
    e = cfg["emb_dim"]
    return (e * 4 * e + 4 * e) + (4 * e * e + e)


def attention_params(cfg):
    e = cfg["emb_dim"]
    return 4 * (e * e + e)
