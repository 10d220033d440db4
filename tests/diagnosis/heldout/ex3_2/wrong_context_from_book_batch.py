"""Takes the context length from the book's example batch (batch.shape[1], six tokens), as the
chapter's cell does, instead of the context_length it is given: the mask is 6 x 6 whatever the
argument says."""
# seen-in: TheEvergreenStateCollege/upper-division-cs-23-24
# seen-in: ai-24sp/assignments/mrtimmyj/week8/3_4_3_multi_head.py and
# seen-in: ai-24sp/assignments/AkinaS/week7/three_six_one.py (context_length = batch.shape[1])
# cause: ignored-argument
# cause-words: context_length
# expect-failing: the d_in, context_length and dropout it is given are the ones it uses

import torch

from reference import MultiHeadAttentionWrapper

inputs = torch.tensor(
    [
        [0.43, 0.15, 0.89],
        [0.55, 0.87, 0.66],
        [0.57, 0.85, 0.64],
        [0.22, 0.58, 0.33],
        [0.77, 0.25, 0.10],
        [0.05, 0.80, 0.55],
    ]
)
batch = torch.stack((inputs, inputs), dim=0)


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    context_length = batch.shape[1]  # the number of tokens
    return MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)
