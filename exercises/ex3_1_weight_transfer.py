"""Exercise 3.1 — Comparing SelfAttention_v1 and SelfAttention_v2.

``SelfAttention_v1`` keeps its three projections as raw ``nn.Parameter`` matrices;
``SelfAttention_v2`` uses ``nn.Linear`` layers. Because they are initialised differently, two
fresh instances give different context vectors even for the same ``d_in`` and ``d_out``.

Your task: write ``transfer_weights(sa_v2, sa_v1)`` so that, after the call, ``sa_v1`` computes
exactly what ``sa_v2`` computes.

What is graded:
- ``sa_v1(x)`` equals ``sa_v2(x)`` for any ``d_in``, ``d_out`` and any input of shape
  ``(n_tokens, d_in)`` (not only the book's 3 -> 2 example);
- ``sa_v2`` is left exactly as it was;
- ``sa_v1``'s three weights are still trainable parameters (gradients must reach them).
Copying into the existing parameters or assigning new ``nn.Parameter`` objects both count.

Hint: compare ``sa_v1.W_query.shape`` with ``sa_v2.W_query.weight.shape`` for a non-square
case such as ``d_in=3, d_out=2``. How does ``nn.Linear`` store its weight?
"""

from reference import SelfAttention_v1, SelfAttention_v2


def transfer_weights(sa_v2: SelfAttention_v2, sa_v1: SelfAttention_v1) -> None:
    """Make ``sa_v1`` compute what ``sa_v2`` computes, changing ``sa_v1`` only."""
    raise NotImplementedError(
        "Exercise 3.1 is not done yet: write transfer_weights() in "
        "exercises/ex3_1_weight_transfer.py (copy sa_v2's three weights into sa_v1)."
    )
