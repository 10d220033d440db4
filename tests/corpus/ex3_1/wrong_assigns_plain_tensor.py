"""Assigns the transposed weights as they are: ``sa_v2.W_query.weight.T`` is a plain tensor, and
PyTorch refuses a plain tensor in place of sa_v1's ``nn.Parameter`` (TypeError). The transpose is
right, so the hint must be about the parameter, not about transposing."""
# expect-failing: sa_v1 computes what sa_v2 computes
# expect-failing: still trainable parameters
# expect-hint: nn.Parameter(tensor)
# expect-no-hint: stores its weight with shape


def transfer_weights(sa_v2, sa_v1):
    sa_v1.W_query = sa_v2.W_query.weight.T
    sa_v1.W_key = sa_v2.W_key.weight.T
    sa_v1.W_value = sa_v2.W_value.weight.T
