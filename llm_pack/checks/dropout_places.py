"""Where each of 4.3's three dropout rates acts, and what to do when one acts elsewhere: the
isolation checks' hints (``ex4_3``) and the cause a train-mode trace finds in a dropout of the
wrong rate (``localized``)."""

from __future__ import annotations

import torch
from torch import nn

from grader.pack.judge import PART, Cause, Difference

# Each rate's hint, as its isolation check gives it.
RATE_HINTS = {
    "drop_rate_emb": "GPTModel's drop_emb = nn.Dropout(cfg['drop_rate_emb']), applied to the "
    "sum of the token and position embeddings, and only there.",
    "drop_rate_shortcut": "TransformerBlock's drop_shortcut = "
    "nn.Dropout(cfg['drop_rate_shortcut']) is applied twice: to the attention output and to the "
    "feed-forward output, each before it is added back to its shortcut.",
    "drop_rate_attn": "the attention dropout lives in MultiHeadAttention: pass "
    "dropout=cfg['drop_rate_attn'] when TransformerBlock builds self.att.",
}


def rate_of(reference_name: str) -> str | None:
    """The rate the book's dropout of that (reference) name is built with."""
    parts = reference_name.split(".")
    if parts[-2:] == ["att", "dropout"]:
        return "drop_rate_attn"
    return {"drop_shortcut": "drop_rate_shortcut", "drop_emb": "drop_rate_emb"}.get(parts[-1])


def dropout_of_another_rate(found: Difference, part: nn.Module) -> Cause | None:
    """For a trace run in train mode with rates of 0 and 1: a dropout of the student's that
    zeroes what the book's keeps (or keeps what it zeroes) is built with another rate than its
    place's; None for anything else (a NaN, a part that is not one of the three dropouts)."""
    key = rate_of(found.reference)
    p = getattr(part, "p", None)
    given, gave = found.given, found.gave
    if found.own_forward or key is None or p not in (0, 1) or given is None or gave is None:
        return None
    if given.shape != gave.shape or not bool((given != 0).any()):
        return None
    if p == 0 and bool((gave == 0).all()):
        did, book = "zeroes all it is given", "keeps it"
    elif p == 1 and bool(torch.equal(gave, given)):
        did, book = "keeps all it is given", "zeroes it"
    else:
        return None
    text = (
        f"in train mode, {found.where()} {did}, where the book's {book}: the book builds it "
        f"with cfg['{key}'], {p:g} in this example"
    )
    return Cause(f"dropout:{key}:{did.split()[0]}", text, RATE_HINTS[key], PART)
