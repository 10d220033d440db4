"""Checks for exercise 5.1: ``generate`` with temperature scaling, top-k filtering and eos_id.

The oracle is ``llm_ch5_pack.oracle`` (judge-only), the models ``llm_ch5_pack.reference``.
The judge builds a tiny GPT (or a model with fixed next-token logits), sends its config and
weights to the worker, which rebuilds it and calls the student's ``generate``; the tokens come
back and are judged here, step by step, against the logits the judge's own copy of the model
gives for the student's own prefix. So a correct answer is never asked to draw its random
numbers as the reference does: greedy steps must be an argmax of the logits, sampled steps must
lie in the top k, and the sampled frequencies must follow softmax(top-k-filtered logits /
temperature) (a chi-square test).

Batch sizes: 1 whenever ``top_k`` or ``eos_id`` is given (the book's ``generate`` handles one
row there), 1 to 3 rows for plain greedy decoding.

This module holds the checks' list, the examples tried first and the decoding checks' reproduce
snippets. The two greedy checks are declared (``same_as_reference``: the student's tokens
against the reference's, with ``checks.decoding.greedy`` as the comparison); the others record
the model's calls or test a distribution, so they are written by hand: the decoding checks in
``checks.decoding``, the distribution check in ``checks.sampling``.
"""

from __future__ import annotations

from grader.pack.judge import Check, same_as_reference
from llm_ch5_pack.checks.decoding import (
    GENERATE_KEYWORDS,
    check_context,
    check_eos,
    check_sampled_support,
    eos_id_of,
    generate_arguments,
    greedy,
    prompt_of,
    reference_output,
)
from llm_ch5_pack.checks.sampling import check_distribution, reproduce_distribution
from llm_ch5_pack.strategies import (
    distribution_cases,
    eos_cases,
    generation_cases,
    sampling_temperatures,
)

# --- snippets ---------------------------------------------------------------------------------


def _gpt_setup(ex: dict) -> str:
    return f"""\
import torch
from llm_ch5_pack.oracle import generate as reference_generate
from llm_ch5_pack.reference import tiny_gpt
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

# The greedy checks, declared: the student's generate on the example's model and prompt, after
# torch.manual_seed(ex["seed"]), against the reference's tokens (``greedy`` accepts another
# argmax where the logits tie); the snippet rebuilds the model and prints both.
GENERATE = {
    "answer": "ex5_1_generate:generate",
    "arguments": generate_arguments,
    "keywords": GENERATE_KEYWORDS,
    "reference": reference_output,
    "seed": lambda ex: ex["seed"],
    "setup": "from llm_ch5_pack.reference import tiny_gpt\n"
    "model = tiny_gpt({cfg!r}, seed={model_seed}, logit_scale={logit_scale!r})",
}

CHECKS = [
    same_as_reference(
        name="with temperature 0.0 (any top_k) generate is greedy: the argmax at every step",
        points=2.5,
        strategy=generation_cases(defaults=True),
        compare=greedy(),
        hint="with temperature 0.0 take torch.argmax(logits, dim=-1, keepdim=True) of the last "
        "position's logits (logits[:, -1, :]) after the top-k filter; the defaults are "
        "temperature=0.0, top_k=None, eos_id=None.",
        max_examples=10,
        examples=GREEDY_EXAMPLES,
        **GENERATE,
    ),
    same_as_reference(
        name="top_k=1 gives the argmax at any temperature",
        points=1.5,
        strategy=generation_cases(temperature=sampling_temperatures(), top_k="one"),
        compare=greedy(" (top_k=1 leaves one token to sample from, at any temperature)"),
        hint="apply the top-k filter before sampling: keep the logits >= the k-th largest "
        "(torch.topk(logits, top_k).values[:, -1]) and set the others to -inf, so that "
        "softmax gives them probability 0.",
        max_examples=6,
        **GENERATE,
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
