"""The checks of the stated signatures, beyond what the corpus shows: 3.2 called without
``dropout`` (its default must be 0.0) and 4.3's ``TransformerBlock(cfg)`` built from ``cfg``
alone name the mistake, and their snippets show it in a student's clone (and show success
with the solution)."""

from __future__ import annotations

from support import run_snippet

from llm_pack.checks.ex4_3_block import BLOCK_CHECK


def only_failure(result):
    failing = [c for c in result.checks if not c.passed]
    assert len(failing) == 1, [c.name for c in failing]
    return failing[0]


def test_3_2_default_dropout_is_named_and_its_snippet_shows_it(graded, solution_clone):
    folder, result = graded("3.2", "wrong_default_dropout")
    check = only_failure(result)
    assert check.name.startswith("called without dropout")
    assert "dropout layers drop with p = 0.1" in check.message
    ex = check.counterexample
    assert ex["dropout"] is None  # the call passes no dropout, and so does the snippet
    assert f"mha = make_2d_wrapper({ex['d_in']}, {ex['context_length']})\n" in check.reproduce
    assert "same as with dropout=0.0: False" in run_snippet(check.reproduce, folder)
    assert "same as with dropout=0.0: True" in run_snippet(check.reproduce, solution_clone)


def test_3_2_default_dropout_applied_by_hand_shows_in_the_output(graded):
    _, result = graded("3.2", "wrong_default_dropout_functional")
    check = next(c for c in result.checks if c.name.startswith("called without dropout"))
    assert not check.passed
    assert "in train mode after torch.manual_seed(" in check.message
    assert "differs from the expected values" in check.message


def test_4_3_block_rate_outside_cfg_is_named_and_its_snippet_shows_it(graded, solution_clone):
    folder, result = graded("4.3", "wrong_block_rate_default")
    check = only_failure(result)
    assert check.name == BLOCK_CHECK.name
    assert "drop_rate" not in str(check.counterexample)  # the check sets the rates itself
    mutant = run_snippet(check.reproduce, folder)
    assert "drop_rate_emb = 1.0, the others 0.0: same as the reference block: False" in mutant
    solution = run_snippet(check.reproduce, solution_clone)
    assert solution.count("same as the reference block: True") == 3
