"""Abbreviates the shortcut rate's key to drop_rate_shc (and the attention rate's to
drop_rate_att) in its config and its classes: built from the exercise's config, the block
raises KeyError."""
# seen-in: public code, find_string id 39501703151 (GPT_CONFIG_AI with "drop_rate_emb",
# seen-in: "drop_rate_att", "drop_rate_shc")
# cause: missing-config-key
# cause-words: drop_rate_shc, drop_rate_shortcut, exercise
# cause-words: drop_rate_att, drop_rate_attn, exercise
# cause-words: drop_rate_att, drop_rate_attn, grader
# expect-failing: GPT_CONFIG_SPLIT_DROPOUT is GPT_CONFIG_124M

import torch
from torch import nn

from reference import GPT_CONFIG_124M, FeedForward, LayerNorm, MultiHeadAttention

GPT_CONFIG_SPLIT_DROPOUT = {k: v for k, v in GPT_CONFIG_124M.items() if k != "drop_rate"}
GPT_CONFIG_SPLIT_DROPOUT.update({"drop_rate_emb": 0.1, "drop_rate_att": 0.1, "drop_rate_shc": 0.1})


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(
            cfg["emb_dim"],
            cfg["emb_dim"],
            cfg["context_length"],
            cfg["drop_rate_att"],
            cfg["n_heads"],
            cfg["qkv_bias"],
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.drop_shortcut = nn.Dropout(cfg["drop_rate_shc"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


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
