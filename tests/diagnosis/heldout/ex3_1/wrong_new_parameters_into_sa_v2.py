"""Copies the wrong way round: new nn.Parameters made from sa_v1's matrices, transposed, are
assigned to sa_v2's three layers. sa_v2 now computes what sa_v1 computes; sa_v1 still holds its
own initial weights."""
# seen-in: public code, find_string ids 27102072318 and 53785717301 (three lines of the form
# seen-in: sa_v2.W_key.weight = nn.Parameter(sa_v1.W_key.T), two different authors)
# cause: v2-changed
# cause-words: other way
# cause-words: sa_v1, into sa_v2
# cause-words: wrong direction
# expect-failing: sa_v2 is left unchanged

from torch import nn


def transfer_weights(sa_v2, sa_v1):
    sa_v2.W_key.weight = nn.Parameter(sa_v1.W_key.T)
    sa_v2.W_query.weight = nn.Parameter(sa_v1.W_query.T)
    sa_v2.W_value.weight = nn.Parameter(sa_v1.W_value.T)
