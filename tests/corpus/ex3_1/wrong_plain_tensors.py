"""Deletes sa_v1's parameters and puts plain tensors in their place: forward still works, but
the tensors are no longer registered parameters, so no optimizer would ever update them."""
# expect-failing: sa_v1's weights are still trainable parameters


def transfer_weights(sa_v2, sa_v1):
    for name in ("W_query", "W_key", "W_value"):
        w = getattr(sa_v2, name).weight.detach().T.clone()
        delattr(sa_v1, name)
        setattr(sa_v1, name, w)
