"""Loads a state dict of the transposed weights into sa_v1: load_state_dict copies into the
existing parameters, which stay registered and trainable."""


def transfer_weights(sa_v2, sa_v1):
    sa_v1.load_state_dict(
        {name: getattr(sa_v2, name).weight.T for name in ("W_query", "W_key", "W_value")}
    )
