"""Exercise E.1: low-rank adaptation (appendix E).

Write ``LoRALayer(in_dim, out_dim, rank, alpha)``, a module with two trainable weights, ``A`` of
shape ``(in_dim, rank)`` and ``B`` of shape ``(rank, out_dim)``, whose forward pass returns
``alpha * (x @ A @ B)``; and ``LinearWithLoRA(linear, rank, alpha)``, which keeps the
``nn.Linear`` ``linear`` as ``self.linear``, adds ``self.lora``, a ``LoRALayer`` of the same
input and output sizes, and returns the sum of both layers' outputs.

Hint: initialise ``B`` with zeros, so that a fresh ``LinearWithLoRA`` computes what ``linear``
computes.
"""

import torch


class LoRALayer(torch.nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        raise NotImplementedError("E.1: define A, B and alpha")

    def forward(self, x):
        raise NotImplementedError("E.1: return alpha * (x @ A @ B)")


class LinearWithLoRA(torch.nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        raise NotImplementedError("E.1: keep linear, build a LoRALayer")

    def forward(self, x):
        raise NotImplementedError("E.1: add both layers' outputs")
