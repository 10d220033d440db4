"""Reports the counts in millions, rounded to one decimal, as a model summary prints them:
4.7 for GPT-2 small's feed-forward module instead of 4,722,432."""
# seen-in: prp-e/minillm params_calculator.py (print(f"~ {total_params/1e6:.1f}M parameters"))
# cause: inexact-count
# cause-words: million
# cause-words: rounded
# cause-words: not an int
# cause-words: a float
# expect-failing: feedforward_params counts the parameters of TransformerBlock(cfg).ff

import torch

from reference import TransformerBlock


def _millions(module):
    return round(sum(p.numel() for p in module.parameters()) / 1e6, 1)


def feedforward_params(cfg):
    with torch.device("meta"):
        return _millions(TransformerBlock(cfg).ff)


def attention_params(cfg):
    with torch.device("meta"):
        return _millions(TransformerBlock(cfg).att)
