"""Counts the book's FeedForward and MultiHeadAttention built directly (not through a
TransformerBlock), with numel() over named_parameters(), as in seed 002's exploration."""

from reference import FeedForward, MultiHeadAttention


def _count(module):
    return sum(param.numel() for _, param in module.named_parameters())


def feedforward_params(cfg):
    return _count(FeedForward(cfg))


def attention_params(cfg):
    mha = MultiHeadAttention(
        d_in=cfg["emb_dim"],
        d_out=cfg["emb_dim"],
        context_length=cfg["context_length"],
        dropout=cfg["drop_rate"],
        num_heads=cfg["n_heads"],
        qkv_bias=cfg["qkv_bias"],
    )
    return _count(mha)
