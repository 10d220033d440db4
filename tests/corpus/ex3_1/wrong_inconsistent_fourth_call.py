"""Forgets the value weights on its fourth call only: state kept between calls, so the same
input can fail once and pass when run again. The grader says so instead of failing itself."""
# expect-failing: sa_v1 computes what sa_v2 computes
# expect-hint: keep no state from one call to the next

import torch

calls = [0]


def transfer_weights(sa_v2, sa_v1):
    calls[0] += 1
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
        sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
        if calls[0] != 4:
            sa_v1.W_value.copy_(sa_v2.W_value.weight.T)
