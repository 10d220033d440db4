"""``grader.check`` inside a notebook: real kernels (nbclient + ipykernel) run cells built in
memory, never saved, and the verdicts must follow what ran; the judge lives in a process of its
own, so nothing the kernel patched reaches it. Plus the renderings, without a kernel."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbformat import v4
from nbsupport import solution_source, write_notebook
from support import CORPUS, ROOT, TEST_MAX_EXAMPLES

from grader.intake.notebook import cells_submission, history_cells
from grader.live.nbcheck import CheckError, exercise_id
from grader.result.nbview import CheckReport, notebook_snippet
from grader.shared.registry import EXERCISES

WRONG_3_1 = (CORPUS / "ex3_1" / "wrong_forgets_value.py").read_text(encoding="utf-8")
CRASHING_3_1 = (CORPUS / "ex3_1" / "wrong_no_transpose.py").read_text(encoding="utf-8")
CHECK_3_1 = 'grader.check("3.1")'


class Kernel:
    """One kernel for the module: ``run`` executes a new cell of an in-memory notebook."""

    def __init__(self, client, nb, disk):
        self.client, self.nb, self.disk = client, nb, disk

    def run(self, source: str) -> list:
        cell = v4.new_code_cell(source)
        self.nb.cells.append(cell)
        self.client.execute_cell(cell, len(self.nb.cells) - 1)
        return cell.outputs

    def cell(self, source: str) -> int:
        """Run ``source`` as a new cell; its number in the kernel (``In [n]``)."""
        self.run(source)
        return self.nb.cells[-1].execution_count

    def check(self, source: str = CHECK_3_1) -> dict:
        """The data of the result a check cell shows (it must show exactly one)."""
        outputs = self.run(source)
        results = [o for o in outputs if o.output_type == "execute_result"]
        assert len(results) == 1, outputs
        return results[0].data


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    from nbclient import NotebookClient

    folder = tmp_path_factory.mktemp("kernel")
    disk = folder / "work.ipynb"  # what the front end says this notebook is (JPY_SESSION_NAME)
    nb = v4.new_notebook()
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(folder)}},
    )
    with client.setup_kernel(env={**os.environ, "JPY_SESSION_NAME": str(disk)}):
        k = Kernel(client, nb, disk)
        k.run("import grader")
        yield k


def running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie nobody reaped has exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def child_pids() -> list[int]:
    """The processes this process started that still run (psutil's, else /proc's account).
    Runs in a kernel too (its source is sent as a cell), so it imports what it needs."""
    import glob
    import os

    try:
        import psutil

        return sorted(p.pid for p in psutil.Process().children())
    except ImportError:
        found = []
        for task in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
            with open(task) as f:
                found += [int(pid) for pid in f.read().split()]
        return sorted(found)


CHILD_PIDS = inspect.getsource(child_pids) + "\nprint(child_pids())"


def status(data: dict) -> str:
    html = data["text/html"]
    return html.split('data-status="', 2)[2].split('"', 1)[0]  # the exercise's, not the total's


# --- in a kernel -------------------------------------------------------------------------------


def test_a_correct_answer_passes_shown_as_html_and_text(kernel):
    kernel.run(solution_source("3.1"))
    data = kernel.check()
    assert status(data) == "passed" and "10 / 10" in data["text/html"]
    assert data["text/html"].lstrip().startswith('<div class="grader-check"')
    assert "Score: 10/10" in data["text/plain"]
    assert "note: 3.1: graded from In [" in data["text/plain"]
    (out,) = kernel.run(
        "r = grader.check('3.1')\n"
        "print(r.score, r.max_score, r.passed, r.result['schema'], r.result['seed'])"
    )
    assert out.text.split() == ["10.0", "10.0", "True", "1", "20241"]  # the public seed


def test_a_buggy_answer_shows_its_counterexample_hint_and_snippet(kernel):
    kernel.run(CRASHING_3_1)
    html = kernel.check()["text/html"]
    assert status({"text/html": html}) == "failed"
    assert "Counterexample:" in html and "d_in=1, d_out=2" in html
    assert "Hint" in html and "<details><summary>Reproduce it: paste into a new cell" in html
    assert "def reproduce(transfer_weights=transfer_weights):" in html


def test_what_ran_is_graded_not_the_notebook_on_disk(kernel):
    write_notebook(kernel.disk, [("code", solution_source("3.1"))])  # saved: right
    kernel.run(WRONG_3_1)  # ran, never saved: wrong
    data = kernel.check()
    assert status(data) == "failed" and "sa_v1(x) after the transfer" in data["text/html"]
    write_notebook(kernel.disk, [("code", WRONG_3_1)])
    kernel.run(solution_source("3.1"))  # the edit is run again, not saved
    assert status(kernel.check()) == "passed"


def test_the_cell_that_checks_counts_as_run(kernel):
    kernel.run(WRONG_3_1)
    assert status(kernel.check(solution_source("3.1") + "\n\n" + CHECK_3_1)) == "passed"


def test_a_kernel_that_patched_torch_and_reference_still_gets_the_true_verdict(kernel):
    kernel.run(
        "import torch, reference\n"
        "torch.allclose = lambda *a, **k: True\n"
        "torch.equal = lambda *a, **k: True\n"
        "torch.testing.assert_close = lambda *a, **k: None\n"
        "reference.SelfAttention_v2 = reference.SelfAttention_v1"
    )
    kernel.run(WRONG_3_1)
    data = kernel.check()
    assert status(data) == "failed" and "Score: 5/10" in data["text/plain"]


def test_the_same_cells_get_the_same_result(kernel):
    kernel.run(WRONG_3_1)
    (out,) = kernel.run(
        "a, b = grader.check('3.1').result, grader.check('3.1').result\n"
        "a.pop('duration_s'), b.pop('duration_s')\n"
        "print(a == b, a['exercises'][0]['score'])"
    )
    assert out.text.split() == ["True", "5.0"]


MINE = "# my answer, below a line of my own\n\n"


def line_of(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), start=1) if text in line)


def shown(data: dict) -> str:
    """A check's text, its wrapped lines joined again."""
    return " ".join(data["text/plain"].split())


def test_a_failure_names_the_kernels_cell_and_the_line_in_it(kernel):
    """A traceback's frame as IPython names it (``In [n]``) and the line in that cell, not
    the line of an exercise file the student never had (before 3.3 and 4.1 are answered)."""
    n = kernel.cell(MINE + CRASHING_3_1)
    text = shown(kernel.check())
    line = line_of(CRASHING_3_1, "sa_v1.W_query.copy_(") + 2
    assert f"(in cell In [{n}], line {line}, in transfer_weights: sa_v1.W_query" in text
    assert "ex3_1_weight_transfer.py" not in text

    broken = "import torch\n\n\ndef gpt2_small_attention()\n    return None\n"
    n = kernel.cell(MINE + broken)  # IPython's SyntaxError: the cell ran all the same
    text = shown(kernel.check('grader.check("3.3")'))
    line = line_of(broken, "def gpt2_small_attention()") + 2
    assert (
        f"your cell does not parse: SyntaxError: expected ':' (cell In [{n}], line {line})" in text
    )
    assert f"(in cell In [{n}], line {line}: def gpt2_small_attention()" in text
    assert "ex3_3_gpt2_attention.py" not in text

    stub = (ROOT / "exercises" / "ex4_1_parameter_counts.py").read_text(encoding="utf-8")
    n = kernel.cell(MINE + stub)
    text = shown(kernel.check('grader.check("4.1")'))
    line = line_of(stub, "def feedforward_params") + 2
    assert f"not done yet: write feedforward_params() in cell In [{n}], line {line}" in text
    assert "exercises/" not in text


def test_check_all_grades_all_six(kernel):
    for ex in EXERCISES:
        kernel.run(solution_source(ex.id))
    data = kernel.check(f"grader.check_all(max_examples={TEST_MAX_EXAMPLES})")
    assert all(f'data-exercise="{ex.id}"' in data["text/html"] for ex in EXERCISES)
    assert "Score: 60/60" in data["text/plain"]


def test_a_fresh_kernel_one_line_for_an_unknown_id_missing_answers_and_no_torch(tmp_path):
    from nbclient import NotebookClient

    nb = nbformat.read(
        write_notebook(
            tmp_path / "fresh.ipynb",
            [
                ("code", "import grader\nr = grader.check('4.2')"),
                ("code", "import sys\nprint('torch' in sys.modules, r.result['exercises'][0])"),
                ("code", 'grader.check("9.9")'),
                ("code", "print(grader.live.nbcheck.JUDGE._proc.pid)"),
            ],
        ),
        as_version=4,
    )
    NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True).execute()
    (printed,) = nb.cells[1].outputs
    assert printed.text.startswith("False ")  # grader did not import torch into the kernel
    assert "'status': 'missing'" in printed.text
    judge = int(nb.cells[3].outputs[0].text)
    for _ in range(100):  # the kernel has exited: its judge process follows
        if not running(judge):
            break
        time.sleep(0.1)
    assert not running(judge)
    (error,) = nb.cells[2].outputs
    assert error.output_type == "error"
    assert error.traceback == [
        "grader.check: no exercise '9.9'; the exercises are "
        '"3.1", "3.2", "3.3", "4.1", "4.2", "4.3"'
    ]


def test_import_grader_starts_no_process_the_first_check_starts_the_judge(tmp_path):
    """``import grader`` in a kernel (the install cell of the handed-out notebook) costs no
    process, and no few hundred MB: the judge process starts on the first check, which works."""
    from nbclient import NotebookClient

    nb = nbformat.read(
        write_notebook(
            tmp_path / "lazy.ipynb",
            [
                ("code", f"{CHILD_PIDS}\nimport grader\n{CHILD_PIDS}"),
                ("code", f"import time\ntime.sleep(1)\n{CHILD_PIDS}"),  # nothing later either
                ("code", solution_source("3.1")),
                ("code", f"r = grader.check('3.1', max_examples={TEST_MAX_EXAMPLES})\nr.passed"),
                ("code", f"{CHILD_PIDS}\nprint(grader.live.nbcheck.JUDGE._proc.pid)"),
            ],
        ),
        as_version=4,
    )
    NotebookClient(nb, timeout=600, kernel_name="python3").execute()
    before, after = nb.cells[0].outputs[0].text.splitlines()
    assert before == after == "[]"
    assert nb.cells[1].outputs[0].text.strip() == "[]"
    (passed,) = nb.cells[3].outputs
    assert passed.data["text/plain"] == "True"
    children, judge = nb.cells[4].outputs[0].text.splitlines()
    assert children == f"[{judge}]"  # the judge process, started by the check


@pytest.mark.parametrize("kernel_shaped", [False, True], ids=["plain", "kernel-shaped"])
def test_import_grader_in_a_fresh_interpreter_starts_no_process(kernel_shaped):
    """The same in a fresh interpreter; ``kernel_shaped``: with ipykernel imported and an
    IPython shell that has a kernel, what ``import grader`` used to start the judge on."""
    shape = (
        "import ipykernel\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "InteractiveShell.instance().kernel = object()\n"
    )
    code = (
        (shape if kernel_shaped else "")
        + "import grader, sys, time\n"
        + "time.sleep(0.5)\n"
        + CHILD_PIDS
        + "\nprint('torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "False"]


# --- the renderings, without a kernel ----------------------------------------------------------


def test_snippets_take_the_students_names_from_the_notebook_and_keep_the_rest_local():
    snippet = (
        "import torch\nfrom reference import GPTModel\n"
        "from exercises.ex4_3_split_dropout import GPTModel as YourGPTModel, GPT_CONFIG\n\n"
        "print(YourGPTModel(GPT_CONFIG))\n"
    )
    cell = notebook_snippet(snippet)
    assert cell.startswith("def reproduce(YourGPTModel=GPTModel, GPT_CONFIG=GPT_CONFIG):\n")
    assert cell.rstrip().endswith("\nreproduce()") and "exercises" not in cell
    compile(cell, "<cell>", "exec")
    assert notebook_snippet("print(1)\n") == "print(1)\n"


def test_exercise_ids_a_number_is_forgiven_anything_else_is_one_line():
    assert exercise_id(3.1) == "3.1" and exercise_id(" 4.2 ") == "4.2"
    with pytest.raises(CheckError) as caught:
        exercise_id("3.4")
    assert caught.value._render_traceback_() == [
        "grader.check: no exercise '3.4'; the exercises are "
        '"3.1", "3.2", "3.3", "4.1", "4.2", "4.3"'
    ]


def test_notes_name_the_kernels_inputs_and_what_was_not_found():
    inputs = ["", "import torch", solution_source("3.1"), "x = 1", CHECK_3_1]
    sub = cells_submission(history_cells(inputs), "nb", "nb", ran=True)
    try:
        assert "3.1: graded from In [2]" in sub.notes
        assert (
            "4.2: no definition of GPT2_CONFIGS, total_params, model_size_mb found in the cells "
            "run so far" in sub.notes
        )
        assert set(sub.files) == {"3.1"}
    finally:
        sub.cleanup()


def result_with(message: str, counterexample, status: str = "failed") -> dict:
    check = {
        "name": "a check <b>",
        "points": 0.0,
        "max_points": 5.0,
        "passed": False,
        "message": message,
        "counterexample": counterexample,
        "reproduce": "from exercises.ex3_1_weight_transfer import transfer_weights\nprint(1)\n",
    }
    passed = {**check, "name": "another", "points": 5.0, "passed": True, "message": "passed"}
    return {
        "schema": 1,
        "submission": "nb",
        "score": 5.0,
        "max_score": 10.0,
        "grader_version": "0",
        "torch_version": "0",
        "seed": 20241,
        "duration_s": 0.3,
        "exercises": [
            {
                "id": "3.1",
                "title": "T",
                "score": 5.0,
                "max_score": 10.0,
                "status": status,
                "checks": [check, passed],
            }
        ],
    }


def test_the_html_is_escaped_self_contained_and_folds_the_long_parts():
    evil = "<script>alert(1)</script>"
    report = CheckReport(
        result_with(f"wrong {evil}\nHint: look {evil}", {"x": evil}), ["3.1: graded from In [4]"]
    )
    html = report._repr_html_()
    assert "<script" not in html and "&lt;script&gt;" in html and "a check &lt;b&gt;" in html
    assert "http" not in html and "<link" not in html and "<img" not in html
    assert "<details><summary>Reproduce it" in html and "1 of 2 checks passed</summary>" in html
    assert "graded from In [4]" in html and "seed 20241" in html
    assert (report.score, report.max_score, report.passed) == (5.0, 10.0, False)
    assert "Score: 5/10" in repr(report) and "def reproduce(" in repr(report)
    long = CheckReport(result_with("m", {"x": "y" * 200}), [])._repr_html_()
    assert '<details class="gc-example"><summary><b>Counterexample</b>' in long


def test_a_missing_exercise_says_which_names_were_not_found():
    note = "3.1: no definition of transfer_weights found in the cells run so far"
    result = result_with("not submitted: exercises/x.py was not found", None, "missing")
    first, second = result["exercises"][0]["checks"]
    second.update(first, name="another")  # every check unrun, for the same reason
    report = CheckReport(result, [note])
    assert "no definition of transfer_weights found in the cells run so far" in repr(report)
    assert "not submitted" not in report._repr_html_()


def test_a_judge_process_that_dies_is_one_line_saying_why_and_the_next_check_starts_anew(
    monkeypatch,
):
    from grader.live import nbcheck

    boot = "import sys; sys.stderr.write('ImportError: no torch here\\n'); sys.exit(1)"
    monkeypatch.setattr(nbcheck, "BOOT", boot)
    judge = nbcheck.JudgeProcess()
    for _ in range(2):
        with pytest.raises(CheckError) as caught:
            judge.ask({"inputs": [], "exercises": ["3.1"]})
        assert caught.value._render_traceback_() == [
            "grader.check: the grader's judge process stopped unexpectedly "
            "(ImportError: no torch here); run the check again"
        ]
    judge.close()


def test_only_verdicts_that_depend_on_the_code_alone_are_kept():
    from grader.live.nbjudge import Verdicts
    from grader.result.schema import ExerciseResult

    verdicts = Verdicts()
    for n, status in enumerate(("passed", "failed", "timeout", "error", "missing")):
        verdicts.keep(("3.1", str(n)), ExerciseResult("3.1", "T", 0.0, 10.0, status))
    verdicts.keep(None, ExerciseResult("3.1", "T", 0.0, 10.0, "passed"))
    assert list(verdicts.kept) == [("3.1", "0"), ("3.1", "1")]
