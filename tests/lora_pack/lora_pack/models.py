"""What the LoRA pack's judge, workers and students share: the ``nn.Linear`` a judge describes
as plain data, rebuilt."""

from torch import nn


def linear(sizes: list) -> nn.Linear:
    """``nn.Linear(in_features, out_features)`` from ``[in_features, out_features]``."""
    return nn.Linear(int(sizes[0]), int(sizes[1]))
