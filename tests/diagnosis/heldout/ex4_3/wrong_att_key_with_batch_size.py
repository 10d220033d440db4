"""The config of the student's training script made the exercise's answer: it keeps a
batch_size entry and names the attention rate drop_rate_att, which its block reads; the
exercise's config has drop_rate_attn and no batch_size."""
# seen-in: public code, find_string ids 54755354352 and 54669454289 (GPT_CONFIG_124M with
# seen-in: "batch_size": 2 and "drop_rate_att", models imported from ch04.ex_4_1_params_count)
# cause: missing-config-key
# cause-words: drop_rate_att, drop_rate_attn, exercise
# cause-words: drop_rate_att, drop_rate_attn, grader
# expect-failing: GPT_CONFIG_SPLIT_DROPOUT is GPT_CONFIG_124M

import torch
from torch import nn

from reference import FeedForward, LayerNorm, MultiHeadAttention

GPT_CONFIG_SPLIT_DROPOUT = {
    "emb_dim": 768,
    "n_heads": 12,
    "n_layers": 12,
    "context_length": 1024,
    "batch_size": 2,
    "drop_rate_att": 0.1,
    "drop_rate_emb": 0.2,
    "drop_rate_shortcut": 0.3,
    "vocab_size": 50257,
    "qkv_bias": False,
}


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        emb = cfg["emb_dim"]
        self.att = MultiHeadAttention(
            emb, emb, cfg["context_length"], cfg["drop_rate_att"], cfg["n_heads"], cfg["qkv_bias"]
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(emb)
        self.norm2 = LayerNorm(emb)
        self.drop_shortcut = nn.Dropout(cfg["drop_rate_shortcut"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        x = x + self.drop_shortcut(self.ff(self.norm2(x)))
        return x


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
        _, seq_len = in_idx.shape
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(seq_len, device=in_idx.device))
        x = self.trf_blocks(self.drop_emb(x))
        return self.out_head(self.final_norm(x))
