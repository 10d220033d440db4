"""Exercise 4.2 — Initializing larger GPT models.

GPT-2 comes in four sizes that differ only in width, depth and head count:

    small   emb_dim  768   n_layers 12   n_heads 12
    medium  emb_dim 1024   n_layers 24   n_heads 16
    large   emb_dim 1280   n_layers 36   n_heads 20
    xl      emb_dim 1600   n_layers 48   n_heads 25

Your task:
- fill ``GPT2_CONFIGS`` with the keys ``"small"``, ``"medium"``, ``"large"`` and ``"xl"``, each
  a copy of ``GPT_CONFIG_124M`` in which only ``emb_dim``, ``n_layers`` and ``n_heads`` change;
- write ``total_params(cfg)``: the number of parameters of ``GPTModel(cfg)`` as the book
  defines it (the output head is *not* tied to the token embedding);
- write ``model_size_mb(cfg)``: the memory those parameters take as float32 (4 bytes each),
  in megabytes of 1024 * 1024 bytes.

What is graded: the four configs; ``total_params`` and ``model_size_mb`` for these and for any
other valid config. Instantiating the model is allowed (the grader builds it on PyTorch's
``meta`` device, which allocates no memory), and so is a closed formula.

Hint: ``GPT_CONFIG_124M`` is a dict; changing a copy leaves the original alone.
"""

from reference import GPT_CONFIG_124M  # noqa: F401 - you will need it

GPT2_CONFIGS: dict[str, dict] = {}


def total_params(cfg: dict) -> int:
    """Number of parameters of ``GPTModel(cfg)`` (untied output head)."""
    raise NotImplementedError(
        "Exercise 4.2 is not done yet: fill GPT2_CONFIGS and write total_params() and "
        "model_size_mb() in exercises/ex4_2_scaled_configs.py."
    )


def model_size_mb(cfg: dict) -> float:
    """Size of ``GPTModel(cfg)``'s parameters in float32, in MB of 1024 * 1024 bytes."""
    raise NotImplementedError(
        "Exercise 4.2 is not done yet: write model_size_mb() in exercises/ex4_2_scaled_configs.py."
    )
