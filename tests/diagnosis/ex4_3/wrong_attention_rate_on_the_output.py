"""Applies drop_rate_attn to the attention block's output (a dropout of its own after self.att)
and builds MultiHeadAttention with dropout=0.0: the exercise's attention dropout acts on the
attention weights, inside MultiHeadAttention."""
# seen-in: written for issue 56 (a rate applied in a place the statement does not name); no
# seen-in: public answer with this exact mistake was found (say so here when one is)
# cause: dropout-place
# cause-words: drop_rate_attn, att
# expect-failing: drop_rate_attn acts on the attention weights (att.dropout) and nowhere else

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
            dropout=0.0,
            num_heads=cfg["n_heads"],
            qkv_bias=cfg["qkv_bias"],
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(width)
        self.norm2 = LayerNorm(width)
        self.drop_shortcut = nn.Dropout(cfg["drop_rate_shortcut"])
        self.drop_attn = nn.Dropout(cfg["drop_rate_attn"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.drop_attn(self.att(self.norm1(x))))
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
