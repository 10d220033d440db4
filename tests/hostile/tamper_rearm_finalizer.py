"""A 4.3 model with a real bug (no attention dropout) that swaps the code of the worker's forward
probe for one that reports what a correct model gives and puts the original code back before
it returns, so that the guard, looking after each call, sees the original; a finalizer on the
request's input re-arms the swap when the judge's next request replaces that one, after the
guard's look. (The guard alone caught this one only when a request other than a forward came
next and found the swap still in place.) The tripwire, an audit hook armed before the
student's file runs, sees the first swap as it happens and ends the worker: tampered, no
points, whatever comes next."""

# exercise: 4.3
# expect-status: error
# expect-message: tampered: your code changed the grader itself
# expect-message: at line 101 of ex4_3_split_dropout.py: _probes._forward.__code__ = _forged

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


import weakref  # noqa: E402

import grader.worker.probes as _probes  # noqa: E402

_ORIGINAL = _probes._forward.__code__


def _forged(module, state, handle, x, train=False, seed=0):
    """Runs as the probe (its globals are the probes module's)."""
    attack = __import__("sys").modules["student_ex4_3"]
    attack._probes._forward.__code__ = attack._ORIGINAL  # undone before the guard looks
    attack.weakref.finalize(x, attack._arm)  # re-armed when the next request replaces this one
    return plain(attack.correct_outputs(state[handle], x, train, seed), "your forward returned")  # noqa: F821


def _arm():
    _probes._forward.__code__ = _forged.__code__


_armed = []


def _arming(forward):
    """The first forward is genuine; its input's finalizer arms the swap, after the guard's
    look, when the judge's next request replaces the one that held it."""

    def wrapped(self, x):
        if not _armed:
            _armed.append(weakref.finalize(x, _arm))
        return forward(self, x)

    return wrapped


GPTModel.forward = _arming(GPTModel.forward)
TransformerBlock.forward = _arming(TransformerBlock.forward)
