"""Hypothesis strategies of the chapter-5 checks (judge side): tiny GPT configs, prompts,
generation settings and next-token logits. Everything drawn is plain data, so that a
counterexample reads as it is and a reproduce snippet rebuilds it exactly.

Batch sizes: the book's ``generate`` compares the logits with a ``(batch,)`` threshold and
tests ``idx_next == eos_id`` with ``if``, which works for one row only. The checks therefore use
batch 1 whenever ``top_k`` or ``eos_id`` is given, and batches of 1 to 3 rows only for plain
greedy decoding (no ``top_k``, no ``eos_id``), which the book's code handles for any batch.
"""

from __future__ import annotations

from hypothesis import strategies as st

TEMPERATURES = (0.1, 0.5, 0.8, 1.0, 1.4, 2.0, 5.0)


def torch_seeds() -> st.SearchStrategy[int]:
    return st.integers(min_value=0, max_value=2**16)


@st.composite
def gpt_configs(draw) -> dict:
    """A chapter-4 GPT config of a few hundred parameters (no dropout)."""
    n_heads = draw(st.integers(min_value=1, max_value=2))
    return {
        "vocab_size": draw(st.integers(min_value=2, max_value=24)),
        "context_length": draw(st.integers(min_value=1, max_value=8)),
        "emb_dim": n_heads * draw(st.integers(min_value=2, max_value=4)),
        "n_heads": n_heads,
        "n_layers": draw(st.integers(min_value=1, max_value=2)),
        "drop_rate": 0.0,
        "qkv_bias": draw(st.booleans()),
    }


@st.composite
def generation_cases(
    draw,
    temperature: st.SearchStrategy[float] | None = None,  # None: 0.0
    top_k: str = "any",  # "any": None, 1 or 1..vocab; "none"; "one"; "filter": 1..vocab-1
    max_batch: int = 3,
    defaults: bool = False,
    scales: tuple[float, ...] = (1.0, 4.0),
    max_new_tokens: int = 6,
) -> dict:
    """A tiny GPT (config, weight seed, logit scale: 1.0 keeps the random model's logits
    close, so sampling visits many tokens), a prompt that may be longer than the context,
    ``context_size <= context_length``, the settings and the torch seed of the call.

    With ``defaults``, half the cases leave ``temperature`` and ``top_k`` out of the call, so
    that the book's defaults (0.0 and None) are what is tested."""
    temperature = st.just(0.0) if temperature is None else temperature
    cfg = draw(gpt_configs())
    vocab = cfg["vocab_size"]
    context_size = draw(st.integers(min_value=1, max_value=cfg["context_length"]))
    if top_k == "one":
        k = 1
    elif top_k == "none":
        k = None
    elif top_k == "filter":
        k = draw(st.integers(min_value=1, max_value=max(1, vocab - 1)))
    else:
        k = draw(st.one_of(st.none(), st.just(1), st.integers(min_value=1, max_value=vocab)))
    batch = 1 if k is not None else draw(st.integers(min_value=1, max_value=max_batch))
    case = {
        "cfg": cfg,
        "model_seed": draw(torch_seeds()),
        "logit_scale": draw(st.sampled_from(scales)),
        "batch": batch,
        "n_tokens": draw(st.integers(min_value=1, max_value=context_size + 4)),
        "context_size": context_size,
        "max_new_tokens": draw(st.integers(min_value=1, max_value=max_new_tokens)),
        "settings": {"temperature": draw(temperature), "top_k": k},
        "seed": draw(torch_seeds()),
    }
    if defaults and k is None and case["settings"]["temperature"] == 0.0 and draw(st.booleans()):
        case["settings"] = {}
    return case


def sampling_temperatures(high: bool = False) -> st.SearchStrategy[float]:
    """Temperatures above 0 (with ``high``, 1.0 and above: flat distributions)."""
    return st.sampled_from([t for t in TEMPERATURES if t >= 1.0] if high else TEMPERATURES)


@st.composite
def eos_cases(draw) -> dict:
    """A greedy case (batch 1, no top-k) and which of its greedy tokens becomes ``eos_id``
    (``eos_step``: the judge reads the token the reference generates at that step)."""
    case = draw(generation_cases(top_k="none", max_batch=1))
    case["max_new_tokens"] = draw(st.integers(min_value=2, max_value=6))
    case["eos_step"] = draw(st.integers(min_value=0, max_value=case["max_new_tokens"] - 1))
    return case


N_DRAWS = 1000  # tokens drawn in one call of generate, for the distribution check


@st.composite
def distribution_cases(draw) -> dict:
    """Next-token logits (evenly spaced values in a random order: no ties, gaps of at least
    2 * scale / (vocab - 1)), a temperature > 0, a top-k, a short prompt and a torch seed."""
    vocab = draw(st.integers(min_value=2, max_value=12))
    scale = draw(st.sampled_from([1.0, 2.0, 3.0]))
    order = draw(st.permutations(range(vocab)))
    logits = [round(scale * (-1.0 + 2.0 * r / (vocab - 1)), 4) for r in order]
    context_size = draw(st.integers(min_value=1, max_value=4))
    return {
        "logits": logits,
        "temperature": draw(sampling_temperatures()),
        "top_k": draw(st.one_of(st.none(), st.integers(min_value=1, max_value=vocab))),
        "n_tokens": draw(st.integers(min_value=1, max_value=4)),
        "context_size": context_size,
        "n_draws": N_DRAWS,
        "seed": draw(torch_seeds()),
    }


@st.composite
def settings_models(draw) -> dict:
    """A model to try a setting on (a tiny GPT, or fixed logits whose two best tokens are
    ``gap`` apart: a near tie, where any sampling shows), a prompt and two torch seeds."""
    kind = draw(st.sampled_from(["gpt", "near_tie"]))
    case = {"kind": kind, "seed": draw(torch_seeds()), "max_new_tokens": 6}
    if kind == "gpt":
        cfg = draw(gpt_configs())
        case.update(
            cfg=cfg,
            model_seed=draw(torch_seeds()),
            n_tokens=draw(st.integers(min_value=1, max_value=cfg["context_length"])),
        )
    else:
        vocab = draw(st.integers(min_value=2, max_value=8))
        case.update(
            vocab=vocab,
            gap=draw(st.sampled_from([1e-4, 1e-2, 0.1])),
            best=draw(st.integers(min_value=0, max_value=vocab - 1)),
            n_tokens=draw(st.integers(min_value=1, max_value=3)),
        )
    return case


def predicate_cases() -> st.SearchStrategy[dict]:
    """A temperature >= 0 (0.0 often, tiny ones too) and a top_k (None, 1 often, up to 50)."""
    temperature = st.one_of(
        st.just(0.0),
        st.sampled_from([1e-6, 0.01, 0.1, 0.5, 1.0, 1.4, 2.0, 10.0]),
        st.floats(min_value=0.001, max_value=5.0).map(lambda t: round(t, 3)),
    )
    top_k = st.one_of(st.none(), st.just(1), st.integers(min_value=1, max_value=50))
    return st.fixed_dictionaries({"temperature": temperature, "top_k": top_k})
