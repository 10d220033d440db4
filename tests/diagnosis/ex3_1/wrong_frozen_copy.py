"""Builds the new parameters as the chapter's walk-through builds its weights, with
requires_grad=False: outputs match, but sa_v1 can no longer be trained."""
# seen-in: seed 003 In (section 3.4.1): W_query = torch.nn.Parameter(torch.rand(d_in, d_out),
# seen-in: requires_grad=False)
# cause: frozen-weights
# cause-words: requires_grad
# cause-words: trainable
# expect-failing: sa_v1's weights are still trainable parameters

import torch


def transfer_weights(sa_v2, sa_v1):
    sa_v1.W_query = torch.nn.Parameter(sa_v2.W_query.weight.T, requires_grad=False)
    sa_v1.W_key = torch.nn.Parameter(sa_v2.W_key.weight.T, requires_grad=False)
    sa_v1.W_value = torch.nn.Parameter(sa_v2.W_value.weight.T, requires_grad=False)
