"""Calls the attention rate 'drop_rate_att' in its own config and reads cfg['drop_rate_att'] in
TransformerBlock: built from the exercise's config (key 'drop_rate_attn') the block raises
KeyError. The student's config has the key it reads: adding it there fixes nothing."""
# seen-in: public code, find_string ids 56544204874, 39501703151 and 22693829636 (three
# seen-in: answers whose config holds "drop_rate_att" and whose TransformerBlock reads it)
# cause: missing-config-key
# cause-words: drop_rate_att, drop_rate_attn, read
# expect-failing: GPT_CONFIG_SPLIT_DROPOUT is GPT_CONFIG_124M with drop_rate replaced by the three

import torch
from torch import nn

from reference import FeedForward, LayerNorm, MultiHeadAttention

GPT_CONFIG_SPLIT_DROPOUT = dict(
    vocab_size=50257,
    context_length=1024,
    emb_dim=768,
    n_heads=12,
    n_layers=12,
    drop_rate_emb=0.1,
    drop_rate_att=0.1,
    drop_rate_shortcut=0.1,
    qkv_bias=False,
)


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["emb_dim"]
        self.att = MultiHeadAttention(
            d, d, cfg["context_length"], cfg["drop_rate_att"], cfg["n_heads"], cfg["qkv_bias"]
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
