"""Its own config names the attention rate drop_rate_att, and its block reads that key: built
from the exercise's config (which has drop_rate_attn), TransformerBlock raises KeyError. Every
other part is the book's."""
# seen-in: public code, find_string id 22693829636 (TransformerBlock passing
# seen-in: dropout_value=cfg["drop_rate_att"] to its own EfficientMultiHeadAttention)
# seen-in: issue 56 ("two answers to 4.3 whose own config names the key drop_rate_att")
# cause: missing-config-key
# cause-words: drop_rate_att, drop_rate_attn, exercise
# cause-words: drop_rate_att, drop_rate_attn, grader
# expect-failing: GPT_CONFIG_SPLIT_DROPOUT is GPT_CONFIG_124M

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
    "drop_rate_att": 0.1,
    "drop_rate_shortcut": 0.1,
    "qkv_bias": False,
}


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(
            d_in=cfg["emb_dim"],
            d_out=cfg["emb_dim"],
            context_length=cfg["context_length"],
            num_heads=cfg["n_heads"],
            qkv_bias=cfg["qkv_bias"],
            dropout=cfg["drop_rate_att"],
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate_shortcut"])

    def forward(self, x):
        shortcut = x
        x = self.drop_shortcut(self.att(self.norm1(x))) + shortcut
        shortcut = x
        return self.drop_shortcut(self.ff(self.norm2(x))) + shortcut


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate_emb"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        positions = torch.arange(in_idx.shape[1], device=in_idx.device)
        x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(positions))
        return self.out_head(self.final_norm(self.trf_blocks(x)))
