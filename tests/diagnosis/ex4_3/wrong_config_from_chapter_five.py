"""Starts its split-dropout config from the chapter 5 config, whose context_length is 256
(shortened there to train on a laptop): the exercise asks for GPT_CONFIG_124M with only the
dropout rates changed, and GPT-2 small reads 1024 tokens. The classes are right."""
# seen-in: public code, find_string id 56544204874 (a chapter 4 answer whose GPT_CONFIG_124M has
# seen-in: "context_length": 256 next to its three dropout rates); find_string ids 28578356279
# seen-in: and 49217675 (configs with the three rates and "context_length": 256)
# cause: gpt2-sizes
# cause-words: context_length, 1024
# expect-failing: GPT_CONFIG_SPLIT_DROPOUT is GPT_CONFIG_124M with drop_rate replaced by the three

import torch
from torch import nn

from reference import FeedForward, LayerNorm, MultiHeadAttention

GPT_CONFIG_SPLIT_DROPOUT = dict(
    vocab_size=50257,
    context_length=256,
    emb_dim=768,
    n_heads=12,
    n_layers=12,
    drop_rate_emb=0.1,
    drop_rate_attn=0.1,
    drop_rate_shortcut=0.1,
    qkv_bias=False,
)


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["emb_dim"]
        self.att = MultiHeadAttention(
            d, d, cfg["context_length"], cfg["drop_rate_attn"], cfg["n_heads"], cfg["qkv_bias"]
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(d)
        self.norm2 = LayerNorm(d)
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
        blocks = [TransformerBlock(cfg) for _ in range(cfg["n_layers"])]
        self.trf_blocks = nn.Sequential(*blocks)
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        positions = torch.arange(in_idx.shape[1], device=in_idx.device)
        x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(positions))
        return self.out_head(self.final_norm(self.trf_blocks(x)))
