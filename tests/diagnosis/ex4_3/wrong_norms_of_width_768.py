"""Builds the block's two LayerNorms with the number 768 (GPT-2 small's emb_dim) instead of
cfg["emb_dim"]: right for GPT_CONFIG_124M, wrong for any config of another width."""
# seen-in: public code, find_string id 15250520256 (a chapter 4 walk-through whose block has
# seen-in: self.norm1 = LayerNorm(768)); find_string id 41647543059 (LayerNorm(768) in a block)
# cause: hard-coded
# cause-words: 768, emb_dim
# expect-failing: GPTModel has the same state_dict keys as the reference GPTModel

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
        self.norm1 = LayerNorm(768)
        self.norm2 = LayerNorm(768)
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
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(n, device=in_idx.device))
        x = self.trf_blocks(self.drop_emb(x))
        return self.out_head(self.final_norm(x))
