"""Builds from a dict still named GPT_CONFIG_124M that was overwritten with GPT-2 large's sizes
(1280 wide, 20 heads): the module has the large model's widths, not small's 768 and 12."""
# seen-in: public code, search result (a config file GPT_CONFIG_124M whose docstring says "This
# seen-in: configuration matches the GPT-2 Large model architecture": emb_dim 1280, num_heads 20)
# cause: gpt2-sizes
# cause-words: 768
# expect-failing: d_in = d_out = 768

from reference import MultiHeadAttention

GPT_CONFIG_124M = {
    "vocab_size": 50257,
    "context_length": 1024,
    "emb_dim": 1280,
    "num_heads": 20,
    "num_layers": 36,
    "drop_rate": 0.1,
    "qkv_bias": False,
}


def gpt2_small_attention():
    cfg = GPT_CONFIG_124M
    return MultiHeadAttention(
        cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], 0.0, cfg["num_heads"]
    )
