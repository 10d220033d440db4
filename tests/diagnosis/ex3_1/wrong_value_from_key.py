"""Copies in place under no_grad, one loop over (target, source) pairs whose last pair names the
key projection twice: W_value gets the key weight."""
# seen-in: issue 41's survey (a transfer that assigns one projection twice and another never)
# cause: transfer-missing-weight
# cause-words: W_value
# expect-failing: sa_v1 computes what sa_v2 computes, for any d_in, d_out and input

import torch

PAIRS = [("W_query", "W_query"), ("W_key", "W_key"), ("W_value", "W_key")]


def transfer_weights(sa_v2, sa_v1):
    with torch.no_grad():
        for target, source in PAIRS:
            getattr(sa_v1, target).copy_(getattr(sa_v2, source).weight.T)
