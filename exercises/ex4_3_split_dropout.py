"""Exercise 4.3 — Using separate dropout parameters.

The book's GPT model uses one ``drop_rate`` everywhere. Give each place its own rate.

Your task:
- ``GPT_CONFIG_SPLIT_DROPOUT``: ``GPT_CONFIG_124M`` with ``drop_rate`` replaced by three keys,
  ``drop_rate_emb``, ``drop_rate_shortcut`` and ``drop_rate_attn`` (any rates you like);
- ``TransformerBlock(cfg)`` and ``GPTModel(cfg)``: the book's classes, reading those three
  rates instead of ``drop_rate``.

What is graded:
- the config has exactly those keys, with the 124M values for the others;
- the model has the same state-dict keys as the reference ``GPTModel`` and, in eval mode, the
  same logits for the same weights, for any config;
- in train mode, ``drop_rate_emb`` acts on the embeddings only, ``drop_rate_shortcut`` on the
  two shortcut branches of every block only, and ``drop_rate_attn`` on the attention weights of
  every block only; ``TransformerBlock(cfg)`` on its own too (it needs nothing but ``cfg``).

Hint: the attention dropout does not live in ``TransformerBlock`` itself: follow where the
block passes its rate on.
"""

from torch import nn

from reference import FeedForward, LayerNorm, MultiHeadAttention  # noqa: F401 - you will need them

GPT_CONFIG_SPLIT_DROPOUT: dict = {}

_TODO = (
    "Exercise 4.3 is not done yet: fill GPT_CONFIG_SPLIT_DROPOUT and complete TransformerBlock "
    "and GPTModel in exercises/ex4_3_split_dropout.py."
)


class TransformerBlock(nn.Module):
    """The book's transformer block, with a separate rate for shortcut and attention dropout."""

    def __init__(self, cfg: dict):
        super().__init__()
        raise NotImplementedError(_TODO)

    def forward(self, x):
        raise NotImplementedError(_TODO)


class GPTModel(nn.Module):
    """The book's GPT model, with a separate rate for the embedding dropout."""

    def __init__(self, cfg: dict):
        super().__init__()
        raise NotImplementedError(_TODO)

    def forward(self, in_idx):
        raise NotImplementedError(_TODO)
