"""Sums numel() over state_dict() instead of parameters(): the causal mask buffer
(context_length x context_length) is counted as if it were trainable."""
# expect-failing: when qkv_bias is False
# expect-failing: when qkv_bias is True
# expect-failing: exact for GPT-2-sized
# expect-hint: register_buffer
# expect-no-hint: exact Python int

from reference import TransformerBlock


def feedforward_params(cfg):
    return sum(t.numel() for t in TransformerBlock(cfg).ff.state_dict().values())


def attention_params(cfg):
    return sum(t.numel() for t in TransformerBlock(cfg).att.state_dict().values())
