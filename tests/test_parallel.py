"""Exercises graded in forked judge processes: the same result as one process, no hang after
the parent used torch's thread pool, and a judge process that dies costs only its exercises."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support import CORPUS, ROOT, SOLUTION, grade_folder, make_submission

from grader.judge import parallel
from grader.result.schema import CheckResult, ExerciseResult


def without_duration(result) -> dict:
    doc = json.loads(result.to_json())
    doc.pop("duration_s")
    return doc


def test_forked_judges_give_byte_for_byte_the_result_of_one_process(tmp_path):
    mixed = make_submission(
        tmp_path / "mixed",
        {
            "3.2": CORPUS / "ex3_2" / "wrong_one_head.py",
            "4.3": CORPUS / "ex4_3" / "wrong_no_embedding_dropout.py",
        },
    )
    for folder in (SOLUTION, mixed):  # few examples: the two ways must agree, whatever is drawn
        one = grade_folder(folder, processes=1, max_examples=3)
        spread = grade_folder(folder, processes=3, max_examples=3)
        assert without_duration(one) == without_duration(spread)


def test_forking_after_the_parent_used_torch_threads_does_not_hang():
    code = (
        "import torch\n"
        "torch.set_num_threads(2)\n"
        "a = torch.randn(1500, 1500); (a @ a).sum()\n"
        "torch.triu(torch.ones(1024, 1024), diagonal=1)\n"
        "from grader.judge.engine import grade\n"
        "from grader.intake.load import load_submission\n"
        f"r = grade(load_submission({str(SOLUTION)!r}), ['3.2', '3.3'], max_examples=2,"
        " processes=2)\n"
        "print(r.score)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split()[-1] == "20.0"


def test_a_judge_process_that_dies_costs_only_its_own_exercises():
    def fine() -> list[ExerciseResult]:
        check = CheckResult("c", 1.0, 1.0, True, "passed")
        return [ExerciseResult("3.1", "t", 1.0, 1.0, "passed", [check])]

    def dies() -> list[ExerciseResult]:
        os._exit(7)

    def failed(ex_id: str, status: str, reason: str) -> ExerciseResult:
        return ExerciseResult(ex_id, "t", 0.0, 1.0, status, [CheckResult("c", 0, 1, False, reason)])

    results = parallel.run_forked(
        {"a": fine, "b": dies},
        {"a": (), "b": ()},
        {"a": ["3.1"], "b": ["3.2", "3.3"]},
        60.0,
        failed,
    )
    assert results["3.1"].status == "passed"
    assert results["3.2"].status == results["3.3"].status == "error"
    assert "the grader failed on this exercise" in results["3.2"].checks[0].message


def test_groups_balance_the_exercises_costs():
    groups = parallel.balanced_groups({"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}, 2)
    loads = sorted(sum({"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}[x] for x in g) for g in groups)
    assert loads == [7, 8]
    assert sorted(x for g in groups for x in g) == ["a", "b", "c", "d", "e"]
    assert parallel.balanced_groups({"a": 1.0}, 4) == [["a"]]


def test_workers_side_by_side_share_the_cores_and_one_alone_keeps_torchs_default(monkeypatch):
    from grader.protocol.limits import Limits

    monkeypatch.setattr(parallel, "_cores", lambda: {0, 1})
    assert parallel.worker_limits(Limits(), 6, 2).torch_threads == 1
    assert parallel.worker_limits(Limits(), 1, 2) == Limits()  # one exercise: torch's default
    assert parallel.worker_limits(Limits(), 6, 1) == Limits()  # a batch's judge: one at a time
    assert parallel.worker_limits(Limits(torch_threads=3), 6, 2).torch_threads == 3  # the course's
    monkeypatch.setattr(parallel, "_cores", lambda: set(range(8)))
    assert parallel.worker_limits(Limits(), 6, 8).torch_threads == 1
    assert parallel.worker_limits(Limits(), 2, 8).torch_threads == 4


THREADS_ANSWER = """\
import torch


def feedforward_params(cfg):
    raise RuntimeError(f"torch threads here: {torch.get_num_threads()}")


def attention_params(cfg):
    return 0
"""


def test_the_worker_runs_with_the_threads_the_judge_gave_it(tmp_path):
    cores = len(os.sched_getaffinity(0))
    if cores < 2:
        pytest.skip("one core: every worker keeps torch's default")
    answer = tmp_path / "threads.py"
    answer.write_text(THREADS_ANSWER)
    folder = make_submission(tmp_path / "sub", {"4.1": answer})

    def threads(result) -> int:
        message = next(e for e in result.exercises if e.id == "4.1").checks[0].message
        return int(message.split("torch threads here: ")[1].split()[0].rstrip("."))

    assert threads(grade_folder(folder, ["3.1", "4.1"], max_examples=2, processes=2)) == cores // 2
    alone = threads(grade_folder(folder, ["4.1"], max_examples=2))
    if "OMP_NUM_THREADS" not in os.environ:
        assert alone == cores  # torch's default
