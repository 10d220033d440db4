"""The declarative module check (``same_module_as_reference`` with ``module_probes``) and the
comparison of structured results (``close``: tuples, lists and dicts, element by element).

The module check is tried in this process (the worker protocol run in-process, as the docs'
example does) on appendix E's ``LoRALayer``, and the test pack ``tests/lora_pack`` (LoRA, two
declared checks) passes ``grade check-pack``: its solution gets full marks, its stub reads "not
done yet", and each wrong answer fails where its header says, with its snippet running.
"""

from __future__ import annotations

import importlib.util
import types

import pytest
import torch
from hypothesis import strategies as st
from support import ROOT
from test_declared import InProcess
from test_pack_authoring import grade
from test_pack_face import grader_imports

from grader.pack.judge import (
    STRUCTURE,
    VALUES,
    CheckFailed,
    close,
    same_as_reference,
    same_module_as_reference,
)
from grader.pack.worker import answer_probes, module_probes
from grader.protocol import layers

LORA_PACK = ROOT / "tests" / "lora_pack"


# --- close: structured results ------------------------------------------------------------------


def test_a_tuple_reference_accepts_the_list_a_worker_sends_back():
    pair = (torch.tensor([1.0, 2.0]), torch.tensor([[3.0]]))
    close([torch.tensor([1.0, 2.0]), torch.tensor([[3.0]])], pair, "f(x)")
    close(pair, pair, "f(x)")


def test_the_first_differing_element_is_named():
    with pytest.raises(CheckFailed, match=r"^element \[1\] of f\(x\) differs") as failed:
        close([torch.ones(2), torch.zeros(2)], (torch.ones(2), torch.ones(2)), "f(x)")
    assert failed.value.kind == VALUES
    with pytest.raises(CheckFailed, match=r"^key 'loss' of f\(x\) is 2.0, expected 1.0"):
        close({"loss": 2.0, "n": 3}, {"loss": 1.0, "n": 3}, "f(x)")
    with pytest.raises(CheckFailed, match=r"^element \[0\]\['w'\] of f\(x\) has shape \(1,\)"):
        close([{"w": torch.ones(1)}], [{"w": torch.ones(2)}], "f(x)")


def test_a_list_of_tensors_never_asks_a_tensor_for_its_truth():
    expected = [torch.ones(3), torch.ones(3)]
    close([torch.ones(3), torch.ones(3) + 1e-7], expected, "f(x)")  # no "ambiguous" error
    with pytest.raises(CheckFailed, match=r"f\(x\) should be a list \(of 2 elements\), but it is"):
        close(torch.ones(2, 3), expected, "f(x)")
    with pytest.raises(CheckFailed, match=r"f\(x\) has 3 elements, expected 2"):
        close([torch.ones(3)] * 3, expected, "f(x)")
    with pytest.raises(CheckFailed, match=r"element \[0\] of f\(x\) is tensor"):
        close([torch.ones(1), "a"], ["a", "a"], "f(x)")


def test_a_wrong_type_gets_the_hint_that_fits_what_was_expected():
    """A tensor where a list is expected is not told to return a number; None anywhere is asked
    whether a return statement is missing; a tensor where a number is expected is told .item()
    (the 57 trial: a list-of-pairs answer returning a tensor was told to return a number, and
    one with no return got no hint)."""
    from grader.judge.hints import choose

    def hint_for(got, expected):
        with pytest.raises(CheckFailed) as failed:
            close(got, expected, "f(x)")
        return choose(failed.value.kind, str(failed.value), "OWN")

    assert ".item()" not in hint_for(torch.ones(2), [torch.ones(1), torch.ones(1)])
    assert ".item()" in hint_for(torch.ones(2), 3.0)
    for expected in ([], [torch.ones(1)], 3.0, {"a": 1}, torch.ones(2)):
        assert "return statement missing" in hint_for(None, expected), expected
    with pytest.raises(CheckFailed, match=r"should be a list \(an empty one\), but it is None$"):
        close(None, [], "f(x)")


def test_same_as_reference_compares_a_pair_of_tensors():
    check = same_as_reference(
        name="split_half(x) is both halves",
        answer="ex9_4:split_half",
        strategy=st.just({"x": [1.0, 2.0, 3.0, 4.0]}),
        arguments=lambda ex: {"x": torch.tensor(ex["x"])},
        reference=lambda ex: tuple(torch.tensor(ex["x"]).chunk(2)),
        points=1,
        hint="chunk(2)",
    )
    probes, ex = answer_probes("split_half"), {"x": [1.0, 2.0, 3.0, 4.0]}
    check.run(InProcess(probes, types.SimpleNamespace(split_half=lambda x: list(x.chunk(2)))), ex)
    swapped = types.SimpleNamespace(split_half=lambda x: x.chunk(2)[::-1])
    with pytest.raises(CheckFailed, match=r"^element \[0\] of split_half\(x\) differs"):
        check.run(InProcess(probes, swapped), ex)


def test_dict_keys_must_be_the_same():
    with pytest.raises(CheckFailed, match=r"f\(x\) has no key 'b' and an unexpected key 'c'"):
        close({"a": 1, "c": 2}, {"a": 1, "b": 2}, "f(x)")


def test_numbers_and_plain_values_compare_as_before():
    close(torch.tensor(1.0), 1.0, "n")
    with pytest.raises(CheckFailed, match=r"^n should be a number, but it is None"):
        close(None, 1.0, "n")
    with pytest.raises(CheckFailed, match=r"^s is 'b', expected 'a'$"):
        close("b", "a", "s")


# --- same_module_as_reference, in this process ------------------------------------------------


def _book_classes():
    """The LoRA pack's oracle (the book's appendix-E classes), loaded from its file."""
    path = LORA_PACK / "lora_pack" / "oracle.py"
    spec = importlib.util.spec_from_file_location("lora_oracle_for_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LoRALayer = _book_classes().LoRALayer


class NoAlpha(LoRALayer):
    def forward(self, x):
        return x @ self.A @ self.B


class Transposed(LoRALayer):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__(in_dim, out_dim, rank, alpha)
        self.A = torch.nn.Parameter(torch.empty(rank, in_dim))


def drawn(ex: dict) -> torch.nn.Module:
    torch.manual_seed(ex["seed"])
    module = LoRALayer(ex["in_dim"], ex["out_dim"], ex["rank"], ex["alpha"])
    with torch.no_grad():
        module.B.normal_()
    return module


CHECK = same_module_as_reference(
    name="LoRALayer(...)(x) is alpha * (x @ A @ B)",
    answer="exE_lora:LoRALayer",
    strategy=st.fixed_dictionaries({"seed": st.integers(0, 9)}),
    arguments=lambda ex: {k: ex[k] for k in ("in_dim", "out_dim", "rank", "alpha")},
    reference=drawn,
    inputs=lambda ex: torch.ones(2, ex["in_dim"]),
    points=4,
    hint="return alpha * (x @ A @ B)",
    structure_hint="A is (in_dim, rank)",
)
EXAMPLE = {"in_dim": 3, "out_dim": 2, "rank": 2, "alpha": 2.0, "seed": 1}


def grade_in_process(cls) -> None:
    student = types.SimpleNamespace(LoRALayer=cls)
    with torch.no_grad():  # as the judge runs a check
        CHECK.run(InProcess(module_probes("LoRALayer"), student), EXAMPLE)


def test_the_right_module_passes_and_a_wrong_forward_fails_with_both_outputs():
    grade_in_process(LoRALayer)
    with pytest.raises(CheckFailed) as failed:
        grade_in_process(NoAlpha)
    message = str(failed.value)
    assert "LoRALayer(in_dim, out_dim, rank, alpha)(x) differs from the expected values" in message
    assert failed.value.cause is not None  # localized: the module itself is the first difference
    assert "your NoAlpha itself" in failed.value.cause.text
    assert failed.value.kind == VALUES  # no part_hints: the check's own hint is shown


def test_a_weight_of_another_shape_or_name_is_a_structure_failure():
    with pytest.raises(CheckFailed, match=r"weight 'A' has shape \(2, 3\), expected \(3, 2\)") as f:
        grade_in_process(Transposed)
    assert f.value.kind == STRUCTURE
    assert ("structure", "A is (in_dim, rank)") in {(k.kind, k.hint) for k in CHECK.known}

    class Renamed(torch.nn.Module):
        def __init__(self, *args):
            super().__init__()
            self.a = torch.nn.Parameter(torch.zeros(3, 2))

    with pytest.raises(CheckFailed, match=r"has no weight named 'A', 'B' \(its weights: 'a'\)"):
        grade_in_process(Renamed)


def test_a_builder_that_returns_no_module_is_told_so():
    with pytest.raises(CheckFailed, match=r"should build a torch.nn.Module, but it is list"):
        grade_in_process(lambda *args: [1, 2])


def test_the_snippet_builds_loads_and_prints_both_outputs():
    snippet = CHECK.reproduce(EXAMPLE)
    assert "from exercises.exE_lora import LoRALayer" in snippet
    assert "module = LoRALayer(in_dim, out_dim, rank, alpha)" in snippet
    pasted = snippet.replace("from exercises.exE_lora import LoRALayer", "")
    exec(pasted, {"LoRALayer": NoAlpha})  # runs to the end: it prints both outputs
    with pytest.raises(AssertionError, match="your weights"):  # a structure failure stops early
        exec(pasted, {"LoRALayer": Transposed})


def test_the_probe_tables_of_two_builders_merge():
    table = module_probes("LoRALayer") | module_probes("LinearWithLoRA")
    assert set(table) == {
        "build:LoRALayer",
        "build:LinearWithLoRA",
        "values",
        "load",
        "forward",
        "trace",
        "constructor",
    }


# --- a whole pack: check-pack ---------------------------------------------------------------------


def test_the_lora_pack_imports_only_the_public_face():
    files = sorted((LORA_PACK / "lora_pack").rglob("*.py"))
    assert set().union(*(grader_imports(p) for p in files)) == {
        "grader.pack.judge",
        "grader.pack.worker",
    }


def test_the_lora_pack_is_short_and_passes_check_pack():
    checks = (LORA_PACK / "lora_pack" / "checks.py").read_text(encoding="utf-8")
    assert len([line for line in checks.splitlines() if line.strip()]) <= 70
    proc = grade("check-pack", str(LORA_PACK / "lora_pack"), "--mutants", "0", cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 of 1 exercise(s) get full marks" in proc.stdout
    assert "7 case(s), 6 wrong and 1 correct" in proc.stdout


def test_redrawn_draws_every_weight_anew_from_the_seed():
    """A reference whose B starts at zero hides how the student's module uses B: ``redrawn``
    draws every floating weight, the same for the same seed."""
    from grader.pack.judge import redrawn

    first = redrawn(LoRALayer(3, 2, 2, 2.0), 7)
    again = redrawn(LoRALayer(3, 2, 2, 2.0), 7)
    other = redrawn(LoRALayer(3, 2, 2, 2.0), 8)
    assert bool((first.B != 0).all())
    pairs = zip(first.parameters(), again.parameters(), strict=True)
    assert all(torch.equal(a, b) for a, b in pairs)
    assert not torch.equal(first.A, other.A)


def test_a_redrawn_references_snippet_draws_its_weights_instead_of_spelling_them():
    """The snippet of a check whose reference is ``redrawn`` seeds and draws the weights as
    ``redrawn`` did (a few lines, not every value: appendix A's network spelled 701 floats);
    what it draws is exactly the reference's weights."""
    from grader.pack.judge import redrawn

    check = same_module_as_reference(
        name="LoRALayer(...)(x) is alpha * (x @ A @ B)",
        answer="exE_lora:LoRALayer",
        strategy=st.fixed_dictionaries({"seed": st.integers(0, 9)}),
        arguments=lambda ex: {k: ex[k] for k in ("in_dim", "out_dim", "rank", "alpha")},
        reference=lambda ex: redrawn(LoRALayer(ex["in_dim"], 40, 8, ex["alpha"]), ex["seed"]),
        inputs=lambda ex: torch.ones(2, ex["in_dim"]),
        points=4,
        hint="return alpha * (x @ A @ B)",
    )
    example = {"in_dim": 30, "out_dim": 40, "rank": 8, "alpha": 2.0, "seed": 3}
    snippet = check.reproduce(example)
    assert "torch.randn(shape)" in snippet and len(snippet) < 2000
    start = snippet.index("torch.manual_seed(3)")
    names: dict = {"torch": torch}
    exec(snippet[start : snippet.index("\nshapes = ")], names)
    expected = redrawn(LoRALayer(30, 40, 8, 2.0), 3).state_dict()
    assert set(names["weights"]) == set(expected)
    assert all(torch.equal(names["weights"][k], v) for k, v in expected.items())


def test_a_torch_layer_argument_goes_as_its_constructors_arguments():
    """``LinearWithLoRA(linear, rank, alpha)`` wraps an ``nn.Linear``: built in ``arguments``,
    it goes to the worker as its class and sizes, is built there again (no ``build=``), the
    snippet writes the same call (no ``setup``), and a wrong answer still fails."""
    from grader.pack.judge import redrawn

    book = _book_classes()

    def reference(ex: dict) -> torch.nn.Module:
        linear = torch.nn.Linear(ex["in_dim"], 2)
        return redrawn(book.LinearWithLoRA(linear, 2, ex["alpha"]), ex["seed"])

    check = same_module_as_reference(
        name="LinearWithLoRA(linear, rank, alpha)(x)",
        answer="exE_lora:LinearWithLoRA",
        strategy=st.fixed_dictionaries({"seed": st.integers(0, 9)}),
        arguments=lambda ex: {
            "linear": torch.nn.Linear(ex["in_dim"], 2),
            "rank": 2,
            "alpha": ex["alpha"],
        },
        reference=reference,
        inputs=lambda ex: torch.ones(2, ex["in_dim"]),
        hint="self.linear(x) + self.lora(x)",
    )
    example = {"in_dim": 3, "alpha": 2.0, "seed": 1}
    probes = module_probes("LinearWithLoRA")
    check.run(InProcess(probes, types.SimpleNamespace(LinearWithLoRA=book.LinearWithLoRA)), example)

    class LinearOnly(book.LinearWithLoRA):
        def forward(self, x):
            return self.linear(x)

    with pytest.raises(CheckFailed):
        check.run(InProcess(probes, types.SimpleNamespace(LinearWithLoRA=LinearOnly)), example)
    assert "linear = torch.nn.Linear(3, 2, bias=True)" in check.reproduce(example)
    with pytest.raises(TypeError, match="the argument block is a Sequential: only a Linear"):
        layers.described(torch.nn.Sequential(), "block")
