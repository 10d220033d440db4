"""Applies the embedding dropout to the token embeddings and to the position embeddings, each
on its own, instead of to their sum: at rates of 0 and 1 the logits are the book's (nothing, or
everything, dropped either way), at other rates two masks are drawn where the book draws one."""
# seen-in: written for issue 56 (a dropout in a place that rates of 0 and 1 cannot show); no
# seen-in: public answer with this exact mistake was found (say so here when one is)
# cause: dropout-place
# cause-words: drop_emb, 2 times
# expect-failing: with three different rates, train-mode logits match the reference's

import torch
from torch import nn

from reference import FeedForward, LayerNorm, MultiHeadAttention

GPT_CONFIG_SPLIT_DROPOUT = {
    "vocab_size": 50257,
    "context_length": 1024,
    "emb_dim": 768,
    "n_heads": 12,
    "n_layers": 12,
    "drop_rate_emb": 0.1,
    "drop_rate_shortcut": 0.1,
    "drop_rate_attn": 0.1,
    "qkv_bias": False,
}


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        width = cfg["emb_dim"]
        self.att = MultiHeadAttention(
            d_in=width,
            d_out=width,
            context_length=cfg["context_length"],
            dropout=cfg["drop_rate_attn"],
            num_heads=cfg["n_heads"],
            qkv_bias=cfg["qkv_bias"],
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(width)
        self.norm2 = LayerNorm(width)
        self.drop_shortcut = nn.Dropout(cfg["drop_rate_shortcut"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate_emb"])
        self.trf_blocks = nn.Sequential(*(TransformerBlock(cfg) for _ in range(cfg["n_layers"])))
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        n = in_idx.shape[1]
        tokens = self.drop_emb(self.tok_emb(in_idx))
        positions = self.drop_emb(self.pos_emb(torch.arange(n, device=in_idx.device)))
        x = self.trf_blocks(tokens + positions)
        return self.out_head(self.final_norm(x))
