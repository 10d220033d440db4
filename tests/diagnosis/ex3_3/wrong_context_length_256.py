"""Builds the attention from a GPT config whose context_length is 256 (chapter 5 shortens it to
train on a laptop): GPT-2 small's is 1024, so its mask is too short for longer inputs."""
# seen-in: public code, find_string id 56544204874 (a chapter 4 script whose GPT_CONFIG_124M has
# seen-in: "context_length": 256 and whose modules are built from that config)
# cause: gpt2-sizes
# cause-words: context_length, 1024
# expect-failing: d_in = d_out = 768 and context_length = 1024

from reference import MultiHeadAttention

CONFIG = {
    "vocab_size": 50257,
    "context_length": 256,
    "emb_dim": 768,
    "n_heads": 12,
    "n_layers": 12,
    "drop_rate": 0.1,
    "qkv_bias": False,
}


def gpt2_small_attention():
    width = CONFIG["emb_dim"]
    return MultiHeadAttention(
        width, width, CONFIG["context_length"], CONFIG["drop_rate"], CONFIG["n_heads"]
    )
