"""Exercise 5.2's check: ``calc_loss_batch`` against the book's formula (the declarative form)."""

import torch
from hypothesis import strategies as st

from grader.pack.judge import remembered, same_as_reference, seeded
from llm_ch5_pack.reference import describe_model, tiny_gpt
from llm_ch5_pack.strategies import gpt_configs, torch_seeds


@st.composite
def batches(draw) -> dict:
    cfg = draw(gpt_configs())
    shape = [draw(st.integers(1, 3)), draw(st.integers(1, cfg["context_length"]))]
    return {"cfg": cfg, "model_seed": draw(torch_seeds()), "shape": shape}


@remembered
def model_of(cfg: dict, seed: int) -> torch.nn.Module:
    with seeded(seed):
        return tiny_gpt(cfg, seed)


def arguments(ex: dict) -> dict:
    g = torch.Generator().manual_seed(ex["model_seed"])
    ids = torch.randint(0, ex["cfg"]["vocab_size"], (2, *ex["shape"]), generator=g)
    model = describe_model(model_of(ex["cfg"], ex["model_seed"]), ex["cfg"])
    return {"input_batch": ids[0], "target_batch": ids[1], "model": model, "device": "cpu"}


def reference(ex: dict) -> torch.Tensor:
    inputs, targets = arguments(ex)["input_batch"], arguments(ex)["target_batch"]
    logits = model_of(ex["cfg"], ex["model_seed"])(inputs)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())


CHECKS = [
    same_as_reference(
        name="calc_loss_batch is the mean cross-entropy of the model's logits over the batch",
        answer="ex5_2_calc_loss_batch:calc_loss_batch",
        strategy=batches(),
        arguments=arguments,
        reference=reference,
        setup="from llm_ch5_pack.reference import tiny_gpt\n"
        "model = tiny_gpt({cfg!r}, seed={model_seed})",
        points=10,
        hint="flatten the logits to (batch * n_tokens, vocab) and the targets to (batch * "
        "n_tokens,), then take torch.nn.functional.cross_entropy (the mean over every token).",
    )
]
