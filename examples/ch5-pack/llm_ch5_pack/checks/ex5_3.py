"""Checks for exercise 5.3: the settings that make ``generate`` deterministic.

The student answers with plain data: ``deterministic_settings()`` (keyword settings of the
book's ``generate``) and ``is_deterministic(temperature, top_k)``. The judge plugs each setting
into the reference ``generate`` (``llm_ch5_pack.oracle``, judge-only) itself: a setting is
deterministic when the output is the greedy continuation whatever the model and the torch seed.
In the book's code that is exactly when ``generate`` takes its argmax branch (``temperature``
not above 0) or when the top-k filter leaves one token (``top_k == 1``); any other setting
samples with ``torch.multinomial``, and a model whose two best tokens are close shows it.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from hypothesis import strategies as st

from grader.pack.judge import Check, CheckFailed, Worker, remembered, returned, seeded
from llm_ch5_pack.oracle import generate
from llm_ch5_pack.reference import FixedLogits, generate_text_simple, tiny_gpt
from llm_ch5_pack.strategies import predicate_cases, settings_models

KEYS = ("temperature", "top_k")
MAX_SETTINGS = 16


# --- the truth --------------------------------------------------------------------------------


def deterministic(temperature: float, top_k: int | None) -> bool:
    """Whether the book's ``generate`` is deterministic with these settings: it takes the argmax
    branch (``temperature > 0.0`` is false: 0.0, as temperatures are >= 0 here) or keeps a
    single token (``top_k == 1``; the models here have no exactly tied logits)."""
    return not temperature > 0.0 or top_k == 1


def setting_text(setting: dict) -> str:
    return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in setting.items()) + "}"


def valid_settings(value: Any) -> list[dict]:
    """The student's settings, each a dict of ``temperature`` and/or ``top_k`` with usable
    values, else ``CheckFailed`` saying what is wrong (cheap bounds before any computing)."""
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        raise CheckFailed(
            f"deterministic_settings() should return a list of dicts, not a {type(value).__name__}",
            returned(type(value).__name__),
        )
    if not value:
        raise CheckFailed("deterministic_settings() returned an empty list")
    if len(value) > MAX_SETTINGS:
        raise CheckFailed(
            f"deterministic_settings() returned {len(value)} settings; at most "
            f"{MAX_SETTINGS} are looked at: give a few that show each way"
        )
    settings = []
    for i, s in enumerate(value):
        where = f"setting {i + 1} of deterministic_settings()"
        if not isinstance(s, dict):
            raise CheckFailed(f"{where} is a {type(s).__name__}, not a dict of keyword settings")
        extra = sorted(set(s) - set(KEYS))
        if extra:
            raise CheckFailed(
                f"{where}, {s!r}, has the keys {extra}: only 'temperature' and 'top_k' "
                "are settings of the question"
            )
        t, k = s.get("temperature", 0.0), s.get("top_k")
        if type(t) not in (int, float) or not math.isfinite(t) or t < 0:
            raise CheckFailed(
                f"{where}: temperature {t!r} is not a number >= 0 (a negative temperature "
                "means nothing; the book's generate only happens to take the argmax for it)"
            )
        if k is not None and (type(k) is not int or not 1 <= k <= 10**6):
            raise CheckFailed(f"{where}: top_k {k!r} is neither None nor a positive int")
        settings.append({"temperature": float(t), "top_k": k, "as_given": dict(s)})
    return settings


# --- running a setting ------------------------------------------------------------------------


def near_tie_logits(vocab: int, gap: float, best: int) -> list[float]:
    """Next-token logits whose best token ``best`` beats the second (the next id) by ``gap``;
    the others are far below."""
    logits = [-3.0 - 0.5 * i for i in range(vocab)]
    logits[best] = 0.0
    logits[(best + 1) % vocab] = -gap
    return logits


@remembered
def model_for(ex: dict) -> torch.nn.Module:
    if ex["kind"] == "gpt":
        with seeded(ex["model_seed"]):  # the judge's lock: tiny_gpt seeds torch itself
            return tiny_gpt(ex["cfg"], ex["model_seed"], 1.0)
    return FixedLogits(near_tie_logits(ex["vocab"], ex["gap"], ex["best"])).eval()


def prompt_for(ex: dict) -> torch.Tensor:
    vocab = ex["cfg"]["vocab_size"] if ex["kind"] == "gpt" else ex["vocab"]
    g = torch.Generator().manual_seed(ex["seed"] + 1)
    return torch.randint(0, vocab, (1, ex["n_tokens"]), generator=g)


def context_for(ex: dict) -> int:
    return ex["cfg"]["context_length"] if ex["kind"] == "gpt" else 4


def vocab_of(ex: dict) -> int:
    return ex["cfg"]["vocab_size"] if ex["kind"] == "gpt" else ex["vocab"]


@remembered
def greedy_for(ex: dict) -> torch.Tensor:
    return generate_text_simple(
        model_for(ex), prompt_for(ex), ex["max_new_tokens"], context_for(ex)
    )


@remembered
def run_setting(ex: dict, temperature: float, top_k: int | None, seed: int) -> torch.Tensor:
    """The reference ``generate`` with one setting, after ``torch.manual_seed(seed)``."""
    with seeded(seed):
        return generate(
            model_for(ex),
            prompt_for(ex),
            ex["max_new_tokens"],
            context_for(ex),
            temperature=temperature,
            top_k=top_k,
        )


@remembered
def evidence(temperature: float, top_k: int | None) -> tuple[int, int, list, list] | None:
    """Two torch seeds under which the reference ``generate`` with these settings gives two
    different outputs, on fixed logits whose two best tokens are ``temperature / 2`` apart (a
    near tie at this temperature); None if the first 20 seeds all agree."""
    gap = min(0.5 * temperature, 1.0)
    model = FixedLogits(near_tie_logits(4, gap, 0)).eval()
    idx = torch.tensor([[0]])
    k = None if top_k is None else min(top_k, 4)
    first = None
    for seed in range(20):
        with seeded(seed):
            out = generate(model, idx, 8, 4, temperature=temperature, top_k=k)
        if first is None:
            first = (seed, out)
        elif not torch.equal(out, first[1]):
            return first[0], seed, first[1].tolist(), out.tolist()
    return None


# --- checks -----------------------------------------------------------------------------------


def check_settings_deterministic(worker: Worker, ex: dict) -> None:
    settings = valid_settings(worker.call("settings"))
    for s in settings:
        t, k, shown = s["temperature"], s["top_k"], setting_text(s["as_given"])
        # torch.topk refuses k > vocab_size; keeping the k largest of fewer is keeping all
        call_k = None if k is None else min(k, vocab_of(ex))
        greedy = greedy_for(ex)
        outs = [run_setting(ex, t, call_k, seed) for seed in (ex["seed"], ex["seed"] + 1)]
        if not all(torch.equal(o, greedy) for o in outs):
            raise CheckFailed(
                f"the setting {shown} does not make generate deterministic: with "
                f"torch.manual_seed({ex['seed']}) and torch.manual_seed({ex['seed'] + 1}) "
                f"the reference generate returns {outs[0].tolist()} and {outs[1].tolist()}; "
                f"greedy decoding (generate_text_simple) returns {greedy.tolist()}"
            )
        if not deterministic(t, k):
            found = evidence(t, k)
            shown_evidence = (
                f": on a model whose two best next tokens have logits 0.0 and "
                f"{-min(0.5 * t, 1.0):g}, torch.manual_seed({found[0]}) gives {found[2]} and "
                f"torch.manual_seed({found[1]}) gives {found[3]}"
                if found
                else ""
            )
            raise CheckFailed(
                f"the setting {shown} samples: with temperature {t:g} > 0 and top_k={k!r}, "
                "generate draws the next token with torch.multinomial from more than one "
                f"token, so the output depends on the seed{shown_evidence}"
            )


def check_both_ways(worker: Worker, _: Any) -> None:
    settings = valid_settings(worker.call("settings"))
    ways = {"temperature": False, "top_k": False}
    for s in settings:
        if not s["temperature"] > 0.0:
            ways["temperature"] = True
        elif s["top_k"] == 1:
            ways["top_k"] = True
    missing = []
    if not ways["temperature"]:
        missing.append(
            "none of your settings turns sampling off with temperature=0.0 (generate then "
            "takes the argmax, whatever top_k is)"
        )
    if not ways["top_k"]:
        missing.append(
            "none of your settings keeps sampling on (temperature > 0) with top_k=1 (the "
            "top-k filter then leaves a single token to sample from)"
        )
    if missing:
        raise CheckFailed(
            "the book names two ways to make generate deterministic; " + "; and ".join(missing)
        )


def check_predicate(worker: Worker, ex: dict) -> None:
    t, k = ex["temperature"], ex["top_k"]
    got = worker.call("is_deterministic", temperature=t, top_k=k)
    if type(got) is not bool:
        raise CheckFailed(
            f"is_deterministic({t!r}, {k!r}) returned {got!r}; return True or False",
            returned(type(got).__name__),
        )
    want = deterministic(t, k)
    if got != want:
        why = (
            "temperature 0.0 makes generate take the argmax (top_k does not matter)"
            if t == 0.0
            else "top_k=1 leaves one token to sample from, at any temperature"
            if k == 1
            else f"with temperature {t:g} > 0 and top_k={k!r} generate samples among "
            "several tokens, and the output depends on the seed"
        )
        raise CheckFailed(f"is_deterministic({t!r}, {k!r}) returned {got}, expected {want}: {why}")


# --- snippets ---------------------------------------------------------------------------------


def reproduce_settings(ex: dict) -> str:
    if ex["kind"] == "gpt":
        build = f"model = tiny_gpt({ex['cfg']!r}, seed={ex['model_seed']})"
    else:
        logits = near_tie_logits(ex["vocab"], ex["gap"], ex["best"])
        build = f"model = FixedLogits({logits!r})  # a near tie between the two best tokens"
    return f"""\
import torch
from llm_ch5_pack.oracle import generate
from llm_ch5_pack.reference import FixedLogits, generate_text_simple, tiny_gpt
from exercises.ex5_3_deterministic import deterministic_settings

{build}
idx = torch.tensor({prompt_for(ex).tolist()})
size = dict(max_new_tokens={ex["max_new_tokens"]}, context_size={context_for(ex)})
greedy = generate_text_simple(model, idx, **size)
print("greedy:", greedy.tolist())
for setting in deterministic_settings():
    called = dict(setting)
    if called.get("top_k") is not None:  # torch.topk refuses more than the vocabulary
        called["top_k"] = min(called["top_k"], {vocab_of(ex)})  # as the grader caps it
    outs = []
    for seed in ({ex["seed"]}, {ex["seed"] + 1}):
        torch.manual_seed(seed)
        outs.append(generate(model, idx, **size, **called).tolist())
    print(setting, outs, "deterministic" if outs == [greedy.tolist()] * 2 else "NOT greedy")
"""


def reproduce_both_ways(_: Any) -> str:
    return """\
from exercises.ex5_3_deterministic import deterministic_settings

for setting in deterministic_settings():
    temperature, top_k = setting.get("temperature", 0.0), setting.get("top_k")
    print(setting, "->", "no sampling" if not temperature > 0 else
          "one token left" if top_k == 1 else "samples")
"""


def reproduce_predicate(ex: dict) -> str:
    return f"""\
from exercises.ex5_3_deterministic import is_deterministic

print(is_deterministic({ex["temperature"]!r}, {ex["top_k"]!r}))
"""


CHECKS = [
    Check(
        name="every setting in deterministic_settings() makes generate greedy, for any "
        "model and seed",
        points=4,
        strategy=settings_models(),
        run=check_settings_deterministic,
        hint="generate samples (torch.multinomial) whenever temperature > 0.0, unless the "
        "top-k filter leaves a single token; a small temperature makes sampling peaked, not "
        "deterministic.",
        reproduce=reproduce_settings,
        max_examples=6,
    ),
    Check(
        name="deterministic_settings() shows both ways: temperature 0.0, and top_k=1 with "
        "temperature > 0",
        points=3,
        strategy=st.just(None),
        run=check_both_ways,
        hint="one setting with temperature=0.0 (argmax, top_k has no effect on the result) "
        "and one with top_k=1 and a temperature above 0, e.g. {'temperature': 1.4, "
        "'top_k': 1}.",
        reproduce=reproduce_both_ways,
        max_examples=1,
    ),
    Check(
        name="is_deterministic(temperature, top_k) is True exactly for temperature 0.0 or top_k=1",
        points=3,
        strategy=predicate_cases(),
        run=check_predicate,
        hint="generate is deterministic when it takes the argmax (temperature 0.0) or when "
        "only one token survives the top-k filter (top_k=1); every other setting samples.",
        reproduce=reproduce_predicate,
        max_examples=25,
        examples=(
            {"temperature": 0.0, "top_k": None},
            {"temperature": 1.4, "top_k": 25},
            {"temperature": 1.4, "top_k": 1},
            {"temperature": 0.0, "top_k": 25},
            {"temperature": 1.0, "top_k": None},
            {"temperature": 0.7, "top_k": 2},
        ),
    ),
]
