"""Checks for exercise 5.1: ``generate`` with temperature scaling, top-k filtering and eos_id.

The oracle is ``llm_ch5_pack.reference``. The judge builds a tiny GPT (or a model with fixed
next-token logits), sends its config and weights to the worker, which rebuilds it and calls the
student's ``generate``; the tokens come back and are judged here, step by step, against the
logits the judge's own copy of the model gives for the student's own prefix. So a correct
answer is never asked to draw its random numbers as the reference does: greedy steps must be
an argmax of the logits, sampled steps must lie in the top k, and the sampled frequencies must
follow softmax(top-k-filtered logits / temperature) (a chi-square test, ``check_distribution``).

Batch sizes: 1 whenever ``top_k`` or ``eos_id`` is given (the book's ``generate`` handles one
row there), 1 to 3 rows for plain greedy decoding.
"""

from __future__ import annotations

from typing import Any

import torch

from grader.judge import hints
from grader.judge.launch.handle import WorkerHandle
from grader.judge.memo import remembered
from grader.judge.properties import Check, CheckFailed, expect_tensor
from grader.shared.torchseed import seeded
from llm_ch5_pack.reference import (
    describe_model,
    generate,
    next_token_probs,
    tiny_gpt,
)
from llm_ch5_pack.strategies import (
    distribution_cases,
    eos_cases,
    generation_cases,
    sampling_temperatures,
)

ALPHA = 1e-6  # the chi-square test's significance: a correct answer fails it this rarely
MIN_EXPECTED = 5.0  # cells with fewer expected draws are pooled (the chi-square rule of thumb)


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
    worker: WorkerHandle, ex: dict, record: bool = False, expected: bool = True, **extra: Any
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
            hints.SHAPE,
        )
    if out.dim() != 2 or out.shape[0] != batch:
        raise CheckFailed(
            f"{call} returned a tensor of shape {tuple(out.shape)}; for idx of shape "
            f"{(batch, n)} it should be (batch, tokens) = ({batch}, ...)",
            hints.SHAPE,
        )
    columns = out.shape[1]
    if columns < n:
        raise CheckFailed(
            f"{call} returned shape {tuple(out.shape)}: fewer columns than the {n} tokens of "
            "idx; return idx with the new tokens appended",
            hints.SHAPE,
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
            hints.SHAPE,
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
        hints.VALUES,
    )


# --- checks -----------------------------------------------------------------------------------


def check_greedy(worker: WorkerHandle, ex: dict, why: str = "") -> None:
    reply = call_generate(worker, ex)
    idx, call = prompt_of(ex), call_text(ex)
    vocab, m = ex["cfg"]["vocab_size"], ex["max_new_tokens"]
    out = token_ids(reply["out"], idx, vocab, m, call)
    expected = reference_output(ex)
    if torch.equal(out, expected):
        return  # the reference's own greedy path (else: another argmax where logits tie?)
    wrong = first_wrong_step(model_of(ex), out, idx.shape[1], ex["context_size"], m, is_argmax)
    if wrong is not None:
        raise greedy_failure(ex, out, expected, wrong, call, why)


def check_top_k_one(worker: WorkerHandle, ex: dict) -> None:
    check_greedy(worker, ex, " (top_k=1 leaves one token to sample from, at any temperature)")


def check_context(worker: WorkerHandle, ex: dict) -> None:
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


def check_sampled_support(worker: WorkerHandle, ex: dict) -> None:
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


def check_eos(worker: WorkerHandle, ex: dict) -> None:
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
            hints.SHAPE,
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


# --- the distribution of sampled tokens ---------------------------------------------------------


def chi_square(counts: torch.Tensor, probs: torch.Tensor) -> tuple[float, int, float]:
    """Pearson's statistic, its degrees of freedom and p-value for ``counts`` drawn from
    ``probs`` (tokens of probability 0 left out; cells expecting fewer than ``MIN_EXPECTED``
    draws pooled, smallest first)."""
    total = float(counts.sum())
    support = [i for i in range(probs.numel()) if probs[i] > 0]
    support.sort(key=lambda i: float(probs[i]))
    cells: list[list[float]] = []  # [expected, observed]
    pool = [0.0, 0.0]
    for i in support:
        pool[0] += float(probs[i]) * total
        pool[1] += float(counts[i])
        if pool[0] >= MIN_EXPECTED:
            cells.append(pool)
            pool = [0.0, 0.0]
    if pool[0] > 0 or pool[1] > 0:
        if cells:
            cells[-1][0] += pool[0]
            cells[-1][1] += pool[1]
        else:
            cells.append(pool)
    df = len(cells) - 1
    if df <= 0:
        return 0.0, 0, 1.0
    stat = sum((o - e) ** 2 / e for e, o in cells)
    p = torch.special.gammaincc(
        torch.tensor(df / 2, dtype=torch.float64), torch.tensor(stat / 2, dtype=torch.float64)
    )
    return stat, df, float(p)


def distribution_call(ex: dict) -> str:
    return (
        f"generate(FixedLogits({ex['logits']}), idx, max_new_tokens={ex['n_draws']}, "
        f"context_size={ex['context_size']}, temperature={ex['temperature']!r}, "
        f"top_k={ex['top_k']!r})"
    )


def check_distribution(worker: WorkerHandle, ex: dict) -> None:
    """The next tokens drawn with temperature T > 0 and top-k k follow softmax(top-k-filtered
    logits / T): ``n_draws`` (1000) tokens are drawn in one call on a model whose next-token
    logits never change (``FixedLogits``), so they are independent draws from one distribution.
    A token outside the top k fails at once; the frequencies are then compared with Pearson's
    chi-square test at significance ``ALPHA`` = 1e-6 (cells expecting fewer than 5 draws
    pooled).

    False failures: for a correct answer the verdict is fixed by the example's torch seed, so it
    never flips from run to run. Over random seeds a correct answer would fail an example about
    once in a million, a few times in a million at most (the chi-square approximation with
    pooled cells: 20,000 simulated correct runs per case gave 1-2 times the nominal rate at
    1e-4); a grade runs 5 examples (2 fixed, 3 drawn), so under 1e-5 per grade."""
    vocab, k, temp = len(ex["logits"]), ex["top_k"], ex["temperature"]
    idx = prompt(vocab, 1, ex["n_tokens"], ex["seed"])
    reply = worker.call(
        "generate",
        model={"kind": "fixed", "logits": ex["logits"]},
        idx=idx,
        max_new_tokens=ex["n_draws"],
        context_size=ex["context_size"],
        settings={"temperature": temp, "top_k": k},
        seed=ex["seed"],
    )
    call = distribution_call(ex)
    out = token_ids(reply["out"], idx, vocab, ex["n_draws"], call)
    drawn = out[0, ex["n_tokens"] :]
    counts = torch.bincount(drawn, minlength=vocab).double()
    probs = next_token_probs(ex["logits"], temp, k)
    outside = [i for i in range(vocab) if probs[i] == 0 and counts[i] > 0]
    table = "\n".join(
        f"  token {i}: logit {ex['logits'][i]:+.3f}  expected {float(probs[i]):.3f}  "
        f"drawn {float(counts[i]) / ex['n_draws']:.3f}"
        for i in range(vocab)
    )
    if outside:
        raise CheckFailed(
            f"{call}: tokens {outside} are not among the top {k} logits, yet your generate "
            f"drew them ({', '.join(str(int(counts[i])) for i in outside)} times); tokens "
            f"outside the top k must never be drawn.\n{table}"
        )
    stat, df, p = chi_square(counts, probs)
    if p < ALPHA:
        raise CheckFailed(
            f"{call}: the {ex['n_draws']} tokens your generate drew (torch.manual_seed("
            f"{ex['seed']}) first) do not follow softmax(top-k-filtered logits / temperature): "
            f"chi-square = {stat:.1f} with {df} degrees of freedom, p = {p:.2g} < {ALPHA:g} "
            f"(a correct generate fails this test for about one seed in a million).\n{table}"
        )


# --- snippets ---------------------------------------------------------------------------------


def _gpt_setup(ex: dict) -> str:
    return f"""\
import torch
from llm_ch5_pack.reference import generate as reference_generate, tiny_gpt
from exercises.ex5_1_generate import generate

cfg = {ex["cfg"]!r}
model = tiny_gpt(cfg, seed={ex["model_seed"]}, logit_scale={ex["logit_scale"]!r})
idx = torch.tensor({prompt_of(ex).tolist()})
"""


def _settings_text(settings: dict) -> str:
    return "".join(f", {k}={v!r}" for k, v in settings.items())


def reproduce_generate(ex: dict, extra: dict | None = None) -> str:
    settings = _settings_text({**ex["settings"], **(extra or {})})
    args = f"max_new_tokens={ex['max_new_tokens']}, context_size={ex['context_size']}{settings}"
    return (
        _gpt_setup(ex)
        + f"""\
torch.manual_seed({ex["seed"]})
got = generate(model, idx, {args})
torch.manual_seed({ex["seed"]})
expected = reference_generate(model, idx, {args})
print("yours:    ", got.tolist())
print("reference:", expected.tolist())
"""
    )


def reproduce_context(ex: dict) -> str:
    return (
        _gpt_setup(ex)
        + f"""\

class Spy(torch.nn.Module):  # the model, printing what each call gets
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, idx):
        print("model called with", idx.tolist())
        return self.model(idx)


out = generate(Spy(model), idx, max_new_tokens={ex["max_new_tokens"]}, \
context_size={ex["context_size"]}{_settings_text(ex["settings"])})
print("returned:", out.tolist())
print("each call should get the last {ex["context_size"]} tokens of the sequence so far")
"""
    )


def reproduce_support(ex: dict) -> str:
    k, cs = ex["settings"]["top_k"], ex["context_size"]
    return (
        _gpt_setup(ex)
        + f"""\
torch.manual_seed({ex["seed"]})
got = generate(model, idx, max_new_tokens={ex["max_new_tokens"]}, context_size={cs}\
{_settings_text(ex["settings"])})
print("yours:", got.tolist())
n = idx.shape[1]
for step in range(got.shape[1] - n):  # the top {k} tokens for the last {cs} tokens so far
    with torch.no_grad():
        logits = model(got[:, : n + step][:, -{cs}:])[0, -1]
    top = sorted(torch.topk(logits, {k}).indices.tolist())
    print(f"new token {{step + 1}}: {{got[0, n + step].item()}}, the top {k}: {{top}}")
"""
    )


def reproduce_eos(ex: dict) -> str:
    return reproduce_generate(ex, {"eos_id": eos_id_of(ex)})


def reproduce_distribution(ex: dict) -> str:
    idx = prompt(len(ex["logits"]), 1, ex["n_tokens"], ex["seed"])
    return f"""\
import torch
from llm_ch5_pack.reference import FixedLogits, next_token_probs
from exercises.ex5_1_generate import generate

logits = {ex["logits"]!r}
model = FixedLogits(logits)  # the same next-token logits at every step
idx = torch.tensor({idx.tolist()})
torch.manual_seed({ex["seed"]})
out = generate(model, idx, max_new_tokens={ex["n_draws"]}, context_size={ex["context_size"]}, \
temperature={ex["temperature"]!r}, top_k={ex["top_k"]!r})
drawn = out[0, {ex["n_tokens"]}:]
drawn = torch.bincount(drawn, minlength=len(logits)) / drawn.numel()
expected = next_token_probs(logits, {ex["temperature"]!r}, {ex["top_k"]!r})
print("drawn:   ", [round(p, 3) for p in drawn.tolist()])
print("expected:", [round(p, 3) for p in expected.tolist()])
"""


_CFG = {
    "vocab_size": 10,
    "context_length": 4,
    "emb_dim": 4,
    "n_heads": 2,
    "n_layers": 1,
    "drop_rate": 0.0,
    "qkv_bias": False,
}
# Tried first for every seed: top_k=1 at temperature 0.0 on a prompt longer than the context
# (greedy tokens 8, 6, 2, 8, 6: none is token 0, the argmax of an all -inf row), and the
# defaults on two rows.
GREEDY_EXAMPLES = (
    {
        "cfg": _CFG,
        "model_seed": 3,
        "logit_scale": 1.0,
        "batch": 1,
        "n_tokens": 6,
        "context_size": 3,
        "max_new_tokens": 5,
        "settings": {"temperature": 0.0, "top_k": 1},
        "seed": 123,
    },
    {
        "cfg": _CFG,
        "model_seed": 13,
        "logit_scale": 1.0,
        "batch": 2,
        "n_tokens": 3,
        "context_size": 4,
        "max_new_tokens": 4,
        "settings": {},
        "seed": 5,
    },
)

# Tried first for every seed: the book's own call (temperature 1.4, top_k 25 on a 50,257-token
# vocabulary) scaled down, which catches a filter that keeps k - 1 or k + 1 tokens; and a low
# temperature (0.1) over close logits, which is still far from greedy (the best token has
# probability 0.57): it catches a temperature multiplied, ignored or applied twice, and a
# greedy shortcut for "small" temperatures.
DISTRIBUTION_EXAMPLES = (
    {
        "logits": [0.8571, -1.0, 2.0, -0.2857, 1.4286, -1.5714, 0.2857, -2.0],
        "temperature": 1.4,
        "top_k": 5,
        "n_tokens": 4,
        "context_size": 4,
        "n_draws": 1000,
        "seed": 123,
    },
    {
        "logits": [0.1, 0.0, -0.15, 0.05, -0.3, 0.2],
        "temperature": 0.1,
        "top_k": None,
        "n_tokens": 2,
        "context_size": 3,
        "n_draws": 1000,
        "seed": 7,
    },
)

CHECKS = [
    Check(
        name="with temperature 0.0 (any top_k) generate is greedy: the argmax at every step",
        points=2.5,
        strategy=generation_cases(defaults=True),
        run=check_greedy,
        hint="with temperature 0.0 take torch.argmax(logits, dim=-1, keepdim=True) of the last "
        "position's logits (logits[:, -1, :]) after the top-k filter; the defaults are "
        "temperature=0.0, top_k=None, eos_id=None.",
        reproduce=reproduce_generate,
        max_examples=10,
        examples=GREEDY_EXAMPLES,
    ),
    Check(
        name="top_k=1 gives the argmax at any temperature",
        points=1.5,
        strategy=generation_cases(temperature=sampling_temperatures(), top_k="one"),
        run=check_top_k_one,
        hint="apply the top-k filter before sampling: keep the logits >= the k-th largest "
        "(torch.topk(logits, top_k).values[:, -1]) and set the others to -inf, so that "
        "softmax gives them probability 0.",
        reproduce=reproduce_generate,
        max_examples=6,
    ),
    Check(
        name="the model sees only the last context_size tokens, once per new token",
        points=1.5,
        strategy=generation_cases(top_k="none", max_batch=2),
        run=check_context,
        hint="crop before each call: idx_cond = idx[:, -context_size:] (the last tokens, "
        "not the first), then model(idx_cond); call the model once per new token.",
        reproduce=reproduce_context,
        max_examples=6,
    ),
    Check(
        name="sampling returns idx plus max_new_tokens tokens, each among the top_k logits",
        points=1,
        strategy=generation_cases(
            temperature=sampling_temperatures(high=True),
            top_k="filter",
            scales=(1.0,),
            max_new_tokens=10,
        ),
        run=check_sampled_support,
        reproduce=reproduce_support,
        hint="append each new token with torch.cat((idx, idx_next), dim=1) and return the "
        "whole sequence; the top-k filter keeps exactly the k largest logits of the last "
        "position, for the model called on the last context_size tokens.",
        max_examples=8,
    ),
    Check(
        name="eos_id stops the generation before it is appended",
        points=1,
        strategy=eos_cases(),
        run=check_eos,
        counterexample=lambda ex: {**ex, "eos_id": eos_id_of(ex)},
        hint="after choosing idx_next: if idx_next == eos_id, break (before appending it); "
        "with eos_id=None generation never stops early.",
        reproduce=reproduce_eos,
        max_examples=6,
    ),
    Check(
        name="sampled tokens follow softmax(top-k logits / temperature) (chi-square, alpha 1e-6)",
        points=2.5,
        strategy=distribution_cases(),
        run=check_distribution,
        hint="divide the (top-k-filtered) logits by the temperature, then softmax and sample "
        "(torch.multinomial(probs, num_samples=1)); dividing makes T > 1 flatter and T < 1 "
        "sharper. Any correct sampler passes: only the distribution is checked.",
        reproduce=reproduce_distribution,
        max_examples=3,
        examples=DISTRIBUTION_EXAMPLES,
    ),
]
