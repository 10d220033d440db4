"""Gives TransformerBlock a **kwargs parameter that holds its two rates under names of its own,
TransformerBlock(cfg, attn_rate=..., shortcut_rate=...), and GPTModel passes them: the model is
right, but TransformerBlock(cfg), as the exercise builds it, finds nothing in kwargs."""
# seen-in: public code, find_string id 52539751007 (an attention class built as (cfg, layer_idx=0,
# seen-in: **kwargs), its extra settings passed next to the config)
# cause: block-signature
# cause-words: TransformerBlock(cfg), **kwargs
# expect-failing: TransformerBlock(cfg) on its own takes its two rates from cfg

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
    def __init__(self, cfg, **kwargs):
        super().__init__()
        width = cfg["emb_dim"]
        self.att = MultiHeadAttention(
            d_in=width,
            d_out=width,
            context_length=cfg["context_length"],
            dropout=kwargs["attn_rate"],
            num_heads=cfg["n_heads"],
            qkv_bias=cfg["qkv_bias"],
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(width)
        self.norm2 = LayerNorm(width)
        self.drop_shortcut = nn.Dropout(kwargs["shortcut_rate"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate_emb"])
        self.trf_blocks = nn.Sequential(
            *(
                TransformerBlock(
                    cfg, attn_rate=cfg["drop_rate_attn"], shortcut_rate=cfg["drop_rate_shortcut"]
                )
                for _ in range(cfg["n_layers"])
            )
        )
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        n = in_idx.shape[1]
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(n, device=in_idx.device))
        x = self.trf_blocks(self.drop_emb(x))
        return self.out_head(self.final_norm(x))
