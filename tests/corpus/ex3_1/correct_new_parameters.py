"""Assigns new nn.Parameter objects made from the transposed weights (seed 004): the new
parameters replace the old ones on the module and stay trainable."""

import torch


def transfer_weights(sa_v2, sa_v1):
    sa_v1.W_query = torch.nn.Parameter(sa_v2.W_query.weight.T)
    sa_v1.W_key = torch.nn.Parameter(sa_v2.W_key.weight.T)
    sa_v1.W_value = torch.nn.Parameter(sa_v2.W_value.weight.T)
