"""Counts the feed-forward parameters of the whole model, summed over every block of
GPTModel(cfg), where the exercise asks for the ff module of one TransformerBlock: the answer is
n_layers times too large."""
# seen-in: prp-e/minillm params_calculator.py (ffn_params = n_layers * (2 * d_model * d_ff):
# seen-in: per-module counts taken over all layers)
# seen-in: issue 56 ("feedforward_params(cfg) summed over all n_layers blocks")
# cause: layers-multiple
# cause-words: n_layers
# expect-failing: feedforward_params counts the parameters of TransformerBlock(cfg).ff

import torch

from reference import GPTModel


def _count(modules):
    return sum(p.numel() for m in modules for p in m.parameters())


def feedforward_params(cfg):
    with torch.device("meta"):
        model = GPTModel(cfg)
    return _count(block.ff for block in model.trf_blocks)


def attention_params(cfg):
    with torch.device("meta"):
        model = GPTModel(cfg)
    return _count([model.trf_blocks[0].att])
