"""Exercise 4.3's models that differ from the book's in names only, in the book's words.

A ``GPTModel`` whose blocks live in ``self.transformer_blocks`` instead of the book's
``self.trf_blocks`` computes exactly what the book's computes, but the book's weights do not
load into it by name. The exercise asks for the book's names, and the state-dict keys check
deducts that, once, saying which names differ (``naming_only``); the behaviour checks load the
book's weights under the student's names (the grader's ``under_student_names``), and
``BOOK_WEIGHTS_SOURCE`` does the same in the reproduce snippets.
"""

from __future__ import annotations

from typing import Any

from grader.pack.judge import renamings


def naming_only(expected: dict[str, tuple[int, ...]], shapes: dict[str, Any]) -> str | None:
    """The keys check's message for a state_dict that differs from the book's (``expected``,
    key -> shape, in order) in names only, or None when it differs in more."""
    said = renamings(expected, shapes)
    if said is None:
        return None
    names = ", ".join(said[:4]) + (f" and {len(said) - 4} more" if len(said) > 4 else "")
    return (
        f"your state_dict names {names}: the exercise asks for the book's names (a checkpoint "
        "of the book's model must load into yours). In everything else its keys match the "
        "book's one to one, in order and shape, so the other checks load the book's weights "
        "under your names"
    )


BOOK_WEIGHTS_SOURCE = """\
def book_weights(model, reference):
    # The reference's parameters (the causal masks stay your model's own), under your
    # model's names where these differ from the book's in names only (matched in order).
    weights, mine = dict(reference.named_parameters()), dict(model.named_parameters())
    shapes = [p.shape for p in mine.values()] == [w.shape for w in weights.values()]
    if not set(weights) <= set(mine) and shapes:
        weights = dict(zip(mine, weights.values()))
    return weights
"""
