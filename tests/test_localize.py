"""Fault localization (``grader.worker.trace`` in the worker, ``grader.judge.localize`` in the
judge): the first part of a student's module whose output differs from the reference's for the
same input is named, with one example value; a correct module gives None; a module named
differently is mapped; a trace from a worker is checked before it is used. End to end: 4.3's
eval-mode logits check names the GELU of an answer whose own GELU has a typo in a constant."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from grader.judge.localize import display_name, first_difference
from grader.judge.renames import module_renames
from grader.worker.trace import trace_module


class Gelu(nn.Module):
    def __init__(self, c: float = 0.044715):
        super().__init__()
        self.c = c

    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + self.c * x**3)))


class Block(nn.Module):
    def __init__(self, c: float = 0.044715, swapped: bool = False):
        super().__init__()
        self.norm = nn.LayerNorm(4)
        self.ff = nn.Sequential(nn.Linear(4, 8), Gelu(c), nn.Linear(8, 4))
        self.swapped = swapped

    def forward(self, x):
        if self.swapped:  # the shortcut added before the norm, not after the feed-forward
            return self.ff(self.norm(x + x))
        return x + self.ff(self.norm(x))


class Model(nn.Module):
    def __init__(self, **block):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.blocks = nn.Sequential(Block(), Block(**block))
        self.head = nn.Linear(4, 10, bias=False)

    def forward(self, idx):
        return self.head(self.blocks(self.emb(idx)))


class Renamed(nn.Module):
    """``Model`` with its blocks under another name (the same parameters, in the same order)."""

    def __init__(self, **block):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.layers = nn.Sequential(Block(), Block(**block))
        self.head = nn.Linear(4, 10, bias=False)

    def forward(self, idx):
        return self.head(self.layers(self.emb(idx)))


def pair(student_cls=Model, **block) -> tuple[nn.Module, nn.Module]:
    torch.manual_seed(0)
    reference = Model()
    student = student_cls(**block)
    names, values = student.state_dict(), reference.state_dict().values()
    student.load_state_dict(dict(zip(names, values, strict=True)))
    return reference, student


X = torch.tensor([[1, 4, 7]])


def test_the_trace_is_in_the_order_calls_finish_with_copies_of_inputs_and_outputs():
    _, student = pair()
    trace = trace_module(student, X)
    names = [e["name"] for e in trace]
    assert names[:2] == ["emb", "blocks.0.norm"]
    assert names.index("blocks.0.ff.1") < names.index("blocks.0.ff") < names.index("blocks.0")
    assert names[-1] == ""  # the module itself finishes last
    gelu = trace[names.index("blocks.0.ff.1")]
    assert gelu["class"] == "Gelu" and gelu["args"] == 1
    assert gelu["input_shape"] == [1, 3, 8] and gelu["output"].shape == (1, 3, 8)
    assert not any(h for m in student.modules() for h in (m._forward_hooks, m._forward_pre_hooks))


def test_a_tensor_over_the_cap_keeps_its_shape_only():
    _, student = pair()
    trace = trace_module(student, X, max_elements=20)
    gelu = next(e for e in trace if e["name"] == "blocks.0.ff.1")
    assert gelu["output"] is None and gelu["output_shape"] == [1, 3, 8]


def test_a_correct_module_has_no_difference():
    reference, student = pair()
    assert first_difference(reference, trace_module(student, X)) is None


def test_a_wrong_part_is_named_innermost_with_an_example_value():
    reference, student = pair(c=0.44715)
    found = first_difference(reference, trace_module(student, X))
    assert found is not None
    assert (found.name, found.cls, found.own_forward) == ("blocks.1.ff.1", "Gelu", False)
    gelu = reference.blocks[1].ff[1]
    assert found.expected == pytest.approx(float(gelu(torch.tensor(found.input_value))), abs=1e-5)
    assert found.got != pytest.approx(found.expected, abs=1e-4)
    sentence = found.sentence()
    assert sentence.startswith("the first difference is inside blocks[1].ff[1] (Gelu): it gives ")
    got, expected = sentence.split("it gives ")[1].split(", the reference's gives ")
    assert got.split(" ")[0] != expected  # the two numbers differ as printed


def test_a_module_that_combines_right_parts_wrongly_is_named_for_its_own_forward():
    reference, student = pair(swapped=True)
    found = first_difference(reference, trace_module(student, X))
    assert (found.name, found.cls, found.own_forward) == ("blocks.1", "Block", True)
    # The norm is given x + x, and its output is its feed-forward's alone: the reference's
    # norm is given the block's input, and the block's input is added to its output.
    assert found.wiring == (
        "norm is given twice its input, where the reference's is given its input; it returns "
        "ff's output, where the reference returns ff's output + its input"
    )
    assert found.sentence().endswith(
        "each of its parts gives the reference's output for what it receives, but in its "
        f"forward {found.wiring}"
    )


class TwoNorms(nn.Module):
    """The book's pre-norm block in small, with three ways to get its forward wrong."""

    def __init__(self, mistake: str = ""):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(4), nn.LayerNorm(4)
        self.att, self.ff = nn.Linear(4, 4), nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)
        self.mistake = mistake

    def forward(self, x):
        first, second = (
            (self.norm2, self.norm1) if self.mistake == "swapped" else (self.norm1, self.norm2)
        )
        if self.mistake == "norm1 twice":
            second = self.norm1
        h = self.drop(self.att(first(x))) + x
        out = self.drop(self.ff(second(h)))
        return out + (x if self.mistake == "old shortcut" else h)


def norms_pair(mistake: str) -> tuple[nn.Module, nn.Module]:
    torch.manual_seed(1)
    reference, student = TwoNorms(), TwoNorms(mistake)
    for norm in (reference.norm1, reference.norm2):  # fresh norms are equal: weights of their own
        nn.init.normal_(norm.weight)
        nn.init.normal_(norm.bias)
    student.load_state_dict(reference.state_dict())
    return reference, student


@pytest.mark.parametrize(
    "mistake, wiring",
    [
        (
            "swapped",
            "norm1 is given the output of drop's call 1 + its input, where the reference's is "
            "given its input; att is given norm2's output, where the reference's is given "
            "norm1's output",
        ),
        (
            "norm1 twice",
            "norm2 is never called; ff is given the output of norm1's call 2, where the "
            "reference's is given norm2's output",
        ),
        (
            "old shortcut",
            "it returns the output of drop's call 2 + its input, where the reference returns the "
            "output of drop's call 2 + norm2's input",
        ),
    ],
)
def test_what_a_forward_passes_its_parts_is_named_where_it_departs(mistake, wiring):
    reference, student = norms_pair(mistake)
    x = torch.randn(1, 3, 4)
    found = first_difference(reference, trace_module(student, x))
    assert (found.name, found.own_forward) == ("", True)
    assert found.wiring == wiring


def test_a_part_that_returns_its_input_is_not_named_for_being_skipped():
    # Dropout in eval mode returns what it is given: an answer that never calls it and adds the
    # old shortcut is named for the shortcut only.
    class NoDropout(TwoNorms):
        def forward(self, x):
            h = self.att(self.norm1(x)) + x
            return self.ff(self.norm2(h)) + x

    reference, _ = norms_pair("")
    student = NoDropout()
    student.load_state_dict(reference.state_dict())
    found = first_difference(reference, trace_module(student, torch.randn(1, 3, 4)))
    assert found.own_forward and "never called" not in found.wiring
    assert found.wiring.startswith("it returns ff's output + its input, where the reference ")


def test_a_part_written_out_with_its_weights_is_not_said_to_be_missing():
    # norm2 computed with F.layer_norm and norm2's own weights (not called as a module), and the
    # old shortcut added: only the shortcut is named.
    class Inline(TwoNorms):
        def forward(self, x):
            h = self.drop(self.att(self.norm1(x))) + x
            n = nn.functional.layer_norm(h, (4,), self.norm2.weight, self.norm2.bias)
            return self.drop(self.ff(n)) + x

    reference, _ = norms_pair("")
    student = Inline()
    student.load_state_dict(reference.state_dict())
    found = first_difference(reference, trace_module(student, torch.randn(1, 3, 4)))
    assert found.own_forward and "never called" not in found.wiring
    assert found.wiring.startswith("it returns ")


def test_no_wiring_is_claimed_where_neither_side_can_be_named():
    # The two norms equal (fresh weights): the answer that swaps them computes the book's
    # output and has no difference at all; one whose parts are fed tensors computed in the
    # forward itself (x * 3) is named for its own forward, with nothing claimed of its wiring.
    torch.manual_seed(1)
    reference, student = TwoNorms(), TwoNorms("swapped")
    student.load_state_dict(reference.state_dict())
    x = torch.randn(1, 3, 4)
    assert first_difference(reference, trace_module(student, x)) is None

    class Doubled(TwoNorms):
        def forward(self, x):
            return super().forward(x * 3)

    student = Doubled()
    student.load_state_dict(reference.state_dict())
    found = first_difference(reference, trace_module(student, x))
    assert found.own_forward and found.wiring == ""
    assert "difference is in its own forward" in found.sentence()


def test_a_train_mode_trace_finds_a_dropout_of_another_rate_which_eval_mode_cannot():
    # With rates of 0 and 1 a train-mode run is deterministic: a dropout built with the wrong
    # rate zeroes what the reference's keeps. In eval mode both are the identity.
    torch.manual_seed(0)
    reference = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.0), nn.Linear(4, 4))
    student = nn.Sequential(nn.Linear(4, 4), nn.Dropout(1.0), nn.Linear(4, 4))
    student.load_state_dict(reference.state_dict())
    x = torch.randn(1, 3, 4)
    assert first_difference(reference, trace_module(student, x)) is None
    trace = trace_module(student, x, train=True)
    assert not student.training  # the trace leaves the module in eval mode
    found = first_difference(reference, trace, train=True)
    assert (found.name, found.cls, found.own_forward) == ("1", "Dropout", False)
    assert found.got == 0 and found.expected == found.input_value != 0
    assert bool((found.gave == 0).all()) and torch.equal(found.given, reference[0](x))


def test_a_renamed_module_maps_to_the_reference_by_its_parameters():
    reference, student = pair(Renamed, c=0.44715)
    mine = dict(student.named_parameters())
    parameters = dict(zip(dict(reference.named_parameters()), mine, strict=True))
    renames = module_renames(parameters)
    assert renames["layers.1.ff.0"] == "blocks.1.ff.0" and renames["layers"] == "blocks"
    trace = trace_module(student, X)
    found = first_difference(reference, trace, renames)
    assert (found.name, found.cls) == ("layers.1.ff.1", "Gelu")
    assert found.sentence().startswith("the first difference is inside layers[1].ff[1] (Gelu)")


def test_shapes_that_differ_are_said():
    torch.manual_seed(0)
    reference = nn.Sequential(nn.Linear(3, 3), nn.Softmax(dim=-1))
    student = nn.Sequential(nn.Linear(3, 3), nn.Flatten(0))
    student.load_state_dict(reference.state_dict())
    found = first_difference(reference, trace_module(student, torch.rand(2, 3)))
    assert (found.name, found.got_shape, found.expected_shape) == ("1", (6,), (2, 3))
    assert "it returns shape (6,), the reference's returns (2, 3)" in found.sentence()


@pytest.mark.parametrize(
    "trace",
    [
        None,
        "trace",
        [1, "x", {"name": 3}, {"name": "0", "class": "Linear", "args": "1"}],
        [{"name": "0", "class": "Linear", "args": 1, "input": [1.0], "output": None}],
        [{"name": "nowhere", "class": "X", "args": 1, "input": torch.ones(3), "output": None}],
        [{"name": "0", "class": "Linear", "args": 1, "input": torch.ones(5), "output": None}],
    ],
)
def test_a_malformed_trace_is_skipped_not_trusted(trace):
    reference = nn.Sequential(nn.Linear(3, 3))
    assert first_difference(reference, trace) is None


def test_names_read_as_python_spells_them():
    assert display_name("trf_blocks.0.ff.layers.1") == "trf_blocks[0].ff.layers[1]"
    assert display_name("final_norm") == "final_norm"


def test_the_eval_check_names_the_students_gelu(graded):
    _, result = graded("4.3", "wrong_gelu_constant")
    (check,) = [c for c in result.checks if c.name.startswith("in eval mode")]
    assert not check.passed and check.points == 0
    first = check.message.splitlines()[0]
    assert first.startswith("the first difference is inside trf_blocks[0].ff.layers[1] (GELU): ")
    assert "Hint:" not in check.message  # the dropout hint names a cause the evidence rules out
    # The train-mode checks fail because of the same GELU, and say so, without dropout hints.
    for other in (c for c in result.checks if not c.passed):
        assert "the first difference is inside " in other.message.splitlines()[0], other.name
        assert "(GELU)" in other.message.splitlines()[0] and "Hint:" not in other.message


def test_a_wrapper_whose_heads_softmax_over_the_wrong_dimension_is_named_by_its_head(tmp_path):
    from support import CORPUS, grade_folder, make_submission

    source = (CORPUS / "ex3_2" / "correct_own_copy_of_book_classes.py").read_text()
    start = source.index("attn_weights = torch.softmax(")
    at = source.index("dim=-1", start)
    wrong = tmp_path / "wrong.py"
    wrong.write_text(source[:at] + "dim=-2" + source[at + len("dim=-1") :])
    folder = make_submission(tmp_path / "sub", {"3.2": wrong})
    (result,) = grade_folder(folder, ["3.2"]).exercises
    (check,) = [c for c in result.checks if c.name.startswith("it computes what")]
    assert not check.passed
    # Its parts agree, so the book's forward is replayed with one step changed: the softmax over
    # the queries is the one that gives this answer's output, and it is the cause.
    assert check.cause["text"] == (
        "inside heads[0] (CausalAttention), its softmax normalizes each column (over the "
        "queries, dim=1) instead of each row (over the keys, dim=-1)"
    )
    assert "dim=-1" in check.cause["hint"]
    assert result.diagnosis[0]["key"] == check.cause["key"]


def test_only_the_failures_a_report_shows_are_localized(tmp_path, monkeypatch):
    """A right answer is never traced; a wrong one once per failing check (the shrunk example's
    final run), or twice where the check's examples were replayed (``grader.judge.replay``: the
    replayed failure runs outside hypothesis), never at every step of hypothesis's shrinking."""
    from support import CORPUS, grade_folder, make_submission

    import grader.judge.located as located
    import grader.judge.parallel as parallel

    calls = []
    real = located.localize
    # Counted in this process: graded here, never in forked judges (which a process with no
    # other thread uses, as under ``pytest -n 0``, and whose calls this list would not see).
    monkeypatch.setattr(parallel, "alone", lambda: False)
    monkeypatch.setattr(located, "localize", lambda *a, **k: calls.append(1) or real(*a, **k))
    (right,) = grade_folder(make_submission(tmp_path / "right"), ["4.3"]).exercises
    assert right.score == right.max_score and calls == []
    wrong = CORPUS / "ex4_3" / "wrong_gelu_constant.py"
    (result,) = grade_folder(make_submission(tmp_path / "wrong", {"4.3": wrong}), ["4.3"]).exercises
    failing = [c for c in result.checks if not c.passed]
    assert len(failing) == 5 and len(failing) <= len(calls) <= 2 * len(failing)
