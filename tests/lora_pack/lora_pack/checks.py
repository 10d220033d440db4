"""Exercise E.1's checks: the student's ``LoRALayer`` and ``LinearWithLoRA``, loaded with the
judge's weights, compute what the book's do (``same_module_as_reference``)."""

import torch
from hypothesis import strategies as st

from grader.pack.judge import same_module_as_reference, seeded
from lora_pack.oracle import LinearWithLoRA, LoRALayer

cases = st.fixed_dictionaries(
    {
        "in_dim": st.integers(1, 6),
        "out_dim": st.integers(1, 6),
        "rank": st.integers(1, 4),
        "alpha": st.sampled_from([1.0, 0.5, 2.0, 16.0]),
        "n_tokens": st.integers(1, 4),
        "seed": st.integers(0, 2**16),
    }
)


def drawn(module: torch.nn.Module, seed: int) -> torch.nn.Module:
    """``module`` with every weight drawn (B starts at zero: LoRA would add nothing)."""
    with seeded(seed), torch.no_grad():
        for p in module.parameters():
            p.normal_()
    return module


def inputs(ex: dict) -> torch.Tensor:
    g = torch.Generator().manual_seed(ex["seed"])
    return torch.randn(2, ex["n_tokens"], ex["in_dim"], generator=g)


LORA_HINT = "A has shape (in_dim, rank), B (rank, out_dim); return alpha * (x @ A @ B)"
SHAPES = "with A (in_dim x rank) and B (rank x out_dim), as the book does"


def linear_of(ex: dict) -> torch.nn.Linear:
    return torch.nn.Linear(ex["in_dim"], ex["out_dim"])


CHECKS = [
    same_module_as_reference(
        name="LoRALayer(in_dim, out_dim, rank, alpha)(x) is alpha * (x @ A @ B)",
        answer="exE_lora:LoRALayer",
        strategy=cases,
        arguments=lambda ex: {k: ex[k] for k in ("in_dim", "out_dim", "rank", "alpha")},
        reference=lambda ex: drawn(
            LoRALayer(*(ex[k] for k in ("in_dim", "out_dim", "rank", "alpha"))), ex["seed"]
        ),
        inputs=inputs,
        points=4,
        hint=LORA_HINT,
        structure_hint=f"name the weights as the statement does, {SHAPES}",
    ),
    same_module_as_reference(
        name="LinearWithLoRA(linear, rank, alpha)(x) is linear(x) plus its LoRA layer's output",
        answer="exE_lora:LinearWithLoRA",
        strategy=cases,
        arguments=lambda ex: {
            "linear": [ex["in_dim"], ex["out_dim"]],
            "rank": ex["rank"],
            "alpha": ex["alpha"],
        },
        reference=lambda ex: drawn(
            LinearWithLoRA(linear_of(ex), ex["rank"], ex["alpha"]), ex["seed"]
        ),
        inputs=inputs,
        setup="linear = torch.nn.Linear({in_dim}, {out_dim})",
        points=6,
        hint="keep the linear layer as self.linear, build self.lora = LoRALayer("
        "linear.in_features, linear.out_features, rank, alpha), return "
        "self.linear(x) + self.lora(x)",
        structure_hint=f"keep the layer as self.linear, the LoRA layer as self.lora, {SHAPES}",
        part_hints={"LoRALayer": LORA_HINT},
    ),
]
