"""Assigns new parameters the other way round: sa_v2's layers get sa_v1's matrices (transposed),
and sa_v1 keeps its own random weights. The two modules then compute the same thing, but the
source was overwritten and nothing reached sa_v1."""
# seen-in: public code, find_string ids 29783645073 and 27102072318 (two chapter 3 scripts:
# seen-in: sa_v2.W_query.weight = nn.Parameter(sa_v1.W_query.T), and so for W_key and W_value)
# cause: v2-changed
# cause-words: other way, from sa_v1 into sa_v2
# expect-failing: sa_v2 is left unchanged
# expect-failing: sa_v1 computes what sa_v2 computes

from torch import nn


def transfer_weights(sa_v2, sa_v1):
    for name in ("W_query", "W_key", "W_value"):
        layer = getattr(sa_v2, name)
        layer.weight = nn.Parameter(getattr(sa_v1, name).detach().T.clone())
