"""A 4.3 model with a real bug (no attention dropout) that puts two threads between the worker
and the judge: it ``dup2``s pipes of its own over the worker's request and reply descriptors,
forwards each request, and replaces each forward reply's logits with what a correct model
gives. The grader's objects are untouched, so the identity checks see nothing; the guard's
check of the channel (the descriptors still refer to the judge's pipes), made before the first
reply, does: tampered, no points. (Threads alone are no tampering: tests/test_fair_guard.py.)"""

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


import os  # noqa: E402
import threading  # noqa: E402

from grader.protocol import wire  # noqa: E402

_frame = sys._getframe()
while _frame is not None and "rep_fd" not in _frame.f_locals:
    _frame = _frame.f_back
_loop = _frame  # the worker's loop: its descriptors, and later its state
_req, _rep = _loop.f_locals["req_fd"], _loop.f_locals["rep_fd"]
_judge_req, _judge_rep = os.dup(_req), os.dup(_rep)
_our_req_r, _our_req_w = os.pipe()
_our_rep_r, _our_rep_w = os.pipe()
os.dup2(_our_req_r, _req)  # the worker now reads our pipe ...
os.dup2(_our_rep_w, _rep)  # ... and writes to our other one
_asked = []


def _requests():
    while True:
        request = wire.recv(_judge_req)
        _asked.append(request)
        wire.send(_our_req_w, request)


def _replies():
    while True:
        reply = wire.recv(_our_rep_r)
        request = _asked[-1] if _asked else {}
        if request.get("action") == "forward" and reply.get("ok"):
            args = request["args"]
            mine = _loop.f_locals["state"][args["handle"]]
            reply["value"] = correct_outputs(
                mine, args["x"], args.get("train", False), args.get("seed", 0)
            )
        wire.send(_judge_rep, reply)


threading.Thread(target=_requests, daemon=True).start()
threading.Thread(target=_replies, daemon=True).start()
