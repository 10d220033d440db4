"""Checks for exercise 4.3: separate dropout rates for embeddings, shortcuts and attention.

The oracle is the reference ``GPTModel`` whose ``nn.Dropout`` modules get each place's own rate
(``llm_pack.checks.gpt_reference.reference_with_rates``); the student's model is built in the
worker, loaded with the oracle's weights, and run on the judge's input.

Where each rate acts is found deterministically: one rate at 1.0 zeroes its place, the other two
at 0.0 do nothing, and neither draws random numbers, so the student's train-mode logits must
equal the oracle's whatever order the student draws dropout masks in. Only the last check
(three fractional rates, same torch seed) needs masks drawn in the book's order.
"""

from __future__ import annotations

import itertools
from typing import Any

import torch
from hypothesis import strategies as st

from grader.judge.differences import largest_text, pair_text
from grader.judge.launch.handle import WorkerHandle
from grader.judge.memo import remembered
from grader.judge.properties import (
    ATOL,
    RTOL,
    Check,
    CheckFailed,
    assert_close,
    filled_dict,
    tensor_text,
)
from grader.shared.torchseed import seeded
from llm_pack.checks.ex4_3_block import BLOCK_CHECK
from llm_pack.checks.gpt_reference import (
    REFERENCE_WITH_RATES_SOURCE,
    SPLIT_KEYS,
    built_module,
    config_source,
    isolated_rates,
    load_weights,
    reference_with_rates,
    set_rates,
    split_config,
)
from llm_pack.checks.localized import localized
from llm_pack.checks.renames import BOOK_WEIGHTS_SOURCE, naming_only
from llm_pack.strategies import split_dropout_rates, torch_seeds, wide_gpt_configs
from reference import GPT_CONFIG_124M

PLACES = {
    "drop_rate_emb": "the embeddings (drop_emb)",
    "drop_rate_shortcut": "the shortcut branches (drop_shortcut)",
    "drop_rate_attn": "the attention weights (att.dropout)",
}


# --- strategies -------------------------------------------------------------------------------


def isolated_rate(key: str) -> st.SearchStrategy[dict]:
    """``key`` at 1.0 (its place is zeroed), the other two rates at 0.0."""
    return st.just(isolated_rates(key))


@st.composite
def split_cases(draw, rates: st.SearchStrategy[dict] | None = None) -> dict:
    """A small 4.3 config with the given rates (default: three distinct ones), a token batch
    that fits it, and a seed."""
    rates = split_dropout_rates() if rates is None else rates
    cfg = split_config(draw(wide_gpt_configs()), draw(rates))
    n_tokens = draw(st.integers(min_value=1, max_value=cfg["context_length"]))
    return {
        "cfg": cfg,
        "batch": draw(st.integers(min_value=1, max_value=2)),
        "n_tokens": n_tokens,
        "seed": draw(torch_seeds()),
    }


# --- the judge's side -------------------------------------------------------------------------


def reference_and_input(ex: dict) -> tuple[torch.nn.Module, torch.Tensor]:
    """The oracle and the token ids, made exactly as the reproduce snippet makes them (a new
    oracle: the caller may change its rates)."""
    with seeded(ex["seed"]):
        oracle = reference_with_rates(ex["cfg"])
        x = torch.randint(0, ex["cfg"]["vocab_size"], (ex["batch"], ex["n_tokens"]))
    return oracle, x


def oracle_logits(oracle: torch.nn.Module, x: torch.Tensor, train: bool, seed: int):
    with seeded(seed):  # the mode too: a remembered oracle is shared
        return oracle.train(train)(x)


@remembered
def expected_case(ex: dict, train: bool) -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    """The oracle, the input and the oracle's logits for one example (shared: read only)."""
    oracle, x = reference_and_input(ex)
    return oracle, x, oracle_logits(oracle, x, train, ex["seed"])


@remembered
def reference_shapes(cfg: dict) -> dict[str, tuple[int, ...]]:
    """The reference model's state-dict keys and shapes for a 4.3 config."""
    with seeded(None):  # only the shapes are read; the lock keeps its draws apart
        model = reference_with_rates(cfg)
    return {k: tuple(v.shape) for k, v in model.state_dict().items()}


def build_student(worker: WorkerHandle, cfg: dict) -> dict:
    return built_module(worker.call("build", cfg=cfg), "GPTModel(cfg)")


def student_logits(worker: WorkerHandle, ex: dict, train: bool):
    """The student's logits on the judge's input with the oracle's weights, the input, the
    oracle's own logits (computed here while the worker builds its model) and the build's reply."""
    reply, (oracle, x, expected) = worker.call_while(
        "build", lambda: expected_case(ex, train), cfg=ex["cfg"]
    )
    reply = built_module(reply, "GPTModel(cfg)")
    load_weights(worker, reply, oracle, "your model")
    got = worker.call("forward", handle=reply["handle"], x=x, train=train, seed=ex["seed"])
    return got, x, expected, reply


def same(a: Any, b: torch.Tensor) -> bool:
    return (
        isinstance(a, torch.Tensor)
        and a.shape == b.shape
        and torch.allclose(a.to(b.dtype), b, rtol=RTOL, atol=ATOL)
    )


def acting_places(got: torch.Tensor, ex: dict, x: torch.Tensor) -> list[str] | None:
    """The smallest set of places which, zeroed in the reference, gives the student's logits
    (None when no set does, or when no matching set is contained in all the others)."""
    oracle, _ = reference_and_input(ex)
    matches = []
    for r in range(len(SPLIT_KEYS) + 1):
        for subset in itertools.combinations(SPLIT_KEYS, r):
            set_rates(oracle, {k: 1.0 if k in subset else 0.0 for k in SPLIT_KEYS})
            if same(got, oracle_logits(oracle, x, True, ex["seed"])):
                matches.append(list(subset))
    smallest = [m for m in matches if all(set(m) <= set(other) for other in matches)]
    return smallest[0] if smallest else None


# --- checks -----------------------------------------------------------------------------------


def check_config(worker: WorkerHandle, _: Any) -> None:
    cfg = filled_dict(worker.call("config"), "GPT_CONFIG_SPLIT_DROPOUT")
    expected_keys = (set(GPT_CONFIG_124M) - {"drop_rate"}) | set(SPLIT_KEYS)
    problems = [f"{k!r} is missing" for k in sorted(expected_keys - set(cfg))]
    problems += [f"{k!r} should not be there" for k in sorted(set(cfg) - expected_keys)]
    problems += [
        f"{k!r} is {cfg[k]!r}, expected {v!r} as in GPT_CONFIG_124M"
        for k, v in GPT_CONFIG_124M.items()
        if k in cfg and k != "drop_rate" and (cfg[k] != v or type(cfg[k]) is not type(v))
    ]
    problems += [
        f"{k!r} is {cfg[k]!r}, not a rate between 0 and 1"
        for k in SPLIT_KEYS
        if k in cfg and (type(cfg[k]) not in (int, float) or not 0 <= cfg[k] <= 1)
    ]
    if problems:
        raise CheckFailed(
            "GPT_CONFIG_SPLIT_DROPOUT should be GPT_CONFIG_124M with 'drop_rate' replaced by "
            "'drop_rate_emb', 'drop_rate_shortcut' and 'drop_rate_attn': " + "; ".join(problems)
        )


def check_state_keys(worker: WorkerHandle, ex: dict) -> None:
    shapes = build_student(worker, ex["cfg"])["module"]["shapes"]
    expected = reference_shapes(ex["cfg"])
    missing = sorted(set(expected) - set(shapes))
    extra = sorted(set(shapes) - set(expected))
    problems = []
    if missing:
        problems.append("missing: " + ", ".join(missing[:6]) + (" ..." if len(missing) > 6 else ""))
    if extra:
        problems.append("unexpected: " + ", ".join(extra[:6]) + (" ..." if len(extra) > 6 else ""))
    problems += [
        f"{k} has shape {tuple(shapes[k])}, expected {shape}"
        for k, shape in expected.items()
        if isinstance(shapes.get(k), list) and tuple(shapes[k]) != shape
    ]
    if problems:
        raise CheckFailed(
            naming_only(expected, shapes)
            or "your GPTModel's state_dict() keys differ from the reference GPTModel's; "
            + "; ".join(problems)
        )


def check_eval(worker: WorkerHandle, ex: dict) -> None:
    got, x, expected, reply = student_logits(worker, ex, train=False)
    with localized(worker, reply, lambda: expected_case(ex, False)[0], x):
        assert_close(
            got,
            expected,
            "in eval mode, your model's logits (expected: the reference GPTModel's, same weights)",
        )


def check_isolated(key: str):
    def run(worker: WorkerHandle, ex: dict) -> None:
        got, x, expected, reply = student_logits(worker, ex, train=True)
        if same(got, expected):
            return
        rates = ", ".join(f"{k}={v:g}" for k, v in ex["cfg"].items() if k in SPLIT_KEYS)
        message = (
            f"in train mode with {rates}, {key} should zero {PLACES[key]} and nothing else, "
            "but your model's logits differ from the reference's"
        )
        acting = acting_places(got, ex, x) if isinstance(got, torch.Tensor) else None
        if isinstance(got, torch.Tensor) and got.isnan().any():
            message += (
                ". Your logits contain NaN: dropout with p = 1 must zero its input (a "
                "hand-written x * mask / (1 - p) divides 0 by 0 there; nn.Dropout does not)"
            )
        elif acting == []:
            message += f". Your logits are the reference's without dropout: {key} does nothing"
        elif acting is not None:
            zeroed = " and ".join(PLACES[k] for k in acting)
            message += f". Your logits are the reference's with {zeroed} zeroed instead"
        if isinstance(got, torch.Tensor):  # where they differ most, in digits that differ
            message += f" ({d})" if (d := largest_text(expected, got)) else ""
            message += "\n" + pair_text(expected, got)
        else:
            message += f"\nExpected: {tensor_text(expected)}\nGot:      {got!r}"
        with localized(worker, reply, lambda: expected_case(ex, True)[0], x):
            raise CheckFailed(message)

    return run


def check_fractional(worker: WorkerHandle, ex: dict) -> None:
    got, x, expected, reply = student_logits(worker, ex, train=True)
    if same(got, expected):
        return
    rates = ", ".join(f"{k}={ex['cfg'][k]:g}" for k in SPLIT_KEYS)
    with localized(worker, reply, lambda: expected_case(ex, True)[0], x):
        raise CheckFailed(
            f"in train mode with {rates} and torch.manual_seed({ex['seed']}) before the forward "
            "pass, your model's logits differ from the reference's. If the three checks with one "
            "rate at 1.0 pass, your rates act in the right places but draw their random masks in "
            "another order (or another way) than the book's model: embedding dropout first, "
            "then in each block the attention weights, the shortcut after attention, the "
            "shortcut after the feed-forward"
        )


# --- snippets ---------------------------------------------------------------------------------


def reproduce_config(_: Any) -> str:
    return """\
from reference import GPT_CONFIG_124M
from exercises.ex4_3_split_dropout import GPT_CONFIG_SPLIT_DROPOUT

expected_keys = (set(GPT_CONFIG_124M) - {"drop_rate"}) | {
    "drop_rate_emb", "drop_rate_shortcut", "drop_rate_attn"}
print("missing:", expected_keys - set(GPT_CONFIG_SPLIT_DROPOUT))
print("unexpected:", set(GPT_CONFIG_SPLIT_DROPOUT) - expected_keys)
print("changed:", {k: v for k, v in GPT_CONFIG_SPLIT_DROPOUT.items()
                   if k in GPT_CONFIG_124M and GPT_CONFIG_124M[k] != v})
"""


def _setup_source(ex: dict) -> str:
    return f"""\
import torch
from reference import GPTModel
from exercises.ex4_3_split_dropout import GPTModel as YourGPTModel

{REFERENCE_WITH_RATES_SOURCE}
cfg = {config_source(ex["cfg"])}
torch.manual_seed({ex["seed"]})
reference = reference_with_rates(cfg)
x = torch.randint(0, cfg["vocab_size"], ({ex["batch"]}, {ex["n_tokens"]}))
model = YourGPTModel(cfg)
"""


def reproduce_keys(ex: dict) -> str:
    return (
        _setup_source(ex)
        + """\
mine, theirs = set(model.state_dict()), set(reference.state_dict())
print("missing:", sorted(theirs - mine))
print("unexpected:", sorted(mine - theirs))
"""
    )


def reproduce_logits(train: bool):
    mode = "train" if train else "eval"

    def reproduce(ex: dict) -> str:
        return (
            _setup_source(ex)
            + f"""
{BOOK_WEIGHTS_SOURCE}
print(model.load_state_dict(book_weights(model, reference), strict=False))
model.{mode}(), reference.{mode}()
with torch.no_grad():
    torch.manual_seed({ex["seed"]})
    got = model(x)
    torch.manual_seed({ex["seed"]})
    expected = reference(x)
print("your logits:", got)
print("expected:   ", expected)
print("same:", torch.allclose(got, expected, atol=1e-5))
"""
        )

    return reproduce


def _isolation_check(key: str, points: float, hint: str) -> Check:
    return Check(
        name=f"{key} acts on {PLACES[key]} and nowhere else",
        points=points,
        strategy=split_cases(isolated_rate(key)),
        run=check_isolated(key),
        hint=hint,
        reproduce=reproduce_logits(train=True),
        max_examples=8,
    )


CHECKS = [
    Check(
        name="GPT_CONFIG_SPLIT_DROPOUT is GPT_CONFIG_124M with drop_rate replaced by the "
        "three rates",
        points=1,
        strategy=st.just(None),
        run=check_config,
        hint="copy GPT_CONFIG_124M, delete 'drop_rate' and add exactly 'drop_rate_emb', "
        "'drop_rate_shortcut' and 'drop_rate_attn' (the grader builds your model with these "
        "names).",
        reproduce=reproduce_config,
        max_examples=1,
    ),
    Check(
        name="GPTModel has the same state_dict keys as the reference GPTModel",
        points=1,
        strategy=split_cases(),
        run=check_state_keys,
        hint="keep the book's attribute names (tok_emb, pos_emb, trf_blocks, att, ff, norm1, "
        "norm2, final_norm, out_head): a checkpoint of the book's model must load into yours.",
        reproduce=reproduce_keys,
        max_examples=5,
    ),
    Check(
        name="in eval mode GPTModel gives the reference's logits for the same weights",
        points=1.5,
        strategy=split_cases(),
        run=check_eval,
        hint="the forward pass is the book's; dropout must do nothing in eval mode (nn.Dropout "
        "does this itself; F.dropout needs training=self.training).",
        reproduce=reproduce_logits(train=False),
        max_examples=10,
    ),
    _isolation_check(
        "drop_rate_emb",
        1.5,
        "GPTModel's drop_emb = nn.Dropout(cfg['drop_rate_emb']), applied to the sum of the "
        "token and position embeddings, and only there.",
    ),
    _isolation_check(
        "drop_rate_shortcut",
        2,
        "TransformerBlock's drop_shortcut = nn.Dropout(cfg['drop_rate_shortcut']) is applied "
        "twice: to the attention output and to the feed-forward output, each before it is "
        "added back to its shortcut.",
    ),
    _isolation_check(
        "drop_rate_attn",
        1.5,
        "the attention dropout lives in MultiHeadAttention: pass dropout=cfg['drop_rate_attn'] "
        "when TransformerBlock builds self.att.",
    ),
    BLOCK_CHECK,
    Check(
        name="with three different rates, train-mode logits match the reference's for the "
        "same torch seed",
        points=1,
        strategy=split_cases(),
        run=check_fractional,
        hint="use the book's modules in the book's order (nn.Dropout or F.dropout with "
        "training=self.training), so that the random masks are drawn as in the reference.",
        reproduce=reproduce_logits(train=True),
        max_examples=8,
    ),
]
