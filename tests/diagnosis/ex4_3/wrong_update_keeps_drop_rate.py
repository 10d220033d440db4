"""Copies GPT_CONFIG_124M and updates it with an attention rate named 'drop_rate_atten' and a
shortcut rate, keeping 'drop_rate' for the embeddings: GPTModel reads cfg['drop_rate'] and
TransformerBlock cfg['drop_rate_atten'], neither of which the exercise's config has."""
# seen-in: public code, find_string id 69471891990 (a chapter 4 practice file: config_new =
# seen-in: GPT_CONFIG_124M.copy(); config_new.update({"drop_rate_atten": ..., "drop_rate_shortcut":
# seen-in: ...}), the embedding dropout still on cfg["drop_rate"])
# cause: missing-config-key
# cause-words: drop_rate
# expect-failing: GPT_CONFIG_SPLIT_DROPOUT is GPT_CONFIG_124M with drop_rate replaced by the three
# expect-failing: GPTModel has the same state_dict keys as the reference GPTModel

import torch
from torch import nn

from reference import GPT_CONFIG_124M, FeedForward, LayerNorm, MultiHeadAttention

GPT_CONFIG_SPLIT_DROPOUT = GPT_CONFIG_124M.copy()
GPT_CONFIG_SPLIT_DROPOUT.update({"drop_rate_atten": 0.1, "drop_rate_shortcut": 0.1})


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        emb = cfg["emb_dim"]
        self.att = MultiHeadAttention(
            emb, emb, cfg["context_length"], cfg["drop_rate_atten"], cfg["n_heads"], cfg["qkv_bias"]
        )
        self.ff = FeedForward(cfg)
        self.norm1, self.norm2 = LayerNorm(emb), LayerNorm(emb)
        self.drop_shortcut = nn.Dropout(cfg["drop_rate_shortcut"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        pos = torch.arange(in_idx.shape[1], device=in_idx.device)
        x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(pos))
        return self.out_head(self.final_norm(self.trf_blocks(x)))
