"""An in-place copy under no_grad, written with the target and the source exchanged: sa_v2's
weights receive sa_v1's transposed matrices."""
# seen-in: public code, find_string id 53785717301 (the comment "copy V1 weights into V2", the
# seen-in: transfer done from sa_v1 to sa_v2)
# cause: v2-changed
# cause-words: other way
# cause-words: sa_v1, into sa_v2
# cause-words: wrong direction
# expect-failing: sa_v2 is left unchanged

import torch


@torch.no_grad()
def transfer_weights(sa_v2, sa_v1):
    sa_v2.W_query.weight.copy_(sa_v1.W_query.T)
    sa_v2.W_key.weight.copy_(sa_v1.W_key.T)
    sa_v2.W_value.weight.copy_(sa_v1.W_value.T)
