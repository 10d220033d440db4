"""A hand-written dropout, x * mask / (1 - p), for the embeddings and shortcuts: at p = 1 it
divides zero by zero and returns NaN where nn.Dropout(p=1) returns zeros."""
# expect-failing: drop_rate_emb acts
# expect-failing: drop_rate_shortcut acts
# expect-message: the first difference is inside drop_emb (MyDropout): it gives nan

import torch
from torch import nn

from reference import GPT_CONFIG_124M, FeedForward, LayerNorm, MultiHeadAttention

GPT_CONFIG_SPLIT_DROPOUT = {k: v for k, v in GPT_CONFIG_124M.items() if k != "drop_rate"}
GPT_CONFIG_SPLIT_DROPOUT.update(drop_rate_emb=0.1, drop_rate_shortcut=0.1, drop_rate_attn=0.1)


class MyDropout(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training:
            return x
        mask = (torch.rand_like(x) > self.p).float()
        return x * mask / (1 - self.p)


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"],
                                      cfg["drop_rate_attn"], cfg["n_heads"], cfg["qkv_bias"])
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = MyDropout(cfg["drop_rate_shortcut"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = MyDropout(cfg["drop_rate_emb"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, idx):
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(idx.shape[1], device=idx.device))
        return self.out_head(self.final_norm(self.trf_blocks(self.drop_emb(x))))
