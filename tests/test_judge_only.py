"""An answer may not import the pack's judge-only code (DESIGN §5.12): the checks' helpers
compute the expected answers, so importing them hands the judge its own answer back. In every
worker, wherever the answer is graded, such an import fails with one clear line that names it;
importing past the refusal is tampering."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import pytest
from support import grade_cli

import grader.commands.cli
from grader.shared.course import packs
from grader.worker import judgeonly

SOLUTION = Path(__file__).parent / "submissions" / "solution"

FROM_THE_CHECKS_42 = """\
from llm_pack.checks.gpt_reference import gpt2_config, model_count

GPT2_CONFIGS = {s: gpt2_config(s) for s in ("small", "medium", "large", "xl")}


def total_params(cfg):
    return model_count(cfg)


def model_size_mb(cfg):
    return model_count(cfg) * 4 / 1024**2
"""

PAST_THE_REFUSAL_42 = (
    "import sys\n"
    "sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != 'RefuseJudgeOnly']\n"
    + FROM_THE_CHECKS_42
)


def with_42(tmp_path: Path, text: str, name: str = "sub") -> Path:
    dest = tmp_path / name
    shutil.copytree(SOLUTION, dest)
    (dest / "exercises" / "ex4_2_scaled_configs.py").write_text(text, encoding="utf-8")
    return dest


def grade_42(submission: Path, capsys) -> dict:
    code = grader.commands.cli.main([str(submission), "-e", "4.2", "--format", "json"])
    out = capsys.readouterr().out
    assert code == 1, out
    return json.loads(out[out.index("{") :])["exercises"][0]


def test_the_first_pack_declares_its_judge_only_modules():
    (pack,) = [p for p in packs() if p.package == "llm_pack"]
    hidden = pack.judge_only
    assert "llm_pack.checks" in hidden and "llm_pack.strategies" in hidden
    assert "llm_pack.checks.ex4_2" in hidden  # every exercise's checks, without being named
    assert not any(m in hidden for m in pack.worker)  # what workers load stays loadable


def test_an_answer_built_from_the_checks_gets_one_clear_line(tmp_path, capsys):
    exercise = grade_42(with_42(tmp_path, FROM_THE_CHECKS_42), capsys)
    assert exercise["status"] == "error" and exercise["score"] == 0
    message = exercise["checks"][0]["message"]
    assert "imports the grader's checks: llm_pack.checks" in message
    assert "line 1 of ex4_2_scaled_configs.py" in message
    assert "tampered" not in message


def test_removing_the_finder_does_not_help(tmp_path, capsys):
    """The files stay closed (an audit hook); a module put back in ``sys.modules`` by other
    means is the guard's (tests/test_resilience.py: tampered)."""
    exercise = grade_42(with_42(tmp_path, PAST_THE_REFUSAL_42), capsys)
    message = exercise["checks"][0]["message"]
    assert exercise["score"] == 0
    assert "imports the grader's checks: llm_pack.checks" in message


@pytest.mark.slow
def test_a_batch_row_says_so(tmp_path):
    """Where the grade counts (a batch, with the course's seed), the gradebook's row names it."""
    klass = tmp_path / "class"
    klass.mkdir()
    with_42(klass, FROM_THE_CHECKS_42, "mallory")
    shutil.copytree(SOLUTION, klass / "alice")
    done = grade_cli("batch", "class", "-o", "out", "-e", "4.2", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    rows = {r["name"]: r for r in csv.DictReader((tmp_path / "out" / "gradebook.csv").open())}
    assert rows["alice"]["total"] == "10"
    assert rows["mallory"]["total"] == "0"
    result = json.loads(next((tmp_path / "out").rglob("mallory*.json")).read_text())
    assert "imports the grader's checks" in json.dumps(result)


def test_hide_refuses_the_module_and_its_submodules(tmp_path, monkeypatch):
    package = tmp_path / "somepack"
    (package / "judging").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "judging" / "__init__.py").write_text("ANSWER = 42\n")
    (package / "judging" / "oracle.py").write_text("ANSWER = 42\n")
    (package / "worker.py").write_text("from somepack.judging import ANSWER\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    for name in [n for n in sys.modules if n.startswith("somepack")]:
        monkeypatch.delitem(sys.modules, name)
    import somepack.worker  # a probe that holds what it uses, imported first

    files = judgeonly.files_of(["somepack.judging"])
    assert files == ((str((package / "judging").resolve()) + "/", "somepack.judging"),)
    monkeypatch.setattr(sys, "addaudithook", lambda hook: None)  # not for the test's process
    names, hook = judgeonly.hide(["somepack.judging"])
    assert names == ("somepack.judging",) and hook is not None
    assert somepack.worker.ANSWER == 42
    assert not hasattr(sys.modules["somepack"], "judging")
    for name in ("somepack.judging", "somepack.judging.oracle"):
        with pytest.raises(judgeonly.JudgeOnly, match="imports the grader's checks"):
            __import__(name)
    for name in [n for n in sys.modules if n.startswith("somepack")]:
        del sys.modules[name]
    hook("open", (str(package / "worker.py"), "r", 0))  # what answers may use opens
    for path in (package / "judging" / "oracle.py", package / "judging" / "__init__.py"):
        with pytest.raises(judgeonly.JudgeOnly, match="somepack.judging"):
            hook("open", (str(path), "r", 0))  # loaded by its path: refused all the same
        with pytest.raises(judgeonly.JudgeOnly):
            hook("open", (path, "r", 0))


BY_PATH_42 = (
    "import importlib.util, pathlib, reference\n"
    "_where = pathlib.Path(reference.__file__).parents[1] / 'llm_pack' / 'checks'\n"
    "_spec = importlib.util.spec_from_file_location('mine', _where / 'gpt_reference.py')\n"
    "_helpers = importlib.util.module_from_spec(_spec)\n"
    "_spec.loader.exec_module(_helpers)\n"
    "gpt2_config, model_count = _helpers.gpt2_config, _helpers.model_count\n"
    + FROM_THE_CHECKS_42.split("\n", 1)[1]
)


def test_loading_the_checks_by_path_is_refused_too(tmp_path, capsys):
    exercise = grade_42(with_42(tmp_path, BY_PATH_42), capsys)
    message = exercise["checks"][0]["message"]
    assert exercise["status"] == "error" and exercise["score"] == 0
    assert "imports the grader's checks: llm_pack.checks" in message
