"""GPTModel builds a config of the block's own, with keys of its own names, and passes that:
TransformerBlock(block_cfg). The model is right, but TransformerBlock(cfg), as the exercise
builds it, reads keys the exercise's config does not have."""
# seen-in: public code, find_string ids 39747378985 and 67321821980 (models that build a
# seen-in: block_cfg of their own and pass it: TransformerBlock(block_cfg) for each layer)
# cause: block-signature
# cause-words: TransformerBlock(cfg), GPTModel
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
    def __init__(self, block_cfg):
        super().__init__()
        width = block_cfg["d_model"]
        self.att = MultiHeadAttention(
            d_in=width,
            d_out=width,
            context_length=block_cfg["max_len"],
            dropout=block_cfg["p_attn"],
            num_heads=block_cfg["heads"],
            qkv_bias=block_cfg["bias"],
        )
        self.ff = FeedForward({"emb_dim": width})
        self.norm1 = LayerNorm(width)
        self.norm2 = LayerNorm(width)
        self.drop_shortcut = nn.Dropout(block_cfg["p_shortcut"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate_emb"])
        block_cfg = {
            "d_model": cfg["emb_dim"],
            "max_len": cfg["context_length"],
            "heads": cfg["n_heads"],
            "bias": cfg["qkv_bias"],
            "p_attn": cfg["drop_rate_attn"],
            "p_shortcut": cfg["drop_rate_shortcut"],
        }
        self.trf_blocks = nn.Sequential(
            *(TransformerBlock(block_cfg) for _ in range(cfg["n_layers"]))
        )
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        n = in_idx.shape[1]
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(n, device=in_idx.device))
        x = self.trf_blocks(self.drop_emb(x))
        return self.out_head(self.final_norm(x))
