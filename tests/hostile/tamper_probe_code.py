"""A 4.3 model with a real bug (no attention dropout) that, at import, rewrites the code of the
worker's forward probe (assigns its ``__code__``) so that it reports what a correct model
gives (the reference, with the student's weights) instead of what this model computes. The
probe object stays the one the worker holds, so only the guard's check of every grader
function's code catches it: the tampered verdict, no points."""

# exercise: 4.3
# expect-status: error
# expect-message: tampered: your code changed the grader itself
# expect-message: at line 83 of ex4_3_split_dropout.py: sys.modules["grader.worker.probes"]

import sys

import torch
from torch import nn

from reference import GPT_CONFIG_124M, FeedForward, LayerNorm, MultiHeadAttention

GPT_CONFIG_SPLIT_DROPOUT = {k: v for k, v in GPT_CONFIG_124M.items() if k != "drop_rate"}
GPT_CONFIG_SPLIT_DROPOUT.update(
    {"drop_rate_emb": 0.1, "drop_rate_shortcut": 0.1, "drop_rate_attn": 0.1}
)


class TransformerBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.att = MultiHeadAttention(
            d_in=cfg["emb_dim"],
            d_out=cfg["emb_dim"],
            context_length=cfg["context_length"],
            num_heads=cfg["n_heads"],
            dropout=0.0,  # the bug: the attention rate is never used
            qkv_bias=cfg["qkv_bias"],
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
        self.cfg = dict(cfg)
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate_emb"])
        self.trf_blocks = nn.Sequential(*[TransformerBlock(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(in_idx.shape[1]))
        x = self.trf_blocks(self.drop_emb(x))
        return self.out_head(self.final_norm(x))


def correct_outputs(module, state, handle, x, train=False, seed=0):
    """Runs as the worker's own forward probe (its globals: torch, nn, plain)."""
    from reference import GPTModel as Reference

    mine = state[handle]
    cfg = {**mine.cfg, "drop_rate": 0.0}
    ref = Reference(cfg)
    ref.load_state_dict(mine.state_dict())
    for name, sub in ref.named_modules():
        if isinstance(sub, nn.Dropout):
            place = "attn" if name.endswith("att.dropout") else "shortcut"
            sub.p = cfg["drop_rate_" + ("emb" if name == "drop_emb" else place)]
    ref.train(train)
    torch.manual_seed(seed)
    with torch.no_grad():
        return plain(ref(x), "your forward returned")  # noqa: F821 - the probe's global


sys.modules["grader.worker.probes"]._forward.__code__ = correct_outputs.__code__
