"""Exercises graded in forked judge processes: the same result as one process, never a fork
beside another thread (a parent that used torch's thread pool grades one exercise after the
other), and a judge process that dies costs only its exercises.

A test process runs other threads (pytest-xdist's, libraries' pools), so it never forks judge
processes itself: the tests of forking run a judge in a fresh interpreter (``judged_alone``)."""

from __future__ import annotations

import os
import threading

import pytest
from support import grade_folder, judged_alone, make_submission

from grader.judge import parallel

FORKED_AND_NOT = """
from pathlib import Path
mixed = make_submission(Path({mixed!r}), {{
    "3.2": CORPUS / "ex3_2" / "wrong_one_head.py",
    "4.3": CORPUS / "ex4_3" / "wrong_no_embedding_dropout.py",
}})
pairs = []
for folder in (SOLUTION, mixed):  # few examples: the two ways must agree, whatever is drawn
    one = json.loads(grade_folder(folder, processes=1, max_examples=3).to_json())
    spread = json.loads(grade_folder(folder, processes=3, max_examples=3).to_json())
    pairs.append([one, spread])
print(json.dumps({{"pairs": pairs, "forks": forks}}))
"""


def test_forked_judges_give_byte_for_byte_the_result_of_one_process(tmp_path):
    found = judged_alone(FORKED_AND_NOT.format(mixed=str(tmp_path / "mixed")))
    assert found["forks"] == [1, 1]  # the spread grades forked, from a process of one thread
    for one, spread in found["pairs"]:
        one.pop("duration_s")
        spread.pop("duration_s")
        assert one == spread


def test_a_parent_that_used_torch_threads_grades_without_forking():
    """Torch's thread pool, once started, stays: a fork beside it could leave a lock held in
    the child (and its first parallel operation would wait forever for threads it does not
    have). Such a parent grades one exercise after the other, to the same score."""
    found = judged_alone(
        "import torch\n"
        "torch.set_num_threads(2)\n"
        "a = torch.randn(1500, 1500); (a @ a).sum()\n"
        "torch.set_num_threads(1)\n"
        "threads = parallel.threads_here()\n"
        "r = grade_folder(SOLUTION, ['3.2', '3.3'], max_examples=2, processes=2)\n"
        "print(json.dumps([threads, r.score, forks]))\n"
    )
    threads, score, forks = found
    if threads == 1:  # one core: torch started no pool
        pytest.skip("torch started no thread pool here")
    assert (score, forks) == (20.0, [])


DIES = """
from grader.result.schema import CheckResult, ExerciseResult

def fine():
    check = CheckResult("c", 1.0, 1.0, True, "passed")
    return [ExerciseResult("3.1", "t", 1.0, 1.0, "passed", [check])]

def dies():
    import os
    os._exit(7)

def failed(ex_id, status, reason):
    return ExerciseResult(ex_id, "t", 0.0, 1.0, status, [CheckResult("c", 0, 1, False, reason)])

results = parallel.run_forked(
    {"a": fine, "b": dies}, {"a": (), "b": ()}, {"a": ["3.1"], "b": ["3.2", "3.3"]}, 60.0, failed
)
print(json.dumps({k: [r.status, r.checks[0].message] for k, r in results.items()}))
"""


def test_a_judge_process_that_dies_costs_only_its_own_exercises():
    results = judged_alone(DIES)
    assert results["3.1"][0] == "passed"
    assert results["3.2"][0] == results["3.3"][0] == "error"
    assert "the grader failed on this exercise" in results["3.2"][1]


def test_judge_processes_are_never_forked_beside_another_thread():
    """``run_forked`` refuses (before any fork) in a process that runs another thread; the
    engine asks ``alone()`` first and grades one exercise after the other there."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert parallel.threads_here() > 1 and not parallel.alone()
        with pytest.raises(RuntimeError, match="not forked from a process of"):
            parallel.run_forked({"a": list}, {"a": ()}, {"a": []}, 60.0, None)
    finally:
        stop.set()
        other.join()


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
