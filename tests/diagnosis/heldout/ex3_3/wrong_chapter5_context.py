"""Builds the module from the GPT config the later chapters train with, whose context length is
shortened to 256: GPT-2 small's attention has a 1024-token context."""
# seen-in: nikitaefremove/BUILD_LLM_BOOK src/core/model_config.py and
# seen-in: kunjcr2/llms-from-scratch models/GPT_155M/LLM_CONFIG_155M.py (a GPT_CONFIG with
# seen-in: "context_length": 256 used as GPT-2 small's)
# cause: gpt2-sizes
# cause-words: context_length, 1024
# cause-words: 256, 1024
# expect-failing: context_length = 1024

from reference import MultiHeadAttention

GPT_CONFIG = {
    "vocab_size": 50257,
    "context_length": 256,
    "emb_dim": 768,
    "n_heads": 12,
    "n_layers": 12,
    "drop_rate": 0.1,
    "qkv_bias": False,
}


def gpt2_small_attention():
    return MultiHeadAttention(
        d_in=GPT_CONFIG["emb_dim"],
        d_out=GPT_CONFIG["emb_dim"],
        context_length=GPT_CONFIG["context_length"],
        dropout=0.0,
        num_heads=GPT_CONFIG["n_heads"],
    )
