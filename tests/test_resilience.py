"""The worker's dispatch is out of student reach, and one exercise's trouble stays in it.

- ``grader.worker.guard.Guard`` notices every way student code can rewrite the grader in the worker
  (a probe table, a function's code, a module binding, a class's method, a closure cell, a
  module in ``sys.modules``, the reply channel, a trace hook) and never fires on its own.
- The two tampering attacks of the hostile corpus (a swapped probe table, a rewritten
  ``__code__``) get the ``tampered`` verdict with no points, though without the attack their
  model is wrong; the solutions are never flagged; the batch dashboard flags tampering.
- A bug of the grader on one exercise is that exercise's ``error`` and ``grade`` exits 2 with
  the other exercises' results.
- A tensor subclass is refused in the student's words.
"""

from __future__ import annotations

import json
import os
import re
import sys
import types

import pytest
from support import ROOT, SOLUTION, grade_folder, make_submission

import grader.commands.cli
import grader.judge.engine
from grader.batch.ledger import Ledger
from grader.classview.dashboard import render_dashboard
from grader.judge.launch.reader import ReplyReader
from grader.protocol.limits import Limits
from grader.result.schema import GRADER_FAILED, TAMPERED, grader_failed, is_tampered
from grader.worker import guard as guard_module
from grader.worker import probes, tables
from grader.worker.serve import dispatcher
from llm_pack import probes as pack_probes

HOSTILE = ROOT / "tests" / "hostile"
LIMITS = Limits(call_timeout_s=10.0, import_timeout_s=20.0, exercise_budget_s=60.0)


# --- the guard, in this process ---------------------------------------------------------------


@pytest.fixture
def guarded():
    dispatch = dispatcher(tables.for_exercise("4.3"))
    g = guard_module.Guard(  # as serve makes it
        dispatch,
        packages=("grader", "llm_pack"),
        hidden=("llm_pack.oracle",),  # never imported
    )
    assert g.problem() is None
    return g, dispatch


def _other(*args, **kwargs):
    return None


def _swap_table():
    old = pack_probes.EX4_3["forward"]
    pack_probes.EX4_3["forward"] = _other
    return lambda: pack_probes.EX4_3.__setitem__("forward", old)


def _swap_loaded_table():
    old = tables._TABLES["4.3"]["forward"]
    tables._TABLES["4.3"]["forward"] = _other
    return lambda: tables._TABLES["4.3"].__setitem__("forward", old)


def _swap_code():
    old = probes._forward.__code__
    probes._forward.__code__ = (lambda module, state, handle, x, train=False, seed=0: 0).__code__
    return lambda: setattr(probes._forward, "__code__", old)


def _setattr(owner, name, value):
    old = getattr(owner, name) if not isinstance(owner, type) else vars(owner)[name]
    setattr(owner, name, value)
    return lambda: setattr(owner, name, old)


def _swap_module():
    old = sys.modules["grader.protocol.wire"]
    sys.modules["grader.protocol.wire"] = types.ModuleType("grader.protocol.wire")
    return lambda: sys.modules.__setitem__("grader.protocol.wire", old)


def _judge_only():
    """A judge-only module imported past the worker's refusal (grader.worker.judgeonly)."""
    before = sys.modules.get("llm_pack.oracle")
    sys.modules["llm_pack.oracle"] = types.ModuleType("llm_pack.oracle")

    def undo():
        if before is None:
            del sys.modules["llm_pack.oracle"]
        else:
            sys.modules["llm_pack.oracle"] = before

    return undo


ATTACKS = {
    "probe table": (_swap_table, "llm_pack.probes.EX4_3 was changed"),
    "loaded probe tables": (_swap_loaded_table, "grader.worker.tables._TABLES was changed"),
    "pack probe binding": (
        lambda: _setattr(pack_probes, "_transfer", _other),
        "llm_pack.probes._transfer",
    ),
    # The pack imports it from the face as probes.forward: either name says which function.
    "__code__": (_swap_code, "forward was changed"),
    "module binding": (lambda: _setattr(probes, "plain", _other), "grader.worker.probes.plain"),
    "defaults": (lambda: _setattr(probes._forward, "__defaults__", (True, 1)), "forward"),
    "class method": (
        lambda: _setattr(ReplyReader, "get", _other),
        "ReplyReader.get was replaced",
    ),
    "sys.modules": (_swap_module, "the module grader.protocol.wire was replaced"),
    "reply channel": (lambda: _setattr(os, "write", _other), "os.write was replaced"),
    "judge-only module": (_judge_only, "it imported llm_pack.oracle, the grader's own code"),
}


@pytest.mark.parametrize("attack", ATTACKS, ids=list(ATTACKS))
def test_the_guard_sees_each_attack(guarded, attack):
    g, _ = guarded
    do, expected = ATTACKS[attack]
    undo = do()
    try:
        problem = g.problem()
    finally:
        undo()
    assert problem is not None and expected in problem
    assert g.problem() is None  # put back: nothing to report


def test_the_guard_sees_its_channel_redirected_and_lets_threads_run():
    import threading

    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    check = guard_module.Guard(dispatcher(tables.for_exercise("4.3"))).checker(req_r, rep_w)
    assert check() is None
    saved = os.dup(rep_w)
    other_r, other_w = os.pipe()
    os.dup2(other_w, rep_w)  # a pipe of the student's in place of the judge's
    try:
        assert check() == "the worker's channel to the grader was redirected"
    finally:
        os.dup2(saved, rep_w)
    assert check() is None
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:  # a thread of the student's (a progress bar's, a pool's) is no change to the grader
        assert check() is None
    finally:
        stop.set()
        thread.join()
    for fd in (req_r, req_w, rep_r, rep_w, saved, other_r, other_w):
        os.close(fd)


def test_the_check_is_not_silenced_by_replacing_what_it_calls(guarded):
    g, _ = guarded
    check = g.checker()
    undo_method = _setattr(guard_module.Guard, "problem", lambda self: None)
    undo_helper = _setattr(guard_module, "_problem", lambda *args: None)
    try:
        assert check().endswith(("Guard.problem was replaced", "guard._problem was replaced"))
    finally:
        undo_helper()
        undo_method()
    assert check() is None


def test_the_guard_sees_a_closure_cell_rewritten(guarded):
    g, dispatch = guarded
    cell = dispatch.__closure__[0]
    old = cell.cell_contents
    cell.cell_contents = (("forward", _other),)
    try:
        assert "the worker's dispatch" in g.problem()
    finally:
        cell.cell_contents = old
    assert g.problem() is None


def test_the_dispatch_ignores_the_module_table():
    dispatch = dispatcher(tables.for_exercise("4.2"))
    undo = _swap_table()
    old = pack_probes.EX4_2["configs"], tables._TABLES["4.2"]["configs"]
    pack_probes.EX4_2["configs"] = tables._TABLES["4.2"]["configs"] = _other
    try:
        module = types.SimpleNamespace(GPT2_CONFIGS={"small": {"emb_dim": 768}})
        assert dispatch(module, {}, "configs", {}) == {"small": {"emb_dim": 768}}
    finally:
        pack_probes.EX4_2["configs"], tables._TABLES["4.2"]["configs"] = old
        undo()


# --- the attacks, through the sandbox ------------------------------------------------------


def without_attack(text: str) -> str:
    """The attack file's model alone: everything from its first attack line on goes."""
    cut = min(text.index(m) for m in ("\ndef correct_outputs", "\nfor _name") if m in text)
    return text[:cut] + "\n"


TAMPERING = [
    "tamper_probe_table",
    "tamper_probe_code",
    "tamper_silence_guard",  # the guard's check replaced, then a probe's global rebound
    "tamper_dup2_thread",  # threads between worker and judge, by dup2
    "tamper_rearm_finalizer",  # a self-undoing code swap re-armed by a finalizer
]


@pytest.mark.parametrize("case", TAMPERING)
def test_tampering_gets_no_points(case, tmp_path):
    attack = HOSTILE / f"{case}.py"
    submission = make_submission(tmp_path / "sub", {"4.3": attack})
    result = grade_folder(submission, ["4.3", "4.1"], max_examples=2, limits=LIMITS)
    other, ex = result.exercises  # in course order: 4.1, 4.3
    assert is_tampered(ex) and ex.status == "error" and ex.score == 0
    assert all(c.points == 0 and c.message.startswith(TAMPERED) for c in ex.checks)
    assert "your code changed the grader itself" in ex.checks[0].message
    assert other.status == "passed" and not is_tampered(other)

    honest = tmp_path / "honest.py"
    honest.write_text(without_attack(attack.read_text()), encoding="utf-8")
    plain = grade_folder(
        make_submission(tmp_path / "h", {"4.3": honest}), ["4.3"], max_examples=2, limits=LIMITS
    )
    assert plain.exercises[0].status == "failed"  # the bug is real: the attack hid it
    assert not is_tampered(plain.exercises[0])


def test_the_solutions_are_never_flagged():
    result = grade_folder(SOLUTION, max_examples=2, limits=LIMITS)
    assert [e.status for e in result.exercises] == ["passed"] * len(result.exercises)
    assert not any(is_tampered(e) or grader_failed(e) for e in result.exercises)


def test_a_tensor_subclass_is_refused_in_the_students_words(tmp_path):
    case = HOSTILE / "tensor_subclass_output.py"
    result = grade_folder(
        make_submission(tmp_path / "sub", {"4.3": case}), ["4.3"], max_examples=2, limits=LIMITS
    )
    messages = "\n".join(c.message for c in result.exercises[0].checks)
    assert re.search(
        r"your forward returned a Liar, a subclass of torch\.Tensor \(shape \(\d+, \d+, \d+\)\): "
        r"return a plain tensor \(torch\.Tensor\)",
        messages,
    )
    for words in ("Unpickling", "NotEncodable", "NotPlainData", "your code raised", "\x1b"):
        assert words not in messages


def test_the_dashboard_flags_tampering(tmp_path):
    ledger = Ledger(tmp_path / "out")
    for name, message in (("eve", TAMPERED + "your code changed the grader"), ("bo", "wrong")):
        result = {
            "schema": 1,
            "submission": name,
            "score": 0.0,
            "max_score": 10.0,
            "grader_version": "0",
            "torch_version": "0",
            "seed": 1,
            "duration_s": 0.0,
            "exercises": [
                {
                    "id": "4.3",
                    "title": "t",
                    "score": 0.0,
                    "max_score": 10.0,
                    "status": "error",
                    "checks": [
                        {
                            "name": "c",
                            "points": 0.0,
                            "max_points": 10.0,
                            "passed": False,
                            "message": message,
                            "counterexample": None,
                            "reproduce": None,
                        }
                    ],
                }
            ],
        }
        row = {
            "name": name,
            "source": name,
            "kind": "folder",
            "content_hash": "h",
            "settings_hash": "s",
            "status": "failed",
            "reason": "",
            "graded": 1,
        }
        ledger.record(row, result, render_report=False)
    page = render_dashboard(ledger.db)
    assert page.count('class="flag"') == 1 and "tampered 4.3" in page
    assert re.search(r'id="n-tampered">1<', page)
    ledger.close()


# --- a bug of the grader on one exercise -----------------------------------------------------


def test_a_grader_bug_costs_one_exercise_and_exit_status_2(monkeypatch, capsys):
    real = grader.judge.engine.run_check

    def run_check(check, worker, exercise_id, *args, **kwargs):
        if exercise_id == "3.1":
            raise KeyError("a bug \x1b[31m of ours")
        return real(check, worker, exercise_id, *args, **kwargs)

    monkeypatch.setattr(grader.judge.engine, "run_check", run_check)
    monkeypatch.setattr(grader.commands.cli, "limits_from", lambda args: LIMITS)
    monkeypatch.delenv("GRADE_TRACE_LOG", raising=False)
    code = grader.commands.cli.main(
        [str(SOLUTION), "-e", "3.1", "-e", "4.1", "--format", "json", "--max-examples", "2"]
    )
    out, err = capsys.readouterr()
    assert code == 2
    ex31, ex41 = json.loads(out)["exercises"]
    assert ex31["status"] == "error" and ex31["score"] == 0
    assert ex31["checks"][0]["message"] == GRADER_FAILED + "KeyError: 'a bug \\x1b[31m of ours'"
    assert ex41["status"] == "passed"
    assert "grade: internal error while grading 3.1: KeyError" in err
    assert "\x1b" not in err
