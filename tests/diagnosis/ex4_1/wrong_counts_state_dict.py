"""Counts every tensor of the modules' state_dict(): for att that includes the causal mask, a
context_length x context_length buffer that is not a parameter."""
# seen-in: public code, find_string ids 70895501956 and 36119104343 (parameter counts taken as
# seen-in: sum(p.numel() for p in model.state_dict().values()))
# cause: mask-counted
# cause-words: mask
# expect-failing: attention_params counts the parameters of TransformerBlock(cfg).att when qkv_bias

from reference import TransformerBlock


def _count(module):
    return sum(t.numel() for t in module.state_dict().values())


def feedforward_params(cfg):
    return _count(TransformerBlock(cfg).ff)


def attention_params(cfg):
    return _count(TransformerBlock(cfg).att)
