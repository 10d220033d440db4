"""A 4.3 model with a real bug (no attention dropout) that, at import, walks sys.modules, finds
the worker's table of probes and replaces the probe that reports a model's outputs with one
that computes what a correct model gives (the reference, with the student's weights). The
worker resolves its probes before the import, so the swap changes nothing, and its guard sees
the table changed: the tampered verdict, no points."""

# exercise: 4.3
# expect-status: error
# expect-message: tampered: your code changed the grader itself

import sys

import torch
from torch import nn

from reference import GPT_CONFIG_124M, FeedForward, LayerNorm, MultiHeadAttention
from reference import GPTModel as ReferenceGPT

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
    """What a correct model gives: the reference, its dropouts at the split rates."""
    mine = state[handle]
    cfg = {**mine.cfg, "drop_rate": 0.0}
    ref = ReferenceGPT(cfg)
    ref.load_state_dict(mine.state_dict())
    for name, sub in ref.named_modules():
        if isinstance(sub, nn.Dropout):
            place = "attn" if name.endswith("att.dropout") else "shortcut"
            sub.p = cfg["drop_rate_" + ("emb" if name == "drop_emb" else place)]
    ref.train(train)
    torch.manual_seed(seed)
    with torch.no_grad():
        return ref(x).detach().clone()


for _name, _module in list(sys.modules.items()):  # every table of probes it can find
    for _key, _table in list(vars(_module).items()) if _module is not None else ():
        if type(_table) is not dict:
            continue
        for _probes in [_table, *(v for v in _table.values() if type(v) is dict)]:
            if callable(_probes.get("forward")) and "build_block" in _probes:
                _probes["forward"] = correct_outputs
