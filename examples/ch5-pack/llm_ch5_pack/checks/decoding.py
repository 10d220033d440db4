"""Exercise 5.1's decoding checks (judge side): the judge's models and prompts, the call of
the student's ``generate`` in the worker, and the tokens judged step by step.

The oracle is ``llm_ch5_pack.oracle`` (judge-only), the models ``llm_ch5_pack.reference``.
The judge builds a tiny GPT, sends its config and weights to the worker, which rebuilds it and
calls the student's ``generate``; the tokens come back and are judged here, step by step,
against the logits the judge's own copy of the model gives for the student's own prefix:
greedy steps must be an argmax of the logits, sampled steps must lie in the top k, the model
must see the last ``context_size`` tokens, and ``eos_id`` must stop the generation.
``llm_ch5_pack.checks.ex5_1`` gathers these into ``CHECKS``; its greedy checks are declared,
with ``generate_arguments`` and the comparison ``greedy`` of this module.
"""

from __future__ import annotations

from typing import Any

import torch

from grader.pack.judge import (
    SHAPE,
    VALUES,
    CheckFailed,
    Worker,
    expect_tensor,
    remembered,
    seeded,
)
from llm_ch5_pack.oracle import generate
from llm_ch5_pack.reference import describe_model, tiny_gpt

# --- the judge's models and inputs ------------------------------------------------------------


@remembered
def judge_model(cfg: dict, model_seed: int, logit_scale: float) -> torch.nn.Module:
    """The tiny GPT of an example, built as the reproduce snippet builds it (shared: read
    only); seeded again under the judge's lock, since ``tiny_gpt`` seeds torch itself."""
    with seeded(model_seed):
        return tiny_gpt(cfg, model_seed, logit_scale)


def model_of(ex: dict) -> torch.nn.Module:
    return judge_model(ex["cfg"], ex["model_seed"], ex["logit_scale"])


def prompt(vocab_size: int, batch: int, n_tokens: int, seed: int) -> torch.Tensor:
    """The prompt's token ids, drawn from their own generator (the snippet shows them)."""
    g = torch.Generator().manual_seed(seed + 1)
    return torch.randint(0, vocab_size, (batch, n_tokens), generator=g)


def prompt_of(ex: dict) -> torch.Tensor:
    return prompt(ex["cfg"]["vocab_size"], ex["batch"], ex["n_tokens"], ex["seed"])


@remembered
def reference_output(ex: dict, eos_id: int | None = None) -> torch.Tensor:
    """What the reference ``generate`` returns for the example (greedy cases: the answer)."""
    with seeded(ex["seed"]):
        return generate(
            model_of(ex),
            prompt_of(ex),
            ex["max_new_tokens"],
            ex["context_size"],
            eos_id=eos_id,
            **ex["settings"],
        )


def call_generate(
    worker: Worker, ex: dict, record: bool = False, expected: bool = True, **extra: Any
) -> dict:
    """The student's ``generate`` on the example's model and prompt, with the settings of the
    example (and ``extra`` ones), after ``torch.manual_seed(ex["seed"])``; with ``expected``,
    the reference's output is computed here meanwhile."""
    reply, _ = worker.call_while(
        "generate",
        (lambda: reference_output(ex, extra.get("eos_id"))) if expected else None,
        model=describe_model(model_of(ex), ex["cfg"]),
        idx=prompt_of(ex),
        max_new_tokens=ex["max_new_tokens"],
        context_size=ex["context_size"],
        settings={**ex["settings"], **extra},
        seed=ex["seed"],
        record=record,
    )
    if not isinstance(reply, dict) or "out" not in reply:
        raise CheckFailed("the worker's reply has the wrong shape")  # pragma: no cover
    return reply


def generate_arguments(ex: dict) -> dict:
    """What the student's ``generate`` gets in a declared check: the model (as plain data), the
    prompt, then ``GENERATE_KEYWORDS`` by keyword."""
    return {
        "model": describe_model(model_of(ex), ex["cfg"]),
        "idx": prompt_of(ex),
        "max_new_tokens": ex["max_new_tokens"],
        "context_size": ex["context_size"],
        **ex["settings"],
    }


GENERATE_KEYWORDS = ("max_new_tokens", "context_size", "temperature", "top_k")


def call_text(ex: dict, extra: dict | None = None) -> str:
    """The call as the student would write it."""
    settings = {**ex["settings"], **(extra or {})}
    args = "".join(f", {k}={v!r}" for k, v in settings.items())
    return (
        f"generate(model, idx, max_new_tokens={ex['max_new_tokens']}, "
        f"context_size={ex['context_size']}{args})"
    )


# --- judging the tokens -----------------------------------------------------------------------


def token_ids(out: Any, idx: torch.Tensor, vocab: int, length: int | None, call: str):
    """``out`` as a (batch, tokens) tensor of int64 ids in the vocabulary that starts with
    ``idx`` and has ``length`` more columns (``None``: any number, for eos), else
    ``CheckFailed`` saying what is wrong."""
    out = expect_tensor(out, f"{call}'s result")
    batch, n = idx.shape
    if out.dtype.is_floating_point or out.dtype.is_complex or out.dtype == torch.bool:
        raise CheckFailed(
            f"{call} returned a tensor of dtype {out.dtype}; token ids are integers "
            "(torch.long, as idx is)",
            SHAPE,
        )
    if out.dim() != 2 or out.shape[0] != batch:
        raise CheckFailed(
            f"{call} returned a tensor of shape {tuple(out.shape)}; for idx of shape "
            f"{(batch, n)} it should be (batch, tokens) = ({batch}, ...)",
            SHAPE,
        )
    columns = out.shape[1]
    if columns < n:
        raise CheckFailed(
            f"{call} returned shape {tuple(out.shape)}: fewer columns than the {n} tokens of "
            "idx; return idx with the new tokens appended",
            SHAPE,
        )
    if length is not None and columns != n + length:
        why = ""
        if columns == length:
            why = ": it holds only the new tokens; return idx with the new tokens appended"
        elif columns == n:
            why = ": no token was appended to idx"
        elif columns > n + length:
            why = ": more tokens than asked for"
        raise CheckFailed(
            f"{call} returned shape {tuple(out.shape)}, expected {(batch, n + length)} (the "
            f"{n} tokens of idx and {length} new ones){why}",
            SHAPE,
        )
    if not torch.equal(out[:, :n].to(idx.dtype), idx):
        raise CheckFailed(
            f"{call}'s result does not start with idx: its first {n} columns are "
            f"{short(out[:, :n])}, idx is {short(idx)}"
        )
    new = out[:, n:]
    if new.numel() and (int(new.min()) < 0 or int(new.max()) >= vocab):
        raise CheckFailed(
            f"{call} generated token ids outside the vocabulary 0..{vocab - 1}: {short(new)}"
        )
    return out.to(torch.long)


def short(t: torch.Tensor, most: int = 24) -> str:
    """Token ids as a list, cut after ``most`` of them per row."""
    rows = [r[:most] + (["..."] if len(r) > most else []) for r in t.tolist()]
    return str(rows).replace("'...'", "...")


def step_logits(model: torch.nn.Module, out: torch.Tensor, n: int, step: int, cs: int):
    """The logits (batch, vocab) the model gives for the next token after ``out``'s first
    ``n + step`` tokens, seeing the last ``cs`` of them."""
    with torch.no_grad():
        return model(out[:, : n + step][:, -cs:])[:, -1, :].double()


def tolerance(logits: torch.Tensor) -> float:
    return 1e-4 * max(1.0, float(logits.abs().max()))


def is_argmax(row: torch.Tensor, token: int) -> bool:
    return float(row[token]) >= float(row.max()) - tolerance(row)


def in_top_k(row: torch.Tensor, token: int, k: int) -> bool:
    kth = float(torch.topk(row, min(k, row.numel())).values[-1])
    return float(row[token]) >= kth - tolerance(row)


def first_wrong_step(model, out, n, cs, steps, allowed):
    """The first (step, row, logits, token) whose token ``allowed(logits, token)`` refuses."""
    for step in range(steps):
        logits = step_logits(model, out, n, step, cs)
        for row in range(out.shape[0]):
            token = int(out[row, n + step])
            if not allowed(logits[row], token):
                return step, row, logits[row], token
    return None


def logits_text(row: torch.Tensor) -> str:
    return "[" + ", ".join(f"{v:.3f}" for v in row.tolist()) + "]"


def greedy_failure(ex, out, expected, wrong, call: str, why: str) -> CheckFailed:
    step, row, logits, token = wrong
    best = int(torch.argmax(logits))
    where = f" (row {row})" if out.shape[0] > 1 else ""
    return CheckFailed(
        f"{call}{why}: new token {step + 1}{where} should be the argmax of the model's "
        f"logits, token {best}, but your generate chose token {token}.\n"
        f"The model's logits at that step: {logits_text(logits)}\n"
        f"Expected: {expected.tolist()}\nGot:      {out.tolist()}",
        VALUES,
    )


# --- checks -----------------------------------------------------------------------------------


def greedy(why: str = ""):
    """The comparison of a declared greedy check (``same_as_reference``): the student's tokens
    must be the reference's, or another argmax where the logits tie at a step."""

    def compare(got: Any, expected: torch.Tensor, what: str, example: dict) -> None:
        idx, call, m = prompt_of(example), call_text(example), example["max_new_tokens"]
        out = token_ids(got, idx, example["cfg"]["vocab_size"], m, call)
        if torch.equal(out, expected):
            return  # the reference's own greedy path (else: another argmax where logits tie?)
        model, cs = model_of(example), example["context_size"]
        wrong = first_wrong_step(model, out, idx.shape[1], cs, m, is_argmax)
        if wrong is not None:
            raise greedy_failure(example, out, expected, wrong, call, why)

    return compare


def check_context(worker: Worker, ex: dict) -> None:
    reply = call_generate(worker, ex, record=True, expected=False)
    idx, call, cs = prompt_of(ex), call_text(ex), ex["context_size"]
    n, m = idx.shape[1], ex["max_new_tokens"]
    calls, n_calls = reply.get("calls") or [], reply.get("n_calls")
    if not calls:
        raise CheckFailed(f"{call} never called the model")
    # The sequence the calls are judged against: the student's own, when it has the right form
    try:
        seq = token_ids(reply["out"], idx, ex["cfg"]["vocab_size"], m, call)
    except CheckFailed:
        seq = idx  # only the first call can be judged
    for i, got in enumerate(calls[: m if seq is not idx else 1]):
        so_far = seq[:, : n + i]
        want = so_far[:, -cs:]
        if isinstance(got, torch.Tensor) and got.shape == want.shape and torch.equal(got, want):
            continue
        if not isinstance(got, torch.Tensor):
            kind = got.get("not_a_tensor") if isinstance(got, dict) else type(got).__name__
            raise CheckFailed(f"{call} called the model with a {kind}, not a tensor of token ids")
        what = ""
        if got.shape == so_far.shape and torch.equal(got, so_far) and so_far.shape[1] > cs:
            what = ": the whole sequence, not its last context_size tokens"
        elif got.shape == want.shape and torch.equal(got, so_far[:, :cs]):
            what = ": the first context_size tokens, not the last ones"
        raise CheckFailed(
            f"{call}: call {i + 1} of the model should get the last {cs} tokens of the "
            f"{n + i} so far, {want.tolist()}, but it got {got.tolist()}{what}"
        )
    if seq is idx:
        token_ids(reply["out"], idx, ex["cfg"]["vocab_size"], m, call)  # raises its message
    if n_calls != m:
        raise CheckFailed(
            f"{call} called the model {n_calls} times for {m} new tokens; generate calls it "
            "once per new token"
        )


def check_sampled_support(worker: Worker, ex: dict) -> None:
    reply = call_generate(worker, ex, expected=False)
    idx, call = prompt_of(ex), call_text(ex)
    m, k = ex["max_new_tokens"], ex["settings"]["top_k"]
    out = token_ids(reply["out"], idx, ex["cfg"]["vocab_size"], m, call)
    if k is None:
        return
    wrong = first_wrong_step(
        model_of(ex), out, idx.shape[1], ex["context_size"], m, lambda r, t: in_top_k(r, t, k)
    )
    if wrong is not None:
        step, _, logits, token = wrong
        top = sorted(torch.topk(logits, k).indices.tolist())
        raise CheckFailed(
            f"{call}: new token {step + 1} is token {token}, which is not among the top "
            f"{k} of the model's logits (tokens {top}); tokens outside the top k must never "
            f"be drawn.\nThe model's logits at that step: {logits_text(logits)}\n"
            f"Got: {out.tolist()}"
        )


@remembered
def eos_id_of(ex: dict) -> int:
    """The token the reference generates greedily at step ``eos_step``: the example's eos."""
    greedy = reference_output(ex)
    return int(greedy[0, ex["n_tokens"] + ex["eos_step"]])


def check_eos(worker: Worker, ex: dict) -> None:
    eos = eos_id_of(ex)
    reply = call_generate(worker, ex, eos_id=eos)
    idx, call = prompt_of(ex), call_text(ex, {"eos_id": eos})
    n, m = idx.shape[1], ex["max_new_tokens"]
    out = token_ids(reply["out"], idx, ex["cfg"]["vocab_size"], None, call)
    expected = reference_output(ex, eos)
    new = out.shape[1] - n
    if new > m:
        raise CheckFailed(
            f"{call} returned {new} new tokens, more than max_new_tokens={m}.\n"
            f"Expected: {expected.tolist()}\nGot:      {out.tolist()}",
            SHAPE,
        )
    if torch.equal(out, expected):
        return
    model, cs = model_of(ex), ex["context_size"]
    wrong = first_wrong_step(model, out, n, cs, new, is_argmax)
    if wrong is not None:
        raise greedy_failure(ex, out, expected, wrong, call, "")
    if (out[0, n:] == eos).any():
        raise CheckFailed(
            f"{call}: your result contains eos_id={eos} among the new tokens; generation "
            "should stop as soon as eos_id comes next, without appending it.\n"
            f"Expected: {expected.tolist()}\nGot:      {out.tolist()}"
        )
    if new < m and not is_argmax(step_logits(model, out, n, new, cs)[0], eos):
        raise CheckFailed(
            f"{call} stopped after {new} new tokens, but the next token is not eos_id={eos}.\n"
            f"Expected: {expected.tolist()}\nGot:      {out.tolist()}"
        )
