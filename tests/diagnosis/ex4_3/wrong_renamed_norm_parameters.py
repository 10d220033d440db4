"""Writes its own LayerNorm with private parameter names _scale and _shift (and the book's
variance): the model computes the book's logits, but the state-dict keys are not the book's."""
# seen-in: public code, find_string id 32339655718 (a chapter-4 LayerNorm with self._scale /
# seen-in: self._shift)
# cause: renamed-attribute
# cause-words: _scale
# expect-failing: GPTModel has the same state_dict keys as the reference GPTModel

import torch
from torch import nn

from reference import GPT_CONFIG_124M, FeedForward, MultiHeadAttention

GPT_CONFIG_SPLIT_DROPOUT = dict(GPT_CONFIG_124M)
GPT_CONFIG_SPLIT_DROPOUT.pop("drop_rate")
GPT_CONFIG_SPLIT_DROPOUT.update(drop_rate_emb=0.1, drop_rate_shortcut=0.1, drop_rate_attn=0.1)


class LayerNorm(nn.Module):
    def __init__(self, emb_dim, eps=1e-5):
        super().__init__()
        self._eps = eps
        self._scale = nn.Parameter(torch.ones(emb_dim))
        self._shift = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return self._scale * (x - mean) / torch.sqrt(var + self._eps) + self._shift


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(
            d_in=cfg["emb_dim"],
            d_out=cfg["emb_dim"],
            context_length=cfg["context_length"],
            num_heads=cfg["n_heads"],
            dropout=cfg["drop_rate_attn"],
            qkv_bias=cfg["qkv_bias"],
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate_shortcut"])

    def forward(self, x):
        shortcut = x
        x = shortcut + self.drop_shortcut(self.att(self.norm1(x)))
        shortcut = x
        return shortcut + self.drop_shortcut(self.ff(self.norm2(x)))


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
        pos = torch.arange(in_idx.shape[1], device=in_idx.device)
        x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(pos))
        return self.out_head(self.final_norm(self.trf_blocks(x)))
