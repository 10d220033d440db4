"""Where each of 4.3's three dropout rates acts, and what to do when one acts elsewhere: the
isolation checks' hints (``ex4_3``) and the causes a trace finds: a dropout of the wrong rate, or
one of the book's dropouts feeding a part (or the output) where the book's forward feeds it
something else, a place the statement does not name for it (``localized``), or one of the
book's dropouts called more often in one forward pass than the book calls it, or given another
tensor than the book's (``other_uses``): at rates of 0 and 1 neither changes the output, at
other rates each draws other masks."""

from __future__ import annotations

import re

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


# Each rate's place, as the statement names it.
PLACES = {
    "drop_rate_emb": "the sum of the token and position embeddings",
    "drop_rate_shortcut": "the attention and feed-forward outputs, before each shortcut is added",
    "drop_rate_attn": "the attention weights, inside MultiHeadAttention",
}
# One sentence of a wiring difference (``grader.judge.wiring``): what the student's forward
# passes (or returns), then what the reference's does.
_WIRED = re.compile(
    r"^(?:.+? is given|it returns) (.+?), where the reference(?:'s is given| returns) (.+)$"
)
_SOURCE = re.compile(r"([\w.]+)'s (?:call \d+|output)")


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


def dropout_in_another_place(found: Difference, part: nn.Module) -> Cause | None:
    """For a module whose own forward differs: one of the book's dropouts (by its name, the
    rate it is built with) whose output the student's forward passes on where the reference's
    passes something else (``found.wiring``); None when the evidence names no such dropout."""
    if not found.own_forward or not found.wiring:
        return None
    for sentence in found.wiring.split("; "):
        said = _WIRED.match(sentence)
        if said is None:
            continue
        theirs = set(_SOURCE.findall(said.group(2)))
        for name in _SOURCE.findall(said.group(1)):
            key = rate_of(name)
            if key is not None and name not in theirs:
                text = (
                    f"inside {found.where()}, {sentence}: {name} (cfg['{key}']) acts in a "
                    f"place the statement does not name; {key} acts on {PLACES[key]} only"
                )
                return Cause(f"dropout:{key}:place", text, RATE_HINTS[key], PART)
    return None


def dropout_calls(model: nn.Module, x: torch.Tensor) -> list[tuple[str, list[int]]]:
    """Each call of an ``nn.Dropout`` of ``model`` in one forward pass on ``x``, in order: its
    qualified name and the shape of what it is given (eval mode: the calls are the same in
    either mode)."""
    calls: list[tuple[str, list[int]]] = []

    def recorder(name: str):
        def record(_: nn.Module, args: tuple) -> None:
            calls.append((name, [int(n) for n in args[0].shape] if args else []))

        return record

    hooks = [
        m.register_forward_pre_hook(recorder(name))
        for name, m in model.named_modules()
        if isinstance(m, nn.Dropout)
    ]
    try:
        with torch.no_grad():
            model.eval()(x)
    finally:
        for hook in hooks:
            hook.remove()
    return calls


def _students(trace: list[dict], book: list[tuple[str, list[int]]]) -> list[tuple[str, list]]:
    """The calls in ``trace`` (the worker's, one entry per call, in the order they end) of
    modules named as the book's dropouts are named, with the shape each is given."""
    names = {name for name, _ in book}
    return [
        (c["name"], c.get("input_shape") or [])
        for c in trace
        if isinstance(c.get("name"), str) and c["name"] in names
    ]


def in_another_order(trace: list[dict], book: list[tuple[str, list[int]]]) -> bool:
    """Whether the student's forward calls the book's dropouts (by name) in another order than
    the book's, each as often."""
    mine = [name for name, _ in _students(trace, book)]
    theirs = [name for name, _ in book]
    return sorted(mine) == sorted(theirs) and mine != theirs


def other_uses(trace: list[dict], book: list[tuple[str, list[int]]]) -> Cause | None:
    """The cause of a model whose rates each act in their place at 0 and 1 while three
    fractional rates differ: one of the book's dropouts (by the book's name; ``book``: its calls,
    ``dropout_calls``) that the student's forward (``trace``: the worker's calls) applies more
    often than the book's, or to a tensor of another shape (another tensor than its
    place's: context vectors for attention weights). At rates of 0 and 1 neither changes the
    output; at other rates each draws other masks. None when every one is called as the book's
    (or the student's dropouts have other names: nothing is claimed)."""
    given: dict[str, list[list[int]]] = {}
    for name, shape in _students(trace, book):
        given.setdefault(name, []).append(shape)
    for name, shapes in given.items():
        key, theirs = rate_of(name), [shape for n, shape in book if n == name]
        if key is None:
            continue
        if len(shapes) > len(theirs):
            n, m = len(shapes), len(theirs)
            said = (
                f"applies {name} (cfg['{key}']) {n} times in one forward pass, where the "
                f"book's applies it {m} time{'s' if m > 1 else ''}"
            )
        elif sorted(shapes) != sorted(theirs):
            mine = ", ".join(str(tuple(s)) for s in shapes)
            book_shapes = ", ".join(str(tuple(s)) for s in theirs)
            said = (
                f"gives {name} (cfg['{key}']) a tensor of shape {mine}, where the book's gives "
                f"it {book_shapes}: another tensor than the one it acts on"
            )
        else:
            continue
        text = (
            f"your forward {said}. At rates of 0 and 1 that changes nothing, at other rates it "
            f"draws other masks. {key} acts on {PLACES[key]}, once there"
        )
        return Cause(f"dropout:{key}:use", text, RATE_HINTS[key], PART)
    return None
