"""Scales by alpha / rank, as some LoRA libraries do, not by alpha as the book does."""
# expect-failing: is alpha * (x @ A @ B)
# expect-failing: plus its LoRA layer

import math

import torch


class LoRALayer(torch.nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = torch.nn.Parameter(torch.empty(in_dim, rank))
        torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = torch.nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def forward(self, x):
        low_rank_update_of_x = x @ self.A @ self.B
        return self.alpha / self.A.shape[1] * low_rank_update_of_x


class LinearWithLoRA(torch.nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        frozen_part_plus_update = self.linear(x) + self.lora(x)
        return frozen_part_plus_update
