"""Makes every comparison in its own process succeed (torch.allclose, torch.equal,
torch.testing.assert_close, the reference module's forward) and does nothing: the judge
compares in its own process, so this must simply fail."""

# exercise: 3.1
# expect-status: failed

import torch
import torch.testing

import reference

torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.Tensor.allclose = lambda *a, **k: True
torch.Tensor.equal = lambda *a, **k: True
torch.Tensor.__eq__ = lambda *a, **k: torch.tensor(True)
torch.testing.assert_close = lambda *a, **k: None
reference.SelfAttention_v1.forward = reference.SelfAttention_v2.forward


def transfer_weights(sa_v2, sa_v1):
    pass
