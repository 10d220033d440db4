"""GitHub Actions: the report in the log, an ``::error`` annotation on the student's file for
each failure, a markdown table in the job summary (``$GITHUB_STEP_SUMMARY``), and the
``result=`` output that GitHub Classroom's grading reporter reads (``$GITHUB_OUTPUT``).

The Classroom application is sunset and its reporter deprecated, but courses still run it: its
runners set a step output ``result`` to the base64 of ``{"version": 1, "status", "max_score",
"tests": [...]}`` and the reporter sums the tests' scores against ``max_score``.
"""

import base64
import html
import json
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from grader.result.common import (
    check_text,
    clip,
    display_path,
    is_unrun,
    parse_message,
    percent,
    points,
    read_source,
    shared_problem,
    source_line,
    status_label,
)
from grader.result.schema import CheckResult, ExerciseResult, GradeResult

ANNOTATION_LIMIT = 4000  # GitHub truncates long annotations; keep each readable
SUMMARY_LIMIT = 2000  # characters of one failure in the job summary
EMOJI = {"passed": "✅", "failed": "❌", "error": "⚠️", "timeout": "⏱️", "missing": "➖"}


# --- workflow commands ---------------------------------------------------------------------


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF spelled as in @actions/core."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: also ``:`` and ``,``, which end it."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items()
        if value is not None
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


# --- what each failure points at -----------------------------------------------------------


def _location(
    root: Path | None, ex: ExerciseResult, check: CheckResult
) -> tuple[str | None, int | None]:
    """The file and line of a failure; no file for a file that was not submitted."""
    if ex.status == "missing":
        return None, None
    return display_path(root, ex.id), source_line(ex.id, check, read_source(root, ex.id))


def annotations(result: GradeResult, root: Path | None = None) -> list[str]:
    """One ``::error`` per failed check (one per exercise when a single problem sank it all)."""
    out = []
    for ex in result.exercises:
        if ex.status == "passed":
            continue
        problem = shared_problem(ex)
        if problem is not None:
            file, line = _location(root, ex, ex.checks[0])
            title = f"{ex.id} {ex.title}: {status_label(ex)}"
            text = parse_message(problem).text
            out.append(
                command("error", clip(text, ANNOTATION_LIMIT), file=file, line=line, title=title)
            )
            continue
        for check in ex.checks:
            if check.passed or is_unrun(check):
                continue
            file, line = _location(root, ex, check)
            title = f"{ex.id} {check.name} ({points(check.points)}/{points(check.max_points)})"
            text = check_text(check, reproduce=False, limit=ANNOTATION_LIMIT)
            out.append(command("error", text, file=file, line=line, title=title))
    pts = f"{points(result.score)}/{points(result.max_score)}"
    out.append(command("notice", f"Score {pts}", title=f"grade {result.submission}"))
    return out


# --- GitHub Classroom's reporter -------------------------------------------------------------


def _test_status(ex: ExerciseResult, check: CheckResult) -> str:
    if check.passed:
        return "pass"
    return "error" if ex.status in ("error", "timeout") else "fail"


def classroom(result: GradeResult, root: Path | None = None) -> dict:
    """The document the Classroom grading reporter decodes from a runner's ``result`` output."""
    tests = []
    for ex in result.exercises:
        source = read_source(root, ex.id)
        for check in ex.checks:
            line = None if check.passed else source_line(ex.id, check, source)
            tests.append(
                {
                    "name": f"{ex.id} {check.name}",
                    "status": _test_status(ex, check),
                    "score": check.points,
                    "message": "" if check.passed else check_text(check, reproduce=False),
                    "test_code": check.reproduce or "",
                    "filename": display_path(root, ex.id),
                    "line_no": line or 0,
                    "duration": 0,
                }
            )
    statuses = {t["status"] for t in tests}
    status = "fail" if "fail" in statuses else "error" if "error" in statuses else "pass"
    return {"version": 1, "status": status, "max_score": result.max_score, "tests": tests}


def classroom_output(result: GradeResult, root: Path | None = None) -> str:
    """The ``$GITHUB_OUTPUT`` lines: ``result`` (base64 JSON), ``score`` and ``max_score``."""
    doc = json.dumps(classroom(result, root), separators=(",", ":"), ensure_ascii=False)
    encoded = base64.b64encode(doc.encode("utf-8")).decode("ascii")
    return f"result={encoded}\nscore={points(result.score)}\nmax_score={points(result.max_score)}\n"


# --- the job summary -------------------------------------------------------------------------

# Inside a table cell only these start markdown (emphasis, code, links, cell breaks, strike,
# math); ``<`` and ``&`` are taken care of by escaping the text as HTML first.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~$])")


def md_cell(text: str) -> str:
    """Text safe inside a markdown table cell: HTML escaped, markdown escaped, one line."""
    text = _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>")


def _fence(code: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    return "`" * max(3, longest + 1)


def summary_markdown(result: GradeResult) -> str:
    """A markdown job summary: the total, a table of exercises, the failed checks and, folded
    away, the snippets that reproduce them."""
    share = f" ({percent(result.score, result.max_score)}%)" if result.max_score else ""
    lines = [
        f"### {EMOJI['passed'] if result.all_passed else EMOJI['failed']} "
        f"Grade: {points(result.score)} / {points(result.max_score)}{share}",
        "",
        f"{md_cell(result.submission)} · {result.seed_text} · grader "
        f"{md_cell(result.grader_version)} · torch {md_cell(result.torch_version)}",
        "",
        "| Exercise | Score | Status |",
        "| :-- | --: | :-- |",
    ]
    for ex in result.exercises:
        lines.append(
            f"| {ex.id} {md_cell(ex.title)} | {points(ex.score)} / {points(ex.max_score)} "
            f"| {EMOJI[ex.status]} {status_label(ex)} |"
        )
    failed = [(ex, c) for ex in result.exercises for c in ex.checks if not c.passed]
    if failed:
        lines += [
            "",
            "#### What failed",
            "",
            "| Exercise | Check | Points | Why |",
            "| :-- | :-- | --: | :-- |",
        ]
        for ex in result.exercises:
            problem = shared_problem(ex)
            if problem is not None:  # one reason for every check: one row
                why = md_cell(clip(parse_message(problem).text, SUMMARY_LIMIT))
                lines.append(
                    f"| {ex.id} | all {len(ex.checks)} checks | {points(ex.score)} / "
                    f"{points(ex.max_score)} | {why} |"
                )
                continue
            for c in ex.checks:
                if c.passed:
                    continue
                why = md_cell(clip(parse_message(c.message).text, SUMMARY_LIMIT))
                lines.append(
                    f"| {ex.id} | {md_cell(c.name)} | {points(c.points)} / "
                    f"{points(c.max_points)} | {why} |"
                )
        for ex, c in failed:
            if not c.reproduce:
                continue
            fence = _fence(c.reproduce)
            lines += [
                "",
                f"<details><summary>{html.escape(ex.id)} {html.escape(c.name)}: "
                "reproduce it</summary>",
                "",
                f"{fence}python",
                c.reproduce.rstrip(),
                fence,
                "",
                "</details>",
            ]
    return "\n".join(lines) + "\n"


# --- all of it -------------------------------------------------------------------------------


def emit(
    result: GradeResult,
    stream: TextIO,
    root: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> None:
    """The report and the annotations on ``stream``; the Classroom output and the job summary
    appended to the files GitHub names in ``env`` (``os.environ`` by default), when set."""
    from grader.result import report_text

    env = os.environ if env is None else env
    # The report holds text from the student's code; with commands stopped, no line of it
    # can pass for a workflow command.
    token = secrets.token_hex(16)
    stream.write(f"::stop-commands::{token}\n")
    stream.write(report_text.render(result, colour=False))
    stream.write(f"::{token}::\n")
    if any(not c.passed and c.reproduce for ex in result.exercises for c in ex.checks):
        stream.write("::group::Every failure in full, with snippets that reproduce them\n")
        stream.write(f"::stop-commands::{token}\n")
        stream.write(report_text.render(result, colour=False, verbose=True))
        stream.write(f"::{token}::\n")
        stream.write("::endgroup::\n")
    for line in annotations(result, root):
        stream.write(line + "\n")
    if env.get("GITHUB_OUTPUT"):
        with open(env["GITHUB_OUTPUT"], "a", encoding="utf-8") as f:
            f.write(classroom_output(result, root))
    if env.get("GITHUB_STEP_SUMMARY"):
        with open(env["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as f:
            f.write(summary_markdown(result))
