"""same_init_as_reference: a module built fresh starts with the reference's weights, the same
constants exactly and the drawn ones from the same distribution. The unusual right answers it
must accept (another drawing order, an extra draw before, extra weights of one's own) and the
wrong ones it must catch (a zero weight drawn, a drawn weight left at zero, another
distribution, another shape)."""

from __future__ import annotations

import math
import types

import pytest
import torch
from hypothesis import strategies as st
from torch import nn

from grader.judge.declared_init import ks_critical, ks_distance
from grader.pack.judge import STRUCTURE, VALUES, CheckFailed, same_init_as_reference
from grader.pack.worker import module_probes


class InProcess:  # the worker protocol in this process
    def __init__(self, probes, module):
        self.probes, self.module, self.state = probes, module, {}

    def call(self, action, timeout=None, **args):
        return self.probes[action](self.module, self.state, **args)

    def call_while(self, action, meanwhile, timeout=None, **args):
        return self.call(action, **args), meanwhile() if meanwhile else None


class LoRALayer(nn.Module):  # the book's (appendix E)
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = nn.Parameter(torch.empty(in_dim, rank))
        nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha


class BFirst(nn.Module):  # right: B made first, a draw of its own before A's
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        torch.rand(7)
        self.A = nn.Parameter(torch.empty(in_dim, rank))
        nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.extra = nn.Parameter(torch.ones(3))  # the student's own


def variant(a_init, b_init=torch.zeros, a_shape=None):
    class Wrong(nn.Module):
        def __init__(self, in_dim, out_dim, rank, alpha):
            super().__init__()
            self.A = nn.Parameter(a_init(*(a_shape or (in_dim, rank))))
            self.B = nn.Parameter(b_init(rank, out_dim))

    return Wrong


def kaiming(*shape):
    t = torch.empty(*shape)
    nn.init.kaiming_uniform_(t, a=math.sqrt(5))
    return t


def check():
    return same_init_as_reference(
        name="LoRALayer starts with B all zeros and A drawn as kaiming_uniform_(a=sqrt(5))",
        answer="exE_lora:LoRALayer",
        strategy=st.fixed_dictionaries(
            {
                "in_dim": st.integers(8, 32),
                "out_dim": st.integers(1, 4),
                "rank": st.integers(4, 8),
                "alpha": st.just(2.0),
                "seed": st.integers(0, 9),
            }
        ),
        arguments=("in_dim", "out_dim", "rank", "alpha"),
        reference=lambda ex: LoRALayer(ex["in_dim"], ex["out_dim"], ex["rank"], ex["alpha"]),
        seed=lambda ex: ex["seed"],
        points=2,
        hint="B = torch.zeros(rank, out_dim); A drawn by kaiming_uniform_(A, a=math.sqrt(5))",
    )


EXAMPLES = [{"in_dim": 16, "out_dim": 2, "rank": 4, "alpha": 2.0, "seed": s} for s in range(3)] + [
    {"in_dim": 32, "out_dim": 3, "rank": 8, "alpha": 2.0, "seed": 5}
]


def run(cls, example):
    worker = InProcess(module_probes("LoRALayer"), types.SimpleNamespace(LoRALayer=cls))
    check().run(worker, example)


@pytest.mark.parametrize("cls", [LoRALayer, BFirst], ids=["book", "b_first_extra_draw"])
def test_right_answers_pass_on_every_example(cls):
    for example in EXAMPLES:
        run(cls, example)


@pytest.mark.parametrize(
    ("cls", "kind", "said"),
    [
        (variant(torch.zeros), VALUES, "'s A starts nearly constant where the reference draws"),
        (variant(kaiming, torch.randn), VALUES, "'s B starts with values from"),
        (variant(torch.randn), VALUES, "'s A starts far outside the range the reference draws"),
        (variant(lambda *s: kaiming(*s) * 2.5), VALUES, "starts far outside the range"),
        (variant(torch.rand), VALUES, "does not start drawn"),
        (variant(kaiming, a_shape=(4, 16)), STRUCTURE, "'s weight 'A' is (4, 16)"),
    ],
    ids=[
        "A_zeros",
        "B_drawn",
        "A_randn",
        "A_wider",
        "A_rand_positive",
        "A_transposed",
    ],
)
def test_wrong_starts_are_caught_by_kind(cls, kind, said):
    example = EXAMPLES[0]
    with pytest.raises(CheckFailed) as caught:
        run(cls, example)
    assert caught.value.kind == kind and said in str(caught.value), str(caught.value)


def test_a_spread_a_little_wider_is_caught_where_there_are_enough_values():
    """The distribution test's reach: 1.6 times kaiming's bound over A's 256 values (the range
    test alone lets it through: it is within the reference's range and half its width)."""
    with pytest.raises(CheckFailed, match="'s A does not start drawn as the reference's"):
        run(variant(lambda *s: kaiming(*s) * 1.6), EXAMPLES[3])


def test_a_small_weight_left_at_zero_or_drawn_too_wide_is_still_caught():
    """Eight values: too few for the distribution test, enough for the range and spread tests."""
    small = {"in_dim": 2, "out_dim": 1, "rank": 4, "alpha": 2.0, "seed": 0}
    with pytest.raises(CheckFailed, match="nearly constant"):
        run(variant(torch.zeros), small)
    with pytest.raises(CheckFailed, match="far outside"):
        run(variant(lambda *s: torch.randn(*s) * 3), small)
    run(LoRALayer, small)
    run(BFirst, small)


def test_a_missing_weight_is_a_structure_failure_naming_the_weights_it_has():
    class NoB(nn.Module):
        def __init__(self, in_dim, out_dim, rank, alpha):
            super().__init__()
            self.A = nn.Parameter(kaiming(in_dim, rank))

    with pytest.raises(CheckFailed, match=r"has no weight named 'B' \(its weights: 'A'\)"):
        run(NoB, EXAMPLES[0])


def test_the_distance_and_its_bound():
    same = torch.rand(4000, generator=torch.Generator().manual_seed(1))
    other = torch.rand(4000, generator=torch.Generator().manual_seed(2))
    assert ks_distance(same, other) < ks_critical(4000, 4000)
    assert ks_distance(same, other + 0.5) > ks_critical(4000, 4000)
    assert ks_distance(torch.zeros(3), torch.ones(3)) == 1.0


def test_the_snippet_builds_the_module_with_the_seed():
    snippet = check().reproduce(EXAMPLES[3])
    assert "torch.manual_seed(5)" in snippet
    assert "module = LoRALayer(in_dim, out_dim, rank, alpha)" in snippet
    assert "in_dim = 32" in snippet
