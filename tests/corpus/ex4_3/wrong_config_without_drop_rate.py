"""Splits drop_rate into the three keys in the config, but builds its blocks from the
reference's TransformerBlock, which still reads cfg["drop_rate"]: a KeyError, raised in the
reference's code, called from this file."""
# expect-failing: same state_dict keys
# expect-failing: in eval mode
# expect-failing: drop_rate_emb acts
# expect-failing: drop_rate_shortcut acts
# expect-failing: drop_rate_attn acts
# expect-failing: on its own
# expect-failing: three different rates
# expect-message: (in ex4_3_split_dropout.py, line 39, in
# expect-message: raised in reference/gpt.py, line 65, in TransformerBlock.__init__
# expect-hint: your config has no 'drop_rate'
# expect-message: (it has 'drop_rate_emb', 'drop_rate_shortcut' and 'drop_rate_attn')
# expect-hint: reference/gpt.py, line 65 reads it
# expect-no-hint: nn.Parameter

import torch
from torch import nn

import reference
from reference import GPT_CONFIG_124M, LayerNorm

GPT_CONFIG_SPLIT_DROPOUT = {k: v for k, v in GPT_CONFIG_124M.items() if k != "drop_rate"}
GPT_CONFIG_SPLIT_DROPOUT.update(
    {"drop_rate_emb": 0.1, "drop_rate_shortcut": 0.2, "drop_rate_attn": 0.3}
)

TransformerBlock = reference.TransformerBlock


class GPTModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.pos_emb = nn.Embedding(cfg["context_length"], cfg["emb_dim"])
        self.drop_emb = nn.Dropout(cfg["drop_rate_emb"])
        self.trf_blocks = nn.Sequential(
            *[reference.TransformerBlock(cfg) for _ in range(cfg["n_layers"])]
        )
        self.final_norm = LayerNorm(cfg["emb_dim"])
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)

    def forward(self, in_idx):
        batch_size, seq_len = in_idx.shape
        tok_embeds = self.tok_emb(in_idx)
        pos_embeds = self.pos_emb(torch.arange(seq_len, device=in_idx.device))
        x = tok_embeds + pos_embeds
        x = self.drop_emb(x)
        x = self.trf_blocks(x)
        x = self.final_norm(x)
        return self.out_head(x)
