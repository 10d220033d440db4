"""Stores A as (rank, in_dim) and B as (out_dim, rank), as nn.Linear would."""
# expect-failing: is alpha * (x @ A @ B)
# expect-hint: A (in_dim x rank) and B (rank x out_dim)
# expect-message: weight 'A' has shape

import math

import torch


class LoRALayer(torch.nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = torch.nn.Parameter(torch.empty(rank, in_dim))
        torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = torch.nn.Parameter(torch.zeros(out_dim, rank))
        self.alpha = alpha

    def forward(self, x):
        low_rank_update_of_x = x @ self.A.T @ self.B.T
        return self.alpha * low_rank_update_of_x


class LinearWithLoRA(torch.nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        frozen_part_plus_update = self.linear(x) + self.lora(x)
        return frozen_part_plus_update
