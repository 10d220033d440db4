"""Reads the sizes from the chapter 4 config GPT_CONFIG_124M instead of typing them."""

from reference import GPT_CONFIG_124M, MultiHeadAttention


def gpt2_small_attention():
    cfg = GPT_CONFIG_124M
    return MultiHeadAttention(
        d_in=cfg["emb_dim"],
        d_out=cfg["emb_dim"],
        context_length=cfg["context_length"],
        dropout=cfg["drop_rate"],
        num_heads=cfg["n_heads"],
        qkv_bias=cfg["qkv_bias"],
    )
