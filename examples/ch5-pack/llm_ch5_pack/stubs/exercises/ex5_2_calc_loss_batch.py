"""Exercise 5.2 — The loss of one batch.

Chapter 5 trains the GPT model by minimising the cross-entropy between its next-token logits
and the target tokens (the inputs shifted by one).

Your task: write ``calc_loss_batch(input_batch, target_batch, model, device)``. Given a batch
of token ids ``input_batch`` and the matching ``target_batch`` (both of shape
``(batch, n_tokens)``), a model that maps token ids to logits of shape
``(batch, n_tokens, vocab_size)`` and a device (``"cpu"``), return the mean cross-entropy of
the model's logits against the targets, over every token of every row, as a tensor (a float is
accepted too).

What is graded: the value, for any tiny GPT model (``llm_ch5_pack.reference.tiny_gpt``), any
batch size and any number of tokens up to the model's context length.

Hint: ``torch.nn.functional.cross_entropy`` wants the logits as ``(N, vocab_size)`` and the
targets as ``(N,)``: flatten the batch and token dimensions together first.
"""


def calc_loss_batch(input_batch, target_batch, model, device):
    """The mean cross-entropy of ``model(input_batch)`` against ``target_batch``."""
    raise NotImplementedError(
        "Exercise 5.2 is not done yet: write calc_loss_batch() in "
        "exercises/ex5_2_calc_loss_batch.py."
    )
