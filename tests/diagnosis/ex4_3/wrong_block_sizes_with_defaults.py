"""Gives TransformerBlock its sizes as parameters with GPT-2 small's values as defaults,
TransformerBlock(cfg, emb_dim=768, context_length=1024, n_heads=12), and GPTModel passes cfg's:
the model is right, but TransformerBlock(cfg), as the exercise builds it, is 768 wide whatever
cfg says."""
# seen-in: public code, find_string ids 36017510635 and 52396585703 (transformer layers and
# seen-in: attention classes whose sizes are parameters with defaults: emb_dim=768,
# seen-in: num_heads=8 / n_head=12)
# cause: block-signature
# cause-words: TransformerBlock(cfg), emb_dim=768
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
    def __init__(self, cfg, emb_dim=768, context_length=1024, n_heads=12):
        super().__init__()
        self.att = MultiHeadAttention(
            d_in=emb_dim,
            d_out=emb_dim,
            context_length=context_length,
            dropout=cfg["drop_rate_attn"],
            num_heads=n_heads,
            qkv_bias=cfg["qkv_bias"],
        )
        self.ff = FeedForward({"emb_dim": emb_dim})
        self.norm1 = LayerNorm(emb_dim)
        self.norm2 = LayerNorm(emb_dim)
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
        self.trf_blocks = nn.Sequential(
            *(
                TransformerBlock(cfg, cfg["emb_dim"], cfg["context_length"], cfg["n_heads"])
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
