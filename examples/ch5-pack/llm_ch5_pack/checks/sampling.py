"""Exercise 5.1's distribution check (judge side): the tokens the student's ``generate``
samples, compared with softmax(top-k-filtered logits / temperature) by Pearson's chi-square
test (``check_distribution``), and the snippet that shows the same draws in the student's own
Python. ``llm_ch5_pack.checks.ex5_1`` puts it in ``CHECKS``.
"""

from __future__ import annotations

import torch

from grader.pack.judge import CheckFailed, Worker
from llm_ch5_pack.checks.decoding import prompt, token_ids
from llm_ch5_pack.oracle import next_token_probs

ALPHA = 1e-6  # the chi-square test's significance: a correct answer fails it this rarely
MIN_EXPECTED = 5.0  # cells with fewer expected draws are pooled (the chi-square rule of thumb)


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


def check_distribution(worker: Worker, ex: dict) -> None:
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


def reproduce_distribution(ex: dict) -> str:
    idx = prompt(len(ex["logits"]), 1, ex["n_tokens"], ex["seed"])
    return f"""\
import torch
from llm_ch5_pack.oracle import next_token_probs
from llm_ch5_pack.reference import FixedLogits
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
