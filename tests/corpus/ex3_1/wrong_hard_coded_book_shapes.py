"""Hard-codes the book's shapes (d_in=3, d_out=2) in a reshape: right for the book's
example only; any other d_in or d_out breaks it."""
# expect-failing: sa_v1 computes what sa_v2 computes

from torch import nn


def transfer_weights(sa_v2, sa_v1):
    sa_v1.W_query = nn.Parameter(sa_v2.W_query.weight.detach().reshape(2, 3).T.clone())
    sa_v1.W_key = nn.Parameter(sa_v2.W_key.weight.detach().reshape(2, 3).T.clone())
    sa_v1.W_value = nn.Parameter(sa_v2.W_value.weight.detach().reshape(2, 3).T.clone())
