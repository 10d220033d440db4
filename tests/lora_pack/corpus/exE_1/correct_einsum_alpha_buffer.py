"""Computes the update with einsum, and keeps alpha as a buffer."""

import math

import torch


class LoRALayer(torch.nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = torch.nn.Parameter(torch.empty(in_dim, rank))
        torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = torch.nn.Parameter(torch.zeros(rank, out_dim))
        self.register_buffer("alpha", torch.tensor(float(alpha)))

    def forward(self, x):
        low_rank_update_of_x = torch.einsum("...i,ir,ro->...o", x, self.A, self.B)
        return self.alpha * low_rank_update_of_x


class LinearWithLoRA(torch.nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        frozen_part_plus_update = self.linear(x) + self.lora(x)
        return frozen_part_plus_update
