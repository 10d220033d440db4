"""A dropout written by hand from torch.rand_like: each rate acts exactly in its place (at p=0
nothing, at p=1 everything dropped) and eval mode is the book's, but the masks are drawn with
other random numbers than nn.Dropout draws, so with fractional rates and the same torch seed the
logits differ from the reference's."""
# expect-failing: with three different rates, train-mode logits match
# expect-message: draws its random masks another way than the book's nn.Dropout modules
# expect-hint: masks drawn after the same torch seed


import torch
from torch import nn

from reference import GPT_CONFIG_124M, FeedForward, LayerNorm, MultiHeadAttention

GPT_CONFIG_SPLIT_DROPOUT = dict(GPT_CONFIG_124M)
del GPT_CONFIG_SPLIT_DROPOUT["drop_rate"]
GPT_CONFIG_SPLIT_DROPOUT["drop_rate_emb"] = 0.05
GPT_CONFIG_SPLIT_DROPOUT["drop_rate_shortcut"] = 0.1
GPT_CONFIG_SPLIT_DROPOUT["drop_rate_attn"] = 0.2


def keep(x, p, training):
    # A dropout of one's own: a uniform draw per element instead of torch's bernoulli_.
    if not training or p == 0:
        return x
    return x * (torch.rand_like(x) >= p) / (1 - p) if p < 1 else torch.zeros_like(x)


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(
            cfg["emb_dim"], cfg["emb_dim"], cfg["context_length"], cfg["drop_rate_attn"],
            cfg["n_heads"], cfg["qkv_bias"],
        )
        self.ff = FeedForward(cfg)
        self.norm1 = LayerNorm(cfg["emb_dim"])
        self.norm2 = LayerNorm(cfg["emb_dim"])
        self.shortcut_rate = cfg["drop_rate_shortcut"]

    def forward(self, x):
        x = x + keep(self.att(self.norm1(x)), self.shortcut_rate, self.training)
        return x + keep(self.ff(self.norm2(x)), self.shortcut_rate, self.training)


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.emb_rate = cfg["drop_rate_emb"]
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        seq_len = in_idx.shape[1]
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(seq_len, device=in_idx.device))
        x = keep(x, self.emb_rate, self.training)
        return self.out_head(self.final_norm(self.trf_blocks(x)))
