"""LoRALayer's constructor is spelled __int__: Python never calls it, so building the layer
runs nn.Module's own __init__, which takes no arguments; the misspelling is named, with its
fix, from the class itself."""

# expect-failing: LoRALayer
# expect-hint: rename __int__ to __init__

import math

import torch


class LoRALayer(torch.nn.Module):
    def __int__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = torch.nn.Parameter(torch.empty(in_dim, rank))
        torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = torch.nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * (x @ self.A @ self.B)


class LinearWithLoRA(torch.nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        return self.linear(x) + self.lora(x)
