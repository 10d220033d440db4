"""The chapter 3 checks beyond what the corpus shows: the judge's rebuild of a returned module
computes what the original computes (and refuses what is not the book's class, in plain words),
counterexamples are shrunk small, reproduce snippets run in a student's clone and show the
failure with a wrong answer and success with the solution, and 3.3 builds its 768-wide module
once per worker."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import find as hypothesis_find
from hypothesis import strategies as st
from support import CORPUS, SOLUTION, clone_of, grade_folder, paste

from grader.judge.causes import STATEMENT
from grader.judge.launch.handle import StudentError
from grader.judge.properties import CheckFailed, run_check
from grader.protocol import wire
from grader.protocol.limits import Limits
from grader.worker import tables
from grader.worker.probes import describe_module
from llm_pack.checks import attention_sizes, ex3_1, ex3_2, ex3_3
from llm_pack.checks.attention_rebuild import (
    MAX_HEADS,
    judge_input,
    rebuild_mha,
    rebuild_wrapper,
    reference_forward,
)
from llm_pack.probes import ATTRS
from reference import MultiHeadAttention, MultiHeadAttentionWrapper

FEW = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))

# One wrong answer per exercise, graded together in one clone (one snippet run per clone).
MUTANTS = {
    "3.1": CORPUS / "ex3_1" / "wrong_copies_v1_into_v2.py",
    "3.2": CORPUS / "ex3_2" / "wrong_subclass_without_mask.py",
    "3.3": CORPUS / "ex3_3" / "wrong_six_heads.py",
}
MUTANTS_2 = {
    "3.1": CORPUS / "ex3_1" / "wrong_forgets_value.py",
    "3.2": CORPUS / "ex3_2" / "wrong_book_d_out_2.py",
    "3.3": CORPUS / "ex3_3" / "wrong_context_length_768.py",
}
CHAPTER_3 = ["3.1", "3.2", "3.3"]


# --- helpers ----------------------------------------------------------------------------------


def run_snippets(sources: dict[str, str], folder: Path) -> dict[str, str]:
    """Run each snippet as a student would (in their clone, ``reference`` importable), all in
    one interpreter, each in a fresh namespace; returns what each printed, or its error."""
    runner = (
        "import io, sys, contextlib, traceback\n"
        f"sources = {sources!r}\n"
        "for name, src in sources.items():\n"
        "    out = io.StringIO()\n"
        "    with contextlib.redirect_stdout(out):\n"
        "        try:\n"
        "            exec(compile(src, name, 'exec'), {'__name__': '__main__'})\n"
        "        except Exception:\n"
        "            print('RAISED', traceback.format_exc(limit=-1))\n"
        "    print('=====', name)\n"
        "    print(out.getvalue())\n"
    )
    proc = paste(runner, folder)
    assert proc.returncode == 0, proc.stderr[-2000:]
    outputs, name = {}, None
    for line in proc.stdout.splitlines():
        if line.startswith("===== "):
            name = line[6:]
            outputs[name] = ""
        elif name is not None:
            outputs[name] += line + "\n"
    assert set(outputs) == set(sources)
    return outputs


@pytest.fixture(scope="module")
def mutant_runs(tmp_path_factory):
    """Each mutant clone, graded once on chapter 3: {label: (clone, {exercise id: result})}."""
    runs = {}
    for label, mutants in (("a", MUTANTS), ("b", MUTANTS_2)):
        folder = clone_of(tmp_path_factory.mktemp(f"mutant_{label}"), mutants)
        # Snippets name the clone as its student does ("."): pasted in a clone, they run it.
        result = grade_folder(folder, CHAPTER_3, shown_as=".")
        runs[label] = folder, {e.id: e for e in result.exercises}
    return runs


def failed_check(result, name_part: str):
    matches = [c for c in result.checks if name_part in c.name and not c.passed]
    assert matches, f"no failing check matching {name_part!r}: {[c.name for c in result.checks]}"
    return matches[0]


def load_file(path: Path):
    spec = importlib.util.spec_from_file_location(f"trusted_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class InProcessWorker:
    """A stand-in for a worker that runs trusted code (the instructor's solution) in the test
    process, through the real probes and the real wire encoding; counts the calls."""

    def __init__(self, exercise_id: str, path: Path):
        self.module = load_file(path)
        self.handlers = tables.for_exercise(exercise_id)
        self.state: dict = {}
        self.calls: list[str] = []
        self.limits = Limits()

    def call(self, action: str, timeout: float | None = None, **args):
        self.calls.append(action)
        try:
            value = self.handlers[action](self.module, self.state, **args)
        except Exception as exc:
            raise StudentError({"type": type(exc).__name__, "message": str(exc)}) from None
        data = wire.encode({"ok": True, "value": value})
        return wire.decode(data[8:])["value"]


# --- checks are well formed -------------------------------------------------------------------


@pytest.mark.parametrize("module", [ex3_1, ex3_2, ex3_3], ids=lambda m: m.__name__)
def test_each_exercise_is_worth_ten_points_in_uniquely_named_checks(module):
    assert sum(c.points for c in module.CHECKS) == 10
    assert len({c.name for c in module.CHECKS}) == len(module.CHECKS)
    assert all(c.reproduce is not None and c.hint for c in module.CHECKS)


# --- the judge's rebuild ----------------------------------------------------------------------


@st.composite
def wrapper_configs(draw) -> dict:
    return {
        "d_in": draw(st.integers(1, 6)),
        "d_out": draw(st.integers(1, 4)),
        "context_length": draw(st.integers(1, 8)),
        "dropout": draw(st.sampled_from([0.0, 0.2, 0.5])),
        "num_heads": draw(st.integers(1, 4)),
        "qkv_bias": draw(st.booleans()),
    }


@FEW
@given(wrapper_configs(), st.integers(0, 1000))
def test_rebuilt_wrapper_computes_what_the_original_computes(cfg, seed):
    torch.manual_seed(seed)
    original = MultiHeadAttentionWrapper(**cfg)
    rebuilt = rebuild_wrapper(describe_module(original, attrs=ATTRS), "it")
    assert type(rebuilt) is MultiHeadAttentionWrapper and len(rebuilt.heads) == cfg["num_heads"]
    assert [h.dropout.p for h in rebuilt.heads] == [cfg["dropout"]] * cfg["num_heads"]
    x = judge_input((2, cfg["context_length"], cfg["d_in"]), seed)
    for train in (False, True):
        original.train(train), rebuilt.train(train)
        torch.manual_seed(seed)
        want = original(x)
        torch.manual_seed(seed)
        assert torch.equal(rebuilt(x), want)


@FEW
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 6), st.booleans(), st.integers(0, 99))
def test_rebuilt_mha_computes_what_the_original_computes(heads, head_dim, d_in, bias, seed):
    torch.manual_seed(seed)
    original = MultiHeadAttention(d_in, heads * head_dim, 5, 0.3, heads, qkv_bias=bias).eval()
    rebuilt = rebuild_mha(describe_module(original, attrs=ATTRS), "it")
    assert rebuilt.num_heads == heads and rebuilt.dropout.p == 0.3 and not rebuilt.training
    x = judge_input((2, 5, d_in), seed)
    assert torch.equal(rebuilt(x), original(x))


def test_rebuild_keeps_its_own_clean_mask():
    """A module whose mask was tampered with is judged against the book's causal mask."""
    original = MultiHeadAttention(4, 4, 6, 0.0, 2)
    original.mask.zero_()
    rebuilt = rebuild_mha(describe_module(original, attrs=ATTRS), "it")
    assert torch.equal(rebuilt.mask, torch.triu(torch.ones(6, 6), diagonal=1))


def test_wrapper_rebuild_refuses_another_class_in_plain_words():
    with pytest.raises(CheckFailed) as info:
        rebuild_wrapper(
            describe_module(MultiHeadAttention(3, 2, 4, 0.0, 2), attrs=ATTRS), "the module"
        )
    message = str(info.value)
    assert (
        "is a MultiHeadAttention, not the book's MultiHeadAttentionWrapper: its state_dict() has "
        "no heads.0.W_query.weight" in message
    )
    assert "out_proj.weight" in message  # what the module holds instead
    # Not the structure the statement asks for: the root cause, before what follows from it.
    cause = info.value.cause
    assert cause.key == "structure:MultiHeadAttention" and cause.rank == STATEMENT


def test_wrapper_rebuild_names_missing_and_unexpected_keys():
    module = MultiHeadAttentionWrapper(3, 1, 4, 0.0, 2)
    module.heads[1].extra = torch.nn.Linear(1, 1)
    del module.heads[0].W_key
    with pytest.raises(CheckFailed) as info:
        rebuild_wrapper(describe_module(module, attrs=ATTRS), "the module")
    message = str(info.value)
    assert "missing heads.0.W_key.weight" in message
    assert "unexpected heads.1.extra.bias, heads.1.extra.weight" in message


def test_mha_rebuild_needs_a_whole_number_of_heads():
    module = MultiHeadAttention(4, 4, 3, 0.0, 2)
    module.num_heads = 3  # does not divide d_out = 4
    with pytest.raises(CheckFailed, match="num_heads = 3"):
        rebuild_mha(describe_module(module, attrs=ATTRS), "the module")


def test_rebuilt_reference_that_cannot_run_fails_the_check_not_the_judge():
    with pytest.raises(CheckFailed, match="cannot run on an input of shape"):
        reference_forward(MultiHeadAttention(3, 4, 4, 0.0, 2).eval(), torch.rand(1, 2, 5))


# --- strategies -------------------------------------------------------------------------------


def test_gpt2_inputs_reach_long_inputs_but_batch_them_one_at_a_time():
    long = hypothesis_find(ex3_3.gpt2_inputs(max_tokens=512), lambda e: e["n_tokens"] > 256)
    assert 256 < long["n_tokens"] <= 512 and long["batch"] == 1


@FEW
@given(ex3_3.gpt2_inputs(max_tokens=512))
def test_gpt2_inputs_stay_within_their_bounds(ex):
    assert 1 <= ex["n_tokens"] <= 512
    assert ex["batch"] == 1 or ex["n_tokens"] <= 64


@FEW
@given(st.one_of(ex3_2.causal_cases(), ex3_3.gpt2_causal_cases()))
def test_causal_cases_change_at_least_one_token_and_keep_at_least_one(ex):
    assert 1 <= ex["keep"] < ex["n_tokens" if "n_tokens" in ex else "num_tokens"]


@FEW
@given(ex3_2.wrapper_inputs())
def test_wrapper_inputs_fit_the_context(ex):
    assert 1 <= ex["num_tokens"] <= ex["context_length"]


# --- 3.3 builds its module once per worker ------------------------------------------------------


def test_3_3_builds_the_gpt2_module_once_per_worker():
    path = SOLUTION / "exercises" / "ex3_3_gpt2_attention.py"
    worker = InProcessWorker("3.3", path)
    results = [run_check(c, worker, "3.3", 1, 2) for c in ex3_3.CHECKS]
    assert all(r.passed for r in results), [r.message for r in results if not r.passed]
    assert worker.calls.count("build") == 1
    assert worker.calls.count("forward") >= 4
    # A new worker (the next submission) gets its own module.
    other = InProcessWorker("3.3", path)
    assert run_check(ex3_3.CHECKS[0], other, "3.3", 1, 2).passed
    assert other.calls == ["build"]


def test_3_3_the_judge_input_is_the_snippet_input():
    ex = {"batch": 2, "n_tokens": 3, "seed": 5}
    namespace: dict = {"torch": torch}
    exec("x = " + ex3_3.INPUT_SOURCE.format(shape=(2, 3, 768), seed=5), namespace)
    assert torch.equal(namespace["x"], ex3_3.batch_of(ex))


# --- counterexamples and messages -------------------------------------------------------------


def test_3_2_counterexamples_are_the_smallest_inputs(mutant_runs):
    _, results = mutant_runs["b"]
    check = failed_check(results["3.2"], "2-dimensional")
    ex = check.counterexample
    assert (ex["d_in"], ex["context_length"], ex["batch"], ex["num_tokens"]) == (1, 1, 1, 1)
    assert "(1, 1, 4) (4-dimensional context vectors)" in check.message
    assert "expected (1, 1, 2)" in check.message


def test_3_2_causality_counterexample_is_two_tokens(mutant_runs):
    _, results = mutant_runs["a"]
    check = failed_check(results["3.2"], "causal")
    ex = check.counterexample
    assert (ex["batch"], ex["num_tokens"], ex["keep"]) == (1, 2, 1)
    assert "changing only token 1 of the input" in check.message
    assert "changed the context vector of token 0" in check.message
    # The same subclass also computes something else than the book's wrapper.
    assert not failed_check(results["3.2"], "computes what").passed


def test_3_3_counterexamples_name_the_mistake(mutant_runs):
    _, results = mutant_runs["a"]
    heads = failed_check(results["3.3"], "12 heads")
    assert "num_heads = 6 (heads of 128 dimensions)" in heads.message
    assert heads.counterexample is None  # nothing was drawn: the module takes no arguments
    _, results = mutant_runs["b"]
    sizes = failed_check(results["3.3"], "context_length = 1024")
    assert "causal mask has shape (768, 768)" in sizes.message
    longest = failed_check(results["3.3"], "works on any input")
    assert longest.counterexample == {"batch": 1, "n_tokens": 1024, "seed": 0}
    assert "(1, 1024, 768)" in longest.message


def test_3_1_counterexamples_are_small(mutant_runs):
    _, results = mutant_runs["b"]
    check = failed_check(results["3.1"], "computes what sa_v2 computes")
    ex = check.counterexample
    assert ex["d_in"] == 1 and ex["d_out"] == 1 and ex["n_tokens"] <= 2


# --- reproduce snippets -----------------------------------------------------------------------

# (exercise, part of the check's name, what the snippet prints with the mutant, and with the
# solution). None: the snippet raises with the mutant, and ``fails`` is part of the error.
SNIPPETS = {
    "a": [
        ("3.1", "sa_v2 is left unchanged", "sa_v2 unchanged: False", "sa_v2 unchanged: True"),
        ("3.2", "computes what", "eval mode, same: False", "eval mode, same: True"),
        ("3.2", "causal", "unchanged (causal): False", "unchanged (causal): True"),
        ("3.3", "12 heads", "num_heads: 6 (expected 12)", "num_heads: 12 (expected 12)"),
    ],
    "b": [
        ("3.1", "computes what sa_v2", "same output: False", "same output: True"),
        (
            "3.2",
            "2-dimensional",
            "output shape: (1, 1, 4) expected: (1, 1, 2)",
            "output shape: (1, 1, 2) expected: (1, 1, 2)",
        ),
        ("3.3", "context_length = 1024", "mask (768, 768)", "mask (1024, 1024)"),
        ("3.3", "works on any input", "RAISED", "output shape: (1, 1024, 768)"),
    ],
}


@pytest.mark.parametrize("label", sorted(SNIPPETS))
def test_snippets_show_the_failure_with_the_mutant_and_success_with_the_solution(
    label, mutant_runs, solution_clone
):
    folder, results = mutant_runs[label]
    sources = {}
    for exercise_id, name_part, _, _ in SNIPPETS[label]:
        check = failed_check(results[exercise_id], name_part)
        assert check.reproduce and f"load_exercise('.', {exercise_id!r})" in check.reproduce
        sources[f"{exercise_id} {name_part}"] = check.reproduce
    with_mutant = run_snippets(sources, folder)
    with_solution = run_snippets(sources, solution_clone)
    for exercise_id, name_part, bad, good in SNIPPETS[label]:
        key = f"{exercise_id} {name_part}"
        assert bad in with_mutant[key], with_mutant[key]
        assert good in with_solution[key], with_solution[key]
        assert "RAISED" not in with_solution[key], with_solution[key]


def test_wrapper_rebuild_refuses_absurd_head_counts_without_building_them():
    state = {f"heads.{i}.W_query.weight": torch.zeros(1, 1) for i in range(MAX_HEADS + 1)}
    description = {"class": "Huge", "state": state, "dropouts": {}}
    with pytest.raises(CheckFailed, match=f"has {MAX_HEADS + 1} heads"):
        rebuild_wrapper(description, "the module")


# --- modules too big to be the answer ----------------------------------------------------------


def test_too_big_bound_lies_between_the_largest_right_answer_and_the_wire_cap():
    largest = MultiHeadAttention(768, 768, 1024, 0.0, 12, qkv_bias=True)
    state = sum(v.numel() * v.element_size() for v in largest.state_dict().values())
    assert 4 * state < attention_sizes.STATE_BOUND <= wire.MAX_MESSAGE_BYTES // 2
    for bias in (False, True):
        mha = MultiHeadAttention(5, 6, 3, 0.0, 2, qkv_bias=bias)
        wrapper = MultiHeadAttentionWrapper(5, 1, 3, 0.0, 2, qkv_bias=bias)
        assert attention_sizes.mha_parameters(5, 6, bias) == sum(
            p.numel() for p in mha.parameters()
        )
        assert attention_sizes.wrapper_parameters(5, 1, 2, bias) == sum(
            p.numel() for p in wrapper.parameters()
        )
    assert ex3_3.ASKED == (
        "a MultiHeadAttention(768, 768, 1024, 0.0, 12) has 2,360,064 (2,362,368 with qkv_bias)"
    )


def test_3_3_a_whole_gpt_model_fails_with_what_it_is_not_an_error(graded):
    _, result = graded("3.3", "wrong_whole_gpt_model")
    assert result.status == "failed" and result.score == 0
    for check in result.checks:
        assert check.message.startswith(
            "your gpt2_small_attention() returned a GPTModel with 163,009,536 parameters; a "
            "MultiHeadAttention(768, 768, 1024, 0.0, 12) has 2,360,064 (2,362,368 with "
            "qkv_bias). Its largest parameters: tok_emb.weight (50257, 768), out_head.weight "
            "(50257, 768)"
        ), check.message
        assert "trf_blocks (Sequential)" in check.message


BIG_WRAPPER = """
from torch import nn

def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return nn.Sequential(nn.Linear(d_in, 300), nn.Linear(300, 2))
"""


def test_3_2_a_module_over_the_bound_is_described_built_once_and_fails_every_check(
    tmp_path, monkeypatch
):
    """The bound is lowered here so that a small module is over it: the worker keeps nothing
    and sends its structure, every check fails saying what came back, and the module is
    built once per worker whatever the examples and checks."""
    answer = tmp_path / "big.py"
    answer.write_text(BIG_WRAPPER)
    monkeypatch.setattr(attention_sizes, "STATE_BOUND", 1000)
    worker = InProcessWorker("3.2", answer)
    results = [run_check(c, worker, "3.2", 1, 3) for c in ex3_2.CHECKS]
    assert not any(r.passed for r in results)
    assert worker.calls == ["build"] and worker.state == {}
    first = results[0].message
    assert re.search(
        r"returned a Sequential with [\d,]+ parameters; a MultiHeadAttentionWrapper\(", first
    )
    assert "num_heads=2) has " in first and "Its largest parameters: " in first
    assert "0.weight (300, " in first and "1.weight (2, 300)" in first
    assert "its parts: 0 (Linear), 1 (Linear)" in first
    # Under the bound, the same module is described with its state, as before.
    monkeypatch.setattr(attention_sizes, "STATE_BOUND", 10**6)
    other = InProcessWorker("3.2", answer)
    reply = other.call("build", d_in=2, context_length=3, dropout=0.0, max_state_bytes=10**6)
    assert reply["handle"] == 0 and "state" in reply["module"]
