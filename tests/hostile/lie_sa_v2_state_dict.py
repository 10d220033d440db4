"""3.1 with a real bug (transfer_weights also changes sa_v2, which must stay as it was), hidden
by giving sa_v2 a ``state_dict`` that returns a copy saved before the change. The worker reads
what sa_v2 really holds, not what its methods say, so the bug is seen: no more points than the
same bug without the lie."""

# exercise: 3.1
# expect-status: failed
# expect-message: transfer_weights changed sa_v2.W_query.weight

import torch


def transfer_weights(sa_v2, sa_v1):
    saved = {k: v.clone() for k, v in sa_v2.state_dict().items()}
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
        sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
        sa_v1.W_value.copy_(sa_v2.W_value.weight.T)
        sa_v2.W_query.weight.add_(1.0)  # the bug
    sa_v2.state_dict = lambda *args, **kwargs: saved  # the lie
