"""Exercise 4.3's check of ``TransformerBlock(cfg)`` on its own.

The other 4.3 checks see the block only through the student's ``GPTModel``, which may build it
with more than ``cfg`` (``TransformerBlock(cfg, rate)``, a rate with a default). The contract's
signature is ``TransformerBlock(cfg)``, so here the block is built from ``cfg`` alone, loaded with
the reference block's weights (its two LayerNorms with weights of their own:
``gpt_reference.own_norms``) and run in train mode on the judge's input, once with each of the
three rates at 1.0 and the other two at 0.0: ``drop_rate_shortcut`` must zero both shortcut
branches, ``drop_rate_attn`` the attention weights, and ``drop_rate_emb`` nothing (it is
``GPTModel``'s). Rates of 1.0 and 0.0 draw no random numbers, so any way of applying dropout
passes.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.pack.judge import (
    STATEMENT,
    Cause,
    Check,
    CheckFailed,
    StudentError,
    Worker,
    assert_close,
    constructors_explained,
    explain_student_error,
    extra_parameters,
    is_stub,
    raised,
    remembered,
    seeded,
)
from llm_pack.checks.book_names import BOOK_WEIGHTS_SOURCE
from llm_pack.checks.ex4_3_logits import CLASSES
from llm_pack.checks.gpt_reference import (
    OWN_NORMS_SOURCE,
    SPLIT_KEYS,
    built_module,
    config_source,
    isolated_rates,
    load_weights,
    own_norms,
    rateless_config,
    set_block_rates,
    split_config,
)
from llm_pack.checks.localized import localized
from llm_pack.strategies import torch_seeds, wide_gpt_configs
from reference import TransformerBlock

BLOCK_PLACES = {
    "drop_rate_emb": "nothing (the embedding dropout is GPTModel's)",
    "drop_rate_shortcut": "both shortcut branches (drop_shortcut)",
    "drop_rate_attn": "the attention weights (att.dropout)",
}


@st.composite
def block_cases(draw) -> dict:
    """A small config without rates (the check sets them), an input batch that fits it, and a
    seed."""
    cfg = split_config(draw(wide_gpt_configs()), {})
    return {
        "cfg": cfg,
        "batch": draw(st.integers(min_value=1, max_value=2)),
        "n_tokens": draw(st.integers(min_value=1, max_value=cfg["context_length"])),
        "seed": draw(torch_seeds()),
    }


def isolated(cfg: dict, key: str) -> dict:
    """``cfg`` with the three rates: ``key`` at 1.0, the other two at 0.0."""
    return {**cfg, **isolated_rates(key)}


@remembered
def reference_block(cfg: dict, ex: dict) -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    """The reference block with ``cfg``'s rates, the input, and the block's train-mode output,
    made as the snippet makes them (shared: read only)."""
    with seeded(ex["seed"]):
        block = own_norms(set_block_rates(TransformerBlock(rateless_config(cfg)), cfg))
    shape = (ex["batch"], ex["n_tokens"], cfg["emb_dim"])
    x = torch.rand(shape, generator=torch.Generator().manual_seed(ex["seed"]))
    block.train()
    with seeded(ex["seed"]):
        return block, x, block(x)


def check_block(worker: Worker, ex: dict) -> None:
    """``compare_block``; a failure of a block whose constructor takes more than cfg has that as
    its cause: a difference, or an exception its code raised built from cfg alone while the
    student's GPTModel(cfg) builds (what GPTModel passes its blocks beyond cfg is what they
    need)."""
    try:
        compare_block(worker, ex)
    except CheckFailed as failed:
        if failed.cause is not None and failed.cause.key.startswith("constructor:"):
            raise
        seen = failed.cause.text if failed.cause is not None else ""
        cause = extra_parameters(worker, "TransformerBlock", "cfg", seen)
        if cause is None:
            raise
        raise CheckFailed(str(failed), failed.kind, failed.info, cause) from None
    except StudentError as exc:
        if is_stub(exc.info):  # not done yet: nothing to explain
            raise
        said = explain_student_error(exc.info)
        if not builds(worker, isolated(ex["cfg"], SPLIT_KEYS[0])):
            raise
        cause = extra_parameters(worker, "TransformerBlock", "cfg", said)
        if cause is None and isinstance(exc, BlockNotBuilt):
            cause = built_otherwise(worker, said)
        if cause is None:
            raise
        raise CheckFailed(said, raised(exc.info), exc.info, cause) from None


class BlockNotBuilt(StudentError):
    """The student's code raised while TransformerBlock(cfg) was being built (not later, in
    loading weights or in forward)."""


def builds(worker: Worker, cfg: dict) -> bool:
    """Whether the student's GPTModel(cfg) is built without raising."""
    try:
        worker.call("build", cfg=cfg)
    except StudentError:
        return False
    return True


def built_otherwise(worker: Worker, said: str) -> Cause | None:
    """The cause of a TransformerBlock that raised while built from cfg alone (``said``) while the
    student's GPTModel(cfg), given the same cfg, builds: GPTModel gives its blocks something
    else than that cfg (another dict, other arguments), which the block needs. None when the
    student's file has no class TransformerBlock."""
    found = worker.call("constructor", name="TransformerBlock")
    if not found.get("found"):
        return None
    takes = ", ".join(found.get("parameters") or []) or "no argument"
    text = (
        f"your TransformerBlock(cfg), built as the exercise builds it, raised, while your "
        f"GPTModel(cfg) with the same cfg builds: GPTModel gives its blocks something else than "
        f"cfg (your TransformerBlock.__init__ takes ({takes})). TransformerBlock must need "
        f"nothing but cfg, the exercise's config itself (what it raised: {said})"
    )
    hint = (
        "build each block as TransformerBlock(cfg) in GPTModel, and read every size and rate "
        "inside TransformerBlock from cfg's own keys."
    )
    return Cause("constructor:signature:TransformerBlock", text, hint, STATEMENT)


def compare_block(worker: Worker, ex: dict) -> None:
    for key in SPLIT_KEYS:
        cfg = isolated(ex["cfg"], key)
        try:
            with constructors_explained(worker, CLASSES):
                reply, (reference, x, expected) = worker.call_while(
                    "build_block", lambda cfg=cfg: reference_block(cfg, ex), cfg=cfg
                )
        except StudentError as exc:
            raise BlockNotBuilt(exc.info) from None
        built_module(reply, "TransformerBlock(cfg)")
        load_weights(worker, reply, reference, "your TransformerBlock(cfg)")
        got = worker.call("forward", handle=reply["handle"], x=x, train=True, seed=ex["seed"])
        # Rates of 0 and 1: deterministic in train mode, so traced in train mode.
        with localized(worker, reply, lambda reference=reference: reference, x, train=True):
            assert_close(
                got,
                expected,
                f"in train mode with {key}=1.0 and the other two rates 0.0, the output of your "
                f"TransformerBlock(cfg) ({key} should zero {BLOCK_PLACES[key]}; expected: the "
                "reference TransformerBlock's with the same weights)",
            )


def reproduce_block(ex: dict) -> str:
    shape = (ex["batch"], ex["n_tokens"], ex["cfg"]["emb_dim"])
    return f"""\
import torch
from reference import TransformerBlock
from exercises.ex4_3_split_dropout import TransformerBlock as YourTransformerBlock

{OWN_NORMS_SOURCE}
{BOOK_WEIGHTS_SOURCE}
base = {config_source(ex["cfg"])}
for key in ("drop_rate_emb", "drop_rate_shortcut", "drop_rate_attn"):
    cfg = {{**base, **{{k: float(k == key) for k in
                        ("drop_rate_emb", "drop_rate_shortcut", "drop_rate_attn")}}}}
    torch.manual_seed({ex["seed"]})
    reference = TransformerBlock({{**base, "drop_rate": 0.0}})
    reference.drop_shortcut.p = cfg["drop_rate_shortcut"]
    reference.att.dropout.p = cfg["drop_rate_attn"]
    own_norms(reference)
    x = torch.rand({shape}, generator=torch.Generator().manual_seed({ex["seed"]}))
    block = YourTransformerBlock(cfg)  # built from cfg alone
    block.load_state_dict(book_weights(block, reference), strict=False)  # its own mask
    block.train(), reference.train()
    with torch.no_grad():
        same = torch.allclose(block(x), reference(x), atol=1e-5)
    print(key, "= 1.0, the others 0.0: same as the reference block:", same)
"""


BLOCK_CHECK = Check(
    name="TransformerBlock(cfg) on its own takes its two rates from cfg, each where its name says",
    points=0.5,
    strategy=block_cases(),
    run=check_block,
    # A failure without a localized cause: the hint says what is compared, and names no cause.
    hint="the grader builds TransformerBlock(cfg) from cfg alone, one rate at 1.0 and the other "
    "two at 0.0, and compares it with the book's block: cfg['drop_rate_attn'] acts on "
    "MultiHeadAttention's dropout, cfg['drop_rate_shortcut'] on drop_shortcut.",
    reproduce=reproduce_block,
    max_examples=2,
)
