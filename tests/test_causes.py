"""Causes first: a failure carries the cause its evidence points to, the exercise's result groups
its failing checks by cause (root cause first), each cause is explained once with its hint, and
the checks it breaks carry no hint of their own. And the evidence the first pack's checks read:
which of sa_v1's weights holds what (3.1), which part of a module a wrong count is (4.1, 4.2)."""

import json

import jsonschema
import pytest
from hypothesis import strategies as st

from grader.judge import causes
from grader.judge.count_parts import explain, parts, scaled
from grader.judge.launch.handle import StudentError
from grader.judge.properties import Check, CheckFailed, run_check
from grader.judge.scoring import finish_exercise
from grader.result import report_html, report_text
from grader.result.common import check_text, hint_of
from grader.result.schema import SCHEMA_PATH, CheckResult, GradeResult
from grader.shared.registry import BY_ID
from llm_pack.checks import ex3_1
from llm_pack.checks.gpt_reference import (
    BLOCKS,
    Recount,
    feedforward_count,
    model_count,
    wrong_count,
)
from reference import GPT_CONFIG_124M, GPTModel, TransformerBlock

GELU = causes.Cause("part:ff.layers.1:GELU", "the first difference is inside ff (GELU)", "fix it")


def failing_check(name: str, raise_it) -> Check:
    return Check(
        name=name,
        points=2,
        strategy=st.just(0),
        run=lambda worker, ex: raise_it(),
        hint="the check's own hint",
        max_examples=1,
    )


def raises(exc):
    def go():
        raise exc

    return go


def test_a_failure_with_a_cause_carries_it_and_no_hint_of_its_own():
    check = failing_check("logits", raises(CheckFailed("logits differ", cause=GELU)))
    result = run_check(check, None, "4.3", 1, 1)
    assert result.cause == {"key": GELU.key, "text": GELU.text, "hint": "fix it"}
    assert "Hint:" not in result.message and result.message == "logits differ"
    assert hint_of(result) == "fix it"


def test_a_cause_without_a_hint_takes_the_one_chosen_for_the_failure():
    bare = causes.Cause("k", "the cause")
    result = run_check(failing_check("c", raises(CheckFailed("x", cause=bare))), None, "4.3", 1, 1)
    assert result.cause["hint"] == "the check's own hint" and "Hint:" not in result.message


def test_an_exception_is_one_cause_by_its_type_and_line():
    info = {
        "type": "KeyError",
        "message": "'drop_rate'",
        "frames": [{"file": "ex.py", "line": 7, "function": "f", "code": "cfg['drop_rate']"}],
    }
    results = [
        run_check(failing_check(name, raises(StudentError(info))), None, "4.3", 1, 1)
        for name in ("a", "b", "c")
    ]
    assert {r.cause["key"] for r in results} == {"raised:KeyError:ex.py:7"}
    (entry,) = causes.diagnosis(results)
    assert entry["checks"] == ["a", "b", "c"]
    assert entry["cause"].startswith("your code raised KeyError: 'drop_rate'")


def test_the_diagnosis_puts_the_cause_of_most_checks_first_and_skips_passed_checks():
    one = {"key": "one", "text": "first met", "hint": ""}
    two = {"key": "two", "text": "breaks two", "hint": "h"}
    checks = [
        CheckResult("a", 0, 1, False, "m", cause=one),
        CheckResult("b", 0, 1, False, "m", cause=two),
        CheckResult("c", 0, 1, False, "m", cause=two),
        CheckResult("d", 0, 1, False, "no cause"),
        CheckResult("e", 1, 1, True, "passed", cause=one),
    ]
    said = causes.diagnosis(checks)
    assert [d["key"] for d in said] == ["two", "one"]
    assert said[0]["checks"] == ["b", "c"] and said[1]["checks"] == ["a"]


def grouped_result() -> GradeResult:
    cause = GELU.as_dict()
    checks = [
        CheckResult("eval logits", 0, 2, False, f"{GELU.text}\nlogits differ", 1, "x", cause),
        CheckResult("train logits", 0, 2, False, f"{GELU.text}\ntrain differs", 1, "x", cause),
        CheckResult("config", 0, 1, False, "config wrong\nHint: copy it", {"c": 1}, "y"),
    ]
    exercise = finish_exercise(BY_ID["4.3"], "failed", checks, 1.0)
    return GradeResult("sub", 0, 10, "0.1.0", "2.13.0", 1, 1.0, [exercise])


def test_the_text_report_says_a_cause_once_above_the_checks_it_breaks():
    text = report_text.render(grouped_result())
    assert text.count(GELU.text) == 1 and text.count("Hint: fix it") == 1
    assert text.index("Cause: " + GELU.text) < text.index("eval logits")
    assert "It breaks 2 checks" in text and "train logits  (the same cause)" in text
    verbose = report_text.render(grouped_result(), verbose=True)
    assert "Hint: copy it" in verbose  # a failure without a cause keeps its own hint


STRUCTURE = causes.Cause(
    "structure:Mine", "it is a Mine, not the book's class", "use the book's class", causes.STATEMENT
)
FOLLOWER = causes.Cause("arguments", "it ignores dropout", "pass dropout on", causes.ROOT)


def ranked_result(*extra: causes.Cause) -> GradeResult:
    checks = [
        CheckResult(f"check {i}", 0, 1, False, f"{c.text}\nwhat it found {i}", 1, "x", c.as_dict())
        for i, c in enumerate((STRUCTURE, STRUCTURE, FOLLOWER, *extra))
    ]
    exercise = finish_exercise(BY_ID["3.2"], "failed", checks, 1.0)
    return GradeResult("sub", 0, 10, "0.1.0", "2.13.0", 1, 1.0, [exercise])


def test_a_cause_that_follows_from_the_first_is_not_said_apart_its_checks_stay():
    """The first cause is the root cause (not the structure asked for); a cause of a lower
    rank follows from it: both reports list its check under the first cause, with what it
    found, and never say its cause and hint apart. Causes of an equal rank are both said."""
    result = ranked_result()
    first, second = result.exercises[0].diagnosis
    assert first["key"] == "structure:Mine" and first["hint"] == "use the book's class"
    assert second["key"] == "arguments" and second["hint"] == ""  # the root's hint says it
    text = report_text.render(result)
    assert "Cause: it is a Mine" in text and "Cause: it ignores dropout" not in text
    assert "pass dropout on" not in text and "It breaks 3 checks" in text
    assert "check 2  (follows from this cause)" in text and "what it found 2" in text
    page = report_html.render_html(result)
    assert "pass dropout on" not in page and "It breaks 3 checks" in page
    assert "follows from this cause" in page
    # Without a root cause above it, a cause is said on its own.
    alone = ranked_result(causes.Cause("structure:Other", "another class too", "", 3))
    assert "Cause: another class too" in report_text.render(alone)


def test_the_html_report_says_a_cause_once_and_the_json_fits_the_schema():
    result = grouped_result()
    page = report_html.render_html(result)
    assert page.count(GELU.text) == 1 and "It breaks 2 checks" in page
    assert "— the same cause" in page
    # The cause, then the checks it breaks, then the failures without a cause.
    assert page.index(GELU.text) < page.index("eval logits") < page.index("config wrong")
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.validate(json.loads(result.to_json()), schema)


def test_a_check_alone_still_says_its_cause_and_hint():
    check = grouped_result().exercises[0].checks[1]
    text = check_text(check)
    assert text.startswith(f"Cause: {GELU.text}\ntrain differs") and "Hint: fix it" in text


# --- the evidence of 3.1: what each of sa_v1's weights holds after the transfer --------------

EX = {"d_in": 3, "d_out": 2, "n_tokens": 2, "seed": 5}


def transferred(**override) -> dict:
    sa_v2, _, _ = ex3_1.build(EX)
    weights = {n: getattr(sa_v2, n).weight.T.detach().clone() for n in ex3_1.NAMES}
    return {**weights, **override}


def test_a_weight_assigned_twice_is_named_with_the_one_it_holds():
    sa_v2, _, _ = ex3_1.build(EX)
    cause = ex3_1.weights_cause(EX, transferred(W_key=sa_v2.W_query.weight.T.detach()))
    assert "sa_v1.W_key holds sa_v2.W_query's weight (transposed), not sa_v2.W_key's" in cause.text
    assert "(W_query and W_value hold what they should)" in cause.text
    assert "nn.Linear" not in cause.hint  # no layout hint: nothing is left untransposed


def test_an_untransposed_or_reshaped_weight_is_named_with_the_layout_hint():
    sa_v2, _, _ = ex3_1.build(EX)
    w = sa_v2.W_value.weight.detach()
    cause = ex3_1.weights_cause(EX, transferred(W_value=w.reshape(3, 2)))
    assert "sa_v1.W_value holds sa_v2.W_value.weight reshaped, not transposed" in cause.text
    assert "nn.Linear(d_in, d_out) stores its weight with shape (d_out, d_in)" in cause.hint


def test_a_weight_never_transferred_still_holds_its_own_values():
    _, sa_v1, _ = ex3_1.build(EX)
    cause = ex3_1.weights_cause(EX, transferred(W_query=sa_v1.W_query.detach()))
    assert "sa_v1.W_query holds its own initial values: nothing was transferred" in cause.text
    assert ex3_1.weights_cause(EX, transferred()) is None  # all right: no cause


def test_a_transfer_made_the_other_way_says_where_the_values_went():
    sa_v2, sa_v1, _ = ex3_1.build(EX)
    own = {n: getattr(sa_v1, n).detach().clone() for n in ex3_1.NAMES}
    v2_after = {f"{n}.weight": own[n].T.clone() for n in ex3_1.NAMES}
    cause = ex3_1.weights_cause(EX, own, [], v2_after)
    assert cause.key == "weights:other-way" and "from sa_v1 into sa_v2" in cause.text
    assert "sa_v2.W_query.weight" in cause.text and "never the other way" in cause.hint
    # sa_v2 left as it was: nothing went the other way, nothing was transferred
    unchanged = {f"{n}.weight": getattr(sa_v2, n).weight.detach() for n in ex3_1.NAMES}
    assert "its own initial values" in ex3_1.weights_cause(EX, own, [], unchanged).text
    assert ex3_1.copied_back(EX, transferred(), v2_after) is None  # sa_v1 got sa_v2's values


# --- the evidence of 4.1 and 4.2: a wrong count that is one part of the module ----------------


@pytest.fixture(scope="module")
def attention_parts():
    return parts(lambda: TransformerBlock(dict(GPT_CONFIG_124M)).att, "att.")


def test_a_count_off_by_a_buffer_or_a_part_names_it(attention_parts):
    mask = GPT_CONFIG_124M["context_length"] ** 2
    assert explain(mask, attention_parts) == (
        f"the extra {mask:,} are att.mask, a buffer, not a parameter",
        "count:mask",
    )
    emb = GPT_CONFIG_124M["emb_dim"]
    said, kind = explain(-emb, attention_parts)
    assert "att.out_proj.bias" in said and "left out" in said and kind == "count:left-out"
    said, kind = explain(emb * emb, attention_parts)
    assert said.endswith("counted twice") and kind == "count:twice"
    assert explain(7, attention_parts) is None  # nothing holds 7 values: no cause named


def test_a_model_count_names_a_whole_module_and_sums_the_blocks():
    found = parts(lambda: GPTModel(dict(GPT_CONFIG_124M)), repeated=BLOCKS)
    emb = GPT_CONFIG_124M["emb_dim"]
    assert (
        explain(-2 * emb, found)[0]
        == "that is what final_norm holds (1,536 values): it is left out"
    )
    blocks_ff = GPT_CONFIG_124M["n_layers"] * (8 * emb * emb + 5 * emb)
    assert "trf_blocks.*.ff" in explain(-blocks_ff, found)[0]


def _ff_parts(cfg):
    return parts(lambda: TransformerBlock(cfg).ff, "ff.")


def test_a_count_that_is_a_part_times_a_config_value_names_the_config_value():
    cfg = {**GPT_CONFIG_124M, "emb_dim": 8, "n_heads": 2, "n_layers": 3}
    ff = feedforward_count(cfg)
    said = scaled(2 * ff, _ff_parts(cfg), cfg)  # counted once per block: 3 times
    assert ("n_layers", "ff", "times", f"ff ({ff:,} values) counted 3 times") in said
    assert said[0][:3] == ("n_layers", "ff", "times")  # the whole module before its parts
    share = scaled(-ff // 2, _ff_parts(cfg), cfg)  # one n_heads-th of it
    assert ("n_heads", "ff", "share") in [s[:3] for s in share]
    assert scaled(7, _ff_parts(cfg), cfg) == []


def test_a_count_per_block_is_confirmed_by_asking_again_with_the_value_changed():
    """Two config values equal the factor (n_layers = n_heads = 2): asking again with each
    changed finds the one the count follows; a count that does not follow it names nothing."""
    cfg = {**GPT_CONFIG_124M, "emb_dim": 12, "n_heads": 2, "n_layers": 2}
    per_block = Recount(
        cfg, lambda c: c["n_layers"] * feedforward_count(c), feedforward_count, _ff_parts
    )
    got = per_block.ask(cfg)
    failed = wrong_count("wrong", got, feedforward_count(cfg), [], None, None, per_block)
    assert "counted 2 times, 2 being n_layers" in str(failed) and failed.kind == "count:per-config"
    assert "with n_layers = 3 it returns" in str(failed)
    assert "not once per n_layers" in failed.cause.hint
    twice = Recount(cfg, lambda c: 2 * feedforward_count(c), feedforward_count, _ff_parts)
    failed = wrong_count(
        "wrong", got, feedforward_count(cfg), [], lambda: _ff_parts(cfg), None, twice
    )
    assert "n_layers" not in str(failed) and "n_heads" not in str(failed)
    assert failed.kind == "count:twice"


def test_a_model_count_with_one_block_names_n_layers():
    cfg = {
        **GPT_CONFIG_124M,
        "vocab_size": 10,
        "context_length": 4,
        "emb_dim": 4,
        "n_heads": 2,
        "n_layers": 3,
    }
    block = model_count(cfg) - model_count({**cfg, "n_layers": 0})
    one_block = Recount(
        cfg,
        lambda c: model_count(c) - block // 3 * (c["n_layers"] - 1),
        model_count,
        lambda c: parts(lambda: GPTModel(c)),
    )
    got = one_block.ask(cfg)
    failed = wrong_count("wrong", got, model_count(cfg), [], None, None, one_block)
    assert "1/3 of trf_blocks (" in str(failed) and "being n_layers" in str(failed)


def test_the_notebook_view_says_a_cause_once_and_lists_every_check_it_breaks():
    from grader.result.nbview import CheckReport

    report = CheckReport(json.loads(grouped_result().to_json()), [])
    html = report._repr_html_()
    assert html.count(GELU.text) == 1 and html.count("fix it") == 1
    assert "eval logits" in html and "train logits" in html and "config wrong" in html
    assert html.index(GELU.text) < html.index("eval logits") < html.index("config wrong")
    assert "Cause: " + GELU.text in repr(report)  # the plain-text view, as in a terminal


# --- hints with evidence ----------------------------------------------------------------------


def _cause_patterns():
    import importlib.util
    import sys

    from support import ROOT

    name = "bench_diagnosis"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "diagnosis.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name].causes_named


def test_a_hint_for_a_failure_of_no_known_cause_names_none():
    """A check's own hint for a wrong count, output or exception that no probe explained says
    where to look, never a cause (no "both linear layers have a bias", no "read
    cfg['qkv_bias']"): a hint that names a cause is kept for the kind its evidence sets."""
    from grader.judge.hints import OWN_KINDS
    from llm_pack.checks import ex3_2, ex3_3, ex4_1, ex4_2
    from llm_pack.checks.ex4_3_block import BLOCK_CHECK

    causes_named = _cause_patterns()
    unexplained = [*ex4_1.CHECKS[:3], ex4_2.CHECKS[2], ex3_3.CHECKS[2], BLOCK_CHECK]
    for check in unexplained:  # each hint is for a kind of failure no probe explained
        assert set(check.hint_kinds) & set(OWN_KINDS), check.name
    assert {c.name: causes_named(c.hint) for c in unexplained if causes_named(c.hint)} == {}
    # The hints that name a cause are for the kinds their evidence sets, and only those.
    width = next(c for c in ex3_2.CHECKS if "2-dimensional" in c.name)
    assert width.hint_kinds == ("wrong:head-width",) and causes_named(width.hint)
    assert ex3_3.CHECKS[-1].hint_kinds == ("wrong:no-mask",)
    assert ex4_2.CHECKS[3].hint_kinds == ("count:inexact",)


COUNTED_PER_BLOCK = """\
from reference import GPTModel


def _over_blocks(cfg, part):  # a model's blocks, each one's part: n_layers of them
    model = GPTModel(cfg)
    return sum(p.numel() for block in model.trf_blocks for p in getattr(block, part).parameters())


def feedforward_params(cfg):
    return _over_blocks(cfg, "ff")


def attention_params(cfg):
    return sum(p.numel() for p in GPTModel(cfg).trf_blocks[0].att.parameters())
"""


def test_a_count_summed_over_the_blocks_is_told_n_layers_and_no_other_cause(tmp_path):
    """4.1 answered over every block (a public answer, find_string id 11722593435): ff counted
    n_layers times, confirmed by asking again; no hint names biases or qkv_bias."""
    from support import grade_folder, make_submission

    answer = tmp_path / "answer.py"
    answer.write_text(COUNTED_PER_BLOCK)
    result = grade_folder(make_submission(tmp_path / "sub", {"4.1": answer}), ["4.1"])
    (exercise,) = result.exercises
    first = exercise.diagnosis[0]
    assert "counted" in first["cause"] and "being n_layers" in first["cause"]
    assert "not once per n_layers" in first["hint"]
    said = " ".join(c.message for c in exercise.checks) + str(exercise.diagnosis)
    assert "bias" not in said and "Count from cfg" not in said
    assert all(c.passed for c in exercise.checks if "attention_params" in c.name)
