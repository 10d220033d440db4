"""3.1 with a real bug (transfer_weights also changes sa_v2), hidden by replacing
``nn.Module.state_dict``, the method a worker-side probe would read sa_v2 with, by a wrapper
that returns sa_v2's weights as they were; a thread puts the original back a moment later, so
that nothing is left changed when the guard looks. The worker reads what sa_v2 really holds
with torch's own C methods held from before this file ran: no more points than the same bug
without the lie."""

# exercise: 3.1
# expect-status: failed
# expect-message: transfer_weights changed sa_v2.W_query.weight

import threading
import time

import torch
from torch import nn

_original = nn.Module.state_dict


def transfer_weights(sa_v2, sa_v1):
    saved = {k: v.clone() for k, v in _original(sa_v2).items()}

    def lying(self, *args, **kwargs):
        return saved if self is sa_v2 else _original(self, *args, **kwargs)

    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_query.weight.T)
        sa_v1.W_key.copy_(sa_v2.W_key.weight.T)
        sa_v1.W_value.copy_(sa_v2.W_value.weight.T)
        sa_v2.W_query.weight.add_(1.0)  # the bug
    # the lie, undone by a thread before the next check:
    nn.Module.state_dict = lying  # the lie

    def undo():
        time.sleep(0.05)
        nn.Module.state_dict = _original

    threading.Thread(target=undo, daemon=True).start()
