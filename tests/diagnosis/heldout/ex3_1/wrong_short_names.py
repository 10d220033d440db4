"""Written for the student's own SelfAttentionV1 whose parameters are wq, wk and wv: on the
book's class the three assignments add new parameters that forward never reads."""
# seen-in: public code, search result (a notebook class SelfAttentionV1 with self.wq, self.wk,
# seen-in: self.wv = nn.Parameter(torch.randn(d_in, d_out)))
# cause: transfer-wrong-name
# cause-words: wq
# expect-failing: sa_v1 computes what sa_v2 computes

import torch
from torch import nn


def transfer_weights(sa_v2, sa_v1):
    with torch.no_grad():
        sa_v1.wq = nn.Parameter(sa_v2.W_query.weight.T.clone())
        sa_v1.wk = nn.Parameter(sa_v2.W_key.weight.T.clone())
        sa_v1.wv = nn.Parameter(sa_v2.W_value.weight.T.clone())
