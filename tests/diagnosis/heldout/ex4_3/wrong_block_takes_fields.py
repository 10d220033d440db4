"""A typed TransformerBlock that takes the sizes and rates one by one instead of cfg: GPTModel
passes them and works, but TransformerBlock(cfg) cannot be built."""
# seen-in: public code, find_string id 43595300539 (TransformerBlock(Module) with
# seen-in: __init__(self, emb_dim, context_length, n_heads, drop_rate, qkv_bias))
# cause: block-signature
# cause-words: cfg
# expect-failing: TransformerBlock(cfg) on its own

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
    def __init__(
        self, emb_dim, context_length, n_heads, drop_rate_attn, drop_rate_shortcut, qkv_bias
    ):
        super().__init__()
        self.att = MultiHeadAttention(
            d_in=emb_dim,
            d_out=emb_dim,
            context_length=context_length,
            num_heads=n_heads,
            dropout=drop_rate_attn,
            qkv_bias=qkv_bias,
        )
        self.ff = FeedForward({"emb_dim": emb_dim})
        self.norm1 = LayerNorm(emb_dim)
        self.norm2 = LayerNorm(emb_dim)
        self.drop_shortcut = nn.Dropout(drop_rate_shortcut)

    def forward(self, x):
        shortcut = x
        x = self.drop_shortcut(self.att(self.norm1(x)))
        x = x + shortcut
        shortcut = x
        x = self.drop_shortcut(self.ff(self.norm2(x)))
        return x + shortcut


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate_emb"])
        self.trf_blocks = nn.Sequential(
            *[
                TransformerBlock(
                    cfg["emb_dim"],
                    cfg["context_length"],
                    cfg["n_heads"],
                    cfg["drop_rate_attn"],
                    cfg["drop_rate_shortcut"],
                    cfg["qkv_bias"],
                )
                for _ in range(cfg["n_layers"])
            ]
        )
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        batch_size, seq_len = in_idx.shape
        tok_embeds = self.tok_emb(in_idx)
        pos_embeds = self.pos_emb(torch.arange(seq_len, device=in_idx.device))
        x = self.drop_emb(tok_embeds + pos_embeds)
        x = self.trf_blocks(x)
        return self.out_head(self.final_norm(x))
