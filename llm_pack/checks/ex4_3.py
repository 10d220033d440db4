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

from typing import Any

import torch
from hypothesis import strategies as st

from grader.pack import judge as hints
from grader.pack.judge import (
    ROOT,
    Cause,
    Check,
    CheckFailed,
    StudentError,
    Worker,
    assert_close,
    extra_parameters,
    filled_dict,
    largest_text,
    pair_text,
    tensor_text,
)
from llm_pack.checks.book_names import BOOK_WEIGHTS_SOURCE, naming_only
from llm_pack.checks.dropout_places import (
    RATE_HINTS,
    dropout_calls,
    in_another_order,
    other_uses,
)
from llm_pack.checks.ex4_3_block import BLOCK_CHECK
from llm_pack.checks.ex4_3_logits import (
    CLASSES,
    acting_places,
    build_student,
    expected_case,
    reference_and_input,
    reference_shapes,
    same,
    student_logits,
)
from llm_pack.checks.gpt_reference import (
    REFERENCE_WITH_RATES_SOURCE,
    SPLIT_KEYS,
    config_source,
    isolated_rates,
    split_config,
)
from llm_pack.checks.localized import localized
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


# --- checks -----------------------------------------------------------------------------------


# The kind of a config failure whose keys differ from the exercise's: what its hint is for.
CONFIG_KEYS = "wrong:config-keys"


def check_config(worker: Worker, _: Any) -> None:
    cfg = filled_dict(worker.call("config"), "GPT_CONFIG_SPLIT_DROPOUT")
    expected_keys = (set(GPT_CONFIG_124M) - {"drop_rate"}) | set(SPLIT_KEYS)
    problems = [f"{k!r} is missing" for k in sorted(expected_keys - set(cfg))]
    problems += [f"{k!r} should not be there" for k in sorted(set(cfg) - expected_keys)]
    kind = CONFIG_KEYS if problems else hints.WRONG  # its hint is about keys that differ
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
            "'drop_rate_emb', 'drop_rate_shortcut' and 'drop_rate_attn': " + "; ".join(problems),
            kind,
        )


def check_state_keys(worker: Worker, ex: dict) -> None:
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
        renamed = naming_only(expected, shapes)
        message = renamed or (
            "your GPTModel's state_dict() keys differ from the reference GPTModel's; "
            + "; ".join(problems)
        )
        cause = hard_coded_size(ex["cfg"], shapes, expected, message)
        cause = (cause and size_from_default(worker, cause)) or cause
        raise CheckFailed(message, RENAMED if renamed else hints.WRONG, cause=cause)


# The kind of a state_dict that differs from the book's in names only: the hint to keep the
# book's names is for it, never for keys missing or shapes that differ.
RENAMED = "wrong:renamed"


def size_from_default(worker: Worker, hard_coded: Cause) -> Cause | None:
    """The cause of a size of GPT_CONFIG_124M's where cfg asks for another (``hard_coded``, from
    ``hard_coded_size``: ``hard-coded:<key>:<size>``) in a model whose classes take parameters
    besides cfg (defaults, ``*args``, ``**kwargs``), which the exercise's call never passes: a
    default of that size, or any parameter the exercise leaves unset, is the first suspect, not
    a number written in place of cfg. The class with a default of that size comes first. None
    when no class the exercise builds takes more than cfg."""
    _, key, size = hard_coded.key.split(":", 2)
    seen = f"a size of {size}, GPT_CONFIG_124M's cfg['{key}'], where the config asks for another"
    takes = {n: worker.call("constructor", name=n).get("parameters") or [] for n in CLASSES}
    ranked = sorted(
        CLASSES, key=lambda n: not any(p.split("=", 1)[-1].strip() == size for p in takes[n])
    )
    for name in ranked:
        cause = extra_parameters(worker, name, CLASSES[name], seen)
        if cause is not None:
            return cause
    return None


def hard_coded_size(cfg: dict, shapes: dict, expected: dict, message: str) -> Cause | None:
    """The cause of shapes that differ from the reference's where a size of the student's is
    GPT_CONFIG_124M's value of a key whose value in ``cfg`` is the reference's size there: that
    size is not read from cfg (written as a number, or read from another config: the evidence
    does not tell which, and the text does not say). None without such a size."""
    for name, shape in expected.items():
        got = shapes.get(name)
        if not isinstance(got, list) or len(got) != len(shape) or tuple(got) == shape:
            continue
        for mine, theirs in zip(got, shape, strict=True):
            keys = [
                k
                for k, v in GPT_CONFIG_124M.items()
                if type(v) is int and v == mine != cfg.get(k) == theirs
            ]
            if keys:
                # What the evidence shows: the size is GPT-2 small's, not cfg's. Whether it is
                # written as a number or read from another config, it does not say.
                said = (
                    f"{name} has {mine} where the config asks for {theirs}: {mine} is "
                    f"GPT_CONFIG_124M's cfg['{keys[0]}'], not read from the cfg your classes "
                    f"are given (cfg['{keys[0]}'] is {theirs} here)"
                )
                hint = f"write cfg['{keys[0]}'] wherever your classes use {mine}."
                return Cause(f"hard-coded:{keys[0]}:{mine}", f"{said}. {message}", hint, ROOT)
    return None


# The kinds of failure whose hints name a cause, given only where the evidence shows it: logits
# that change with the torch seed in eval mode; rates that act in other places (or in none);
# rates that each act in their place while three together differ: the book's dropouts applied in
# another order (their calls, by name, in the trace), or masks drawn another way.
EVAL_RANDOM = "values:eval-random"
PLACEMENT = "wrong:placement"
MASK_ORDER = "wrong:mask-order"
MASK_WAY = "wrong:mask-way"


def check_eval(worker: Worker, ex: dict) -> None:
    got, x, expected, reply = student_logits(worker, ex, train=False)
    if same(got, expected):
        return
    what = "in eval mode, your model's logits (expected: the reference GPTModel's, same weights)"
    if isinstance(got, torch.Tensor) and got.shape == expected.shape:
        again = worker.call(
            "forward", handle=reply["handle"], x=x, train=False, seed=ex["seed"] + 1
        )
        if not same(again, got):  # the same input, another torch seed: randomness in eval mode
            said = (
                "in eval mode, your model's logits change with the torch seed "
                f"(torch.manual_seed({ex['seed']}) and then {ex['seed'] + 1} before the same "
                "input): dropout (or other randomness) still acts in eval mode"
            )
            raise CheckFailed(
                f"{said}\n{pair_text(got, again)}", EVAL_RANDOM, cause=Cause(EVAL_RANDOM, said)
            )
    with localized(worker, reply, lambda: expected_case(ex, False)[0], x):
        assert_close(got, expected, what)


def student_trace(worker: Worker, reply: dict, x: torch.Tensor) -> list[dict]:
    """The worker's trace of the student's model built by ``reply`` on ``x`` (eval mode); none
    when it raises there (nothing is claimed from it)."""
    try:
        return worker.call("trace", handle=reply["handle"], x=x)
    except StudentError:
        return []


def in_place_each(worker: Worker, ex: dict) -> bool:
    """Whether the student's model gives the reference's logits in eval mode and in train mode
    with each rate alone at 1.0 (the other two at 0.0), for ``ex``'s config and input: its rates
    act in their places, so three fractional rates can differ only in how masks are drawn."""
    if not same(student_logits(worker, ex, train=False)[0], expected_case(ex, False)[2]):
        return False
    for key in SPLIT_KEYS:
        alone = {**ex, "cfg": {**ex["cfg"], **isolated_rates(key)}}
        got, _, expected, _ = student_logits(worker, alone, train=True)
        if not same(got, expected):
            return False
    return True


def check_isolated(key: str):
    def run(worker: Worker, ex: dict) -> None:
        got, x, expected, reply = student_logits(worker, ex, train=True)
        if same(got, expected):
            return
        rates = ", ".join(f"{k}={v:g}" for k, v in ex["cfg"].items() if k in SPLIT_KEYS)
        message = (
            f"in train mode with {rates}, {key} should zero {PLACES[key]} and nothing else, "
            "but your model's logits differ from the reference's"
        )
        acting = acting_places(got, ex, x) if isinstance(got, torch.Tensor) else None
        kind = hints.WRONG if acting is None else PLACEMENT
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
        # Its rates are 0 and 1 (isolated_rate): deterministic in train mode, so traced in it.
        with localized(worker, reply, lambda: expected_case(ex, True)[0], x, train=True):
            raise CheckFailed(message, kind)

    return run


def check_fractional(worker: Worker, ex: dict) -> None:
    got, x, expected, reply = student_logits(worker, ex, train=True)
    if same(got, expected):
        return
    rates = ", ".join(f"{k}={ex['cfg'][k]:g}" for k in SPLIT_KEYS)
    message = (
        f"in train mode with {rates} and torch.manual_seed({ex['seed']}) before the forward "
        "pass, your model's logits differ from the reference's"
    )
    if in_place_each(worker, ex):
        oracle, _ = reference_and_input(ex)
        trace = student_trace(worker, reply, x)
        book = dropout_calls(oracle, x)
        extra = other_uses(trace, book)
        if extra is not None:
            raise CheckFailed(f"{message}: {extra.text}", PLACEMENT, cause=extra)
        if in_another_order(trace, book):
            order = (
                "each rate alone acts in its place (and eval mode gives the reference's "
                "logits), and your model applies the book's dropouts in another order than the "
                "book's forward, so it draws its random masks in another order: embedding "
                "dropout first, then in each block the attention weights, the shortcut after "
                "attention, the shortcut after the feed-forward"
            )
            raise CheckFailed(f"{message}: {order}", MASK_ORDER, cause=Cause(MASK_ORDER, order))
        way = (
            "each rate alone acts in its place (and eval mode gives the reference's logits), "
            "and your model applies the book's dropouts as often and in the order the book's "
            "forward does (as far as their names show), so it draws its random masks another "
            "way than the book's nn.Dropout modules (a dropout of its own, masks from other "
            "random numbers, an extra draw)"
        )
        raise CheckFailed(f"{message}: {way}", MASK_WAY, cause=Cause(MASK_WAY, way))
    with localized(worker, reply, lambda: expected_case(ex, True)[0], x):
        raise CheckFailed(message)


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
        hint_kinds=(PLACEMENT,),
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
        hint_kinds=(CONFIG_KEYS,),
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
        hint_kinds=(RENAMED,),  # names only differ: a hint about names, only then
        reproduce=reproduce_keys,
        max_examples=5,
    ),
    Check(
        name="in eval mode GPTModel gives the reference's logits for the same weights",
        points=1.5,
        strategy=split_cases(),
        run=check_eval,
        hint="dropout must do nothing in eval mode: nn.Dropout stops by itself in eval mode; "
        "F.dropout needs training=self.training.",
        hint_kinds=(EVAL_RANDOM,),
        reproduce=reproduce_logits(train=False),
        max_examples=10,
    ),
    _isolation_check("drop_rate_emb", 1.5, RATE_HINTS["drop_rate_emb"]),
    _isolation_check("drop_rate_shortcut", 2, RATE_HINTS["drop_rate_shortcut"]),
    _isolation_check("drop_rate_attn", 1.5, RATE_HINTS["drop_rate_attn"]),
    BLOCK_CHECK,
    Check(
        name="with three different rates, train-mode logits match the reference's for the "
        "same torch seed",
        points=1,
        strategy=split_cases(),
        run=check_fractional,
        # Given where each rate acts in its place and eval mode is right: nothing about eval.
        hint="apply the book's dropouts in the book's order, so that the random masks are "
        "drawn as in the reference.",
        hint_kinds=(MASK_ORDER,),
        known=(
            hints.Known(
                MASK_WAY,
                "draw every mask with the book's nn.Dropout modules (or F.dropout), one call "
                "each where the book's forward calls it: the grader compares masks drawn after "
                "the same torch seed.",
            ),
        ),
        reproduce=reproduce_logits(train=True),
        max_examples=8,
    ),
]
