"""The diagnosis (fault localization, replay, causes) never changes a verdict and has a budget.

A failed check's cause is the grader's extra: a failure inside it leaves the check's verdict and
points as they were, without a cause, and the grader's own log says why; a trace holding what no
reference part computes (complex values) is skipped; a trace shaped to make the judge replay the
reference on inputs far larger than the check's (forged entries) costs no more than the
reference's own run on the check's input, per entry, and all of an answer's diagnoses together
stop at a share of the exercise's time budget (``grader.judge.located.DIAGNOSIS_SHARE``)."""

from __future__ import annotations

import json
import re
import shutil
import time

import pytest
import torch
from support import ROOT, SOLUTION, grade_cli, grade_folder, make_submission

import grader.judge.located as located
from grader.judge.localize import first_difference
from grader.judge.properties import CheckFailed
from grader.judge.resilience import TRACE_LOG_ENV
from reference import GPT_CONFIG_124M, GPTModel

HOSTILE = ROOT / "tests" / "hostile"
COMPLEX = HOSTILE / "complex_in_the_trace.py"


def without_the_detour(text: str) -> str:
    """The complex case's answer with its bug and without the complex detour."""
    plain = text.replace("self.final_norm(x + 0.001j).real", "self.final_norm(x)")
    assert plain != text
    return plain


def graded(tmp_path, name: str, text: str, exercise: str):
    source = tmp_path / f"{name}.py"
    source.write_text(text, encoding="utf-8")
    folder = make_submission(tmp_path / name, {exercise: source})
    (result,) = grade_folder(folder, [exercise], seed=4242).exercises
    return result


def test_complex_values_in_the_trace_change_no_verdict(tmp_path):
    text = COMPLEX.read_text(encoding="utf-8")
    tricked = graded(tmp_path, "tricked", text, "4.3")
    plain = graded(tmp_path, "plain", without_the_detour(text), "4.3")
    assert tricked.status == plain.status == "failed"
    assert tricked.score == plain.score > 0
    assert [c.passed for c in tricked.checks] == [c.passed for c in plain.checks]


def test_a_failing_diagnosis_keeps_the_verdict_and_is_logged(tmp_path, monkeypatch):
    log = tmp_path / "grader.log"
    monkeypatch.setenv(TRACE_LOG_ENV, str(log))

    def broken(*args, **kwargs):
        raise RuntimeError("value cannot be converted to type double without overflow")

    monkeypatch.setattr(located, "first_difference", broken)
    model = GPTModel(
        {
            **GPT_CONFIG_124M,
            "emb_dim": 8,
            "n_heads": 2,
            "n_layers": 1,
            "vocab_size": 11,
            "context_length": 8,
        }
    )

    class Worker:
        limits = type("L", (), {"exercise_budget_s": 90.0})()
        diagnosed_s = 0.0

        def call(self, action, **kwargs):
            return []

    with pytest.raises(CheckFailed) as raised:
        with located.localized(
            Worker(),
            {"handle": 0, "module": {}},
            lambda: model,
            torch.zeros(1, 4, dtype=torch.long),
        ):
            raise CheckFailed("your model's logits differ", "logits")
    assert str(raised.value) == "your model's logits differ"
    assert raised.value.cause is None and raised.value.kind == "logits"
    assert "fault localization failed" in log.read_text()
    assert "without overflow" in log.read_text()


CFG = {
    **GPT_CONFIG_124M,
    "emb_dim": 16,
    "n_heads": 2,
    "n_layers": 2,
    "vocab_size": 50,
    "context_length": 16,
}


def counted(model: torch.nn.Module) -> list[int]:
    """A list that grows by one value count each time ``model`` itself runs."""
    calls: list[int] = []
    model.register_forward_pre_hook(lambda m, args: calls.append(args[0].numel()))
    return calls


def forged_entry(tokens: torch.Tensor) -> dict:
    """A trace entry saying the whole model ran on ``tokens`` and gave nothing like it."""
    out = torch.zeros(*tokens.shape, CFG["vocab_size"])[..., :1]
    return {
        "name": "",
        "class": "GPTModel",
        "args": 1,
        "input": tokens,
        "output": out,
        "output_shape": [*tokens.shape, CFG["vocab_size"]],
    }


def test_a_forged_trace_is_not_replayed_on_more_than_the_check_gave():
    torch.manual_seed(0)
    oracle = GPTModel(CFG)
    small = torch.randint(0, CFG["vocab_size"], (1, 8))
    sizes = located.input_sizes(oracle, small)
    assert sizes[""] == 8 and sizes["trf_blocks"] == 8 * CFG["emb_dim"]
    calls = counted(oracle)
    big = torch.randint(0, CFG["vocab_size"], (7500, 8))  # 60,000 tokens
    trace = [forged_entry(big)] * 1000
    assert first_difference(oracle, trace, sizes=sizes) is None
    assert calls == []  # without the bound: 1,000 replays on 60,000 tokens each


def test_the_diagnosis_stops_at_its_deadline():
    torch.manual_seed(0)
    oracle = GPTModel(CFG)
    small = torch.randint(0, CFG["vocab_size"], (1, 8))
    calls = counted(oracle)
    trace = [{**forged_entry(small), "output": None, "output_shape": None}] * 1000
    assert first_difference(oracle, trace, deadline=time.monotonic() - 1) is None
    assert calls == []
    assert first_difference(oracle, trace, deadline=time.monotonic() + 60) is None
    assert len(calls) == 1000  # the same trace, in time: every entry replayed


def test_the_budget_is_shared_by_an_answers_diagnoses():
    """Once an answer's diagnoses have used their share of the exercise's budget, the next
    failure is not diagnosed at all (its verdict stays)."""
    torch.manual_seed(0)
    oracle = GPTModel(CFG)
    small = torch.randint(0, CFG["vocab_size"], (1, 8))
    replays = counted(oracle)

    class Worker:
        limits = type("L", (), {"exercise_budget_s": 90.0})()
        diagnosed_s = 0.0
        traced = 0

        def call(self, action, **kwargs):
            self.traced += 1
            return [{**forged_entry(small), "output": None, "output_shape": None}] * 3

    worker = Worker()
    located.localize(worker, {"handle": 0, "module": {}}, oracle, small)
    assert len(replays) >= 3 and worker.diagnosed_s > 0
    worker.diagnosed_s = located.DIAGNOSIS_SHARE * 90.0
    replays.clear()
    assert located.localize(worker, {"handle": 0, "module": {}}, oracle, small) is None
    assert replays == [] and worker.traced == 1  # not traced again, nothing replayed


@pytest.mark.slow
def test_grade_and_grade_batch_agree_on_the_complex_case(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    mallory = klass / "mallory"
    shutil.copytree(SOLUTION, mallory)
    shutil.copyfile(COMPLEX, mallory / "exercises" / "ex4_3_split_dropout.py")
    single = grade_cli(
        "class/mallory", "-e", "4.3", "--seed", "4242", "--format", "json", cwd=tmp_path
    )
    assert single.returncode == 1, single.stdout + single.stderr
    alone = json.loads(single.stdout[single.stdout.index("{") :])["exercises"][0]
    batch = grade_cli("batch", "class", "-o", "out", "-e", "4.3", "--seed", "4242", cwd=tmp_path)
    assert batch.returncode in (0, 1), batch.stdout + batch.stderr
    row = json.loads(next((tmp_path / "out").rglob("mallory*.json")).read_text())
    (in_batch,) = [e for e in row["exercises"] if e["id"] == "4.3"]
    assert alone["status"] == in_batch["status"] == "failed"
    assert alone["score"] == in_batch["score"] > 0
    assert not re.search("check-raised|grader failed", json.dumps([alone, in_batch]))
