"""Exercise 5.1 — Text generation with temperature scaling and top-k sampling.

Chapter 4's ``generate_text_simple`` always picks the most likely next token (greedy decoding),
so the same prompt always gives the same text. Chapter 5 replaces it with ``generate``, which
can sample: it cuts the last position's logits to the ``top_k`` largest (the others become
``-inf``), divides them by ``temperature`` and draws the next token from their softmax.

Your task: write ``generate(model, idx, max_new_tokens, context_size, temperature=0.0,
top_k=None, eos_id=None)`` as in the book. ``idx`` is a ``(batch, n_tokens)`` tensor of token
ids; the result is ``idx`` with up to ``max_new_tokens`` new tokens appended.

The grader runs your ``generate`` on tiny GPT models built from ``reference.GPTModel`` and on
a model whose next-token logits never change. Install the pack to build them yourself:
``from llm_ch5_pack.reference import tiny_gpt, FixedLogits``; the book's ``generate`` to compare
with, in your own Python: ``from llm_ch5_pack.oracle import generate`` (no answer may import it:
the grader refuses it). What is graded:
- with ``temperature=0.0`` (the default), whatever ``top_k`` is, every new token is the argmax
  of the model's logits at the last position: greedy decoding, token for token;
- with ``top_k=1`` the result is the same greedy continuation at any temperature;
- at each step the model is called once, with only the last ``context_size`` tokens of the
  sequence so far;
- the result has shape ``(batch, n_tokens + max_new_tokens)``, starts with ``idx``, and with
  ``top_k=k`` every sampled token is one of the k largest logits at its step;
- ``eos_id``: when the next token would be ``eos_id``, generation stops without appending it;
- with ``temperature=T > 0`` and ``top_k=k`` the sampled tokens follow
  ``softmax(top-k-filtered logits / T)``. The grader draws 1000 tokens in one call (on a
  model whose next-token logits never change) and compares their frequencies with that
  distribution by a chi-square test at significance 1e-6. The torch seed of each test is fixed,
  so a correct answer gets the same verdict on every run; over random seeds it would fail about
  one test in a million (five tests are run). Only the distribution is checked:
  ``torch.multinomial`` or any other correct way of sampling passes.

Batch sizes: the grader uses a batch of one row whenever ``top_k`` or ``eos_id`` is given (the
book's code handles one row there) and batches of 1 to 3 rows for plain greedy decoding.

Hints: the book's ``min_val = top_logits[:, -1]`` has shape ``(batch,)``; keep its dimension
(``top_logits[:, -1:]``) if you want your function to work for several rows too. Divide by the
temperature: a temperature above 1 flattens the distribution, below 1 sharpens it.
"""

import torch  # noqa: F401 - you will need it


def generate(model, idx, max_new_tokens, context_size, temperature=0.0, top_k=None, eos_id=None):
    """Append up to ``max_new_tokens`` tokens to ``idx`` (greedy when ``temperature`` is 0.0,
    else sampled from the top-k logits divided by ``temperature``); stop early at ``eos_id``."""
    raise NotImplementedError(
        "Exercise 5.1 is not done yet: write generate() in exercises/ex5_1_generate.py "
        "(crop the context, filter the top-k logits, scale by the temperature, sample)."
    )
