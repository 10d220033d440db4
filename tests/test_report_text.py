"""The terminal report: what it shows by default and with -v, that it fits a screen, its
aligned table, colour only on a terminal without NO_COLOR, and student text kept inert."""

from __future__ import annotations

import io
import re

import pytest
from report_cases import CONTROL, HUGE, edge_result, real_results
from support import CORPUS, grade_folder, make_submission

from grader.result import report_text
from grader.result.common import hint_of, parse_message
from grader.result.schema import CheckResult, ExerciseResult, GradeResult

SCREEN = 40  # lines: one failing exercise, its snippet included
TALL_SCREEN = 60  # lines of a tall terminal window


class FakeTerminal(io.StringIO):
    """A text stream that says it is a terminal."""

    encoding = "utf-8"

    def isatty(self) -> bool:
        return True


class AsciiStream(io.StringIO):
    encoding = "ascii"


@pytest.fixture(scope="module")
def failing():
    return real_results()["failing"]


@pytest.fixture(scope="module")
def passing():
    return real_results()["passing"]


def failed_checks(result):
    return [c for ex in result.exercises for c in ex.checks if not c.passed]


def test_failing_shows_the_evidence_and_the_snippet(failing):
    text = report_text.render(failing)
    (check,) = failed_checks(failing)
    msg = parse_message(check.message)
    assert check.name in text
    assert f"Expected: {msg.expected}" in text and f"Got:      {msg.got}" in text
    assert "Counterexample: d_in=" in text
    assert "Hint: " + hint_of(check).split()[0] in text
    assert "Cause: " + check.cause["text"].split(",")[0] in text  # the cause, said first
    for line in check.reproduce.strip().splitlines():  # the first failure's snippet
        assert line.rstrip() in text
    assert "Score: 5/10 (50%)" in text and "2 of 3 checks passed" in text


def test_further_snippets_are_behind_verbose():
    result = edge_result()
    later = failed_checks(result)[1]
    later.reproduce = "print('the second snippet')\n"
    assert "the second snippet" not in report_text.render(result)
    assert "More: grade -e 3.1 -v" in report_text.render(result)
    text = report_text.render(result, verbose=True)
    assert "the second snippet" in text and "More:" not in text


def test_a_long_first_snippet_is_left_to_verbose():
    result = edge_result()
    first = failed_checks(result)[0]
    first.reproduce = "".join(f"line_{i} = {i}\n" for i in range(30))
    assert "line_0 = 0" not in report_text.render(result)
    assert "grade -e 3.1 -v prints a 30-line snippet" in report_text.render(result)
    assert "line_29 = 29" in report_text.render(result, verbose=True)


def test_passing_is_short_and_says_so(passing):
    text = report_text.render(passing)
    assert "Score: 10/10 (100%)" in text and "1 of 1 exercise passed" in text
    assert "✓ passed" in text and "✗" not in text
    assert len(text.splitlines()) <= 6


def test_a_typical_failing_submission_fits_a_screen(failing):
    assert len(report_text.render(failing).splitlines()) <= SCREEN
    # Six exercises in every state, one with a 225,000-character message.
    edge = report_text.render(edge_result())
    assert len(edge.splitlines()) <= TALL_SCREEN
    assert "more lines with -v" in edge
    assert len(report_text.render(edge_result(), verbose=True)) < len(HUGE)  # clipped even so


def test_every_exercise_once_in_an_aligned_table():
    result = edge_result()
    lines = report_text.render(result).splitlines()
    rows = [line for line in lines if re.match(r"  \d\.\d  ", line)]
    assert [r.split()[0] for r in rows] == [ex.id for ex in result.exercises]
    assert len({r.index("/") for r in rows}) == 1  # scores aligned on the slash
    assert len({r.index("█") if "█" in r else r.index("░") for r in rows}) == 1  # bars too
    for ex, row in zip(result.exercises, rows, strict=True):
        assert report_text.STATUS_LABEL[ex.status] in row


def test_each_status_is_explained_once():
    text = report_text.render(edge_result())
    assert text.count("name 'torhc' is not defined") == 1  # error: one reason for both checks
    assert text.count("was not found") == 1  # missing: said once
    assert "1 more check not run" in text  # timeout: the rest summed up


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch, failing):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    tty = FakeTerminal()
    report_text.write(failing, tty)
    assert "\x1b[" in tty.getvalue()
    pipe = io.StringIO()
    report_text.write(failing, pipe)
    assert "\x1b" not in pipe.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    tty = FakeTerminal()
    report_text.write(failing, tty)
    assert "\x1b" not in tty.getvalue()
    assert "Score: 5/10 (50%)" in tty.getvalue()


def test_student_control_characters_are_shown_not_sent():
    text = report_text.render(edge_result(), verbose=True)
    assert "\x1b" not in text and "\x00" not in text and "\x07" not in text and "\r" not in text
    assert "escape\\x1b[31m" in text and CONTROL.split()[0].replace("\x07", "\\x07") in text


def test_a_stream_that_cannot_encode_unicode_gets_ascii():
    stream = AsciiStream()
    report_text.write(edge_result(), stream)
    text = stream.getvalue()
    text.encode("ascii")  # would raise on a stray character
    assert "#" in text or "." in text  # the ASCII bars
    assert "x failed" in text


def _one_exercise(checks: list[CheckResult], status: str = "failed") -> GradeResult:
    exercise = ExerciseResult("4.2", "Scaled configs", 0.0, 10.0, status, checks)
    return GradeResult("alice", 0.0, 10.0, "0.1.0", "2.13.0+cpu", 20241, 3.25, [exercise])


def test_counts_are_pluralised_and_the_time_is_the_whole_run():
    one = CheckResult("total_params counts", 0.0, 10.0, False, "total_params(cfg) returned 3")
    text = report_text.render(_one_exercise([one]))
    assert "0 of 1 exercise passed" in text and "0 of 1 check passed" in text
    assert "3.2 s" in text  # duration_s: grade sets it to the whole run (see test_cli)


def test_the_footer_names_the_first_exercise_left_short_and_the_command():
    result = edge_result()
    text = report_text.render(result, command="grade ../alice --seed 7")
    (footer,) = [line for line in text.splitlines() if line.startswith("More:")]
    assert footer.startswith("More: grade ../alice --seed 7 -e 4.2 -v ")
    assert "grade ../alice --seed 7 --html FILE" in footer
    assert "More:" not in report_text.render(result, verbose=True)


def test_a_mixed_exercise_says_not_done_yet_once_after_its_real_failures():
    stub = "not done yet: fill GPT2_CONFIGS and write total_params() and model_size_mb()."
    checks = [
        CheckResult(
            "GPT2_CONFIGS holds the four sizes",
            0.0,
            2.0,
            False,
            "GPT2_CONFIGS['xl'] is not GPT_CONFIG_124M with n_heads 25\nHint: copy it",
        ),
        *(CheckResult(f"count {i}", 0.0, 2.0, False, stub) for i in range(3)),
        CheckResult("model_size_mb", 0.0, 2.0, False, "not done yet: write model_size_mb()."),
    ]
    for verbose in (False, True):
        lines = report_text.render(_one_exercise(checks), verbose=verbose).splitlines()
        said = [line for line in lines if "not done yet" in line]
        assert said == [f"  4 more checks {stub}"], said
        assert lines.index(said[0]) > lines.index("      Hint: copy it")


def test_further_failures_keep_what_went_wrong(tmp_path):
    """The second failure of a wrong 3.3 says what raised, not only where."""
    answer = CORPUS / "ex3_3" / "wrong_context_length_512.py"
    folder = make_submission(tmp_path / "sub", {"3.3": answer})
    result = grade_folder(folder, ["3.3"], max_examples=2)
    check = next(c for c in result.exercises[0].checks if c.name.startswith("it works on any"))
    assert "must match the size of tensor b (512)" in check.message
    text = report_text.render(result)
    assert check.name in text and "(fails the same way)" not in text
    assert "RuntimeError: The size of tensor a (1024) must match the size of tensor b" in " ".join(
        line.strip() for line in text.splitlines()
    )


def test_the_same_error_in_every_check_still_shows_its_input_hint_and_snippet(tmp_path):
    """Copying nn.Linear's weight without transposing raises one RuntimeError in all three
    checks of 3.1: the report still shows the input, the hint on shapes and the snippet, not
    just the error (the same message alone is what a missing file or a failed import gets)."""
    sub = make_submission(tmp_path, {"3.1": CORPUS / "ex3_1" / "wrong_no_transpose.py"})
    result = grade_folder(sub, ["3.1"])
    text = report_text.render(result, colour=False)
    assert "raised RuntimeError" in text
    assert "Counterexample: d_in=" in text
    assert "Hint: nn.Linear(d_in, d_out) stores its weight" in text
    assert "transfer_weights(sa_v2, sa_v1)" in text  # the snippet
    assert text.count("the same cause") == 2  # one cause, explained once for its three checks
    assert text.count("Cause: your code raised RuntimeError") == 1


@pytest.mark.parametrize("width", [60, 80, 100])
def test_a_long_not_done_message_wraps_to_the_width_and_is_never_cut(width):
    """4.2's and 4.3's stub messages are longer than a terminal line: they wrap, every word of
    them shown (they were cut at the width with an ellipsis)."""
    stub = (
        "not done yet: fill GPT_CONFIG_SPLIT_DROPOUT and complete TransformerBlock and "
        "GPTModel in exercises/ex4_3_split_dropout.py."
    )
    checks = [CheckResult(f"check {i}", 0.0, 2.0, False, stub) for i in range(3)]
    for verbose in (False, True):
        lines = report_text.render(_one_exercise(checks), verbose=verbose, width=width).splitlines()
        start = next(i for i, line in enumerate(lines) if "not done yet" in line)
        said = []
        for line in lines[start:]:
            if not line.startswith("  ") or line.startswith("  " * 2):
                break
            said.append(line)
        assert len(said) > 1 and all(len(line) <= width for line in said), said
        assert " ".join(line.strip() for line in said) == stub
        assert "…" not in "\n".join(lines) and "..." not in "\n".join(lines)
