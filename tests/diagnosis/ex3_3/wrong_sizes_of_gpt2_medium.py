"""Builds the attention of GPT-2 medium (1024 wide, 16 heads) where GPT-2 small's is asked for:
the sizes of the wrong row of the book's table of GPT-2 sizes, not a head count confused with a
head width."""
# seen-in: seed 002 In[9] (GPT_CONFIG_SMALL, GPT_CONFIG_MEDIUM, ... side by side, one row
# seen-in: away from the other) and public code, find_string id 52396585703 (an attention
# seen-in: whose sizes are the defaults of one model size: emb_dim=768, n_head=12)
# cause: gpt2-sizes
# cause-words: 768
# expect-failing: d_in = d_out = 768 and context_length = 1024

from reference import MultiHeadAttention


def gpt2_small_attention():
    return MultiHeadAttention(1024, 1024, 1024, 0.0, num_heads=16)
