"""Sizes the causal mask for the short test sequence it was tried on (4 tokens) instead of GPT-2
small's 1024-token context: the module works on its own example and on nothing longer."""
# seen-in: public code, find_string id 54616116271 (a GPT config with "context_length": 4 for a
# seen-in: four-word prompt)
# seen-in: asceznyk/mingpt test.py (a 768-wide, 12-head self-attention configured with a block
# seen-in: size of 3 for a 3-token test input)
# cause: gpt2-sizes
# cause-words: context_length, 1024
# expect-failing: context_length = 1024

from reference import MultiHeadAttention

PROMPT = "every effort moves you"


def gpt2_small_attention():
    n_tokens = len(PROMPT.split())
    return MultiHeadAttention(768, 768, n_tokens, 0.0, num_heads=12)
