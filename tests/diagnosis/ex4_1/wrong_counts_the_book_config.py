"""The notebook's counting cell made a function: the block is built from GPT_CONFIG_124M, so
the cfg it is given is ignored and every answer is GPT-2 small's."""
# seen-in: seed 002 In[7]-In[8] (model = GPTModel(GPT_CONFIG_124M), then the counts read off its
# seen-in: first block)
# cause: ignored-argument
# cause-words: cfg
# expect-failing: feedforward_params counts the parameters of TransformerBlock(cfg).ff, for any

import torch

from reference import GPT_CONFIG_124M, TransformerBlock

torch.manual_seed(123)
_BLOCK = TransformerBlock(GPT_CONFIG_124M)


def feedforward_params(cfg):
    return sum(p.numel() for p in _BLOCK.ff.parameters())


def attention_params(cfg):
    return sum(p.numel() for p in _BLOCK.att.parameters())
