"""Passes the width of one head (64) where the number of heads (12) goes."""
# seen-in: seed 004 In[37] (the comment "num_heads = 12 # 64 * 12 = 768" weighs the head width
# seen-in: against the head count)
# cause: head-count
# cause-words: num_heads
# cause-words: heads
# expect-failing: it is the book's MultiHeadAttention with 12 heads

from reference import MultiHeadAttention

HEAD_DIM = 64


def gpt2_small_attention():
    return MultiHeadAttention(768, 768, 1024, 0.0, num_heads=HEAD_DIM)
