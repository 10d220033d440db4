"""Fault localization is the grader's, for any pack's module exercise (``grader.pack.judge.
localized``): a failed comparison inside it names the first part of the student's module whose
output differs from the reference's for the same input, as the failure's cause, one cause per
class of part; a pack's ``explain`` may name a fuller cause, and ``part_hints`` give a class's
hint. Here a module of the test's own (not the first pack's) stands for a course's exercise."""

import pytest
import torch
from torch import nn

from grader.pack.judge import LOCATED, Cause, CheckFailed, localized
from grader.pack.worker import trace_module


class Square(nn.Module):
    def forward(self, x):
        return x * x


class Cube(nn.Module):  # the student's mistake: the same place, another function
    def forward(self, x):
        return x * x * x


class Net(nn.Module):
    def __init__(self, act: nn.Module):
        super().__init__()
        self.lin = nn.Linear(3, 4)
        self.act = act
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        return self.out(self.act(self.lin(x)))


class TracingWorker:
    """A worker's ``trace`` probe, in this process: the student's module traced as the worker
    traces it (``trace_module``)."""

    def __init__(self, module: nn.Module):
        self.module = module

    def call(self, action: str, **args):
        assert action == "trace"
        return trace_module(self.module, args["x"])


def fail_inside(worker, reference, **options):
    student = worker.module
    reply = {"handle": 0, "module": {}}
    with pytest.raises(CheckFailed) as caught:
        with localized(worker, reply, lambda: reference, torch.rand(2, 5, 3), **options):
            raise CheckFailed("the outputs differ")
    assert student is worker.module
    return caught.value


def same_weights() -> tuple[Net, Net]:
    torch.manual_seed(0)
    reference, student = Net(Square()), Net(Cube())
    student.load_state_dict(reference.state_dict())
    return reference, student


def test_the_first_part_that_differs_is_the_cause_with_its_evidence():
    reference, student = same_weights()
    failed = fail_inside(TracingWorker(student), reference, part_hints={"Cube": "square it"})
    assert failed.cause.key == "part:Cube:output" and failed.kind == LOCATED
    assert failed.cause.text.startswith("the first difference is inside act (Cube): it gives ")
    assert failed.cause.hint == "square it"
    assert str(failed).startswith(failed.cause.text + "\nthe outputs differ")


def test_a_packs_explain_names_a_fuller_cause_and_keeps_the_message():
    reference, student = same_weights()
    fuller = Cause("act:cubed", "act cubes its input where the reference squares it", "square")
    failed = fail_inside(TracingWorker(student), reference, explain=lambda found, part: fuller)
    assert failed.cause is fuller and str(failed) == "the outputs differ"


def test_an_answer_whose_parts_all_agree_keeps_its_failure_as_it_was():
    reference, _ = same_weights()
    twin = Net(Square())
    twin.load_state_dict(reference.state_dict())
    failed = fail_inside(TracingWorker(twin), reference)
    assert failed.cause is None and str(failed) == "the outputs differ"
