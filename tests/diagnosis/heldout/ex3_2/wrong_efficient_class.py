"""Reaches for the efficient MultiHeadAttention of section 3.6.2 because its d_out is the final
width: two heads of width 1 and 2-dimensional outputs, but not the wrapper the exercise asks
for (it has an output projection and one set of weights split in two)."""
# seen-in: Swamy-s-Tech-Skills-Academy-2026/llms-from-scratch-practice
# seen-in: notebooks/ch03/exercise-solutions.ipynb (takeaway of 3.2: "The efficient
# seen-in: MultiHeadAttention class ... lets me control the final output dim directly via d_out")
# cause: wrong-class
# cause-words: MultiHeadAttentionWrapper
# expect-failing: it is a MultiHeadAttentionWrapper with exactly two heads

from reference import MultiHeadAttention


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttention(d_in, 2, context_length, dropout, num_heads=2)
