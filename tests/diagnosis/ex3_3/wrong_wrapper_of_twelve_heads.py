"""Builds GPT-2 small's attention from the wrapper class of section 3.6.1: twelve CausalAttention
heads, each 768 wide with its own 1024 x 1024 mask, concatenated to 9,216 dimensions."""
# seen-in: issue 41's survey ("a GPT-2-sized attention built from the wrong class (106 M
# seen-in: parameters): verdict error")
# cause: wrong-class
# cause-words: MultiHeadAttentionWrapper
# expect-failing: it is the book's MultiHeadAttention with 12 heads

from reference import MultiHeadAttentionWrapper


def gpt2_small_attention():
    return MultiHeadAttentionWrapper(
        d_in=768, d_out=768, context_length=1024, dropout=0.0, num_heads=12
    )
