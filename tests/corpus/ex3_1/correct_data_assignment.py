"""Replaces each parameter's .data with the transposed weight: the Parameter objects stay the
same (still registered, still requires_grad) and only their values change."""


def transfer_weights(sa_v2, sa_v1):
    sa_v1.W_query.data = sa_v2.W_query.weight.data.T.clone()
    sa_v1.W_key.data = sa_v2.W_key.weight.data.T.clone()
    sa_v1.W_value.data = sa_v2.W_value.weight.data.T.clone()
