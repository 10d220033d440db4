"""No nn.Dropout modules for the embeddings and shortcuts: the rates are stored as floats and
applied with F.dropout(x, p, training=self.training)."""

import torch
import torch.nn.functional as F
from torch import nn

from reference import GPT_CONFIG_124M, FeedForward, LayerNorm, MultiHeadAttention

GPT_CONFIG_SPLIT_DROPOUT = dict(GPT_CONFIG_124M)
del GPT_CONFIG_SPLIT_DROPOUT["drop_rate"]
GPT_CONFIG_SPLIT_DROPOUT["drop_rate_emb"] = 0.05
GPT_CONFIG_SPLIT_DROPOUT["drop_rate_shortcut"] = 0.1
GPT_CONFIG_SPLIT_DROPOUT["drop_rate_attn"] = 0.2


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(
            cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], cfg["drop_rate_attn"],
            cfg["n_heads"], cfg["qkv_bias"],
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.shortcut_rate = cfg["drop_rate_shortcut"]

    def forward(self, x):
        h = F.dropout(self.att(self.norm1(x)), self.shortcut_rate, training=self.training)
        x = x + h
        h = F.dropout(self.ff(self.norm2(x)), self.shortcut_rate, training=self.training)
        return x + h


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.emb_rate = cfg["drop_rate_emb"]
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        seq_len = in_idx.shape[1]
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(seq_len, device=in_idx.device))
        x = F.dropout(x, self.emb_rate, training=self.training)
        return self.out_head(self.final_norm(self.trf_blocks(x)))
