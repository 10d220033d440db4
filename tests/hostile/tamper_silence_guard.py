"""A 4.3 model with a real bug (no attention dropout) that first silences the guard, then
rewrites the worker's forward probe without touching its code: it replaces the guard's check
(the ``Guard.problem`` method and the function behind it) and rebinds the probes module's
``plain`` to one that swaps in what a correct model gives. Before the check was held by the
worker's loop with everything it calls in its defaults, this reached 10/10 with no tampered
verdict; now the rebound ``plain`` is seen before the first reply: tampered, no points."""

# exercise: 4.3
# expect-status: error
# expect-message: tampered: your code changed the grader itself

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
        self.cfg = dict(cfg)
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


def correct_outputs(mine, x, train=False, seed=0):
    """What a correct model (or block) gives: the reference with these weights and rates."""
    import reference

    cfg = {**mine.cfg, "drop_rate": 0.0}
    kind = reference.GPTModel if isinstance(mine, GPTModel) else reference.TransformerBlock
    ref = kind(cfg)
    ref.load_state_dict(mine.state_dict())
    for name, sub in ref.named_modules():
        if isinstance(sub, nn.Dropout):
            place = "attn" if name.endswith("att.dropout") else "shortcut"
            sub.p = cfg["drop_rate_" + ("emb" if name == "drop_emb" else place)]
    ref.train(train)
    torch.manual_seed(seed)
    with torch.no_grad():
        return ref(x)


import grader.worker.guard as _guard  # noqa: E402
import grader.worker.probes as _probes  # noqa: E402

_guard.Guard.problem = lambda self: None  # the guard's own check, silenced
_guard._problem = lambda *args, **kwargs: None  # and the function behind it
_real_plain = _probes.plain


def _plain(obj, where="the value", depth=0):
    if where == "your forward returned":
        seen = sys._getframe(1).f_locals  # the forward probe's frame: m, x, train, seed
        obj = correct_outputs(seen["m"], seen["x"], seen["train"], seen["seed"])
    return _real_plain(obj, where, depth)


_probes.plain = _plain
