"""Exercise 4.1 — Number of parameters in the feed-forward and attention modules.

A ``TransformerBlock(cfg)`` holds a feed-forward module (``block.ff``) and a multi-head
attention module (``block.att``).

Your task: write ``feedforward_params(cfg)`` and ``attention_params(cfg)`` that return the
number of trainable parameters in each of the two modules of one block built from ``cfg``.

What is graded:
- the exact counts for any valid GPT config (``emb_dim`` divisible by ``n_heads``, with
  ``qkv_bias`` true or false), not only for ``GPT_CONFIG_124M``;
- only parameters count: buffers such as the causal mask are not parameters.
Counting a real module or writing a formula both work.

Hint: an ``nn.Linear(a, b)`` holds ``a * b`` weights plus ``b`` biases when it has a bias.
Which of the block's linear layers have one?
"""


def feedforward_params(cfg: dict) -> int:
    """Trainable parameters in ``TransformerBlock(cfg).ff``."""
    raise NotImplementedError(
        "Exercise 4.1 is not done yet: write feedforward_params() in "
        "exercises/ex4_1_parameter_counts.py."
    )


def attention_params(cfg: dict) -> int:
    """Trainable parameters in ``TransformerBlock(cfg).att``."""
    raise NotImplementedError(
        "Exercise 4.1 is not done yet: write attention_params() in "
        "exercises/ex4_1_parameter_counts.py."
    )
