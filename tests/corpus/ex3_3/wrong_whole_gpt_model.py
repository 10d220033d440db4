"""Returns the whole GPT-2 small model instead of its attention module: an honest mistake,
and a big one (163 M parameters, over 600 MB of weights). The report must say what came back
(class, parameter count, largest weights), not fail on the size of the reply."""
# expect-failing: it is the book's MultiHeadAttention with 12 heads
# expect-failing: d_in = d_out = 768
# expect-message: returned a GPTModel with 163,009,536 parameters

from reference import GPT_CONFIG_124M, GPTModel


def gpt2_small_attention():
    return GPTModel(GPT_CONFIG_124M)
