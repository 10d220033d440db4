"""Overwrites the .data of sa_v2's layers with sa_v1's matrices, transposed: the values travel
from sa_v1 to sa_v2, the opposite of what the exercise asks."""
# seen-in: public code, find_string id 29783645073 (sa_v2.W_query.weight = torch.nn.Parameter(
# seen-in: sa_v1.W_query.data.T) after printing both shapes)
# cause: v2-changed
# cause-words: other way
# cause-words: sa_v1, into sa_v2
# cause-words: wrong direction
# expect-failing: sa_v2 is left unchanged


def transfer_weights(sa_v2, sa_v1):
    for name in ("W_query", "W_key", "W_value"):
        layer = getattr(sa_v2, name)
        layer.weight.data = getattr(sa_v1, name).data.T.clone()
